"""The results store: migrations (from scratch, one at a time, checksum guard, dialect siblings,
rollback) and recorded runs (complete, interrupted, lost connection, concurrent) on real DuckDB
and PostgreSQL stores."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import shutil
import threading
import uuid
from collections import Counter
from pathlib import Path

import click
import duckdb
import numpy as np
import pytest
from click.testing import CliRunner
from conftest import PG_URL, quote, require_postgres, table_args

from qar_sql.cli.main import cli
from qar_sql.compliance import store as S
from qar_sql.engines.render import migrations_dir
from qar_sql.errors import ColumnError, DatabaseError

ALL_TABLES = {"qar_schema_migrations", "qar_runs", "qar_qi_results", "qar_fits", "qar_top_records", "qar_run_results"}

# A small table with NULLs, ties and hostile column names (quote, space, semicolon, unicode).
COLS = ['a"b', "c d", "x;drop", "año"]
DATA = {
    'a"b': [1, 1, 2, 2, 3, None, None, 1, 2, 3, 4, 4, 5, 1, 2, 3, 3, 1, None, 5],
    "c d": ["x", "y", "x", None, "y", "x", None, "x", "y", "z", "z", "x", None, "y", "x", "x", "z", "z", "y", "x"],
    "x;drop": [{"T": True, "F": False, "-": None}[c] for c in "TFTT-FFT-TFTTF-TFTTF"],
    "año": [10, 20, 10, 30, 20, 10, None, 40, 30, 20, 10, 50, 20, 30, 10, None, 40, 20, 10, 60],
}
P, PI_U = 2, 0.5


def pg_store_url(schema: str) -> str:
    """The test database with its own schema first on the search path: a fresh store."""
    sep = "&" if "?" in PG_URL else "?"
    return f"{PG_URL}{sep}options=-csearch_path%3D{schema}"


@pytest.fixture
def pg_schema():
    eng = require_postgres()
    schema = f"qs_{uuid.uuid4().hex[:10]}"
    with eng.begin() as c:
        c.exec_driver_sql(f"create schema {quote(schema)}")
    yield schema
    with eng.begin() as c:
        c.exec_driver_sql(f"drop schema {quote(schema)} cascade")


@pytest.fixture(params=["duckdb", "postgresql"])
def store_url(request, tmp_path):
    """A fresh, empty store on each engine."""
    if request.param == "duckdb":
        yield str(tmp_path / "store.duckdb")
    else:
        yield pg_store_url(request.getfixturevalue("pg_schema"))


def query(url: str, sql: str) -> list[tuple]:
    """Read the store behind qar's back (DuckDB read-only / a plain SQLAlchemy connection)."""
    if not url.startswith("postgresql"):
        con = duckdb.connect(url, read_only=True)
        try:
            return con.execute(sql).fetchall()
        finally:
            con.close()
    import sqlalchemy as sa

    eng = sa.create_engine(url, poolclass=sa.pool.NullPool)
    try:
        with eng.connect() as c:
            return [tuple(r) for r in c.exec_driver_sql(sql).fetchall()]
    finally:
        eng.dispose()


def tables(url: str) -> set[str]:
    return {
        r[0]
        for r in query(url, "select table_name from information_schema.tables where table_schema = current_schema()")
    }


def people(engine):
    return engine.load("people", DATA)


# --------------------------------------------------------------------------------------------
# Migrations


def test_migrations_from_scratch(store_url):
    before = S.status(store_url)
    assert [m.state for m in before.migrations] == ["pending"] * 4
    assert not store_url.endswith(".duckdb") or not Path(store_url).exists()  # --status wrote nothing
    result = S.migrate(store_url)
    assert result.applied == ("0001_runs", "0002_top_records", "0003_run_liveness", "0004_run_results")
    assert result.pending == ()
    assert ALL_TABLES <= tables(store_url)
    files = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in migrations_dir().glob("*.sql")}
    tracked = query(store_url, "select name, checksum from qar_schema_migrations order by version")
    liveness = "0003_run_liveness.duckdb.sql" if store_url.endswith(".duckdb") else "0003_run_liveness.sql"
    assert tracked == [
        ("0001_runs", files["0001_runs.sql"]),
        ("0002_top_records", files["0002_top_records.sql"]),
        ("0003_run_liveness", files[liveness]),
        ("0004_run_results", files["0004_run_results.sql"]),
    ]
    assert S.migrate(store_url).applied == ()  # idempotent


