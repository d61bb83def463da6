"""``qar compare``: parse, call :func:`qar_sql.compare`, print, exit."""

from __future__ import annotations

import sys

import click

from qar_sql import params
from qar_sql.errors import ExitCode


def _components(ctx, param, value):
    if value is None:
        return 5
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
@click.option(
    "--categorical",
    multiple=True,
    callback=params._split,
    help="Columns to compare as categories although their type is numeric, comma-separated.",
)
@click.option(
    "--components",
    envvar="QAR_COMPONENTS",
    callback=_components,
    help="Axes of the projection: a number or 'all'.  [default: 5]",
)
@click.option(
    "--attacker-columns",
    multiple=True,
    callback=params._split,
    help="Columns an attacker holds from an external source (correlation protection rate).",
)
@click.option("--target", help="Column the inference attack tries to read off the nearest treated record.")
@params.risk_options
@click.option("--no-risk", is_flag=True, help="Skip the QaR audits of both tables.")
@click.option(
    "--fail-below",
    multiple=True,
    envvar="QAR_FAIL_BELOW",
    help="Exit 1 when a metric is below a value, e.g. hidden_rate=0.9 (dtc, cdr, hidden_rate, local_cloaking, "
    "correlation_protection_rate, mae).",
)
@click.option("--plot", "plot", type=click.Path(dir_okay=False), help="Write the figures (PNG) to this file.")
@click.option(
    "--anonymeter", is_flag=True, help="Also run anonymeter's three evaluators (pip install 'qar-sql[compare]')."
)
@click.option(
    "--anonymeter-attacks",
    type=click.IntRange(10, None),
    default=500,
    show_default=True,
    help="Attacks per anonymeter evaluator.",
)
@params.fmt_html
@params.delimiter
@params.jobs
@params.quiet
def compare_cmd(
    original,
    treated,
    table,
    treated_table,
    treatments,
    link,
    aligned,
    columns,
    exclude,
    categorical,
    components,
    attacker_columns,
    target,
    risk,
    no_risk,
    fail_below,
    plot,
    anonymeter,
    anonymeter_attacks,
    fmt,
    delimiter,
    jobs,
    quiet,
):
    """Compare a treated release TREATED with its ORIGINAL: DTC, CDR, hidden rate, local
    cloaking, correlation protection, inference, and the QaR risk of both.

    Each side is a CSV or Parquet file, a DuckDB file or a database URL (with --table /
    --treated-table). Records are compared in an exact FAMD projection (saiph) fitted on the
    original. See docs/compare.md for every metric.
    """
    from qar_sql.output.compare import plot_compare, render_compare
    from qar_sql.release.compare import below_thresholds, check_thresholds, compare, parse_thresholds

    # A bad threshold fails before any table is read (exit 2).
    thresholds = parse_thresholds(fail_below)
    check_thresholds(
        thresholds, linked=bool(link or aligned or treatments), attacker_columns=attacker_columns, target=target
    )
    from qar_sql.engines.render import recording  # the SQL the HTML report shows

    with params.Progress("comparing", quiet) as bar, recording() as sql:
        result = compare(
            original,
            treated,
            table=table,
            treated_table=treated_table,
            treatments=treatments,
            link=link,
            aligned=aligned,
            columns=columns,
            exclude=exclude,
            categorical=categorical,
            components=components,
            attacker_columns=attacker_columns,
            target=target,
            **risk,
            risk=not no_risk,
            anonymeter=anonymeter,
            anonymeter_attacks=anonymeter_attacks,
            delimiter=delimiter,
            jobs=jobs,
            progress=bar,
            figures=plot is not None,
        )
    breaches = below_thresholds(result, thresholds)
    if fmt == "html":
        from qar_sql.cli.report import emit_html

        shown = {"original": original, "treated": treated, "table": table, "treated_table": treated_table}
        shown |= {"treatments": treatments, "link": link, "aligned": aligned, "columns": columns, "exclude": exclude}
        emit_html({**shown, "components": components, "target": target, **risk}, sql=sql, compare=result)
    else:
        click.echo(render_compare(result, fmt), nl=False)
    if plot:
        click.echo(f"Figures written to {plot_compare(result, plot)}.", err=True)
    if breaches:
        for b in breaches:
            click.echo(b[0].upper() + b[1:] + ".", err=True)
        sys.exit(int(ExitCode.RISK_ABOVE_THRESHOLD))
