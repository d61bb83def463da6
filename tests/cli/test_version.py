"""``qar --version`` (issue 28, item 6): the versions a bug report needs — qar, Python, DuckDB,
SQLAlchemy and each installed extra — read from the installed metadata, checked here against
each package's own ``__version__``."""

from __future__ import annotations

import importlib
import os
import platform
import subprocess

import duckdb
import pytest
import sqlalchemy
from click.testing import CliRunner
from conftest import REPO

from qar_sql.cli.main import cli
from qar_sql.version import __version__


def version_output() -> list[str]:
    r = CliRunner().invoke(cli, ["--version"])
    assert r.exit_code == 0, r.output
    return r.output.splitlines()


def test_qar_python_duckdb_sqlalchemy():
    lines = version_output()
    assert lines[0] == f"qar {__version__}"
    assert lines[1].startswith(f"Python {platform.python_version()} ({platform.python_implementation()}, ")
    assert lines[2] == f"DuckDB {duckdb.__version__}"
    assert lines[3] == f"SQLAlchemy {sqlalchemy.__version__}"


@pytest.mark.parametrize(
    "extra,module,dist",
    [
        ("postgres", "psycopg", "psycopg"),
        ("mysql", "pymysql", "pymysql"),
        ("clickhouse", "chdb", "chdb"),
        ("spark", "pyspark", "pyspark"),
        ("plot", "matplotlib", "matplotlib"),
    ],
)
def test_each_installed_driver_extra_with_its_version(extra, module, dist):
    try:
        mod = importlib.import_module(module)
    except ImportError:
        pytest.skip(f"{module} is not installed here")
    version = getattr(mod, "__version__", None) or getattr(mod, "VERSION", None)
    if module == "pymysql":  # PyMySQL's __version__ is a build string; VERSION_STRING is the release
        version = mod.VERSION_STRING
    line = next(x for x in version_output() if x.startswith(f"  {extra}: "))
    assert f"{dist} {version}" in line


def test_version_reads_no_config(tmp_path, monkeypatch):
    (tmp_path / "qar.toml").write_text("[defaults]\np = 0\n")  # a broken config here
    monkeypatch.chdir(tmp_path)
    assert version_output()[0] == f"qar {__version__}"


def test_the_base_install_has_no_extra():
    python = os.environ.get("QAR_TEST_BASE_PYTHON")
    if not python or not os.path.exists(python):
        pytest.skip("QAR_TEST_BASE_PYTHON is not set (scripts/test.sh builds build/base-venv)")
    code = "import sys; from qar_sql.cli import main; sys.argv[0] = 'qar'; main()"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    r = subprocess.run([python, "-c", code, "--version"], capture_output=True, text=True, env=env, check=True)
    assert r.stdout.splitlines()[-1].startswith("extras: none")
