"""``qar eliminate``: backward elimination, the risk after removing the top records of each ranking."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from qar_sql import cli_options
from qar_sql.command import SOURCE_ORDER, TAIL_ORDER, Command, api_function, lazy, run_on
from qar_sql.commands import checks
from qar_sql.guard import guard_files
from qar_sql.output.files import check_plot
from qar_sql.parameters.ranking import EliminateParams

if TYPE_CHECKING:  # numpy-backed: loaded when the command runs, not when `qar --help` loads
    from qar_sql.engines.session import Session
    from qar_sql.pushdown.scan import Progress
    from qar_sql.ranking.eliminate import Elimination

NAME = "eliminate"
Params = EliminateParams


def prepare(params: EliminateParams) -> EliminateParams:
    """A plot that could not be drawn is refused before any work."""
    if params.plot:
        check_plot(str(params.plot))
    return params


def run(session: Session, params: EliminateParams, progress: Progress | None = None) -> Elimination:
    """The elimination curves of the session's relation for every ranking of ``params.by``, drawn
    to ``params.plot`` when given."""
    from qar_sql.commands.record_runs import curves

    return curves(session, params, progress)


def _run(where: dict[str, Any], params: EliminateParams, progress: Progress | None, out: dict[str, Any]) -> Elimination:
    """The command line's run: :func:`run`, once the plot is known not to overwrite an input."""
    if params.plot:
        guard_files([("--plot", params.plot)], where)
    return run_on(where, COMMAND, params, progress)


ORDER = (
    *SOURCE_ORDER, *TAIL_ORDER, "key", "by", "step", "max_removed", "greedy_steps", "seed", "orders", "plot", "fmt",
    "jobs", "quiet",
)  # fmt: skip


COMMAND: Command[EliminateParams, Elimination] = Command(
    name=NAME,
    Params=EliminateParams,
    run=run,
    help="Backward elimination: the risk after removing the top records of each ranking.",
    doc="Block elimination curves for each ranking in ``by`` (plus greedy when asked).",
    source=("source", "table", "delimiter", "null_tokens", "threads"),
    outputs={"fmt": cli_options.fmt, "quiet": cli_options.quiet},
    order=ORDER,
    prepare=prepare,
    check=lazy(checks, "eliminate"),
    runner=_run,
)

eliminate = api_function(COMMAND)
