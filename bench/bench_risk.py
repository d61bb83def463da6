"""Speed of ``qar risk`` (``qar_sql.measures.classic.risk``) on embedded DuckDB against baselines
run in the same process.

Data: ``--rows`` (default 1,000,000) rows x 18 skewed categorical columns (bench/datagen.py,
seeded) plus a sampling weight w (1 … 100, from the row number), in a DuckDB file under
bench/out/. The key set is the first ``--key-columns`` (default 8) columns; the sensitive
column is the last one (300 values). Timed:

* risk value     — ``risk(..., weight, sensitive)``, the one key set, ``--missing value``;
* risk wildcard  — the same with ``--missing wildcard`` (NULLs in a third of the columns);
* numpy          — the in-memory bound for the value run: dictionary-encode the key columns,
  one packed key, ``np.unique`` → fk, Fk (``np.bincount`` of the weights) and the
  Benedetti–Franconi risk, without l-diversity;
* risk p=3 / audit p=3 — every 3-subset of the key columns (56 QIs), ``risk`` without a
  sensitive column against ``qar_sql.audit`` (class-size histograms only) on the same QIs.

The numpy run and the value run must agree on classes, sample uniques and expected
re-identifications.

    python bench/bench_risk.py [--rows N] [--repeat R] [--key-columns K]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # benchmark the checkout, not an installed copy
sys.path.insert(0, str(HERE))

from common import duckdb_table, print_versions, remove_duckdb, timed  # noqa: E402

import qar_sql  # noqa: E402
from qar_sql.commands import risk as risk_command  # noqa: E402
from qar_sql.stats import individual_risk  # noqa: E402

TABLE = "people"


def numpy_bound(data: dict[str, np.ndarray], key: list[str], weights: np.ndarray):
    """(classes, sample uniques, expected re-identifications) of the key set, in memory."""
    packed = np.zeros(weights.size, dtype=np.int64)
    for name in key:
        col = data[name]
        isnull = np.equal(col, None)
        values, inverse = np.unique(col[~isnull].astype(str), return_inverse=True)
        codes = np.full(col.size, values.size, dtype=np.int64)
        codes[~isnull] = inverse
        packed = packed * (values.size + 1) + codes
    _, cell, n = np.unique(packed, return_inverse=True, return_counts=True)
    F = np.bincount(cell, weights=weights)
    risk = individual_risk.benedetti_franconi(n, F)
    return int(n.size), int(n[n == 1].sum()), float(np.dot(n, risk))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--key-columns", type=int, default=8)
    ap.add_argument("--seed", type=int, default=20240601)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=str(HERE / "out"))
    args = ap.parse_args(argv)

    import duckdb

    print_versions()
    t0 = time.perf_counter()
    path, data = duckdb_table(args.out, f"bench_risk_{args.rows}", TABLE, args.rows, 18, args.seed)
    names = list(data)
    key, sensitive = names[: args.key_columns], names[-1]
    weights = 1.0 + (np.arange(args.rows) * 7919 % 100)
    con = duckdb.connect(path)
    con.execute(f"create or replace table {TABLE} as select *, 1.0 + (rowid * 7919 % 100) as w from {TABLE}")
    con.close()
    print(
        f"setup (not timed): {args.rows:,} rows, key set {len(key)} columns, sensitive {sensitive}, "
        f"weight w; {time.perf_counter() - t0:.1f} s\n"
    )
    try:
        common = {"table": TABLE, "columns": key, "weight": "w"}
        t_val, v_times, val = timed(
            lambda: risk_command.risk(path, sensitive=[sensitive], missing="value", **common), args.repeat, "risk value"
        )
        t_wild, w_times, wild = timed(
            lambda: risk_command.risk(path, sensitive=[sensitive], missing="wildcard", **common),
            args.repeat,
            "risk wildcard",
        )
        t_np, n_times, bound = timed(lambda: numpy_bound(data, key, weights), args.repeat, "numpy")
        t_r3, r3_times, r3 = timed(lambda: risk_command.risk(path, p=3, **common), args.repeat, "risk p=3")
        t_a3, a3_times, a3 = timed(
            lambda: qar_sql.audit(path, table=TABLE, columns=key, p=3, pi_u=0.2), args.repeat, "audit p=3"
        )
    finally:
        remove_duckdb(path)

    q = val.qis[0]
    same = (q.classes, q.sample_uniques) == bound[:2] and abs(q.expected_reidentifications - bound[2]) < 1e-6 * bound[2]
    same3 = [(x.classes, x.sample_uniques) for x in r3.qis] == [(x.distinct, x.singletons) for x in a3.qis]

    def fmt(ts):
        return ", ".join(f"{t:.2f}" for t in ts)

    print(f"{'timing':<48}{'median s':>10}   runs (wall s)")
    for label, t, ts in (
        ("risk, key set, weight + sensitive, value", t_val, v_times),
        ("risk, key set, weight + sensitive, wildcard", t_wild, w_times),
        ("numpy bound (fk, Fk, risk; no l-diversity)", t_np, n_times),
        ("risk -p 3 (56 QIs), weight", t_r3, r3_times),
        ("audit -p 3 (56 QIs)", t_a3, a3_times),
    ):
        print(f"{label:<48}{t:>10.2f}   {fmt(ts)}")
    print()
    print(f"risk value / numpy bound:   {t_val / t_np:.2f}x")
    print(f"risk wildcard / value:      {t_wild / t_val:.2f}x")
    print(f"risk p=3 / audit p=3:       {t_r3 / t_a3:.2f}x")
    print(
        f"key set: {q.classes:,} classes, {q.sample_uniques:,} sample uniques, "
        f"expected re-identifications {q.expected_reidentifications:,.2f} (wildcard: {wild.qis[0].sample_uniques:,} uniques)"
    )
    print(f"identical to numpy: {same}; p=3 classes and uniques identical to the audit: {same3}")
    return 0 if same and same3 else 1


if __name__ == "__main__":
    sys.exit(main())
