"""Compliance scans: many audits from one ``qar.toml``, thresholds, CI reports (JUnit, Markdown).

The config (schema in docs/compliance.md)::

    [store]
    url = "qar_results.duckdb"

    [defaults]                      # any scan key except name, source and table
    p = 3
    fail_above = 0.5

    [sources.warehouse]
    url = "${QAR_WAREHOUSE_URL}"    # secrets only through ${ENV_VAR}

    [[scan]]
    name = "patients"               # unique; default: the table
    source = "warehouse"            # may be left out when there is one source
    table = "public.patients"
    columns = ["age", "sex", "zip"] # or exclude = [...]; default all columns
    warn_above = 0.3

Every bad value is reported before anything runs, as one sentence (exit 2). At run time one
failing scan does not stop the others; :attr:`ScanReport.exit_code` is 2 if a scan's table or
columns were wrong, else 3 if a scan failed in the database, else 1 if a ``fail_above`` was
breached, else 0.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from functools import partial
from pathlib import Path
from typing import Any

from qar_sql import user_files
from qar_sql.engines.database import check_store_engine
from qar_sql.engines.secrets import mask_source, secret_values
from qar_sql.engines.source import is_url, reads_csv
from qar_sql.errors import ParameterError, UsageError, shown
from qar_sql.parameters.fields import option
from qar_sql.parameters.tail import AuditParams
from qar_sql.precedence import Chosen, choose
from qar_sql.rules import check_min_exceedances, check_risk, check_warning
from qar_sql.user_text import control_or_separator

PARAM_KEYS = ("p", "alpha", "pi_u", "pwm", "theta", "k", "fail_above", "warn_above", "min_exceedances")
DEFAULT_KEYS = PARAM_KEYS + ("columns", "exclude")
SCAN_KEYS = ("name", "source", "table", "columns", "exclude", *PARAM_KEYS)
TOP_KEYS = ("store", "defaults", "sources", "scan")
_ENV = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


# --------------------------------------------------------------------------------------------
# The config


@dataclass(frozen=True, kw_only=True)
class ScanSpec(AuditParams):
    """One table to audit: the audit's parameters (:class:`~qar_sql.parameters.tail.AuditParams`,
    whose rules it keeps: columns, exclude, p, alpha, pi_u, pwm, theta, k, and the gates
    fail_above and min_exceedances), where it runs, and the warning threshold. ``source`` may
    hold a secret (it is the resolved URL); print ``source_display``."""

    name: str
    source: str = field(repr=False)
    source_display: str
    source_name: str
    table: str | None
    warn_above: float | None = option(
        None,
        help="The summary marks WARN when T̂ is above it (exit 0).",
        kind="float",
        check=lambda value: check_risk(value, "--warn-above", "0.5"),
        cli=False,
    )
    #: [defaults] null_tokens: the CSV cell texts read as NULL (a file source's, as --null-token).
    null_tokens: tuple[str, ...] = ()
    #: Where each setting came from (:mod:`qar_sql.precedence`): the scan's own table, the
    #: file's [defaults], the built-in default; a key not here is the built-in default.
    origins: Mapping[str, Chosen] = field(default_factory=dict, repr=False, compare=False, hash=False)

    def audit_params(self, jobs: int) -> AuditParams:
        """The audit this scan runs (commands.audit.run), with ``jobs`` connections."""
        return AuditParams(**{f.name: getattr(self, f.name) for f in fields(AuditParams)} | {"jobs": jobs})


#: Each setting's built-in default: the audit's (AuditParams), the scan's warn_above.
DEFAULTS: dict[str, Any] = {f.name: f.default for f in fields(ScanSpec) if f.name in PARAM_KEYS}


@dataclass(frozen=True)
class ScanConfig:
    scans: tuple[ScanSpec, ...]
    store: str | None = field(default=None, repr=False)  # as written after ${} substitution
    secrets: tuple[str, ...] = field(default=(), repr=False)  # substituted values, to mask
    path: str | None = None
    #: What replaced a scan's own setting, and what set one it lacked ("population: threshold
    #: 0.5 from --fail-above overrides the scan's 0.05"), for the summary.
    notes: tuple[str, ...] = ()

    def label(self, name: str) -> str:
        """How an error names its scan ``name`` (``qar.toml: scan 'people'``), as the file's own do."""
        return scan_label(_where(self.path), name)


