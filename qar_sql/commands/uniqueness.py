"""``qar uniqueness``: if k people reveal these columns, the chance that every one of them is
unique, for every QI of a source and, with a what-if treatments file, of each treated release.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import click

from qar_sql import cli_options
from qar_sql.command import SOURCE_ORDER, Command, Extras, api_function, lazy
from qar_sql.commands import checks
from qar_sql.output.files import check_plot
from qar_sql.parameters.measures import UniquenessParams
from qar_sql.parameters.needs import Needs
from qar_sql.user_text import one_line

if TYPE_CHECKING:  # numpy-backed: loaded when the measures run, not when `qar --help` loads
    from qar_sql.engines.session import Session
    from qar_sql.pushdown.scan import Progress
    from qar_sql.results import UniquenessResult

NAME = "uniqueness"
Params = UniquenessParams


def run(session: Session, params: UniquenessParams, progress: Progress | None = None) -> UniquenessResult:
    """The measures of the session's relation and of each treated release of ``params.treatments``."""
    from qar_sql.treat.release_uniqueness import uniqueness_session

    return uniqueness_session(session, params, progress)


def prepare(params: UniquenessParams) -> UniquenessParams:
    """``params`` with its treatments file read (a bad file fails here, before any connection)."""
    from qar_sql.treat.release_uniqueness import with_plan

    return with_plan(params)


def files(params: UniquenessParams, where: Mapping[str, Any], out: Mapping[str, Any]) -> tuple[list, list]:
    """``--plot`` is neither the source file nor the treatments file."""
    reads = [("the source file itself", where.get("source")), ("the treatments file", params.treatments)]
    return [("--plot", out.get("plot_path"))], reads


def _parse(values: dict[str, Any], where: dict[str, Any], out: dict[str, Any]) -> dict[str, Any]:
    """-k, the old short flag of --group-size (-k is --key elsewhere), read with a note; a
    --plot that cannot be drawn refused before the work, as every command that draws."""
    old_k = out.pop("old_k")
    if old_k is not None:
        ctx = click.get_current_context()
        if ctx.get_parameter_source("group_size") is click.core.ParameterSource.COMMANDLINE:
            raise click.UsageError("-k and --group-size (-g) both give k; write -g only")
        click.echo("Warning: -k for --group-size is deprecated (-k is --key elsewhere); write -g.", err=True)
        values["group_size"] = old_k
    if out["plot_path"] is not None:
        check_plot(out["plot_path"])
    return values


def _plot(result: UniquenessResult, params: UniquenessParams, extras: Extras) -> None:
    """``--plot``: π(k) for the riskiest QIs and κ per QI, drawn once the result is printed."""
    path = extras.out.get("plot_path")
    if path:
        from qar_sql.output.render_uniqueness import plot

        drawn = plot(result, path)
        if not extras.out["quiet"]:
            click.echo(one_line(f"Plot written to {drawn}"), err=True)


def _report(result: UniquenessResult, params: UniquenessParams, extras: Extras) -> str:
    """``--format html``: the report of the measures just taken, with the options as given."""
    from qar_sql.commands.page import given, html

    names = "source table columns exclude delimiter null_tokens p group_size target domain qid"
    shown = given(extras.where, params, names)
    shown["treatments"] = click.get_current_context().params["treatments"]  # the file as named (params: its plan)
    return html(shown, sql=extras.sql, uniqueness=result)


ORDER = (
    *SOURCE_ORDER, "p", "group_size", "old_k", "target", "domain", "qid",
    "from_marginals", "monte_carlo", "seed", "treatments", "plot_path", "exposed", "exposed_qis", "top", "fmt",
    "jobs", "batch_size", "quiet",
)  # fmt: skip


COMMAND: Command[UniquenessParams, UniquenessResult] = Command(
    name=NAME,
    Params=UniquenessParams,
    run=run,
    help="""If k people reveal these columns, what is the chance that every one of them is unique?

    For every set of p columns of SOURCE (or the one --qid): the exact probability, the
    uniform birthday problem, the Kullback-Leibler approximation of Koot et al. (2011), the
    Poissonized one, κ, k50 and the records most exposed. The counts come from the same
    pushed-down scan as `qar audit`.
    """,
    doc="""For every p-subset of ``columns`` (default: all but ``exclude``), or the one QI
    ``qid``: if ``group_size`` people reveal these columns, the probability that every one of
    them is unique (Koot et al. 2011) — exact, uniform, Kullback-Leibler and Poisson — with
    κ, k50 and the largest k at which the probability still reaches ``target``; with
    ``treatments`` (a path, TOML text, dict or Plan) each treated release too, as ``result.scenarios``.
    """,
    source=("source", "table", "delimiter", "null_tokens", "threads"),
    outputs={
        # -k was --group-size's short flag here, while records, risk and report use -k for --key:
        # still accepted for a while, with a note, and hidden from --help.
        "old_k": click.option("-k", "old_k", type=int, hidden=True, help="Deprecated: -g (--group-size)."),
        "plot_path": cli_options.file_option(
            "--plot", "plot_path", help="Draw π(k) for the riskiest QIs and κ per QI to FILE.png or FILE.svg."
        ),
        "top": cli_options.top(10, "QIs listed in text and Markdown; JSON lists all."),
        "fmt": cli_options.fmt_html,
        "quiet": cli_options.quiet,
    },
    emits=("top",),
    only={
        "top": Needs(
            unused_with=("fmt=json", "fmt=csv"),
            why="it caps the lists of text, Markdown and HTML; JSON and CSV list all",
        )
    },
    order=ORDER,
    prepare=prepare,
    check=lazy(checks, "uniqueness"),
    files=files,
    parse=_parse,
    write=_plot,
    html=_report,
)

uniqueness = api_function(COMMAND)
