"""``qar risk``: the classic disclosure-risk measures (sdcMicro, ARX) of every quasi-identifier.
Parse, call :func:`qar_sql.measures.classic.risk`, print."""

from __future__ import annotations

import os

import click

from qar_sql import params
from qar_sql.cli.records import key_option

#: The variable -p read before it followed the QAR_<long flag> rule (QAR_QI_SIZE); still read.
OLD_P_ENV = "QAR_RISK_P"


def _old_p_variable(ctx: click.Context, param: click.Parameter, value):
    """-p from $QAR_RISK_P, with a deprecation note, when neither the command line nor
    $QAR_QI_SIZE gives it."""
    old = os.environ.get(OLD_P_ENV)
    if value is not None or not old:
        return value
    click.echo(f"Warning: {OLD_P_ENV} is deprecated; set QAR_QI_SIZE instead.", err=True)
    try:
        return int(old)
    except ValueError:
        raise click.BadParameter(f"${OLD_P_ENV} = {old!r} is not a whole number", ctx, param) from None


# qar risk's -p is not the QaR p (its default is every key column, one QI, not 3): its long
# flag --qi-size gives it the variable QAR_QI_SIZE by the QAR_<long flag> rule, so QAR_P and a
# config's p, meant for the audits, leave it alone. --p is still accepted.
@click.command("risk")
@params.source_options
@click.option(
    "-p",
    "--qi-size",
    "--p",
    "p",
    type=int,
    callback=_old_p_variable,
    help="Quasi-identifier size: every set of p key columns (default: all of them, one QI).",
)
@click.option(
    "--weight",
    "-w",
    envvar="QAR_WEIGHT",
    help="Column with each record's sampling weight (people it stands for): Fk, the Benedetti–Franconi risk, journalist and marketer risk.",
)
@params.names_option(
    "--sensitive",
    "-s",
    help="Sensitive column(s) for l-diversity and t-closeness, comma-separated; never a key column.",
)
@params.names_option(
    "--ordered",
    help="Sensitive column(s) whose values are ordered (ordinal text): t-closeness uses the ordered distance, "
    "in the database's sort order. Numbers, dates and times always are.",
)
@params.missing
@params.sampling_fraction
@params.population
@click.option(
    "--risk-threshold",
    type=float,
    default=0.2,
    envvar="QAR_RISK_THRESHOLD",
    help="A record is at risk when its re-identification probability is above this (default 0.2).",
)
@click.option(
    "--l", "l_threshold", type=int, default=2, help="Classes with distinct l-diversity below this fail (default 2)."
)
@click.option(
    "--t",
    "t_threshold",
    type=float,
    default=0.2,
    help="Classes farther than this from the table's sensitive distribution fail (t-closeness, default 0.2).",
)
@params.file_option(
    "--per-record",
    help="Write one row per record (fk, Fk, risk, l_distinct, l_entropy, suda, dis_suda) to this .csv or .parquet file.",
)
@key_option
@click.option(
    "--suda-max-size",
    type=int,
    help="SUDA: minimal sample uniques of up to this many columns (default: all, capped at 5,000 column sets).",
)
@params.all_text
@params.fmt_html
@params.top(10, "QIs listed in text and Markdown, most expected re-identifications first.")
@params.jobs
@params.quiet
def risk_cmd(where, sensitive, ordered, fmt, top, quiet, **options):
    """The measures sdcMicro and ARX users report, for every set of p key columns of SOURCE.

    k-anonymity counts, sdcMicro's individual risk and expected re-identifications (with
    --weight), ARX's prosecutor, journalist and marketer risk and population uniqueness models
    (with --population or --sampling-fraction), l-diversity and t-closeness (with --sensitive),
    and per record SUDA and DIS-SUDA (--per-record). See docs/risk-measures.md.
    """
    from qar_sql.cli.records import guard_files
    from qar_sql.engines.render import recording  # the SQL the HTML report shows
    from qar_sql.measures.classic import risk
    from qar_sql.output.render import render
    from qar_sql.output.risk import render_risk

    guard_files([("--per-record", options["per_record"])], where)
    # ``options`` are risk()'s other keywords by the same names: p, weight, missing, the thresholds, ...
    with params.Progress("measuring", quiet) as bar, recording() as sql:
        result = risk(**where, **options, sensitive=sensitive or (), ordered=ordered or (), progress=bar)

    def report() -> str:
        from qar_sql.cli.report import report_html

        o = options
        shown = {"p": o["p"], "weight": o["weight"], "sensitive": sensitive, "missing": o["missing"]}
        shown |= {"population": o["population"], "sampling_fraction": o["sampling_fraction"]}
        shown |= {"risk_threshold": o["risk_threshold"], "l": o["l_threshold"], "t": o["t_threshold"]}
        return report_html({**where, **shown}, sql=sql, classic=result)

    click.echo(render(result, fmt, lambda f: render_risk(result, f, top=top), html=report), nl=False)
