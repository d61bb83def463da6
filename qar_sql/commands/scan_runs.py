"""The work of ``qar scan`` (:mod:`qar_sql.commands.scan`): the scan files and the dbt manifest or
project read, the scans run as the audit command's ``run`` (:mod:`qar_sql.commands.audit`), the
JUnit, Markdown and HTML files written, the exit code; loaded when the scan runs, not when
``qar --help`` loads its options. A scan opens no one session (each scan reads its own source).
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from qar_sql.command import Verdict
from qar_sql.commands import audit as audit_command
from qar_sql.commands.report import command_line, scan_pages, write_scan_reports
from qar_sql.compliance.dbt import load_manifest, manifest_scans
from qar_sql.compliance.dbt_project import check_named_tagged, project_scans, select_nodes
from qar_sql.compliance.scans import (
    ScanConfig,
    ScanSpec,
    apply_settings,
    combine,
    load_config,
    parse_config,
)
from qar_sql.compliance.store import Store, describe_error, ensure_ready, refuse_store_in_source, scan_store
from qar_sql.engines.secrets import scrub, secret_values
from qar_sql.engines.source import check_source, one_at_a_time, session_of
from qar_sql.errors import ExitCode, QarError, UsageError
from qar_sql.guard import guard_outputs
from qar_sql.output.files import check_writable
from qar_sql.output.render import render
from qar_sql.output.render_scan import junit_xml, stderr_lines
from qar_sql.parameters.store import ScanParams
from qar_sql.results import ScanOutcome, ScanReport, pick
from qar_sql.stats.interval import require_exceedances
from qar_sql.user_files import check_folder
from qar_sql.user_text import one_line

#: A scan's progress: (the scan's name, done, total).
ScanProgress = Callable[[str, int, int], None]


class ScanInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped the scans of :func:`scan_config`; ``report`` holds the scans finished so
    far, the interrupted one (an error, exit code 130) and the names of those not run."""

    def __init__(self, report: ScanReport):
        super().__init__("interrupted")
        self.report = report


@dataclass(frozen=True, kw_only=True)
class ScanPlan(ScanParams):
    """The parameters prepared (:func:`prepare`): the ``scans`` read (the thresholds given from
    outside the files applied) and the store the runs are ``recorded_in`` (None: nowhere)."""

    scans: ScanConfig
    recorded_in: str | None


def read_config(config: Any, environ: Mapping[str, str] | None = None) -> ScanConfig:
    """``config`` as a :class:`ScanConfig`: a ``qar.toml`` path, a parsed dict or one already."""
    if isinstance(config, (str, Path)):
        return load_config(config, environ=environ)
    if isinstance(config, ScanConfig):
        return config
    return parse_config(config, environ=environ)


def _none_tagged(params: ScanParams, where: str) -> str:
    """No tagged model to scan: among those --select picks, when given (the whole manifest's
    models were said untagged, of one that has a tagged model --select left out)."""
    if params.select:
        picked = " ".join(params.select)
        return (
            f"--select {picked!r} picks no model, seed or snapshot {where} with a column with meta "
            "{qar: quasi_identifier}; tag their quasi-identifier columns in the model's YAML, or select tagged models"
        )
    return (
        f"no model, seed or snapshot {where} has a column with meta {{qar: quasi_identifier}}; tag the "
        "quasi-identifier columns in the model's YAML"
    )


def scans_of(params: ScanParams) -> ScanConfig:
    """The scans of ``params``: its config's, then the tagged models of its dbt manifest or
    project (nothing is connected)."""
    cfg = read_config(params.config, params.environ) if params.config is not None else ScanConfig(())
    if params.dbt_manifest:
        manifest = load_manifest(params.dbt_manifest)
        only = select_nodes(manifest, params.select) if params.select else None
        extra = manifest_scans(manifest, params.url, only=only)  # type: ignore[arg-type]  # (read once)
        if only is not None:
            check_named_tagged(manifest, params.select, only, extra)
        if not extra:
            raise UsageError(_none_tagged(params, f"in {params.dbt_manifest}"))
        cfg = combine(cfg, extra)
    if params.dbt_project:
        specs, _ = project_scans(
            params.dbt_project,
            url=params.project_url,
            profile=params.profile,
            target=params.target,
            profiles=params.profiles_dir,
            select=params.select,
        )
        if not specs:
            raise UsageError(_none_tagged(params, f"of the dbt project {params.dbt_project!r}"))
        cfg = combine(cfg, specs)
    return cfg


