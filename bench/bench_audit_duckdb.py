"""Speed of ``qar_sql.measures.audit`` on embedded DuckDB against two baselines, in one process.

Data: ``--rows`` (default 1,000,000) rows x 18 skewed categorical columns (bench/datagen.py,
seeded), written to a DuckDB file under bench/out/. Timed:

* audit  — ``qar_sql.audit(path, table=..., p=3)``: 816 QIs, everything included (open, profile,
  pushed-down scan, tail fit);
* numpy  — the in-memory bound: dictionary-encode each column (``np.unique(...,
  return_inverse=True)``, timed separately), then per QI one packed integer key and
  ``np.bincount`` -> H (distinct) and S (singletons);
* pandas — the naive loop ``df.groupby(cols, dropna=False).size()`` per QI, run on a seeded
  sample of QIs (``--pandas-qis``, default 40) and extrapolated linearly to all QIs. The target
  uses pandas' default dtype for the string columns (``str`` since pandas 3); the same loop on
  ``object`` columns (the default before pandas 3) is printed for reference.

All three must give identical H and S per QI (pandas on its sample). Targets (issue 2): audit
<= 2x the numpy bound and >= 20x faster than pandas.

    python bench/bench_audit_duckdb.py [--rows N] [--repeat R] [--threads T]
"""

from __future__ import annotations

import itertools
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # benchmark the checkout, not an installed copy
sys.path.insert(0, str(HERE))

from common import CPU, duckdb_table, file_options, parser, print_versions, remove_duckdb, timed, verdict  # noqa: E402

import qar_sql  # noqa: E402

TABLE = "people"


def encode(data: dict[str, np.ndarray]) -> list[tuple[np.ndarray, int]]:
    """Dictionary codes per column: non-NULL values numbered by np.unique, NULL one more code.
    Strings are cast to fixed-width unicode first: np.unique sorts that in C, about 2x faster
    than sorting Python objects."""
    out = []
    for col in data.values():
        isnull = np.equal(col, None)
        values, inverse = np.unique(col[~isnull].astype(str), return_inverse=True)
        codes = np.full(len(col), len(values), dtype=np.int64)
        codes[~isnull] = inverse
        out.append((codes, len(values) + int(isnull.any())))
    return out


def numpy_kernel(encoded, combos) -> list[tuple[int, int]]:
    """(H, S) per QI: one packed key (mixed radix of the column codes) and a bincount."""
    out = []
    for combo in combos:
        key = np.zeros(len(encoded[0][0]), dtype=np.int64)
        for i in combo:
            codes, k = encoded[i]
            key *= k
            key += codes
        counts = np.bincount(key)
        out.append((int(np.count_nonzero(counts)), int(np.count_nonzero(counts == 1))))
    return out


def pandas_loop(df, names, combos) -> list[tuple[int, int]]:
    out = []
    for combo in combos:
        sizes = df.groupby([names[i] for i in combo], dropna=False).size()
        out.append((len(sizes), int((sizes == 1).sum())))
    return out


