"""Cost of the HTML report against the audit it is built on, in one process.

Data: the demo population (``qar_sql.demo``, ``--rows`` people, 13 QI columns, p = 3: 286 QIs)
in a DuckDB file under bench/out/. Timed, medians of ``--repeat`` runs:

* audit          — ``qar_sql.audit``: the baseline;
* report         — ``qar_sql.report(..., key=person_id)``: audit + records (one fused scan) +
  two elimination curves + figures + HTML;
* report, no records — ``records=False``: audit + figures + HTML;
* render         — ``ReportInputs.to_html()`` alone (no database): what rebuilding costs.

    python bench/bench_report.py [--rows N] [--repeat R]
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # benchmark the checkout, not an installed copy
sys.path.insert(0, str(HERE))

from common import parser, timed  # noqa: E402


def main() -> None:
    ap = parser(__doc__)
    ap.add_argument("--rows", type=int, default=100_000)
    args = ap.parse_args()

    import duckdb

    import qar_sql
    from qar_sql.demo import DEMO_COLUMNS, write_population

    out = HERE / "out"
    out.mkdir(exist_ok=True)
    path = str(out / f"report_demo_{args.rows}.duckdb")
    if not Path(path).exists():
        con = duckdb.connect(path)
        write_population(con, "population", n=args.rows)
        con.close()
    cols = list(DEMO_COLUMNS)
    kw = {"table": "population", "columns": cols}
    t_audit, _, a = timed(lambda: qar_sql.audit(path, **kw), args.repeat, "audit")
    t_full, _, full = timed(lambda: qar_sql.report(path, **kw, key=["person_id"]), args.repeat, "report")
    t_lean, _, _ = timed(lambda: qar_sql.report(path, **kw, records=False), args.repeat, "report, no records")
    t_render, _, html = timed(full.to_html, args.repeat, "render")
    print(f"demo population: {args.rows:,} rows, {len(cols)} columns, {a.n_qi} QIs (p = 3), T̂ = {a.risk:.6g}")
    print(f"{'audit':<22} {t_audit:8.3f} s   1.00x")
    print(f"{'report':<22} {t_full:8.3f} s   {t_full / t_audit:.2f}x audit")
    print(f"{'report, no records':<22} {t_lean:8.3f} s   {t_lean / t_audit:.2f}x audit")
    print(f"{'render only':<22} {t_render:8.3f} s   {t_render / t_audit:.2f}x audit   ({len(html) / 1e6:.2f} MB)")


if __name__ == "__main__":
    main()