def test_cli_migrate_writes_csv(store_url):
    """qar migrate -f csv: one row per migration, read back by a CSV reader (it had no csv)."""
    import csv
    import io

    r = CliRunner().invoke(cli, ["migrate", "--store", store_url, "--to", "0002", "-f", "csv"])
    assert r.exit_code == 0, r.output
    rows = list(csv.DictReader(io.StringIO(r.output)))
    assert [(x["version"], x["name"], x["state"]) for x in rows] == [
        ("0001", "0001_runs", "applied"),
        ("0002", "0002_top_records", "applied"),
        ("0003", "0003_run_liveness", "pending"),
        ("0004", "0004_run_results", "pending"),
    ]  # (which this call applied: the JSON's "applied")
    applied = dict(query(store_url, "select name, checksum from qar_schema_migrations"))
    assert {x["name"]: x["checksum"] for x in rows[:2]} == applied
    assert rows[2]["applied_at"] == "" and rows[0]["applied_at"]


def test_migrations_one_at_a_time(store_url):
    first = S.migrate(store_url, to="0001")
    assert first.applied == ("0001_runs",)
    assert first.pending == ("0002_top_records", "0003_run_liveness", "0004_run_results")
    assert "qar_top_records" not in tables(store_url)
    with pytest.raises(
        S.MigrationError, match=r"needs migration 0002_top_records, 0003_run_liveness, 0004_run_results; run: qar"
    ):
        S.ensure_ready(S.Store(store_url))
    assert S.migrate(store_url, to="0002").applied == ("0002_top_records",)
    assert ALL_TABLES - {"qar_run_results"} <= tables(store_url)
    assert S.migrate(store_url).applied == ("0003_run_liveness", "0004_run_results")
    S.ensure_ready(S.Store(store_url))


def test_checksum_guard(tmp_path, store_url):
    folder = tmp_path / "migrations"
    shutil.copytree(migrations_dir(), folder)
    S.migrate(store_url, folder=folder)
    edited = folder / "0001_runs.sql"
    original = edited.read_text()
    edited.write_text(original + "\n-- an innocent-looking edit\n")
    assert [m.state for m in S.status(store_url, folder=folder).migrations] == [
        "changed",
        "applied",
        "applied",
        "applied",
    ]
    with pytest.raises(S.MigrationError, match=r"migration 0001_runs was applied .* its file has changed"):
        S.migrate(store_url, folder=folder)
    # A migration the store has but this qar-sql does not know also stops writes.
    edited.write_text(original)
    (folder / "0002_top_records.sql").unlink()
    with pytest.raises(S.MigrationError, match="0002_top_records, which this qar-sql"):
        S.migrate(store_url, folder=folder)


