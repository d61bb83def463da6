"""``qar anonymize``: the cheapest full-domain generalization (and record suppression) of a table
that meets privacy models — k-anonymity, l-diversity, t-closeness, no singletons, and the QaR
target T̂(p, α) ≤ τ — searched inside the database; the algorithm is :mod:`qar_sql.anonymization`.

The command line's run (:func:`_run`) also writes ``-o`` (the treatments file) and ``--plot``.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from qar_sql import cli_options
from qar_sql.anonymization.export import treatments_toml
from qar_sql.command import SOURCE_ORDER, TAIL_ORDER, Command, Extras, Verdict, api_function, run_on
from qar_sql.commands.search_options import SEARCH
from qar_sql.errors import ExitCode, UsageError
from qar_sql.guard import guard_outputs
from qar_sql.output.files import check_plot, save_figure, written
from qar_sql.output.render import format_option
from qar_sql.parameters.fields import options_of
from qar_sql.parameters.needs import Needs
from qar_sql.parameters.treat import RISK_OF_RELEASE, AnonymizeParams
from qar_sql.user_files import check_writable
from qar_sql.user_text import one_line

if TYPE_CHECKING:  # numpy-backed: loaded when the search runs, not when `qar --help` loads
    from qar_sql.anonymization.outcome import AnonymizeResult
    from qar_sql.engines.session import Session
    from qar_sql.pushdown.scan import Progress

NAME = "anonymize"
Params = AnonymizeParams
DOC = """The cheapest generalization of one table that meets the privacy models (docs/anonymize.md).

    ``hierarchy``: column → an ARX hierarchy CSV or a TOML file of interval levels;
    ``hierarchies``: a directory of ARX's ``<name>_hierarchy_<column>.csv`` files; ``intervals``:
    column → ``{"widths": [...], "bottom": ..., "top": ...}``. Models: ``k``, ``l`` (with
    ``sensitive``, ``l_kind``, ``c``), ``t`` (with ``sensitive``, ``t_kind``), ``no_singletons``,
    and the QaR target ``risk_below`` (T̂(p, α) of the release over ``columns``/``exclude``;
    ``risk=True`` reports T̂ without a target). ``metric`` is minimised; the result reports all.
