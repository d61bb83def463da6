"""``qar history``: the QaR risk trend per table over the runs recorded in a results store.

Without a SOURCE: the results store is opened and closed by
:func:`qar_sql.compliance.history.history`, so ``run`` gets no session.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from qar_sql import cli_options
from qar_sql.command import Command, Extras, api_function
from qar_sql.output.files import check_plot
from qar_sql.parameters.store import HistoryParams
from qar_sql.user_text import one_line

if TYPE_CHECKING:  # numpy-backed: loaded when the command runs, not when `qar --help` loads
    from qar_sql.results import History

NAME = "history"
Params = HistoryParams


def run(session: None, params: HistoryParams, progress: object = None) -> History:
    """The runs of ``params.store`` grouped into series, oldest run first (only ``params.table``'s)."""
    from qar_sql.compliance.history import history as series_of

    return series_of(params.store, table=params.table)


def _parse(values: dict[str, Any], where: dict[str, Any], out: dict[str, Any]) -> dict[str, Any]:
    if out["plot"] is not None:  # (drawable, before the store is read)
        check_plot(out["plot"])
    return values


def _files(params: HistoryParams, where: Any, out: Any) -> tuple[list, list]:
    """--plot is not the store it reads."""
    if not out.get("plot"):
        return [], []
    from qar_sql.compliance.store import resolve_store

    return [("--plot", out["plot"])], [("the results store", resolve_store(params.store or None))]


def _plot(result: History, params: HistoryParams, extras: Extras) -> None:
    path = extras.out.get("plot")
    if path:
        from qar_sql.output.render_history import plot_history

        plot_history(result, path)
        if extras.out["fmt"] != "json":
            click.echo(one_line(f"Trend plot written to {path}."), err=True)


COMMAND: Command[HistoryParams, History] = Command(
    name=NAME,
    Params=HistoryParams,
    run=run,
    help="The QaR risk trend per table over the recorded runs, with the change since the previous run.",
    doc="The runs in ``store`` grouped into series, oldest run first. ``table`` keeps the series whose "
    "table (or scan name) is exactly that.",
    source=(),
    arguments=(),
    api_arguments=("store",),
    outputs={
        "fmt": cli_options.fmt,
        "plot": cli_options.file_option(
            "--plot", help="Also write the trend plot to this .png or .svg file (needs qar-sql[plot])."
        ),
    },
    order=("store", "table", "fmt", "plot"),
    parse=_parse,
    files=_files,
    write=_plot,
)

history = api_function(COMMAND)
