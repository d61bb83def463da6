"""The measuring commands beside the audit: ``qar risk`` (the classic disclosure-risk measures of
sdcMicro and ARX for every quasi-identifier, :func:`qar_sql.risk`) and
``qar uniqueness`` (the chance that k people are all unique, :func:`qar_sql.uniqueness`).
Parse, call, print."""

from __future__ import annotations

import os

import click

from qar_sql import params
from qar_sql.cli.emit import build, emit, session
from qar_sql.cli.guard import guard_outputs
from qar_sql.guard import guard_files
from qar_sql.output.files import check_plot, written
from qar_sql.parameters.measures import RiskParams, UniquenessParams
from qar_sql.params import default_of

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
@params.option(
    "--risk-threshold",
    of=RiskParams,
    type=float,
    envvar="QAR_RISK_THRESHOLD",
    help="A record is at risk when its re-identification probability is above this "
    f"(default {default_of(RiskParams, 'risk_threshold')}).",
)
@params.option(
    "--l",
    "l_threshold",
    of=RiskParams,
    type=int,
    help=f"Classes with distinct l-diversity below this fail (default {default_of(RiskParams, 'l_threshold')}).",
)
@params.option(
    "--t",
    "t_threshold",
    of=RiskParams,
    type=float,
    help="Classes farther than this from the table's sensitive distribution fail "
    f"(t-closeness, default {default_of(RiskParams, 't_threshold')}).",
)
@params.file_option(
    "--per-record",
    help="Write one row per record (fk, Fk, risk, l_distinct, l_entropy, suda, dis_suda) to this .csv or .parquet file.",
)
@params.key_option
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
    from qar_sql.commands.risk import run as run_risk
    from qar_sql.measures.classic import output_kind

    guard_files([("--per-record", options["per_record"])], where)
    settings = build(RiskParams, {**where, **options}, sensitive=sensitive or (), ordered=ordered or ())
    if settings.per_record is not None:
        output_kind(str(settings.per_record))
    with params.Progress("measuring", quiet) as bar:
        with session(where, all_text=options["all_text"]) as s, s.logging_sql() as sql:  # the report's SQL
            result = run_risk(s, settings, bar)

    def report() -> str:
        from qar_sql.commands.report import html as report_html

        o = options
        shown = {"p": o["p"], "weight": o["weight"], "sensitive": sensitive, "missing": o["missing"]}
        shown |= {"population": o["population"], "sampling_fraction": o["sampling_fraction"]}
        shown |= {"risk_threshold": o["risk_threshold"], "l": o["l_threshold"], "t": o["t_threshold"]}
        return report_html({**where, **shown}, sql=sql, classic=result)

    emit(result, fmt, top=top, html=report)


# --- qar uniqueness ----------------------------------------------------------------------

group_size = click.option(
    "--group-size",
    "-g",
    "group_size",
    type=int,
    envvar="QAR_GROUP_SIZE",
    help="k: how many people reveal the columns (at least 2, at most the number of rows). Required.",
)
# -k was --group-size's short flag here, while records, risk and report use -k for --key. -k
# means --key now; here it is still accepted for a while, with a note, and hidden from --help.
old_k = click.option("-k", "old_k", type=int, hidden=True, help="Deprecated: -g (--group-size).")


