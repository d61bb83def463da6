"""A ``profiles.yml`` value rendered as dbt renders it, and nothing more.

dbt renders profile values in a Jinja *sandbox* with a small context: ``env_var()``, ``var()``
and the ``as_text``/``as_number``/``as_bool``/``as_native`` filters (plus Jinja's own globals,
such as ``range``, and a few functions qar does not render: ``modules``, ``tojson``, ``log``, …).
So does qar: a value that reaches for anything else (``cycler.__init__``, ``__globals__``,
``os``) is refused as ``dbt debug`` refuses it, and a profile never runs code.

The values render in a child process bounded in memory and CPU time (``_render_apart``): the
item budget below refuses the obvious loops at once, the bounds whatever it cannot see.

A refusal names the key (``outputs.dev.password``), never the value: the value may be a secret,
and Jinja's own messages quote pieces of it (``'ss' is undefined``), so they are not passed on.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from qar_sql.errors import UsageError

__all__ = ["CONTEXT", "render_value"]

#: What a profile value may use, as in dbt's profile context (functions, then filters).
CONTEXT = ("env_var", "var", "as_text", "as_number", "as_bool", "as_native")

#: The items every range() of one value may yield together (a profile value needs a handful).
_MAX_ITEMS = 10_000

_FIX = (
    "qar renders env_var(), var() and the as_text, as_number, as_bool and as_native filters of dbt's "
    "profile context (not its modules, tojson, log, ...), with Jinja's own statements and filters; to keep a literal {{ or {% (in a password, say), put the value in an environment "
    "variable and write {{ env_var('NAME') }}"
)


def _environment(charge: Callable[[int], None]):
    """The sandbox; ``charge(n)`` counts n items against the value's budget (and raises past it)."""
    import jinja2
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def as_native(v):
        try:
            return ast.literal_eval(str(v))
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return v

    class Bounded(ImmutableSandboxedEnvironment):
        # 'a' * 10**10 and 2 ** (10**9) are one expression each but allocate or compute for minutes.
        intercepted_binops = frozenset(("*", "**"))

        def call_binop(self, context, operator, left, right):
            if operator == "**" and isinstance(right, int):
                charge(abs(right))
            elif operator == "*":
                for seq, times in ((left, right), (right, left)):
                    if isinstance(seq, str | list | tuple) and isinstance(times, int):
                        charge(len(seq) * max(times, 0))
            return super().call_binop(context, operator, left, right)

    # (dbt's environment has the do statement, {% do x.update(...) %}: a profile using it was "not
    # a valid Jinja template"; the sandbox still refuses what it calls on an immutable value)
    env = Bounded(undefined=jinja2.StrictUndefined, extensions=["jinja2.ext.do"])
    env.filters.update(as_number=as_native, as_native=as_native, as_text=str, as_bool=as_native)
    return env


#: The values one profile entry may hold in all: YAML aliases (a "billion laughs" of nested
#: ``*a`` lists) make a small file a tree of 10^9 values, which rendering would walk for minutes.
_MAX_VALUES = 100_000


def render_value(value: Any, key: str, where: str) -> Any:
    """``value`` (a mapping, list or scalar of profiles.yml) with every string holding ``{{`` or
    ``{%`` rendered; ``key`` is its dotted key (``outputs.dev``), ``where`` names the file and
    profile for messages."""
    stack, seen = [value], 0
    while stack:
        item = stack.pop()
        seen += 1
        if seen > _MAX_VALUES:
            raise UsageError(
                f"{where}: key {key} holds more than {_MAX_VALUES:,} values (YAML aliases repeated inside each "
                "other?), so qar does not read it; write the target's settings out plainly"
            )
        stack.extend(item.values() if isinstance(item, dict) else item if isinstance(item, list) else ())
    templates = dict(_templates(value, key))
    rendered = _render_apart(templates, where) if templates else {}
    return _replace(value, key, rendered)


