"""A ``profiles.yml`` value rendered as dbt renders it, and nothing more.

dbt renders profile values in a Jinja *sandbox* with a small context: ``env_var()``, ``var()``
and the ``as_text``/``as_number``/``as_bool``/``as_native`` filters (plus Jinja's own globals,
such as ``range``, and a few functions qar does not render: ``modules``, ``tojson``, ``log``, …).
So does qar: a value that reaches for anything else (``cycler.__init__``, ``__globals__``,
``os``) is refused as ``dbt debug`` refuses it, and a profile never runs code.

A refusal names the key (``outputs.dev.password``), never the value: the value may be a secret,
and Jinja's own messages quote pieces of it (``'ss' is undefined``), so they are not passed on.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Callable
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

    env = Bounded(undefined=jinja2.StrictUndefined)
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
    return _render(value, key, where)


def _render(value: Any, key: str, where: str) -> Any:
    if isinstance(value, dict):
        return {k: _render(v, f"{key}.{k}", where) for k, v in value.items()}
    if isinstance(value, list):
        return [_render(v, f"{key}[{i}]", where) for i, v in enumerate(value)]
    if not isinstance(value, str) or ("{{" not in value and "{%" not in value):
        return value
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
    except UsageError:
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
