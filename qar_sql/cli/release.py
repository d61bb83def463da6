"""``qar compare``: options, then :mod:`qar_sql.commands.compare`'s prepare, run, emit and verdict."""

from __future__ import annotations

import sys

import click

from qar_sql import params
from qar_sql.cli.emit import build, emit, session
from qar_sql.cli.guard import guard_outputs
from qar_sql.engines.render import recording
from qar_sql.extras import require
from qar_sql.output.files import check_plot, written
from qar_sql.parameters.release import IMPUTE, CompareParams
from qar_sql.params import default_of


def _components(ctx, param, value):
    if value is None:
        return default_of(CompareParams, "components")
    if value.strip().lower() == "all":
        return "all"
    try:
        n = int(value)
    except ValueError:
        raise click.BadParameter(f"{value!r} is neither a number nor 'all'") from None
    if n < 1:
        raise click.BadParameter(f"{value!r} must be at least 1, or 'all'")
    return n


@click.command("compare")
@click.argument("original", required=False, envvar="QAR_DATABASE_URL")
@click.argument("treated", required=False)
@params.table
@click.option("--treated-table", envvar="QAR_TREATED_TABLE", help="Table of the treated release (default: --table).")
@click.option(
    "--treatments",
    "-T",
    type=click.Path(exists=True, dir_okay=False),
    help="What-if TOML file: build the treated table from ORIGINAL (its release), linked by row.",
)
@click.option(
    "--link",
    "link",
    envvar="QAR_LINK",
    help="Key column linking each original record to the treated record made from it.",
)
@click.option("--aligned", is_flag=True, help="Link row i of ORIGINAL to row i of TREATED (files and DuckDB tables).")
@params.columns
@params.exclude
@params.names_option(
    "--categorical", help="Columns to compare as categories although their type is numeric, comma-separated."
)
@click.option(
    "--components",
    envvar="QAR_COMPONENTS",
    callback=_components,
    help="Axes of the projection: a number or 'all'.  [default: 5, or fewer when the columns allow fewer]",
)
@params.names_option(
    "--attacker-columns", help="Columns an attacker holds from an external source (correlation protection rate)."
)
@click.option("--target", help="Column the inference attack tries to read off the nearest treated record.")
@params.risk_options
@click.option("--no-risk", is_flag=True, help="Skip the QaR audits of both tables.")
@click.option(
    "--fail-below",
    multiple=True,
    envvar="QAR_FAIL_BELOW",
    help="Exit 1 when a metric is below a value, e.g. hidden_rate=0.9 (dtc, cdr, hidden_rate, local_cloaking, "
    "local_cloaking_ties, correlation_protection_rate, mae).",
)
@params.file_option("--plot", help="Write the figures to this .png or .svg file.")
@click.option(
    "--anonymeter", is_flag=True, help="Also run anonymeter's three evaluators (pip install 'qar-sql[anonymeter]')."
)
@params.int_option(
    "--anonymeter-attacks", minimum=10, default=500, show_default=True, help="Attacks per anonymeter evaluator."
)
@params.option(
    "--impute",
    of=CompareParams,
    type=click.Choice(list(IMPUTE)),
    show_default=True,
    help="A missing number: none standardises on the present values (NULL at the centre); mean imputes the "
    "mean first, then standardises (the Avatar paper).",
)
@params.fmt_html
@params.delimiter
@params.null_tokens
@params.jobs
@params.quiet
def compare_cmd(original, treated, risk, no_risk, fail_below, plot, fmt, quiet, **options):
    """Compare a treated release TREATED with its ORIGINAL: DTC, CDR, hidden rate, local
    cloaking, correlation protection, inference, and the QaR risk of both.

    Each side is a CSV or Parquet file, a DuckDB file or a database URL (with --table /
    --treated-table). Records are compared in an exact FAMD projection (saiph) fitted on the
    original. See docs/compare.md for every metric.
    """
    require("compare", "qar compare")  # before any work, and before comparison/ imports pandas
    from qar_sql.commands import compare
    from qar_sql.commands.report import html as report_html
    from qar_sql.comparison.thresholds import parse_thresholds
    from qar_sql.output.render_compare import plot_compare

    thresholds = parse_thresholds(fail_below)  # a bad threshold fails before any table is read (exit 2)
    if plot is not None:  # before the work, as every command that draws
        check_plot(plot)
        reads = [("the original", original), ("the treated release", treated)]
        guard_outputs([("--plot", plot)], [*reads, ("the treatments file", options["treatments"])])
    chosen = {**options, **risk, "original": original, "treated": treated, "risk": not no_risk}
    settings = build(CompareParams, chosen, figures=plot is not None, fail_below=thresholds)
    prepared = compare.prepare(settings)
    # recording(): the SQL the HTML report shows
    with params.Progress("comparing", quiet) as bar, recording() as sql:
        with session(compare.session_keywords(prepared)) as s:
            result = compare.run(s, prepared, bar)
    emit(result, fmt, html=lambda: report_html(compare.shown(result, settings), sql=sql, compare=result))
    if plot:
        with written(plot, "--plot"):
            drawn = plot_compare(result, plot)
        click.echo(f"Figures written to {drawn}.", err=True)
    sys.exit(compare.verdict(result, settings))