def test_cli_migrate_and_status(tmp_path):
    store = str(tmp_path / "cli.duckdb")
    runner = CliRunner()
    r = runner.invoke(cli, ["migrate", "--status", "--store", store])
    assert r.exit_code == 0, r.output
    assert "pending  0001_runs" in r.output and not Path(store).exists()
    r = runner.invoke(cli, ["migrate", "--store", store, "--to", "0001"])
    assert r.exit_code == 0, r.output
    assert "Applied 1 migration(s)" in r.output
    r = runner.invoke(cli, ["migrate", "--store", store, "--format", "json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["applied"] == ["0002_top_records", "0003_run_liveness", "0004_run_results"]
    r = runner.invoke(cli, ["migrate", "--store", store, "--to", "0009"])
    assert r.exit_code == 2 and "--to '0009' is not a migration version" in r.output
    # a --to below the store's version would apply nothing: refused, not said "unknown" (it was
    # exit 3: "has migration 0002_top_records, which this qar-sql does not know; upgrade qar-sql")
    r = runner.invoke(cli, ["migrate", "--store", store, "--to", "0001"])
    assert r.exit_code == 2 and "does not know" not in r.output and "past --to '0001'" in r.output, r.output
    r = runner.invoke(cli, ["migrate", "--store", store, "--status", "--to", "0001"])
    assert r.exit_code == 2 and "--to has no effect with --status" in r.output, r.output


def test_dialect_sibling_wins(tmp_path, store_url):
    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "0001_t.sql").write_text("create table t (x integer);\n")
    (folder / "0001_t.duckdb.sql").write_text(
        "-- duckdb flavour\ncreate table t (x integer, flavour text default 'duckdb');\n"
    )
    (folder / "0001_t.postgresql.sql").write_text(
        "-- postgresql flavour\ncreate table t (x integer, flavour text default 'postgresql');\n"
    )
    dialect = "postgresql" if store_url.startswith("postgresql") else "duckdb"
    chosen = S.discover(dialect, folder)
    assert [m.path.name for m in chosen] == [f"0001_t.{dialect}.sql"]
    S.migrate(store_url, folder=folder)
    cols = query(
        store_url,
        "select column_name from information_schema.columns where table_name = 't' and table_schema = current_schema()",
    )
    assert {c for (c,) in cols} == {"x", "flavour"}
    assert query(store_url, "select checksum from qar_schema_migrations") == [(chosen[0].checksum,)]


def test_failed_migration_leaves_nothing(tmp_path, store_url):
    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "0001_ok.sql").write_text("create table ok (x integer);\n")
    (folder / "0002_bad.sql").write_text("create table half (x integer);\ncreate table broken (x no_such_type);\n")
    with pytest.raises(DatabaseError):
        S.migrate(store_url, folder=folder)
    assert "ok" in tables(store_url) and "half" not in tables(store_url)
    assert query(store_url, "select name from qar_schema_migrations") == [("0001_ok",)]


def test_bad_migration_names(tmp_path):
    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "1_x.sql").write_text("select 1;")
    with pytest.raises(S.MigrationError, match="'1_x.sql' is not named NNNN_slug.sql"):
        S.discover("duckdb", folder)
    (folder / "1_x.sql").unlink()
    (folder / "0001_a.sql").write_text("select 1;")
    (folder / "0001_b.sql").write_text("select 1;")
    with pytest.raises(S.MigrationError, match="share version 0001"):
        S.discover("duckdb", folder)


def test_concurrent_migrate_postgres(pg_schema):
    url = pg_store_url(pg_schema)
    barrier, errors, results = threading.Barrier(3), [], []

    def run():
        barrier.wait()
        try:
            results.append(S.migrate(url).applied)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert sorted(n for r in results for n in r) == [
        *("0001_runs", "0002_top_records", "0003_run_liveness", "0004_run_results")
    ]
    assert query(url, "select count(*) from qar_schema_migrations") == [(4,)]


# --------------------------------------------------------------------------------------------
# Recording runs


def oracle(data: dict, columns, p: int):
    """H, S, θ and the smallest class of every QI, with plain Python (NULL a value)."""
    from itertools import combinations

    rows = list(zip(*(data[c] for c in columns)))
    out = []
    for combo in combinations(range(len(columns)), p):
        sizes = Counter(tuple(r[i] for i in combo) for r in rows)
        out.append(
            (
                [columns[i] for i in combo],
                len(sizes),
                sum(1 for n in sizes.values() if n == 1),
                len(sizes) / len(rows),
                min(sizes.values()),
            )
        )
    return out