def _where(path: str | None) -> str:
    return Path(path).name if path else "the scan config"


def _did_you_mean(word: str, allowed: Sequence[str]) -> str:
    close = difflib.get_close_matches(word, allowed, n=1)
    return f"did you mean {close[0]!r}?" if close else f"allowed: {', '.join(allowed)}"


class _Env:
    """Substitutes ``${NAME}`` from the environment and remembers the values (secrets)."""

    def __init__(self, environ: Mapping[str, str], where: str):
        self.environ = environ
        self.where = where
        self.secrets: list[str] = []

    def __call__(self, value: str, key: str) -> str:
        def sub(m):
            name = m.group(1)
            if name not in self.environ:
                raise UsageError(
                    f"{self.where}: {key} uses ${{{name}}}, but the environment variable {name} "
                    f"is not set; export {name} before running qar"
                )
            self.secrets.append(self.environ[name])
            return self.environ[name]

        return _ENV.sub(sub, value)


def _no_literal_password(raw: str, key: str, where: str) -> None:
    """Secrets live in environment variables, never in the file: a URL's password, a secret
    query parameter (``?password=…``, ``&token=…``) or a keyword string's ``password=…``."""
    literal = [v for v in secret_values(raw) if not _ENV.fullmatch(v) and "${" not in v]
    if literal:
        raise UsageError(
            f"{where}: {key} contains a password; keep secrets out of the file: write "
            f'url = "${{QAR_WAREHOUSE_URL}}" (or put ${{...}} in place of the secret) and export it'
        )


def _names(value: Any, key: str, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",") if v.strip()]
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        raise UsageError(f'{where}: {key} must be a list of column names, e.g. {key} = ["age", "sex"]')
    return tuple(value)


#: A rule's message names the command line's option (``--fail-above 1.5 must be ...``); a scan
#: file names the key (``fail_above = 1.5 must be ...``).
_FLAGS = {f"--{key.replace('_', '-')} ": f"{key} = " for key in PARAM_KEYS}
_FLAG = re.compile("|".join(re.escape(flag) for flag in _FLAGS))


def _check_listed(checked: Mapping[str, Any], label: str, of_scan: bool) -> None:
    """What a scan's columns, exclude and p say of themselves (the scan refused them only after
    opening its source, and ``qar config --check`` called the file valid). Of defaults, only a
    name listed twice: the command line's --columns, --exclude or -p may complete the rest."""
    columns, exclude = checked.get("columns"), checked.get("exclude") or ()
    if not columns:
        return
    twice = next((c for i, c in enumerate(columns) if c in columns[:i]), None)
    if twice is not None:
        raise ParameterError(f"{label}: columns lists {twice!r} twice; list it once")
    left = [c for c in columns if c not in exclude]
    if not of_scan:
        return
    if not left:
        raise ParameterError(f"{label}: exclude takes out every one of columns; list fewer in exclude")
    p = checked.get("p", AuditParams.p)
    if isinstance(p, int) and not isinstance(p, bool) and p > len(left):
        raise ParameterError(
            f"{label}: p = {shown(p)} is larger than the number of columns left ({len(left)}); write p = {len(left)} "
            "or list more columns"
        )


