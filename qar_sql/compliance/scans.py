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
import math
import os
import re
import time
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from qar_sql import toml_text
from qar_sql.compliance.store import Store, describe_error, ensure_ready, recorded_audit, scan_store
from qar_sql.engines.secrets import mask_source, scrub, secret_values
from qar_sql.engines.source import is_url
from qar_sql.errors import ExitCode, ParameterError, QarError, UsageError
from qar_sql.measures.audit import audit, validate
from qar_sql.parameters.tail import THETA_MEASURES, TailParams
from qar_sql.precedence import Chosen, choose
from qar_sql.results import ScanOutcome, ScanReport
from qar_sql.rules import DEFAULT_JOBS, check_risk
from qar_sql.stats.interval import require_exceedances

SCAN_KEYS = (
    "name",
    "source",
    "table",
    "columns",
    "exclude",
    "p",
    "alpha",
    "pi_u",
    "pwm",
    "theta",
    "k",
    "fail_above",
    "warn_above",
    "min_exceedances",
)
PARAM_KEYS = ("p", "alpha", "pi_u", "pwm", "theta", "k", "fail_above", "warn_above", "min_exceedances")
DEFAULT_KEYS = PARAM_KEYS + ("columns", "exclude")
TOP_KEYS = ("store", "defaults", "sources", "scan")
DEFAULTS = {
    "p": 3,
    "alpha": 0.01,
    "pi_u": 0.05,
    "pwm": "plotting",
    "theta": "distinct",
    "k": 5,
    "fail_above": None,
    "warn_above": None,
    "min_exceedances": None,
}
_ENV = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


# --------------------------------------------------------------------------------------------
# The config


@dataclass(frozen=True, kw_only=True)
class ScanSpec(TailParams):
    """One table to audit, with its parameters (:class:`~qar_sql.parameters.tail.TailParams`:
    columns, exclude, p, alpha, pi_u, pwm) and thresholds. ``source`` may hold a secret (it is the
    resolved URL); print ``source_display``."""

    name: str
    source: str = field(repr=False)
    source_display: str
    source_name: str
    table: str | None
    k: int = 5
    #: the θ of T̂ that fail_above and warn_above judge: "distinct" (H/L) or "unique" (S/L)
    theta: str = "distinct"
    fail_above: float | None = None
    warn_above: float | None = None
    #: A fit from fewer exceedances of u is refused: status error, exit 2 (docs/uncertainty.md).
    min_exceedances: int | None = None
    #: Where each setting came from (:mod:`qar_sql.precedence`): the scan's own table, the
    #: file's [defaults], the built-in default; a key not here is the built-in default.
    origins: Mapping[str, Chosen] = field(default_factory=dict, repr=False, compare=False, hash=False)


@dataclass(frozen=True)
class ScanConfig:
    scans: tuple[ScanSpec, ...]
    store: str | None = field(default=None, repr=False)  # as written after ${} substitution
    secrets: tuple[str, ...] = field(default=(), repr=False)  # substituted values, to mask
    path: str | None = None
    #: What replaced a scan's own setting, and what set one it lacked ("population: threshold
    #: 0.5 from --fail-above overrides the scan's 0.05"), for the summary.
    notes: tuple[str, ...] = ()


def _where(path: str | None) -> str:
    return Path(path).name if path else "the scan config"


def _did_you_mean(word: str, allowed: Sequence[str]) -> str:
    close = difflib.get_close_matches(word, allowed, n=1)
    return f"did you mean {close[0]!r}?" if close else f"allowed: {', '.join(allowed)}"


def _check_keys(table: Mapping, allowed: Sequence[str], what: str, where: str) -> None:
    for key in table:
        if key not in allowed:
            raise UsageError(f"{where}: {what} has an unknown key {key!r}; {_did_you_mean(key, allowed)}")


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
                    f"is not set; export {name} before running qar scan"
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


