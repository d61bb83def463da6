"""Real public data: ARX's adult census extract and the Valle d'Aosta driver-licence register
(``../shared/data``; skipped with the reason when absent). DuckDB reads each CSV in place and
PostgreSQL gets the same rows (conftest ``Loader.load_csv``); both audits must be identical, and
the driver-licence QID of Pastore et al. must give the paper's counts."""

from __future__ import annotations

import csv

import duckdb
import pytest
from conftest import SHARED_DATA, Loader, quote

import qar_sql
from tests.measures.test_audit import oracle

ADULT = "arx/adult.csv"
DRIVER = "driver_license/driverLicense_ValleAosta.csv"
# A modest subset, in file order, so p = 3 stays quick on PostgreSQL (87k rows, C(6, 3) = 20
# QIs): year of birth, municipality and sex (Pastore's QID), foreign birth country (NULL for
# 92 % of rows), licence category and licence points.
DRIVER_COLUMNS = [
    "anno_nascita",
    "comune_residenza",
    "stato_estero_nascita",
    "sesso",
    "categoria_patente",
    "punti_patente",
]


def assert_same(a, b):
    """Identical per-QI counts; T̂ and the fit to 1e-12 relative."""
    assert (a.rows, a.columns, a.n_qi) == (b.rows, b.columns, b.n_qi)
    assert [(q.columns, q.distinct, q.singletons, q.min_class_size, q.class_sizes) for q in a.qis] == [
        (q.columns, q.distinct, q.singletons, q.min_class_size, q.class_sizes) for q in b.qis
    ]
    assert (a.fit is None) == (b.fit is None)
    if a.fit is not None:
        for name in ("risk", "u", "xi", "beta"):
            assert getattr(a.fit, name) == pytest.approx(getattr(b.fit, name), rel=1e-12, abs=0), name
        assert a.fit.n_exceedances == b.fit.n_exceedances
    assert a.warnings == b.warnings


@pytest.fixture(scope="module")
def adult_duckdb():
    if not SHARED_DATA.is_dir():
        pytest.skip(f"{SHARED_DATA} is absent (the shared public datasets are not on this machine)")
    return qar_sql.audit(str(SHARED_DATA / ADULT), p=3)  # the ';' delimiter is detected


def test_adult_duckdb_equals_python_oracle(shared_data, adult_duckdb):
    path = shared_data / ADULT
    result = adult_duckdb
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.reader(f, delimiter=";")
        names = next(reader)
        rows = [tuple(v if v != "" else None for v in row) for row in reader]
    assert list(result.columns) == names and "marital-status" in names  # hyphenated names
    assert result.rows == len(rows) == 30162 and result.n_qi == 84
    # every third QI keeps the pure-Python count under a second
    only = set(range(0, 84, 3))
    for got, want in zip(result.qis[::3], oracle(rows, 3, only), strict=True):
        assert got.columns == tuple(names[i] for i in want["combo"])
        assert (got.distinct, got.singletons, got.class_sizes) == (
            want["distinct"],
            want["singletons"],
            want["class_sizes"],
        )
    assert result.fit is not None and 0 < result.risk < 1


def test_adult_duckdb_equals_postgresql(shared_data, adult_duckdb, pg, tmp_path):
    path = shared_data / ADULT
    duck = adult_duckdb
    loader = Loader("postgresql", tmp_path)
    try:
        source, table = loader.load_csv("adult", path, delimiter=";")
        # one statement per connection: each PostgreSQL statement re-derives the codes
        pgres = qar_sql.audit(source, table=table, p=3, jobs=2, batch_size=42)
    finally:
        loader.cleanup()
    assert_same(duck, pgres)


def test_driver_licence_duckdb_equals_postgresql(shared_data, pg, tmp_path):
    path = shared_data / DRIVER
    duck = qar_sql.audit(str(path), columns=DRIVER_COLUMNS, p=3)
    assert duck.rows == 87642 and duck.n_qi == 20
    # PostgreSQL gets the audited columns only (the whole file takes seconds to load), taken
    # from the file by DuckDB's reader, so the values are the ones DuckDB audited.
    subset = tmp_path / "driver_subset.csv"
    con = duckdb.connect()
    columns = ", ".join(quote(c) for c in DRIVER_COLUMNS)
    con.execute(
        f"copy (select {columns} from read_csv('{path}', header = true, nullstr = '')) "
        f"to '{subset}' (format csv, header true)"
    )
    con.close()
    loader = Loader("postgresql", tmp_path)
    try:
        source, table = loader.load_csv("driver licence", subset)
        pgres = qar_sql.audit(source, table=table, columns=DRIVER_COLUMNS, p=3, jobs=2, batch_size=10)
    finally:
        loader.cleanup()
    assert_same(duck, pgres)