def prepare(params: ScanParams) -> ScanPlan:
    """Everything read and checked before any scan runs: the summaries writable, the scans
    read, the store chosen, the thresholds given from outside the files applied by
    :func:`qar_sql.precedence.choose`, no output a file the scans read (:func:`files`)."""
    for option, path in (("--junit", params.junit), ("--markdown", params.markdown)):
        if path:
            check_writable(path, option)
    if params.report_dir:  # (a symlink loop there failed after every scan had run)
        check_folder(params.report_dir, "--report-dir")
    cfg = scans_of(params)
    for spec in cfg.scans:  # (every scan's, before the first scan's first query)
        _source_checked(spec, cfg)
    if "jobs" in params.given:
        _jobs_used(cfg)
    given = {f.name: getattr(params, f.name) for f in fields(ScanParams)}
    scans = apply_settings(cfg, params.thresholds)
    plan = ScanPlan(
        **given, scans=scans, recorded_in=scan_store(params.store, cfg.store or params.found_store, params.record)
    )
    writes, reads = files(plan)
    guard_outputs(writes, reads)
    if plan.recorded_in is not None:  # (each scan refused it too, but after the store was made in the file)
        with Store(plan.recorded_in) as st:
            for spec in scans.scans:
                refuse_store_in_source(
                    st, spec.source, also="; in qar scan, that is --store or the config's [store] url"
                )
    return plan


def _source_checked(spec: ScanSpec, cfg: ScanConfig) -> None:
    """The checks of ``spec``'s source that need no query (:func:`~qar_sql.engines.source.check_source`:
    a file that exists and can be told, a table a file has not, a URL that can be read and whose
    driver is installed), as a bad config is refused: one sentence naming the scan, exit 2. Those
    that need the catalog (a table or column not found) stay each scan's own gate (:func:`run_one`)."""
    try:
        check_source(spec.source, table=spec.table, null_tokens=spec.null_tokens)
    except QarError as exc:
        why = scrub(str(exc), [*cfg.secrets, *secret_values(spec.source)])
        raise type(exc)(f"{cfg.label(spec.name)}: {why}") from exc


def _jobs_used(cfg: ScanConfig) -> None:
    """Refuse a typed --jobs when every scan's source runs its statements one at a time (as every
    command refuses it on such a source: :class:`~qar_sql.parameters.needs.Needs`); one server
    database among the scans uses it."""
    reasons = [one_at_a_time(spec.source) for spec in cfg.scans]
    if reasons and all(r is not None for r in reasons):
        what = (
            reasons[0]
            if len(reasons) == 1
            else (
                f"these {len(reasons)} scans, whose sources all run one statement at a time (the first is {reasons[0]})"
            )
        )
        raise UsageError(f"--jobs has no effect on {what}; leave --jobs out")


def files(plan: ScanPlan) -> tuple[list[tuple[str, Any]], list[tuple[str, Any]]]:
    """(option, path) of each file the scans write and (what, path) of each they read: no
    summary or page may be a file the scans read (the config, the manifest, a scanned DuckDB or
    SQLite file, the store), checked before any scan runs."""
    writes: list[tuple[str, Any]] = [("--junit", plan.junit), ("--markdown", plan.markdown)]
    if plan.report_dir:
        pages = ["index.html", *scan_pages([s.name for s in plan.scans.scans]).values()]
        writes += [("--report-dir", os.path.join(plan.report_dir, page)) for page in pages]
    config = plan.config if isinstance(plan.config, (str, os.PathLike)) else None
    reads: list[tuple[str, Any]] = [("the scan config", config), ("the dbt manifest", plan.dbt_manifest)]
    reads += [(f"the source of scan {s.name!r}", s.source) for s in plan.scans.scans]
    if plan.recorded_in is not None:
        reads.append(("the results store", plan.recorded_in))
    return writes, reads


def write(report: ScanReport, plan: ScanPlan) -> None:
    """The JUnit, Markdown and HTML files ``plan`` asks for (after Ctrl-C too: the scans so far)."""
    if plan.junit:
        _write(plan.junit, junit_xml(report))
    if plan.markdown:
        _write(plan.markdown, render(report, "markdown"))
    if plan.report_dir:
        write_scan_reports(report, plan.report_dir, command=command_line())


def verdict(report: ScanReport, params: ScanParams) -> int:
    """The exit code (:attr:`ScanReport.exit_code`) with what goes to stderr: that the scans
    were interrupted, where the HTML reports are, and what ``params.format`` leaves out."""
    lines = ["Interrupted."] if report.exit_code == ExitCode.INTERRUPTED else []
    if params.report_dir:
        lines.append(one_line(f"HTML reports written; open {Path(params.report_dir) / 'index.html'}."))
    return Verdict(report.exit_code, "\n".join([*lines, *stderr_lines(report, params.format)]))


def _write(path: str, text: str) -> None:
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {path!r}: {exc.strerror}; check the folder exists and is writable") from exc


# --- running ----------------------------------------------------------------------------------------


def judge(spec: ScanSpec, risk: float | None) -> tuple[str, int]:
    if risk is None:
        return "error", int(ExitCode.USAGE)
    if spec.fail_above is not None and risk > spec.fail_above:
        return "fail", int(ExitCode.RISK_ABOVE_THRESHOLD)
    if spec.warn_above is not None and risk > spec.warn_above:
        return "warn", int(ExitCode.OK)
    return "ok", int(ExitCode.OK)


def _outcome(spec: ScanSpec, **more: Any) -> ScanOutcome:
    kept = pick(spec, ("name", "table", "fail_above", "warn_above", "p", "alpha", "source_name"))
    return ScanOutcome(**kept, source=spec.source_display, **more)


