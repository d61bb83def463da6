"""The parameters of ``qar history`` (:func:`qar_sql.history`, :mod:`qar_sql.commands.history`)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class HistoryParams:
    """The parameters of ``qar history``: the one place their defaults live; the click options
    and :func:`qar_sql.history` take them from here.

    ``store``: the results store (None: ``$QAR_STORE``, else ``qar_results.duckdb``); ``table``:
    only the series of this table or scan name; ``plot``: also draw the trend to this ``.png`` or
    ``.svg`` file (the command line's ``--plot``; the Python API returns the history only)."""

    store: str | None = None
    table: str | None = None
    plot: str | None = None
