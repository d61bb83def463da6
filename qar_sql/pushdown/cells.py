"""The statements of ``qar risk`` (:mod:`qar_sql.measures.classic`): the key columns coded once
(a temp table where the dialect has one, else a CTE each statement repeats; a wide table in parts,
as the scan codes it), the NULL patterns of ``--missing wildcard``, the QIs in batches, each batch
one ``risk_cells.sql`` statement whose cells come back as numpy arrays, the sensitive columns'
totals and the records' cells. The measures computed from those cells stay in ``classic.py``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from qar_sql.engines.database import Database, Relation
from qar_sql.engines.render import render
from qar_sql.engines.session import temp_name
from qar_sql.errors import ColumnError, DatabaseError, DataError
from qar_sql.pushdown import scan
from qar_sql.stats import population as popmodels


def check_weight(db: Database, relation: Relation, weight: str, type_name: str) -> None:
    if not re.search(r"int|dec|num|double|real|float|money", type_name, re.IGNORECASE):
        raise ColumnError(
            f"weight column {weight!r} has type {type_name}, not numbers; name the column that "
            "holds each record's sampling weight (people it represents)"
        )
    sql = render("risk_weight_check.sql", db.dialect, weight=weight, relation=relation.sql)
    nulls, not_finite, bad, smallest = db.query(sql)[0]
    if int(nulls):
        raise DataError(
            f"weight column {weight!r} is NULL in {int(nulls)} record(s); every record needs a positive "
            "sampling weight: fill them in, or drop --weight"
        )
    if int(not_finite):
        raise DataError(
            f"weight column {weight!r} holds {int(not_finite)} weight(s) that are not finite numbers (NaN or "
            "infinity); a sampling weight is the number of people a record stands for: fix or drop those records"
        )
    if int(bad):
        raise DataError(
            f"weight column {weight!r} has {int(bad)} weight(s) of 0 or less (the smallest is {smallest}); "
            "a sampling weight is the number of people a record stands for and must be above 0"
        )


@dataclass
class Encoded:
    """Where statements read the codes: a DuckDB temp table, or a CTE each statement repeats."""

    encode_sql: str | None
    name: str
    temp: str | None = None


def encode(db: Database, relation: Relation, columns: Sequence[str], weight: str | None, order_by) -> Encoded:
    d = db.dialect
    if d.temp_tables and len(columns) > scan.WIDE_COLUMNS:
        temp = temp_name("risk")
        for sql in wide_encode_statements(d, relation, columns, weight, order_by, temp):
            db.query(sql)
        return Encoded(None, d.quote(temp), temp)
    sql = render(
        "risk_encode.sql",
        d,
        columns=list(columns),
        relation=relation.sql,
        weight=weight,
        order_by=order_by,
        row_id=None,
    )
    if d.temp_tables:
        temp = temp_name("risk")
        db.query(render("materialize.sql", d, name=temp, encode_sql=sql, code_types=None))
        return Encoded(None, d.quote(temp), temp)
    return Encoded(sql, "encoded")


def wide_encode_statements(d, relation: Relation, columns: Sequence[str], weight, order_by, name: str) -> list[str]:
    """A wide table's codes in parts, as the scan makes them (:func:`scan.materialize_statements`):
    one statement with a dictionary join per column cost DuckDB time growing with columns ×
    columns (40 rows × 300 columns: 29 s), the parts of :data:`scan.PART_COLUMNS` columns
    (each coded from a slice of its columns) linearly. The temp table ``name`` has the columns of risk_encode.sql: c0, c1, ..., w, r."""
    rows = f"{name}_rows"
    out = [
        render(
            "risk_rows.sql",
            d,
            name=rows,
            columns=list(columns),
            relation=relation.sql,
            weight=weight,
            order_by=order_by,
        )
    ]
    coded, names = scan.slice_statements(d, rows, len(columns), name, "rid")
    out += coded
    parts = scan.Parts(tuple(names)).columns(range(len(columns)))
    out += scan.join_parts_statements(d, name, parts, rows=rows)
    out += [f"drop table {d.quote(t)}" for t in [rows, *names]]
    return out


@dataclass(frozen=True)
class NullPair:
    pa: int
    pb: int
    keys: tuple[str, ...]


@dataclass(frozen=True)
class CellQI:
    index: int
    cols: tuple[int, ...]
    codes: tuple[str, ...]
    pairs: tuple[NullPair, ...] = ()


def restrict_pattern(full_pattern: int, cols: Sequence[int]) -> int:
    """A NULL pattern over all key columns, as a pattern over the QI's columns (bit i: its i-th)."""
    return sum(1 << i for i, c in enumerate(cols) if full_pattern >> c & 1)


