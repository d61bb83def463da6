"""The base install, no extra (issue 28): ``pip install qar-sql`` brings duckdb, SQLAlchemy, scipy,
numpy, jinja2, click and PyYAML only; the audit, records, risk and the HTML report run on that,
and a command needing an extra says which one (exit 2) before any work.

The tests run ``qar`` with a Python that has only the base install: the one named by
``QAR_TEST_BASE_PYTHON`` (``scripts/test.sh`` builds ``build/base-venv`` without this
environment's packages and sets it). Without it the tests skip with the reason; under ``CI=true``
they fail. With ``PYTHONPATH`` pointing at this tree, the venv supplies the packages and this
tree the code, so a local run tests the working copy.
"""

from __future__ import annotations

import os
import subprocess
import tomllib

import pytest
from conftest import IN_CI, REPO

from qar_sql import extras
from qar_sql.engines.drivers import driver_distributions


@pytest.fixture(scope="module")
def base_python() -> str:
    python = os.environ.get("QAR_TEST_BASE_PYTHON")
    if python and os.path.exists(python):
        return python
    why = (
        "QAR_TEST_BASE_PYTHON names no Python with the base install "
        "(scripts/test.sh builds build/base-venv: python3 -m venv build/base-venv && build/base-venv/bin/pip install .)"
    )
    if IN_CI:
        pytest.fail(why)
    pytest.skip(why)


def qar(python: str, *args: str, cwd=None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    code = "import sys; from qar_sql.cli import main; sys.argv[0] = 'qar'; main()"
    return subprocess.run([python, "-c", code, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=300)


def test_the_base_venv_has_no_extra(base_python):
    # The venv is the base install: if it saw this environment's packages the test would prove nothing.
    code = "import importlib.util as u; print(*[m for m in ('pandas', 'pyarrow', 'saiph', 'sklearn', 'matplotlib', 'tqdm') if u.find_spec(m)])"
    out = subprocess.run([base_python, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_compare_names_its_extra_before_any_work(base_python, tmp_path):
    # The tables do not exist: a check "before any work" answers before reading them.
    out = qar(base_python, "compare", str(tmp_path / "a.csv"), str(tmp_path / "b.csv"), "--aligned")
    assert out.returncode == 2, out.stderr
    assert "qar compare needs saiph, pandas, pyarrow and threadpoolctl, which are not installed" in out.stderr
    assert "pip install 'qar-sql[compare]'" in out.stderr and "Traceback" not in out.stderr


def test_parquet_per_record_names_the_arrow_extra(base_python, tmp_path):
    out = qar(base_python, "risk", str(tmp_path / "x.csv"), "--per-record", str(tmp_path / "r.parquet"))
    assert out.returncode == 2, out.stderr
    assert "pip install 'qar-sql[arrow]'" in out.stderr and "Traceback" not in out.stderr


def test_the_core_commands_run_on_the_base_install(base_python, tmp_path):
    out = qar(base_python, "demo", "--rows", "2000", "--quiet", cwd=tmp_path)
    assert out.returncode in (0, 1), out.stderr
    db = str(tmp_path / "qar_demo.duckdb")
    cols = "age,sex,postcode,region,education,marital_status,occupation"
    for args in (
        ["audit", db, "--table", "population", "--columns", cols, "-p", "2"],
        ["risk", db, "--table", "population", "--columns", cols, "-p", "3"],
        ["uniqueness", db, "--table", "population", "--columns", cols, "-p", "2", "-g", "5"],
        ["report", db, "--table", "population", "--columns", cols, "-p", "2", "-o", str(tmp_path / "r.html")],
    ):
        run = qar(base_python, *args, cwd=tmp_path)
        assert run.returncode in (0, 1), (args, run.stderr)
        assert "Traceback" not in run.stderr
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "qar-sql[plot]" in html  # the note in place of the figures


def test_every_extra_of_pyproject_is_known_to_the_check():
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = set(project["optional-dependencies"]) - {"dev", "all", "parquet"}
    drivers = driver_distributions()  # each engine names its driver's extra
    assert declared == set(extras.MODULES) | set(drivers)
    assert not set(extras.MODULES) & set(drivers)


def test_the_python_api_names_the_extra_too(base_python):
    code = (
        "import qar_sql\n"
        "try:\n"
        "    qar_sql.compare('a.csv', 'b.csv', aligned=True)\n"
        "except qar_sql.QarError as exc:\n"
        "    print(int(exc.exit_code), exc)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run([base_python, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.stdout.strip() == (
        "2 qar_sql.compare() needs saiph, pandas, pyarrow and threadpoolctl, which are not installed; "
        "install them with: pip install 'qar-sql[compare]'"
    ), out.stderr


def test_a_duckdb_relation_is_audited_without_arrow(base_python, tmp_path):
    # A DuckDB relation is read by DuckDB itself (the dbt package's Python models pass one): the
    # base install, which has no pyarrow, gives the audit of the same rows in a DuckDB file.
    rows = "select range % 7 as a, range % 5 as b, range % 3 as c, (range * 31) % 11 as d from range(400)"
    db = str(tmp_path / "t.duckdb")
    code = (
        "import duckdb, qar_sql, sys\n"
        f"con = duckdb.connect(); rel = con.sql({rows!r})\n"
        f"file = duckdb.connect({db!r}); file.execute('create table t as ' + {rows!r}); file.close()\n"
        "a = qar_sql.audit(rel, p=2, pi_u=0.5); b = qar_sql.audit(" + repr(db) + ", table='t', p=2, pi_u=0.5)\n"
        "print(a.source, a.risk == b.risk, a.fit == b.fit)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run([base_python, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.stdout.strip() == "<duckdb.DuckDBPyRelation> True True", out.stderr
