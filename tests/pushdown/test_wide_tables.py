"""Wide tables (issue 16, item 12): hundreds of columns cost time in proportion to their number.

One statement with a LEFT JOIN (DuckDB's codes) or a distinct count (the profile) per column
cost DuckDB time growing with columns × columns, even on 500 rows: 300 columns with p = 1 took
22 s against 0.8 s for 50. The codes of a wide table are now made in parts of 16 columns and
the profile is counted 32 columns at a time; the numbers must not change (oracle) and the time
must grow linearly.
"""

from __future__ import annotations

import duckdb
import pytest
from conftest import quote

import qar_sql
from qar_sql.engines.dialects import get_dialect
from qar_sql.pushdown import scan
from tests.measures.test_audit import HOSTILE_COLUMNS, as_columns, check_against_oracle, random_table


def _names(n: int) -> list[str]:
    # hostile names repeated with a suffix, so that quoting matters in every part
    return [f"{HOSTILE_COLUMNS[i % len(HOSTILE_COLUMNS)]} {i}" for i in range(n)]


@pytest.mark.parametrize("parts", [False, True])
@pytest.mark.parametrize("p", [1, 2])
def test_wide_table_equals_oracle(engine, p, parts, monkeypatch):
    """More than WIDE_COLUMNS columns (several parts, a last part shorter than the others) with
    NULLs and hostile names: every QI equals the Counter oracle on DuckDB and PostgreSQL."""
    n = scan.WIDE_COLUMNS + scan.PART_COLUMNS + 3
    assert n > scan.WIDE_COLUMNS and n > scan.PROFILE_COLUMNS
    if parts:  # the codes kept in parts, each batch joining those it reads, sliced from blocks
        monkeypatch.setattr(scan, "PARTS_SCAN_COLUMNS", scan.WIDE_COLUMNS)
        monkeypatch.setattr(scan, "SLICE_BLOCK_COLUMNS", 2 * scan.PART_COLUMNS)
    names, rows, types = random_table(7, 40, names=_names(n))
    source, table = engine.load("wide t", as_columns(names, rows), types)
    result = qar_sql.audit(source, table=table, p=p, pi_u=0.1)
    check_against_oracle(result, names, rows, p, pi_u=0.1)


def test_three_hundred_columns_equal_a_count_in_python(engine):
    """300 columns (19 parts, three batch statements at p = 1) with NULLs and hostile names: each
    column's classes, singletons and class sizes equal a Counter over the rows."""
    from collections import Counter

    n = 300
    names, rows, types = random_table(11, 30, names=_names(n))
    source, table = engine.load("wide 300", as_columns(names, rows), types)
    result = qar_sql.audit(source, table=table, p=1, pi_u=0.1)
    assert [q.columns for q in result.qis] == [(c,) for c in names]
    for k, q in enumerate(result.qis):
        sizes = Counter(Counter(r[k] for r in rows).values())
        assert q.class_sizes == tuple(sorted(sizes.items())), names[k]
        assert (q.distinct, q.singletons) == (sum(sizes.values()), sizes.get(1, 0))
    check_against_oracle(result, names, rows, 1, pi_u=0.1)