def null_pairs(cols: Sequence[int], full_patterns: Sequence[int]) -> tuple[NullPair, ...]:
    present = sorted({restrict_pattern(p, cols) for p in full_patterns})
    out = []
    for pa in present:
        for pb in present:
            if pa != pb:
                keys = tuple(f"c{c}" for i, c in enumerate(cols) if not (pa | pb) >> i & 1)
                out.append(NullPair(pa, pb, keys))
    return tuple(out)


def null_patterns(db: Database, enc: Encoded, n_columns: int) -> list[int]:
    sql = render(
        "risk_patterns.sql",
        db.dialect,
        codes=[f"c{i}" for i in range(n_columns)],
        encode_sql=enc.encode_sql,
        encoded=enc.name,
    )
    return [int(p) for p, _ in db.query(sql)]


#: The columns of risk_cells.sql and their types.
CELL_COLUMNS = {"kind": np.int64, "qi": np.int64, "cell": np.int64, "x": np.int64, "y": np.int64, "z": np.float64}


def fetch_cells(db: Database, sql: str) -> dict[str, np.ndarray]:
    return db.arrays(sql, CELL_COLUMNS)


@dataclass(frozen=True)
class Sensitive:
    index: int
    name: str
    code: str
    ordered: bool


def rows_and_population(
    db: Database, relation: Relation, population: int | None, sampling_fraction: float | None
) -> tuple[int, int | None]:
    """(rows, population size N or None without a population model); refuses an empty table."""
    rows = int(db.query(render("profile.sql", db.dialect, columns=[], relation=relation.sql))[0][0])
    if rows == 0:
        raise DataError(f"table {relation.display!r} is empty; measure a table that has rows")
    if population is None and sampling_fraction is None:
        return rows, None
    return rows, popmodels.population_size(rows, population=population, sampling_fraction=sampling_fraction)


def qi_batches(db: Database, specs: Sequence[CellQI], jobs: int) -> list[list[CellQI]]:
    # DuckDB reads a temp table and parallelises each statement itself: a few QIs per
    # statement. Elsewhere each statement re-derives the codes: one per connection.
    size = 8 if db.dialect.temp_tables else max(1, min(64, math.ceil(len(specs) / max(jobs, 1))))
    return [list(specs[i : i + size]) for i in range(0, len(specs), size)]


def sensitive_totals(db: Database, enc: Encoded, sens: Sequence[Sensitive]) -> dict[int, np.ndarray]:
    """Records per value code of each sensitive column (NULL left out)."""
    if not sens:
        return {}
    rows = db.query(
        render("risk_sensitive_totals.sql", db.dialect, sensitive=sens, encode_sql=enc.encode_sql, encoded=enc.name)
    )
    out: dict[int, np.ndarray] = {}
    for s in sens:
        pairs = [(int(y), float(z)) for x, y, z in rows if int(x) == s.index and int(y) >= 0]
        out[s.index] = np.zeros(max((y for y, _ in pairs), default=-1) + 1)
        for y, z in pairs:
            out[s.index][y] = z
    return out


def record_cells(db: Database, enc: Encoded, codes: Sequence[str], rows: int) -> np.ndarray:
    sql = render("risk_record_cells.sql", db.dialect, codes=list(codes), encode_sql=enc.encode_sql, encoded=enc.name)
    out = db.arrays(sql, {"r": np.int64, "cell": np.int64})
    r, cell = out["r"], out["cell"]
    if not np.array_equal(r, np.arange(rows)):
        raise DatabaseError("the records did not come back numbered 0..L-1 in source order; run the command again")
    return cell.astype(np.int64)


def cell_statements(
    db: Database,
    batches: Sequence[Sequence[CellQI]],
    enc: Encoded,
    sensitive: Sequence[Sensitive],
    weighted: bool,
    *,
    rendered: Callable[[], None] | None = None,
) -> list[str]:
    """One ``risk_cells.sql`` statement per batch of QIs; ``rendered()`` after each."""
    out = []
    for b in batches:
        out.append(
            render(
                "risk_cells.sql",
                db.dialect,
                qis=b,
                sensitive=sensitive,
                weighted=weighted,
                encode_sql=enc.encode_sql,
                encoded=enc.name,
            )
        )
        if rendered:
            rendered()
    return out
