"""``qar compare`` and ``qar report``, the commands about a release: one
:class:`~qar_sql.command.Command` each (:data:`COMPARE`, :data:`REPORT`), whose parameters
(:mod:`qar_sql.parameters.release`) are their options; ``qar compare``/``qar report`` and
:func:`compare`/:func:`report` are made from them.

Light on purpose (``qar --help`` loads it): the work is :mod:`qar_sql.commands.compare` and
:mod:`qar_sql.commands.report`, loaded when a command runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import click

from qar_sql import cli_options
from qar_sql.command import SOURCE_ORDER, TAIL_ORDER, Command, Extras, api_function, lazy
from qar_sql.commands.anonymize import hierarchy_files
from qar_sql.commands.search_options import report_search_options
from qar_sql.errors import UsageError
from qar_sql.guard import guard_outputs
from qar_sql.output.files import check_plot
from qar_sql.parameters.fields import options_of
from qar_sql.parameters.needs import Needs
from qar_sql.parameters.release import CompareParams, ReportParams
from qar_sql.parameters.treat import AnonymizeParams
from qar_sql.precedence import from_click
from qar_sql.user_text import one_line

if TYPE_CHECKING:  # numpy-backed: loaded when the command runs, not when `qar --help` loads
    from types import ModuleType

    from qar_sql.engines.session import Session
    from qar_sql.output.html import ReportInputs
    from qar_sql.pushdown.scan import Progress
    from qar_sql.results import CompareResult


def _compare() -> ModuleType:
    """:mod:`qar_sql.commands.compare`, the comparison's work (numpy-backed: loaded when it runs)."""
    from qar_sql.commands import compare

    return compare


def _report() -> ModuleType:
    """:mod:`qar_sql.commands.report`, the report's work (loaded when it runs)."""
    from qar_sql.commands import report

    return report


# --- compare --------------------------------------------------------------------------------------


def _compare_run(
    session: Session, params: CompareParams, progress: Progress | None = None, **keywords: Any
) -> CompareResult:
    return _compare().run(session, params, progress, **keywords)


def _compare_session(where: dict[str, Any], params: CompareParams) -> dict[str, Any]:
    """The original's session (its --null-token values those of the CSV files among both sides)."""
    return _compare().session_keywords(params)


def _compare_parse(values: dict[str, Any], where: dict[str, Any], out: dict[str, Any]) -> dict[str, Any]:
    """--fail-below's thresholds (a bad one fails before any table is read), --no-risk, and --plot
    checked before the work (its extra present, no input overwritten): it keeps the figures."""
    from qar_sql.comparison.thresholds import parse_thresholds  # (numpy-backed)

    values["fail_below"] = parse_thresholds(values.get("fail_below") or ())
    plot = out["plot"]
    if plot is not None:
        check_plot(plot)
        reads = [("the original", values.get("original")), ("the treated release", values.get("treated"))]
        guard_outputs([("--plot", plot)], [*reads, ("the treatments file", values.get("treatments"))])
    return values | {"risk": not out["no_risk"], "figures": plot is not None}


def _compare_html(result: CompareResult, params: CompareParams, extras: Extras) -> str:
    """``--format html``: the report of the comparison, with the statements it rendered."""
    return _report().html(_compare().shown(result, params), sql=extras.sql, compare=result)


def _compare_write(result: CompareResult, params: CompareParams, extras: Extras) -> None:
    """--plot: the figures, after the result."""
    plot = extras.out.get("plot")
    if plot:
        from qar_sql.output.render_compare import plot_compare

        drawn = plot_compare(result, plot)
        click.echo(one_line(f"Figures written to {drawn}."), err=True)


COMPARE_DOC = """Compare ``treated`` (a file, or a table of a DuckDB file or database URL) with
    ``original``; see docs/compare.md for every metric. Without a link (``link``, ``aligned`` or
    ``treatments``) only DTC, CDR, inference and the QaR risks are computed.
"""

COMPARE_ORDER = (
    "table", "treated_table", "treatments", "link", "aligned", "columns", "exclude", "categorical", "components",
    "attacker_columns", "target", *TAIL_ORDER, "no_risk", "fail_below", "plot", "anonymeter",
    "anonymeter_attacks", "impute", "fmt", "delimiter", "null_tokens", "jobs", "quiet",
)  # fmt: skip


