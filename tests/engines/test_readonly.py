"""Auditing is read-only: it works for a PostgreSQL role that may only read one table, every
connection runs in a read-only transaction, and audited files are never changed."""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import PG_URL, Loader, quote
from sqlalchemy.engine import make_url

import qar_sql
from qar_sql.cli.main import cli
from qar_sql.engines.source import open_source
from qar_sql.errors import DatabaseError
from tests.engines.test_sources import numbers, write_csv, write_parquet
from tests.measures.test_audit import HOSTILE_TABLE, as_columns, check_against_oracle, random_table

P, PI_U = 2, 0.2


@pytest.fixture
def readonly(pg, tmp_path):
    """(admin source, table, read-only URL, data): a fresh role with CONNECT on the database,
    USAGE on one schema and SELECT on one table, nothing else; dropped afterwards."""
    names, rows, types = random_table(51, 60)
    loader = Loader("postgresql", tmp_path)
    role = f"qar_ro_{uuid.uuid4().hex[:10]}"
    password = uuid.uuid4().hex
    database = make_url(PG_URL).database
    try:
        source, table = loader.load(HOSTILE_TABLE, as_columns(names, rows), types)
        loader.load("secret", {c: [1, 2, 3] for c in "wxyz"})  # same schema, no SELECT
        with pg.begin() as c:
            c.exec_driver_sql(f"create role {quote(role)} login password '{password}'")
            c.exec_driver_sql(f"grant connect on database {quote(database)} to {quote(role)}")
            c.exec_driver_sql(f"grant usage on schema {quote(loader.schema)} to {quote(role)}")
            c.exec_driver_sql(f"grant select on {quote(loader.schema)}.{quote(HOSTILE_TABLE)} to {quote(role)}")
        url = make_url(PG_URL).set(username=role, password=password)
        yield source, table, url.render_as_string(hide_password=False), (names, rows), loader, password
    finally:
        loader.cleanup()  # drops the schema, and with it the role's privileges there
        with pg.begin() as c:
            exists = c.exec_driver_sql(f"select 1 from pg_roles where rolname = '{role}'").first()
            if exists:
                c.exec_driver_sql(f"revoke all on database {quote(database)} from {quote(role)}")
                c.exec_driver_sql(f"drop role {quote(role)}")


def test_select_only_role_audits_with_the_same_numbers(readonly):
    source, table, ro_url, (names, rows), loader, _ = readonly
    admin = qar_sql.audit(source, table=table, p=P, pi_u=PI_U)
    for jobs in (1, 3):
        ro = qar_sql.audit(ro_url, table=table, p=P, pi_u=PI_U, jobs=jobs, batch_size=4)
        check_against_oracle(ro, names, rows, P, pi_u=PI_U)
        assert numbers(ro) == numbers(admin)


def test_select_only_role_through_the_command(readonly):
    source, table, ro_url, _, _, password = readonly
    admin = qar_sql.audit(source, table=table, p=P, pi_u=PI_U)
    r = CliRunner().invoke(
        cli, ["audit", "-t", table, "-p", str(P), "--pi-u", str(PI_U), "-f", "json"], env={"QAR_DATABASE_URL": ro_url}
    )
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["risk"] == admin.risk
    assert password not in r.output


def test_role_cannot_read_other_tables_clear_error(readonly):
    _, table, ro_url, _, loader, password = readonly
    r = CliRunner().invoke(cli, ["audit", ro_url, "-t", f"{loader.schema}.secret", "-p", "1", "--pi-u", "0.5"])
    assert r.exit_code == 3, r.output
    assert "permission denied" in r.output and "Traceback" not in r.output
    assert password not in r.output


def test_every_connection_is_read_only(readonly):
    _, table, ro_url, _, _, _ = readonly
    db, relation = open_source(ro_url, table=table)
    with db:
        assert db.query("show transaction_read_only") == [("on",)]
        # worker connections (one read-only transaction each) as well
        answers = db.query_many(["show transaction_read_only"] * 6, jobs=3)
        assert answers == [[("on",)]] * 6
        with pytest.raises(DatabaseError, match="read-only transaction"):
            db.query(f"delete from {relation.sql}")