def _number(value: Any, key: str, where: str, *, risk: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ParameterError(f"{where}: {key} = {value!r} is not a number; write e.g. {key} = 0.5")
    if risk:
        check_risk(value, f"{where}: {key} =", "0.5")
    return float(value)


def _whole(value: Any, key: str, where: str, *, least: int, example: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise ParameterError(
            f"{where}: {key} = {value!r} must be a whole number of at least {least}, e.g. {key} = {example}"
        )
    return value


def _names(value: Any, key: str, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",") if v.strip()]
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        raise UsageError(f'{where}: {key} must be a list of column names, e.g. {key} = ["age", "sex"]')
    return tuple(value)


def make_spec(
    name: str,
    table: str | None,
    settings: Mapping[str, Any],
    *,
    source: tuple[str, str, str],
    where: str,
    origins: Mapping[str, Chosen] | None = None,
) -> ScanSpec:
    """Validate one scan's settings (defaults already merged) into a :class:`ScanSpec`.
    ``source``: (URL, how it is shown, its name in the file); ``origins``: where each came from."""
    url, source_display, source_name = source
    s = {**DEFAULTS, **settings}
    label = f"{where}: scan {name!r}"
    # The settings are the spec's fields of the same names, each checked in turn.
    checked: dict[str, Any] = {key: s.get(key) for key in DEFAULT_KEYS}
    checked["p"] = _whole(s["p"], "p", label, least=1, example=3)
    checked["k"] = _whole(s["k"], "k", label, least=2, example=5)
    checked["alpha"] = _number(s["alpha"], "alpha", label)
    checked["pi_u"] = _number(s["pi_u"], "pi_u", label)
    if not isinstance(s["pwm"], str):
        raise ParameterError(f'{label}: pwm = {s["pwm"]!r} must be "plotting" or "unbiased"')
    try:
        validate(checked["p"], checked["alpha"], checked["pi_u"], s["pwm"])
    except ParameterError as exc:
        raise ParameterError(f"{label}: {exc}") from exc
    if s["theta"] not in THETA_MEASURES:
        raise ParameterError(f'{label}: theta = {s["theta"]!r} must be "distinct" or "unique"')
    for key in ("fail_above", "warn_above"):
        if s[key] is not None:
            checked[key] = _number(s[key], key, label, risk=True)
    fail, warn = checked["fail_above"], checked["warn_above"]
    if fail is not None and warn is not None and warn > fail:
        raise ParameterError(
            f"{label}: warn_above = {warn:g} is above fail_above = {fail:g}; a warning must come "
            "before the failure, so make warn_above the smaller"
        )
    if s["min_exceedances"] is not None:
        checked["min_exceedances"] = _whole(s["min_exceedances"], "min_exceedances", label, least=1, example=3)
    for key in ("columns", "exclude"):
        if s.get(key) is not None:
            checked[key] = _names(s[key], key, label)
    return ScanSpec(
        name=name,
        source=url,
        source_display=source_display,
        source_name=source_name,
        table=table,
        origins=dict(origins or {}),
        **checked,
    )


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


def parse_config(
    data: Mapping[str, Any], *, path: str | None = None, environ: Mapping[str, str] | None = None
) -> ScanConfig:
    """Validate a parsed ``qar.toml`` into a :class:`ScanConfig` (nothing is connected)."""
    where = _where(path)
    env = _Env(os.environ if environ is None else environ, where)
    base = Path(path).resolve().parent if path else Path.cwd()
    _check_keys(data, TOP_KEYS, "the file", where)

    store = data.get("store")
    if isinstance(store, Mapping):
        _check_keys(store, ("url",), "[store]", where)
        store = store.get("url")
    if store is not None:
        if not isinstance(store, str) or not store:
            raise UsageError(f'{where}: store must be a URL or file name, e.g. url = "qar_results.duckdb"')
        _no_literal_password(store, "store.url", where)
        store = env(store, "store.url")
        if not is_url(store) and not Path(store).is_absolute():
            store = os.path.normpath(base / store)

    defaults = data.get("defaults", {})
    if not isinstance(defaults, Mapping):
        raise UsageError(f"{where}: [defaults] must be a table of settings, e.g. p = 3")
    _check_keys(defaults, DEFAULT_KEYS, "[defaults]", where)

    sources: dict[str, tuple[str, str]] = {}
    raw_sources = data.get("sources", {})
    if not isinstance(raw_sources, Mapping):
        raise UsageError(
            f'{where}: [sources.NAME] tables are expected, e.g. [sources.warehouse] url = "${{QAR_WAREHOUSE_URL}}"'
        )
    for sname, sdef in raw_sources.items():
        key = f"sources.{sname}"
        if not isinstance(sdef, Mapping) or not isinstance(sdef.get("url"), str) or not sdef["url"]:
            raise UsageError(f'{where}: [{key}] needs a url, e.g. url = "${{QAR_WAREHOUSE_URL}}"')
        _check_keys(sdef, ("url",), f"[{key}]", where)
        _no_literal_password(sdef["url"], f"{key}.url", where)
        url = env(sdef["url"], f"{key}.url")
        if not is_url(url) and not Path(url).is_absolute():
            url = os.path.normpath(base / url)  # files are relative to the config file
        sources[sname] = (url, mask_source(url))

    raw_scans = data.get("scan", [])
    if not isinstance(raw_scans, list) or not raw_scans:
        raise UsageError(
            f"{where}: no scans; add at least one [[scan]] naming a source (and its table, for a database: a CSV or Parquet file takes none)"
        )
    specs = []
    for i, raw in enumerate(raw_scans, 1):
        if not isinstance(raw, Mapping):
            raise UsageError(f"{where}: scan number {i} must be a [[scan]] table")
        _check_keys(raw, SCAN_KEYS, f"scan number {i}", where)
        sname = raw.get("source")
        if sname is None:
            if len(sources) != 1:
                raise UsageError(
                    f'{where}: scan number {i} names no source; add source = "..." naming one of: '
                    f"{', '.join(sources) or '(none: add a [sources.NAME] table)'}"
                )
            sname = next(iter(sources))
        if sname not in sources:
            hint = _did_you_mean(str(sname), list(sources)) if sources else "add a [sources.NAME] table"
            raise UsageError(f"{where}: scan number {i} uses source {sname!r}, which is not defined; {hint}")
        table = raw.get("table")
        if table is not None and (not isinstance(table, str) or not table):
            raise UsageError(f'{where}: scan number {i}: table must be a name, e.g. table = "public.people"')
        name = raw.get("name", table or sname)
        if not isinstance(name, str) or not name:
            raise UsageError(f'{where}: scan number {i}: name must be text, e.g. name = "patients"')
        chosen = own_settings(raw, defaults)
        settings = {k: c.value for k, c in chosen.items() if c.level != "built-in"}
        url, display = sources[sname]
        specs.append(make_spec(name, table, settings, source=(url, display, sname), where=where, origins=chosen))
    check_unique(specs, where)
    return ScanConfig(tuple(specs), store, tuple(env.secrets), path)


def load_config(path: str | Path, *, environ: Mapping[str, str] | None = None) -> ScanConfig:
    """Read and validate a ``qar.toml``."""
    p = Path(path)
    if not p.is_file():
        raise UsageError(f"scan config {str(path)!r} does not exist; create it (see examples/qar.toml)")
    try:
        data = toml_text.loads(p.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{p.name} is not valid TOML ({exc}); fix the line it names") from exc
    return parse_config(data, path=str(p), environ=environ)


# --------------------------------------------------------------------------------------------
# Running


class ScanInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped :func:`run_scans`; ``report`` holds the scans finished so far, the
    interrupted one (an error, exit code 130) and the names of those not run."""

    def __init__(self, report: ScanReport):
        super().__init__("interrupted")
        self.report = report


def judge(spec: ScanSpec, risk: float | None) -> tuple[str, int]:
    if risk is None:
        return "error", int(ExitCode.USAGE)
    if spec.fail_above is not None and risk > spec.fail_above:
        return "fail", int(ExitCode.RISK_ABOVE_THRESHOLD)
    if spec.warn_above is not None and risk > spec.warn_above:
        return "warn", int(ExitCode.OK)
    return "ok", int(ExitCode.OK)


def _run_one(spec: ScanSpec, store, secrets, jobs: int, progress) -> ScanOutcome:
    started = time.perf_counter()
    kwargs = {f: getattr(spec, f) for f in ("table", "columns", "exclude", "p", "alpha", "pi_u", "pwm", "theta", "k")}
    kwargs.update(jobs=jobs, progress=progress)
    base: dict[str, Any] = dict(
        name=spec.name,
        table=spec.table,
        source=spec.source_display,
        fail_above=spec.fail_above,
        warn_above=spec.warn_above,
        p=spec.p,
        alpha=spec.alpha,
        origins=spec.origins,
        source_name=spec.source_name,
    )
    try:
        if store is not None:
            result = recorded_audit(store, spec.source, scan_name=spec.name, secrets=secrets, **kwargs)
        else:
            result = audit(spec.source, **kwargs)
    except Exception as exc:  # noqa: BLE001 - a driver error in one scan must not stop the rest
        return ScanOutcome(
            **base,
            status="error",
            risk=None,
            exit_code=int(exc.exit_code if isinstance(exc, QarError) else ExitCode.RUNTIME),
            seconds=time.perf_counter() - started,
            error=scrub(describe_error(exc), [*secrets, *secret_values(spec.source)]),
        )
    status, code = judge(spec, result.risk)
    error = None
    if result.risk is None:
        error = "no risk: " + ("; ".join(result.warnings) or "the θ values have no tail")
    elif result.fit is not None:
        try:  # the gate of min_exceedances: T̂ is kept, the verdict refused
            require_exceedances(result.fit.n_exceedances, spec.min_exceedances, option="min_exceedances")
        except QarError as exc:
            status, code, error = "error", int(exc.exit_code), str(exc)
    return ScanOutcome(
        **base,
        status=status,
        risk=result.risk,
        exit_code=code,
        seconds=result.seconds,
        error=error,
        rows=result.rows,
        n_qi=result.n_qi,
        result=result,
    )


def run_scans(
    config: ScanConfig,
    *,
    store: str | None = None,
    record: bool | None = None,
    jobs: int = DEFAULT_JOBS,
    progress: Callable[[str, int, int], None] | None = None,
    on_outcome: Callable[[ScanOutcome], None] | None = None,
) -> ScanReport:
    """Run every scan of ``config`` (:func:`qar_sql.scan_config` reads it from a ``qar.toml``
    path or a parsed dict).

    Runs are recorded only where a store is asked for (:func:`~qar_sql.compliance.store.scan_store`):
    ``store`` (``""``: ``$QAR_STORE``, else ``qar_results.duckdb``), else the config's
    ``[store]``; ``record=True`` records even with neither (as ``""``), ``record=False`` never. One scan failing does not stop the others; Ctrl-C stops them all (the current run is
    recorded as ``interrupted``) and raises :class:`ScanInterrupted`, a KeyboardInterrupt carrying
    the report so far.
    """
    st = None
    url = scan_store(store, config.store, record)
    if url is not None:
        st = Store(url)
        ensure_ready(st)  # a broken store stops everything before any scan runs
    started_at = datetime.now(UTC).replace(tzinfo=None)
    t0 = time.perf_counter()
    outcomes: list[ScanOutcome] = []
    try:
        for i, spec in enumerate(config.scans):
            tick = (lambda done, total, _n=spec.name: progress(_n, done, total)) if progress else None
            scan_started = time.perf_counter()
            try:
                outcome = _run_one(spec, st, config.secrets, jobs, tick)
            except KeyboardInterrupt as exc:
                outcomes.append(
                    ScanOutcome(
                        name=spec.name,
                        table=spec.table,
                        source=spec.source_display,
                        status="error",
                        risk=None,
                        fail_above=spec.fail_above,
                        warn_above=spec.warn_above,
                        exit_code=int(ExitCode.INTERRUPTED),
                        seconds=time.perf_counter() - scan_started,
                        error="interrupted (Ctrl-C)",
                        p=spec.p,
                        alpha=spec.alpha,
                        source_name=spec.source_name,
                    )
                )
                report = ScanReport(
                    tuple(outcomes),
                    st.display if st else None,
                    started_at,
                    time.perf_counter() - t0,
                    not_run=tuple(s.name for s in config.scans[i + 1 :]),
                    notes=config.notes,
                )
                raise ScanInterrupted(report) from exc
            outcomes.append(outcome)
            if on_outcome:
                on_outcome(outcome)
    finally:
        if st is not None:
            st.close()
    return ScanReport(
        tuple(outcomes), st.display if st else None, started_at, time.perf_counter() - t0, notes=config.notes
    )


THRESHOLDS = {
    "fail_above": ("--fail-above", "threshold"),
    "warn_above": ("--warn-above", "warning threshold"),
    "min_exceedances": ("--min-exceedances", "minimum of exceedances"),
}


def override_thresholds(
    config: ScanConfig, *, fail_above: float | None = None, warn_above: float | None = None
) -> ScanConfig:
    """``config`` with every scan's ``fail_above`` / ``warn_above`` replaced by the given ones:
    an explicit argument is the command line's level, above a scan's own setting (the summary
    notes each replaced value). A ``warn_above`` left above the new ``fail_above`` is moot:
    such a risk fails first."""
    given = {
        key: Chosen(value, "command line", THRESHOLDS[key][0])
        for key, value in (("fail_above", fail_above), ("warn_above", warn_above))
        if value is not None
    }
    return apply_settings(config, given)


def apply_settings(config: ScanConfig, given: Mapping[str, Chosen]) -> ScanConfig:
    """``config`` with the thresholds ``given`` from outside the file (the command line, a
    ``QAR_`` variable, a discovered config) applied by :func:`qar_sql.precedence.choose`: the
    command line replaces every scan's own value; a variable or config only sets what a scan
    and its file's [defaults] leave unset. Each replaced or supplied value is noted."""
    for key, chosen in given.items():
        if key not in THRESHOLDS:
            raise ValueError(f"only {', '.join(THRESHOLDS)} can be given to every scan, not {key!r}")
        v = chosen.value
        if key == "min_exceedances":
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
                raise ParameterError(f"{chosen.origin} {v!r} must be a whole number of at least 1, e.g. 3")
        elif v is not None and not (isinstance(v, int | float) and math.isfinite(v)):
            raise ParameterError(f"{chosen.origin} {v!r} must be a risk between 0 and 1, e.g. {THRESHOLDS[key][0]} 0.5")
        else:
            check_risk(v, chosen.origin, "0.5")
    fail, warn = given.get("fail_above"), given.get("warn_above")
    # Typed together, a warning above the failure is a mistake; from variables and files (each
    # checked on its own) it is moot: such a risk fails first.
    if fail and warn and fail.level == warn.level == "command line" and warn.value > fail.value:
        raise ParameterError(
            f"{warn.origin} {warn.value:g} is above {fail.origin} {fail.value:g}; a warning must come "
            f"before the failure, so make {warn.origin} the smaller"
        )
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
            what = THRESHOLDS[key][1]
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
