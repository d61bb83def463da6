"""``qar scan``: every scan of a ``qar.toml`` and/or every tagged model of a dbt project, judged
against its thresholds and recorded in the results store where one is asked for (docs/compliance.md).

The protocol of every command (``qar_sql/commands/__init__.py``): :func:`prepare` reads the
scan files and the dbt manifest or project and checks the outputs, before any database is
opened; :func:`run` runs each scan as the audit command's ``run`` (:mod:`qar_sql.commands.audit`)
and writes the JUnit, Markdown and HTML files asked for; :func:`verdict` is the exit code, with
what the command adds on stderr. A scan opens no one session (each scan reads its own source),
so ``run`` takes ``None`` for it (:data:`SESSION`).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from qar_sql.commands import audit as audit_command
from qar_sql.commands.report import command_line, scan_pages, write_scan_reports
from qar_sql.compliance.dbt import load_manifest, manifest_scans
from qar_sql.compliance.dbt_project import project_scans, select_nodes
from qar_sql.compliance.scans import (
    ScanConfig,
    ScanSpec,
    apply_settings,
    combine,
    load_config,
    parse_config,
)
from qar_sql.compliance.store import Store, describe_error, ensure_ready, scan_store
from qar_sql.engines.secrets import scrub, secret_values
from qar_sql.engines.source import session_of
from qar_sql.errors import ExitCode, QarError, UsageError
from qar_sql.output.files import check_writable
from qar_sql.output.render_scan import junit_xml, stderr_lines, summary_markdown
from qar_sql.parameters.store import ScanParams
from qar_sql.progress import Progress
from qar_sql.results import ScanOutcome, ScanReport
from qar_sql.rules import DEFAULT_JOBS
from qar_sql.stats.interval import require_exceedances

NAME = "scan"
Params = ScanParams
#: No one session: each scan opens its own source's.
SESSION = False

#: A scan's progress: (the scan's name, done, total).
ScanProgress = Callable[[str, int, int], None]


class ScanInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped the scans of :func:`scan_config`; ``report`` holds the scans finished so
    far, the interrupted one (an error, exit code 130) and the names of those not run."""

    def __init__(self, report: ScanReport):
        super().__init__("interrupted")
        self.report = report


@dataclass(frozen=True)
class ScanPlan:
    """What :func:`prepare` read: the parameters, the scans (the thresholds given from outside
    the files applied) and the store the runs are recorded in (None: nowhere)."""

    params: ScanParams
    config: ScanConfig
    store: str | None


def read_config(config: Any, environ: Mapping[str, str] | None = None) -> ScanConfig:
    """``config`` as a :class:`ScanConfig`: a ``qar.toml`` path, a parsed dict or one already."""
    if isinstance(config, (str, Path)):
        return load_config(config, environ=environ)
    if isinstance(config, ScanConfig):
        return config
    return parse_config(config, environ=environ)


def scans_of(params: ScanParams) -> ScanConfig:
    """The scans of ``params``: its config's, then the tagged models of its dbt manifest or
    project (nothing is connected)."""
    cfg = read_config(params.config, params.environ) if params.config is not None else ScanConfig(())
    if params.dbt_manifest:
        only = select_nodes(load_manifest(params.dbt_manifest), params.select) if params.select else None
        extra = manifest_scans(params.dbt_manifest, params.url, only=only)  # type: ignore[arg-type]
        if not extra:
            raise UsageError(
                f"no model, seed or snapshot in {params.dbt_manifest} has a column with meta {{qar: quasi_identifier}}; "
                "tag the quasi-identifier columns in the model's YAML"
            )
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
            raise UsageError(
                f"no model of the dbt project {params.dbt_project!r} has a column with meta "
                "{qar: quasi_identifier}; tag the quasi-identifier columns in the model's YAML"
            )
        cfg = combine(cfg, specs)
    return cfg


def prepare(params: ScanParams) -> ScanPlan:
    """Everything read and checked before any scan runs: the summaries writable, the scans
    read, the store chosen, the thresholds given from outside the files applied by
    :func:`qar_sql.precedence.choose`."""
    for option, path in (("--junit", params.junit), ("--markdown", params.markdown)):
        if path:
            check_writable(path, option)
    cfg = scans_of(params)
    store = scan_store(params.store, cfg.store, params.record)
    return ScanPlan(params, apply_settings(cfg, params.thresholds), store)


def files(plan: ScanPlan) -> tuple[list[tuple[str, Any]], list[tuple[str, Any]]]:
    """(option, path) of each file the scans write and (what, path) of each they read: no
    summary or page may be a file the scans read (the config, the manifest, a scanned DuckDB or
    SQLite file, the store), checked before any scan runs."""
    params = plan.params
    writes: list[tuple[str, Any]] = [("--junit", params.junit), ("--markdown", params.markdown)]
    if params.report_dir:
        pages = ["index.html", *scan_pages([s.name for s in plan.config.scans]).values()]
        writes += [("--report-dir", os.path.join(params.report_dir, page)) for page in pages]
    config = params.config if isinstance(params.config, (str, os.PathLike)) else None
    reads: list[tuple[str, Any]] = [("the scan config", config), ("the dbt manifest", params.dbt_manifest)]
    reads += [(f"the source of scan {s.name!r}", s.source) for s in plan.config.scans]
    if plan.store is not None:
        reads.append(("the results store", plan.store))
    return writes, reads


