"""Treatments composed on one column: a perturbative treatment after another treatment of the
same column reads the column as that treatment left it (its categories, frequencies, sd, range).

Oracles:

* Materialisation: the chain A→B equals B applied to A's release stored as a table (same key,
  same seed), cell for cell. That is the definition of composition, computed another way (two
  separate releases instead of one chain).
* Plain Python on the released rows: no suppressed value comes back after PRAM, no value a map
  merged away; PRAM's posterior odds follow the treated frequencies (invariant PRAM:
  P(X = b | Y = b) = r + (1 − r)·π_b); noise after top coding uses the coded column's sd.
"""

from __future__ import annotations

import statistics
from collections import Counter

import duckdb
import pytest

import qar_sql
from qar_sql.engines.source import open_source
from qar_sql.treat.treatments import Binder, TreatmentError, load
from qar_sql.treat.whatif import emit_sql
from tests.conftest import Loader
from tests.treat.test_perturb import AGE, ID, INCOME, TOML, TOWN, make_rows

EXTRA = """
[treatments.town_suppress]
column = "town"
kind = "suppress"
values = ["a"]

[treatments.town_map]
column = "town"
kind = "map"
map = { b = "bc", c = "bc" }

[treatments.town_pram]
column = "town"
kind = "pram"
retention = 0.5

[treatments.town_shuffle]
column = "town"
kind = "shuffle"

[treatments.age_top]
column = "age y"
kind = "top"
above = 60
value = 60

[treatments.age_noise]
column = "age y"
kind = "noise"
sd = 0.5

[treatments.age_bands]
column = "age y"
kind = "bands"
width = 10

[treatments.income_top]
column = "in;come"
kind = "top"
above = 60000
value = 60000

[treatments.sex_map]
column = "se\\"x"
kind = "map"
map = { M = "X", F = "X" }

[treatments.mdav_local]
columns = ["age y", "in;come"]
kind = "microaggregation"
k = 3
local = ["age y", "town"]
"""
#: tests/treat/test_perturb.py's treatments plus the non-perturbative ones the chains start with.
COMPOSE_TOML = TOML + EXTRA

#: (first, then): chains whose second treatment reads a column the first changed.
CHAINS = [
    ["town_suppress", "town_pram"],
    ["town_map", "town_pram"],
    ["town_shuffle", "town_pram"],
    ["town_map", "matrix_bc"],
    ["age_top", "age_noise"],
    ["income_top", "micro"],
    ["income_top", "mdav"],
    ["sex_map", "mdav"],
    ["age_top", "swap"],
    ["age_bands", "age_pram"],
    ["income_top", "mdav_local"],
]
#: Longer chains the engine suite (tests/engines/test_conformance.py) releases on every engine.
ENGINE_CHAINS = [
    ["town_suppress", "town_pram", "age_top", "age_noise", "income_top", "mdav_local"],
    ["sex_map", "income_top", "mdav", "age_bands", "age_pram", "town_map", "matrix_bc"],
]
MORE = """
[treatments.matrix_bc]
column = "town"
kind = "pram"
matrix = { a = { a = 1.0 }, bc = { bc = 0.5, d = 0.5 }, d = { d = 1.0 }, "é" = { "é" = 1.0 } }

[treatments.age_pram]
column = "age y"
kind = "pram"
retention = 0.6
"""
COMPOSE_TOML += MORE


def _sorted(rows):
    return sorted((tuple(r) for r in rows), key=lambda r: tuple((v is None, str(v)) for v in r))


def _body(view_sql: str) -> str:
    return view_sql.split(" as\n", 1)[1].rstrip().rstrip(";")


@pytest.fixture
def people(tmp_path):
    loader = Loader("duckdb", tmp_path)
    data = make_rows(400)
    loader.load("people", data, {ID: "bigint", AGE: "bigint", INCOME: "double", "savings": "double"})
    return loader.source, data


def _release(source, table, names, toml=COMPOSE_TOML):
    con = duckdb.connect(source, read_only=True)
    try:
        return _sorted(con.sql(_body(emit_sql(source, treatments=toml, table=table, apply=names))).fetchall())
    finally:
        con.close()


@pytest.mark.parametrize("chain", CHAINS, ids="+".join)
def test_chain_equals_second_treatment_over_the_stored_first_release(people, chain):
    source, _ = people
    first, second = chain
    body = _body(emit_sql(source, treatments=COMPOSE_TOML, table="people", apply=[first]))
    con = duckdb.connect(source)
    try:
        con.execute(f"create table first_release as {body}")
    finally:
        con.close()
    want = _release(source, "first_release", [second])
    got = _release(source, "people", chain)
    assert len(got) == 400
    assert got == want  # exact, floats included


def test_pram_after_suppress_never_brings_a_suppressed_value_back(people):
    source, data = people
    town = list(make_rows(400)[TOWN])
    rows = _release(source, "people", ["town_suppress", "town_pram"])
    col = [r[4] for r in rows]
    assert "a" not in col
    assert col.count(None) == town.count("a")  # PRAM keeps NULL as NULL
    rows = _release(source, "people", ["town_map", "town_pram"])
    assert {r[4] for r in rows} <= {"a", "bc", "d", "é"}


