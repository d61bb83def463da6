"""A session: one open source that every command of a run shares.

It grows out of the :class:`Source` of the Python API (``qar_sql.connect``): the connection, the
relation to read, its label (a URL's password masked), with the source options (``--table``,
``--delimiter``, ``--null-token``, ``--all-text``, DuckDB's threads) applied once when it was
opened (:func:`qar_sql.engines.source.open_session`). What a command needs of the data beyond
plain statements goes through it, the same way on every engine:

* :meth:`Session.coded` — the relation's columns as integer codes (``encode.sql``), in a temp
  table where the dialect has them and as a CTE elsewhere, dropped on exit; the one lifecycle of
  coding columns, which the commands of one session (the report runs several) share;
* :meth:`Session.arrays` — a statement's result as numpy arrays (DuckDB's own fetch, else a
  chunk of rows at a time: :meth:`Database.arrays`).
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Concatenate, ParamSpec, TypeVar

import numpy as np

from qar_sql.engines.database import Database, Relation
from qar_sql.engines.render import render
from qar_sql.user_text import one_line

P = ParamSpec("P")
R = TypeVar("R")

#: The counter of each kind of temp name (:func:`temp_name`).
_counters: dict[str, Iterator[int]] = {}


def temp_name(what: str) -> str:
    """The name of a temp table or view, ``qar_<what>_<pid>_<n>`` (unquoted), the n-th ``what``
    of this process: every module names its temp tables here, so that two sessions of one
    process (a notebook, the report's commands) never collide, nor two processes on one server.
    (``setdefault`` and ``next`` on a count are atomic under the GIL: the scan's threads too.)"""
    return f"qar_{what}_{os.getpid()}_{next(_counters.setdefault(what, itertools.count(1)))}"


@dataclass(frozen=True)
class Coded:
    """Where the coded columns ``c0 .. c{n-1}`` (and ``r``, the record's position, when coded
    with an order) are read from: ``encoded`` for a template's FROM clause, and ``encode_sql``,
    the statement a template puts in a CTE named ``encoded`` — None when ``encoded`` is a temp
    table already holding them."""

    encoded: str
    encode_sql: str | None
    columns: tuple[str, ...]
    #: The temp table's unquoted name, for the functions that take one (None: a CTE).
    name: str | None = None

    @property
    def materialized(self) -> bool:
        return self.encode_sql is None


@contextmanager
def coded(
    db: Database,
    relation: Relation,
    columns: Sequence[str],
    *,
    order_by: Sequence[str] | None = None,
    row_id: str | None = None,
    code_types: Sequence[str] | None = None,
    what: str = "codes",
    materialize: bool | None = None,
    statements: Callable[[str], list[str]] | None = None,
) -> Iterator[Coded]:
    """``columns`` of the relation as codes (``encode.sql``: value order, NULL = −1; with
    ``order_by``, ``r`` numbers the records in that order). Where the dialect has session temp
    tables (and ``materialize`` is not False) they are written once to one — each code in the
    narrowest type of ``code_types``, named by :func:`temp_name` — and dropped on exit, also
    after an error; elsewhere the statement travels as a CTE with every statement that reads it.

    The one lifecycle of coded columns: :meth:`Session.coded` is this function on a session; the
    library functions that are handed ``db`` and ``relation`` call it as is. ``statements(name)``,
    when given, are the statements that make the temp table ``name`` (in place of one
    ``materialize.sql``)."""
    d = db.dialect
    # order_by always given (None: no r), as encode.sql tests it
    order = None if order_by is None else list(order_by)
    kwargs: dict[str, Any] = {"columns": list(columns), "relation": relation.sql, "order_by": order}
    if row_id is not None:  # r is this expression (DuckDB's rowid), not a position in key order
        kwargs["row_id"] = row_id
    encode_sql = render("encode.sql", d, **kwargs)
    if not (d.temp_tables if materialize is None else materialize and d.temp_tables):
        yield Coded("encoded", encode_sql, tuple(columns))
        return
    name = temp_name(what)
    try:
        if statements is not None:  # the caller's way to make it (a wide table's, in parts)
            for sql in statements(name):
                db.query(sql)
        else:
            db.query(render("materialize.sql", d, name=name, encode_sql=encode_sql, code_types=code_types))
        yield Coded(d.quote(name), None, tuple(columns), name)
    finally:
        db.drop_temp_tables([name])


def on_session(fn: Callable[Concatenate[Database, Relation, P], R]) -> Callable[Concatenate[Session, P], R]:
    """``fn(db, relation, …)`` as a method of :class:`Session`, on its connection and relation,
    with ``fn``'s own signature and docstring (so the method does not write the keywords again)."""

    @functools.wraps(fn)
    def method(self: Session, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return fn(self.db, self.relation, *args, **kwargs)

    return method


class Session:
    """An open source (:func:`qar_sql.connect`): one connection and the relation to audit, reused
    by every API function and command it is passed to. Close it (or use ``with``) when done."""

    def __init__(self, db: Database, relation: Relation, label: str, where: Mapping[str, Any] | None = None):
        self.db, self.relation, self.label = db, relation, label
        #: The source options it was opened with (``source``, its secrets unmasked, ``table``,
        #: ``delimiter``, ``null_tokens``): what a command that reads a second source the same way
        #: (the report's treated release) or shows the statements of the source (its SQL) needs.
        self.where: dict[str, Any] = dict(where or {})
        #: The statements rendered while :meth:`logging_sql` was open, in order (the HTML
        #: report's "SQL that ran").
        self.sql_log: list[str] = []
        self._logging = False
        db.shared = True

    @contextmanager
    def logging_sql(self) -> Iterator[list[str]]:
        """Keep every statement rendered on this session's connection while the block runs in
        :attr:`sql_log`, in every thread (its connection renders in a copy of its dialect that
        carries the log); a block inside another, as the report's sections inside the
        command's, keeps each statement once."""
        if self._logging:
            yield self.sql_log
            return
        self._logging, plain = True, self.db.dialect
        self.db.dialect = dataclasses.replace(plain, sql_log=self.sql_log)
        try:
            yield self.sql_log
        finally:
            self.db.dialect, self._logging = plain, False

    def log_also(self, db: Database) -> None:
        """Keep the statements rendered on ``db`` (a second source the command reads beside
        this one, such as compare's treated release) in :attr:`sql_log` too, while it logs."""
        if self._logging:
            db.dialect = dataclasses.replace(db.dialect, sql_log=self.sql_log)

    @property
    def columns(self) -> tuple[str, ...]:
        return self.relation.columns

    @property
    def dialect(self):
        return self.db.dialect

    def arrays(self, sql: str, columns: Mapping[str, Any]) -> dict[str, np.ndarray]:
        """``sql``'s result as one numpy array per column (name → dtype), on every engine."""
        return self.db.arrays(sql, columns)

    #: ``columns`` of the relation as codes: :func:`coded` on this session's connection and
    #: relation (its keywords, its signature: declared once, there).
    coded = on_session(coded)

    #: Set by :meth:`close`: a command given a closed source says so (DuckDB's "Connection
    #: already closed!" was exit 3, as if the database had failed).
    closed = False

    def close(self) -> None:
        self.closed = True
        self.db.shared = False
        self.db.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        table = f" table {self.relation.display}" if self.relation.kind == "table" else ""
        return one_line(f"<qar_sql.Source {self.label}{table} ({self.db.engine_name}, {len(self.columns)} columns)>")