@click.command("uniqueness")
@params.source_options
@params.p
@group_size
@old_k
@params.option(
    "--target",
    of=UniquenessParams,
    type=float,
    envvar="QAR_TARGET",
    help="k_at is the largest k whose probability that all k are unique is at least this (strictly between 0 and 1).",
)
@params.option(
    "--domain",
    of=UniquenessParams,
    envvar="QAR_DOMAIN",
    help="M, the number of possible values of a QI: observed (values seen), product (product of its columns' value counts) or a whole number.",
)
@params.names_option(
    "--qid", help="One quasi-identifier, comma-separated columns, instead of every p-subset of --columns."
)
@click.option(
    "--from-marginals",
    is_flag=True,
    help="Also the independence model: p from the product of one-column distributions (the paper's section 4.2).",
)
@params.option(
    "--monte-carlo",
    "monte_carlo",
    of=UniquenessParams,
    type=int,
    help="Simulate this many groups of k per QI and report the share with all k unique and its 95% interval.",
)
@params.seed(None, "Random seed for --monte-carlo (the same seed gives the same draws).")
@params.file_option(
    "--treatments",
    "-T",
    help="What-if TOML file: κ and π on each treated release too (each treatment and combination).",
)
@params.file_option("--plot", "plot_path", help="Draw π(k) for the riskiest QIs and κ per QI to FILE.png or FILE.svg.")
@params.int_option(
    "--exposed",
    minimum=0,
    of=UniquenessParams,
    help="Most exposed value combinations (smallest classes) listed per QI (0: none).",
)
@params.int_option(
    "--exposed-qis",
    minimum=0,
    of=UniquenessParams,
    help="How many of the riskiest QIs get the --exposed list (one small GROUP BY each).",
)
@params.int_option("--top", minimum=1, default=10, help="QIs listed in text and Markdown; JSON lists all.")
@params.fmt_html
@params.jobs
@params.batch_size
@params.quiet
def uniqueness_cmd(
    where, p, group_size, old_k, target, domain, qid, from_marginals, monte_carlo, seed, treatments, plot_path, exposed,
    exposed_qis, top, fmt, jobs, batch_size, quiet,
):  # fmt: skip
    """If k people reveal these columns, what is the chance that every one of them is unique?

    For every set of p columns of SOURCE (or the one --qid): the exact probability, the
    uniform birthday problem, the Kullback-Leibler approximation of Koot et al. (2011), the
    Poissonized one, κ, k50 and the records most exposed. The counts come from the same
    pushed-down scan as `qar audit`.
    """
    from qar_sql.commands.uniqueness import run as run_uniqueness
    from qar_sql.commands.uniqueness import with_plan
    from qar_sql.output.render_uniqueness import plot

    if old_k is not None:
        ctx = click.get_current_context()
        if ctx.get_parameter_source("group_size") is click.core.ParameterSource.COMMANDLINE:
            raise click.UsageError("-k and --group-size (-g) both give k; write -g only")
        click.echo("Warning: -k for --group-size is deprecated (-k is --key elsewhere); write -g.", err=True)
        group_size = old_k
    if group_size is None:
        raise click.MissingParameter(ctx=click.get_current_context(), param_hint="'--group-size' / '-g'")

    if plot_path is not None:  # before the work, as every command that draws
        check_plot(plot_path)
        reads = [("the source file itself", where["source"]), ("the treatments file", treatments)]
        guard_outputs([("--plot", plot_path)], reads)
    chosen = {"qid": qid, "p": p, "group_size": group_size, "target": target, "domain": domain, "seed": seed}
    chosen |= {"from_marginals": from_marginals, "monte_carlo": monte_carlo, "treatments": treatments}
    chosen |= {"exposed": exposed, "exposed_qis": exposed_qis, "batch_size": batch_size, "jobs": jobs}
    settings = with_plan(build(UniquenessParams, {**where, **chosen}))
    with params.Progress("scanning", quiet) as bar:
        with session(where) as s, s.logging_sql() as sql:  # the report's SQL
            result = run_uniqueness(s, settings, bar)

    def report() -> str:
        from qar_sql.commands.report import html as report_html

        shown = {"p": p, "group_size": group_size, "target": target, "domain": domain, "qid": qid}
        return report_html({**where, **shown, "treatments": treatments}, sql=sql, uniqueness=result)

    emit(result, fmt, top=top, html=report)
    if plot_path:
        with written(plot_path, "--plot"):
            drawn = plot(result, plot_path)
        if not quiet:
            click.echo(f"Plot written to {drawn}", err=True)