def test_posterior_odds_use_the_treated_frequencies(people):
    source, _ = people
    r = qar_sql.whatif(
        source,
        table="people",
        treatments=COMPOSE_TOML,
        qid=["town"],
        risk=False,
        loss=False,
        combine=[["town_suppress", "town_pram"]],
        only=["town_suppress+town_pram"],
    )
    odds = dict(r.scenarios[1].posterior_odds[0][2])
    treated = Counter(v for v in make_rows(400)[TOWN] if v is not None and v != "a")
    total = sum(treated.values())
    assert set(odds) == set(treated)
    for value, n in treated.items():
        assert odds[value] == pytest.approx(0.5 + 0.5 * n / total, abs=1e-12)


def test_noise_after_top_coding_takes_the_coded_columns_sd(people):
    source, _ = people
    ages = make_rows(400)[AGE]
    coded = [min(a, 60) for a in ages if a is not None]
    db, relation = open_source(source, table="people")
    with db:
        binder = Binder(db, relation.sql, relation.columns, load(COMPOSE_TOML), key=ID)
        t = binder.plan.get("age_noise")
        stats, kinds, _ = binder.stage(["age_top"], t)
        sds, _ = stats.noise_params(t.columns, dict(t.options))
        assert sds[0] == pytest.approx(0.5 * statistics.stdev(coded), rel=1e-12)
        original, _ = binder.perturb.noise_params(t.columns, dict(t.options))
        assert original[0] == pytest.approx(0.5 * statistics.stdev([a for a in ages if a is not None]), rel=1e-12)
        assert sds[0] < original[0]


def test_local_mdav_after_top_coding_groups_only_the_source_singletons(people):
    source, data = people
    rows = _release(source, "people", ["income_top", "mdav_local"])
    key = Counter(zip(data[AGE], data[TOWN]))
    singles = {data[ID][i] for i in range(400) if key[(data[AGE][i], data[TOWN][i])] == 1}
    coded = {
        data[ID][i]: (data[AGE][i], None if data[INCOME][i] is None else min(data[INCOME][i], 60000))
        for i in range(400)
    }
    changed = {r[0] for r in rows if (r[2], r[3]) != coded[r[0]]}
    assert len(changed) > 10 and changed <= singles


def test_a_perturbative_treatment_of_a_column_a_band_made_text_is_refused_there(people):
    source, _ = people
    toml = COMPOSE_TOML + '\n[treatments.age_noise2]\ncolumn = "age y"\nkind = "noise"\nsd = 0.1\n'
    with pytest.raises(TreatmentError, match=r"age_noise2.*holds text values here"):
        emit_sql(source, treatments=toml, table="people", apply=["age_bands", "age_noise2"])


def test_compare_and_report_release_composes_the_same_way(people):
    """compare/report --treatments build the release over a base carrying copies of the
    original columns (another code path than emit_sql); same rows."""
    from qar_sql.comparison.tables import release_sql

    source, _ = people
    toml = COMPOSE_TOML.replace(
        "seed = 4242\n", 'seed = 4242\nrelease = ["town_suppress", "town_pram", "age_top", "age_noise"]\n', 1
    )
    db, rel = open_source(source, table="people")
    with db:
        runner, sql = release_sql(db, rel, load(toml), carried=[(TOWN, "town_copy")])
        cols = ", ".join(f'r."{c}"' for c in (ID, TOWN, AGE))
        got = _sorted(runner.query(f"select {cols} from ({sql}) as r"))
    want = [
        (r[0], r[4], r[2]) for r in _release(source, "people", ["town_suppress", "town_pram", "age_top", "age_noise"])
    ]
    assert got == _sorted(want)
    assert "a" not in {r[1] for r in got}


def test_suppress_then_pram_release_on_adult(shared_data, tmp_path):
    """The hostile round's case: release = ["race_suppress", "race_pram"] on adult.csv brought
    the suppressed Amer-Indian-Eskimo back."""
    toml = tmp_path / "race.toml"
    toml.write_text(
        'seed = 11\nrelease = ["race_suppress", "race_pram"]\n'
        '[treatments.race_suppress]\ncolumn = "race"\nkind = "suppress"\nvalues = ["Amer-Indian-Eskimo"]\n'
        '[treatments.race_pram]\ncolumn = "race"\nkind = "pram"\nretention = 0.5\n',
        encoding="utf-8",
    )
    csv = str(shared_data / "arx" / "adult.csv")
    con = duckdb.connect()
    got = dict(
        con.sql(f"select race, count(*) from ({_body(emit_sql(csv, treatments=str(toml)))}) group by race").fetchall()
    )
    source = dict(con.sql(f"select race, count(*) from read_csv('{csv}', delim = ';') group by race").fetchall())
    assert "Amer-Indian-Eskimo" not in got
    assert got[None] == source["Amer-Indian-Eskimo"] + source.get(None, 0)
    assert sum(got.values()) == sum(source.values())