"""

#: The key of the output options under which the command line's run leaves the SQL it ran (the
#: HTML report shows it).
SQL_LOG = "sql_log"


def run(session: Session, params: AnonymizeParams, progress: Progress | None = None) -> AnonymizeResult:
    """The least-loss node of the session's relation that meets ``params``' models and targets."""
    from qar_sql.anonymization.choose import choose

    return choose(session, params, progress)


def treatments_text(result: AnonymizeResult) -> str:
    """The chosen node as a treatments file (``-o FILE.toml``) for ``qar whatif``, ``qar compare
    --treatments`` and ``qar report --treatments``."""
    if result.chosen is None:
        raise UsageError("no node meets every target, so there is no treatment to write; relax a target")
    if not result.treatments:
        raise UsageError(
            "the chosen node is the table as it is (every level 0, nothing suppressed); there is no treatment to write"
        )
    labels = ", ".join(f"{c} = {v}" for c, v in (result.levels or {}).items())
    # (a TOML comment: the table's and columns' names on its one line, as a person reads them)
    header = (
        one_line(
            f"qar anonymize of {result.table or result.source}: levels {labels}; "
            f"{result.chosen.suppressed:,} records suppressed; k = {result.chosen.k}"
            + (f"; T̂ = {result.risk:.6g}" if result.risk is not None else "")
        )
        + "\nCheck it with: qar whatif SOURCE -T THIS_FILE"
    )
    return treatments_toml(result.qi, result.treatments, header=header)


def hierarchy_files(directory: str | None) -> list[tuple[str, Path]]:
    """The files of ``--hierarchies DIR`` the search reads (ARX's ``<name>_hierarchy_<column>.csv``),
    as (what, path) inputs of the output guard."""
    if not directory or not Path(directory).is_dir():
        return []
    return [(f"the hierarchy file {f.name}", f) for f in sorted(Path(directory).glob("*_hierarchy_*.csv"))]


def _p_given() -> bool:
    """-p typed or set by $QAR_P (not a config's default): T̂ of the release is reported."""
    source = click.get_current_context().get_parameter_source("p")
    return source in (click.core.ParameterSource.COMMANDLINE, click.core.ParameterSource.ENVIRONMENT)


def _run(where: dict[str, Any], params: AnonymizeParams, progress: Progress | None, out: dict[str, Any]) -> Any:
    """The command line's run: the outputs checked (no input overwritten), :func:`run`, then
    ``-o`` and ``--plot`` written."""
    if out["plot"] is not None:
        check_plot(out["plot"])
    writes = [(o, out[k]) for o, k in (("--output", "output"), ("--plot", "plot")) if out[k] is not None]
    if writes:
        # the hierarchy files are inputs too: -o levels.toml must not replace --hierarchy levels.toml
        reads = [
            ("the source", where["source"]),
            *((f"the hierarchy of {c or 'its columns'}", f) for c, f in params.hierarchy_items),
            *hierarchy_files(params.hierarchies),
        ]
        guard_outputs(writes, reads)
    if out["output"] is not None:  # a treatments file is TOML: -o x.json wrote TOML into it, after the search
        check_writable(out["output"], "--output", (".toml",))
    if _p_given():
        params = dataclasses.replace(params, risk=True)
    result = run_on(where, COMMAND, params, progress, log=out.setdefault(SQL_LOG, []))
    if out["output"] is not None and result.chosen is not None:  # (no node: the verdict says no file was written)
        with written(out["output"], "--output"):
            Path(out["output"]).write_text(treatments_text(result), encoding="utf-8")
    if out["plot"] is not None:
        save_figure(result.plot(title=True).figure, out["plot"])
    return result


def verdict(result: AnonymizeResult, params: AnonymizeParams) -> int:
    """Exit 1 when no node meets every target, whichever target it is (docs/limits.md#exit-codes:
    the release would not meet what was asked), with one sentence naming the targets, the best
    the search reached and what to widen; the output is printed first, as ``qar audit
    --fail-above``'s. A target impossible on its face (``--k`` above the rows) was refused before
    the search (exit 2)."""
    if result.chosen is not None:
        return 0
    from qar_sql.output.render_anonymize import models_text  # (numpy: not loaded by qar --help)

    return Verdict(
        int(ExitCode.RISK_ABOVE_THRESHOLD),
        f"No node of the {result.nodes:,} meets {models_text(result)}: {result.reached}; widen the "
        "hierarchies (more levels, up to one value) or raise --suppression-limit"
        + (" (no treatments file was written)." if _output_given() else "."),
    )


def _output_given() -> bool:
    """-o was given on this command line (the verdict says the file was not written)."""
    ctx = click.get_current_context(silent=True)
    return ctx is not None and ctx.params.get("output") is not None


#: Keywords of the API only, which the report's parameters leave out.
_NOT_SHOWN = ("intervals", "risk")


def _report(result: AnonymizeResult, params: AnonymizeParams, extras: Extras) -> str:
    """``--format html``: the report's anonymization section alone (docs/report.md)."""
    from qar_sql.commands.page import html

    shown = {**extras.where, **{f.name: getattr(params, f.name) for f, _ in options_of(AnonymizeParams)}}
    shown["hierarchy"] = [f"{c}={f}" if c else f for c, f in params.hierarchy_items]
    kept = {k: v for k, v in shown.items() if k not in _NOT_SHOWN and v not in (None, (), [])}
    return html(kept, sql=extras.out.get(SQL_LOG, ()), anonymize=result)


ORDER = (*SOURCE_ORDER, *SEARCH, *TAIL_ORDER, "theta", "output", "plot", "fmt", "jobs", "batch_size", "quiet")


COMMAND: Command[AnonymizeParams, AnonymizeResult] = Command(
    name=NAME,
    Params=AnonymizeParams,
    run=run,
    help="""Search the cheapest generalization of SOURCE that meets the privacy models: one level of
    each QI column's hierarchy (full-domain) plus suppression of at most --suppression-limit of
    the records, minimising ARX's --metric. --risk-below adds the QaR target: T̂(p, α) of the
    release at most the value (docs/anonymize.md).
    """,
    doc=DOC,
    source=("source", "table", "delimiter", "null_tokens", "threads"),
    outputs={
        "output": cli_options.file_option(
            "--output", "-o", "output", help="Write the chosen node as a treatments file (FILE.toml) for qar whatif."
        ),
        "plot": cli_options.file_option("--plot", help="Draw the frontier of loss against T̂ to FILE.png or FILE.svg."),
        "fmt": format_option(
            html=True,
            own=("text", "json", "markdown", "sql"),
            help="Output format; sql is the release as one SELECT; html the report's anonymization section alone.",
        ),
        "quiet": cli_options.quiet,
    },
    progress="nodes",
    order=ORDER,
    only={name: RISK_OF_RELEASE for name in ("columns", "exclude", "alpha", "pi_u", "pwm")}
    | {"plot": Needs(needs=("risk_below|p",), why="it draws the frontier of loss against T̂")}
    | {
        "local": Needs(
            unused_with=("fmt=sql", "fmt=csv"),
            why="the local variant is in the text, JSON, Markdown and HTML; the SELECT and the frontier are the "
            "global release's",
        )
    },
    runner=_run,
    html=_report,
    verdict=verdict,
)

anonymize = api_function(COMMAND)
