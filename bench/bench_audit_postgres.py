"""Speed of ``qar_sql.measures.audit`` on PostgreSQL against a naive loop of one GROUP BY per QI.

Setup (not timed): ``--rows`` (default 100,000) rows x 18 skewed categorical columns
(bench/datagen.py, seeded) are loaded with COPY into a scratch schema this script creates on
the server at ``$QAR_BENCH_PG_URL`` (else ``$QAR_TEST_PG_URL``, else the local test server), and
a login role with SELECT on that table only. Both are dropped at the end.

Timed, both as that read-only role:

* audit — ``qar_sql.audit(url, table=..., p=3, jobs=J)`` for J in ``--jobs`` (default 1 2 4);
* naive — 816 round trips, one statement per QI returning its H and S:
  ``select count(*), count(*) filter (where n = 1) from (select count(*) as n from t group by
  a, b, c) g``.

H and S must be identical per QI. Target (issue 2): audit >= 2x faster than the naive loop.

    python bench/bench_audit_postgres.py [--rows N] [--repeat R] [--jobs 1 2 4]
"""

from __future__ import annotations

import itertools
import os
import platform
import secrets
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # benchmark the checkout, not an installed copy
sys.path.insert(0, str(HERE))

import datagen  # noqa: E402
from common import parser, timed, verdict  # noqa: E402

import qar_sql  # noqa: E402

DEFAULT_URL = "postgresql+psycopg://qar_test:qar_test@localhost:5432/qar_test"
TABLE = "people"


def naive_loop(conninfo: str, schema: str, names, combos) -> list[tuple[int, int]]:
    """One statement and one round trip per QI, H and S computed by the server."""
    import psycopg
    from psycopg import sql

    table = sql.Identifier(schema, TABLE)
    out = []
    with psycopg.connect(conninfo, autocommit=True) as con:
        for combo in combos:
            cols = sql.SQL(", ").join(sql.Identifier(names[i]) for i in combo)
            stmt = sql.SQL(
                "select count(*), count(*) filter (where n = 1) from (select count(*) as n from {} group by {}) g"
            ).format(table, cols)
            h, s = con.execute(stmt).fetchone()
            out.append((int(h), int(s)))
    return out


