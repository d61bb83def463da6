"""Speed of exact record contributions in DuckDB against an in-memory numpy bound, one run.

Data: ``--rows`` (default 1,000,000) rows x 18 skewed categorical columns (bench/datagen.py,
seeded) plus an ``id`` key, in a DuckDB file under bench/out/. Timed:

* qar    — ``qar_sql.commands.records.contributions(path, table, key=["id"], p=3)``: audit, uniqueness
  patterns pushed down, exact DT for every record (run in a child process so its peak memory —
  Python and DuckDB together — is measured alone);
* numpy  — the bound: dictionary-encode the columns (timed separately), per QI a packed key and
  ``np.bincount`` → H and each record's uniqueness flag, flags packed into one bit pattern per
  record, ``np.unique`` over patterns, then DT per pattern with the same vectorised estimator.

Both must give the same DT for every record. Target (issue 3): qar <= 2x the bound, peak < 4 GB.

    python bench/bench_records.py [--rows N]
"""

from __future__ import annotations

import argparse
import itertools
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import datagen  # noqa: E402

TABLE = "people"


def make(path: Path, rows: int) -> dict[str, np.ndarray]:
    data = datagen.skewed_table(rows, 18, seed=20261122)
    with_id = {"id": np.array([str(i) for i in range(rows)], dtype=object), **data}
    datagen.write_duckdb(str(path), TABLE, with_id)
    import duckdb

    con = duckdb.connect(str(path))
    con.execute(f"create or replace table {TABLE} as select cast(id as bigint) as id, * exclude (id) from {TABLE}")
    con.close()
    return data


def child(path: str) -> None:
    from qar_sql.commands.records import contributions

    t0 = time.perf_counter()
    c = contributions(path, table=TABLE, key=["id"], exclude=["id"], p=3, top=100)
    seconds = time.perf_counter() - t0
    np.save(path + ".dt.npy", c.dt)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": seconds, "peak_mb": peak, "patterns": len(c.patterns), "risk": c.audit.risk}))


def numpy_bound(data: dict[str, np.ndarray]):
    from qar_sql.stats import evt
    from qar_sql.stats.contributions import PatternSet, dt_per_pattern

    t0 = time.perf_counter()
    codes = []
    for col in data.values():
        isnull = np.equal(col, None)
        _, inv = np.unique(col[~isnull].astype(str), return_inverse=True)
        c = np.full(col.size, inv.max() + 1 if inv.size else 0, dtype=np.int64)
        c[~isnull] = inv
        codes.append((c, int(c.max()) + 1))
    t_encode = time.perf_counter() - t0

    t0 = time.perf_counter()
    n = codes[0][0].size
    combos = list(itertools.combinations(range(len(codes)), 3))
    bits = np.zeros((n, (len(combos) + 7) // 8), dtype=np.uint8)
    distinct = np.empty(len(combos), dtype=np.int64)
    for j, (a, b, c) in enumerate(combos):
        key = (codes[a][0] * codes[b][1] + codes[b][0]) * codes[c][1] + codes[c][0]
        counts = np.bincount(key)
        distinct[j] = np.count_nonzero(counts)
        unique = counts[key] == 1
        bits[unique, j >> 3] |= np.uint8(1 << (j & 7))
    pats, inverse, cnt = np.unique(bits, axis=0, return_inverse=True, return_counts=True)
    qis = [np.flatnonzero(np.unpackbits(p, bitorder="little")[: len(combos)]) for p in pats]
    ps = PatternSet(tuple(qis), cnt, inverse.ravel())
    risk = evt.qar_risk(distinct / n, n).risk
    dt = dt_per_pattern(distinct, n, ps, risk, alpha=0.01, pi_u=0.05)[ps.of_record]
    return t_encode, time.perf_counter() - t0, dt


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--child")
    args = ap.parse_args()
    if args.child:
        return child(args.child)
    out = HERE / "out"
    out.mkdir(exist_ok=True)
    path = out / f"records_{args.rows}.duckdb"
    path.unlink(missing_ok=True)
    t0 = time.perf_counter()
    data = make(path, args.rows)
    print(f"data: {args.rows:,} rows x 18 columns + id in {time.perf_counter() - t0:.1f} s")
    res = subprocess.run([sys.executable, __file__, "--child", str(path)], capture_output=True, text=True, check=True)
    q = json.loads(res.stdout.strip().splitlines()[-1])
    t_enc, t_kernel, dt_np = numpy_bound(data)
    dt_q = np.load(str(path) + ".dt.npy")
    same = np.allclose(dt_q, dt_np, rtol=1e-12, atol=1e-15, equal_nan=True)
    bound = t_enc + t_kernel
    print(
        f"qar contributions (DuckDB, exact DT for every record): {q['seconds']:.2f} s, "
        f"{q['patterns']:,} distinct patterns, peak memory {q['peak_mb']:.0f} MB"
    )
    print(f"numpy bound: encode {t_enc:.2f} s + kernel {t_kernel:.2f} s = {bound:.2f} s")
    print(
        f"ratio qar / numpy bound: {q['seconds'] / bound:.2f}x (kernel only: {q['seconds'] / t_kernel:.2f}x)  "
        f"target <= 2x: {'PASS' if q['seconds'] <= 2 * bound else 'MISS'}; "
        f"peak < 4 GB: {'PASS' if q['peak_mb'] < 4096 else 'MISS'}"
    )
    print(f"DT identical for every record: {same}")
    path.unlink(missing_ok=True)
    Path(str(path) + ".dt.npy").unlink(missing_ok=True)


if __name__ == "__main__":
    main()