def make_spec(
    name: str,
    table: str | None,
    settings: Mapping[str, Any],
    *,
    source: tuple[str, str, str],
    where: str,
    origins: Mapping[str, Chosen] | None = None,
    of_scan: bool = True,
) -> ScanSpec:
    """One scan's settings (defaults already merged) as a :class:`ScanSpec`, checked by its
    rules (those of the audit's parameters). ``source``: (URL, how it is shown, its name in the
    file); ``origins``: where each came from; ``of_scan`` False for [defaults] or [tool.qar]."""
    url, source_display, source_name = source
    label = scan_label(where, name)
    checked = {key: settings[key] for key in PARAM_KEYS if key in settings}
    for key in ("columns", "exclude"):
        if settings.get(key) is not None:
            checked[key] = _names(settings[key], key, label)
    _check_listed(checked, label, of_scan)
    try:
        spec = ScanSpec(
            name=name,
            source=url,
            source_display=source_display,
            source_name=source_name,
            table=table,
            origins=dict(origins or {}),
            **checked,
        )
        # In one file a warning above the failure is a mistake; set from outside the file
        # (apply_settings) it is moot: such a risk fails first.
        check_warning(spec.warn_above, spec.fail_above, "warn_above =", "fail_above =")
    except ParameterError as exc:
        raise ParameterError(f"{label}: {_FLAG.sub(lambda m: _FLAGS[m.group(0)], str(exc))}") from exc
    return spec


def own_settings(
    own: Mapping[str, Any], defaults: Mapping[str, Any], *, own_origin: str = "[[scan]]"
) -> dict[str, Chosen]:
    """Each setting of one scan by :func:`qar_sql.precedence.choose`: its own table (``own``)
    over the file's ``defaults`` over the built-in default."""
    out = {}
    for key in DEFAULT_KEYS:
        out[key] = choose(
            Chosen(own[key], "scan", own_origin) if key in own else None,
            Chosen(defaults[key], "defaults", "[defaults]") if key in defaults else None,
            Chosen(DEFAULTS.get(key), "built-in", "built-in default"),
        )
    return out


def check_unique(scans: Sequence[ScanSpec], where: str) -> None:
    seen = set()
    for spec in scans:
        if spec.name in seen:
            raise UsageError(f"{where}: two scans are named {spec.name!r}; give each [[scan]] a unique name")
        seen.add(spec.name)


class Problems:
    """Where a check collects its errors instead of raising the first (``qar config --check``
    lists every one): each is (the path of the key it is about, its sentence). Without a
    collector a check raises, so ``qar scan`` stops at the first, with the same sentence."""

    def __init__(self) -> None:
        self.found: list[tuple[tuple[str | int, ...], str]] = []

    def run(self, path: tuple[str | int, ...], check: Callable[[], Any], fallback: Any = None) -> Any:
        """``check()``'s value, or ``fallback`` with its error kept."""
        try:
            return check()
        except UsageError as exc:
            self.found.append((path, str(exc)))
            return fallback


def checked(problems: Problems | None, path: tuple[str | int, ...], check: Callable[[], Any], fallback: Any = None):
    return check() if problems is None else problems.run(path, check, fallback)


def refuse(problems: Problems | None, path: tuple[str | int, ...], message: str) -> None:
    """The error ``message`` about the key at ``path``: raised, or collected."""
    if problems is None:
        raise UsageError(message)
    problems.found.append((path, message))


def defaults_of(
    problems: Problems | None, at: tuple, given: Any, table: str, where: str, also: tuple[str, ...] = ()
) -> tuple[dict[str, Any], tuple[str, ...] | None]:
    """A table of defaults (``[defaults]``, ``[tool.qar]``; ``store`` aside) checked on its own, as
    the commands read it and as a scan's settings are checked: the settings it holds that pass
    (a refused one left out, so a scan does not say it again) and its ``null_tokens``. ``also``:
    the table's other keys, read by the caller (``[tool.qar]``'s store), named among the allowed."""
    if not isinstance(given, Mapping):
        refuse(problems, at, f"{where}: {table} must be a table of settings, e.g. p = 3")
        given = {}
    value = given.get("null_tokens")
    tokens = [value] if isinstance(value, str) else value  # (one text, or a list of them)
    null_tokens = tuple(tokens) if isinstance(tokens, list) and all(isinstance(t, str) and t for t in tokens) else None
    if value is not None and null_tokens is None:
        message = f'{where}: null_tokens must be a list of non-empty texts, e.g. null_tokens = ["NA"]'
        refuse(problems, (*at, "null_tokens"), message)
    each_key(problems, at, given, (*DEFAULT_KEYS, "null_tokens", *also), table, where)
    settings = {k: v for k, v in given.items() if k in DEFAULT_KEYS}
    said = len(problems.found) if problems else 0
    spec_or_errors(problems, at, table, None, settings, source=("", "", ""), where=where, of_scan=False)
    for found, _ in problems.found[said:] if problems else ():
        settings.pop(found[len(at)] if len(found) > len(at) else "", None)
    return settings, null_tokens


