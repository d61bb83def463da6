"""``qar scan``: every scan of a ``qar.toml`` and/or every tagged model of a dbt project, judged
against its thresholds and recorded in the results store where one is asked for (docs/compliance.md).

One :class:`~qar_sql.command.Command` (:data:`COMMAND`) without a SOURCE: its parameters
(:class:`~qar_sql.parameters.store.ScanParams`, whose fields are its options), ``prepare`` (the
scan files and the dbt manifest or project read before any database is opened), ``run`` (each
scan the audit command's ``run``, on its own source: ``run`` takes no session), ``write`` (the
JUnit, Markdown and HTML files) and ``verdict`` (the exit code, Ctrl-C's 130 too). Their work is
:mod:`qar_sql.commands.scan_runs`, loaded when the scan runs. :func:`scan_config` is the Python API.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import click

from qar_sql import cli_options
from qar_sql.command import Command, lazy
from qar_sql.errors import ExitCode
from qar_sql.parameters.store import ScanParams
from qar_sql.precedence import from_click
from qar_sql.progress import Progress
from qar_sql.rules import DEFAULT_JOBS
from qar_sql.user_text import one_line

if TYPE_CHECKING:  # numpy-backed: loaded when the scan runs, not when `qar --help` loads
    from qar_sql.commands.scan_runs import ScanPlan, ScanProgress
    from qar_sql.compliance.scans import ScanConfig
    from qar_sql.results import ScanOutcome, ScanReport

NAME = "scan"
Params = ScanParams
THRESHOLDS = ("fail_above", "warn_above", "min_exceedances")


def _runs() -> ModuleType:  # numpy-backed: the scan's work, loaded when it runs
    from qar_sql.commands import scan_runs

    return scan_runs


#: The scans read and checked, the store chosen, the outputs guarded (:func:`scan_runs.prepare`).
prepare: Callable[[ScanParams], ScanPlan] = lazy(_runs, "prepare")
#: The exit code, with what goes to stderr (:func:`scan_runs.verdict`).
verdict: Callable[[ScanReport, ScanParams], int] = lazy(_runs, "verdict")


def run(
    session: None,
    plan: ScanPlan,
    progress: ScanProgress | None = None,
    *,
    on_outcome: Callable[[ScanOutcome], None] | None = None,
) -> ScanReport:
    """Run every scan of ``plan``. One scan failing does not stop the others; Ctrl-C stops them all
    (the current run is recorded as ``interrupted``) and the report so far is returned (exit code
    130). ``on_outcome`` (else ``progress.outcome``, if any) hears of each scan as it ends."""
    runs = _runs()
    try:
        return runs.run_scans(plan, progress, on_outcome or getattr(progress, "outcome", None))
    except runs.ScanInterrupted as stop:
        return stop.report


def _parse(values: dict[str, Any], where: dict[str, Any], out: dict[str, Any]) -> dict[str, Any]:
    """The fields the command line's own options give: the thresholds at their level of
    :mod:`qar_sql.precedence` (typed, each replaces every scan's own; from a QAR_ variable or the
    config found from the working folder it only fills in), --no-store, --format, and which of
    --url, --store and --jobs were typed."""
    ctx = click.get_current_context()
    chosen = {k: from_click(ctx, k, out[k]) for k in THRESHOLDS}
    typed = {
        k for k in ("url", "store", "jobs") if ctx.get_parameter_source(k) is click.core.ParameterSource.COMMANDLINE
    }
    found = (ctx.find_root().obj or {}).get("config")
    return {
        **values,
        "found_store": found.values.get("store") if found is not None else None,
        "thresholds": {k: c for k, c in chosen.items() if c is not None},
        "record": False if out["no_store"] else None,
        "given": frozenset(typed),
        "format": out["fmt"],
    }


class Bar:
    """The command line's progress of the scans: the command's bar labelled with each scan's name,
    and each scan's verdict as it ends (in text on a terminal)."""

    def __init__(self, bar: Progress, fmt: str):
        self.bar, self.show = bar, bar.enabled and fmt == "text"

    def __call__(self, name: str, done: int, total: int) -> None:
        self.bar.label = name
        self.bar(done, total)

    def outcome(self, o: ScanOutcome) -> None:
        self.bar.close()
        self.bar.done = 0
        if self.show:
            click.echo(one_line(f"{o.name}: {o.status}"), err=True)


def _bar(where: dict[str, Any], plan: Any, bar: Progress, out: dict[str, Any]) -> ScanReport:
    return run(None, plan, Bar(bar, out["fmt"]))


#: Every option in ``--help`` order.
ORDER = (
    "dbt_manifest", "url", "dbt_project", "profile", "target", "profiles_dir", "select", *THRESHOLDS, "store",
    "no_store", "junit", "markdown", "report_dir", "fmt", "jobs", "quiet",
)  # fmt: skip


COMMAND: Command[ScanParams, ScanReport] = Command(
    name=NAME,
    Params=ScanParams,
    run=run,
    help="""Run every scan in CONFIG (a qar.toml) and/or every tagged model of a dbt manifest.

    Exit codes: 0 all within thresholds, 1 a risk above its fail_above, 2 a bad config, table or
    column, 3 a scan failed in the database.""",
    source=(),
    arguments=("config",),
    outputs={
        "fail_above": click.option(
            "--fail-above",
            type=float,
            help="fail_above for every scan, replacing the scan's own and the dbt meta's (exit 1 above it); the "
            "summary says so. From $QAR_FAIL_ABOVE or a discovered config it only sets the scans that have none.",
        ),
        "warn_above": click.option(
            "--warn-above",
            type=float,
            help="warn_above for every scan, replacing the scan's own and the dbt meta's; from $QAR_WARN_ABOVE or a "
            "discovered config it only sets the scans that have none.",
        ),
        "min_exceedances": click.option(
            "--min-exceedances",
            type=int,
            help="min_exceedances for every scan: a T̂ fitted to fewer exceedances of u is an error (exit 2); from "
            "$QAR_MIN_EXCEEDANCES or a discovered config it only sets the scans that have none.",
        ),
        "no_store": click.option(
            "--no-store",
            is_flag=True,
            help="Do not record the runs, even where qar.toml has a [store] (the default: runs are recorded only "
            "with --store or a [store]).",
        ),
        "fmt": cli_options.fmt_html,
        "quiet": cli_options.quiet,
    },
    order=ORDER,
    parse=_parse,
    prepare=prepare,
    runner=_bar,
    write=lambda report, plan, extras: _runs().write(report, plan),  # (prepared: a ScanPlan)
    verdict=verdict,
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
    :class:`~qar_sql.commands.scan_runs.ScanInterrupted`, a KeyboardInterrupt carrying the report so far.
    """
    given = frozenset({"jobs"} if jobs != DEFAULT_JOBS else ())  # (as a typed --jobs: one_scan_at_a_time)
    params = ScanParams(config=config, store=store, record=record, jobs=jobs, environ=environ, given=given)
    report = run(None, prepare(params), progress, on_outcome=on_outcome)
    if report.exit_code == ExitCode.INTERRUPTED:
        raise _runs().ScanInterrupted(report)
    return report
