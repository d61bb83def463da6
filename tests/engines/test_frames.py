"""In-memory tables as sources (issue 14): a pandas or polars DataFrame, a pyarrow Table or
Dataset and a DuckDB relation give the same audit as the same rows in a DuckDB file."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys

import duckdb
import pandas as pd
import pyarrow as pa
import pyarrow.dataset as pads
import pytest
from conftest import REPO, assert_close

import qar_sql
from qar_sql.errors import DataError, UsageError

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
    ref = qar_sql.commands.records.contributions(source, table=table, key=["id"], columns=cols, **ARGS)
    got = qar_sql.commands.records.contributions(pd.DataFrame(data), key=["id"], columns=cols, **ARGS)
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
    assert_close(w_got.scenarios, w_ref.scenarios)


# -- results as tables (item 2) ------------------------------------------------------------


def test_audit_tables_round_trip(reference):
    df = reference.to_pandas()
    assert len(df) == reference.n_qi
    assert df["distinct"].tolist() == [q.distinct for q in reference.qis]
    assert df["singletons"].tolist() == [q.singletons for q in reference.qis]
    assert df["theta"].tolist() == pytest.approx([q.distinct / q.rows for q in reference.qis])
    assert reference.to_arrow().to_pandas().equals(df)
    pl = pytest.importorskip("polars")
    assert reference.to_polars().to_pandas().equals(df)
    assert isinstance(reference.to_polars(), pl.DataFrame)
    # The table of a result fed back in: the QIs as a frame are auditable data too.
    assert len(qar_sql.audit(df[["distinct", "singletons", "min_class_size"]], p=1, pi_u=0.5).qis) == 3


def test_repr_is_one_short_line(reference):
    text = repr(reference)
    assert "\n" not in text and len(text) < 200
    assert text.startswith("<AuditResult ") and "12 rows" in text


def test_every_result_has_tables_and_short_repr(duck):
    data = {"id": list(range(12)), **DATA}
    source, table = duck.load("people", data)
    cols = list(DATA)
    plan = {"treatments": {"age_band": {"column": "âge", "kind": "bands", "width": 5}}}
    results = [
        qar_sql.commands.records.contributions(source, table=table, key=["id"], columns=cols, **ARGS),
        qar_sql.commands.records.influence(source, table=table, key=["id"], columns=cols, **ARGS),
        qar_sql.commands.eliminate.eliminate(source, table=table, key=["id"], columns=cols, step=2, **ARGS),
        qar_sql.discover(source, table=table, columns=cols, max_size=2),
        qar_sql.whatif(source, table=table, treatments=plan, qid=cols, columns=cols, **ARGS),
    ]
    for result in results:
        text = repr(result)
        assert "\n" not in text and len(text) < 300, text
        df = result.to_pandas()
        assert len(df) > 0
        assert result.to_arrow().num_rows == len(df)
        html5lib = pytest.importorskip("html5lib")
        html5lib.HTMLParser(strict=True).parseFragment(result._repr_html_())
    contrib, _, elim, disc, what = results
    df = contrib.to_pandas()
    assert sorted(df["key"].tolist()) == list(range(12))  # every record (12 < the top 100), by its key
    assert df["dt"].tolist() == sorted(contrib.dt.tolist(), reverse=True)
    assert set(elim.to_pandas()["curves"]) == set(elim.curves)
    assert disc.to_pandas()["singletons"].tolist() == [c.singletons for c in disc.combinations]
    assert what.to_pandas()["name"].tolist() == [s.name for s in what.scenarios]


def test_repr_html_of_the_demo_is_small_and_parses():
    html5lib = pytest.importorskip("html5lib")
    from qar_sql.demo import generate_population

    people = pd.DataFrame({k: v for k, v in generate_population(5_000, seed=3).items() if k != "person_id"})
    result = qar_sql.audit(people)
    page = result._repr_html_()
    assert len(page.encode()) < 50_000
    doc = html5lib.HTMLParser(strict=True).parseFragment(page)
    text = "".join(doc.itertext())
    assert text.index("QaR audit") < text.index("Riskiest quasi-identifiers")  # summary first
    assert f"{result.risk:.4g}" in text
    top = result.riskiest(1)[0]
    assert ", ".join(top.columns) in text
    assert len(repr(result)) < 200


def test_risk_of_a_frame_and_its_table(duck):
    source, table = duck.load("people", DATA)
    ref = qar_sql.risk(source, table=table, p=2)
    got = qar_sql.risk(pd.DataFrame(DATA), p=2)
    assert got.source == "<pandas.DataFrame>"
    assert got.to_dict()["qis"] == ref.to_dict()["qis"]
    df = got.to_pandas()
    assert df["sample_uniques"].tolist() == [q.sample_uniques for q in got.qis]
    assert df["expected_reidentifications"].tolist() == pytest.approx([q.expected_reidentifications for q in got.qis])
    text = repr(got)
    assert "\n" not in text and len(text) < 300
    html5lib = pytest.importorskip("html5lib")
    html5lib.HTMLParser(strict=True).parseFragment(got._repr_html_())


def test_emit_sql_refuses_a_frame():
    from qar_sql.treat.whatif import emit_sql

    plan = {"treatments": {"age_band": {"column": "âge", "kind": "bands", "width": 5}}}
    with pytest.raises(UsageError, match="lives only in this Python process"):
        emit_sql(pd.DataFrame(DATA), treatments=plan)


def test_polars_without_pyarrow_names_the_arrow_extra():
    """DuckDB reads a polars frame through Arrow: without pyarrow the audit raised a bare
    ImportError (or DuckDB's own message); it is one sentence naming qar-sql[arrow]. pyarrow is
    made unimportable in a child interpreter, as on an install without the extra."""
    import subprocess
    import sys

    pytest.importorskip("polars")
    code = (
        "import sys; sys.modules['pyarrow'] = None\n"
        "import polars as pl, qar_sql\n"
        "from qar_sql.errors import UsageError\n"
        "try:\n"
        "    qar_sql.audit(pl.DataFrame({'a': [1, 2, 3], 'b': [1, 1, 2]}), p=1)\n"
        "except UsageError as exc:\n"
        "    print(exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == (
        "reading a <polars.DataFrame> needs pyarrow, which is not installed; "
        "install it with: pip install 'qar-sql[arrow]'"
    ), out.stdout + out.stderr


def test_a_duckdb_relation_needs_no_arrow_and_keeps_its_types(tmp_path):
    # pyarrow made unimportable in a child process: the relation is still read (by DuckDB's own
    # Parquet writer), with its column types as they were (a DATE stays a DATE, a DECIMAL a
    # DECIMAL), and the temporary folder is gone once the source is closed.
    code = (
        "import sys; sys.modules['pyarrow'] = None\n"
        "import duckdb, glob, os, tempfile, qar_sql\n"
        "con = duckdb.connect()\n"
        "rel = con.sql(\"select date '2020-01-01' + (range % 9)::int as \\\"d'ay\\\", (range % 4 / 3)::decimal(6, 2) as x, "
        'range % 5 as n from range(300)")\n'
        "with qar_sql.connect(rel) as src:\n"
        "    print(src.db.query('select data_type from information_schema.columns order by ordinal_position'))\n"
        "print(qar_sql.audit(rel, p=2, pi_u=0.5).fit.n_exceedances)\n"
        "print(glob.glob(os.path.join(tempfile.gettempdir(), 'qar_relation_*')))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO), "TMPDIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    types, exceedances, leftovers = out.stdout.splitlines()
    assert types == "[('DATE',), ('DECIMAL(6,2)',), ('BIGINT',)]"
    assert int(exceedances) >= 1
    assert leftovers == "[]"


@pytest.mark.parametrize(
    "values",
    [
        [1, "x", b"y", 2, "x", 1],  # DuckDB failed on the bytes: "Unimplemented type for cast"
        [1] * 1500 + ["1", "x"],  # read as text from the sample: 1 and "1" became one value
        [1.5, True, 2.5, 1.5, True, 3.0],
    ],
)
def test_a_pandas_column_of_mixed_types_is_refused_by_name(values):
    df = pd.DataFrame({"ok": ["u", "v"] * (len(values) // 2), "mi xed": pd.Series(values, dtype=object)})
    with pytest.raises(DataError, match=r"^column 'mi xed' of the pandas DataFrame holds values of several") as e:
        qar_sql.audit(df, p=1)
    assert "df['mi xed'] = df['mi xed'].astype(str)" in str(e.value)
    assert e.value.exit_code == 2


def test_an_object_column_of_one_type_with_missing_values_is_read():
    """Text with None and NaN, and ints with floats, are one type each: nothing is refused."""
    df = pd.DataFrame(
        {
            "t": pd.Series(["a", None, "b", float("nan"), "a", "b"] * 2, dtype=object),
            "n": pd.Series([1, 2.5, 1, 2.5, 3, 1] * 2, dtype=object),
        }
    )
    typed = pd.DataFrame({"t": df["t"].astype("string"), "n": df["n"].astype("float64")})
    result = qar_sql.audit(df, p=1, pi_u=0.5)
    assert result.rows == 12
    assert _comparable(result) == _comparable(qar_sql.audit(typed, p=1, pi_u=0.5))


def test_two_columns_of_one_name_to_the_database_are_refused():
    """DuckDB's names ignore case, so it read the second of ``x``, ``x`` (or of ``Age``, ``age``)
    as ``x_1``: results named a column the caller never had, and ``columns=["age"]`` said "did
    you mean 'age_1'". One sentence names both and the fix, for every kind of frame."""
    import polars as pl

    df = pd.DataFrame([[1, "a"], [2, "b"], [1, "b"], [3, "a"]] * 5, columns=["x", "x"])
    with pytest.raises(DataError, match=r"^the <pandas.DataFrame> has two columns named 'x' to the database .*'x_2'"):
        qar_sql.audit(df, p=1, pi_u=0.5)
    cased = pd.DataFrame({"Age": [30, 40, 30, 50] * 5, "age": [1, 2, 3, 4] * 5, "zip": list("abcd") * 5})
    for frame in (cased, pl.from_pandas(cased), pl.from_pandas(cased).lazy(), pa.Table.from_pandas(cased)):
        with pytest.raises(DataError, match=r"has columns 'Age' and 'age', one name to the database"):
            qar_sql.audit(frame, p=1, pi_u=0.5, columns=["age", "zip"])
    numbered = pd.DataFrame([[1, 2, 3]] * 4, columns=[0, "0", "z"])
    with pytest.raises(DataError, match="two columns named '0'"):
        qar_sql.risk(numbered)


def test_a_named_index_is_said_to_be_left_out():
    """df.set_index("age") moves a quasi-identifier out of the columns the database reads: the
    audit goes on without it, and says so with the fix."""
    df = pd.DataFrame({"age": [30, 40, 30, 50] * 5, "sex": list("FMFM") * 5, "zip": list("abcd") * 5})
    with pytest.warns(UserWarning, match=r"index \(age\) is not read as a column; pass df.reset_index\(\)"):
        result = qar_sql.risk(df.set_index("age"))
    assert result.columns == ("sex", "zip")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the default RangeIndex: nothing to say
        qar_sql.risk(df)