def each_key(problems: Problems | None, path: tuple, table: Mapping, allowed: Sequence[str], what: str, where: str):
    """Every unknown key of ``table``: the first raised, or each collected."""
    for key in table:
        if key not in allowed:
            refuse(problems, (*path, key), f"{where}: {what} has an unknown key {key!r}; {_did_you_mean(key, allowed)}")


def scan_label(where: str, name: str) -> str:
    """How an error names the scan ``name``; a table of defaults checked as a scan's
    (``[defaults]``, ``[tool.qar]``) is named as the table, being no scan."""
    return f"{where}: {name}" if name.startswith("[") else f"{where}: scan {name!r}"


def spec_or_errors(problems: Problems | None, path: tuple, name: str, table: str | None, settings: Mapping, **kw):
    """:func:`make_spec`; collecting, each refusal names a key (``alpha = 0.3 must be ...``),
    which is set aside and the rest checked again, so every bad value of one scan is listed,
    each with the sentence ``qar scan`` would print for it."""
    if problems is None:
        return make_spec(name, table, settings, **kw)
    label = scan_label(kw["where"], name) + ": "
    left = dict(settings)
    while True:
        try:
            return make_spec(name, table, left, **kw)
        except UsageError as exc:
            message = str(exc)
            key = message.removeprefix(label).split(" ", 1)[0]
            problems.found.append(((*path, key) if key in left else path, message))
            if key not in left:
                return None
            # Every setting the sentence names is set aside: "alpha = 0.05 must be smaller than
            # pi_u = 0.01" without alpha alone would be said again of the default alpha.
            for named in [k for k in left if re.search(rf"(?<![\w.]){re.escape(k)} = ", message)] + [key]:
                left.pop(named, None)


def _store_url(url: str, example: str, where: str) -> str:
    check_store_engine(url, f"{where}: [store] url {mask_source(url)}", example)
    return url


def _location(problems: Problems | None, path: tuple, value: str, key: str, env: _Env, base: Path) -> str | None:
    """A URL or file name of the file with ``${NAME}`` substituted (a literal password refused),
    a file relative to the config file's folder; None when refused."""
    if checked(problems, path, partial(_no_literal_password, value, key, env.where), False) is False:
        return None
    url = checked(problems, path, partial(env, value, key))
    if url is not None and not is_url(url) and not Path(url).is_absolute():
        url = os.path.normpath(base / url)
    return url


def store_of(problems: Problems | None, at: tuple, value: Any, key: str, env: _Env, base: Path) -> str | None:
    """A store (``[store] url``, ``[tool.qar] store``) as :func:`_location` reads it, after its
    type; None when absent or refused."""
    if value is None:
        return None
    if isinstance(value, str) and value:
        return _location(problems, at, value, key, env, base)
    example = f'{key.rsplit(".", 1)[-1]} = "qar_results.duckdb"'
    refuse(problems, at, f"{env.where}: store must be a URL or file name, e.g. {example}")
    return None


