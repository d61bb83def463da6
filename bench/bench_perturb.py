"""Speed of a perturbed release in ``qar whatif`` against a recoding of the same columns, in one
process, on embedded DuckDB.

Data: ``--rows`` (default 1,000,000) rows × 18 skewed columns (bench/datagen.py, seeded) with an
integer row id; three of the categorical columns are turned into numbers (c15 an integer 18..,
c16 and c17 income-like floats drawn from the column's code) so noise and microaggregation have
numeric columns to work on. Timed, each a full ``qar_sql.whatif`` (T̂ before and after over all
18 columns, p = 3, the information-loss report, the true-singleton count):

* recode  — one scenario recoding the five columns: maps on c01 and c03, bands on c15, c16, c17;
* perturb — one scenario perturbing the same five: invariant PRAM on c01 and c03 (retention 0.8),
  noise on c16 and c17 (sd 0.1, normal), microaggregation of c15 (k = 3, mean).

Target (issue 11): perturb <= 2x recode.

    python bench/bench_perturb.py [--rows N] [--repeat R]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # benchmark the checkout, not an installed copy
sys.path.insert(0, str(HERE))

import common  # noqa: E402
import datagen  # noqa: E402

import qar_sql  # noqa: E402

TABLE = "people"
QID = ["c01", "c03", "c15"]
RECODE = """
qid = ["c01", "c03", "c15"]
combinations = [["m1", "m3", "b15", "b16", "b17"]]
[treatments.m1]
column = "c01"
kind = "map"
map = { v1_1 = "v1_x", v1_2 = "v1_x" }
[treatments.m3]
column = "c03"
kind = "map"
map = { v3_3 = "v3_x", v3_4 = "v3_x" }
[treatments.b15]
column = "c15"
kind = "bands"
width = 10
[treatments.b16]
column = "c16"
kind = "bands"
width = 20000
to = "mean"
[treatments.b17]
column = "c17"
kind = "bands"
width = 20000
to = "midpoint"
"""
PERTURB = """
seed = 77
key = "id"
qid = ["c01", "c03", "c15"]
combinations = [["p1", "p3", "n", "ma"]]
[treatments.p1]
column = "c01"
kind = "pram"
retention = 0.8
[treatments.p3]
column = "c03"
kind = "pram"
retention = 0.8
[treatments.n]
columns = ["c16", "c17"]
kind = "noise"
sd = 0.1
[treatments.ma]
column = "c15"
kind = "microaggregation"
k = 3
"""


def make_table(path: str, rows: int, cols: int, seed: int) -> None:
    import duckdb
    import pyarrow as pa

    data = datagen.skewed_table(rows, cols, seed)
    arrow = {name: pa.array(col, type=pa.string()) for name, col in data.items()}
    con = duckdb.connect(path)
    con.register("src", pa.table(arrow))
    rng = np.random.default_rng(seed)
    con.register("noise", pa.table({"u": rng.random(rows), "v": rng.random(rows)}))
    numeric = {
        "c15": "18 + cast(split_part(c15, '_', 2) as bigint)",
        "c16": "round(20000 + 900 * cast(split_part(c16, '_', 2) as double) + 5000 * n.u, 2)",
        "c17": "round(1000 + 300 * cast(split_part(c17, '_', 2) as double) + 2000 * n.v, 2)",
    }
    select = ", ".join(f"{numeric[c]} as {c}" if c in numeric else c for c in data)
    con.execute(
        f"create or replace table {TABLE} as select row_number() over () as id, {select} "
        "from (select *, row_number() over () as rn from src) s "
        "join (select *, row_number() over () as rn from noise) n using (rn)"
    )
    con.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    common.table_options(ap, rows=1_000_000)
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "bench.duckdb")
        make_table(path, args.rows, args.cols, args.seed)
        columns = [f"c{j:02d}" for j in range(args.cols)]

        def run(toml: str):
            return qar_sql.whatif(path, table=TABLE, treatments=toml, only=[_scenario(toml)], columns=columns)

        recode, _, r1 = common.timed(lambda: run(RECODE), args.repeat, "recode")
        perturb, _, r2 = common.timed(lambda: run(PERTURB), args.repeat, "perturb")
    for label, r in (("recode", r1), ("perturb", r2)):
        s = r.scenarios[1]
        il = s.information_loss
        # T̂ is None when the tail fit has too few singleton classes (small --rows).
        print(
            f"{label:8} T̂ {_g(r.risk_before)} -> {_g(s.risk)}  #S {s.singletons:,}  true S {s.true_singletons:,}  "
            f"IL1s {_g(il.il1s if il else None)}  utility {_g(il.utility if il else None, '.3f')}  "
            f"max odds {_g(s.posterior_odds_max, '.3f')}"
        )
    ratio = perturb / recode
    print(
        f"table    {args.rows:,} rows x {args.cols} columns + id (seed {args.seed}); QID {', '.join(QID)}; T̂ over {len(columns)} columns"
    )
    print(
        f"recode   {recode:.2f} s wall, {common.CPU['recode']:.2f} s CPU  (qar whatif, one recoding scenario of five columns)"
    )
    print(f"perturb  {perturb:.2f} s wall, {common.CPU['perturb']:.2f} s CPU  (PRAM x2, noise x2, microaggregation)")
    print(f"ratio    {ratio:.2f}x  target <= 2x: {common.verdict(ratio <= 2)}")


def _g(v: float | None, spec: str = ".4g") -> str:
    return "—" if v is None else format(v, spec)


def _scenario(toml: str) -> str:
    return "m1 + m3 + b15 + b16 + b17" if "m1" in toml else "p1 + p3 + n + ma"


if __name__ == "__main__":
    main()
