"""The influence ranking against the plain audit and exact DT, in DuckDB, one run.

Data: ``--rows`` (default 10,000,000) rows x 18 skewed categorical columns plus an ``id`` key,
generated inside DuckDB from a hash of (row, column) — seeded and deterministic, no Python
objects — with the same cardinalities and Zipf-like skew as bench/datagen.py. Timed end to end
(each in a child process, so peak memory is its own):

* audit     — ``qar_sql.audit(path, table, p=3)`` (816 QIs);
* influence — ``qar_sql.commands.records.influence(..., key=["id"], top=100)``: the audit, the gradient,
  and the pushed-down weighted uniqueness tally returning only the top 100 records — what
  ``qar records --by influence --top 100`` runs;
* exact DT  — ``qar_sql.commands.records.contributions`` on ``--exact-rows`` rows (default 1,000,000;
  exact DT on 10M rows needs every record's pattern), with the correlation between I and DT.

Target (issue 6): influence <= 1.3x the audit of the same table. The audit and the influence run
alternate ``--repeat`` times (default 3) and the ratio is of the medians: on this machine one
audit of 10M rows varies by ±15% from run to run.

    python bench/bench_influence.py [--rows N] [--exact-rows M] [--repeat R]
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

CARDS = (2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 25, 32, 40, 60, 90, 120, 200, 300)
TABLE = "people"


def make(path: Path, rows: int) -> None:
    import duckdb

    cols = []
    for j, k in enumerate(CARDS):
        # u in [0, 1) from a hash; u ** 2.2 skews towards small codes (Zipf-like shares).
        u = f"((hash(i * 37 + {j}) % 1000003) / 1000003.0)"
        value = f"'v{j}_' || cast(floor({k} * pow({u}, 2.2)) as bigint)"
        if j % 3 == 2:
            value = f"case when hash(i * 101 + {j}) % 200 = 0 then null else {value} end"
        cols.append(f"{value} as c{j:02d}")
    con = duckdb.connect(str(path))
    con.execute("set enable_progress_bar = false")
    con.execute(f"create or replace table {TABLE} as select i as id, {', '.join(cols)} from range({rows}) t(i)")
    con.close()


def child(kind: str, path: str) -> None:
    t0 = time.perf_counter()
    out: dict = {}
    if kind == "audit":
        import qar_sql

        r = qar_sql.audit(path, table=TABLE, exclude=["id"], p=3)
        out["risk"] = r.risk
    elif kind == "influence":
        from qar_sql.commands.records import influence

        inf = influence(path, table=TABLE, key=["id"], exclude=["id"], p=3, top=100)
        out.update(
            risk=inf.audit.risk,
            weighted=inf.n_weighted,
            captured=inf.captured,
            top=[list(map(float, t)) for t in inf.top[:3]],
        )
    else:
        from qar_sql.commands.records import contributions, influence
        from qar_sql.stats.contributions import correlations

        c = contributions(path, table=TABLE, key=["id"], exclude=["id"], p=3, top=100)
        out["exact_seconds"] = time.perf_counter() - t0
        inf = influence(path, table=TABLE, key=["id"], exclude=["id"], p=3, all_scores=True)
        out["correlation"] = correlations(inf.scores, c.dt)
        top_dt = set(c.order("dt")[:100].tolist())
        out["top100_overlap"] = len(top_dt & {r for r, _ in inf.top[:100]})
    out["seconds"] = time.perf_counter() - t0
    out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(out))


def run(kind: str, path: Path) -> dict:
    res = subprocess.run([sys.executable, __file__, "--child", kind, str(path)], capture_output=True, text=True)
    if res.returncode:
        raise SystemExit(res.stderr)
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--exact-rows", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--child", nargs=2)
    args = ap.parse_args()
    if args.child:
        return child(*args.child)
    out = HERE / "out"
    out.mkdir(exist_ok=True)
    big, small = out / f"influence_{args.rows}.duckdb", out / f"influence_{args.exact_rows}.duckdb"
    t0 = time.perf_counter()
    make(big, args.rows)
    make(small, args.exact_rows)
    print(f"data: {args.rows:,} and {args.exact_rows:,} rows x 18 columns + id, in {time.perf_counter() - t0:.1f} s")
    audits, infs = [], []
    for k in range(args.repeat):
        audits.append(run("audit", big))
        infs.append(run("influence", big))
        print(
            f"  run {k + 1}: audit {audits[-1]['seconds']:.2f} s, influence {infs[-1]['seconds']:.2f} s",
            file=sys.stderr,
            flush=True,
        )
    a_s = statistics.median(r["seconds"] for r in audits)
    i_s = statistics.median(r["seconds"] for r in infs)
    i = infs[-1]
    fmt = lambda rs: ", ".join(f"{r['seconds']:.2f}" for r in rs)  # noqa: E731
    print(
        f"{args.rows:,} rows, median of {args.repeat}: audit {a_s:.2f} s ({fmt(audits)}; peak {max(r['peak_mb'] for r in audits):.0f} MB); "
        f"records --by influence --top 100 {i_s:.2f} s ({fmt(infs)}; peak {max(r['peak_mb'] for r in infs):.0f} MB), "
        f"{i['weighted']} of 816 QIs weighted"
    )
    if i.get("captured"):
        print(
            f"weighted QIs grouped during the audit: {i['captured'][0]}, grouped again afterwards: {i['captured'][1]}"
        )
    ratio = i_s / a_s
    print(f"ratio influence / audit (medians): {ratio:.2f}x  target <= 1.3x: {'PASS' if ratio <= 1.3 else 'MISS'}")
    e = run("exact", small)
    print(
        f"{args.exact_rows:,} rows: exact DT for every record {e['exact_seconds']:.2f} s (peak {e['peak_mb']:.0f} MB); "
        f"influence vs DT Pearson {e['correlation']['pearson']:.6f}, Kendall {e['correlation']['kendall']:.6f}; "
        f"top-100 overlap {e['top100_overlap']}/100"
    )
    big.unlink(missing_ok=True)
    small.unlink(missing_ok=True)


if __name__ == "__main__":
    main()