COMPARE: Command[CompareParams, CompareResult] = Command(
    name="compare",
    Params=CompareParams,
    run=_compare_run,
    verdict=lazy(_compare, "verdict"),
    help="""Compare a treated release TREATED with its ORIGINAL: DTC, CDR, hidden rate, local
    cloaking, correlation protection, inference, and the QaR risk of both.

    Each side is a CSV or Parquet file, a DuckDB file or a database URL (with --table /
    --treated-table). Records are compared in an exact FAMD projection (saiph) fitted on the
    original. See docs/compare.md for every metric.
    """,
    doc=COMPARE_DOC,
    arguments=("original", "treated"),
    source=(),
    needs="compare",
    progress="comparing",
    outputs={
        "no_risk": click.option("--no-risk", is_flag=True, help="Skip the QaR audits of both tables."),
        "plot": cli_options.file_option("--plot", help="Write the figures to this .png or .svg file."),
        "fmt": cli_options.fmt_html,
        "quiet": cli_options.quiet,
    },
    order=COMPARE_ORDER,
    prepare=lazy(_compare, "prepare"),
    session=_compare_session,
    parse=_compare_parse,
    html=_compare_html,
    write=_compare_write,
    cli_keywords={"on_cli": True},
)

compare = api_function(COMPARE)


# --- report ---------------------------------------------------------------------------------------

#: The options of qar anonymize's search, which --anonymize passes on (its own parameters).
SEARCH = report_search_options()


def _search_only(name: str) -> Needs:
    """A search option of ``qar report`` needs --anonymize, and what it needs in ``qar anonymize``."""
    own = next((meta.only for f, meta in options_of(AnonymizeParams) if f.name == name), None) or Needs()
    why = own.why or "an option of the --anonymize section's search"
    return Needs(needs=("add_anonymize", *own.needs), unused_with=own.unused_with, why=why)


#: The search options' relations in ``qar report`` (only typed ones are refused: a variable of qar
#: anonymize's options is no request).
SEARCH_ONLY = {name: _search_only(name) for name in SEARCH}

#: The classic measures' options of ``qar report``: nothing with --no-classic (only typed ones are
#: refused: a QAR_WEIGHT set for qar risk is no request here); ``classic=False``: the API's form.
CLASSIC_ONLY = {
    name: Needs(unused_with=("no_classic", "classic=False"), why="an option of the classic measures")
    for name in ("weight", "sensitive", "population", "sampling_fraction")
}


def _report_run(session: Session | None, params: ReportParams, progress: Progress | None = None) -> ReportInputs:
    return _report().run(session, params, progress)


def _report_session(where: dict[str, Any], params: ReportParams) -> dict[str, Any] | None:
    """SOURCE's session; none for a recorded run's report (--from-store reads no source)."""
    return None if params.from_store is not None else where


def _report_guard(where: dict[str, Any], params: ReportParams) -> None:
    """-o is none of the files the report reads (SOURCE, the treated release, the treatments,
    hash secret and hierarchy files, the stores), refused before any is read; named as the
    caller spelled it (``--output`` on the command line, ``output`` to a Python caller)."""
    writes, reads = _report().files(params, where.get("source"))
    on_cli = click.get_current_context(silent=True) is not None
    if not on_cli:
        writes = [("output", path) for _, path in writes]
    if params.anonymize is not None and writes:
        for column, f in params.anonymize.hierarchy_items:
            reads.append((f"the hierarchy of {column or 'its columns'}" if on_cli else "a hierarchy file", f))
        reads += hierarchy_files(params.anonymize.hierarchies)
    guard_outputs(writes, reads)


def _report_parse(values: dict[str, Any], where: dict[str, Any], out: dict[str, Any]) -> dict[str, Any]:
    """The fields of the command line's own options: --no-classic, --no-records, --fail-above (the
    verdict's threshold and where it came from), --anonymize with the search options, and the
    command line the report shows."""
    if out["no_classic"] and out["classic_flag"]:
        raise UsageError("--classic and --no-classic contradict each other; give one of them")
    ctx = click.get_current_context()
    chosen = from_click(ctx, "fail_above", out["fail_above"])  # (a verdict only when set)
    search = {name: out.pop(name) for name in SEARCH}
    values |= {"threshold": out["fail_above"], "threshold_source": chosen.described if chosen else None}
    values |= {"classic": not out["no_classic"], "records": False if out["no_records"] else None}
    values["anonymize"] = anonymize_keywords(out["add_anonymize"], search, values["k"], values["sensitive"])
    return values | {"command": _report().command_line()}


