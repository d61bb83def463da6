"""The dbt package (integrations/dbt) in real dbt runs: dbt-core 1.9 with dbt-duckdb and dbt-postgres.

tests/fixtures/dbt_qar is a small dbt project that installs the package with ``dbt deps``
(``local:``), loads a seed, builds a model, computes ``qar.risk`` and ``qar.qi_theta`` as models
and a Python model calling ``qar_sql.audit(dbt.ref(...))`` (dbt-duckdb), and tests the model with
``qar.risk_below`` (passing, failing by ``--vars``, and at ``severity: warn``). The test adds one
seed and one model per oracle case of test_audit_oracle, so the package's T̂ is checked against
``evt.qar_risk`` of the oracle's θ (1e-12 relative) through dbt itself, on both engines.

dbt pins protobuf < 7 and pathspec < 0.13, below what the suite runs on, so it is not in the
``dev`` extra: ``scripts/test.sh`` installs the ``dbt`` extra into build/dbt-venv (a venv of its
own: the extra, qar-sql's base install and nothing else) and names its Python in ``QAR_TEST_DBT_PYTHON``; without it these tests
skip (and fail under CI=true).

The warehouses without a server here (Snowflake, BigQuery, Databricks, Redshift, Trino) get the
package's macros rendered as dbt renders them for that adapter (``adapter.dispatch`` picks
``<adapter>__`` before ``default__``), sqlglot parses the SQL in that warehouse's dialect, and the statement, translated
by sqlglot into DuckDB's dialect and run there, gives the oracle's T̂. The package also installs
from ``git:`` with ``subdirectory:`` (a local repository: no network).
"""

from __future__ import annotations

import csv
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import duckdb
import jinja2
import pytest
import sqlglot
from conftest import IN_CI, PG_URL, require_postgres

import qar_sql
from qar_sql.engines.dialects import get_dialect
from qar_sql.pushdown.insql import risk_sql
from tests.measures.test_audit import PARAMS, expected_fit, random_table

REPO = Path(__file__).resolve().parents[2]
PROJECT = REPO / "tests" / "fixtures" / "dbt_qar"
PACKAGE = REPO / "integrations" / "dbt"
QI = ["age", "sex", "zip code", "job", "education", "children"]
WAREHOUSES = ("snowflake", "bigquery", "databricks", "redshift", "trino")
REL = 1e-12


def dbt_python() -> str:
    if importlib.util.find_spec("dbt") is not None and importlib.util.find_spec("dbt.adapters.duckdb") is not None:
        return sys.executable
    python = os.environ.get("QAR_TEST_DBT_PYTHON")
    if python:
        return python
    local = REPO / "build" / "dbt-venv" / "bin" / "python"
    if local.is_file():
        return str(local)
    why = (
        "dbt is not installed here and QAR_TEST_DBT_PYTHON is not set "
        "(pip install 'qar-sql[dbt]', or run scripts/test.sh, which makes build/dbt-venv)"
    )
    if IN_CI:
        pytest.fail(why)
    pytest.skip(why)


