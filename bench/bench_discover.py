"""Speed of ``qar discover --max-size 3`` on 1,000,000 rows × 18 skewed categorical columns.

The table is generated here from a seed (never committed), in the shape of the audit
benchmark: column j draws from its own vocabulary (2 to 300 values) with Zipf-like shares, and
every third column has 0.5% NULLs. ``--id-column`` adds a unique row id, an identifier at size
1, so identifier pruning has something to skip (all 171 of its supersets of size 2 and 3).

    python bench/bench_discover.py                  # 1,000,000 × 18, max size 3
    python bench/bench_discover.py --id-column      # the same plus a row id: pruning at work
    python bench/bench_discover.py --rows 100000 --drop-null

It prints the time, the combinations scanned and skipped, the statements run and the best QID.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import table_options  # noqa: E402

#: Distinct non-NULL values per column, cycled: binary flags to postcode-like columns.
CARDINALITIES = (2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 25, 32, 40, 60, 90, 120, 200, 300)


def generate(path: str, rows: int, cols: int, seed: int, id_column: bool) -> None:
    """Write table ``bench`` to the DuckDB file ``path``: integer codes drawn with numpy, turned
    into text labels by DuckDB (fast, and the scan sees VARCHAR columns like real data)."""
    import duckdb
    import pyarrow as pa

    rng = np.random.default_rng(seed)
    arrays = {}
    for j in range(cols):
        k = CARDINALITIES[j % len(CARDINALITIES)]
        w = 1.0 / np.arange(1, k + 1, dtype=float) ** rng.uniform(0.6, 1.4)
        codes = rng.choice(k, size=rows, p=w / w.sum()).astype(np.int32)
        mask = (rng.random(rows) < 0.005) if j % 3 == 2 else None
        arrays[f"c{j:02d}"] = pa.array(codes, mask=mask)
    src = pa.table(arrays)
    select = ", ".join(f"'v{j}_' || c{j:02d} as c{j:02d}" for j in range(cols))
    if id_column:
        select = "row_number() over () as row_id, " + select
    con = duckdb.connect(path)
    try:
        con.register("qar_bench_codes", src)
        con.execute(f"create or replace table bench as select {select} from qar_bench_codes")
    finally:
        con.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    table_options(ap, rows=1_000_000)
    ap.add_argument("--max-size", type=int, default=3)
    ap.add_argument("--id-column", action="store_true", help="add a unique row id (an identifier)")
    ap.add_argument("--drop-null", action="store_true")
    ap.add_argument("--threads", type=int, default=None, help="DuckDB threads (default: all cores)")
    args = ap.parse_args()

    import qar_sql

    with tempfile.TemporaryDirectory(prefix="qar_bench_discover_") as tmp:
        path = str(Path(tmp) / "bench.duckdb")
        t0 = time.perf_counter()
        generate(path, args.rows, args.cols, args.seed, args.id_column)
        gen = time.perf_counter() - t0
        t0 = time.perf_counter()
        r = qar_sql.discover(
            path, table="bench", max_size=args.max_size, drop_null=args.drop_null, threads=args.threads
        )
        took = time.perf_counter() - t0
    n = len(r.columns)
    total = sum(math.comb(n, s) for s in range(1, min(args.max_size, n) + 1))
    best = r.best
    print(
        f"table        {r.rows:,} rows × {n} columns (seed {args.seed}{', with row id' if args.id_column else ''}), generated in {gen:.1f} s"
    )
    print(f"discover     --max-size {r.max_size}{' --drop-null' if args.drop_null else ''}: {took:.1f} s")
    print(
        f"combinations {total:,} of sizes 1..{r.max_size}: {len(r.combinations):,} scanned, {r.skipped:,} skipped by identifier pruning"
    )
    print(f"statements   {r.statements:,}")
    print(f"identifiers  {'; '.join(', '.join(i) for i in r.identifiers) or 'none'}")
    print(
        f"best QID     {', '.join(r.best_qid) or 'none'}"
        + (
            f" ({best.singletons:,} singletons, {100 * best.singleton_share:.2f}%, {best.distinct:,} distinct)"
            if best
            else ""
        )
    )


if __name__ == "__main__":
    main()
