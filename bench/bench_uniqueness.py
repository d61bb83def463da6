"""Speed of ``qar uniqueness --group-size 100`` against plain ``qar audit``, in one process.

Data: ``--rows`` (default 1,000,000) rows x 18 skewed categorical columns (bench/datagen.py,
seeded), written to a DuckDB file under bench/out/. Timed, alternating, ``--repeat`` runs each
(default 3), medians compared:

* audit      — ``qar audit FILE --table people -p 3 --format json --quiet``: 816 QIs, profile,
  pushed-down scan, tail fit, JSON;
* uniqueness — ``qar uniqueness FILE --table people -p 3 --group-size 100 --format json
  --quiet``: the same profile and scan, then for every QI κ, π_u, π_KL, π_Pois, π_exact, k50
  and the exposures from the scan's class-size histograms, plus the most exposed records of the
  riskiest QI (one small GROUP BY).

Both are the click commands run in this process (``CliRunner``), so option parsing and JSON
rendering are included. Checks: both report the same QIs with the same distinct counts H, and
π_exact of a few QIs equals an independent computation from the raw data (numpy bincount of the
packed key, then the exact rational product of the generating polynomial is too slow at this
size, so the DP of ``bench_reference_pi`` below: the textbook recursion e_j += p e_{j-1} over
every value, in long double, to 1e-11). Target (issue 18): uniqueness <= 1.2x audit.

    python bench/bench_uniqueness.py [--rows N] [--repeat R] [--group-size K]
"""

from __future__ import annotations

import itertools
import json
import math
import statistics
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # benchmark the checkout, not an installed copy
sys.path.insert(0, str(HERE))

from click.testing import CliRunner  # noqa: E402
from common import duckdb_table, file_options, parser, print_versions, remove_duckdb  # noqa: E402

from qar_sql.cli.main import cli  # noqa: E402

TABLE = "people"


def bench_reference_pi(counts: np.ndarray, k: int) -> float:
    """k! e_k(p) by the textbook recursion over every value (no grouping, no transform), with
    the coefficients scaled by j!/T^j (T the share added so far) so that they stay in [0, 1];
    in long double, because half a million steps of double rounding drift by ~1e-10."""
    rows = np.longdouble(counts.sum())
    b = np.zeros(k + 1, dtype=np.longdouble)
    b[0] = 1.0
    total = np.longdouble(0)
    j = np.arange(1, k + 1, dtype=np.longdouble)
    for c in counts:
        p = np.longdouble(c) / rows
        new = total + p
        ratio = total / new
        b[1:] = b[1:] * ratio**j + j * (p / new) * ratio ** (j - 1) * b[:-1]
        total = new
    return float(b[k])


def main(argv=None) -> int:
    ap = parser(__doc__, repeat_help="runs of each command (median)", rows=1_000_000)
    ap.add_argument("-p", type=int, default=3)
    ap.add_argument("--group-size", type=int, default=100)
    file_options(ap, HERE / "out")
    args = ap.parse_args(argv)

    print_versions()
    t0 = time.perf_counter()
    stem = f"bench_uniqueness_{args.rows}x{args.cols}"
    path, data = duckdb_table(args.out, stem, TABLE, args.rows, args.cols, args.seed)
    names = list(data)
    combos = list(itertools.combinations(range(len(names)), args.p))
    print(
        f"setup (not timed): {args.rows:,} rows x {len(names)} columns, seed {args.seed}, "
        f"p = {args.p} -> {len(combos)} QIs; generated and written in {time.perf_counter() - t0:.1f} s"
    )
    commands = {
        "audit": ["audit", path, "--table", TABLE, "-p", str(args.p), "--format", "json", "--quiet"],
        "uniqueness": [
            "uniqueness", path, "--table", TABLE, "-p", str(args.p), "--group-size", str(args.group_size),
            "--format", "json", "--quiet",
        ],
    }  # fmt: skip
    for argv_ in commands.values():
        print(f"  qar {' '.join(argv_[:1] + ['FILE'] + argv_[2:])}")
    print()
    runner = CliRunner()
    times: dict[str, list[float]] = {k: [] for k in commands}
    cpu: dict[str, list[float]] = {k: [] for k in commands}
    outputs: dict[str, dict] = {}
    try:
        for i in range(args.repeat):
            for label, argv_ in commands.items():  # alternate, so drifting load hits both alike
                t, c = time.perf_counter(), time.process_time()
                res = runner.invoke(cli, argv_, catch_exceptions=False)
                times[label].append(time.perf_counter() - t)
                cpu[label].append(time.process_time() - c)
                if res.exit_code not in (0,):
                    print(res.output, file=sys.stderr)
                    raise SystemExit(f"{label} exited {res.exit_code}")
                outputs[label] = json.loads(res.stdout)
                print(f"  {label}: run {i + 1}/{args.repeat} {times[label][-1]:.2f} s", file=sys.stderr, flush=True)
    finally:
        if not args.keep:
            remove_duckdb(path)

    audit, uniq = outputs["audit"], outputs["uniqueness"]
    h_audit = {tuple(q["columns"]): q["distinct"] for q in audit["qis"]}
    h_uniq = {tuple(q["columns"]): q["distinct"] for q in uniq["qis"]}
    same_h = h_audit == h_uniq and len(h_uniq) == len(combos)

    # Independent check of pi_exact on three QIs (the riskiest, the median, the safest).
    codes = []
    for col in data.values():
        _, inverse = np.unique(np.where(np.equal(col, None), "\x00NULL", col).astype(str), return_inverse=True)
        codes.append(inverse.astype(np.int64))
    by_risk = uniq["qis"]
    checks = []
    for q in (by_risk[0], by_risk[len(by_risk) // 2], by_risk[-1]):
        key = np.zeros(args.rows, dtype=np.int64)
        for c in q["columns"]:
            i = names.index(c)
            key = key * (int(codes[i].max()) + 1) + codes[i]
        counts = np.unique(key, return_counts=True)[1]
        ref = bench_reference_pi(counts, args.group_size)
        ok = math.isclose(q["pi_exact"], ref, rel_tol=1e-11, abs_tol=1e-300)
        checks.append(ok)
        print(f"pi_exact({', '.join(q['columns'])}) = {q['pi_exact']:.12g}; reference recursion {ref:.12g}: {ok}")

    med = {k: statistics.median(v) for k, v in times.items()}
    cmed = {k: statistics.median(v) for k, v in cpu.items()}
    fmt = lambda ts: ", ".join(f"{t:.2f}" for t in ts)  # noqa: E731
    print()
    print(f"{'timing':<44}{'median s':>10}{'CPU s':>8}   runs (wall s)")
    for label in commands:
        print(f"{'qar ' + label:<44}{med[label]:>10.2f}{cmed[label]:>8.2f}   {fmt(times[label])}")
    print()
    ratio = med["uniqueness"] / med["audit"]
    print(f"identical QIs and H: {same_h}; pi_exact checks: {all(checks)}")
    print(
        f"uniqueness / audit = {ratio:.3f}x (CPU {cmed['uniqueness'] / cmed['audit']:.3f}x)   "
        f"target <= 1.2x: {'PASS' if ratio <= 1.2 else 'MISS'}"
    )
    return 0 if same_h and all(checks) else 1


if __name__ == "__main__":
    sys.exit(main())