def test_driver_licence_reproduces_pastore_table_1(shared_data, tmp_path):
    """METHOD §5: rows with an empty year of birth or sex dropped, QID (year of birth, sex,
    municipality): 87,464 rows, 9,174 distinct values, 1,684 singletons."""
    path = shared_data / DRIVER
    db = str(tmp_path / "licences.duckdb")
    con = duckdb.connect(db)
    con.execute(
        f"create table {quote('licences')} as select * from read_csv('{path}', header = true, "
        "nullstr = '') where anno_nascita is not null and sesso is not null"
    )
    con.close()
    result = qar_sql.audit(db, table="licences", columns=DRIVER_COLUMNS, p=3)
    qid = next(q for q in result.qis if q.columns == ("anno_nascita", "comune_residenza", "sesso"))
    assert (result.rows, qid.distinct, qid.singletons) == (87464, 9174, 1684)
    assert round(100 * qid.singletons / result.rows, 2) == 1.93


def _adult_histogram(shared_data, columns):
    import numpy as np

    cols = ", ".join(quote(c) for c in columns)
    rows = duckdb.sql(
        f"select n, count(*) from (select count(*) as n from read_csv('{shared_data / ADULT}', delim = ';', "
        f"header = true) group by {cols}) group by n order by n"
    ).fetchall()
    return np.array([r[0] for r in rows]), np.array([r[1] for r in rows], dtype=float)


def test_adult_pitman_on_its_parameter_space(shared_data):
    """ARX's Pitman root for adult (sex, age) at sampling fraction 0.01 is θ = 135.72,
    α = −1.003: α < 0 with θ/(−α) not a whole number, so θ + (K − 1)α < 0 and the likelihood
    is undefined there (Hoshino 2001: 0 ≤ α < 1, θ > −α, or α < 0 with θ = −mα). The valid
    maximum lies on θ = −mα; Dankar's rule takes it. For (race, marital-status) ARX finds no
    root (NaN) though the likelihood has a valid maximum."""
    import math

    from qar_sql.stats import pitman, population

    sizes, counts = _adult_histogram(shared_data, ["sex", "age"])
    n, u = int(sizes @ counts), int(counts.sum())
    N = population.population_size(n, sampling_fraction=0.01)
    theta, alpha = population.pitman_root(sizes, counts)
    assert (round(theta, 2), round(alpha, 3)) == (135.72, -1.003)
    assert not pitman.valid(theta, alpha, u) and theta + (u - 1) * alpha < 0
    res = population.population_uniqueness(sizes, counts, N)
    assert res.pitman_arx == pytest.approx(1.9477564685e-9, rel=1e-6)  # ARX's figure, kept
    assert res.pitman_alpha < 0 and pitman.valid(res.pitman_theta, res.pitman_alpha, u)
    m = -res.pitman_theta / res.pitman_alpha
    assert m == pytest.approx(round(m), abs=1e-6)
    assert res.dankar_model == "pitman" and res.dankar == res.pitman != res.pitman_arx
    fit = pitman.fit(sizes, counts, N)
    lik = pitman.Likelihood(sizes, counts)
    for a in (0.0, 0.2, 0.5, 0.9):  # nothing on the α ≥ 0 part does better
        assert max(lik(t - a, a) for t in [10.0**k for k in range(-3, 6)]) < fit.loglik
    for mm in range(u, u + 40):  # nor a neighbouring number of classes
        assert max(lik.finite_classes(mm, b) for b in [0.01 * 1.2**k for k in range(60)]) <= fit.loglik + 1e-7

    sizes, counts = _adult_histogram(shared_data, ["race", "marital-status"])
    assert all(math.isnan(x) for x in population.pitman_root(sizes, counts)) or not pitman.valid(
        *population.pitman_root(sizes, counts), int(counts.sum())
    )
    n = int(sizes @ counts)
    res = population.population_uniqueness(sizes, counts, population.population_size(n, sampling_fraction=0.01))
    assert res.pitman_arx is None  # ARX: unavailable
    assert res.pitman is not None and res.pitman > 0 and res.dankar_model == "pitman"
