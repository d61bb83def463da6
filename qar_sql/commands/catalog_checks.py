"""Every command's checks of its inputs that need the table's columns and nothing else (the
catalog): a command names its function here as its :attr:`~qar_sql.command.Command.check`, and
:func:`~qar_sql.command.run_on` runs it once the session is open and before the command's
first query reads a row, so a bad option is refused in about the time it takes to connect,
whatever the table's size (``qar report``'s, :func:`qar_sql.commands.report.check`, adds its
sections' to :func:`audited`). What needs no table at all is checked earlier still, when the
parameters are made or in the command's ``prepare``; what needs the rows (a row count, a key's
duplicates, the fit) is all that comes later. Loaded when a command runs (numpy-backed)."""

from __future__ import annotations

from typing import Any

from qar_sql.measures.audit import audited_columns
from qar_sql.parameters.measures import RiskParams, UniquenessParams
from qar_sql.parameters.ranking import EliminateParams, RecordsParams
from qar_sql.parameters.tail import TailParams
from qar_sql.parameters.treat import WhatIfParams
from qar_sql.pushdown.record_keys import check_record_key
from qar_sql.treat.release_uniqueness import checked_qis
from qar_sql.treat.whatif import checked_inputs


def audited(params: TailParams, relation: Any) -> None:
    """The audit's columns, p, α and π_u of ``params`` on ``relation``'s columns, with the
    audit's own sentences (:func:`~qar_sql.measures.audit.audited_columns`)."""
    audited_columns(relation.columns, params)


def eliminate(params: EliminateParams, relation: Any) -> None:
    """The record key (:func:`~qar_sql.pushdown.record_keys.check_record_key`), then :func:`audited`."""
    check_record_key(relation, params.key)
    audited(params, relation)


def records(params: RecordsParams, relation: Any) -> None:
    """:func:`eliminate`'s, but for ``--by suda``, which ranks on every key column without a tail."""
    if params.by != "suda":
        check_record_key(relation, params.key)
        audited(params, relation)


def whatif(params: WhatIfParams, relation: Any) -> None:
    """The QID, the audit's settings and the scenarios named (:func:`~qar_sql.treat.whatif.checked_inputs`)."""
    checked_inputs(params, relation)


def uniqueness(params: UniquenessParams, relation: Any) -> None:
    """The QI columns and p (:func:`~qar_sql.treat.release_uniqueness.checked_qis`)."""
    checked_qis(params, relation)


def risk(params: RiskParams, relation: Any) -> None:
    """With ``--per-record``, the record key (:func:`~qar_sql.pushdown.record_keys.check_record_key`):
    a table without a stored row order (SQLite, PostgreSQL) needs --key."""
    if params.per_record:
        check_record_key(relation, params.key)
