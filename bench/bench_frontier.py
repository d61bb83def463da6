"""The p = 4 frontier (issue 30): the pruned audit (--prune auto) against the full one (--prune off).

Data: ``--rows`` (default 100,000) rows x 50 skewed categorical columns (bench/datagen.py,
seeded; its first 25 columns are the 25-column table of the issue, generated alone when only
that case runs), written to a DuckDB file
under bench/out/ or, with ``--engine postgresql``, to a table on ``$QAR_TEST_PG_URL``.

Cases (``--cases``, comma-separated):

* ``n25p4``     — 25 columns, p = 4 (12,650 QIs): pruned, then unpruned (``--no-off`` skips it);
  identical T̂, u, ξ, β bit for bit (checked); target pruned ≥ 2x faster at 100,000 rows, ≥ 3x at
  1,000,000;
* ``n50p3``     — 50 columns, p = 3 (19,600 QIs), pruned (and unpruned unless ``--no-off``);
* ``n50p4``     — 50 columns, p = 4 (230,300 QIs), pruned only (unpruned takes hours); target
  under 30 minutes and 4 GB at 1,000,000 rows.

Each audit runs in a child process of its own, so its peak memory (ru_maxrss: Python and the
engine in it) is its own. Printed per audit: wall seconds, QIs grouped / pruned, peak memory, the
load average, and for pruned audits where the time went (codes, the (p − 1)-level scan, bounds
and frontier, the rounds of p-level GROUP BYs).

    python bench/bench_frontier.py [--rows N] [--cases n25p4,n50p3,n50p4] [--engine duckdb|postgresql] [--no-off]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # benchmark the checkout, not an installed copy
sys.path.insert(0, str(HERE))

CASES = {"n25p4": (25, 4), "n50p3": (50, 3), "n50p4": (50, 4)}
TABLE = "frontier"


def child(source: str, table: str, n_cols: int, p: int, prune: str, jobs: int) -> None:
    """One audit; one JSON line on stdout."""
    import qar_sql
    from qar_sql.measures import audit as audit_module

    phases: dict = {}
    real = audit_module.pruned_scan

    def spy(*args, **kwargs):
        out = real(*args, **kwargs)
        phases.update(out.seconds, round_count=out.rounds)
        return out

    audit_module.pruned_scan = spy
    started = time.perf_counter()
    r = qar_sql.audit(source, table=table, columns=[f"c{j:02d}" for j in range(n_cols)], p=p, prune=prune, jobs=jobs)
    seconds = time.perf_counter() - started
    f = r.fit
    print(
        json.dumps(
            {
                "seconds": seconds,
                "n_qi": r.n_qi,
                "grouped": r.n_grouped,
                "pruned": r.n_pruned,
                "subsets": r.n_subsets,
                "fit": None if f is None else [f.risk.hex(), f.u.hex(), f.xi.hex(), f.beta.hex(), f.n_exceedances],
                "risk": r.risk,
                "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                "load": os.getloadavg()[0],
                "phases": phases,
            }
        ),
        flush=True,
    )


def run(source: str, table: str, n_cols: int, p: int, prune: str, jobs: int) -> dict:
    cmd = [sys.executable, __file__, "--child", source, table, str(n_cols), str(p), prune, str(jobs)]
    print(f"  {n_cols} columns, p = {p}, --prune {prune} ...", file=sys.stderr, flush=True)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def describe(label: str, r: dict) -> str:
    ph = r["phases"]
    where = (
        f"; codes {ph['codes']:.1f} s, {r['subsets']:,} subsets {ph['subsets']:.1f} s, bounds {ph['bounds']:.1f} s, "
        f"{ph['round_count']} rounds {ph['rounds']:.1f} s"
        if ph
        else ""
    )
    return (
        f"{label:<22} {r['seconds']:>9.1f} s  grouped {r['grouped']:>7,}  pruned {r['pruned']:>7,}  "
        f"peak {r['peak_mb']:>6,.0f} MB  load {r['load']:.2f}  T̂ {r['risk']!r}{where}"
    )


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        source, table, n, p, prune, jobs = sys.argv[2:8]
        child(source, table, int(n), int(p), prune, int(jobs))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--cases", default="n25p4,n50p3,n50p4")
    ap.add_argument("--engine", choices=["duckdb", "postgresql"], default="duckdb")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--no-off", action="store_true", help="skip the unpruned audits")
    ap.add_argument("--seed", type=int, default=20240601)
    ap.add_argument("--out", default=str(HERE / "out"))
    ap.add_argument("--keep", action="store_true", help="keep the table (file or PostgreSQL table)")
    args = ap.parse_args()
    cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    unknown = [c for c in cases if c not in CASES]
    if unknown:
        ap.error(f"unknown case {unknown[0]!r}; use {', '.join(CASES)}")

    import datagen
    from common import print_versions, remove_duckdb

    print_versions()
    n_table = max(CASES[c][0] for c in cases)  # the first 25 columns of 50 are the 25-column table
    data = datagen.skewed_table(args.rows, n_table, args.seed)
    if args.engine == "duckdb":
        Path(args.out).mkdir(parents=True, exist_ok=True)
        source = str(Path(args.out) / f"frontier_{args.rows}_{os.getpid()}.duckdb")
        datagen.write_duckdb(source, TABLE, data)
        table = TABLE
    else:
        source = os.environ.get("QAR_TEST_PG_URL", "postgresql+psycopg://qar_test:qar_test@localhost:5432/qar_test")
        table = f"{TABLE}_{args.rows}_{os.getpid()}"
        datagen.write_postgres(source, table, data)
    del data
    print(f"{args.rows:,} rows x {n_table} columns on {args.engine}; jobs {args.jobs}")
    try:
        for case in cases:
            n_cols, p = CASES[case]
            pruned = run(source, table, n_cols, p, "auto", args.jobs)
            print(describe(f"{case} pruned", pruned), flush=True)
            if args.no_off or case == "n50p4":
                continue
            full = run(source, table, n_cols, p, "off", args.jobs)
            print(describe(f"{case} unpruned", full), flush=True)
            same = pruned["fit"] == full["fit"]
            print(
                f"{case}: pruned {full['seconds'] / pruned['seconds']:.2f}x faster; "
                f"T̂, u, ξ, β, exceedances bit for bit equal: {same}",
                flush=True,
            )
            if not same:
                print("MISMATCH", pruned["fit"], full["fit"])
                return 1
    finally:
        if args.keep:
            print(f"kept: {source} table {table}")
        elif args.engine == "duckdb":
            remove_duckdb(source)
        else:
            _drop_pg(source, table)
    return 0


def _drop_pg(url: str, table: str) -> None:
    import psycopg
    from datagen import libpq_url
    from psycopg import sql

    with psycopg.connect(libpq_url(url)) as con:
        con.execute(sql.SQL("drop table if exists {}").format(sql.Identifier(table)))


if __name__ == "__main__":
    sys.exit(main())
