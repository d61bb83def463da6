"""Speed of proper (greedy) backward elimination, ``qar_sql.ranking.greedy.greedy_elimination``.

Data: ``--rows`` (default 100,000) rows x ``--cols`` (default 12) skewed categorical columns
(bench/datagen.py, seeded) plus an ``id`` key, written to a DuckDB file under bench/out/. Timed
on embedded DuckDB with p = 3 (220 QIs) and ``--steps`` (default 500) steps:

* setup  — count, read the L x N integer codes in key order, build the per-QI groups and the
  distinct uniqueness patterns;
* steps  — the elimination itself (per step: T̂ of every distinct live pattern, the update).

Also printed: distinct patterns at the start, peak memory (ru_maxrss), and the reduction
1 − T̂_s / T̂_0 after the last step.

    python bench/bench_greedy.py [--rows N] [--cols N] [--steps S] [--p P]
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # benchmark the checkout, not an installed copy
sys.path.insert(0, str(HERE))

import datagen  # noqa: E402
from common import table_options  # noqa: E402

from qar_sql.engines.source import open_source  # noqa: E402
from qar_sql.pushdown.record_codes import fetch_codes  # noqa: E402
from qar_sql.ranking import greedy  # noqa: E402
from qar_sql.ranking.records import record_order  # noqa: E402

TABLE = "people"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    table_options(ap, rows=100_000, cols=12)
    ap.add_argument("--steps", type=int, default=500)
    ap.add_argument("--p", type=int, default=3)
    ap.add_argument("--pi-u", type=float, default=0.05)
    args = ap.parse_args()

    out = HERE / "out"
    out.mkdir(exist_ok=True)
    path = out / f"greedy_{args.rows}x{args.cols}.duckdb"
    if not path.exists():
        data = datagen.skewed_table(args.rows, args.cols, seed=args.seed)
        data = {"id": np.arange(args.rows).astype(str).astype(object), **data}
        datagen.write_duckdb(str(path), TABLE, data)
    columns = [datagen.column_name(j) for j in range(args.cols)]

    db, relation = open_source(str(path), table=TABLE)
    with db:
        order_by, _ = record_order(db, relation, ["id"], columns)
        t0 = time.perf_counter()
        codes = fetch_codes(db, relation, columns, order_by)
        t_fetch = time.perf_counter() - t0

        marks = {}

        def progress(done, total):
            marks.setdefault("first", time.perf_counter())

        t0 = time.perf_counter()
        res = greedy.greedy_elimination(
            db,
            relation,
            columns,
            args.p,
            order_by,
            steps=args.steps,
            alpha=0.01,
            pi_u=args.pi_u,
            progress=progress,
        )
        t_total = time.perf_counter() - t0

    t_setup = marks["first"] - t0 if "first" in marks else t_total
    print(f"machine        : {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}")
    print(f"data           : {args.rows:,} rows x {args.cols} columns, p = {args.p}, pi_u = {args.pi_u}")
    print(f"codes fetch    : {t_fetch:.2f} s ({codes.size:,} integer codes)")
    print(
        f"greedy total   : {t_total:.2f} s for {len(res.removed)} steps "
        f"(setup + first step {t_setup:.2f} s, then {(t_total - t_setup) / max(len(res.removed) - 1, 1) * 1000:.1f} ms/step)"
    )
    print(f"patterns       : {res.distinct_patterns:,} distinct uniqueness patterns at the start")
    print(
        f"risk           : T0 = {res.risk[0]:.6f}, T{len(res.removed)} = {res.risk[-1]:.6f}, "
        f"reduction {res.reduction[-1]:.2%}"
    )
    print(f"peak memory    : {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    for w in res.warnings:
        print("warning        :", w)


if __name__ == "__main__":
    main()
