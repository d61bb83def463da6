"""The portable pseudo-random function (qar_sql/treat/prng.py).

* The SQL is the numpy reference bit for bit on DuckDB and PostgreSQL: lanes, uniforms and
  AS241 normal deviates of ids that include negatives, the int64 extremes and multiples of the
  moduli.
* The normal deviates agree with mpmath's exact Φ⁻¹ to 1e-14 (deep tails included).
* Statistical checks on 10^6 consecutive ids (the hard case for a counter-based generator):
  uniformity, differences of neighbouring draws, pairs of consecutive draws, independence of
  streams and of neighbouring seeds — chi-square p-values above 1e-4. Reducing ROUNDS to 2
  fails the difference test (checked when the round count was chosen).
"""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
from scipy import stats

from qar_sql.engines.dialects import Dialect, get_dialect
from qar_sql.engines.render import render
from qar_sql.treat import prng
from qar_sql.treat.perturb import Layer

IDS = np.concatenate(
    [
        np.arange(-300, 3000),
        [2**62, -(2**62), 2**63 - 1, -(2**63) + 1, prng.P, prng.Q, prng.P * prng.Q, 2 * prng.P - 1],
    ]
)


def _dialect(name: str) -> Dialect:
    """The registered dialect; SQLite and ClickHouse, which spell this SQL the portable way, as a
    bare Dialect of that name where this checkout has not registered them yet (issue 12)."""
    try:
        return get_dialect(name, strict=True)
    except Exception:
        if name == "mysql":
            pytest.skip("the MariaDB dialect (CAST to double, not double precision) is not registered here")
        return Dialect(name)


def _sql(dialect_name: str, table: str) -> str:
    d = _dialect(dialect_name)
    a = prng.Arith(d)
    la, lb = prng.lane_exprs(a, "t.id")
    layers = [Layer("l0", table, ("id",), (("qar__a", la), ("qar__b", lb)))]
    prev = "l0"
    streams = [prng.make_stream("x", 987654321, "noise\x00col"), prng.make_stream("y", 987654321, "other")]
    cols: list = []
    for j, cols in enumerate(prng.round_layers(a, streams), 1):
        layers.append(Layer(f"r{j}", prev, ("id",), tuple(cols)))
        prev = f"r{j}"
    keep = ["id"] + [c for c, _ in cols]
    normal, z = prng.normal_layers(a, "t.qar__r_x", "x")
    for j, cols in enumerate(normal, 1):
        layers.append(Layer(f"n{j}", prev, tuple(keep), tuple(cols)))
        prev = f"n{j}"
        keep = keep + [c for c, _ in cols]
    body = render("perturb_layers.sql", d, layers=layers, fence=a.fence)
    return (
        f"with {body} select t.id, t.qar__l_x, t.qar__r_x, {prng.uniform_sql(a, 't.qar__r_x')}, "
        f"t.{z}, t.qar__r_y from {prev} as t order by t.id"
    )


def _reference():
    order = np.argsort(IDS)
    left, right = prng.draw(IDS, 987654321, "noise\x00col")
    _, right_y = prng.draw(IDS, 987654321, "other")
    return [
        IDS[order],
        left[order],
        right[order],
        prng.uniform(right)[order],
        prng.normal(right)[order],
        right_y[order],
    ]


@pytest.mark.parametrize("engine_name", ["duckdb", "postgresql"])
def test_sql_matches_reference_bit_for_bit(engine_name, request):
    if engine_name == "duckdb":
        import duckdb

        con = duckdb.connect()
        con.execute("create table ids (id bigint)")
        con.executemany("insert into ids values (?)", [(int(i),) for i in IDS])
        rows = con.execute(_sql("duckdb", "ids")).fetchall()
    else:
        from tests.conftest import require_postgres

        eng = require_postgres()
        with eng.connect() as c:
            c.exec_driver_sql("create temp table ids (id bigint)")
            raw = c.connection.driver_connection
            with raw.cursor().copy("copy ids from stdin") as cp:
                for i in IDS:
                    cp.write_row((int(i),))
            rows = c.exec_driver_sql(_sql("postgresql", "ids"), execution_options={"no_parameters": True}).fetchall()
            c.rollback()
    _same_as_reference(rows)


def _same_as_reference(rows) -> None:
    got = list(zip(*rows))
    for column, (g, ref) in enumerate(zip(got, _reference())):
        g = np.array([float(v) for v in g]) if ref.dtype.kind == "f" else np.array([int(v) for v in g], dtype=np.int64)
        mismatch = np.flatnonzero(g != ref)
        assert mismatch.size == 0, (column, IDS[np.argsort(IDS)][mismatch[:3]], g[mismatch[:3]], ref[mismatch[:3]])