def dbt(project: Path, *args: str, env: dict) -> subprocess.CompletedProcess:
    """Run dbt (the CLI, in its own process) in ``project``."""
    cmd = [dbt_python(), "-c", "from dbt.cli.main import cli; cli()", *args]
    return subprocess.run(
        [*cmd, "--project-dir", str(project), "--profiles-dir", str(project)],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def _ok(run: subprocess.CompletedProcess) -> str:
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    return run.stdout


def _oracle_case(i: int) -> tuple[list[str], list[tuple]]:
    seed, n_rows, *_ = PARAMS[i]
    # Plain names and no '' (a seed's empty field is NULL): the hostile names are test_insql's.
    names, rows, _ = random_table(seed, n_rows, names=[f"c{k}" for k in range(8)], empty_string=False)
    return names, rows


def make_project(folder: Path) -> Path:
    """The fixture project, the package named by absolute path, plus one seed and one model per
    oracle case."""
    project = folder / "dbt_qar"
    shutil.copytree(PROJECT, project, ignore=shutil.ignore_patterns("target", "dbt_packages", "*.duckdb"))
    (project / "packages.yml").write_text(f"packages:\n  - local: {PACKAGE}\n")
    for i, (_, _, p, alpha, pi_u) in enumerate(PARAMS):
        names, rows = _oracle_case(i)
        with (project / "seeds" / f"oracle_raw_{i}.csv").open("w", newline="") as f:
            w = csv.writer(f)
            w.writerow(names)
            w.writerows(["" if v is None else v for v in r] for r in rows)
        (project / "models" / f"oracle_{i}.sql").write_text(
            f"{{{{ qar.risk(ref('oracle_raw_{i}'), {names!r}, p={p}, alpha={alpha}, pi_u={pi_u}) }}}}\n"
        )
    return project


def _env(**extra: str) -> dict:
    return {
        **os.environ,
        "PYTHONPATH": str(REPO),  # the Python model imports this checkout's qar_sql
        "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
        "DBT_PARTIAL_PARSE": "false",
        **extra,
    }


def _pg_env(schema: str) -> dict:
    from sqlalchemy.engine import make_url

    u = make_url(PG_URL)
    return _env(
        QAR_DBT_PG_HOST=u.host or "localhost",
        QAR_DBT_PG_PORT=str(u.port or 5432),
        QAR_DBT_PG_USER=u.username or "",
        QAR_DBT_PG_PASSWORD=u.password or "",
        QAR_DBT_PG_DBNAME=u.database or "",
        QAR_DBT_PG_SCHEMA=schema,
    )


@pytest.fixture(scope="module")
def built(tmp_path_factory, request):
    """{engine: (project, env, warehouse source, schema, dbt build's stdout)}, built lazily."""
    done: dict = {}

    def build(engine: str):
        if engine in done:
            return done[engine]
        dbt_python()
        folder = tmp_path_factory.mktemp(f"dbt_{engine}")
        project = make_project(folder)
        if engine == "duckdb":
            warehouse = str(folder / "warehouse.duckdb")
            env, target, schema, source = _env(QAR_DBT_PATH=warehouse), "duckdb", "main", warehouse
        else:
            eng = require_postgres()
            schema = f"qar_dbt_{uuid.uuid4().hex[:10]}"
            env, target, source = _pg_env(schema), "postgres", PG_URL

            def drop():
                with eng.begin() as c:
                    c.exec_driver_sql(f'drop schema if exists "{schema}" cascade')

            request.addfinalizer(drop)
        env["DBT_TARGET"] = target
        _ok(dbt(project, "deps", env=env))
        out = _ok(dbt(project, "build", "--target", target, env=env))
        done[engine] = (project, env, source, schema, out)
        return done[engine]

    return build


def _rows(source: str, sql: str) -> list[tuple]:
    """The rows of one query on the warehouse dbt built (read-only for DuckDB)."""
    if source.endswith(".duckdb"):
        with duckdb.connect(source, read_only=True) as con:
            return con.execute(sql).fetchall()
    with require_postgres().connect() as c:
        return [tuple(r) for r in c.exec_driver_sql(sql, execution_options={"no_parameters": True}).fetchall()]


@pytest.mark.parametrize("engine", ["duckdb", pytest.param("postgresql", marks=pytest.mark.postgres)])
def test_package_in_a_dbt_build(built, engine):
    project, env, source, schema, out = built(engine)
    # the build passed: the risk_below test at its default threshold, the warning one warned
    assert "PASS people_risk_below " in out and "WARN 1 people_risk_below_warn" in out, out[-3000:]
    # qar.risk equals the qar audit of the table dbt built
    audit = qar_sql.audit(source, table=f"{schema}.people", columns=QI, p=3)
    ((rows, n_qi, u, xi, beta, n, risk),) = _rows(source, f'select * from "{schema}"."people_risk"')
    assert (rows, n_qi, n) == (200, 20, audit.fit.n_exceedances)
    for got, want in ((u, audit.fit.u), (xi, audit.fit.xi), (beta, audit.fit.beta), (risk, audit.risk)):
        assert got == pytest.approx(want, rel=REL, abs=0)
    theta = _rows(source, f'select * from "{schema}"."people_theta" order by qi')
    assert [(r[1], r[2], r[3]) for r in theta] == [(", ".join(q.columns), q.distinct, q.singletons) for q in audit.qis]
    assert [r[4] for r in theta] == [q.theta for q in audit.qis]
    # every oracle case, through dbt: T̂ equals evt.qar_risk of the oracle's θ
    for i, (_, n_rows, p, alpha, pi_u) in enumerate(PARAMS):
        names, data = _oracle_case(i)
        qis, fit = expected_fit(names, data, p, alpha=alpha, pi_u=pi_u)
        ((rows, n_qi, u, xi, beta, n, risk),) = _rows(source, f'select * from "{schema}"."oracle_{i}"')
        assert (rows, n_qi) == (n_rows, len(qis))
        if fit is None:
            assert (n, risk, xi, beta) == (0, None, None, None)
            continue
        assert n == fit.n_exceedances
        for got, want in ((u, fit.u), (xi, fit.xi), (beta, fit.beta), (risk, fit.risk)):
            assert got == pytest.approx(want, rel=REL, abs=0), i
    # the compiled model is the SQL qar renders from the same template (one source of truth)
    compiled = (project / "target" / "compiled" / "qar_demo" / "models" / "people_risk.sql").read_text()
    relation = re.search(r'from ("[^"]+"\."[^"]+"\."people")', compiled).group(1)
    dialect = get_dialect(engine)
    assert _tokens(compiled) == _tokens(risk_sql(dialect, relation, QI, 3))
    sqlglot.parse_one(compiled, read=engine.replace("postgresql", "postgres"))


@pytest.mark.parametrize("engine", ["duckdb", pytest.param("postgresql", marks=pytest.mark.postgres)])
def test_risk_below_fails_above_the_threshold(built, engine):
    project, env, source, schema, _ = built(engine)
    target = env["DBT_TARGET"]
    run = dbt(project, "test", "--target", target, "--select", "people", "--vars", "qar_threshold: 0.01", env=env)
    assert run.returncode == 1, run.stdout[-3000:]
    assert "FAIL 1 people_risk_below " in run.stdout and "WARN 1 people_risk_below_warn" in run.stdout
    # the failing row says T̂ and the threshold
    compiled = project / "target" / "compiled" / "qar_demo" / "models" / "schema.yml" / "people_risk_below.sql"
    ((risk, threshold, _u, _n, n_exc, minimum, message),) = _rows(source, compiled.read_text())
    audit = qar_sql.audit(source, table=f"{schema}.people", columns=QI, p=3)
    assert risk == pytest.approx(audit.risk, rel=REL) and float(threshold) == 0.01
    assert (n_exc, minimum) == (audit.fit.n_exceedances, None)  # the JSON's name, no gate given
    assert message.startswith("QaR risk T = 0.97") and "is above the threshold 0.01 (p = 3" in message


@pytest.mark.parametrize("engine", ["duckdb", pytest.param("postgresql", marks=pytest.mark.postgres)])
def test_qar_scan_reads_the_dbt_profile(built, engine):
    """qar scan --dbt-project on the project dbt just built: the warehouse from the profile
    (the same env_var()s dbt read), the model's meta for p and thresholds."""
    from click.testing import CliRunner

    from qar_sql.cli.main import cli

    project, env, source, schema, _ = built(engine)
    extra = {k: v for k, v in env.items() if k.startswith(("QAR_DBT_", "DBT_TARGET"))}
    r = CliRunner(env=extra).invoke(
        cli,
        ["scan", "--dbt-project", str(project), "--profiles-dir", str(project), "--select", "tag:nothing people"]
        + ["--no-store", "-f", "json"],
    )
    assert r.exit_code == 2 and "'tag:nothing' matches no model" in r.output
    r = CliRunner(env=extra).invoke(
        cli,
        ["scan", "--dbt-project", str(project), "--profiles-dir", str(project), "--select", "people"]
        + ["--no-store", "-f", "json"],
    )
    assert r.exit_code == 0, r.output
    (scan,) = json.loads(r.stdout)["scans"]
    audit = qar_sql.audit(source, table=f"{schema}.people", columns=QI, p=3)
    assert (scan["name"], scan["table"], scan["status"]) == ("people", f"{schema}.people", "warn")
    assert scan["risk"] == pytest.approx(audit.risk, rel=REL)
    assert "qar_test:***@" in scan["source"] or engine == "duckdb"


def test_python_model_calls_qar_audit(built):
    """models/people_audit_py.py: qar_sql.audit(dbt.ref('people')) inside dbt-duckdb."""
    _, _, source, _, _ = built("duckdb")
    audit = qar_sql.audit(source, table="main.people", columns=QI, p=3)
    rows = _rows(source, "select qi, columns, classes, singletons, theta, risk from main.people_audit_py order by qi")
    assert [(r[1], r[2], r[3], r[4]) for r in rows] == [
        (", ".join(q.columns), q.distinct, q.singletons, q.theta) for q in audit.qis
    ]
    assert {r[5] for r in rows} == {audit.risk}


def test_misspelt_meta_is_a_compile_error(built, tmp_path):
    """risk_below without columns reads the model's meta: a value qar does not know fails the
    test with a message naming it and the accepted values, never dropping the column."""
    project, env, _, _, _ = built("duckdb")
    schema = project / "models" / "schema.yml"
    original = schema.read_text()
    try:
        schema.write_text(
            original.replace(
                "- name: job\n        meta: {qar: quasi_identifier}",
                "- name: job\n        meta: {qar: quasi_identifer}",
            )
        )
        run = dbt(project, "test", "--select", "people_risk_below", env=env)
    finally:
        schema.write_text(original)
    assert run.returncode == 1
    assert "column 'job' of model 'people' has meta qar: 'quasi_identifer'" in run.stdout
    assert "quasi_identifier, identifier, sensitive, ignore" in run.stdout


# ---------------------------------------------------------------------------------------------
# The package's own integration_tests project: hostile column names through a real dbt build

INTEGRATION = PACKAGE / "integration_tests"
HOSTILE = ['we"ird', "back`tick", "zip code", "select", "it's", "ü"]


@pytest.fixture(scope="module")
def integration(tmp_path_factory, request):
    """{engine: (project, env, warehouse source, schema, dbt build's stdout)} of
    integrations/dbt/integration_tests, built lazily."""
    done: dict = {}

    def build(engine: str):
        if engine in done:
            return done[engine]
        dbt_python()
        folder = tmp_path_factory.mktemp(f"dbt_it_{engine}")
        project = folder / "integration_tests"
        shutil.copytree(INTEGRATION, project, ignore=shutil.ignore_patterns("target", "dbt_packages", "*.duckdb"))
        (project / "packages.yml").write_text(f"packages:\n  - local: {PACKAGE}\n")
        if engine == "duckdb":
            source = str(folder / "warehouse.duckdb")
            env, schema = _env(QAR_DBT_PATH=source), "main"
        else:
            eng = require_postgres()
            schema = f"qar_dbt_it_{uuid.uuid4().hex[:10]}"
            env, source = _pg_env(schema), PG_URL

            def drop():
                with eng.begin() as c:
                    c.exec_driver_sql(f'drop schema if exists "{schema}" cascade')

            request.addfinalizer(drop)
        env["DBT_TARGET"] = engine.replace("postgresql", "postgres")
        _ok(dbt(project, "deps", env=env))
        out = _ok(dbt(project, "build", "--target", env["DBT_TARGET"], env=env))
        done[engine] = (project, env, source, schema, out)
        return done[engine]

    return build


@pytest.mark.parametrize("engine", ["duckdb", pytest.param("postgresql", marks=pytest.mark.postgres)])
def test_integration_tests_with_hostile_names(integration, engine):
    """Columns named we"ird, back`tick, zip code, select, it's and ü through qar.risk,
    qar.qi_theta and qar.risk_below in a real dbt build (a quote inside a name broke the SQL:
    adapter.quote() does not double it): the numbers are qar's own audit of the table dbt built."""
    project, env, source, schema, out = integration(engine)
    for test in ("hostile_risk_below", "hostile_risk_below_p2", "people_seed_risk_below"):
        assert f"PASS {test} " in out, out[-3000:]
    audit = qar_sql.audit(source, table=f"{schema}.hostile", columns=HOSTILE, p=3)
    ((rows, n_qi, u, xi, beta, n, risk),) = _rows(source, f'select * from "{schema}"."hostile_risk"')
    assert (rows, n_qi, n) == (300, 20, audit.fit.n_exceedances)
    for got, want in ((u, audit.fit.u), (xi, audit.fit.xi), (beta, audit.fit.beta), (risk, audit.risk)):
        assert got == pytest.approx(want, rel=REL, abs=0)
    two = qar_sql.audit(source, table=f"{schema}.hostile", columns=HOSTILE, p=2, pi_u=0.2)
    theta = _rows(source, f'select * from "{schema}"."hostile_theta" order by qi')
    assert [(r[1], r[2], r[3], r[4]) for r in theta] == [
        (", ".join(q.columns), q.distinct, q.singletons, q.theta) for q in two.qis
    ]
    compiled = (project / "target" / "compiled" / "qar_integration_tests" / "models" / "hostile_risk.sql").read_text()
    assert 'group by "we""ird", "back`tick", "zip code"' in compiled
    # qar scan --dbt-project reads the same project: the model and the tagged seed
    from click.testing import CliRunner

    from qar_sql.cli.main import cli

    extra = {k: v for k, v in env.items() if k.startswith(("QAR_DBT_", "DBT_TARGET"))}
    r = CliRunner(env=extra).invoke(
        cli, ["scan", "--dbt-project", str(project), "--profiles-dir", str(project), "--no-store", "-f", "json"]
    )
    assert r.exit_code == 0, r.output
    scans = {s["name"]: s for s in json.loads(r.stdout)["scans"]}
    assert sorted(scans) == ["hostile", "people"]
    assert scans["hostile"]["risk"] == pytest.approx(audit.risk, rel=REL)
    seed = qar_sql.audit(
        source, table=f"{schema}.people", columns=["age", "sex", "zip", "job", "education", "children"]
    )
    assert scans["people"]["risk"] == pytest.approx(seed.risk, rel=REL)


def test_risk_below_arguments_in_dbt(integration, tmp_path):
    """In a real dbt run: a quoted threshold is named as text (it read "0.5 is not a risk ...
    such as 0.5"); min_exceedances fails a thinner fit, its row carrying n_exceedances (the JSON's
    name), min_exceedances and the fragile-fit note."""
    project, env, source, _, _ = integration("duckdb")
    schema = project / "models" / "schema.yml"
    original = schema.read_text()
    quoted = original.replace(
        "name: hostile_risk_below\n          threshold: 1", 'name: hostile_risk_below\n          threshold: "0.5"'
    )
    gated = original.replace("min_exceedances: 1", "min_exceedances: 50")
    try:
        schema.write_text(quoted)
        run = dbt(project, "test", "--select", "hostile_risk_below", env=env)
        assert run.returncode == 1
        assert "qar.risk_below: threshold is the text '0.5' (quoted in the YAML), not a number; " in run.stdout
        assert "write it without quotes, as threshold: 0.5" in run.stdout
        # dbt's YAML reads 5e-1 (no '.', no sign) as text though it has no quotes: "quoted in the
        # YAML ... write it without quotes, as threshold: 5e-1" asked for what was written; and
        # a NaN passed every range check and reached the warehouse as the column "nan".
        for written, message in (
            (
                "5e-1",
                "threshold is the text '5e-1', not a number: YAML reads a number with an exponent as text unless it "
                "has a '.' and a signed exponent (1.0e-3); write it as a decimal, as threshold: 0.5",
            ),
            (".nan", "qar.risk_below: threshold = nan is not a risk; use a number in (0, 1]"),
            # text that is no number: taking its quotes away would not make it one
            (
                "abc",
                "qar.risk_below: threshold is the text 'abc', not a number; threshold must be a number, as "
                "threshold: 0.5",
            ),
        ):
            schema.write_text(quoted.replace('threshold: "0.5"', f"threshold: {written}"))
            run = dbt(project, "test", "--select", "hostile_risk_below", env=env)
            assert run.returncode == 1 and message in run.stdout, run.stdout[-3000:]
        # a column the model lacks is named (it read "p = 2 is larger than the number of ..." or
        # the warehouse's error)
        schema.write_text(original.replace("""'ü']\n          p: 2""", """'nope']\n          p: 2"""))
        run = dbt(project, "test", "--select", "hostile_risk_below_p2", env=env)
        assert run.returncode == 1 and "qar: column 'nope' is not a column of " in run.stdout, run.stdout[-3000:]
        assert "Name one of them, or leave columns out" in run.stdout
        schema.write_text(gated)
        run = dbt(project, "test", "--select", "hostile_risk_below_p2", env=env)
        assert run.returncode == 1 and "FAIL 1 hostile_risk_below_p2" in run.stdout, run.stdout[-3000:]
        compiled = project / "target" / "compiled" / "qar_integration_tests" / "models" / "schema.yml"
        sql = next(compiled.glob("hostile_risk_below_p2*.sql")).read_text()
    finally:
        schema.write_text(original)
    ((risk, threshold, _u, n, n_exc, minimum, message),) = _rows(source, sql)
    audit = qar_sql.audit(source, table="main.hostile", columns=HOSTILE, p=2, pi_u=0.2)
    assert risk == pytest.approx(audit.risk, rel=REL) and n == n_exc == audit.fit.n_exceedances < 50
    assert (float(threshold), minimum) == (1, 50)
    assert f"rests on {n} exceedances of u, fewer than min_exceedances = 50 (p = 2" in message
    assert ("GPD fit is fragile" in message) == (n < 10)


# ---------------------------------------------------------------------------------------------
# The warehouses without a server here: the macros as dbt renders them for that adapter


class _Return(Exception):
    def __init__(self, value):
        self.value = value


def _raise_return(value):
    raise _Return(value)


class _Exceptions:
    @staticmethod
    def raise_compiler_error(message):
        raise RuntimeError(message)


def render_package(adapter_type: str):
    """A namespace of the package's macros rendered the way dbt renders them for
    ``adapter_type``: ``adapter.dispatch(name, 'qar')`` picks ``<adapter>__name``, else
    ``default__name``; ``return()`` returns a value; ``adapter.quote`` quotes as that warehouse."""
    import itertools
    import types

    dialect = get_dialect(adapter_type)
    source = "\n".join(p.read_text() for p in sorted((PACKAGE / "macros").glob("*.sql")))
    source = re.sub(r"\{%\s*test\s+(\w+)\(", r"{% macro test_\1(", source).replace("{% endtest %}", "{% endmacro %}")
    env = jinja2.Environment(extensions=["jinja2.ext.do"], undefined=jinja2.StrictUndefined)
    macros: dict = {}

    def call(name):
        def run(*args, **kwargs):
            try:
                return getattr(module, name)(*args, **kwargs)
            except _Return as r:
                return r.value

        return run

    class Namespace:
        def __getattr__(self, name):
            return call(name)

    class Adapter:
        @staticmethod
        def dispatch(name, package):
            assert package == "qar"
            for candidate in (f"{adapter_type}__{name}", f"default__{name}"):
                if candidate in macros:
                    return call(candidate)
            raise AssertionError(f"no macro {name}")

        quote = staticmethod(dialect.quote)

    type_string = "string" if adapter_type in ("bigquery", "databricks", "spark") else "varchar"
    env.globals.update(
        adapter=Adapter(),
        qar=Namespace(),
        modules=types.SimpleNamespace(itertools=itertools, re=re),
        exceptions=_Exceptions(),
        execute=True,
        dbt=types.SimpleNamespace(type_string=lambda: type_string),
        **{"return": _raise_return},
    )
    module = env.from_string(source).module
    macros.update({k: v for k, v in vars(module).items() if not k.startswith("_")})
    return Namespace(), dialect


def _tokens(sql: str) -> list[str]:
    """The SQL without comments and layout, to compare two renderings."""
    sql = re.sub(r"--[^\n]*", "", sql)
    return sql.split()


@pytest.mark.parametrize("adapter_type", WAREHOUSES)
def test_compiled_sql_parses_for_warehouses(adapter_type):
    qar, dialect = render_package(adapter_type)
    relation = dialect.quote_path(("analytics", "pii", "people"))
    # hostile names: quoted as qar's dialect quotes them (the comparison with risk_sql below)
    cols = ["age", 'we"ird', "zip code", "job's", "back`tick", "ends in \\"]
    statements = [
        qar.risk(relation, cols, 3, 0.01, 0.05),
        qar.qi_theta(relation, cols, 2),
        qar.test_risk_below(relation, 0.5, cols, 3, 0.01, 0.05),
    ]
    for sql in statements:
        tree = sqlglot.parse_one(sql, read=dialect.sqlglot)
        assert tree.find(sqlglot.exp.Select) is not None
    # the override each warehouse needs is the one it gets
    cast_type = {"bigquery": "float64", "databricks": "double", "trino": "double"}.get(adapter_type, "double precision")
    assert f"as {cast_type})" in statements[0]
    # and the statement is qar's own rendering of the template for that dialect (but the cast type
    # on Trino, where qar's dialect keeps the portable name)
    if adapter_type != "trino" and adapter_type != "snowflake":
        assert _tokens(statements[0]) == _tokens(risk_sql(dialect, relation, cols, 3))


def test_renderer_matches_real_dbt(built):
    """The stand-in renderer above gives what dbt-duckdb itself compiled."""
    project, *_ = built("duckdb")
    compiled = (project / "target" / "compiled" / "qar_demo" / "models" / "people_risk.sql").read_text()
    relation = re.search(r'from ("[^"]+"\."[^"]+"\."people")', compiled).group(1)
    qar, _ = render_package("duckdb")
    assert _tokens(compiled) == _tokens("\n".join(qar.risk(relation, QI, 3, 0.01, 0.05).splitlines()))


def test_package_files():
    """dbt_project.yml names the package qar; its macros dispatch with default__ first."""
    text = (PACKAGE / "dbt_project.yml").read_text()
    assert re.search(r"^name: qar$", text, re.M)
    for path in (PACKAGE / "macros").glob("*.sql"):
        for name in re.findall(r"adapter\.dispatch\('(\w+)', 'qar'\)", path.read_text()):
            assert any(f"macro default__{name}(" in p.read_text() for p in (PACKAGE / "macros").glob("*.sql")), name


def test_installs_from_git_with_subdirectory(tmp_path):
    """packages.yml with git: and subdirectory: (a local repository here: no network)."""
    repo = tmp_path / "repo"
    shutil.copytree(PACKAGE, repo / "integrations" / "dbt")
    git = ["git", "-c", "user.email=qar@example.com", "-c", "user.name=qar", "-c", "init.defaultBranch=main"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "the package"]):
        subprocess.run([*git, *args], cwd=repo, check=True, capture_output=True)
    project = make_project(tmp_path)
    (project / "packages.yml").write_text(
        f'packages:\n  - git: "file://{repo}"\n    revision: main\n    subdirectory: integrations/dbt\n'
    )
    env = _env(QAR_DBT_PATH=str(tmp_path / "w.duckdb"))
    _ok(dbt(project, "deps", env=env))
    assert (project / "dbt_packages" / "qar" / "dbt_project.yml").is_file()
    _ok(dbt(project, "compile", "--select", "people_risk", env=env))
    compiled = (project / "target" / "compiled" / "qar_demo" / "models" / "people_risk.sql").read_text()
    relation = re.search(r'from ("[^"]+"\."[^"]+"\."people")', compiled).group(1)
    assert _tokens(compiled) == _tokens(risk_sql(get_dialect("duckdb"), relation, QI, 3))


