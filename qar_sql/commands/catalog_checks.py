"""The checks of a command's inputs that need the table's columns and nothing else (the
catalog): each is a :attr:`~qar_sql.command.Command.check`, which :func:`~qar_sql.command.run_on`
runs once the session is open and before the command's first query reads a row, so a bad
option is refused in about the time it takes to connect, whatever the table's size."""

from __future__ import annotations

from typing import Any

from qar_sql.parameters.tail import TailParams


def audited(params: TailParams, relation: Any) -> None:
    """The audit's columns, p, α and π_u of ``params`` on ``relation``'s columns, with the
    audit's own sentences (:func:`~qar_sql.measures.audit.audited_columns`)."""
    from qar_sql.measures.audit import audited_columns  # (numpy-backed: not loaded by `qar --help`)

    audited_columns(relation.columns, params)
