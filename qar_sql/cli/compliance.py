"""``qar scan`` (docs/compliance.md; ``qar migrate`` and ``qar history`` are made from their
parameters, :mod:`qar_sql.commands.migrate` and :mod:`qar_sql.commands.history`).

Each parses options, calls one library function, prints, exits; errors are turned into exit
codes by :class:`qar_sql.cli.main.QarGroup`.
"""

from __future__ import annotations

import sys

import click

from qar_sql import cli_options
from qar_sql.cli.dbt_options import dbt_given, dbt_options
from qar_sql.cli.emit import build, emit
from qar_sql.cli.guard import guard_outputs
from qar_sql.parameters.store import ScanParams
from qar_sql.precedence import from_click


@click.command("scan")
@click.argument("config", required=False, type=click.Path(dir_okay=False))
@cli_options.file_option(
    "--dbt-manifest",
    help="Audit the models of this dbt target/manifest.json whose columns have meta {qar: quasi_identifier}.",
)
@click.option(
    "--url",
    envvar="QAR_DATABASE_URL",
    help="With --dbt-manifest: the warehouse dbt built (a database URL or DuckDB file; default $QAR_DATABASE_URL).",
)
@dbt_options
@click.option(
    "--fail-above",
    type=float,
    help="fail_above for every scan, replacing the scan's own and the dbt meta's (exit 1 above it); the summary "
    "says so. From $QAR_FAIL_ABOVE or a discovered config it only sets the scans that have none.",
)
@click.option(
    "--warn-above",
    type=float,
    help="warn_above for every scan, replacing the scan's own and the dbt meta's; from $QAR_WARN_ABOVE or a "
    "discovered config it only sets the scans that have none.",
)
@click.option(
    "--min-exceedances",
    type=int,
    help="min_exceedances for every scan: a T̂ fitted to fewer exceedances of u is an error (exit 2); from "
    "$QAR_MIN_EXCEEDANCES or a discovered config it only sets the scans that have none.",
)
@cli_options.store
@click.option(
    "--no-store",
    is_flag=True,
    help="Do not record the runs, even where qar.toml has a [store] (the default: runs are recorded only "
    "with --store or a [store]).",
)
@cli_options.file_option("--junit", help="Write a JUnit XML report (one testcase per table) to this file.")
@cli_options.file_option("--markdown", help="Write a Markdown summary to this file.")
@click.option(
    "--report-dir",
    type=click.Path(file_okay=False),
    help="Write the HTML report of each scan and an index.html linking them to this folder (--format html needs it).",
)
@cli_options.fmt_html
@cli_options.jobs
@cli_options.quiet
def scan_cmd(fail_above, warn_above, min_exceedances, no_store, fmt, quiet, **options):
    """Run every scan in CONFIG (a qar.toml) and/or every tagged model of a dbt manifest.

    Exit codes: 0 all within thresholds, 1 a risk above its fail_above, 2 a bad config, table or
    column, 3 a scan failed in the database.
    """
    from qar_sql.commands import scan

    ctx = click.get_current_context()
    typed = {k for k in ("url", "store") if ctx.get_parameter_source(k) is click.core.ParameterSource.COMMANDLINE}
    # Typed on the command line, a threshold replaces every scan's own; from a QAR_ variable or
    # the config found from the working folder it only fills in (qar_sql.precedence).
    outside = (("fail_above", fail_above), ("warn_above", warn_above), ("min_exceedances", min_exceedances))
    given = {k: from_click(ctx, k, v) for k, v in outside}
    thresholds = {k: c for k, c in given.items() if c is not None}
    settings = build(
        ScanParams,
        {**options, **dbt_given()},
        record=False if no_store else None,
        thresholds=thresholds,
        given=frozenset(typed),
        format=fmt,
    )
    plan = scan.prepare(settings)
    guard_outputs(*scan.files(plan))
    with scan.Bar(quiet, fmt) as bar:
        report = scan.run(None, plan, bar)
    emit(report, fmt)  # html: the pages are in --report-dir; stdout has the text summary
    sys.exit(scan.verdict(report, settings))


def register(group: click.Group) -> None:
    group.add_command(scan_cmd)
