"""In-memory tables as sources (issue 14): a pandas or polars DataFrame, a pyarrow Table or
Dataset and a DuckDB relation give the same audit as the same rows in a DuckDB file."""

from __future__ import annotations

import dataclasses

import duckdb
import pandas as pd
import pyarrow as pa
import pyarrow.dataset as pads
import pytest

import qar_sql
from qar_sql.errors import UsageError

# Hostile names: a quote, a space, unicode; NULLs in two columns.
DATA = {
    'a"b': [1, 1, 2, 2, 3, 3, 4, 5, 6, 7, 1, 2],
    "zip code": ["x", "y", "x", "y", None, "x", "z", "z", "w", "v", "x", "y"],
    "âge": [30, 30, 31, 31, 32, None, 33, 34, 30, 31, 30, 31],
    "sex": ["f", "m", "f", "m", "f", "m", "f", "m", "f", "m", "f", "m"],
}
ARGS = dict(p=2, pi_u=0.5)


def _comparable(result):
    d = dataclasses.asdict(result)
    for k in ("source", "table", "seconds"):
        d.pop(k)
    return d


@pytest.fixture
def reference(duck):
    source, table = duck.load("people", DATA)
    return qar_sql.audit(source, table=table, **ARGS)


def _frames():
    pl = pytest.importorskip("polars")
    df = pd.DataFrame(DATA)
    df["âge"] = df["âge"].astype("Int64")  # a nullable integer, as in the DuckDB table
    table = pa.table(DATA)
    return {
        "<pandas.DataFrame>": df,
        "<polars.DataFrame>": pl.DataFrame(DATA),
        "<pyarrow.Table>": table,
        "<pyarrow.dataset.Dataset>": pads.dataset(table),
        "<duckdb.DuckDBPyRelation>": duckdb.arrow(table) if hasattr(duckdb, "arrow") else duckdb.from_arrow(table),
    }


@pytest.mark.parametrize("label", list(_frames()))
def test_frame_audit_equals_duckdb_file(reference, label):
    frame = _frames()[label]
    result = qar_sql.audit(frame, **ARGS)
    assert result.source == label
    assert result.table is None
    assert _comparable(result) == _comparable(reference)


def test_frame_is_read_in_place_not_copied():
    """The frame is registered (a view over its buffers), not loaded into a DuckDB table."""
    src = qar_sql.connect(pa.table(DATA))
    with src:
        views = src.db.query("select view_name from duckdb_views() where not internal")
        tables = src.db.query("select table_name from duckdb_tables()")
        assert ("qar_frame",) in views
        assert tables == []


def test_connect_reuses_one_connection(reference, duck):
    source, table = duck.source, "people"
    with qar_sql.connect(source, table=table) as src:
        first = qar_sql.audit(src, **ARGS)
        second = qar_sql.audit(src, **ARGS)  # still open after the first call
        assert src.db.query("select 1") == [(1,)]
    assert _comparable(first) == _comparable(reference) == _comparable(second)
    assert "people" in repr(src)


def test_records_of_a_frame_with_a_key(duck):
    data = {"id": list(range(12)), **DATA}
    source, table = duck.load("people", data)
    cols = list(DATA)
    ref = qar_sql.ranking.records.contributions(source, table=table, key=["id"], columns=cols, **ARGS)
    got = qar_sql.ranking.records.contributions(pd.DataFrame(data), key=["id"], columns=cols, **ARGS)
    assert got.audit.source == "<pandas.DataFrame>"
    assert list(got.order("dt")) == list(ref.order("dt"))
    assert got.dt.tolist() == ref.dt.tolist()


def test_frame_refuses_table_and_unknown_objects():
    with pytest.raises(UsageError, match="does not apply to a <pandas.DataFrame>"):
        qar_sql.audit(pd.DataFrame(DATA), table="people")
    with pytest.raises(UsageError, match="cannot audit an object of type list"):
        qar_sql.audit([1, 2, 3])


def test_discover_and_whatif_of_a_frame(duck):
    source, table = duck.load("people", DATA)
    ref = qar_sql.discover(source, table=table, max_size=2)
    got = qar_sql.discover(pd.DataFrame(DATA), max_size=2)
    assert [dataclasses.asdict(c) for c in got.combinations] == [dataclasses.asdict(c) for c in ref.combinations]
    plan = {"treatments": {"age_band": {"column": "âge", "kind": "bands", "width": 5}}}
    w_ref = qar_sql.whatif(source, table=table, treatments=plan, qid=list(DATA), **ARGS)
    w_got = qar_sql.whatif(pa.table(DATA), treatments=plan, qid=list(DATA), **ARGS)
    assert w_got.source == "<pyarrow.Table>"
    assert w_got.scenarios == w_ref.scenarios