def oracle_risk(theta: np.ndarray, rows: int, alpha: float, pi_u: float) -> tuple[float, float, float, float]:
    """(u, ξ, β, T̂) by METHOD §2 written out: clip, type-8 quantile, PWM with plotting positions."""
    t = np.clip(theta, 0.5 / rows, 1 - 0.5 / rows)
    u = float(np.quantile(t, 1 - pi_u, method="median_unbiased"))
    logit = lambda x: np.log(x / (1 - x))  # noqa: E731
    x = np.sort(logit(t[t > u]) - logit(u))
    n = len(x)
    a0 = x.mean()
    a1 = np.mean((1 - (np.arange(1, n + 1) - 0.35) / n) * x)
    xi = 2 - a0 / (a0 - 2 * a1)
    beta = 2 * a0 * a1 / (a0 - 2 * a1)
    y = logit(u) + beta / xi * ((alpha / pi_u) ** (-xi) - 1)
    return u, xi, beta, float(1 / (1 + np.exp(-y)))


@pytest.mark.parametrize(("source_engine", "store_engine"), [("duckdb", "postgresql"), ("postgresql", "duckdb")])
def test_recorded_run_matches_oracle(source_engine, store_engine, tmp_path, request):
    """Each engine audited, each store written (and the store is another database)."""
    from conftest import Loader

    engine = Loader(source_engine, tmp_path)
    request.addfinalizer(engine.cleanup)
    store_url = (
        str(tmp_path / "store.duckdb")
        if store_engine == "duckdb"
        else pg_store_url(request.getfixturevalue("pg_schema"))
    )
    source, table = people(engine)
    result = S.recorded_audit(store_url, source, table=table, columns=COLS, p=P, pi_u=PI_U, alpha=0.05)
    (run,) = S.runs(store_url)
    assert run.status == "complete" and run.error is None
    assert run.table == table and list(run.columns) == COLS
    assert run.parameters == {"p": P, "alpha": 0.05, "pi_u": PI_U, "pwm": "plotting", "k": 5}
    assert run.engine == engine.name and run.engine_version == result.engine_version
    assert run.rows == 20 and run.n_qi == 6 and run.qar_version
    assert "qar_test:qar_test@" not in run.source  # the password is masked
    stored = query(
        store_url,
        f"select columns, distinct_count, singletons, theta, min_class_size from qar_qi_results where run_id = '{run.run_id}' order by qi_index",
    )
    expected = oracle(DATA, COLS, P)
    assert [(json.loads(c), h, s, t, m) for c, h, s, t, m in stored] == [
        (cols, h, s, pytest.approx(t, rel=1e-15), m) for cols, h, s, t, m in expected
    ]
    u, xi, beta, risk = oracle_risk(np.array([e[3] for e in expected]), 20, 0.05, PI_U)
    (fit,) = query(
        store_url, f"select u, xi, beta, risk, n_exceedances, n_qi from qar_fits where run_id = '{run.run_id}'"
    )
    assert fit[:4] == pytest.approx((u, xi, beta, risk), rel=1e-9)
    assert fit[5] == 6 and run.risk == pytest.approx(risk, rel=1e-9) == result.risk


def test_keyboard_interrupt_is_recorded_as_interrupted(duck, tmp_path):
    source, table = people(duck)
    store = str(tmp_path / "s.duckdb")

    def interrupt(done, total):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        S.recorded_audit(store, source, table=table, columns=COLS, p=P, pi_u=PI_U, progress=interrupt)
    (run,) = S.runs(store)
    assert (run.status, run.error) == ("interrupted", "interrupted")
    assert run.finished_at is not None and run.seconds >= 0
    assert query(store, "select count(*) from qar_qi_results") == [(0,)]
    assert query(store, "select count(*) from qar_fits") == [(0,)]


