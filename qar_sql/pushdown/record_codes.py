"""Per-record codes for the record commands that work in memory: greedy elimination
(:mod:`.greedy`), record entropy (:mod:`.entropy`) and the PLS predictor (:mod:`.pls`).

These three need, for every record, which group it belongs to on every quasi-identifier (or its
column values), and that cannot be summarised in the database the way DT can. So they read the
L × N integer codes of ``encode.sql`` (codes follow the value order; NULL is −1), row r being the
record at position r in key order — small integers, never the values — and refuse tables whose
work would not fit in memory (:data:`MAX_CELLS`).
"""

from __future__ import annotations

import datetime as _dt
import decimal
from collections.abc import Sequence

import numpy as np

from qar_sql.engines.render import render
from qar_sql.engines.session import coded
from qar_sql.engines.source import Database, Relation
from qar_sql.errors import DatabaseError, UsageError

#: Largest L × C(N, p) the in-memory record commands accept (records × quasi-identifiers).
#: Greedy elimination keeps at most 16 bytes per (record, QI): up to ~3.2 GB at this size.
MAX_CELLS = 200_000_000


def count_rows(db: Database, relation: Relation) -> int:
    return int(db.query(render("profile.sql", db.dialect, columns=[], relation=relation.sql))[0][0])


def check_size(n_rows: int, per_record: int, what: str, unit: str = "quasi-identifiers") -> None:
    """UsageError when L × ``per_record`` (QIs, or columns) is above :data:`MAX_CELLS`."""
    cells = n_rows * per_record
    if cells > MAX_CELLS:
        raise UsageError(
            f"{what} works in memory on every (record, {unit[:-1]}) pair and this table has "
            f"{n_rows:,} records × {per_record:,} {unit} = {cells:,} pairs, above the limit of "
            f"{MAX_CELLS:,}; use fewer columns (--columns), a smaller -p, or a sample of the table"
        )


def _fetch_matrix(db: Database, sql: str, prefix: str, n_columns: int, dtype) -> np.ndarray:
    """Rows (r, {prefix}0..{prefix}n−1), r = 0..L−1 in order, as an L × n array (NULL → NaN).

    Without building L × n Python objects at once (:meth:`Database.arrays`: DuckDB hands back
    numpy arrays, other engines a chunk of rows at a time)."""
    names = [f"{prefix}{k}" for k in range(n_columns)]
    arrays = db.arrays(sql, {"r": np.int64, **dict.fromkeys(names, dtype)})
    r = arrays["r"]
    out = np.empty((r.size, n_columns), dtype=dtype)
    for k, name in enumerate(names):
        out[:, k] = arrays.pop(name)  # each column freed once copied
    # Every row index relies on r numbering the records 0..L−1 in order: check, do not trust.
    if not np.array_equal(r, np.arange(r.size)):
        raise DatabaseError("the records did not come back numbered 0..L-1 in key order; run the command again")
    return out


def fetch_codes(db: Database, relation: Relation, columns: Sequence[str], order_by: Sequence[str]) -> np.ndarray:
    """L × N int64 codes of ``columns`` (value order, NULL = −1); row r = record r in key order."""
    # one statement reads the codes: they travel as a CTE (record_codes.sql names it)
    with coded(db, relation, columns, order_by=list(order_by), materialize=False) as codes:
        sql = render("record_codes.sql", db.dialect, encode_sql=codes.encode_sql, n_columns=len(columns))
        return _fetch_matrix(db, sql, "c", len(columns), np.int64)


def fetch_values(db: Database, relation: Relation, columns: Sequence[str], order_by: Sequence[str]) -> np.ndarray:
    """L × len(columns) float values (NaN for NULL) of numeric columns, in key order."""
    sql = render("record_values.sql", db.dialect, columns=list(columns), relation=relation.sql, order_by=list(order_by))
    return _fetch_matrix(db, sql, "v", len(columns), float)


def column_kinds(db: Database, relation: Relation, columns: Sequence[str]) -> list[str]:
    """Per column: "numeric" (numbers), "ordinal" (dates, times, booleans), "nominal" (text and
    anything else without a natural order) or "empty" (entirely NULL), from one value each."""
    if not columns:
        return []
    row = db.query(render("column_samples.sql", db.dialect, columns=list(columns), relation=relation.sql))[0]
    return [kind_of(v) for v in row]


def kind_of(value) -> str:
    if value is None:
        return "empty"
    if isinstance(value, bool):
        return "ordinal"
    if isinstance(value, (int, float, decimal.Decimal, np.integer, np.floating)):
        return "numeric"
    if isinstance(value, (_dt.date, _dt.datetime, _dt.time, _dt.timedelta)):
        return "ordinal"
    return "nominal"


def value_codes(db: Database, relation: Relation, column: str) -> list[tuple[object, int]]:
    """(value, code) of every non-NULL value of ``column``, codes as in :func:`fetch_codes`."""
    return [
        (v, int(c)) for v, c in db.query(render("value_codes.sql", db.dialect, column=column, relation=relation.sql))
    ]