@pytest.mark.parametrize("p", [1, 2])
def test_wide_scan_statements_read_only_their_columns(p, monkeypatch):
    """The time of a wide scan grew with columns x columns: every batch statement read one codes
    table of all the columns (DuckDB's time for each reference grows with the table's width),
    and every part was coded from the copy of all the columns. Now the codes stay in parts and
    each batch statement first joins the columns its QIs read: no statement but the copy and
    the slicing names a table of more than PART_COLUMNS columns, and each batch's codes are
    exactly its QIs' columns."""
    import re

    d = get_dialect("duckdb")
    n = 300 if p == 1 else 60
    monkeypatch.setattr(scan, "PARTS_SCAN_COLUMNS", 256 if p == 1 else 48)
    setup, statements, batches, temps = scan.render_statements(d, quote("t"), _names(n), p, temp_name="codes")
    assert len(statements) > 2
    copy, *rest = setup
    assert all(d.quote(name) in copy for name in _names(n))
    blocks = n > scan.SLICE_BLOCK_COLUMNS  # slices cut from blocks of the copy, not from the copy
    for sql in rest:  # each block or slice names its own columns of the copy; each part reads its slice
        made = "codes_block" if 'create temp table "codes_block' in sql else "codes_slice"
        limit = scan.SLICE_BLOCK_COLUMNS if made == "codes_block" else scan.PART_COLUMNS
        assert len(set(re.findall(r"\bv\d+\b", sql))) <= limit, sql[:300]
        if 'from "codes_rows"' in sql:
            assert f'create temp table "{"codes_block" if blocks else "codes_slice"}' in sql, sql[:300]
    assert not any('"codes"' in sql for sql in setup + statements)  # no codes table of every column
    for sql, qis in zip(statements, batches):
        (create,) = [s for s in sql.split(";") if 'create temp table "codes_batch' in s]
        made = [int(i) for i in re.findall(r" as c(\d+)\b", create)]
        assert sorted(made) == sorted({i for qi in qis for i in qi}), create[:300]
    assert {f"codes_part{k}" for k in range(-(-n // scan.PART_COLUMNS))} <= set(temps)
    assert {f"codes_batch{b}" for b in range(len(statements))} <= set(temps)


def test_wide_codes_are_the_narrow_codes(duck):
    """The codes table made in parts holds, row for row, the codes of the one-statement path."""
    n = scan.WIDE_COLUMNS + 5
    names, rows, types = random_table(8, 30, names=_names(n))
    source, table = duck.load("t", as_columns(names, rows), types)
    d = get_dialect("duckdb")
    con = duckdb.connect(source, read_only=True)
    try:
        parts = scan.materialize_statements(d, quote(table), names, "wide_codes")
        assert len(parts) > 3  # really in parts
        for sql in parts:
            con.execute(sql)
        old = scan.WIDE_COLUMNS
        scan.WIDE_COLUMNS = 10**6
        try:
            (one,) = scan.materialize_statements(d, quote(table), names, "one_codes")
        finally:
            scan.WIDE_COLUMNS = old
        con.execute(one)
        cols = ", ".join(f"c{i}" for i in range(n))
        wide = sorted(con.execute(f"select {cols} from wide_codes").fetchall())
        narrow = sorted(con.execute(f"select {cols} from one_codes").fetchall())
        assert wide == narrow and len(wide) == 30
        # the helper tables are gone
        left = {r[0] for r in con.execute("select table_name from duckdb_tables() where temporary").fetchall()}
        assert left == {"wide_codes", "one_codes"}
    finally:
        con.close()


@pytest.mark.parametrize("make", ["codes", "profile"])
def test_statements_stay_bounded_as_columns_grow(make):
    """The quadratic time came from one statement whose size grew with columns x columns (each
    join carrying every column coded so far): in parts, the SQL grows linearly (three times the
    columns give about three times the SQL, where one statement gave nine). The time itself is
    measured by bench/bench_wide.py, not here: a timed test fails on a loaded machine."""
    d = get_dialect("duckdb")

    def statements(n: int) -> list[str]:
        if make == "codes":
            return scan.materialize_statements(d, quote("t"), _names(n), "codes")
        return scan.profile_statements(d, quote("t"), _names(n))

    small, large = statements(100), statements(300)
    assert len(large) > len(small) > 1
    assert sum(map(len, large)) < 3.3 * sum(map(len, small))


@pytest.mark.parametrize("p", [1, None])
def test_wide_risk_codes_in_parts_and_equals_oracle(duck, tmp_path, p, monkeypatch):
    """qar risk on a wide table (issue 31, item 10): its codes were made by one statement with a
    dictionary join per column (40 rows x 300 columns: 29 s; bench/bench_wide.py --command risk).
    Now in parts, as the scan's: no statement joins more than PART_COLUMNS dictionaries, every
    measure (weighted) equals the one-statement path, the classes and sample uniques a Counter
    oracle, and the per-record file in key order is the same file."""
    from collections import Counter

    n = scan.WIDE_COLUMNS + scan.PART_COLUMNS + 3
    monkeypatch.setattr(scan, "SLICE_BLOCK_COLUMNS", 2 * scan.PART_COLUMNS)  # slices cut from blocks
    names, rows, types = random_table(9, 40, names=_names(n))
    data = as_columns(names, rows) | {"id": list(range(40, 0, -1)), "w eight": [1.0 + i % 3 for i in range(40)]}
    source, table = duck.load("wide t", data, types | {"id": "bigint", "w eight": "double precision"})

    def risk(out, src=None):
        where = {"table": table} if src is None else {}
        return qar_sql.risk(src or source, **where, exclude=["id"], p=p, weight="w eight", key=["id"], per_record=out)

    with qar_sql.connect(source, table=table) as session, session.logging_sql() as sql:
        parts = risk(tmp_path / "parts.csv", session)
    joins = [s.count("left join") for s in sql]
    assert max(joins) <= scan.PART_COLUMNS and sum(joins) >= n, joins
    old = scan.WIDE_COLUMNS
    scan.WIDE_COLUMNS = 10**6
    try:
        one = risk(tmp_path / "one.csv")
    finally:
        scan.WIDE_COLUMNS = old
    assert parts.qis == one.qis and len(parts.qis) == (n if p == 1 else 1)
    assert (tmp_path / "parts.csv").read_text() == (tmp_path / "one.csv").read_text()
    for q in parts.qis:
        cols = [names.index(c) for c in q.columns]
        classes = Counter(tuple(r[i] for i in cols) for r in rows)
        assert (q.classes, q.sample_uniques) == (len(classes), sum(1 for c in classes.values() if c == 1))


def test_pruned_wide_scan_equals_the_full_scan(engine, monkeypatch):
    """The pruned scan of a wide table joins its parts into one codes table in a tree of
    statements (here two tables a statement); the full scan keeps the parts, each batch joining
    the columns it reads: T̂ and every grouped QI equal the full scan's, and the full scan the
    Counter oracle."""
    monkeypatch.setattr(scan, "PARTS_SCAN_COLUMNS", scan.WIDE_COLUMNS)
    monkeypatch.setattr(scan, "JOIN_PARTS", 2)
    n = scan.WIDE_COLUMNS + scan.PART_COLUMNS + 3
    names, rows, types = random_table(12, 40, names=_names(n))
    source, table = engine.load("wide pruned", as_columns(names, rows), types)
    full = qar_sql.audit(source, table=table, p=2, pi_u=0.1, prune="off")
    check_against_oracle(full, names, rows, 2, pi_u=0.1)
    pruned = qar_sql.audit(source, table=table, p=2, pi_u=0.1, prune="auto")
    assert pruned.risk == full.risk and pruned.fit == full.fit
    grouped = [q for q in pruned.qis if q.bounds is None]
    assert grouped and len(grouped) < len(full.qis)
    for q in grouped:
        assert q.class_sizes == full.qis[q.index].class_sizes, q.columns


@pytest.mark.parametrize("n", [300, 2_000])
def test_no_statement_joins_more_than_a_few_tables(n):
    """A join of k tables costs DuckDB time growing faster than k (125 parts of 2,000 columns in
    one statement: 8.1 s against 1.2 s for 63), so the parts are joined in a tree: every
    statement of the codes of all columns (pruned scan, qar risk) and of each batch joins at
    most JOIN_PARTS tables, and the SQL grows linearly with the columns."""
    from qar_sql.engines.database import Relation
    from qar_sql.pushdown import cells

    d = get_dialect("duckdb")
    names = _names(n)
    codes = scan.materialize_statements(d, quote("t"), names, "codes")
    risk = cells.wide_encode_statements(d, Relation(quote("t"), "t", tuple(names), "table"), names, None, None, "risk")
    _, batches, _, _ = scan.render_statements(d, quote("t"), names, 1, temp_name="codes", batch_size=n)
    for sql in codes + risk + [s for batch in batches for s in batch.split(";\n")]:
        assert sql.count("\njoin ") + 1 <= scan.JOIN_PARTS, sql[:300]
    # the copy of every column is read by its blocks only (each read costs time with its width)
    reads = [s for s in codes if 'from "codes_rows"' in s]
    assert len(reads) == -(-n // scan.SLICE_BLOCK_COLUMNS), len(reads)
    if n == 2_000:  # 6.7 times the columns: about 6.7 times the SQL (one statement: 17 and more)
        small = scan.materialize_statements(d, quote("t"), _names(300), "codes")
        assert sum(map(len, codes)) < 7.5 * sum(map(len, small))


def test_risk_cells_of_one_qi_of_over_a_thousand_columns():
    """qar risk on one QI of 1,100 columns: its cells' NULL pattern (one term per column, a sum
    nested 1,100 deep) made DuckDB refuse the statement (max expression depth 1000). Without
    --missing wildcard no pattern is read: the statement runs, and its cells and their records
    equal a Counter over the codes."""
    from collections import Counter
    from types import SimpleNamespace

    from qar_sql.pushdown import cells

    n = 1_100
    rows = [tuple((r * (k + 3)) % (2 + k % 5) if (r + k) % 7 else -1 for k in range(n)) for r in range(6)]
    con = duckdb.connect()
    try:
        codes = ", ".join(f"c{k}" for k in range(n))
        con.execute(f"create table enc as select * from (values {', '.join(map(str, rows))}) as v({codes})")
        qi = cells.CellQI(0, tuple(range(n)), tuple(f"c{k}" for k in range(n)))
        db = SimpleNamespace(dialect=get_dialect("duckdb"))
        (sql,) = cells.cell_statements(db, [[qi]], cells.Encoded(None, "enc"), [], False)
        got = con.execute(sql).fetchall()
    finally:
        con.close()
    sizes = sorted(Counter(rows).values())
    assert sorted(x for kind, _, _, x, _, _ in got if kind == 0) == sizes


def test_unpivot_profile_equals_the_distinct_counts(duck):
    """A wide table on DuckDB is profiled by UNPIVOT, a statement per column type (statements of
    32 COUNT(DISTINCT)s each cost time with the table's width): text, bigint, double and boolean
    columns with NULLs and hostile names, a column of NULLs and a constant one give the same row
    as the COUNT(DISTINCT) statements, in the columns' order: one UNPIVOT statement per type."""
    from qar_sql.engines.session import Session
    from qar_sql.engines.source import open_source

    n = scan.WIDE_COLUMNS + scan.PART_COLUMNS + 3
    names, rows, types = random_table(13, 30, names=_names(n))
    data = as_columns(names, rows) | {"all null": [None] * 30, "one value": ["x"] * 30}
    types |= {"all null": "bigint", "one value": "text"}
    source, table = duck.load("wide profile", data, types)
    columns = list(data)
    db, relation = open_source(source, table=table)
    try:
        with Session(db, relation, "wide profile").logging_sql() as unpivoted:
            got = scan.profile_row(db, relation.sql, columns)
        want: list = []
        for sql in scan.profile_statements(db.dialect, relation.sql, columns):
            row = db.query(sql)[0]
            want = want or [row[0]]
            want += row[1:]
    finally:
        db.close()
    assert [int(x) for x in got] == [int(x) for x in want]
    assert got[-4:] == [0, 0, 30, 1]  # the column of NULLs, the constant one
    assert len([s for s in unpivoted if "unpivot" in s]) == len(set(types.values()))


@pytest.mark.parametrize("n", [scan.WIDE_COLUMNS + scan.PART_COLUMNS + 3, 500])
def test_discover_of_a_wide_table_equals_a_count_in_python(engine, n):
    """qar discover coded every column in one statement, a dictionary join per column: DuckDB
    refused 500 columns (max expression depth 1000, exit 3). Its codes are now made in parts as
    the scan's: each combination's classes and singletons equal a Counter over the rows."""
    from collections import Counter

    if n == 500 and engine.name != "duckdb":
        pytest.skip("the expression depth is DuckDB's limit; the narrower case runs on every engine")
    max_size = 2 if n < 100 else 1
    names, rows, types = random_table(14, 30, names=_names(n))
    source, table = engine.load("wide discover", as_columns(names, rows), types)
    got = qar_sql.discover(source, table=table, max_size=max_size)
    by_columns = {c.columns: c for c in got.combinations}
    assert len(by_columns) == sum(1 for c in got.combinations)
    for cols, c in by_columns.items():
        idx = [names.index(x) for x in cols]
        classes = Counter(tuple(r[i] for i in idx) for r in rows)
        assert (c.distinct, c.singletons) == (len(classes), sum(1 for v in classes.values() if v == 1)), cols
    assert {(x,) for x in names} <= set(by_columns)