def test_lost_connection_is_recorded_as_failed(tmp_path):
    """The audited PostgreSQL connection is killed mid-scan (pg_terminate_backend)."""
    from conftest import Loader

    loader = Loader("postgresql", tmp_path)
    try:
        _, table = people(loader)
        app = f"qar_kill_{uuid.uuid4().hex[:8]}"
        sep = "&" if "?" in PG_URL else "?"
        source = f"{PG_URL}{sep}application_name={app}"
        store = str(tmp_path / "s.duckdb")
        admin = require_postgres()

        def kill(done, total):
            with admin.begin() as c:
                c.exec_driver_sql(
                    f"select pg_terminate_backend(pid) from pg_stat_activity where application_name = '{app}'"
                )

        with pytest.raises(DatabaseError):
            S.recorded_audit(
                store, source, table=table, columns=COLS, p=1, pi_u=PI_U, batch_size=1, jobs=1, progress=kill
            )
        (run,) = S.runs(store)
        assert run.status == "failed" and run.error
        assert "qar_test:qar_test@" not in run.error and "qar_test:qar_test@" not in run.source
    finally:
        loader.cleanup()


def test_error_is_recorded_as_failed_and_cli_exit_code(duck, tmp_path):
    source, table = people(duck)
    store = str(tmp_path / "s.duckdb")
    with pytest.raises(ColumnError):  # (a refusal in the store it made leaves no store behind)
        S.recorded_audit(store, source, table=table, columns=["nope"], p=1)
    assert not os.path.exists(store)
    r = CliRunner().invoke(cli, table_args("audit", source, table, COLS, "--store", store, "-q", key=None, pi_u=0.5))
    assert r.exit_code == 0, r.output
    r2 = CliRunner().invoke(cli, ["audit", source, "--table", "missing", "--store", store, "-q"])
    assert r2.exit_code == 2 and "table 'missing' not found" in r2.output
    with pytest.raises(ColumnError):
        S.recorded_audit(store, source, table=table, columns=["nope"], p=1)
    runs = S.runs(store)
    assert [x.status for x in runs] == ["complete", "failed", "failed"] and "column 'nope'" in (runs[-1].error or "")


def test_concurrent_runs_postgres_store(pg_schema, tmp_path):
    """Two audits write to one PostgreSQL store at the same time; both land intact."""
    from conftest import Loader

    url = pg_store_url(pg_schema)
    S.migrate(url)
    sources = []
    for i in range(2):
        folder = tmp_path / f"src{i}"
        folder.mkdir()
        sources.append(people(Loader("duckdb", folder)))
    barrier = threading.Barrier(2, timeout=300)  # a deadline against a hang, not a bound
    results, errors = {}, []

    def run(i):
        source, table = sources[i]
        met = []

        def together(done, total):
            if not met:  # both runs are 'running' before either goes on
                met.append(1)
                barrier.wait()

        try:
            results[i] = S.recorded_audit(
                url, source, table=table, columns=COLS, p=P, pi_u=PI_U, batch_size=1, progress=together
            )
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    runs = S.runs(url)
    assert [r.status for r in runs] == ["complete", "complete"]
    overlap = max(r.started_at for r in runs) < min(r.finished_at for r in runs)
    assert overlap
    counts = dict(query(url, "select run_id, count(*) from qar_qi_results group by run_id"))
    assert counts == {r.run_id: 6 for r in runs}
    assert {r.risk for r in runs} == {results[0].risk}  # same data, same risk
    assert query(url, "select count(*) from qar_fits") == [(2,)]