def anonymize_keywords(asked: bool, search: dict, k: int, sensitive: Sequence[str] | None) -> dict | None:
    """The anonymization section's keywords (None: not asked): the search options, the report's
    --k as k-anonymity when given, its one --sensitive column for --l/--t (a search option
    without --anonymize is refused before: :data:`SEARCH_ONLY`)."""
    ctx = click.get_current_context()
    given = (click.core.ParameterSource.COMMANDLINE, click.core.ParameterSource.ENVIRONMENT)
    if not asked:
        return None
    out = {name: value for name, value in search.items() if value is not None}
    if ctx.get_parameter_source("k") in given:
        out["k"] = k
    if search["l"] is not None or search["t"] is not None:
        if len(sensitive or ()) != 1:
            raise UsageError("--l and --t of --anonymize take one --sensitive column; name exactly one")
        out["sensitive"] = sensitive[0]  # type: ignore[index]
    return out


REPORT_DOC = """Build the HTML report of ``source`` (``.to_html()`` renders it again, from the results
    alone); write it to ``output`` when given, in ``format`` (else the one its suffix names). Each
    keyword below adds or shapes a section; ``from_store`` with ``run_id`` rebuilds a recorded
    run's report without reading any source.
"""

REPORT_ORDER = (
    *SOURCE_ORDER, *TAIL_ORDER, "k", "key", "top", "fail_above", "treatments", "group_size", "compare",
    "treated_table", "link", "aligned", "no_classic", "classic_flag", "weight", "sensitive", "population",
    "sampling_fraction", "no_records", "hash_secret_file", "store", "from_store", "run_id", "title", "owner",
    "purpose", "release_kind", "format", "output", "add_anonymize", *SEARCH, "interval_level", "bootstrap", "jobs",
    "quiet",
)  # fmt: skip


REPORT: Command[ReportParams, ReportInputs] = Command(
    name="report",
    Params=ReportParams,
    run=_report_run,
    verdict=lazy(_report, "verdict"),
    help="Write one self-contained HTML report of SOURCE: risk, tail fit, k-anonymity, records, what-if, history.",
    doc=REPORT_DOC,
    source=("source", "table", "delimiter", "null_tokens"),
    outputs={
        "fail_above": click.option(
            "--fail-above",
            "--threshold",
            "fail_above",
            type=click.FloatRange(0.0, 1.0),
            envvar="QAR_FAIL_ABOVE",
            help="The risk the first page's verdict compares T̂ with (also fail_above in qar.toml); without one the "
            "report gives no verdict. The report states the verdict and still exits 0: to fail a CI job, use qar "
            "audit --fail-above or qar scan.",
        ),
        "no_classic": click.option(
            "--no-classic",
            is_flag=True,
            help="Leave out the classic risk measures of qar risk (sdcMicro's and ARX's, in the report by default).",
        ),
        "classic_flag": click.option("--classic", "classic_flag", is_flag=True, hidden=True),  # the earlier opt-in
        "no_records": click.option(
            "--no-records", is_flag=True, help="Leave out the records and elimination sections (a second pass)."
        ),
        "add_anonymize": click.option(
            "--anonymize",
            "add_anonymize",
            is_flag=True,
            help="Add the anonymization section: qar anonymize's search with the options below (--hierarchy, "
            "--hierarchies, --k, --risk-below, ...; --sensitive for --l/--t) on the report's columns, p, α and π_u.",
        ),
        **SEARCH,
        "quiet": cli_options.quiet,
    },
    order=REPORT_ORDER,
    only={**SEARCH_ONLY, **CLASSIC_ONLY},
    prepare=lazy(_report, "prepare"),
    check=lazy(_report, "check"),
    session=_report_session,
    guard=_report_guard,
    parse=_report_parse,
    write=lambda inputs, params, extras: _report().write(inputs, params),
    prints=False,
)

report = api_function(REPORT)