def main(argv=None) -> int:
    ap = parser(__doc__, repeat_help="runs of audit and numpy (median)", rows=1_000_000)
    ap.add_argument("-p", type=int, default=3)
    ap.add_argument("--pandas-repeat", type=int, default=1)
    ap.add_argument("--pandas-qis", type=int, default=40, help="QIs timed in pandas (extrapolated)")
    ap.add_argument("--threads", type=int, default=None, help="DuckDB threads (default: DuckDB's)")
    ap.add_argument("--batch-size", type=int, default=None, help="audit(batch_size=...)")
    file_options(ap, HERE / "out")
    args = ap.parse_args(argv)

    import pandas as pd

    print_versions(f"pandas {pd.__version__}")

    t0 = time.perf_counter()
    path, data = duckdb_table(args.out, f"bench_{args.rows}x{args.cols}", TABLE, args.rows, args.cols, args.seed)
    names = list(data)
    combos = list(itertools.combinations(range(len(names)), args.p))
    n_qi = len(combos)
    print(
        f"setup (not timed): {args.rows:,} rows x {len(names)} columns, seed {args.seed}, "
        f"p = {args.p} -> {n_qi} QIs; generated and written in {time.perf_counter() - t0:.1f} s"
    )
    print()

    try:
        # --- audit -------------------------------------------------------------------------
        def run_audit():
            return qar_sql.audit(path, table=TABLE, p=args.p, threads=args.threads, batch_size=args.batch_size)

        t_audit, audit_times, result = timed(run_audit, args.repeat, "audit")
        audit_hs = [(q.distinct, q.singletons) for q in result.qis]
        assert [tuple(names.index(c) for c in q.columns) for q in result.qis] == combos

        # --- numpy bound -------------------------------------------------------------------
        t_enc, enc_times, encoded = timed(lambda: encode(data), args.repeat, "numpy encode")
        t_kern, kern_times, numpy_hs = timed(lambda: numpy_kernel(encoded, combos), args.repeat, "numpy kernel")
        t_numpy = t_enc + t_kern

        # --- pandas, on a sample of QIs ------------------------------------------------------
        df = pd.DataFrame(data)
        rng = np.random.default_rng(args.seed)
        n_sample = min(args.pandas_qis, n_qi)
        sample = sorted(rng.choice(n_qi, size=n_sample, replace=False).tolist())
        t_pd_sample, pd_times, pandas_hs = timed(
            lambda: pandas_loop(df, names, [combos[j] for j in sample]),
            args.pandas_repeat,
            "pandas",
        )
        t_pandas = t_pd_sample * n_qi / n_sample
        # For reference: the same loop on object columns, pandas' default for strings before 3.0.
        df_obj = pd.DataFrame(data, dtype=object)
        t_obj_sample, obj_times, obj_hs = timed(
            lambda: pandas_loop(df_obj, names, [combos[j] for j in sample]),
            args.pandas_repeat,
            "pandas object",
        )
        t_obj = t_obj_sample * n_qi / n_sample
        pandas_dtype = str(df[names[0]].dtype)
    finally:
        if not args.keep:
            remove_duckdb(path)

    # --- identical results -------------------------------------------------------------------
    same_audit = audit_hs == numpy_hs
    same_pandas = pandas_hs == obj_hs == [numpy_hs[j] for j in sample]
    bad = [j for j in range(n_qi) if audit_hs[j] != numpy_hs[j]][:3]

    fmt = lambda ts: ", ".join(f"{t:.2f}" for t in ts)  # noqa: E731
    threads = args.threads or "DuckDB default"
    print(f"{'timing':<54}{'median s':>10}{'CPU s':>8}   runs (wall s)")
    print(f"{f'audit (threads={threads})':<54}{t_audit:>10.2f}{CPU['audit']:>8.2f}   {fmt(audit_times)}")
    print(f"{'numpy encode (np.unique, 18 columns)':<54}{t_enc:>10.2f}{CPU['numpy encode']:>8.2f}   {fmt(enc_times)}")
    print(f"{'numpy kernel (packed key + bincount)':<54}{t_kern:>10.2f}{CPU['numpy kernel']:>8.2f}   {fmt(kern_times)}")
    print(f"{'numpy bound incl. encoding':<54}{t_numpy:>10.2f}")
    x = f"extrapolated x{n_qi / n_sample:.1f}"
    print(
        f"{f'pandas groupby ({pandas_dtype}), {n_sample} QIs measured':<54}{t_pd_sample:>10.2f}{CPU['pandas']:>8.2f}   {fmt(pd_times)}"
    )
    print(f"{f'pandas groupby ({pandas_dtype}), {n_qi} QIs ({x})':<54}{t_pandas:>10.2f}")
    print(
        f"{f'pandas groupby (object), {n_sample} QIs measured':<54}{t_obj_sample:>10.2f}{CPU['pandas object']:>8.2f}   {fmt(obj_times)}"
    )
    print(f"{f'pandas groupby (object), {n_qi} QIs ({x})':<54}{t_obj:>10.2f}")
    print()
    print(
        f"per QI: audit {1000 * t_audit / n_qi:.1f} ms, numpy kernel {1000 * t_kern / n_qi:.1f} ms, "
        f"pandas {1000 * t_pd_sample / n_sample:.1f} ms ({pandas_dtype}), "
        f"{1000 * t_obj_sample / n_sample:.1f} ms (object)"
    )
    print(
        f"identical H and S: audit = numpy on all {n_qi} QIs: {same_audit}"
        + (f" (first differences at QIs {bad})" if bad else "")
        + f"; pandas = numpy on its {n_sample} QIs: {same_pandas}"
    )
    print()
    r_incl, r_kern, r_pandas = t_audit / t_numpy, t_audit / t_kern, t_pandas / t_audit
    print(f"audit / numpy incl. encoding  = {r_incl:6.2f}x   target <= 2x: {verdict(r_incl <= 2)}")
    print(
        f"audit / numpy kernel only     = {r_kern:6.2f}x   target <= 2x: {verdict(r_kern <= 2)}"
        "  (stricter: encoding excluded)"
    )
    print(
        f"pandas / audit (extrapolated) = {r_pandas:6.1f}x   target >= 20x: {verdict(r_pandas >= 20)}"
        f"  (pandas' default dtype for the columns: {pandas_dtype})"
    )
    print(
        f"pandas object / audit         = {t_obj / t_audit:6.1f}x   (reference only: object columns,"
        " pandas' default for strings before 3.0)"
    )
    print(
        f"CPU seconds, audit / numpy kernel = {CPU['audit'] / CPU['numpy kernel']:.2f}x "
        f"(DuckDB uses every thread it has; numpy one)"
    )
    return 0 if same_audit and same_pandas else 1


if __name__ == "__main__":
    sys.exit(main())