def test_parallel_connections_read_one_snapshot(readonly, pg):
    """Rows written while a scan runs are seen by none of its connections: the workers import
    the main transaction's snapshot (a SELECT-only role may), so every QI counts the same L."""
    source, table, ro_url, (names, rows), loader, _ = readonly
    full = f"{quote(loader.schema)}.{quote(HOSTILE_TABLE)}"
    written = []

    def progress(done, total):
        if not written:  # after the first statement: double the table
            with pg.begin() as c:
                c.exec_driver_sql(f"insert into {full} select * from {full}")
            written.append(done)

    got = qar_sql.audit(ro_url, table=table, p=P, pi_u=PI_U, jobs=3, batch_size=2, progress=progress)
    assert written
    check_against_oracle(got, names, rows, P, pi_u=PI_U)
    db, _ = open_source(ro_url, table=table)
    with db:
        isolation = db.query("show transaction_isolation")
        snapshots = db.query_many(["select txid_current_snapshot()::text"] * 6, jobs=3)
    assert isolation == [("repeatable read",)]
    assert len({tuple(s) for rows_ in snapshots for s in rows_}) == 1


def test_admin_audit_is_read_only_too(pg, tmp_path):
    """Even a role allowed to write gets a read-only transaction: the audit cannot change data."""
    loader = Loader("postgresql", tmp_path)
    try:
        _, table = loader.load("t", {"a": [1, 2], "b": [3, 4]})
        db, relation = open_source(PG_URL, table=table)
        with db:
            with pytest.raises(DatabaseError, match="read-only transaction"):
                db.query(f"insert into {relation.sql} values (5, 6)")
            with pytest.raises(DatabaseError, match="read-only transaction"):
                db.query_many([f"create table {quote(loader.schema)}.x (a int)"] * 2, jobs=2)
        with pg.connect() as c:
            assert c.exec_driver_sql(f"select count(*) from {relation.sql}").scalar() == 2
            assert not c.exec_driver_sql(
                f"select 1 from information_schema.tables where table_schema = '{loader.schema}' and table_name = 'x'"
            ).first()
    finally:
        loader.cleanup()


# ---------------------------------------------------------------------------------------------
# Files are never written


def _fingerprint(path: Path) -> tuple:
    st = os.stat(path)
    return st.st_mtime_ns, st.st_size, hashlib.sha256(path.read_bytes()).hexdigest()


def test_audited_files_are_unchanged(tmp_path):
    names, rows, types = random_table(52, 60, empty_string=False)
    duck = Loader("duckdb", tmp_path)
    _, table = duck.load(HOSTILE_TABLE, as_columns(names, rows), types)
    files = {
        "duckdb": (Path(duck.path), table),
        "csv": (write_csv(tmp_path / "d.csv", names, rows), None),
        "parquet": (write_parquet(duck.path, HOSTILE_TABLE, tmp_path / "d.parquet"), None),
    }
    before = {k: _fingerprint(p) for k, (p, _) in files.items()}
    listing = sorted(os.listdir(tmp_path))
    for _kind, (path, tbl) in files.items():
        result = qar_sql.audit(str(path), table=tbl, p=P, pi_u=PI_U)
        check_against_oracle(result, names, rows, P, pi_u=PI_U)
        args = ["audit", str(path), "-p", str(P), "--pi-u", str(PI_U), "-f", "json"]
        r = CliRunner().invoke(cli, args + (["-t", tbl] if tbl else []))
        assert r.exit_code == 0, r.output
    assert {k: _fingerprint(p) for k, (p, _) in files.items()} == before
    assert sorted(os.listdir(tmp_path)) == listing  # no WAL, no sidecar files


def test_duckdb_file_is_opened_read_only(tmp_path):
    duck = Loader("duckdb", tmp_path)
    _, table = duck.load("t", {"a": [1, 2, 3], "b": [1, 1, 2]})
    db, relation = open_source(duck.path, table=table)
    with db:
        with pytest.raises(DatabaseError, match="read-only"):
            db.query(f"insert into {relation.sql} values (4, 4)")
        with pytest.raises(DatabaseError, match="read-only"):
            db.query("create table main.x as select 1 as a")
        # session TEMP tables live in memory and are allowed (the scan uses one)
        db.query("create temp table scratch as select 1 as a")
        assert db.query("select a from scratch") == [(1,)]
