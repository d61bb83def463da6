"""qar audit on every running engine against DuckDB, in one run (issue 12).

Default: the 1,000,000 x 18 table of bench/datagen.py, p = 3 (816 QIs), audited with
``qar_sql.audit`` on DuckDB (the reference) and on each engine that answers here: PostgreSQL
(``QAR_TEST_PG_URL``), SQLite (a file), MariaDB (``QAR_TEST_MYSQL_URL``), ClickHouse (chdb, a
folder) and Spark (the Connect server at ``--spark-url`` / ``QAR_TEST_SPARK_URL``; start one with
``source scripts/spark.sh``). Loading is not timed. Every engine's H and S per QI must equal
DuckDB's; the script prints each engine's median time and its ratio to DuckDB.

``--spark-10m``: 10,000,000 rows, DuckDB against Spark only (Spark local, 2 cores: the server of
scripts/spark.sh), and where Spark's time goes, from the per-statement timings and the metrics
Spark Connect returns with each result: analysis (parse and resolve), the run (optimise, plan,
execute, fetch) split into shuffle write, shuffle fetch wait, task pipeline and aggregation time
(summed over tasks), and the rows collected. This takes long: run it on an otherwise idle machine.
"""

from __future__ import annotations

import argparse
import logging
import math
import os
import shutil
import sqlite3
import sys
import tempfile
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import common  # noqa: E402
import datagen  # noqa: E402

import qar_sql  # noqa: E402

TABLE = "people"
ENGINES = ("duckdb", "postgresql", "sqlite", "mariadb", "clickhouse", "spark")


def hs(result) -> list[tuple[int, int]]:
    return [(q.distinct, q.singletons) for q in result.qis]


# ---------------------------------------------------------------------------------------------
# Loading the generated table into each engine (not timed). Each returns (source, table, cleanup)
# or raises with the reason the engine cannot run here.


def load_postgresql(duck_path: str, data, work: Path):
    url = os.environ.get("QAR_TEST_PG_URL", "postgresql+psycopg://qar_test:qar_test@localhost:5432/qar_test")
    import sqlalchemy as sa

    schema = f"qar_bench_{os.getpid()}"
    eng = sa.create_engine(url)
    with eng.begin() as c:
        c.exec_driver_sql(f'create schema "{schema}"')
    datagen.write_postgres(url, f"{schema}.{TABLE}", data)

    def cleanup():
        with eng.begin() as c:
            c.exec_driver_sql(f'drop schema "{schema}" cascade')

    return url, f"{schema}.{TABLE}", cleanup


def load_sqlite(duck_path: str, data, work: Path):
    """One prepared INSERT run over all rows in one transaction, without a journal or fsync:
    SQLite's bulk path (it has no COPY); 1,000,000 rows take seconds."""
    path = work / "bench.db"
    names = list(data)
    con = sqlite3.connect(path, isolation_level=None)
    try:
        con.execute("pragma journal_mode = off")
        con.execute("pragma synchronous = off")
        con.execute("begin")
        con.execute(f"create table {TABLE} ({', '.join(f'{n} text' for n in names)})")
        con.executemany(f"insert into {TABLE} values ({', '.join('?' * len(names))})", zip(*data.values(), strict=True))
        con.execute("commit")
    finally:
        con.close()
    return f"sqlite:///{path}", TABLE, lambda: None


def load_mariadb(duck_path: str, data, work: Path):
    """LOAD DATA LOCAL INFILE of a CSV that DuckDB writes (NULL as \\N): MariaDB's bulk path,
    far faster than INSERTs through the driver."""
    url = os.environ.get("QAR_TEST_MYSQL_URL", "mysql+pymysql://qar_test:qar_test@127.0.0.1:3306/qar_test")
    import duckdb
    import sqlalchemy as sa

    database = f"qar_test_bench_{os.getpid()}"
    csv = work / "bench.csv"
    con = duckdb.connect(duck_path, read_only=True)
    try:
        con.execute(f"copy {TABLE} to '{csv}' (header false, delimiter ',', nullstr '\\N')")
    finally:
        con.close()
    eng = sa.create_engine(url, connect_args={"local_infile": True})
    with eng.begin() as c:
        c.exec_driver_sql(f"create database `{database}`")
        c.exec_driver_sql(f"create table `{database}`.{TABLE} ({', '.join(f'{n} varchar(32)' for n in data)})")
        c.exec_driver_sql(
            f"load data local infile '{csv}' into table `{database}`.{TABLE} "
            "fields terminated by ',' optionally enclosed by '\"' lines terminated by '\\n'"
        )
    csv.unlink()

    def cleanup():
        with eng.begin() as c:
            # An audit stopped at its budget leaves its statement running (and locking the table).
            ids = c.exec_driver_sql(
                "select id from information_schema.processlist "
                f"where instr(info, '{database}') > 0 and id <> connection_id()"
            )
            for (pid,) in ids.fetchall():
                c.exec_driver_sql(f"kill {int(pid)}")
            c.exec_driver_sql(f"drop database `{database}`")

    return url, f"{database}.{TABLE}", cleanup


