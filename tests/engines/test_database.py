"""Arrays in and out of the engine through the Database methods (issue 25): ``arrays``,
``arrow_batches``, ``array_relation`` and ``stored_row_order``. The commands call these and
never ask which engine they hold, so no ``isinstance(…, DuckDBDatabase)`` is left outside
``qar_sql/engines/``; each method's default (built from rows) gives DuckDB's own fast path's
arrays on every registered engine, checked here against plain Python rows.
"""

from __future__ import annotations

import ast
import math
from pathlib import Path

import numpy as np
import pytest
from conftest import cleaned_up
from engine_registry import ENGINES, open_engine

import tests.measures.test_classic as risk_tests
from qar_sql.engines.database import Database
from qar_sql.engines.source import open_source
from qar_sql.errors import DatabaseError

PACKAGE = Path(__file__).resolve().parents[2] / "qar_sql"
ENGINES_DIR = PACKAGE / "engines"

#: The engine classes only ``qar_sql/engines/`` may name (every Database subclass defined there):
#: elsewhere code holds a Database.
ENGINE_CLASSES = {
    node.name
    for path in ENGINES_DIR.rglob("*.py")
    for node in ast.walk(ast.parse(path.read_text()))
    if isinstance(node, ast.ClassDef) and any(getattr(b, "id", None) == "Database" for b in node.bases)
}

#: The modules that branched on the engine before the methods existed, and the method each calls.
CALLERS = {
    "ranking/eliminate.py": "array_relation",
    "pushdown/cells.py": "arrays",
    "comparison/tables.py": "stored_row_order",
    "comparison/read.py": "arrow_batches",
    "pushdown/record_codes.py": "arrays",
    "ranking/records.py": "arrays",
}


def _outside_engines():
    for path in sorted(PACKAGE.rglob("*.py")):
        if ENGINES_DIR not in path.parents:
            yield path, ast.parse(path.read_text(), str(path))


def _names(node: ast.AST) -> set[str]:
    return {
        n.id if isinstance(n, ast.Name) else n.attr for n in ast.walk(node) if isinstance(n, ast.Name | ast.Attribute)
    }


def test_no_module_outside_engines_asks_which_engine_it_holds():
    found = []
    for path, tree in _outside_engines():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance":
                if len(node.args) == 2 and _names(node.args[1]) & ENGINE_CLASSES:
                    found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
            elif isinstance(node, ast.ImportFrom) and {a.name for a in node.names} & ENGINE_CLASSES:
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno} (import)")
    assert not found, "engine classes named outside qar_sql/engines/ (call a Database method): " + ", ".join(found)


def test_the_callers_use_the_database_methods():
    for module, method in CALLERS.items():
        tree = ast.parse((PACKAGE / module).read_text())
        calls = {n.func.attr for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)}
        assert method in calls, f"{module} no longer calls db.{method}(...)"


def test_the_finder_sees_an_isinstance_on_an_engine_class():
    tree = ast.parse("if isinstance(db, (source.DuckDBDatabase, int)):\n    pass\n")
    (call,) = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    assert _names(call.args[1]) & ENGINE_CLASSES == {"DuckDBDatabase"}


# --- the same arrays on every engine ---------------------------------------------------------------

NAMES = ["id", "n", "x", "s"]
ROWS = [(i, i * 7 - 3, None if i % 4 == 0 else i / 8, f"v{i % 3}" if i % 5 else None) for i in range(23)]
TYPES = {"id": "bigint", "n": "bigint", "x": "double precision", "s": "text"}


@pytest.fixture(params=list(ENGINES))
def eng(request, tmp_path):
    yield from cleaned_up(open_engine(request.param, tmp_path))


def _opened(eng):
    source, table = eng.load("t arrays", NAMES, ROWS, TYPES)
    return open_source(source, table=table)


def _select(db, relation) -> str:
    q = db.dialect.quote
    return (
        f"select t.{q('id')} as {q('r')}, t.{q('n')} as {q('n')}, t.{q('x')} as {q('x')} "
        f"from {relation.sql} as t order by t.{q('id')}"
    )


