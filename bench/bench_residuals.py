"""Residuals in the pruned audit (issue 30): the QIs of the first pruning round that have a
residual, grouped over the whole table and over their residuals, in the same process.

Data: ``--rows`` (default 1,000,000) x ``--cols`` (default 36) skewed columns (bench/datagen.py,
the frontier's table), p = 4. The (p − 1)-level is scanned once for the bounds and the plan; the
first round's residual groups are sampled (``--sample`` QIs, whole groups) and split in four
chunks, each timed both ways in alternating order so that a change of load falls on both.
Prints the seconds of each way, their ratio, and checks the histograms are identical.

    python bench/bench_residuals.py [--rows N] [--cols N] [--sample N]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # benchmark the checkout, not an installed copy
sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402
from common import duckdb_table, file_options, parser, print_versions, remove_duckdb  # noqa: E402

P = 4


def main() -> int:
    ap = parser(__doc__, rows=1_000_000, cols=36)
    ap.add_argument("--sample", type=int, default=800, help="QIs with a residual to time (whole groups)")
    file_options(ap, HERE / "out")
    args = ap.parse_args()

    from qar_sql.engines.source import session_of
    from qar_sql.pushdown import prune, scan
    from qar_sql.stats import evt

    print_versions()
    path, data = duckdb_table(args.out, "residuals", "frontier", args.rows, args.cols, args.seed)
    del data
    cols = [f"c{j:02d}" for j in range(args.cols)]
    try:
        with session_of(path, table="frontier") as s:
            db, rel = s.db, s.relation.sql
            codes = "qar_bench_codes"
            for sql in scan.materialize_statements(db.dialect, rel, cols, codes):
                db.query(sql)
            opts = scan.StatementOptions(codes_table=codes, jobs=2)
            singles = scan.histograms(db, rel, cols, 1, rows=args.rows, **opts)
            values = [sum(c for _, c in singles[i]) for i in range(len(cols))]
            t = time.perf_counter()
            hist = scan.histograms(db, rel, cols, P - 1, rows=args.rows, **opts)
            print(f"{len(hist):,} QIs of size {P - 1} for the bounds: {time.perf_counter() - t:.1f} s")
            below = prune.level(hist, len(hist), values)
            combos = prune.qi_array(len(cols), P)
            b = prune.bounds(below, combos, len(cols), values)
            frontier = prune.Frontier(b.distinct_low, b.distinct_high, evt.tail_width(len(combos), 0.05))
            chosen = frontier.next_round()
            plan = prune.residual_plan(chosen, combos, below, len(cols), args.rows)
            groups: dict[tuple[int, ...], list[int]] = {}
            for j, (subset, _) in plan.items():
                groups.setdefault(subset, []).append(j)
            keys = list(groups)
            np.random.default_rng(0).shuffle(keys)
            picked: list[tuple[int, ...]] = []
            for key in keys:
                picked.append(key)
                if sum(len(groups[k]) for k in picked) >= args.sample:
                    break
            chunks = [sorted(j for key in picked[i::4] for j in groups[key]) for i in range(4)]
            seconds = {"whole table": 0.0, "residuals": 0.0}
            for k, chunk in enumerate(chunks):
                got = {}
                for way in ("whole table", "residuals") if k % 2 == 0 else ("residuals", "whole table"):
                    t = time.perf_counter()
                    residuals = {j: plan[j] for j in chunk} if way == "residuals" else None
                    got[way] = scan.histograms(
                        db, rel, cols, P, rows=args.rows, only=chunk, residuals=residuals, **opts
                    )
                    seconds[way] += time.perf_counter() - t
                same = {j: sorted(h) for j, h in got["whole table"].items()} == {
                    j: sorted(h) for j, h in got["residuals"].items()
                }
                if not same:
                    print("MISMATCH in chunk", k)
                    return 1
            n = sum(len(c) for c in chunks)
            print(
                f"first round: {len(chosen):,} QIs, {len(plan):,} of them from {len(groups):,} residuals; "
                f"timed {n:,} of those in {len(picked)} residual groups"
            )
            print(
                f"whole table {seconds['whole table']:.1f} s, residuals {seconds['residuals']:.1f} s "
                f"(making them included): {seconds['whole table'] / seconds['residuals']:.2f}x; "
                "identical histograms: True"
            )
            db.drop_temp_tables([codes])
    finally:
        if not args.keep:
            remove_duckdb(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
