"""The anonymization search on ARX's published adult cases (TestAnonymizationKAnonymity): k = 5
and 100, suppression limits 4% and 0%, the nine QIs with ARX's hierarchies, ARX's monotonic
precomputed entropy. Per case: the median seconds of ``--repeat`` runs (each opening nothing
new: one session, the frequency table made per run), the nodes evaluated in the database
against the lattice's 12,960, the statements (round trips), and whether the optimum is ARX's.

Data: ../shared/data/arx/adult.csv and its hierarchies (the shared public datasets).

    python bench/bench_anonymize.py [--repeat N] [--engine duckdb|postgresql|sqlite] [--url URL]
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # benchmark the checkout, not an installed copy
sys.path.insert(0, str(HERE))

from common import parser, print_versions  # noqa: E402

DATA = HERE.parent.parent / "shared" / "data" / "arx"
CASES = [
    (5, 0.04, (1, 0, 1, 1, 3, 2, 2, 0, 1), 255559.85455731067),
    (100, 0.04, (1, 1, 1, 1, 3, 2, 2, 1, 1), 379417.3460570988),
    (5, 0.0, (1, 2, 1, 1, 3, 2, 2, 1, 1), 407289.5388925293),
    (100, 0.0, (0, 4, 1, 1, 3, 2, 2, 1, 1), 453196.8932458743),
]


def main() -> int:
    ap = parser(__doc__, repeat=3)
    ap.add_argument("--engine", default="duckdb", choices=("duckdb", "postgresql", "sqlite"))
    ap.add_argument("--url", help="for postgresql: a database URL the table 'adult' is loaded into (a new schema)")
    ap.add_argument("--strategy", default="flash", choices=("flash", "exhaustive"))
    args = ap.parse_args()
    if not (DATA / "adult.csv").is_file():
        print(f"{DATA / 'adult.csv'} is absent; the benchmark needs the shared public datasets")
        return 2

    import qar_sql
    from qar_sql.anonymization.hierarchy import read_hierarchy_dir
    from qar_sql.anonymization.models import KAnonymity
    from qar_sql.anonymization.search import anonymize_session

    print_versions()
    hierarchies = read_hierarchy_dir(DATA / "hierarchies")
    tables = None
    if args.engine == "duckdb":
        session = qar_sql.connect(str(DATA / "adult.csv"), delimiter=";")
    else:
        import os

        from tests.anonymize.fixtures import Tables, _adult_columns

        if args.url:
            os.environ["QAR_TEST_PG_URL"] = args.url
        tables = Tables(args.engine, Path(os.environ.get("TMPDIR", "/tmp")))
        session = tables.load("adult", _adult_columns())
    print(f"engine {args.engine}, strategy {args.strategy}, {args.repeat} runs per case (median)")
    print(f"{'k':>4} {'limit':>6} {'seconds':>8} {'evaluated':>10} {'of':>7} {'statements':>10}  optimum")
    ok = True
    try:
        for k, limit, levels, score in CASES:
            runs = [
                anonymize_session(session, hierarchies, [KAnonymity(k=k)], limit, "entropy", strategy=args.strategy)
                for _ in range(args.repeat)
            ]
            r = runs[0]
            same = r.level_vector == levels and abs(r.scores["entropy"] - score) <= 1e-9 * score
            ok &= same
            seconds = statistics.median(x.seconds for x in runs)
            print(
                f"{k:>4} {limit:>6.0%} {seconds:>8.2f} {r.evaluated:>10,} {r.nodes:>7,} {r.statements:>10}  "
                f"{list(r.level_vector)} {r.scores['entropy']:.6f} {'= ARX' if same else 'DIFFERS from ARX'}"
            )
    finally:
        session.close()
        if tables is not None:
            tables.cleanup()
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
