"""Wide tables: audit time against the number of columns.

Data: ``--rows`` rows (default 50) x N integer columns (column k has 2 + k mod 50 values), made
in this process by DuckDB's ``hash`` in a DuckDB file in a temporary folder (deleted at the
end; nothing is written into the checkout). Timed: ``qar_sql.audit`` on all N columns, median
of ``--repeat`` runs:

* p = 1 for each N of ``--columns`` (default 500,1000,2000,5000): one QI per column;
* p = 2 for each N of ``--pairs`` (default 200,400): N (N - 1) / 2 QIs.

Printed per row: the median, the ratio to the row before (x prev; linear growth doubles with
the columns at p = 1 and about quadruples, as the QIs, at p = 2) and the time per column (p = 1)
or per thousand QIs (p = 2); then the median CPU time of each step with its ratio, from the
statements it ran: ``profile`` (the distinct counts), ``codes`` (the copy, slices, parts
and their joins), ``scan`` (the batch statements: each batch's codes, residuals and GROUP BYs),
``cells`` (qar risk's statements after the codes) and ``other`` (catalog look-ups). On a
shared machine the process's CPU time (``cpu s``, DuckDB's threads included) is steadier than
the wall clock, which counts the time other processes held the cores.
The first row of each p is the baseline of the same process. The QI counts are checked
against a count in Python on every run (p = 1).

``--command risk`` times ``qar_sql.risk`` instead (its default: one QI of all N columns).
``--prune auto`` runs the p = 2 audits pruned (the default at p = 2 groups every QI).
``--checkout DIR`` benchmarks the qar_sql of another checkout (e.g. an earlier commit
extracted with ``git archive``), for a before/after on the same data and machine.

    python bench/bench_wide.py [--columns 500,1000,2000,4000] [--pairs 200,400] [--repeat 3]
    python bench/bench_wide.py --command risk --rows 50 --columns 500,1000,2000,4000 --repeat 3
    python bench/bench_wide.py --columns '' --pairs 150,300,600 --prune auto
"""

from __future__ import annotations

import argparse
import functools
import math
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
_checkout = sys.argv[sys.argv.index("--checkout") + 1] if "--checkout" in sys.argv[:-1] else str(HERE.parent)
sys.path.insert(0, _checkout)  # benchmark a checkout, not an installed copy

import duckdb  # noqa: E402

import qar_sql  # noqa: E402
from qar_sql.engines import database  # noqa: E402

STEPS = ("profile", "codes", "scan", "cells", "other")


def step_of(sql: str) -> str:
    """Which step of the audit or qar risk a statement belongs to, by what it makes or reads."""
    head = sql.lstrip()
    if " as row_count" in sql or "unpivot" in sql:
        return "profile"
    if "as classes" in sql:
        return "scan"
    if "cells_" in sql or "risk_record" in sql:
        return "cells"
    for made in ("_rows", "_slice", "_part", "_join", "qar_codes_", "qar_prune_", "qar_risk_"):
        if made in head.split("\n", 1)[0] or (made in sql and ("create temp table" in sql or "drop table" in sql)):
            return "codes"
    return "other"


class Steps:
    """CPU seconds of this process (DuckDB's threads included) per step, summed over every
    statement (database.Timed wraps each): steadier than the wall clock on a shared machine."""

    def __init__(self) -> None:
        self.seconds = dict.fromkeys(STEPS, 0.0)
        self._originals = database.Timed.__enter__, database.Timed.__exit__
        original_enter, original_exit = self._originals
        steps = self

        def timed_enter(timed):
            timed.cpu_started = time.process_time()
            return original_enter(timed)

        def timed_exit(timed, *exc):
            steps.seconds[step_of(timed.sql)] += time.process_time() - timed.cpu_started
            return original_exit(timed, *exc)

        database.Timed.__enter__, database.Timed.__exit__ = timed_enter, timed_exit

    def close(self) -> None:
        database.Timed.__enter__, database.Timed.__exit__ = self._originals


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


