"""The dialect flags that describe how an engine computes (``grouping_sets``, ``integer_division``,
``nulls_first``, ``integer_wraps``; qar_sql/engines/dialects/base.py) are contracts: each is
checked here against what the engine itself does, on every engine of tests/engine_registry.py
(DuckDB, PostgreSQL and SQLite everywhere; MariaDB, Spark and ClickHouse where they run), so a
template written for a flag's value cannot be written on a wrong belief about an engine. The
queries run through the engine's own driver, not through qar.
"""

from __future__ import annotations

import pytest
from engine_registry import ENGINES, open_engine

from qar_sql.engines.dialects import DIALECTS, get_dialect

#: The largest 64-bit integer: c + c overflows it (the two operands of one type, so no engine
#: widens the sum to a larger integer type first).
BIG = 2**63 - 1


@pytest.fixture(params=sorted(ENGINES))
def flags(request, tmp_path):
    """(the engine, its dialect, the quoted name of a table of rows (7, 2, BIG) and three NULLs)."""
    engine = open_engine(request.param, tmp_path)
    engine.load("flags", ["a", "b", "c"], [(7, 2, BIG), (None, None, None)], {k: "bigint" for k in "abc"})
    yield engine, get_dialect(engine.engine_name), engine.qualified("flags")
    engine.cleanup()


def test_integer_division_truncates_exactly_where_the_flag_says(flags):
    engine, dialect, table = flags
    (value,) = engine.fetch(f"select a / b from {table} where a is not null")[0]
    assert (float(value) == 3.0) is dialect.integer_division, f"{dialect.name}: 7 / 2 = {value!r}"
    assert float(value) in (3.0, 3.5)


def test_null_sorts_first_exactly_where_the_flag_says(flags):
    engine, dialect, table = flags
    rows = engine.fetch(f"select a from {table} order by a")
    assert (rows[0][0] is None) is dialect.nulls_first, f"{dialect.name}: ascending order is {rows}"


def test_grouping_sets_run_exactly_where_the_flag_says(flags):
    engine, dialect, table = flags
    sql = f"select a, count(*) from {table} group by grouping sets ((a), ())"
    try:
        rows = engine.fetch(sql)
    except Exception as exc:  # noqa: BLE001 - each driver has its own error for unknown syntax
        assert not dialect.grouping_sets, f"{dialect.name}: {exc}"
    else:
        assert dialect.grouping_sets, f"{dialect.name} ran GROUPING SETS: {rows}"
        assert sorted(int(n) for _, n in rows) == [1, 1, 2]  # a = 7, a NULL, and the total


def test_integer_overflow_wraps_exactly_where_the_flag_says(flags):
    """(2^63 − 1) · 2 wraps to −2 modulo 2^64, or is an error (DuckDB, PostgreSQL, MariaDB, Spark
    in ANSI mode), or a float (SQLite turns an overflowing integer into a real)."""
    engine, dialect, table = flags
    try:
        (value,) = engine.fetch(f"select c + c from {table} where c is not null")[0]
    except Exception:  # noqa: BLE001 - the overflow error, in each driver's words
        value = None
    assert (value == -2) is dialect.integer_wraps, f"{dialect.name}: (2^63 - 1) * 2 = {value!r}"


@pytest.mark.parametrize("name", sorted(DIALECTS))
def test_no_cube_is_planned_where_grouping_sets_do_not_exist(name):
    """Cubes (pushdown/lattice.py) run when ``cube_beta`` is set; they are GROUPING SETS."""
    dialect = DIALECTS[name]
    assert dialect.grouping_sets or dialect.cube_beta is None
