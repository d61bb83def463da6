"""An audit of in-memory frames against the same rows in a DuckDB file, in one process (issue 14).

Data: ``--rows`` (default 1,000,000) rows x ``--cols`` (default 18) skewed categorical columns
(bench/datagen.py, seeded). Timed, each the whole ``qar_sql.audit(..., p=3)`` (816 QIs):

* file    — the rows in a DuckDB file (the baseline);
* arrow   — a pyarrow Table, registered in an in-memory DuckDB (read in place);
* pandas  — a pandas DataFrame, registered the same way;
* polars  — a polars DataFrame (when installed).

Every frame must give the same H and S per QI as the file. The frames are read in place (no
copy into DuckDB), so the target is: each frame within 1.5x of the file.

    python bench/bench_frames.py [--rows N] [--repeat R]
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # benchmark the checkout, not an installed copy
sys.path.insert(0, str(HERE))

import datagen  # noqa: E402
from common import CPU, parser, timed, verdict  # noqa: E402

import qar_sql  # noqa: E402


def main() -> None:
    ap = parser(__doc__, rows=1_000_000)
    args = ap.parse_args()

    import pandas as pd
    import pyarrow as pa

    data = datagen.skewed_table(args.rows, args.cols, seed=args.seed)
    frames = {"arrow": pa.table(data), "pandas": pd.DataFrame(data)}
    try:
        import polars as pl

        frames["polars"] = pl.DataFrame(data)
    except ModuleNotFoundError:
        pass
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "bench.duckdb")
        datagen.write_duckdb(path, "t", data)
        base, _, ref = timed(lambda: qar_sql.audit(path, table="t", p=3), args.repeat, "file")
        print(f"rows {args.rows:,} x {args.cols} columns, p = 3, {ref.n_qi} QIs, median of {args.repeat}")
        print(f"file    {base:7.2f} s  (cpu {CPU['file']:.2f} s)  baseline")
        for name, frame in frames.items():
            t, _, got = timed(lambda f=frame: qar_sql.audit(f, p=3), args.repeat, name)
            same = [(q.distinct, q.singletons) for q in got.qis] == [(q.distinct, q.singletons) for q in ref.qis]
            assert same, f"{name}: H and S differ from the file's"
            ratio = t / base
            print(
                f"{name:7s} {t:7.2f} s  (cpu {CPU[name]:.2f} s)  {ratio:.2f}x the file  "
                f"{verdict(ratio <= 1.5)} (<= 1.5x)"
            )


if __name__ == "__main__":
    main()
