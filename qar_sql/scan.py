"""The pushed-down scan: for every quasi-identifier, the class-size histogram, computed by the
database in a handful of batched statements. Only (qi, class size, number of classes) rows come
back — never the table.

Plan: code every QI column as a small integer (NULL is a value of its own), then one statement
per batch of QIs, each QI a ``GROUP BY`` over its coded columns whose group sizes are counted
again by size. DuckDB keeps the codes in a session temp table (in memory; the audited file or
database is never written); other engines compute them in a CTE of each statement.
"""

from __future__ import annotations

import itertools
import math
import os
from collections import defaultdict
from dataclasses import dataclass
from typing import Callable, Sequence

from .dialects import Dialect
from .errors import DatabaseError, ParameterError
from .render import render
from .results import QIStats, ScanResult
from .source import Database

Progress = Callable[[int, int], None]  # (batches done, batches total)

_temp_counter = itertools.count(1)


@dataclass(frozen=True)
class _QI:
    index: int
    codes: tuple[str, ...]

    # Record-level scans pack uniqueness flags into 62-bit words (62 keeps sums of distinct
    # powers of two inside a signed 64-bit integer on every engine).
    @property
    def word(self) -> int:
        return self.index // 62

    @property
    def bit(self) -> int:
        return 1 << (self.index % 62)


def combinations(n_columns: int, p: int) -> list[tuple[int, ...]]:
    """QIs as column-index tuples, in ``itertools.combinations`` order (the QI index)."""
    if not isinstance(p, int) or p < 1:
        raise ParameterError(f"p = {p!r} must be a whole number of at least 1; try -p 3")
    if p > n_columns:
        raise ParameterError(
            f"p = {p} is larger than the number of quasi-identifier columns ({n_columns}); "
            f"use -p {max(n_columns, 1)} or name more columns"
        )
    return list(itertools.combinations(range(n_columns), p))


def default_batch_size(dialect: Dialect, n_qi: int, jobs: int) -> int:
    if dialect.temp_tables:
        return 128
    # Each statement re-derives the codes, so use as few statements as keep every connection
    # busy (one per connection, at most 256 QIs each).
    return max(1, min(256, math.ceil(n_qi / max(jobs, 1))))


def code_type(distinct: int) -> str:
    """The narrowest integer type for codes -1 .. distinct - 1 (narrow codes scan faster)."""
    for name, top in (("tinyint", 2**7), ("smallint", 2**15), ("integer", 2**31)):
        if distinct < top:
            return name
    return "bigint"


def render_statements(
    dialect: Dialect,
    relation_sql: str,
    columns: Sequence[str],
    p: int,
    *,
    batch_size: int | None = None,
    jobs: int = 1,
    temp_name: str = "qar_codes",
    codes_table: str | None = None,
    cardinalities: Sequence[int] | None = None,
) -> tuple[list[str], list[str], list[list[tuple[int, ...]]]]:
    """(setup statements, batch statements, QIs of each batch) for this scan. With
    ``codes_table`` (DuckDB), the codes are read from that existing temp table."""
    combos = combinations(len(columns), p)
    size = batch_size or default_batch_size(dialect, len(combos), jobs)
    if size < 1:
        raise ParameterError(f"--batch-size {size} must be at least 1")
    encode_sql = render(
        "encode.sql", dialect, columns=list(columns), relation=relation_sql, order_by=None
    )
    setup: list[str] = []
    if codes_table:
        encoded, cte = dialect.quote(codes_table), None
    elif dialect.temp_tables:
        types = [code_type(k) for k in cardinalities] if cardinalities else None
        setup.append(
            render("materialize.sql", dialect, name=temp_name, encode_sql=encode_sql, code_types=types)
        )
        encoded, cte = dialect.quote(temp_name), None
    else:
        encoded, cte = "encoded", encode_sql
    batches = [combos[i : i + size] for i in range(0, len(combos), size)]
    statements = []
    start = 0
    for batch in batches:
        qis = [
            _QI(start + k, tuple(f"c{i}" for i in combo)) for k, combo in enumerate(batch)
        ]
        start += len(batch)
        statements.append(
            render("class_sizes.sql", dialect, qis=qis, encoded=encoded, encode_sql=cte)
        )
    return setup, statements, batches


def scan(
    db: Database,
    relation_sql: str,
    columns: Sequence[str],
    p: int,
    *,
    batch_size: int | None = None,
    jobs: int = 1,
    progress: Progress | None = None,
    codes_table: str | None = None,
    cardinalities: Sequence[int] | None = None,
) -> ScanResult:
    """Run the scan and assemble per-QI counts (over ``codes_table`` when given: a DuckDB
    temp table of codes the caller made and will drop)."""
    temp_name = f"qar_codes_{os.getpid()}_{next(_temp_counter)}"
    setup, statements, batches = render_statements(
        db.dialect, relation_sql, columns, p, batch_size=batch_size, jobs=jobs,
        temp_name=temp_name, codes_table=codes_table, cardinalities=cardinalities,
    )
    total = len(statements) + len(setup)
    done = 0

    def tick():
        nonlocal done
        done += 1
        if progress:
            progress(done, total)

    try:
        for sql in setup:
            db.query(sql)
            tick()
        results = db.query_many(statements, jobs=jobs, on_done=tick)
    finally:
        if setup:
            try:
                db.query(f"drop table if exists {db.dialect.quote(temp_name)}")
            except DatabaseError:
                pass
    hist: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for rows in results:
        for qi, size, classes in rows:
            hist[int(qi)].append((int(size), int(classes)))
    combos = [c for b in batches for c in b]
    return assemble(columns, p, combos, hist)


def assemble(columns, p, combos, hist) -> ScanResult:
    """Per-QI stats from histograms {qi index: [(size, classes), ...]}."""
    totals = {sum(s * n for s, n in h) for h in hist.values()}
    if len(totals) > 1:
        raise DatabaseError(
            "the QIs disagree on the number of rows (the table changed during the scan?); "
            "run the audit again on a table that is not being written"
        )
    rows = totals.pop() if totals else 0
    qis = []
    for j, combo in enumerate(combos):
        h = tuple(sorted(hist.get(j, ())))
        qis.append(
            QIStats(
                index=j,
                columns=tuple(columns[i] for i in combo),
                distinct=sum(n for _, n in h),
                singletons=sum(n for s, n in h if s == 1),
                min_class_size=h[0][0] if h else 0,
                class_sizes=h,
                rows=rows,
            )
        )
    return ScanResult(rows=rows, columns=tuple(columns), p=p, qis=tuple(qis))
