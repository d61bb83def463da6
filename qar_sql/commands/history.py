"""``qar history``: the QaR risk trend per table over the runs recorded in a results store.

The shape of every command (``qar_sql/commands/__init__.py``); its session is the results store,
which :func:`qar_sql.compliance.history.history` opens and closes itself, so ``run`` takes the
parameters alone. The trend plot (``--plot``) is output: :func:`qar_sql.output.render_history.plot_history`.
"""

from __future__ import annotations

from qar_sql.compliance.history import history as series_of
from qar_sql.parameters.store import HistoryParams
from qar_sql.results import History

NAME = "history"
Params = HistoryParams


def run(params: HistoryParams, progress: object = None) -> History:
    """The runs of ``params.store`` grouped into series, oldest run first (only ``params.table``'s)."""
    return series_of(params.store, table=params.table)


def history(store: str | None = None, *, table: str | None = None) -> History:
    """The runs in ``store`` grouped into series, oldest run first. ``table`` keeps the series
    whose table (or scan name) is exactly that."""
    return run(HistoryParams(store=store, table=table))