def _parquet(duck_path: str, work: Path) -> Path:
    import duckdb

    path = work / "bench.parquet"
    if not path.exists():
        con = duckdb.connect(duck_path, read_only=True)
        try:
            con.execute(f"copy {TABLE} to '{path}' (format parquet)")
        finally:
            con.close()
    return path


def load_clickhouse(duck_path: str, data, work: Path):
    import chdb

    folder = work / "chdb"
    parquet = _parquet(duck_path, work)
    con = chdb.connect(str(folder))
    try:
        cur = con.cursor()
        cur.execute("create database bench")
        ddl = ", ".join(f"{n} Nullable(String)" for n in data)
        cur.execute(f"create table bench.{TABLE} ({ddl}) engine = MergeTree order by tuple()")
        cur.execute(f"insert into bench.{TABLE} select * from file('{parquet}', Parquet)")
    finally:
        con.close()
    return f"chdb://{folder}", f"bench.{TABLE}", lambda: None


def spark_url(args) -> str:
    url = args.spark_url or os.environ.get("QAR_TEST_SPARK_URL")
    if not url:
        raise RuntimeError("no Spark Connect server: pass --spark-url or run `source scripts/spark.sh`")
    return url


def load_spark(duck_path: str, data, work: Path, url: str):
    from pyspark.sql import SparkSession

    parquet = _parquet(duck_path, work)
    spark = SparkSession.builder.remote(url).create()
    database = f"qar_bench_{os.getpid()}_{uuid.uuid4().hex[:6]}"
    spark.sql(f"create database {database}")
    spark.sql(f"create table {database}.{TABLE} using parquet location '{parquet}'")

    def cleanup():
        spark.sql(f"drop database {database} cascade")
        spark.stop()

    return url, f"{database}.{TABLE}", cleanup


# ---------------------------------------------------------------------------------------------
# Where Spark's time goes: the adapter logs each statement's analysis and run time and Spark's
# metrics at DEBUG (qar_sql/engines/spark.py).


class SparkSpans(logging.Handler):
    """Sends each statement's (analysis s, run s, metrics) to ``out`` as it finishes, so the split
    is known even of an audit stopped at its budget."""

    def __init__(self, out):
        super().__init__(logging.DEBUG)
        self.out = out

    def emit(self, record):
        if record.msg.startswith("spark time:"):
            self.out.put(("span", record.args))


def print_spark_spans(statements: list, wall: float | None, repeat: int) -> None:
    """The split of one audit (the sums over ``repeat`` runs, divided by ``repeat``); ``wall``
    None: of the statements an audit stopped at its budget finished."""
    st = [(a / repeat, r / repeat, {k: v / repeat for k, v in m.items()}) for a, r, m in statements]
    if not st:
        print("  (no Spark statement timings were logged)")
        return
    analyse, run = sum(s[0] for s in st), sum(s[1] for s in st)
    total = {
        k: sum(s[2].get(k, 0.0) for s in st)
        for k in ("shuffle_write_s", "shuffle_fetch_wait_s", "task_s", "aggregate_s", "shuffle_bytes")
    }
    of = f"audit wall {wall:.1f} s" if wall is not None else "the statements that finished"
    print(f"  where Spark's time goes ({len(st)} statements, {of}):")
    print(f"    analysis (parse, resolve; client round trip): {analyse:8.1f} s wall")
    print(f"    run (optimise, plan, execute, collect):      {run:8.1f} s wall")
    if wall is not None:
        print(f"    python outside statements (profile maths, fit): {max(wall - analyse - run, 0):6.1f} s wall")
    print("    inside the runs, summed over tasks (2 cores run two at once):")
    print(f"      task pipeline time      {total['task_s']:8.1f} s")
    print(f"      aggregation (hash) time {total['aggregate_s']:8.1f} s")
    print(
        f"      shuffle write time      {total['shuffle_write_s']:8.1f} s ({total['shuffle_bytes'] / 1e6:.1f} MB written)"
    )
    print(f"      shuffle fetch wait      {total['shuffle_fetch_wait_s']:8.1f} s")
    slowest = max(range(len(st)), key=lambda i: st[i][1])
    print(f"    slowest statement: #{slowest} run {st[slowest][1]:.1f} s, analysis {st[slowest][0]:.2f} s")


def _audit_child(name: str, source: str, table: str, args, progress, out) -> None:
    """One engine's timed audits, in a process of its own so that the budget can stop it.
    ``progress`` is a shared array (statements done, statements in all, seconds since the epoch
    when the audit began); the Spark statement timings and then the result go to the queue ``out``."""
    import time

    if name == "spark":
        log = logging.getLogger("qar_sql.engines.spark")
        log.setLevel(logging.DEBUG)
        log.addHandler(SparkSpans(out))

    def tick(done: int, total: int) -> None:
        progress[0], progress[1] = done, total

    progress[2] = time.time()
    batch = dict(b.split("=") for b in args.batch_size).get(name)
    t, _, result = common.timed(
        lambda: qar_sql.audit(source, table=table, p=args.p, batch_size=batch and int(batch), progress=tick),
        args.repeat,
        name,
    )
    out.put(("done", t, hs(result)))


