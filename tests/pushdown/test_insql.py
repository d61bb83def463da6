"""The whole QaR audit as one SQL statement (qar_sql.pushdown.insql, templates/default/insql_*.sql,
the SQL of the dbt package) against the Python estimator.

The independent computation is the oracle of test_audit_oracle: θ from ``collections.Counter``,
then ``evt.qar_risk`` in numpy. The statement's T̂ (and u, ξ̂, β̂, n) must equal it to 1e-12
relative on every oracle case, on DuckDB and PostgreSQL, including the keys that are clipped and
the case whose largest θ ties with u (no tail: NULL, never a number).
"""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import sqlglot

from qar_sql.engines.dialects import get_dialect
from qar_sql.engines.source import open_source
from qar_sql.errors import ColumnError, DataError, NoTailError, ParameterError
from qar_sql.pushdown.insql import qi_theta_sql, risk_from_row, risk_in_database, risk_sql
from qar_sql.stats import evt
from tests.measures.test_audit import HOSTILE_TABLE, PARAMS, as_columns, expected_fit, oracle, random_table

REL = 1e-12
REPO = Path(__file__).resolve().parents[2]
WAREHOUSES = ("snowflake", "bigquery", "databricks", "redshift", "trino")


def _fetch(engine, table, render):
    """Rows of the statement ``render(dialect, relation SQL)`` through qar's own connection
    (read-only, no placeholders)."""
    db, relation = open_source(engine.source, table=table)
    try:
        return db.query(render(db.dialect, relation.sql))
    finally:
        db.close()


def check_row(got, fit, n_rows, n_qi):
    assert got.rows == n_rows and got.n_qi == n_qi
    if fit is None:
        assert got.exceedances == 0 and got.risk is None and got.xi is None and got.beta is None
        return
    assert got.exceedances == fit.n_exceedances
    assert got.u == pytest.approx(fit.u, rel=REL, abs=0)
    assert got.xi == pytest.approx(fit.xi, rel=REL, abs=0)
    assert got.beta == pytest.approx(fit.beta, rel=REL, abs=0)
    assert got.risk == pytest.approx(fit.risk, rel=REL, abs=0)


@pytest.mark.parametrize("seed,n_rows,p,alpha,pi_u", PARAMS)
def test_statement_equals_oracle(engine, seed, n_rows, p, alpha, pi_u):
    names, rows, types = random_table(seed, n_rows)
    source, table = engine.load(HOSTILE_TABLE, as_columns(names, rows), types)
    qis, fit = expected_fit(names, rows, p, alpha=alpha, pi_u=pi_u)
    (row,) = _fetch(engine, table, lambda d, rel: risk_sql(d, rel, names, p, alpha=alpha, pi_u=pi_u))
    check_row(risk_from_row(row), fit, n_rows, len(qis))
    got = risk_in_database(source, table=table, columns=names, p=p, alpha=alpha, pi_u=pi_u)
    check_row(got, fit, n_rows, len(qis))
    theta = _fetch(engine, table, lambda d, rel: qi_theta_sql(d, rel, names, p))
    assert [r[0] for r in theta] == list(range(len(qis)))
    assert [r[1] for r in theta] == [", ".join(names[i] for i in q["combo"]) for q in qis]
    assert [(r[2], r[3]) for r in theta] == [(q["distinct"], q["singletons"]) for q in qis]
    assert [r[4] for r in theta] == [q["distinct"] / n_rows for q in qis]


def test_many_random_tables_duckdb(duck):
    """Forty more random tables and parameter sets (ties, keys, short tails) on DuckDB."""
    rng = random.Random(26)
    dialect = get_dialect("duckdb")
    checked = no_tail = 0
    for case in range(40):
        n_rows, p = rng.choice([12, 20, 35, 60]), rng.choice([1, 2, 3])
        names, rows, types = random_table(100 + case, n_rows, names=[f"c{i}" for i in range(rng.choice([6, 7, 8]))])
        pi_u = rng.choice([0.05, 0.1, 0.2, 0.3])
        alpha = pi_u / rng.choice([2, 5, 10, 50])
        n_qi = len(oracle(rows, p))
        try:
            evt.check_n_qi(n_qi, pi_u)
        except DataError:
            with pytest.raises(DataError, match="too small for pi_u"):
                risk_sql(dialect, "t", names, p, alpha=alpha, pi_u=pi_u)
            continue
        source, _ = duck.load(f"t{case}", as_columns(names, rows), types)
        qis, fit = expected_fit(names, rows, p, alpha=alpha, pi_u=pi_u)
        (row,) = duck.fetch(risk_sql(dialect, dialect.quote(f"t{case}"), names, p, alpha=alpha, pi_u=pi_u))
        check_row(risk_from_row(row), fit, n_rows, n_qi)
        checked += 1
        no_tail += fit is None
    assert checked >= 25 and no_tail >= 1