def main(argv=None) -> int:
    ap = parser(__doc__, repeat_help="runs of each audit (median)", rows=100_000)
    ap.add_argument("-p", type=int, default=3)
    ap.add_argument("--naive-repeat", type=int, default=1)
    ap.add_argument("--jobs", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--batch-size", type=int, default=None, help="audit(batch_size=...)")
    args = ap.parse_args(argv)

    import psycopg
    from psycopg import sql
    from sqlalchemy.engine import make_url

    url = os.environ.get("QAR_BENCH_PG_URL") or os.environ.get("QAR_TEST_PG_URL") or DEFAULT_URL
    admin = datagen.libpq_url(url)
    suffix = f"{os.getpid()}_{secrets.token_hex(3)}"
    schema, role, password = f"qar_bench_{suffix}", f"qar_bench_ro_{suffix}", secrets.token_hex(16)
    ro_url = make_url(url).set(username=role, password=password)
    ro_sqlalchemy = ro_url.render_as_string(hide_password=False)
    ro_conninfo = datagen.libpq_url(ro_sqlalchemy)

    print(f"qar_sql {qar_sql.__version__} from {Path(qar_sql.__file__).parent}")
    with psycopg.connect(admin, autocommit=True) as con:
        version = con.execute("show server_version").fetchone()[0]
        settings = {
            k: con.execute(sql.SQL("show {}").format(sql.Identifier(k))).fetchone()[0]
            for k in ("work_mem", "max_parallel_workers_per_gather", "shared_buffers")
        }
    print(
        f"python {platform.python_version()}, PostgreSQL {version} at "
        f"{make_url(url).render_as_string(hide_password=True)} "
        f"({', '.join(f'{k}={v}' for k, v in settings.items())}); {os.cpu_count()} CPUs; "
        f"load average {os.getloadavg()[0]:.2f}"
    )

    t0 = time.perf_counter()
    data = datagen.skewed_table(args.rows, args.cols, args.seed)
    names = list(data)
    combos = list(itertools.combinations(range(len(names)), args.p))
    n_qi = len(combos)
    ident_schema, ident_role = sql.Identifier(schema), sql.Identifier(role)
    created_role = False
    with psycopg.connect(admin, autocommit=True) as con:
        con.execute(sql.SQL("create schema {}").format(ident_schema))
    try:
        datagen.write_postgres(url, f"{schema}.{TABLE}", data)
        with psycopg.connect(admin, autocommit=True) as con:
            con.execute(sql.SQL("create role {} login password {}").format(ident_role, sql.Literal(password)))
            created_role = True
            db = con.execute("select current_database()").fetchone()[0]
            con.execute(sql.SQL("grant connect on database {} to {}").format(sql.Identifier(db), ident_role))
            con.execute(sql.SQL("grant usage on schema {} to {}").format(ident_schema, ident_role))
            con.execute(sql.SQL("grant select on {} to {}").format(sql.Identifier(schema, TABLE), ident_role))
        # The audit role must really be read-only: a write is refused.
        with psycopg.connect(ro_conninfo, autocommit=True) as con:
            try:
                con.execute(sql.SQL("create table {} (x int)").format(sql.Identifier(schema, "probe")))
                read_only = "NO - the role could create a table"
            except psycopg.errors.InsufficientPrivilege:
                read_only = "yes (create table refused: permission denied)"
        print(
            f"setup (not timed): {args.rows:,} rows x {len(names)} columns, seed {args.seed}, "
            f"p = {args.p} -> {n_qi} QIs, loaded by COPY into {schema}.{TABLE} in "
            f"{time.perf_counter() - t0:.1f} s; audit role {role} has SELECT only: {read_only}"
        )
        print()

        audits = {}
        for jobs in args.jobs:

            def run(jobs=jobs):
                return qar_sql.audit(
                    ro_sqlalchemy,
                    table=f"{schema}.{TABLE}",
                    p=args.p,
                    jobs=jobs,
                    batch_size=args.batch_size,
                )

            audits[jobs] = timed(run, args.repeat, f"audit jobs={jobs}")
        t_naive, naive_times, naive_hs = timed(
            lambda: naive_loop(ro_conninfo, schema, names, combos), args.naive_repeat, "naive loop"
        )
    finally:
        with psycopg.connect(admin, autocommit=True) as con:
            con.execute(sql.SQL("drop schema if exists {} cascade").format(ident_schema))
            if created_role:
                db = con.execute("select current_database()").fetchone()[0]
                con.execute(sql.SQL("revoke connect on database {} from {}").format(sql.Identifier(db), ident_role))
                con.execute(sql.SQL("drop role if exists {}").format(ident_role))

    fmt = lambda ts: ", ".join(f"{t:.2f}" for t in ts)  # noqa: E731
    print(f"{'timing':<40}{'median s':>10}   runs")
    same = {}
    for jobs, (t, times, result) in audits.items():
        hs = [(q.distinct, q.singletons) for q in result.qis]
        assert [tuple(names.index(c) for c in q.columns) for q in result.qis] == combos
        same[jobs] = hs == naive_hs
        print(f"{f'audit, jobs={jobs}':<40}{t:>10.2f}   {fmt(times)}")
    print(f"{f'naive loop, {n_qi} GROUP BY round trips':<40}{t_naive:>10.2f}   {fmt(naive_times)}")
    print()
    print(
        f"identical H and S, audit = naive on all {n_qi} QIs: " + ", ".join(f"jobs={j}: {ok}" for j, ok in same.items())
    )
    print()
    for jobs, (t, _, _) in audits.items():
        ratio = t_naive / t
        print(f"naive / audit (jobs={jobs}) = {ratio:5.2f}x   target >= 2x: {verdict(ratio >= 2)}")
    return 0 if all(same.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
