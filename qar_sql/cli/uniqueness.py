"""``qar uniqueness``: parse options, call :func:`qar_sql.uniqueness`, print."""

from __future__ import annotations

import click

from qar_sql import params
from qar_sql.output.render import render

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
target = click.option(
    "--target",
    type=float,
    default=0.5,
    envvar="QAR_TARGET",
    help="k_at is the largest k whose probability that all k are unique is at least this (strictly between 0 and 1).",
)
domain = click.option(
    "--domain",
    default="observed",
    envvar="QAR_DOMAIN",
    help="M, the number of possible values of a QI: observed (values seen), product (product of its columns' value counts) or a whole number.",
)


@click.command("uniqueness")
@params.source_options
@params.p
@group_size
@old_k
@target
@domain
@params.names_option(
    "--qid", help="One quasi-identifier, comma-separated columns, instead of every p-subset of --columns."
)
@click.option(
    "--from-marginals",
    is_flag=True,
    help="Also the independence model: p from the product of one-column distributions (the paper's section 4.2).",
)
@click.option(
    "--monte-carlo",
    "monte_carlo",
    type=int,
    default=0,
    help="Simulate this many groups of k per QI and report the share with all k unique and its 95% interval.",
)
@click.option(
    "--seed", type=int, default=None, help="Random seed for --monte-carlo (the same seed gives the same draws)."
)
@params.file_option(
    "--treatments",
    "-T",
    help="What-if TOML file: κ and π on each treated release too (each treatment and combination).",
)
@params.file_option("--plot", "plot_path", help="Draw π(k) for the riskiest QIs and κ per QI to FILE.png or FILE.svg.")
@params.int_option(
    "--exposed",
    minimum=0,
    default=5,
    help="Most exposed value combinations (smallest classes) listed per QI (0: none).",
)
@params.int_option(
    "--exposed-qis",
    minimum=0,
    default=1,
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
    from qar_sql.cli.guard import guard_outputs
    from qar_sql.output.files import check_plot, written
    from qar_sql.output.uniqueness import plot, render_uniqueness
    from qar_sql.treat.uniqueness import uniqueness

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
    from qar_sql.engines.render import recording  # the SQL the HTML report shows

    with params.Progress("scanning", quiet) as bar, recording() as sql:
        result = uniqueness(
            **where, qid=qid, p=p, group_size=group_size, target=target, domain=domain,
            from_marginals=from_marginals, monte_carlo=monte_carlo, seed=seed, treatments=treatments,
            exposed=exposed, exposed_qis=exposed_qis, batch_size=batch_size, jobs=jobs, progress=bar,
        )  # fmt: skip

    def report() -> str:
        from qar_sql.cli.report import report_html

        shown = {"p": p, "group_size": group_size, "target": target, "domain": domain, "qid": qid}
        return report_html({**where, **shown, "treatments": treatments}, sql=sql, uniqueness=result)

    click.echo(render(result, fmt, lambda f: render_uniqueness(result, f, top=top), html=report), nl=False)
    if plot_path:
        with written(plot_path, "--plot"):
            drawn = plot(result, plot_path)
        if not quiet:
            click.echo(f"Plot written to {drawn}", err=True)