def test_arrays_are_the_rows_on_every_engine(eng):
    db, relation = _opened(eng)
    with db:
        got = db.arrays(_select(db, relation), {"r": np.int64, "n": np.int64, "x": np.float64})
        # The default (rows in chunks) gives the same arrays as an engine's own override.
        default = Database.arrays(db, _select(db, relation), {"r": np.int64, "n": np.int64, "x": np.float64})
    assert list(got) == ["r", "n", "x"]
    for out in (got, default):
        assert [a.dtype for a in out.values()] == [np.dtype(np.int64), np.dtype(np.int64), np.dtype(np.float64)]
        assert out["r"].tolist() == [r[0] for r in ROWS]
        assert out["n"].tolist() == [r[1] for r in ROWS]
        want_x = [math.nan if r[2] is None else r[2] for r in ROWS]  # NULL is NaN in a float column
        np.testing.assert_array_equal(out["x"], np.array(want_x))


def test_an_empty_result_is_empty_typed_arrays(eng):
    db, relation = _opened(eng)
    with db:
        sql = _select(db, relation).replace("order by", "where 1 = 0 order by")
        for fetch in (db.arrays, lambda s, c: Database.arrays(db, s, c)):
            out = fetch(sql, {"r": np.int64, "n": np.int64, "x": np.float64})
            assert {k: (v.size, v.dtype) for k, v in out.items()} == {
                "r": (0, np.dtype(np.int64)),
                "n": (0, np.dtype(np.int64)),
                "x": (0, np.dtype(np.float64)),
            }


def test_a_null_in_an_integer_column_is_an_error_not_a_number(eng):
    db, relation = _opened(eng)
    with db:
        q = db.dialect.quote
        sql = f"select t.{q('x')} as {q('x')} from {relation.sql} as t"
        for fetch in (db.arrays, lambda s, c: Database.arrays(db, s, c)):
            with pytest.raises(DatabaseError, match="'x'"):
                fetch(sql, {"x": np.int64})


def test_arrow_batches_are_the_rows_on_every_engine(eng):
    db, relation = _opened(eng)
    q = db.dialect.quote
    sql = f"select t.{q('id')} as {q('id')}, t.{q('s')} as {q('s')} from {relation.sql} as t order by t.{q('id')}"
    with db:
        batches = list(db.arrow_batches(sql, ["id", "s"], 10))
    assert [b.num_rows for b in batches] == [10, 10, 3]
    assert all(b.schema.names == ["id", "s"] for b in batches)
    got = [(int(i), s) for b in batches for i, s in zip(b.column(0).to_pylist(), b.column(1).to_pylist())]
    assert got == [(r[0], r[3]) for r in ROWS]


def test_array_relation_reads_the_arrays_where_the_engine_can(eng):
    db, relation = _opened(eng)
    r = np.array([5, 3, 9, 3], dtype=np.int64)
    pos = np.arange(1, 5, dtype=np.int64)
    with db:
        # the others would need a table written
        assert db.dialect.array_relation == (eng.name in ("duckdb", "postgresql"))
        if not db.dialect.array_relation:
            return
        bound = db.array_relation({"r": r, "pos": pos})
        q = db.dialect.quote
        with bound as (sql, params):
            rows = db.query(f"select x.{q('r')}, x.{q('pos')} from {sql} as x order by x.{q('pos')}", params)
        assert [(int(a), int(b)) for a, b in rows] == list(zip(r.tolist(), pos.tolist()))
        if eng.name == "duckdb":  # the registered view is gone after the block
            with pytest.raises(DatabaseError):
                db.query(f"select * from {sql}")


def test_stored_row_order_only_where_rows_have_one(eng, tmp_path):
    db, relation = _opened(eng)
    with db:
        order = db.stored_row_order(relation.sql)
        if eng.name == "duckdb":
            assert order == "rowid"
            q = db.dialect.quote
            ids = [int(v) for (v,) in db.query(f"select t.{q('id')} from {relation.sql} as t order by t.{order}")]
            assert ids == [r[0] for r in ROWS]  # inserted in id order
            assert db.stored_row_order(f"(select * from {relation.sql})") is None  # a subquery has none
        else:
            assert order is None


# --- risk, which reads its cells through db.arrays, on every engine ----------------------------


@pytest.mark.parametrize("missing", ["value", "wildcard"])
def test_risk_equals_the_oracle_on_every_engine(eng, missing):
    risk_tests.test_every_qi_matches_the_oracle(eng.loader(), missing)


def test_risk_per_record_equals_the_oracle_on_every_engine(eng, tmp_path):
    risk_tests.test_per_record_file_matches_the_oracle(eng.loader(), "value", tmp_path)