def parse_config(
    data: Mapping[str, Any],
    *,
    path: str | None = None,
    environ: Mapping[str, str] | None = None,
    problems: Problems | None = None,
    require_scans: bool = True,
) -> ScanConfig:
    """Validate a parsed ``qar.toml`` into a :class:`ScanConfig` (nothing is connected). With
    ``problems``, every error is collected there instead of the first raised (the config then
    returned is only what was valid); ``require_scans`` False accepts a file without ``scan``
    (one holding the commands' defaults: ``qar config --check``)."""
    where = _where(path)
    env = _Env(os.environ if environ is None else environ, where)
    base = Path(path).resolve().parent if path else Path.cwd()
    each_key(problems, (), data, TOP_KEYS, "the file", where)

    store = data.get("store")
    if isinstance(store, Mapping):
        each_key(problems, ("store",), store, ("url",), "[store]", where)
        if "url" not in store:  # (an empty [store] recorded nothing, silently)
            refuse(problems, ("store",), f'{where}: [store] needs a url, e.g. url = "qar_results.duckdb"')
        store = store.get("url")
    store = store_of(problems, ("store",), store, "store.url", env, base)
    if store is not None and is_url(store):  # refused here, not only by a scan that records
        example = 'url = "qar_results.duckdb" or a postgresql+psycopg:// URL'
        store = checked(problems, ("store",), partial(_store_url, store, example, where))

    defaults, null_tokens = defaults_of(problems, ("defaults",), data.get("defaults", {}), "[defaults]", where)

    sources: dict[str, tuple[str, str] | None] = {}  # None: defined but refused (already said)
    raw_sources = data.get("sources", {})
    if not isinstance(raw_sources, Mapping):
        refuse(
            problems,
            ("sources",),
            f'{where}: [sources.NAME] tables are expected, e.g. [sources.warehouse] url = "${{QAR_WAREHOUSE_URL}}"',
        )
        raw_sources = {}
    for sname, sdef in raw_sources.items():
        key = f"sources.{sname}"
        sources[sname] = None
        if not isinstance(sdef, Mapping) or not isinstance(sdef.get("url"), str) or not sdef["url"]:
            refuse(problems, ("sources", sname), f'{where}: [{key}] needs a url, e.g. url = "${{QAR_WAREHOUSE_URL}}"')
            continue
        each_key(problems, ("sources", sname), sdef, ("url",), f"[{key}]", where)
        url = _location(problems, ("sources", sname, "url"), sdef["url"], f"{key}.url", env, base)
        if url is not None:
            sources[sname] = (url, mask_source(url))

    raw_scans = data.get("scan", [])
    if isinstance(raw_scans, Mapping):  # the schema's words, so --check and qar scan say the same
        refuse(
            problems, ("scan",), f"{where}: scan is a table but must be a list of tables; write [[scan]], not [scan]"
        )
        raw_scans = []
    elif not isinstance(raw_scans, list):
        refuse(problems, ("scan",), f"{where}: scan = {shown(raw_scans)} must be a list of [[scan]] tables")
        raw_scans = []
    elif not raw_scans and (require_scans or "scan" in data):
        refuse(
            problems,
            ("scan",),
            f"{where}: no scans; add at least one [[scan]] naming a source (and its table, for a database: a CSV or Parquet file takes none)",
        )
        raw_scans = []
    specs = []
    for i, raw in enumerate(raw_scans, 1):
        at: tuple[str | int, ...] = ("scan", i - 1)
        scan = f"{where}: scan number {i}"
        if not isinstance(raw, Mapping):
            refuse(problems, at, f"{scan} must be a [[scan]] table")
            continue
        each_key(problems, at, raw, SCAN_KEYS, f"scan number {i}", where)
        sname = raw.get("source")
        if sname is None:
            if len(sources) != 1:
                named = ", ".join(sources) or "(none: add a [sources.NAME] table)"
                refuse(problems, (*at, "source"), f'{scan} names no source; add source = "..." naming one of: {named}')
                continue
            sname = next(iter(sources))
        if not isinstance(sname, str) or not sname:  # (a list is unhashable: "unexpected TypeError", exit 3)
            refuse(
                problems, (*at, "source"), f'{scan}: source = {shown(sname)} must be one name, e.g. source = "people"'
            )
            continue
        if sname not in sources:
            hint = _did_you_mean(str(sname), list(sources)) if sources else "add a [sources.NAME] table"
            refuse(problems, (*at, "source"), f"{scan} uses source {shown(sname)}, which is not defined; {hint}")
            continue
        table = raw.get("table")
        if table is not None and (not isinstance(table, str) or not table):
            refuse(problems, (*at, "table"), f'{scan}: table must be a name, e.g. table = "public.people"')
            continue
        name = raw.get("name", table or sname)
        if not isinstance(name, str) or not name:
            refuse(problems, (*at, "name"), f'{scan}: name must be a non-empty text, e.g. name = "patients"')
            continue
        bad = next((c for c in name if control_or_separator(c)), None)
        if bad is not None:  # a line break split the text summary's row in two
            refuse(problems, (*at, "name"), f"{scan}: name {name!r} holds U+{ord(bad):04X}; write it on one line")
            continue
        chosen = own_settings(raw, defaults)
        settings = {k: c.value for k, c in chosen.items() if c.level != "built-in"}
        known = sources[sname] or ("", "", "")
        spec = spec_or_errors(
            problems, at, name, table, settings, source=(known[0], known[1], sname), where=where, origins=chosen
        )
        if spec is not None:
            # ([defaults] null_tokens are every CSV scan's; a table or Parquet file has NULLs of its own)
            specs.append(replace(spec, null_tokens=null_tokens) if null_tokens and reads_csv(spec.source) else spec)
    checked(problems, ("scan",), partial(check_unique, specs, where))
    return ScanConfig(tuple(specs), store, tuple(env.secrets), path)