#: The command line's fix in a refusal (``leave it out with --exclude 'id'``): qar scan has no such option.
_EXCLUDE = re.compile(r"with --exclude(?: ('[^']*'|\"[^\"]*\"))?")


def _scan_fix(message: str, spec: ScanSpec) -> str:
    """``message`` with the command line's ``--exclude`` said as this scan leaves a column out:
    ``meta {qar: ignore}`` on a dbt model's column, ``exclude = [...]`` in a ``[[scan]]``; and
    ``--columns``/``--exclude`` naming a column said as where the scan's columns came from."""
    chosen = spec.origins.get("columns")
    dbt = chosen is not None and chosen.origin == "meta.qar"

    def said(match: re.Match) -> str:
        name = match.group(1)
        if dbt:
            return (
                f"with meta {{qar: ignore}} on {'column ' + name if name else 'the column'} in the model's schema.yml"
            )
        return f"with exclude = [{name or '...'}] in the scan's [[scan]]"

    # (a column of --columns/--exclude not found, or listed twice: the scan's key or the dbt tag
    # named it, not an option qar scan has)
    columns = "tagged {qar: quasi_identifier} in the model's schema.yml" if dbt else "in the scan's columns"
    message = message.replace("(in --columns)", f"({columns})").replace("(in --exclude)", "(in the scan's exclude)")
    message = message.replace(
        "listed twice in --columns", "listed twice " + ("as tagged" if dbt else "in the scan's columns")
    )
    return _EXCLUDE.sub(said, message)


def run_one(spec: ScanSpec, store: Store | None, secrets: tuple[str, ...], jobs: int, progress) -> ScanOutcome:
    """One scan: the audit command's ``run`` on its source (recorded in ``store`` if any), judged."""
    started = time.perf_counter()
    params = spec.audit_params(jobs)
    where: dict[str, Any] = pick(spec, ("source", "table", "null_tokens"))
    try:
        if store is not None:
            result = audit_command.recorded(store, params, progress, **where, scan_name=spec.name, secrets=secrets)
        else:
            with session_of(**where) as session:
                result = audit_command.run(session, params, progress)
    except Exception as exc:  # noqa: BLE001 - a driver error in one scan must not stop the rest
        code = int(exc.exit_code if isinstance(exc, QarError) else ExitCode.RUNTIME)
        why = _scan_fix(scrub(describe_error(exc), [*secrets, *secret_values(spec.source)]), spec)
        seconds = time.perf_counter() - started
        return _outcome(
            spec, origins=spec.origins, status="error", risk=None, exit_code=code, seconds=seconds, error=why
        )
    status, code = judge(spec, result.risk)
    error = None
    if result.risk is None:
        # (the audit's warnings name its --exclude: a scan leaves a column out in its [[scan]])
        error = _scan_fix("no risk: " + ("; ".join(result.warnings) or "the θ values have no tail"), spec)
    elif result.fit is not None:
        try:  # the gate of min_exceedances: T̂ is kept, the verdict refused
            require_exceedances(
                result.fit.n_exceedances, spec.min_exceedances, option="min_exceedances", pi_u=result.pi_u
            )
        except QarError as exc:
            status, code, error = "error", int(exc.exit_code), _scan_fix(str(exc), spec)
    return _outcome(
        spec, origins=spec.origins, status=status, risk=result.risk, exit_code=code, seconds=result.seconds,
        error=error, rows=result.rows, n_qi=result.n_qi, result=result,
    )  # fmt: skip


def run_scans(
    plan: ScanPlan, progress: ScanProgress | None = None, on_outcome: Callable[[ScanOutcome], None] | None = None
) -> ScanReport:
    """Every scan of ``plan``, in order; Ctrl-C raises :class:`ScanInterrupted` with the report so far."""
    config, st = plan.scans, None
    if plan.recorded_in is not None:
        st = Store(plan.recorded_in)
        ensure_ready(st)  # a broken store stops everything before any scan runs
    started_at = datetime.now(UTC).replace(tzinfo=None)
    t0 = time.perf_counter()
    outcomes: list[ScanOutcome] = []

    def report(not_run: tuple[str, ...] = ()) -> ScanReport:
        elapsed = time.perf_counter() - t0
        store = st.display if st else None
        return ScanReport(tuple(outcomes), store, started_at, elapsed, not_run=not_run, notes=config.notes)

    try:
        for i, spec in enumerate(config.scans):
            tick = (lambda done, total, _n=spec.name: progress(_n, done, total)) if progress else None
            scan_started = time.perf_counter()
            try:
                outcome = run_one(spec, st, config.secrets, plan.jobs, tick)
            except KeyboardInterrupt as exc:
                seconds = time.perf_counter() - scan_started
                stopped = {"exit_code": int(ExitCode.INTERRUPTED), "error": "interrupted (Ctrl-C)"}
                outcomes.append(_outcome(spec, status="error", risk=None, seconds=seconds, **stopped))
                raise ScanInterrupted(report(tuple(s.name for s in config.scans[i + 1 :]))) from exc
            outcomes.append(outcome)
            if on_outcome:
                on_outcome(outcome)
    finally:
        if st is not None:
            st.close()
    return report()