def test_edge_cases_duckdb(duck):
    dialect = get_dialect("duckdb")
    duck.load("empty", {"a": [], "b": [], "c": [], "d": [], "e": [], "f": []}, dict.fromkeys("abcdef", "bigint"))
    duck.load("one", {c: [1] for c in "abcdef"})
    # a key column: every θ of a QI holding it is 1, clipped to 1 - 0.5/L
    duck.load("keys", {"id": list(range(30)), **{c: [i % 3 for i in range(30)] for c in "abcde"}})
    cols = list("abcdef")
    for table, n in (("empty", 0), ("one", 1)):
        (row,) = duck.fetch(risk_sql(dialect, table, cols, 2, pi_u=0.2))
        got = risk_from_row(row)
        assert (got.rows, got.n_qi, got.exceedances, got.risk) == (n, 15, 0, None)
    (row,) = duck.fetch(risk_sql(dialect, "keys", ["id", *"abcde"], 2, pi_u=0.2))
    theta = np.array([q["distinct"] for q in oracle([(i, *[i % 3] * 5) for i in range(30)], 2)]) / 30
    try:
        fit = evt.qar_risk(theta, 30, pi_u=0.2)
    except NoTailError:
        fit = None
    check_row(risk_from_row(row), fit, 30, 15)


def test_bad_arguments_are_one_sentence():
    d = get_dialect("duckdb")
    with pytest.raises(ParameterError, match="larger than the number"):
        risk_sql(d, "t", ["a", "b"], 3)
    with pytest.raises(DataError, match="too small for pi_u"):
        risk_sql(d, "t", list("abcde"), 2)  # N_p = 10 <= 13 at pi_u = 0.05
    with pytest.raises(ParameterError, match="alpha = 0.1 must be smaller than pi_u"):
        risk_sql(d, "t", list("abcdefgh"), 2, alpha=0.1, pi_u=0.05)
    with pytest.raises(ColumnError, match="listed twice"):
        risk_sql(d, "t", ["a", "a", "b"], 1)


@pytest.mark.parametrize("name", WAREHOUSES)
def test_warehouse_sql_parses(name):
    """The statement as qar renders it for each warehouse parses in that warehouse's dialect
    (the dbt package's compiled SQL is parsed the same way in test_dbt_package.py)."""
    d = get_dialect(name)
    for sql in (
        risk_sql(d, d.quote_path(("db", "s", HOSTILE_TABLE)), ["a b", "c'd", "e", "f", "g", "h"], 3),
        qi_theta_sql(d, d.quote("t"), ["a b", "c'd", "e"], 2),
    ):
        (tree,) = sqlglot.parse(sql, read=d.sqlglot)
        assert tree is not None


def test_dbt_macros_are_generated_from_these_templates():
    """integrations/dbt/macros/insql.sql is scripts/make_dbt_macros.py's output for templates/ now."""
    run = subprocess.run(
        [sys.executable, "scripts/make_dbt_macros.py", "--check"], capture_output=True, text=True, cwd=REPO
    )
    assert run.returncode == 0, run.stderr


def test_qar_sql_one_statement(duck):
    """qar sql --one-statement prints the statement; DuckDB runs it as printed to the audit's T̂."""
    from click.testing import CliRunner

    import qar_sql
    from qar_sql.cli.main import cli

    names, rows, types = random_table(1, 80, names=[f"c{i}" for i in range(8)])
    source, table = duck.load("people", as_columns(names, rows), types)
    args = ["sql", source, "-t", table, "-c", ",".join(names), "-p", "2", "--pi-u", "0.2"]
    r = CliRunner().invoke(cli, [*args, "--one-statement"])
    assert r.exit_code == 0, r.output
    (row,) = duck.fetch(r.stdout)
    assert risk_from_row(row).risk == pytest.approx(
        qar_sql.audit(source, table=table, columns=names, p=2, pi_u=0.2).risk, rel=REL
    )
    r = CliRunner().invoke(cli, args)  # --pi-u would be ignored by the scan SQL: an error
    assert r.exit_code == 2 and "--pi-u has no effect without --one-statement" in r.output
    r = CliRunner().invoke(cli, ["sql", "-d", "bigquery", "-t", "d.s.t", "-c", "a,b,c,d,e,f", "--one-statement"])
    assert r.exit_code == 0 and "float64" in r.stdout
    sqlglot.parse_one(r.stdout, read="bigquery")