def load_config(path: str | Path, *, environ: Mapping[str, str] | None = None) -> ScanConfig:
    """Read and validate a ``qar.toml``."""
    p = Path(path)
    if not p.exists():
        raise UsageError(f"scan config {str(path)!r} does not exist; create it (see examples/qar.toml)")
    data = user_files.parse_toml(user_files.read_text(p, "scan config"), p.name)
    return parse_config(data, path=str(p), environ=environ)


# --------------------------------------------------------------------------------------------
# Thresholds from outside the file


#: The settings given to every scan from outside the file, each as the summary's notes name it.
THRESHOLDS = {"fail_above": "threshold", "warn_above": "warning threshold", "min_exceedances": "minimum of exceedances"}


def apply_settings(config: ScanConfig, given: Mapping[str, Chosen]) -> ScanConfig:
    """``config`` with the thresholds ``given`` from outside the file (the command line, a
    ``QAR_`` variable, a discovered config) applied by :func:`qar_sql.precedence.choose`: the
    command line replaces every scan's own value; a variable or config only sets what a scan
    and its file's [defaults] leave unset. Each replaced or supplied value is noted."""
    for key, chosen in given.items():
        if key not in THRESHOLDS:
            raise ValueError(f"only {', '.join(THRESHOLDS)} can be given to every scan, not {key!r}")
        if key == "min_exceedances":
            try:
                check_min_exceedances(chosen.value)
            except ParameterError as exc:  # the rule names the option; say where the value came from
                raise ParameterError(str(exc).replace("--min-exceedances", chosen.origin, 1)) from exc
        else:
            check_risk(chosen.value, chosen.origin, "0.5")
    fail, warn = given.get("fail_above"), given.get("warn_above")
    # Typed together, a warning above the failure is a mistake; from variables and files (each
    # checked on its own) it is moot: such a risk fails first.
    if fail and warn and fail.level == warn.level == "command line":
        check_warning(warn.value, fail.value, warn.origin, fail.origin)
    if not given:
        return config
    scans, notes = [], list(config.notes)
    for spec in config.scans:
        changes: dict[str, Any] = {}
        origins = dict(spec.origins)
        for key, outside in given.items():
            own = spec.origins.get(key) or Chosen(getattr(spec, key), "built-in", "built-in default")
            won = choose(outside, own)
            if won is own or won.value == own.value:
                continue
            changes[key], origins[key] = won.value, won
            what = THRESHOLDS[key]
            if own.value is None:
                notes.append(f"{spec.name}: {what} {won.value:g} from {won.origin} (the scan sets none)")
            else:
                where = "" if own.level == "scan" and own.origin == "[[scan]]" else f" from {own.origin}"
                notes.append(
                    f"{spec.name}: {what} {won.value:g} from {won.origin} overrides the scan's {own.value:g}{where}"
                )
        scans.append(replace(spec, **changes, origins=origins) if changes else spec)
    return replace(config, scans=tuple(scans), notes=tuple(notes))


def combine(config: ScanConfig, extra: Sequence[ScanSpec]) -> ScanConfig:
    """``config`` with more scans (from a dbt manifest), names still unique."""
    merged = replace(config, scans=tuple(config.scans) + tuple(extra))
    check_unique(merged.scans, _where(config.path))
    return merged