def timed(path: Path, n: int, p: int, repeat: int, command: str, prune: str | None = None) -> tuple[dict, tuple]:
    """({"wall", "cpu", each step: median seconds}, the QIs' counts of the last run)."""
    runs: list[dict] = []
    qis: tuple = ()
    columns = [f"c{i}" for i in range(n)]
    for _ in range(repeat):
        steps = Steps()
        started, cpu = time.perf_counter(), time.process_time()
        try:
            if command == "risk":
                risk = qar_sql.risk(str(path), table="t", columns=columns)
                qis = tuple((q.classes, q.sample_uniques) for q in risk.qis)
            else:
                options = {"prune": prune} if prune and p > 1 else {}
                r = qar_sql.audit(str(path), table="t", columns=columns, p=p, **options)
                qis = tuple((q.distinct, q.singletons) for q in r.qis if q.bounds is None)
        finally:
            steps.close()
        runs.append({"wall": time.perf_counter() - started, "cpu": time.process_time() - cpu, **steps.seconds})
        took = ", ".join(f"{k} {v:.2f}" for k, v in runs[-1].items() if v)
        print(f"  {n} columns, p = {p}: {took} s (load {os.getloadavg()[0]:.1f})", file=sys.stderr, flush=True)
    return {k: statistics.median(run[k] for run in runs) for k in runs[0]}, qis


def _ratio(got: dict, previous: dict | None, key: str) -> str:
    """got[key] against the row before, or a dash."""
    return f"{got[key] / previous[key]:7.2f}" if previous and previous[key] > 0 else f"{'—':>7}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--columns", default="500,1000,2000,5000")
    ap.add_argument("--pairs", default="200,400")
    ap.add_argument("--rows", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--command", choices=("audit", "risk"), default="audit")
    ap.add_argument("--prune", choices=("auto", "off"), default=None, help="p = 2: the audit's --prune")
    ap.add_argument("--checkout", default=None, help="the checkout whose qar_sql is timed (default: this one)")
    args = ap.parse_args()
    singles = [int(x) for x in args.columns.split(",") if x]
    pairs = [int(x) for x in args.pairs.split(",") if x] if args.command == "audit" else []
    what = "qar_sql.risk, one QI of all columns" if args.command == "risk" else "qar_sql.audit"
    print(
        f"load average {os.getloadavg()[0]:.2f}; {args.rows} rows, {what}, median of {args.repeat}; "
        f"qar_sql from {Path(qar_sql.__file__).parent}; p = 2 --prune {args.prune or 'default'}"
    )
    with tempfile.TemporaryDirectory(prefix="qar_bench_wide_") as folder:
        path = Path(folder) / "wide.duckdb"
        data = make(path, max(singles + pairs), args.rows)
        timed(path, min(singles + pairs), 1, 1, args.command)  # warm up: imports, templates
        print(
            f"{'p':>2} {'columns':>8} {'QIs':>10} {'median s':>9} {'x prev':>7} {'cpu s':>8} {'x prev':>7} "
            f"{'ms/col':>8} {'ms/1k QIs':>10}"
        )
        for p, ns in ((1, singles), (2, pairs)):
            previous: dict | None = None
            for n in ns:
                try:
                    got, qis = timed(path, n, p, args.repeat, args.command, args.prune)
                except qar_sql.QarError as exc:  # an earlier checkout may fail where this one runs
                    print(f"{p:>2} {n:>8} failed: {exc}", flush=True)
                    previous = None
                    continue
                if args.command == "audit" and p == 1:
                    assert qis == expected(data, n), f"{n} columns: the audit disagrees with Python's count"
                n_qi = math.comb(n, p) if args.command == "audit" else 1

                ratio = functools.partial(_ratio, got, previous)
                seconds = got["wall"]
                print(
                    f"{p:>2} {n:>8} {n_qi:>10,} {seconds:>9.3f} {ratio('wall')} {got['cpu']:>8.2f} {ratio('cpu')} "
                    f"{1000 * seconds / n:>8.2f} {1000 * seconds / n_qi * 1000:>10.1f}",
                    flush=True,
                )
                print(
                    "   CPU s of each step: "
                    + ", ".join(f"{k} {got[k]:.2f} (x {ratio(k).strip()})" for k in STEPS if got[k]),
                    flush=True,
                )
                previous = got


if __name__ == "__main__":
    main()
