"""One module per command, each a :class:`~qar_sql.command.Command` (its parameters, from
:mod:`qar_sql.parameters`, its ``run(session, params, progress) → result`` and its hooks), from
which :mod:`qar_sql.command` makes the click command and the Python API function: the protocol
is described there, once. The algorithm packages (``measures``, ``ranking``, ``treat``,
``comparison``, ``compliance``) stay libraries below the commands; ``report.py`` runs several
commands on one session, ``page.py`` is a command's ``--format html`` page.
"""

from types import ModuleType
from typing import TYPE_CHECKING

from qar_sql.lazy import submodules


def checks() -> ModuleType:
    """:mod:`qar_sql.commands.catalog_checks`, the commands' checks on the table's columns,
    loaded when a command runs (numpy-backed: not by `qar --help`)."""
    from qar_sql.commands import catalog_checks

    return catalog_checks


if not TYPE_CHECKING:  # to mypy, a module __getattr__ would make every name valid, typos too
    __getattr__ = submodules(__name__)  # qar_sql.<package>.<module> after a plain import qar_sql