def test_top_records_hash_keys(store_url, monkeypatch):
    monkeypatch.setenv(S.HASH_SECRET_ENV, "pepper")
    st = S.Store(store_url)
    S.ensure_ready(st)
    import tempfile

    from qar_sql.measures.audit import audit

    with tempfile.TemporaryDirectory() as d:
        from conftest import Loader

        source, table = people(Loader("duckdb", Path(d)))
        result = audit(source, table=table, columns=COLS, p=P, pi_u=PI_U)
        for hashed in (True, False):
            run_id = S.start_run(st, source=source, table=table, columns=COLS, parameters={"p": P})
            S.complete_run(st, run_id, result, top_records=[(17, 0.5), ("x'y", 0.25)], hash_keys=hashed)
            st.release()  # let query() open the DuckDB file read-only
            got = query(
                store_url,
                f"select rank, record_key, key_hashed, contribution from qar_top_records where run_id = '{run_id}' order by rank",
            )
            if hashed:
                want = [hmac.new(b"pepper", k.encode(), hashlib.sha256).hexdigest() for k in ("17", "x'y")]
                assert got == [(1, want[0], True, 0.5), (2, want[1], True, 0.25)]
            else:
                assert got == [(1, "17", False, 0.5), (2, "x'y", False, 0.25)]
    st.close()


def test_store_url_errors(tmp_path):
    r = CliRunner().invoke(cli, ["migrate", "--store", str(tmp_path / "store.txt")])
    assert r.exit_code == 2 and "is neither a DuckDB file" in r.output
    r = CliRunner().invoke(cli, ["migrate", "--store", "postgresql+psycopg://qar:sekrit@localhost:1/nope"])
    assert r.exit_code == 3 and "cannot connect to store" in r.output and "sekrit" not in r.output


def test_store_that_is_the_audited_file_is_refused(tmp_path):
    """Audits never write to what they audit (issue 16, item 4): a --store pointing at the
    audited DuckDB file is refused before anything is written, unless --store-in-source."""
    import duckdb

    path = tmp_path / "data.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute("create table people as select i % 7 as a, i % 5 as b, i % 3 as c from range(60) t(i)")
    before = path.read_bytes()
    args = ["audit", str(path), "-t", "people", "-p", "1", "--pi-u", "0.5", "-q"]
    # (a hard link has another real path: it was written into; a symbolic link resolves)
    os.link(path, tmp_path / "hard.duckdb")
    (tmp_path / "soft.duckdb").symlink_to(path)
    stores = (str(path), f"duckdb:///{path}", str(tmp_path / "." / "data.duckdb"))
    for store in (*stores, str(tmp_path / "hard.duckdb"), str(tmp_path / "soft.duckdb")):
        r = CliRunner().invoke(cli, [*args, "--store", store])
        assert r.exit_code == 2 and "is the audited database itself" in r.output and "--store-in-source" in r.output
        assert path.read_bytes() == before
        r = CliRunner().invoke(
            cli, ["records", str(path), "-t", "people", "-p", "1", "--pi-u", "0.5", "--store", store]
        )
        assert r.exit_code == 2 and "--store-in-source" in r.output and path.read_bytes() == before
        # qar scan refuses it before any scan runs: each scan's refusal came after the store was
        # made in the file; the fix names --store and [store], as it has no --store-in-source
        config = tmp_path / "qar.toml"
        config.write_text(
            f'[sources.d]\nurl = "{path}"\n\n[[scan]]\nname = "s"\nsource = "d"\ntable = "people"\np = 1\npi_u = 0.5\n'
        )
        r = CliRunner().invoke(cli, ["scan", str(config), "--store", store])
        assert r.exit_code == 2 and "is the audited database itself" in r.output and "[store]" in r.output, r.output
        assert path.read_bytes() == before
    r = CliRunner().invoke(cli, [*args, "--store", str(path), "--store-in-source"])
    assert r.exit_code == 0, r.output
    with duckdb.connect(str(path), read_only=True) as con:
        assert con.execute("select status from qar_runs").fetchall() == [("complete",)]
    r = CliRunner().invoke(cli, [*args, "--store", str(tmp_path / "results.duckdb")])
    assert r.exit_code == 0, r.output


