"""One module per command, each following one protocol (STYLE.md's last sections), so that the
command line and the Python API can be made from it:

* ``Params``: a frozen keyword-only dataclass in :mod:`qar_sql.parameters` (``NAME.py``), the
  only place its defaults and the rules between its options live — its fields are the click
  options (:mod:`qar_sql.command`), the libraries take it as their input;
* ``prepare(params)`` (where a command has inputs to read first): the files read and the plan
  made, every check that needs no query, so a bad input fails before any database is opened;
  with ``files(prepared)``, the (option, path) it writes and the (what, path) it reads, for the
  command line's guard of outputs;
* ``run(session, params, progress=None) → result``: the command's work on an open
  :class:`~qar_sql.engines.session.Session`, calling the algorithm packages (``measures``,
  ``ranking``, ``treat``, ``comparison``, ``compliance``), which stay libraries (a command
  that opens its own sources, as the scan, takes None);
* ``verdict(result, params) → int`` (where the exit code depends on the result): the exit
  code, after the lines the command adds on stderr;
* the Python API's function (``qar_sql.risk(...)``): keywords → parameters → ``prepare`` → a
  session (:func:`qar_sql.engines.source.session_of`) → ``run``;
* the result renders through one registry (:func:`qar_sql.output.render.render`); the CLI
  (:func:`qar_sql.command.cli_command`) parses options into ``Params``, calls these functions,
  emits and exits with the verdict. A command's ``--format html`` is
  :func:`qar_sql.commands.report.html` of its result.

A unit above the libraries: the report's gathering (``report.py``) runs several commands on one
session.
"""

from typing import TYPE_CHECKING

from qar_sql.lazy import submodules

if not TYPE_CHECKING:  # to mypy, a module __getattr__ would make every name valid, typos too
    __getattr__ = submodules(__name__)  # qar_sql.<package>.<module> after a plain import qar_sql
