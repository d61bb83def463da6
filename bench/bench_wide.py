"""Wide tables: audit time against the number of columns.

Data: ``--rows`` rows (default 50) x N integer columns (column k has 2 + k mod 50 values), made
in this process by DuckDB's ``hash`` in a DuckDB file in a temporary folder (deleted at the
end; nothing is written into the checkout). Timed: ``qar_sql.audit`` on all N columns, median
of ``--repeat`` runs:

* p = 1 for each N of ``--columns`` (default 500,1000,2000,5000): one QI per column;
* p = 2 for each N of ``--pairs`` (default 200,400): N (N - 1) / 2 QIs.

Printed per row: the median, the ratio to the row before (x prev; linear growth doubles with
the columns at p = 1 and about quadruples, as the QIs, at p = 2) and the time per column (p = 1)
or per thousand QIs (p = 2). The first row of each p is the baseline of the same process.
The QI counts are checked against a count in Python on every run.

``--command risk`` times ``qar_sql.risk`` instead (its default: one QI of all N columns).

    python bench/bench_wide.py [--columns 500,1000,2000,5000] [--pairs 200,400] [--repeat 3]
    python bench/bench_wide.py --command risk --rows 40 --columns 100,300 --pairs '' --repeat 1
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # benchmark the checkout, not an installed copy

import duckdb  # noqa: E402

import qar_sql  # noqa: E402


def make(path: Path, n: int, rows: int) -> list[tuple]:
    """The table t of ``rows`` x ``n`` columns c0, c1, ...; returns its rows."""
    values = ", ".join(f"cast(hash(i, {k}) % {2 + k % 50} as integer) as c{k}" for k in range(n))
    con = duckdb.connect(str(path))
    con.execute(f"create table t as select {values} from range({rows}) as r(i)")
    data = con.execute("select * from t").fetchall()
    con.close()
    return data


def expected(data: list[tuple], n: int) -> tuple:
    """(distinct, singletons) of each single column, counted in Python (p = 1 only)."""
    out = []
    for k in range(n):
        counts = Counter(row[k] for row in data)
        out.append((len(counts), sum(1 for c in counts.values() if c == 1)))
    return tuple(out)


def timed(path: Path, n: int, p: int, repeat: int, command: str) -> tuple[float, tuple]:
    times, qis = [], ()
    columns = [f"c{i}" for i in range(n)]
    for _ in range(repeat):
        started = time.perf_counter()
        if command == "risk":
            risk = qar_sql.risk(str(path), table="t", columns=columns)
            qis = tuple((q.classes, q.sample_uniques) for q in risk.qis)
        else:
            r = qar_sql.audit(str(path), table="t", columns=columns, p=p)
            qis = tuple((q.distinct, q.singletons) for q in r.qis)
        times.append(time.perf_counter() - started)
        print(f"  {n} columns, p = {p}: {times[-1]:.3f} s", file=sys.stderr, flush=True)
    return statistics.median(times), qis


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--columns", default="500,1000,2000,5000")
    ap.add_argument("--pairs", default="200,400")
    ap.add_argument("--rows", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--command", choices=("audit", "risk"), default="audit")
    args = ap.parse_args()
    singles = [int(x) for x in args.columns.split(",") if x]
    pairs = [int(x) for x in args.pairs.split(",") if x] if args.command == "audit" else []
    what = "qar_sql.risk, one QI of all columns" if args.command == "risk" else "qar_sql.audit"
    print(f"load average {os.getloadavg()[0]:.2f}; {args.rows} rows, {what}, median of {args.repeat}")
    with tempfile.TemporaryDirectory(prefix="qar_bench_wide_") as folder:
        path = Path(folder) / "wide.duckdb"
        data = make(path, max(singles + pairs), args.rows)
        timed(path, min(singles + pairs), 1, 1, args.command)  # warm up: imports, templates
        print(f"{'p':>2} {'columns':>8} {'QIs':>10} {'median s':>9} {'x prev':>7} {'ms/col':>8} {'ms/1k QIs':>10}")
        for p, ns in ((1, singles), (2, pairs)):
            previous = None
            for n in ns:
                seconds, qis = timed(path, n, p, args.repeat, args.command)
                if args.command == "audit" and p == 1:
                    assert qis == expected(data, n), f"{n} columns: the audit disagrees with Python's count"
                n_qi = math.comb(n, p) if args.command == "audit" else 1
                ratio = f"{seconds / previous:7.2f}" if previous else f"{'—':>7}"
                print(
                    f"{p:>2} {n:>8} {n_qi:>10,} {seconds:>9.3f} {ratio} "
                    f"{1000 * seconds / n:>8.2f} {1000 * seconds / n_qi * 1000:>10.1f}",
                    flush=True,
                )
                previous = seconds


if __name__ == "__main__":
    main()