def test_a_store_url_of_another_engine_is_refused_before_any_work(tmp_path):
    """The migrations are DuckDB's and PostgreSQL's: a SQLite store failed with "no such table:
    information_schema.tables" (exit 3). Refused by name (exit 2), the file untouched."""
    import sqlite3

    path = tmp_path / "store.sqlite"
    sqlite3.connect(path).close()
    before = path.read_bytes()
    csv = tmp_path / "t.csv"
    csv.write_text("a,b,c\n" + "".join(f"{i % 3},{i % 5},{i % 7}\n" for i in range(40)))
    url = f"sqlite:///{path}"
    for args in (["audit", str(csv), "-p", "1", "--pi-u", "0.5", "-q", "--store", url], ["history", "--store", url],
                 ["migrate", "--store", url], ["migrate", "--store", url, "--status"]):  # fmt: skip
        r = CliRunner().invoke(cli, args)
        assert r.exit_code == 2, r.output
        assert (
            r.output.startswith("Error: store sqlite:///")
            and "is a sqlite database; a results store is a DuckDB" in r.output
        )
        assert "QaR audit" not in r.output
    assert path.read_bytes() == before
    r = CliRunner().invoke(cli, ["history", "--store", "mysql+pymysql://u:secret@localhost/x"])
    assert r.exit_code == 2 and "secret" not in r.output and "is a mysql database" in r.output, r.output


def test_an_empty_store_is_refused_not_the_default(tmp_path, monkeypatch):
    """``--store ""`` (a ``--store "$STORE"`` of an unset variable) read as ``--store`` alone and
    wrote the default store into the current folder; every option given alone that way (found
    in click's tree) refuses an empty text, exit 2, and nothing is made."""
    from qar_sql.cli_options import ALONE

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("QAR_STORE", raising=False)
    (tmp_path / "a.csv").write_text("a,b\n" + "".join(f"{i % 3},{i % 5}\n" for i in range(40)))
    ctx = click.Context(cli)
    found = 0
    for name in cli.list_commands(ctx):
        for p in cli.get_command(ctx, name).params:
            if isinstance(p, click.Option) and p.flag_value == ALONE:
                for empty in ("", " "):
                    r = CliRunner().invoke(cli, [name, p.opts[0], empty])
                    assert r.exit_code == 2 and "is empty" in r.output, (name, p.opts, r.output)
                    found += 1
    assert found >= 12, found
    assert sorted(os.listdir(tmp_path)) == ["a.csv"]
    r = CliRunner().invoke(cli, ["audit", "a.csv", "-p", "1", "--pi-u", "0.5", "-q", "--store"])
    assert r.exit_code == 0 and (tmp_path / "qar_results.duckdb").exists(), r.output


def test_a_refused_audit_leaves_no_new_store(tmp_path, monkeypatch):
    """An audit refused for a user's mistake (a column, a table, a source misnamed; exit 2) made
    the store it was pointed at and left it behind, holding one failed run: the store made for
    that run is removed; an existing store keeps the failed run, as before."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.csv").write_text("a,b\n" + "".join(f"{i % 3},{i % 5}\n" for i in range(40)))
    base = ["-p", "1", "--pi-u", "0.5", "-q", "--store", "s.duckdb"]
    mistakes = (["a.csv", "-c", "nosuch"], ["missing.csv"], ["a.csv", "-t", "nosuch"])
    for command in ("audit", "records"):
        for args in mistakes:
            r = CliRunner().invoke(cli, [command, *args, *base])
            assert r.exit_code == 2, (command, args, r.output)
            assert sorted(os.listdir(tmp_path)) == ["a.csv"], (command, args)
    assert CliRunner().invoke(cli, ["audit", "a.csv", *base]).exit_code == 0
    assert CliRunner().invoke(cli, ["audit", "a.csv", "-c", "nosuch", *base]).exit_code == 2
    assert [r.status for r in S.runs("s.duckdb")] == ["complete", "failed"]


@pytest.mark.parametrize("url", ["duckdb:///", "duckdb:///:memory:", "duckdb://", "DuckDB:///:memory:"])
def test_a_store_in_memory_is_refused(tmp_path, monkeypatch, url):
    """A DuckDB URL naming no file is DuckDB's memory: the audit failed on its own store (exit 3,
    "Table with name qar_runs does not exist"), and duckdb:// was said to be "a duckdb database;
    a results store is a DuckDB file". Refused by name, exit 2, by every store command."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.csv").write_text("a,b\n" + "".join(f"{i % 3},{i % 5}\n" for i in range(40)))
    for args in (
        ["audit", "a.csv", "-p", "1", "--pi-u", "0.5", "-q"],
        ["history"],
        ["migrate"],
        ["migrate", "--status"],
    ):
        r = CliRunner().invoke(cli, [*args, "--store", url])
        assert r.exit_code == 2 and "names no DuckDB file" in r.output, (args, r.output)
    assert sorted(os.listdir(tmp_path)) == ["a.csv"]


