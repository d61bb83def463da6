"""Hierarchies: ARX's CSV files, intervals from TOML, their SQL, and the errors a user sees."""

from __future__ import annotations

import duckdb
import pytest

from qar_sql.anonymization.hierarchy import (
    CsvHierarchy,
    HierarchyError,
    intervals_from_toml,
    read_hierarchy,
    read_hierarchy_dir,
    read_interval_toml,
)
from qar_sql.anonymization.models import KAnonymity
from qar_sql.anonymization.search import anonymize_session
from qar_sql.engines.dialects import get_dialect
from qar_sql.errors import SourceNotFound
from tests.anonymize.fixtures import (
    ADULT_HIERARCHIES,
    need_adult,
)


def test_arx_adult_hierarchies():
    need_adult()
    hs = read_hierarchy_dir(ADULT_HIERARCHIES)
    heights = {c: h.height for c, h in hs.items()}
    assert heights == {
        "age": 5,
        "education": 4,
        "marital-status": 3,
        "native-country": 3,
        "occupation": 3,
        "race": 2,
        "salary-class": 2,
        "sex": 2,
        "workclass": 3,
    }
    age = hs["age"]
    assert [age.generalize("39", lv) for lv in range(5)] == ["39", "35-39", "30-39", "20-39", "*"]
    assert age.label(4) == "level 4: suppressed (*)"
    assert read_hierarchy_dir(ADULT_HIERARCHIES, ["sex", "age"]).keys() == {"sex", "age"}
    with pytest.raises(HierarchyError, match="no hierarchy file for column 'zip'"):
        read_hierarchy_dir(ADULT_HIERARCHIES, ["zip"])


def test_csv_files(tmp_path):
    f = tmp_path / "h.csv"
    f.write_text("a;A;*\nb;A;*\nc;C;*\n")
    h = read_hierarchy(f, "x")
    assert h.height == 3 and h.values == ("a", "b", "c")
    assert h.mapping(1, ["a", "c"]) == {"a": "A", "c": "C"}
    f.write_text("a,A\nb,B\n")
    assert read_hierarchy(f, "x", delimiter=",").generalize("b", 1) == "B"
    with pytest.raises(HierarchyError, match="one field per row") as caught:
        read_hierarchy(f, "x")
    # the command line has no option for another delimiter: the fix is the file's, not a flag
    assert "give the delimiter" not in str(caught.value) and "write the file with ';' between fields" in str(
        caught.value
    )
    f.write_text("a;A;*\nb;A\n")
    with pytest.raises(HierarchyError, match="row 2 .* has 2 levels where row 1 has 3"):
        read_hierarchy(f, "x")
    f.write_text("a;A\na;B\n")
    with pytest.raises(HierarchyError, match="value 'a' appears twice"):
        read_hierarchy(f, "x")
    with pytest.raises(SourceNotFound, match="does not exist"):
        read_hierarchy(tmp_path / "nope.csv", "x")
    f.write_text("a;A;*\nb;A;Z\nc;C;Z\n")
    with pytest.raises(
        HierarchyError, match="group 'A' at level 1 .* becomes both '\\*' and 'Z' at level 2 \\(row 2\\)"
    ):
        read_hierarchy(f, "x")
    with pytest.raises(HierarchyError, match="level 3 of column 'x' does not exist; its hierarchy has levels 0 to 1"):
        CsvHierarchy("x", (("a", "*"),)).label(3)


def test_intervals_and_their_sql(tmp_path):
    f = tmp_path / "h.toml"
    f.write_text("[hierarchies.age]\nwidths = [5, 10, 20]\nbottom = 20\ntop = 70\n")
    h = read_interval_toml(f)["age"]
    assert h.height == 5
    assert h.labels[2] == "level 2: 10-wide bands (<20, >=70 coded)"
    values = ["17", "20", "24", "25", "39", "69", "70", "88"]
    con = duckdb.connect()
    d = get_dialect("duckdb")
    for level in range(h.height):
        want = [h.generalize(v, level) for v in values]
        got = [con.execute(f"select {h.sql(level, d.literal(v), d)}").fetchone()[0] for v in values]  # type: ignore[index]
        assert got == want, level
    assert h.generalize("39", 1) == "35-39" and h.generalize("17", 3) == "<20" and h.generalize("88", 1) == ">=70"
    assert intervals_from_toml({"x": {"widths": [0.5]}})["x"].generalize("1.2", 1) == "[1, 1.5)"
    with pytest.raises(HierarchyError, match="must not shrink"):
        intervals_from_toml({"age": {"widths": [10, 5]}})
    with pytest.raises(HierarchyError, match="hierarchies.age.step .* is unknown"):
        intervals_from_toml({"age": {"widths": [5], "step": 1}})
    with pytest.raises(HierarchyError, match="bottom = 50 .* must be below top = 40"):
        intervals_from_toml({"age": {"widths": [5], "bottom": 50, "top": 40}})
    # bands of 7 do not nest in bands of 5: k-anonymity would not be monotone, and the search's
    # predictive tagging (which assumes it) could miss the optimum
    with pytest.raises(HierarchyError, match=r"7 is not a multiple of 5"):
        intervals_from_toml({"age": {"widths": [5, 7]}})
    assert intervals_from_toml({"x": {"widths": [0.5, 1.5, 3]}})["x"].height == 5


def test_a_hierarchy_that_is_no_tree_is_refused():
    # 'g1' has two parents: level 2's classes are not unions of level 1's
    rows = (("1", "g1", "X", "*"), ("2", "g1", "Y", "*"), ("3", "g2", "Y", "*"))
    with pytest.raises(
        HierarchyError,
        match=r"group 'g1' at level 1 of the hierarchy h.csv of column 'c' becomes both 'X' and 'Y' at level 2 \(row 2\)",
    ):
        CsvHierarchy("c", rows, "h.csv")
    CsvHierarchy("c", (("1", "g1", "X", "*"), ("2", "g1", "X", "*"), ("3", "g2", "Y", "*")), "h.csv")


def test_a_value_missing_from_its_hierarchy_is_one_error(tables):
    s = tables.load("t", {"city": ["a", "b", "zz", "zz", "zz", "yy"], "age": [30, 31, 32, 33, 34, 35]})
    city = CsvHierarchy("city", (("a", "*"), ("b", "*")), "city.csv")
    from qar_sql.anonymization.hierarchy import IntervalHierarchy

    with pytest.raises(HierarchyError) as e:
        anonymize_session(s, {"city": city, "age": IntervalHierarchy("age", (5,))}, [KAnonymity(k=2)])
    assert str(e.value) == (
        "value 'zz' of column 'city' (3 rows) is missing from its hierarchy city.csv (and 1 other value in 1 row); "
        "add a row for it to the hierarchy (the value, then what it becomes at each level), "
        "or leave its rows out of the table"
    )


def test_the_audit_writes_nothing(tables):
    """The frequency table is a session temp table (DuckDB) or a CTE, and is gone afterwards."""
    from qar_sql.anonymization.hierarchy import IntervalHierarchy

    s = tables.load("t", {"age": [30, 31, 32, 33, 40, 41]})
    before = s.db.query("select 1")  # the connection works
    r = anonymize_session(s, {"age": IntervalHierarchy("age", (5, 10))}, [KAnonymity(k=2)])
    assert r.level_vector == (1,) and before == [(1,)]
    if tables.engine == "duckdb":
        left = s.db.query("select table_name from duckdb_tables() where temporary and table_name like 'qar_anonymize%'")
        assert left == []