class Bar:
    """The command line's progress of the scans: a bar per scan, labelled with its name, and
    each scan's verdict as it ends (in text on a terminal)."""

    def __init__(self, quiet: bool, fmt: str):
        self.bar = Progress("", quiet)
        self.show = not quiet and fmt == "text" and sys.stderr.isatty()

    def __call__(self, name: str, done: int, total: int) -> None:
        self.bar.label = name
        self.bar(done, total)

    def outcome(self, o: ScanOutcome) -> None:
        self.bar.close()
        self.bar.done = 0
        if self.show:
            print(f"{o.name}: {o.status}", file=sys.stderr, flush=True)

    def __enter__(self) -> Bar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.bar.close()


def run(
    session: None,
    plan: ScanPlan,
    progress: ScanProgress | None = None,
    *,
    on_outcome: Callable[[ScanOutcome], None] | None = None,
) -> ScanReport:
    """Run every scan of ``plan`` and write the JUnit, Markdown and HTML files it asks for.
    One scan failing does not stop the others; Ctrl-C stops them all (the current run is
    recorded as ``interrupted``) and the report so far is returned (exit code 130), its files
    written too. ``on_outcome`` (else ``progress.outcome``, if any) hears of each scan as it ends."""
    if on_outcome is None:
        on_outcome = getattr(progress, "outcome", None)
    try:
        report = run_scans(plan, progress, on_outcome)
    except ScanInterrupted as stop:
        report = stop.report
    params = plan.params
    if params.junit:
        _write(params.junit, junit_xml(report))
    if params.markdown:
        _write(params.markdown, summary_markdown(report))
    if params.report_dir:
        write_scan_reports(report, params.report_dir, command=command_line())
    return report


def verdict(report: ScanReport, params: ScanParams) -> int:
    """The exit code (:attr:`ScanReport.exit_code`), after what goes to stderr: that the scans
    were interrupted, where the HTML reports are, and what ``params.format`` leaves out."""
    if report.exit_code == ExitCode.INTERRUPTED:
        print("Interrupted.", file=sys.stderr)
    if params.report_dir:
        print(f"HTML reports written; open {Path(params.report_dir) / 'index.html'}.", file=sys.stderr)
    for line in stderr_lines(report, params.format):
        print(line, file=sys.stderr)
    return report.exit_code


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
    return ScanOutcome(
        name=spec.name,
        table=spec.table,
        source=spec.source_display,
        fail_above=spec.fail_above,
        warn_above=spec.warn_above,
        p=spec.p,
        alpha=spec.alpha,
        source_name=spec.source_name,
        **more,
    )


def run_one(spec: ScanSpec, store: Store | None, secrets: tuple[str, ...], jobs: int, progress) -> ScanOutcome:
    """One scan: the audit command's ``run`` on its source (recorded in ``store`` if any), judged."""
    started = time.perf_counter()
    params = spec.audit_params(jobs)
    try:
        if store is not None:
            result = audit_command.recorded(
                store, params, progress, source=spec.source, table=spec.table, scan_name=spec.name, secrets=secrets
            )
        else:
            with session_of(spec.source, table=spec.table) as session:
                result = audit_command.run(session, params, progress)
    except Exception as exc:  # noqa: BLE001 - a driver error in one scan must not stop the rest
        return _outcome(
            spec,
            origins=spec.origins,
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
    return _outcome(
        spec,
        origins=spec.origins,
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
    plan: ScanPlan, progress: ScanProgress | None = None, on_outcome: Callable[[ScanOutcome], None] | None = None
) -> ScanReport:
    """Every scan of ``plan``, in order; Ctrl-C raises :class:`ScanInterrupted` with the report so far."""
    config, st = plan.config, None
    if plan.store is not None:
        st = Store(plan.store)
        ensure_ready(st)  # a broken store stops everything before any scan runs
    started_at = datetime.now(UTC).replace(tzinfo=None)
    t0 = time.perf_counter()
    outcomes: list[ScanOutcome] = []
    try:
        for i, spec in enumerate(config.scans):
            tick = (lambda done, total, _n=spec.name: progress(_n, done, total)) if progress else None
            scan_started = time.perf_counter()
            try:
                outcome = run_one(spec, st, config.secrets, plan.params.jobs, tick)
            except KeyboardInterrupt as exc:
                seconds = time.perf_counter() - scan_started
                outcomes.append(
                    _outcome(
                        spec,
                        status="error",
                        risk=None,
                        exit_code=int(ExitCode.INTERRUPTED),
                        seconds=seconds,
                        error="interrupted (Ctrl-C)",
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


def scan_config(
    config: str | Path | ScanConfig | Mapping[str, Any],
    *,
    store: str | None = None,
    record: bool | None = None,
    jobs: int = DEFAULT_JOBS,
    environ: Mapping[str, str] | None = None,
    progress: ScanProgress | None = None,
    on_outcome: Callable[[ScanOutcome], None] | None = None,
) -> ScanReport:
    """Run every scan of ``config`` (a ``qar.toml`` path, a parsed dict or a :class:`ScanConfig`).

    Runs are recorded only where a store is asked for: ``store`` (``""``: ``$QAR_STORE``, else
    ``qar_results.duckdb``), else the config's ``[store]``; ``record=True`` records even with
    neither (as ``""``), ``record=False`` never. One scan failing does not stop the
    others; Ctrl-C stops them all (the current run is recorded as ``interrupted``) and raises
    :class:`ScanInterrupted`, a KeyboardInterrupt carrying the report so far.
    """
    params = ScanParams(config=config, store=store, record=record, jobs=jobs, environ=environ)
    report = run(None, prepare(params), progress, on_outcome=on_outcome)
    if report.exit_code == ExitCode.INTERRUPTED:
        raise ScanInterrupted(report)
    return report
