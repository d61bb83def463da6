"""One module per command, each of the same shape (STYLE.md's last section):

* its parameters: a frozen keyword-only dataclass in :mod:`qar_sql.parameters` (``NAME.py``), the
  only place its defaults and the rules between its options live — the click options take their
  defaults from it (:func:`qar_sql.params.default_of`), the libraries take it as their input;
* ``run(session, params, progress=None) → result``: the command's work on an open
  :class:`~qar_sql.engines.session.Session`, calling the algorithm packages (``measures``,
  ``ranking``, ``treat``, ``comparison``, ``compliance``), which stay libraries;
* the Python API's function (``qar_sql.risk(...)``): keywords → parameters → a session
  (:func:`qar_sql.engines.source.session_of`) → ``run``;
* the result renders through one registry (:func:`qar_sql.output.render.render`); the CLI
  (``qar_sql/cli``) is options and ``emit(run(…))`` (:mod:`qar_sql.cli.emit`).

A unit above the libraries: the report's gathering (``report.py``) runs several commands on one
session.
"""

from typing import TYPE_CHECKING

from qar_sql.lazy import submodules

if not TYPE_CHECKING:  # to mypy, a module __getattr__ would make every name valid, typos too
    __getattr__ = submodules(__name__)  # qar_sql.<package>.<module> after a plain import qar_sql
