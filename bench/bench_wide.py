"""Wide tables: audit time against the number of columns (issue 16, item 12).

Data: 500 rows x up to 300 integer columns (column k has 2 + k mod 50 values), made by DuckDB's
``hash`` (seeded by construction), in a DuckDB file under bench/out/. Timed: ``qar_sql.audit``
with p = 1 on the first N columns, median of ``--repeat`` runs, for each N of ``--columns``:

* parts    — as shipped: the codes made 16 columns per statement, the profile 32 per statement;
* one      — the baseline in the same process: the same audit with one statement for all the
  codes and one for the profile (``scan.WIDE_COLUMNS`` and ``scan.PROFILE_COLUMNS`` raised),
  which is what qar-sql did before. It grows with columns x columns; ``--baseline-max`` (default
  200) skips it above that many columns (300 columns take about 20 s each).

Printed: medians, the ratio of each time to the one at the smallest N (linear growth gives
N / N_min), and one / parts.

``--command risk`` times ``qar_sql.risk`` instead (its default: one QI of all N columns), whose
codes are made the same two ways (issue 31, item 10: 40 rows x 300 columns took 29 s with one
statement); every QI's classes and sample uniques must agree.

    python bench/bench_wide.py [--columns 50,100,200,300] [--repeat 3] [--baseline-max 200]
    python bench/bench_wide.py --command risk --rows 40 --columns 100,300 --repeat 1 --baseline-max 300
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # benchmark the checkout, not an installed copy

import duckdb  # noqa: E402

import qar_sql  # noqa: E402
from qar_sql.pushdown import scan  # noqa: E402


def make(path: Path, n: int, rows: int) -> None:
    if path.exists():
        return
    values = ", ".join(f"cast(hash(i, {k}) % {2 + k % 50} as integer) as c{k}" for k in range(n))
    con = duckdb.connect(str(path))
    con.execute(f"create table t as select {values} from range({rows}) as r(i)")
    con.close()


def timed(path: Path, n: int, repeat: int, command: str = "audit") -> tuple[float, tuple]:
    times, qis = [], None
    columns = [f"c{i}" for i in range(n)]
    for _ in range(repeat):
        started = time.perf_counter()
        if command == "risk":
            risk = qar_sql.risk(str(path), table="t", columns=columns)
            times.append(time.perf_counter() - started)
            qis = tuple((q.classes, q.sample_uniques) for q in risk.qis)
        else:
            r = qar_sql.audit(str(path), table="t", columns=columns, p=1)
            times.append(time.perf_counter() - started)
            qis = tuple((q.distinct, q.singletons) for q in r.qis)
        print(f"  {n} columns: {times[-1]:.3f} s", file=sys.stderr, flush=True)
    return statistics.median(times), qis


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--columns", default="50,100,200,300")
    ap.add_argument("--rows", type=int, default=500)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--baseline-max", type=int, default=200)
    ap.add_argument("--command", choices=("audit", "risk"), default="audit")
    args = ap.parse_args()
    ns = [int(x) for x in args.columns.split(",")]
    out = HERE / "out"
    out.mkdir(exist_ok=True)
    path = out / f"wide_{args.rows}x{max(ns)}.duckdb"
    make(path, max(ns), args.rows)
    what = "qar_sql.risk, one QI of all columns" if args.command == "risk" else "qar_sql.audit, p = 1"
    print(f"load average {os.getloadavg()[0]:.2f}; {args.rows} rows, {what}, median of {args.repeat}")
    timed(path, min(ns), 1, args.command)  # warm up: imports, templates
    parts, one = {}, {}
    for n in ns:
        parts[n], qis = timed(path, n, args.repeat, args.command)
        if n <= args.baseline_max:
            saved = scan.WIDE_COLUMNS, scan.PROFILE_COLUMNS
            scan.WIDE_COLUMNS = scan.PROFILE_COLUMNS = 10**9
            try:
                one[n], qis_one = timed(path, n, args.repeat, args.command)
            finally:
                scan.WIDE_COLUMNS, scan.PROFILE_COLUMNS = saved
            assert qis_one == qis, "the two ways disagree on H or S"
    base = ns[0]
    print(f"{'columns':>8} {'parts s':>9} {'x N_min':>8} {'one s':>9} {'x N_min':>8} {'one/parts':>9}")
    for n in ns:
        o = one.get(n)
        print(
            f"{n:>8} {parts[n]:>9.3f} {parts[n] / parts[base]:>8.2f} "
            + (
                f"{o:>9.3f} {o / one[base]:>8.2f} {o / parts[n]:>9.2f}"
                if o is not None
                else f"{'—':>9} {'—':>8} {'—':>9}"
            )
        )


if __name__ == "__main__":
    main()