def _write(url: str, *statements: str) -> None:
    """Run ``statements`` on the store's database behind qar's back (another tool's tables)."""
    if not url.startswith("postgresql"):
        with duckdb.connect(url) as con:
            for sql in statements:
                con.execute(sql)
        return
    import sqlalchemy as sa

    eng = sa.create_engine(url, poolclass=sa.pool.NullPool)
    try:
        with eng.begin() as c:
            for sql in statements:
                c.exec_driver_sql(sql)
    finally:
        eng.dispose()


@pytest.mark.parametrize(
    "statements,says",
    [
        (["create table qar_runs (x int)", "insert into qar_runs values (42)"], "already has a table qar_runs"),
        (["create view qar_fits as select 1 as x"], "already has a table qar_fits"),
        (["create table qar_schema_migrations (version text, foo int)"], "without the column name qar writes"),
        (
            [
                "create table qar_schema_migrations (version text, name text, checksum text, applied_at timestamp)",
                "create table qar_runs (x int)",
            ],
            "already has a table qar_runs",
        ),
    ],
)
def test_a_store_holding_another_tools_qar_tables_is_refused_untouched(store_url, tmp_path, statements, says):
    """A database whose qar_runs (or tracking table) qar's migrations did not make: qar scan,
    audit --store and migrate failed with the engine's 'Table with name qar_runs already exists'
    (exit 3) after creating qar_schema_migrations in it; history and migrate --status with
    'Referenced column run_id not found' (exit 3). Now exit 2 before anything is written."""
    _write(store_url, *statements)
    before = tables(store_url)
    csv = tmp_path / "t.csv"
    csv.write_text("a,b,c\n" + "".join(f"{i % 3},{i % 5},{i % 7}\n" for i in range(40)))
    for args in (
        ["audit", str(csv), "-p", "1", "--pi-u", "0.5", "-q", "--store", store_url],
        ["migrate", "--store", store_url],
        ["migrate", "--status", "--store", store_url],
        ["history", "--store", store_url],
        ["report", str(csv), "-p", "1", "--pi-u", "0.5", "-q", "--store", store_url, "-o", str(tmp_path / "r.html")],
    ):
        r = CliRunner().invoke(cli, args)
        assert r.exit_code == 2 and says in r.output and "it is not a qar results store" in r.output, (args, r.output)
    assert tables(store_url) == before


def test_a_postgresql_store_whose_search_path_names_no_schema_is_refused():
    """?options=-csearch_path%3Dqar (as the docs put a store in one schema) before the schema
    exists: qar migrate and qar scan --store were exit 3 with PostgreSQL's "no schema has been
    selected to create in", and qar history said "no runs yet"."""
    require_postgres()
    url = pg_store_url(f"qs_missing_{uuid.uuid4().hex[:8]}")
    for args in (["migrate", "--store", url], ["migrate", "--status", "--store", url], ["history", "--store", url]):
        r = CliRunner().invoke(cli, args)
        assert r.exit_code == 2 and "no schema of its search_path (qs_missing_" in r.output, (args, r.output)
        assert "create schema NAME" in r.output
