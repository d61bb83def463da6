"""The unique measure (θ = S/L, ``--theta unique``) and the sensitivity of T̂ against a
brute-force oracle: S counted with ``collections.Counter`` over every p-subset of the rows, the
tail fitted by an independent plain-Python estimator (numpy's type-8 quantile, the PWM moments
written out, the closed form of T̂), not by qar_sql.stats.evt. Leave-one-column-out, T̂ at p ± 1
and the nested row subsamples likewise, on DuckDB and PostgreSQL (the ``engine`` fixture) and,
through tests/engines/test_conformance.py, on every engine."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pytest

import qar_sql
from qar_sql.pushdown.insql import risk_in_database
from tests.measures.test_audit import HOSTILE_TABLE, as_columns, oracle, random_table

REL = 1e-12


def oracle_tail(theta: list[float], rows: int, *, alpha: float, pi_u: float) -> float | None:
    """T̂ of a θ-vector, written out independently: clip to [0.5/L, 1 − 0.5/L]; u the type-8
    (1 − π_u) quantile (numpy's median_unbiased); excesses of logit θ over logit u; the PWM
    fit with plotting positions; T̂ = expit(logit u + β/ξ·((α/π_u)^−ξ − 1)). None: no tail."""
    lo, hi = 0.5 / rows, 1 - 0.5 / rows
    t = [min(max(x, lo), hi) for x in theta]
    u = float(np.quantile(t, 1 - pi_u, method="median_unbiased"))
    x = sorted(math.log(v / (1 - v)) - math.log(u / (1 - u)) for v in t if v > u)
    n = len(x)
    if n == 0:
        return None
    a0 = sum(x) / n
    a1 = sum((1 - (k + 1 - 0.35) / n) * xk for k, xk in enumerate(x)) / n
    xi = 2 - a0 / (a0 - 2 * a1)
    beta = 2 * a0 * a1 / (a0 - 2 * a1)
    y = math.log(u / (1 - u)) + beta / xi * ((alpha / pi_u) ** (-xi) - 1)
    return 1 / (1 + math.exp(-y))


def unique_theta(rows: list[tuple], combos) -> list[float]:
    """S(j)/L by brute force: records whose value combination occurs once on each QI."""
    out = []
    for combo in combos:
        counts = Counter(tuple(r[i] for i in combo) for r in rows)
        out.append(sum(1 for c in counts.values() if c == 1) / len(rows))
    return out


def distinct_theta(rows, combos) -> list[float]:
    return [len({tuple(r[i] for i in combo) for r in rows}) / len(rows) for combo in combos]


def oracle_risk(rows, cols: list[int], p: int, measure: str, *, alpha: float, pi_u: float) -> float | None:
    combos = list(itertools.combinations(cols, p))
    theta = unique_theta(rows, combos) if measure == "unique" else distinct_theta(rows, combos)
    return oracle_tail(theta, len(rows), alpha=alpha, pi_u=pi_u)


def close(got, want):
    if want is None:
        assert got is None
    else:
        assert got == pytest.approx(want, rel=REL, abs=0)


#: (seed, rows, p, α, π_u): tables with a tail on both measures and some S = 0 (the last: no tail of S/L)
PARAMS = [
    (1, 60, 2, 0.01, 0.1),
    (3, 40, 3, 0.01, 0.05),
    (5, 120, 3, 0.02, 0.1),
    (7, 30, 1, 0.05, 0.3),
    (2, 40, 3, 0.01, 0.05),
]


def check_unique(loader, seed, n_rows, p, alpha, pi_u):
    names, rows, types = random_table(seed, n_rows)
    source, table = loader.load(HOSTILE_TABLE, as_columns(names, rows), types)
    r = qar_sql.audit(source, table=table, p=p, alpha=alpha, pi_u=pi_u, theta="unique", bootstrap=0)
    assert r.measure == "unique" and r.unique is not None and r.unique.fit == r.fit
    # the counts the fit read: S per QI, as the oracle counts them
    assert [q.singletons for q in r.qis] == [q["singletons"] for q in oracle(rows, p)]
    every = list(range(len(names)))
    close(r.risk, oracle_risk(rows, every, p, "unique", alpha=alpha, pi_u=pi_u))
    # leave-one-column-out: the oracle audits the table without the column
    assert (r.leave_one_column_out is None) == (r.risk is None)
    for c in r.leave_one_column_out or ():
        rest = [i for i in every if names[i] != c.column]
        want = oracle_risk(rows, rest, p, "unique", alpha=alpha, pi_u=pi_u) if len(rest) >= p else None
        if c.risk is None:
            assert c.reason
            if want is not None:  # only N_p too small for π_u gives no number with a tail
                assert "too few" in c.reason
        else:
            close(c.risk, want)
    # the distinct measure of the same run is untouched; the report's both
    d = qar_sql.audit(source, table=table, p=p, alpha=alpha, pi_u=pi_u, bootstrap=0)
    assert d.measure == "distinct" and d.unique is None
    close(d.risk, oracle_risk(rows, every, p, "distinct", alpha=alpha, pi_u=pi_u))
    return source, table, names, rows


@pytest.mark.parametrize("seed,n_rows,p,alpha,pi_u", PARAMS)
def test_unique_measure_equals_oracle(engine, seed, n_rows, p, alpha, pi_u):
    check_unique(engine, seed, n_rows, p, alpha, pi_u)


def test_the_cases_have_singletons_and_qis_without():
    """The tables above exercise S = 0 (clipped to half a record), tails, and no tail."""
    zeros = tails = 0
    for seed, n_rows, p, alpha, pi_u in PARAMS:
        names, rows, _ = random_table(seed, n_rows)
        theta = unique_theta(rows, list(itertools.combinations(range(len(names)), p)))
        zeros += min(theta) == 0
        tails += oracle_tail(theta, n_rows, alpha=alpha, pi_u=pi_u) is not None
    assert zeros >= 1 and tails == len(PARAMS) - 1


def test_sensitivity_by_p_equals_oracle(engine):
    seed, n_rows, p, alpha, pi_u = 5, 120, 3, 0.02, 0.1
    names, rows, types = random_table(seed, n_rows)
    source, table = engine.load(HOSTILE_TABLE, as_columns(names, rows), types)
    every = list(range(len(names)))
    for measure in ("distinct", "unique"):
        r = qar_sql.audit(source, table=table, p=p, alpha=alpha, pi_u=pi_u, theta=measure, sensitivity=True)
        got = dict(r.risk_by_p)
        assert set(got) == {p - 1, p + 1}
        for q in (p - 1, p + 1):
            close(got[q], oracle_risk(rows, every, q, measure, alpha=alpha, pi_u=pi_u))


def test_in_database_statement_of_the_unique_measure(engine):
    """The one-statement audit (the dbt package's SQL) with theta = 'unique' equals the oracle."""
    seed, n_rows, p, alpha, pi_u = 2, 40, 3, 0.01, 0.05
    names, rows, types = random_table(seed, n_rows)
    source, table = engine.load(HOSTILE_TABLE, as_columns(names, rows), types)
    got = risk_in_database(source, table=table, columns=names, p=p, alpha=alpha, pi_u=pi_u, theta="unique")
    close(got.risk, oracle_risk(rows, list(range(len(names))), p, "unique", alpha=alpha, pi_u=pi_u))


def test_row_subsamples_are_nested_and_audited_as_tables(engine, tmp_path):
    """Nested: the rows of the 25% subsample are among the 50%'s (as multisets); each T̂ is the
    audit of its rows loaded as a table of their own (checked by the oracle)."""
    from qar_sql.engines.source import session_of
    from qar_sql.measures.audit import sample_relation

    if engine.name == "sqlite":
        pytest.skip("SQLite has no hash function: --row-subsamples is refused there")
    names, rows, types = random_table(5, 120)
    source, table = engine.load(HOSTILE_TABLE, as_columns(names, rows), types)
    r = qar_sql.audit(source, table=table, p=2, pi_u=0.1, row_subsamples=(0.25, 0.5))
    assert [(x.rows, x.share) for x in r.risk_by_rows] == [(30, 0.25), (60, 0.5), (120, 1.0)]
    assert r.risk_by_rows[-1].risk == r.risk
    with session_of(source, table=table) as s:
        got = {n: s.db.query(f"select * from {sample_relation(s.db, s.relation, names, n).sql} as x") for n in (30, 60)}
    small, large = Counter(map(_key, got[30])), Counter(map(_key, got[60]))
    assert not small - large and sum(small.values()) == 30 and sum(large.values()) == 60
    again = qar_sql.audit(source, table=table, p=2, pi_u=0.1, row_subsamples=(0.25,))
    assert again.risk_by_rows[0] == r.risk_by_rows[0]  # the same rows on every run
    for x, n in zip(r.risk_by_rows[:2], (30, 60)):
        sample = [tuple(_value(v) for v in row) for row in got[n]]
        close(x.risk, oracle_risk(sample, list(range(len(names))), 2, "distinct", alpha=0.01, pi_u=0.1))


def _value(v):
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else v


def _key(row):
    return tuple(repr(_value(v)) for v in row)


def test_cli_names_the_measure_and_judges_it(tmp_path):
    """--theta unique: JSON risk is T̂ of S/L with theta = "unique" and risk_unique; without it
    theta = "distinct" and no risk_unique; --fail-above judges the measure named; bad values
    are one sentence and exit 2."""
    import json

    from click.testing import CliRunner
    from conftest import Loader

    from qar_sql.cli.main import cli

    names, rows, types = random_table(5, 120)
    source, table = Loader("duckdb", tmp_path).load("t", as_columns(names, rows), types)
    base = ["audit", source, "--table", table, "-p", "3", "--pi-u", "0.1", "--alpha", "0.02", "-q"]
    plain = json.loads(CliRunner().invoke(cli, [*base, "-f", "json"]).output)
    assert plain["theta"] == "distinct" and "risk_unique" not in plain
    assert set(plain["leave_one_column_out"]) == set(names) and plain["leave_one_column_out_reasons"] == {}
    out = CliRunner().invoke(cli, [*base, "--theta", "unique", "-f", "json"])
    d = json.loads(out.output)
    want = oracle_risk(rows, list(range(len(names))), 3, "unique", alpha=0.02, pi_u=0.1)
    assert d["theta"] == "unique" and d["risk"] == d["risk_unique"] == pytest.approx(want, rel=REL)
    assert d["risk"] < plain["risk"]
    between = f"{(d['risk'] + plain['risk']) / 2:.6f}"
    assert CliRunner().invoke(cli, [*base, "--fail-above", between]).exit_code == 1
    assert CliRunner().invoke(cli, [*base, "--theta", "unique", "--fail-above", between]).exit_code == 0
    text = CliRunner().invoke(cli, [*base, "--theta", "unique"]).output
    assert "singles out" in text and "T̂ without each column" in text
    bad = CliRunner().invoke(cli, [*base, "--theta", "singled"])
    assert bad.exit_code == 2 and "singled" in bad.output
    for value, word in (("0.5,x", "'x'"), ("1.5", "1.5")):
        bad = CliRunner().invoke(cli, [*base, "--row-subsamples", value])
        assert bad.exit_code == 2 and word in bad.output and "Traceback" not in bad.output


def test_row_subsamples_are_refused_on_sqlite(tmp_path):
    from conftest import cleaned_up
    from engine_registry import open_engine

    names, rows, types = random_table(5, 60)
    for eng in cleaned_up(open_engine("sqlite", tmp_path)):
        source, table = eng.load("t", names, rows, types)
        assert qar_sql.audit(source, table=table, p=2, pi_u=0.1).risk is not None  # the table reads
        with pytest.raises(qar_sql.QarError, match="hash function"):
            qar_sql.audit(source, table=table, p=2, pi_u=0.1, row_subsamples=(0.5,))