def test_risk_below_fails_without_a_tail(tmp_path):
    """No θ above u (every column a key: every θ is 1, clipped alike): the test's row says so;
    a table without a risk never passes silently."""
    names = [f"k{j}" for j in range(10)]
    with duckdb.connect(str(tmp_path / "t.duckdb")) as con:
        con.execute(
            "create table t as select " + ", ".join(f"range + {j} as k{j}" for j in range(10)) + " from range(50)"
        )
        qar, _ = render_package("duckdb")
        ((risk, threshold, _u, n, _n, _min, message),) = con.execute(
            qar.test_risk_below("t", 0.99, names, 2, 0.01, 0.05)
        ).fetchall()
    assert (risk, n) == (None, 0) and message.startswith("no QaR risk: no theta exceeds u")


@pytest.mark.parametrize("adapter_type", WAREHOUSES)
def test_warehouse_sql_computes_the_risk(adapter_type):
    """Each warehouse's statement, translated by sqlglot into DuckDB's dialect and run there,
    gives the oracle's T̂: its overrides (types, literals, quoting) mean what they should, as
    far as sqlglot's translation goes."""
    names, rows, types = random_table(1, 80, names=[f"c{i}" for i in range(8)])
    qis, fit = expected_fit(names, rows, 2, alpha=0.01, pi_u=0.2)
    qar, dialect = render_package(adapter_type)
    sql = qar.risk(dialect.quote_path(("pii", "people")), names, 2, 0.01, 0.2)
    with duckdb.connect() as con:
        con.execute("create schema pii")
        ddl = ", ".join(f"{n} {types[n].replace('double precision', 'double')}" for n in names)
        con.execute(f"create table pii.people ({ddl})")
        con.executemany(f"insert into pii.people values ({', '.join('?' * len(names))})", rows)
        ((*_, risk),) = con.execute(sqlglot.transpile(sql, read=dialect.sqlglot, write="duckdb")[0]).fetchall()
    assert risk == pytest.approx(fit.risk, rel=REL)