def _templates(value: Any, key: str) -> Iterator[tuple[str, str]]:
    """The (dotted key, text) of every string of ``value`` that holds ``{{`` or ``{%``."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _templates(v, f"{key}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _templates(v, f"{key}[{i}]")
    elif isinstance(value, str) and ("{{" in value or "{%" in value):
        yield key, value


def _replace(value: Any, key: str, rendered: dict[str, Any]) -> Any:
    if isinstance(value, dict):
        return {k: _replace(v, f"{key}.{k}", rendered) for k, v in value.items()}
    if isinstance(value, list):
        return [_replace(v, f"{key}[{i}]", rendered) for i, v in enumerate(value)]
    return rendered.get(key, value) if isinstance(value, str) else value


#: A separate process renders the values, with these limits: the item budget counts what it can
#: see (range, lipsum, * and **), but a width or a repetition hides in many other places
#: ('a'.ljust(10**10), '%99999999s' % x, '{:99999999}'.format(x), replace('', ...) chained, loops
#: over a long string): each of those filled the memory or ran for minutes inside qar.
_MEMORY = 1 << 30
_CPU_SECONDS = 5
#: The longest rendered value qar takes back (a host, a path or a password is far shorter).
_MAX_CHARS = 100_000


def _limit() -> None:  # pragma: no cover - runs in the child, before it starts
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (_MEMORY, _MEMORY))
    resource.setrlimit(resource.RLIMIT_CPU, (_CPU_SECONDS, _CPU_SECONDS))


def _render_apart(templates: dict[str, str], where: str) -> dict[str, Any]:
    """``templates`` (key: text) rendered in a child process bounded in memory and CPU time (where
    the platform can bound them; elsewhere in wall time only)."""
    import json
    import subprocess
    import sys

    root = str(Path(__file__).resolve().parents[2])  # (the child imports this copy of qar_sql)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (root, os.environ.get("PYTHONPATH"))))}
    bounded = os.name == "posix"
    too_much = (
        f"needs more than {_MEMORY >> 30} GB of memory or {_CPU_SECONDS} s of CPU time to render"
        if bounded
        else f"did not render within {_CPU_SECONDS * 12} s"
    )

    def _last(stderr: str | bytes | None) -> str:  # the key the child was rendering when it was stopped
        text = stderr.decode("utf-8", "replace") if isinstance(stderr, bytes) else stderr or ""
        return next((k for k in reversed(text.splitlines()) if k in templates), next(iter(templates)))

    try:
        proc = subprocess.run(
            # -P: `python -c` puts the working folder first on sys.path, so a json.py or jinja2.py
            # of the dbt project qar scan runs in was imported here, and ran (Python >= 3.11)
            [sys.executable, "-P", "-c", "from qar_sql.compliance.dbt_jinja import _child; _child()"],
            input=json.dumps({"where": where, "templates": templates}),
            capture_output=True,
            text=True,
            encoding="utf-8",
            env=env,
            timeout=_CPU_SECONDS * 12,
            preexec_fn=_limit if bounded else None,  # noqa: PLW1509 - only setrlimit, before exec
            check=False,
        )
        if proc.returncode > 0:  # (not a limit, which kills it by a signal; its stderr may quote the value)
            raise UsageError(f"{where}: qar could not render its values in a separate process (exit {proc.returncode})")
        answer: dict[str, Any] = (
            json.loads(proc.stdout) if proc.returncode == 0 else {"key": _last(proc.stderr), "why": too_much}
        )
    except subprocess.TimeoutExpired as exc:
        answer = {"key": _last(exc.stderr), "why": too_much}
    except (OSError, ValueError) as exc:  # (no process could be started; its output was not ours)
        raise UsageError(f"{where}: qar could not render its values in a separate process ({exc})") from None
    if "error" in answer:
        raise UsageError(answer["error"])
    if "why" in answer:
        raise UsageError(f"{where}: key {answer['key']} {answer['why']}, so qar does not use it; {_FIX}")
    return dict(answer["values"])


def _child() -> None:  # pragma: no cover - runs in the child process (tests run it through the parent)
    import json
    import sys

    asked = json.load(sys.stdin)
    values = []
    try:
        for key, text in asked["templates"].items():
            print(key, file=sys.stderr, flush=True)  # (the key the parent names if a bound stops this)
            try:
                value = _render_string(text, key, asked["where"])
                if len(str(value)) > _MAX_CHARS:
                    why = f"renders to more than {_MAX_CHARS:,} characters (no profile setting is that long)"
                    json.dump({"key": key, "why": why}, sys.stdout)
                    return
                values.append((key, value))
            except MemoryError:
                json.dump({"key": key, "why": f"needs more than {_MEMORY >> 30} GB of memory to render"}, sys.stdout)
                return
    except UsageError as exc:
        json.dump({"error": str(exc)}, sys.stdout)
        return
    json.dump({"values": values}, sys.stdout)


def _render_string(value: str, key: str, where: str) -> Any:
    import jinja2
    from jinja2.sandbox import SecurityError

    def env_var(name: str, default: str | None = None) -> str:
        if name in os.environ:
            return os.environ[name]
        if default is None:
            raise UsageError(
                f"{where}: key {key} uses env_var({name!r}), which is not set; export {name} or give it a default"
            )
        return default

    def var(name: str, default: Any = None) -> Any:
        if default is None:
            raise UsageError(
                f"{where}: key {key} uses var({name!r}) without a default, and qar takes no --vars; "
                "give it a default or use env_var()"
            )
        return default

    spent = [0]

    def charge(items: int) -> None:
        spent[0] += items
        if spent[0] > _MAX_ITEMS:
            raise UsageError(
                f"{where}: key {key} asks for more than {_MAX_ITEMS:,} items in all (loops, lipsum(), * or **), "
                f"so qar does not render it; {_FIX}"
            )

    def bounded_range(*args: int) -> range:
        # Jinja caps one range at 100,000 items but not nested loops (their product hung qar).
        r = range(*args)
        charge(len(r))
        return r

    def bounded_lipsum(n: int = 5, html: bool = True, min: int = 20, max: int = 100) -> Any:  # noqa: A002
        # Jinja's own lipsum(10**7) writes ten million paragraphs: it ran for minutes.
        from jinja2.utils import generate_lorem_ipsum

        charge(abs(n) * abs(max))
        return generate_lorem_ipsum(n, html, min, max)

    try:
        env = _environment(charge)
        return env.from_string(value).render(env_var=env_var, var=var, range=bounded_range, lipsum=bounded_lipsum)
    except (UsageError, MemoryError):
        raise
    except SecurityError:
        why = "reaches an attribute that dbt's sandbox refuses (dbt debug refuses it too)"
    except jinja2.UndefinedError:
        # Maybe one dbt has (modules, tojson, log, ...) but qar does not render; the name itself
        # is not said (it may be a piece of a password, as in pa{{ss}}word).
        why = "uses a name outside what qar renders"
    except jinja2.TemplateSyntaxError:
        why = "is not a valid Jinja template"
    except Exception:  # noqa: BLE001 - any failure inside the template; its text may quote the value
        why = "cannot be rendered"
    raise UsageError(f"{where}: key {key} {why}, so qar does not use it; {_FIX}") from None
