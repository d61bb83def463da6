"""Tests of the synthetic demo population (qar_sql.demo)."""

from __future__ import annotations

import duckdb
import numpy as np
import pytest

from qar_sql.demo import DEMO_COLUMNS, generate_population, write_population
from qar_sql.errors import ParameterError, UsageError

N = 20_000
DEGREES = {"Bachelor's degree", "Master's degree", "Doctorate"}
INT_COLUMNS = ("age", "household_size", "number_of_children")
NULLABLE = ("occupation", "income_band", "ethnicity")
TABLES = "select table_name from information_schema.tables"


@pytest.fixture(scope="module")
def pop() -> dict[str, np.ndarray]:
    return generate_population(N, seed=7)


def _same(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> bool:
    return a.keys() == b.keys() and all(a[k].tolist() == b[k].tolist() for k in a)


def test_demo_columns_are_plain_lowercase_qis():
    assert "person_id" not in DEMO_COLUMNS
    assert len(DEMO_COLUMNS) == len(set(DEMO_COLUMNS))
    assert 12 <= len(DEMO_COLUMNS) <= 14
    for name in DEMO_COLUMNS:
        assert name.isascii() and name == name.lower() and name.replace("_", "").isalpha()
    assert {"age", "sex", "postcode", "region"} <= set(DEMO_COLUMNS)
    assert not {"year_of_birth", "date_of_birth"} & set(DEMO_COLUMNS)


def test_columns_rows_and_types(pop):
    assert list(pop) == ["person_id", *DEMO_COLUMNS]
    for values in pop.values():
        assert isinstance(values, np.ndarray)
        assert values.shape == (N,)
    assert pop["person_id"].tolist() == list(range(1, N + 1))
    for name in INT_COLUMNS:
        assert np.issubdtype(pop[name].dtype, np.integer), name
    for name in set(DEMO_COLUMNS) - set(INT_COLUMNS):
        assert pop[name].dtype == object, name
        assert all(v is None or (isinstance(v, str) and v) for v in pop[name]), name
    assert pop["age"].min() >= 0 and pop["age"].max() <= 99
    assert pop["household_size"].min() >= 1
    assert pop["number_of_children"].min() >= 0


def test_deterministic_for_a_seed():
    a = generate_population(3_000, seed=123)
    b = generate_population(3_000, seed=123)
    assert _same(a, b)
    c = generate_population(3_000, seed=124)
    assert not _same(a, c)
    assert a["age"].tolist() != c["age"].tolist()
    assert a["postcode"].tolist() != c["postcode"].tolist()


def test_default_size_and_small_n():
    assert len(generate_population()["age"]) == 100_000
    one = generate_population(1, seed=0)
    assert all(len(v) == 1 for v in one.values())


@pytest.mark.parametrize("n", [0, -5, 2.5, "10", True, None])
def test_bad_n_is_a_parameter_error(n):
    with pytest.raises(ParameterError):
        generate_population(n)


@pytest.mark.parametrize("seed", [-1, 1.5, "x", None])
def test_bad_seed_is_a_parameter_error(seed):
    with pytest.raises(ParameterError):
        generate_population(10, seed=seed)


def test_children_have_no_degree_no_spouse_no_children_no_job(pop):
    child = pop["age"] < 16
    assert child.sum() > 0.1 * N
    assert not any(e in DEGREES for e in pop["education"][child])
    assert set(pop["marital_status"][child]) == {"Never married"}
    assert pop["number_of_children"][child].max() == 0
    assert set(pop["employment_status"][child]) == {"Child"}
    assert set(pop["occupation"][child]) == {"Child"}
    assert set(pop["income_band"][child]) == {"No income"}
    assert pop["household_size"][child].min() >= 2
    # Degrees need the years to earn them.
    deg = np.isin(pop["education"], list(DEGREES))
    assert pop["age"][deg].min() >= 21
    assert pop["age"][pop["education"] == "Doctorate"].min() >= 26


def test_region_is_a_function_of_postcode(pop):
    pairs = set(zip(pop["postcode"].tolist(), pop["region"].tolist()))
    postcodes = {p for p, _ in pairs}
    assert len(pairs) == len(postcodes)
    assert 150 <= len(postcodes) <= 600
    assert 8 <= len(set(pop["region"])) <= 15
    # The same postcode lies in the same region whatever the seed.
    other = generate_population(5_000, seed=99)
    region_of = dict(pairs)
    for p, r in zip(other["postcode"].tolist(), other["region"].tolist()):
        if p in region_of:
            assert region_of[p] == r


def test_postcode_sizes_are_skewed(pop):
    _, counts = np.unique(pop["postcode"], return_counts=True)
    counts = np.sort(counts)[::-1]
    assert counts[0] > 10 * counts[-1]
    assert counts[: len(counts) // 10].sum() > 0.25 * N


def test_marginals_are_realistic(pop):
    age = pop["age"]
    assert 35 <= age.mean() <= 45
    assert (age >= 85).mean() < 0.05
    cob = pop["country_of_birth"]
    domestic, rare = (cob == "United Kingdom").mean(), len(set(cob))
    assert 0.75 <= domestic <= 0.95 and rare >= 20
    female = (pop["sex"] == "Female").mean()
    assert 0.48 <= female <= 0.54
    old = age >= 85
    assert (pop["sex"][old] == "Female").mean() > 0.55
    assert (pop["marital_status"][old] == "Widowed").mean() > 0.3
    retired = pop["employment_status"] == "Retired"
    assert age[retired].min() >= 50 and (retired[age >= 75]).mean() > 0.9
    assert set(pop["occupation"][retired]) <= {"Retired", None}


def test_income_follows_occupation(pop):
    bands = "No income|Under 10k|10k-20k|20k-30k|30k-45k|45k-60k|60k-90k|90k-150k|150k and over".split("|")
    rank = {b: i for i, b in enumerate(bands)}

    def median_band(occupation: str) -> float:
        sel = (pop["occupation"] == occupation) & np.not_equal(pop["income_band"], None)
        return float(np.median([rank[b] for b in pop["income_band"][sel]]))

    assert set(pop["income_band"]) - {None} <= set(bands)
    assert median_band("Managers and directors") > median_band("Elementary occupations")
    assert median_band("Professionals") > median_band("Service and sales workers")


def test_nulls_where_intended(pop):
    for name in NULLABLE:
        share = np.equal(pop[name], None).mean()
        assert 0.003 <= share <= 0.05, (name, share)
    for name in set(DEMO_COLUMNS) - set(NULLABLE) - set(INT_COLUMNS):
        assert not np.equal(pop[name], None).any(), name


def test_write_population_creates_table():
    con = duckdb.connect(":memory:")
    write_population(con, n=5_000, seed=3)
    assert con.execute("select count(*) from population").fetchall() == [(5_000,)]
    cols = [r[0] for r in con.execute("describe population").fetchall()]
    assert cols == ["person_id", *DEMO_COLUMNS]
    types = dict(
        con.execute(
            "select column_name, data_type from information_schema.columns where table_name = 'population'"
        ).fetchall()
    )
    assert types["age"] == "INTEGER" and types["postcode"] == "VARCHAR"
    nulls = con.execute(
        "select count(*) filter (income_band is null), "
        "count(*) filter (occupation is null), "
        "count(*) filter (postcode is null) from population"
    ).fetchall()[0]
    assert nulls[0] > 0 and nulls[1] > 0 and nulls[2] == 0
    # Same rows as generate_population, NULLs included.
    ref = generate_population(5_000, seed=3)
    sql = "select income_band, age, postcode from population order by person_id"
    got = con.execute(sql).fetchall()
    assert [r[0] for r in got] == ref["income_band"].tolist()
    assert [r[1] for r in got] == ref["age"].tolist()
    assert [r[2] for r in got] == ref["postcode"].tolist()
    # Replaces an existing table, and leaves no helper view behind.
    write_population(con, n=100, seed=3)
    assert con.execute("select count(*) from population").fetchall() == [(100,)]
    names = {r[0] for r in con.execute(TABLES).fetchall()}
    assert names == {"population"}


HOSTILE = ['we"ird; name', 'x"; drop table keep; --', "Population Table", "ü"]


@pytest.mark.parametrize("name", HOSTILE)
def test_write_population_quotes_hostile_names(name):
    con = duckdb.connect()
    con.execute("create table keep (a int)")
    write_population(con, table=name, n=50, seed=1)
    quoted = '"' + name.replace('"', '""') + '"'
    assert con.execute(f"select count(*) from {quoted}").fetchall() == [(50,)]
    names = {r[0] for r in con.execute(TABLES).fetchall()}
    assert names == {"keep", name}


@pytest.mark.parametrize("name", ["", None, 5])
def test_write_population_rejects_bad_table_names(name):
    with pytest.raises(UsageError):
        write_population(duckdb.connect(), table=name, n=10)
