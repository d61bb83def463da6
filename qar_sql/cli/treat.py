"""``qar discover`` and ``qar whatif``: options and ``emit(run(…))`` (:mod:`qar_sql.cli.emit`)."""

from __future__ import annotations

import click

from qar_sql import params
from qar_sql.cli.emit import build, emit, session
from qar_sql.engines.dialects import DIALECTS
from qar_sql.engines.render import recording
from qar_sql.parameters.measures import DiscoverParams
from qar_sql.parameters.treat import WhatIfParams


@click.command("discover")
@params.source_options
@params.int_option(
    "--max-size",
    "-s",
    minimum=1,
    of=DiscoverParams,
    envvar="QAR_MAX_SIZE",
    help="Largest combination of columns to count.",
)
@click.option(
    "--drop-null",
    is_flag=True,
    envvar="QAR_DROP_NULL",
    help="Leave rows with NULL in a combination's columns out of that combination (how Pastore et al. count); by default NULL is a value of its own.",
)
@params.top(20, "Combinations listed in text and Markdown (0: all); JSON lists all.", minimum=0)
@params.fmt
@params.jobs
@params.batch_size
@params.quiet
def discover_cmd(where, max_size, drop_null, top, fmt, jobs, batch_size, quiet):
    """Find the quasi-identifiers of SOURCE: singletons, %S, distinct values and smallest
    class of every combination of 1 … --max-size columns; identifiers (every row unique) and
    the best QID (the smallest combination with the most singletons).

    Supersets of an identifier are identifiers too and are not scanned.
    """
    from qar_sql.commands.discover import run as run_discover

    chosen = {"max_size": max_size, "drop_null": drop_null, "batch_size": batch_size, "jobs": jobs}
    settings = build(DiscoverParams, {**where, **chosen})
    with params.Progress("combinations", quiet) as bar, session(where) as s:
        result = run_discover(s, settings, bar)
    emit(result, fmt, top=top or None)


@click.command("whatif")
@params.source_options
@params.file_option(
    "--treatments",
    "-T",
    "treatments",
    required=True,
    envvar="QAR_TREATMENTS",
    help="TOML file of treatments (schema: docs/treatments.md).",
)
@params.names_option(
    "--qid",
    help="Quasi-identifier to count singletons on: columns, comma-separated, or a name from the file's [qis] (default: the file's qid).",
)
@click.option(
    "--combine",
    multiple=True,
    help="Also try these treatments together, comma-separated, in order (repeatable); adds to the file's combinations.",
)
@click.option("--only", multiple=True, help="Only this treatment or combination (names joined by '+'); repeatable.")
@click.option(
    "--drop-null",
    is_flag=True,
    envvar="QAR_DROP_NULL",
    help="Drop rows with NULL in the QID first (how Pastore et al. count).",
)
@click.option("--no-risk", is_flag=True, help="Skip T̂ before and after (one full audit per scenario).")
@click.option(
    "--key",
    envvar="QAR_KEY",
    help="Column that identifies rows, for the perturbative treatments' draws (default: the file's key; "
    "without one, each row's rank over all columns).",
)
@click.option("--no-loss", is_flag=True, help="Skip the information-loss report (IL1s, correlations, utility).")
@params.risk_options
@params.fmt_html
@click.option("--emit-sql", is_flag=True, help="Print CREATE VIEW for the treated release instead of measuring it.")
@params.names_option(
    "--apply",
    "apply_",
    help="With --emit-sql: treatments of the release, in order (default: the file's release, else all).",
)
@click.option(
    "--dialect",
    "-d",
    type=click.Choice(sorted(DIALECTS)),
    help="With --emit-sql: SQL dialect of the view (default: the source's).",
)
@click.option("--view", help="With --emit-sql: name of the view (default: TABLE_treated).")
@params.jobs
@params.batch_size
@params.quiet
def whatif_cmd(
    where,
    treatments,
    qid,
    combine,
    only,
    drop_null,
    no_risk,
    key,
    no_loss,
    risk,
    fmt,
    emit_sql,
    apply_,
    dialect,
    view,
    jobs,
    batch_size,
    quiet,
):
    """Try the treatments in a TOML file on SOURCE without changing it: for each treatment
    and combination, singletons (#S), %S, modified rows (MR), distinct values (DV) on the
    QID, and the risk T̂(p, α) before and after over the audit columns (--columns/--exclude).
    """
    from qar_sql.commands import whatif as command
    from qar_sql.treat.whatif import emit_sql as run_emit

    # What the view and the measurements are both built from.
    plan = {"treatments": treatments, "qid": qid, "drop_null": drop_null, "key": key}
    if emit_sql:
        view_of = {"apply": apply_, "view": view, "dialect": dialect}
        sql = run_emit(
            where["source"],
            table=where["table"],
            delimiter=where["delimiter"],
            null_tokens=where["null_tokens"],
            **plan,
            **view_of,
        )
        click.echo(sql, nl=False)
        return
    for opt, value in (("--apply", apply_), ("--dialect", dialect), ("--view", view)):
        if value:
            raise click.UsageError(f"{opt} goes with --emit-sql; add --emit-sql or leave {opt} out")
    combos = [tuple(x.strip() for x in c.split(",") if x.strip()) for c in combine]
    scenarios = {"combine": combos, "only": only, "risk": not no_risk, "loss": not no_loss}
    settings = command.with_plan(
        build(WhatIfParams, {**where, **risk, **plan, **scenarios}, batch_size=batch_size, jobs=jobs)
    )
    # recording(): the SQL the HTML report shows
    with params.Progress("scenarios", quiet) as bar, recording() as sql:
        with session(where) as s:
            result = command.run(s, settings, bar)

    def report() -> str:
        from qar_sql.commands.report import html as report_html

        shown = {"treatments": treatments, "qid": qid, "combine": combine, "only": only, "drop_null": drop_null}
        return report_html({**where, **risk, **shown, "key": key}, sql=sql, whatif=result)

    emit(result, fmt, html=report)