def test_sqlite_matches_reference_bit_for_bit():
    """The integer arithmetic never leaves [0, 2^62) (no 64-bit wraparound to rely on), so SQLite,
    whose integers turn into floats on overflow, computes the same draws; its fence
    (``limit -1 offset 0``) keeps the layers from being flattened into an exponential tree."""
    import sqlite3

    con = sqlite3.connect(":memory:")
    con.execute("create table ids (id integer)")
    con.executemany("insert into ids values (?)", [(int(i),) for i in IDS])
    _same_as_reference(con.execute(_sql("sqlite", "ids")).fetchall())


def test_clickhouse_matches_reference_bit_for_bit():
    """ClickHouse (embedded, chdb) promotes integer types by its own rules (UInt32 · UInt32 is
    UInt64); every value stays below 2^62, so the draws are the same."""
    chdb_session = pytest.importorskip("chdb.session", reason="chdb (embedded ClickHouse) is not installed")
    s = chdb_session.Session()
    s.query("create database if not exists qar_prng")
    s.query("create table if not exists qar_prng.ids (id Int64) engine = Memory")
    s.query("truncate table qar_prng.ids")
    s.query("insert into qar_prng.ids values " + ",".join(f"({int(i)})" for i in IDS))
    out = str(s.query(_sql("clickhouse", "qar_prng.ids"), "TabSeparated"))
    _same_as_reference([line.split("\t") for line in out.strip().splitlines()])


def test_normal_matches_exact_quantile():
    mpmath.mp.dps = 40
    rights = (
        list(range(40)) + list(range(prng.P - 40, prng.P)) + list(np.random.default_rng(7).integers(0, prng.P, 400))
    )
    z = prng.normal(np.array(rights))
    for r, value in zip(rights, z):
        u = mpmath.mpf(2 * int(r) + 1) / (2 * prng.P)
        exact = mpmath.sqrt(2) * mpmath.erfinv(2 * u - 1)
        assert abs(value - float(exact)) <= 1e-14 * max(1.0, abs(float(exact)))


def _chi2_uniform(x: np.ndarray, bins: int = 1024) -> float:
    counts = np.bincount(np.minimum((x * bins).astype(int), bins - 1), minlength=bins)
    expected = len(x) / bins
    return stats.chi2.sf(((counts - expected) ** 2 / expected).sum(), bins - 1)


def test_statistical_quality_on_consecutive_ids():
    n = 1_000_000
    ids = np.arange(n)
    left, right = prng.draw(ids, 42, "s")
    u = prng.uniform(right)
    assert _chi2_uniform(u) > 1e-4
    assert _chi2_uniform(((right[1:] - right[:-1]) % prng.P) / prng.P) > 1e-4
    assert _chi2_uniform(((left[1:] - left[:-1]) % prng.P) / prng.P) > 1e-4
    pairs, _, _ = np.histogram2d(u[:-1:2], u[1::2], bins=32)
    e = (n // 2) / 1024
    assert stats.chi2.sf(((pairs - e) ** 2 / e).sum(), 1023) > 1e-4
    _, other = prng.draw(ids, 42, "t")
    _, next_seed = prng.draw(ids, 43, "s")
    for v in (other, next_seed):
        h, _, _ = np.histogram2d(u, prng.uniform(v), bins=32)
        assert stats.chi2.sf(((h - n / 1024) ** 2 / (n / 1024)).sum(), 1023) > 1e-4
    # the 62-bit draw is uniform too (its high part is L)
    d = prng.big(left, right).astype(np.float64) / float(prng.P) ** 2
    assert _chi2_uniform(d) > 1e-4
    z = prng.normal(right)
    assert abs(z.mean()) < 5 / np.sqrt(n) and abs(z.std() - 1) < 5 / np.sqrt(2 * n)


def test_threshold_is_exact():
    assert prng.threshold(1) == prng.P**2
    assert prng.threshold(0) == 0
    assert prng.threshold(0.5) == prng.P**2 // 2


def test_mariadb_matches_reference_bit_for_bit():
    """MariaDB casts to ``double`` (no "double precision" in CAST) and merges derived tables
    unless they have a LIMIT, which is its fence. Runs where QAR_TEST_MYSQL_URL names a server
    (scripts/mariadb.sh prints it)."""
    import os

    url = os.environ.get("QAR_TEST_MYSQL_URL")
    if not url:
        pytest.skip('QAR_TEST_MYSQL_URL is unset (eval "$(bash scripts/mariadb.sh)" starts a local MariaDB)')
    import sqlalchemy as sa

    eng = sa.create_engine(url, poolclass=sa.pool.NullPool)
    with eng.connect() as c:
        c.exec_driver_sql("create temporary table ids (id bigint)")
        c.exec_driver_sql("insert into ids values " + ",".join(f"({int(i)})" for i in IDS))
        rows = c.exec_driver_sql(_sql("mysql", "ids"), execution_options={"no_parameters": True}).fetchall()
    _same_as_reference(rows)