def run_engine(name: str, source: str, table: str, args, statements: list) -> tuple[float, list] | str:
    """(median s, H and S per QI), or why there is no time: an error, or how far the audit got
    within ``--budget`` seconds and the rate it ran at. Spark's statement timings are appended
    to ``statements``."""
    import multiprocessing as mp
    import queue
    import time

    ctx = mp.get_context("spawn")  # no fork: the parent may hold gRPC / database connections
    progress, out = ctx.Array("d", 3), ctx.Queue()
    proc = ctx.Process(target=_audit_child, args=(name, source, table, args, progress, out))
    started = time.time()
    proc.start()
    try:
        while True:
            try:
                kind, *got = out.get(timeout=5)
                if kind == "done":
                    return got[0], got[1]
                statements.append(got[0])
                continue
            except queue.Empty:
                pass
            if not proc.is_alive():
                return f"failed (exit {proc.exitcode}; its traceback is above)"
            if time.time() - started > args.budget:
                # qar reports finished statements (each a batch of QIs), not single QIs.
                done, total, first = progress[:]
                run = time.time() - (first or started)
                n_qi = math.comb(args.cols, args.p)
                qis = n_qi * done / total if total else 0.0
                rate = qis / run if run > 0 else 0.0
                left = f"; all {n_qi} at that rate: ~{n_qi / rate:.0f} s" if rate else ""
                return (
                    f"stopped at the {args.budget:.0f} s budget: {done:.0f} of {total:.0f} statements "
                    f"(~{qis:.0f} of {n_qi} QIs) in {run:.0f} s, {rate:.3f} QIs/s{left}"
                )
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    common.table_options(ap, rows=1_000_000)
    ap.add_argument("-p", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=1, help="runs of each audit (median)")
    ap.add_argument("--engines", nargs="+", choices=ENGINES, default=list(ENGINES), help="engines to try")
    ap.add_argument("--spark-url", help="Spark Connect URL (default: $QAR_TEST_SPARK_URL)")
    ap.add_argument(
        "--budget",
        type=float,
        default=1200,
        help="seconds each engine's audits may take (loading not counted); past it the engine is stopped "
        "and the QIs it reached and its rate are reported",
    )
    ap.add_argument(
        "--batch-size",
        nargs="*",
        default=[],
        metavar="ENGINE=N",
        help="QIs per statement on that engine (default: qar's); small batches measure a slow engine's rate",
    )
    ap.add_argument(
        "--spark-10m", action="store_true", help="10,000,000 rows, DuckDB against Spark only, with Spark's time split"
    )
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent / "out"), help="folder for the data")
    args = ap.parse_args(argv)
    if args.spark_10m:
        args.rows, args.engines = 10_000_000, ["duckdb", "spark"]
    common.print_versions()
    print(f"table: {args.rows:,} rows x {args.cols} columns, p = {args.p}; budget {args.budget:.0f} s per engine")
    duck_path, data = common.duckdb_table(args.out, "engines", TABLE, args.rows, args.cols, args.seed)
    work = Path(tempfile.mkdtemp(prefix="qar-bench-engines-", dir=args.out))
    results: dict[str, tuple[float, list]] = {}
    statements: list = []  # Spark's (analysis s, run s, metrics) per statement
    try:
        for name in ["duckdb"] + [e for e in args.engines if e != "duckdb"]:
            cleanup = None
            try:
                if name == "duckdb":
                    source, table = duck_path, TABLE
                elif name == "spark":
                    source, table, cleanup = load_spark(duck_path, data, work, spark_url(args))
                else:
                    source, table, cleanup = globals()[f"load_{name}"](duck_path, data, work)
            except Exception as exc:  # the engine is not running here: say so and go on
                print(f"{name:>10}: not run ({str(exc).strip().splitlines()[0][:150]})", flush=True)
                continue
            try:
                got = run_engine(name, source, table, args, statements)
            finally:
                if cleanup:
                    cleanup()
            if isinstance(got, str):
                print(f"{name:>10}: {got}", flush=True)
                if name == "spark":
                    print_spark_spans(statements, None, 1)
            else:
                results[name] = got
                print(f"{name:>10}: {got[0]:.2f} s", flush=True)
        if "duckdb" not in results:
            return 1
        ref_t, ref = results["duckdb"]
        print(f"{'engine':>10}  {'median s':>9}  {'x DuckDB':>8}  H and S per QI")
        for name, (t, counts) in results.items():
            same = "reference" if name == "duckdb" else ("identical" if counts == ref else "DIFFERENT")
            print(f"{name:>10}  {t:9.2f}  {t / ref_t:8.2f}  {same}")
            if name == "spark":
                print_spark_spans(statements, t, args.repeat)
        return 0 if all(counts == ref for _, counts in results.values()) else 1
    finally:
        common.remove_duckdb(duck_path)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
