"""``qar audit``: the QaR risk T̂(p, α) of a table over every set of p quasi-identifier columns.

:func:`recorded` is ``run`` with the run kept in the results store (``--store``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import click

from qar_sql import cli_options
from qar_sql.command import SOURCE_ORDER, TAIL_ORDER, Command, Extras, Verdict, api_function, run_on, serial_sources
from qar_sql.commands import sql as sql_command
from qar_sql.errors import DatabaseError, ExitCode
from qar_sql.parameters.needs import Needs
from qar_sql.parameters.tail import AuditParams, SqlParams
from qar_sql.precedence import from_click

if TYPE_CHECKING:  # numpy-backed: loaded when the audit runs, not when `qar --help` loads
    from qar_sql.compliance.store import Store
    from qar_sql.engines.session import Session
    from qar_sql.engines.source import SourceLike
    from qar_sql.pushdown.scan import Progress
    from qar_sql.results import AuditResult

NAME = "audit"
DOC = """Audit one table: its QaR risk T̂(p, α) over all C(N, p) quasi-identifiers.

    ``source`` is a CSV/Parquet/DuckDB file or a SQLAlchemy URL (default ``$QAR_DATABASE_URL``);
    ``columns`` the QI columns (default: all but ``exclude``). The counting runs in the
    database; only per-QI class-size histograms come back. With ``group_size`` k, the result
    also holds every QI's uniqueness probability for groups of k (``result.uniqueness``), from
    the same histograms. ``interval_level`` and ``bootstrap`` (resamples; 0: none) set the
    intervals of ``result.intervals`` (docs/uncertainty.md).

    ``prune``: ``"auto"`` groups only the QIs of size p that can reach the tail, found from the
    counts of size p − 1 (T̂, u, ξ̂, β̂ and the exceedances are those of the full audit, bit for
    bit; the other QIs carry θ bounds); ``"off"`` groups every QI. Default: ``"auto"`` at p ≥ 4,
    ``"off"`` below, and always off with ``group_size`` (which needs every QI's classes).

    ``theta``: ``"distinct"`` (θ = H/L, the paper's) or ``"unique"`` (θ = S/L, the share of
    records unique on the QI, fitted by the same tail); ``result.risk`` is of that measure.
    ``result.leave_one_column_out`` gives T̂ without each column (from the θ in hand);
    ``sensitivity`` adds T̂ at p − 1 and p + 1 (``result.risk_by_p``, their scans) and
    ``row_subsamples`` (shares such as ``(0.25, 0.5)``) T̂ on nested subsamples of the rows
    (``result.risk_by_rows``, a scan each). docs/uncertainty.md, "Sensitivity".
"""
Params = AuditParams

#: The parameters a results store records with a run (compliance/store.py).
RECORDED = ("p", "alpha", "pi_u", "pwm", "k")


def run(session: Session, params: AuditParams, progress: Progress | None = None) -> AuditResult:
    """The audit of the session's relation: profile → pushed-down scan → tail fit."""
    from qar_sql.measures.audit import audit_session

    return audit_session(session, params, progress)


def recorded(
    store: str | Store,
    params: AuditParams,
    progress: Progress | None = None,
    *,
    source: SourceLike = None,
    table: str | None = None,
    delimiter: str | None = None,
    null_tokens: Sequence[str] = (),
    all_text: bool = False,
    store_in_source: bool = False,
    scan_name: str | None = None,
    secrets: Sequence[str] = (),
) -> AuditResult:
    """:func:`run` with the run recorded in the results store ``store`` (docs/compliance.md): the
    store opens first (a store that is the audited file is refused unless ``store_in_source``),
    then the session, inside the recorded run, so that a source which cannot be read is a
    ``failed`` run. The store keeps every QI's θ: the audit groups every QI unless --prune auto
    is asked for. ``scan_name`` and ``secrets`` (values masked in what is stored): a scan's."""
    from qar_sql.compliance.store import recorded_audit
    from qar_sql.engines.source import session_of

    if params.prune is None:
        params = dataclasses.replace(params, prune="off")

    def runner() -> tuple[AuditResult, None]:
        with session_of(source, table=table, delimiter=delimiter, all_text=all_text, null_tokens=null_tokens) as s:
            return run(s, params, progress), None

    return recorded_audit(
        store, source, store_in_source=store_in_source, scan_name=scan_name, secrets=secrets, runner=runner,
        table=table, columns=params.columns, **{name: getattr(params, name) for name in RECORDED},
    )  # fmt: skip


def verdict(result: AuditResult, params: AuditParams) -> int:
    """The exit code of an audit: 2 without a tail fit or with fewer exceedances than
    ``min_exceedances`` (its reason raised), 1 with a risk above ``fail_above``, else 0."""
    from qar_sql.stats.interval import require_exceedances

    if result.fit is None:
        return int(ExitCode.USAGE)
    require_exceedances(result.fit.n_exceedances, params.min_exceedances, pi_u=params.pi_u)
    if params.fail_above is not None and result.risk is not None and result.risk > params.fail_above:
        reason = f"Risk {result.risk:.6g} is above the threshold {params.fail_above:g}."
        return Verdict(int(ExitCode.RISK_ABOVE_THRESHOLD), reason)
    return 0


def _show_sql(where: dict[str, Any], params: AuditParams, out: dict[str, Any]) -> str | None:
    """``--show-sql``: ``qar sql`` of the same source options; nothing is read."""
    if not out["show_sql"]:
        return None
    shown = {key: where[key] for key in ("source", "table", "delimiter", "null_tokens")}
    return sql_command.run(
        SqlParams(**shown, columns=params.columns, p=params.p, batch_size=params.batch_size, jobs=params.jobs)
    )


def _one_at_a_time(values: Mapping[str, Any]) -> str | None:
    """Why --jobs has no effect: with --show-sql, on the SQL shown (qar sql's rule); else on the
    source's engine (:func:`~qar_sql.command.serial_sources`)."""
    if values.get("show_sql"):
        return sql_command.jobs_unused(values)
    return serial_sources(COMMAND, values)


def _run(where: dict[str, Any], params: AuditParams, progress: Progress | None, out: dict[str, Any]) -> AuditResult:
    """The command line's run: :func:`run`, or :func:`recorded` with ``--store``."""
    if out["store"] is None:
        return run_on(where, COMMAND, params, progress)
    try:
        return recorded(out["store"], params, progress, **where, store_in_source=out["store_in_source"])
    except DatabaseError as exc:  # finished, but the store refused (NotRecorded): print it, then say where
        if getattr(exc, "result", None) is None:
            raise
        out["store_refused"] = exc  # exit 3, once the result is printed (_store_refused)
        return exc.result  # type: ignore[attr-defined]


def _store_refused(result: AuditResult, params: AuditParams, extras: Extras) -> None:
    """The store's refusal of a finished audit, raised once its result is printed."""
    if extras.out.get("store_refused") is not None:
        raise extras.out["store_refused"]


def _report(result: AuditResult, params: AuditParams, extras: Extras) -> str:
    """``--format html``: the report of the audit just run (docs/report.md)."""
    from qar_sql.commands.report import audit_html

    chosen = from_click(click.get_current_context(), "fail_above", params.fail_above)
    where = {k: v for k, v in extras.where.items() if k != "all_text"}
    return audit_html(
        result,
        {**where, "columns": params.columns, "exclude": params.exclude},
        threshold=params.fail_above,  # only a threshold the user set gives a verdict
        threshold_source=chosen.described if chosen else None,
        jobs=params.jobs,
        store=extras.out["store"],  # the run just recorded there, and the earlier ones: the history section
    )


#: What --show-sql renders: the source options, --columns, -p, --batch-size and --jobs; every other
#: option of the audit is no part of the SQL.
NOT_IN_SQL = (
    "exclude alpha pi_u pwm fmt k top histograms fail_above group_size prune store store_in_source all_text "
    "interval_level bootstrap min_exceedances theta sensitivity row_subsamples"
).split()
WITH_SQL = "--show-sql prints the SQL and runs nothing"
ONLY = {name: Needs(unused_with=("show_sql",), why=WITH_SQL) for name in NOT_IN_SQL} | {
    "top": Needs(
        unused_with=("fmt=json", "fmt=csv", "show_sql"),
        why="it caps the lists of text, Markdown and HTML; JSON and CSV list all",
    ),
    "histograms": Needs(needs=("fmt=json",), unused_with=("show_sql",), why="the histograms are JSON's"),
    "store_in_source": Needs(needs=("store",), unused_with=("show_sql",), why="it lets --store be the audited file"),
}

ORDER = (
    *SOURCE_ORDER, *TAIL_ORDER, "fmt", "k", "top", "histograms", "fail_above", "show_sql", "group_size", "jobs",
    "batch_size", "prune", "quiet", "store", "store_in_source", "all_text", "interval_level", "bootstrap",
    "min_exceedances", "theta", "sensitivity", "row_subsamples",
)  # fmt: skip


COMMAND: Command[AuditParams, AuditResult] = Command(
    name=NAME,
    Params=AuditParams,
    run=run,
    verdict=verdict,
    help="""Audit SOURCE: its QaR risk T̂(p, α) over every set of p quasi-identifier columns.

    SOURCE is a CSV or Parquet file, a DuckDB file (with --table) or a database URL such as
    postgresql+psycopg://user@host/db (with --table; default $QAR_DATABASE_URL).
    """,
    doc=DOC,
    outputs={
        "fmt": cli_options.fmt_html,
        "top": cli_options.top(10, "How many of the riskiest QIs to list in text and Markdown."),
        "histograms": click.option(
            "--histograms", is_flag=True, help="Include each QI's class-size histogram in JSON."
        ),
        "show_sql": click.option(
            "--show-sql", is_flag=True, help="Print the SQL this audit would run, without connecting."
        ),
        "quiet": cli_options.quiet,
        "store": cli_options.store("audit"),
        "store_in_source": cli_options.store_in_source,
    },
    emits=("top", "histograms"),
    order=ORDER,
    only=ONLY,
    one_at_a_time=_one_at_a_time,
    preview=_show_sql,
    runner=_run,
    html=_report,
    write=_store_refused,
)

audit = api_function(COMMAND)
