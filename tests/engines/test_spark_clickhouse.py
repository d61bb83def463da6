"""Spark (Spark Connect) and ClickHouse (chdb) beyond the shared engine suite: clear errors
when the driver is missing or the server is down, the URL forms, and read-only connections.
The numbers themselves are checked in tests/engines/test_conformance.py against the oracles and DuckDB."""

from __future__ import annotations

import subprocess
import sys

import pytest
from click.testing import CliRunner
from engine_registry import open_engine

import qar_sql
from qar_sql.cli.main import cli
from qar_sql.engines.clickhouse import ClickHouseDatabase
from qar_sql.errors import DatabaseError, ExitCode, SourceNotFound, UsageError


@pytest.mark.parametrize(
    "module, url, extra",
    [("pyspark", "sc://localhost:15002", "spark"), ("chdb", "chdb:///tmp", "clickhouse")],
)
def test_a_missing_driver_names_the_extra(module, url, extra):
    """With the driver's import failing (as when it is not installed), the audit says which
    extra installs it, in one sentence, exit 2."""
    code = (
        f"import sys; sys.modules[{module!r}] = None\n"
        "from click.testing import CliRunner\nfrom qar_sql.cli.main import cli\n"
        f"r = CliRunner().invoke(cli, ['audit', {url!r}, '--table', 't'])\n"
        "print(r.exit_code); print(r.output)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120).stdout
    assert out.splitlines()[0] == str(int(ExitCode.USAGE)), out
    assert f"pip install 'qar-sql[{extra}]'" in out and "Traceback" not in out


def test_an_unreachable_spark_server_fails_fast_and_clearly():
    pytest.importorskip("pyspark")
    with pytest.raises(DatabaseError, match=r"cannot connect to sc://localhost:1.*nothing answers at localhost:1"):
        qar_sql.audit("sc://localhost:1", table="t")
    r = CliRunner().invoke(cli, ["audit", "sc://localhost:1/;token=s3cret-tok;x=1", "--table", "t"])
    assert r.exit_code == ExitCode.RUNTIME and "s3cret-tok" not in r.output and "token=***" in r.output


def test_chdb_url_forms(tmp_path):
    pytest.importorskip("chdb")
    with pytest.raises(UsageError, match="names no data folder"):
        qar_sql.audit("chdb://", table="t")
    with pytest.raises(SourceNotFound, match="does not exist"):
        qar_sql.audit(f"chdb://{tmp_path}/missing", table="t")


@pytest.mark.parametrize("name", ["clickhouse", "spark"])
def test_table_lookup(name, tmp_path):
    eng = open_engine(name, tmp_path)
    try:
        source, table = eng.load("people", ["age", "zip"], [(30, "a"), (40, None), (30, "a")])
        with pytest.raises(SourceNotFound, match="did you mean"):
            qar_sql.audit(source, table=table + "x")
        r = qar_sql.audit(source, table=table, p=1, pi_u=0.5)
        assert (r.rows, r.engine) == (3, name) and [q.distinct for q in r.qis] == [2, 2]
    finally:
        eng.cleanup()


def test_chdb_connection_is_read_only(tmp_path):
    """The connection qar reads through refuses writes (readonly = 2), temp tables aside."""
    eng = open_engine("clickhouse", tmp_path)
    try:
        source, _ = eng.load("people", ["age", "zip"], [(30, "a"), (40, None), (30, "a")])
        db = ClickHouseDatabase(source)
        try:
            with pytest.raises(DatabaseError, match="readonly|READONLY"):
                db.query(f"insert into {eng.qualified('people')} values (1, 'b')")
            with pytest.raises(DatabaseError, match="readonly|READONLY"):
                db.query(f"drop table {eng.qualified('people')}")
        finally:
            db.close()
        assert eng.fetch(f"select count(*) from {eng.qualified('people')}") == [(3,)]
    finally:
        eng.cleanup()
