"""qar anonymize with the QaR target: k = 5 and --risk-below at p = 3, the exact search against an
exhaustive evaluation of every node, in the same run.

Data: ``--rows`` (default 1,000,000) skewed categorical columns (bench/datagen.py), generated
each run and never committed; ``--qi`` of them (default 6, the columns of 10 to 32 values) get a
hierarchy of ``--levels`` levels (value, groups of 4, groups of 16, …, then ``*``), and the audit
columns are the QI columns and two more. The exhaustive evaluation runs first: the models of
every node (one search with ``strategy="exhaustive"``) and T̂ of every node that passes them
(its own :class:`~qar_sql.anonymization.risk.RiskTarget`, sharing θ across nodes as the search
does). τ is then set to the ``--quantile`` of those T̂ (so the answer is neither the first node
nor none), and ``qar_sql.anonymize`` searches with it in a new session. Prints the seconds and
the peak memory (this process; DuckDB runs in it) of each, the node evaluations (models), the
risk measurements and subset scans, and whether both chose the same node.

``--sample S``: for a lattice whose exhaustive risk evaluation would take hours, T̂ is measured
for a seeded random sample of S of the nodes passing the models (every node's models are still
evaluated); the exhaustive time is extrapolated as the models' time plus the sample's mean risk
time × the nodes passing, τ is the quantile of the sample's T̂, and the check is partial: the
search's choice meets τ and no sampled node meeting τ has a lower loss.

    python bench/bench_anonymize_risk.py [--rows N] [--engine duckdb|postgresql] [--levels L] [--sample S]
"""

from __future__ import annotations

import math
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # benchmark the checkout, not an installed copy
sys.path.insert(0, str(HERE))

import datagen  # noqa: E402
from common import parser, print_versions, verdict  # noqa: E402

#: The QI columns: those of 10, 12, 16, 20, 25 and 32 values (datagen's columns 6..11).
FIRST_QI = 6


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def hierarchy_files(folder: Path, data: dict, qi: list[str], depths: list[int], base: int) -> list[tuple[str, str]]:
    """An ARX hierarchy CSV per QI column of ``depths[i]`` levels: level l groups the values by
    ``base ** l``, the last is ``*``."""
    out = []
    for c, levels in zip(qi, depths):
        values = sorted({v for v in data[c] if v is not None}, key=lambda v: int(v.rsplit("_", 1)[1]))
        lines = []
        for v in values:
            i = int(v.rsplit("_", 1)[1])
            groups = (f"{c}_g{base**lv}_{i // base**lv}" for lv in range(1, levels - 1))
            lines.append(";".join([v, *groups, "*"]))
        path = folder / f"bench_hierarchy_{c}.csv"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        out.append((c, str(path)))
    return out


def fewest_evaluations(results, chosen) -> int:
    """A lower bound of the node evaluations of any exact search that learns a node's models by
    evaluating it or by tagging (monotone models), with a loss non-decreasing upwards: every node
    of loss at most the optimum's must be resolved (failing, or measured above τ), and a maximal
    failing node or a minimal passing one can be resolved only by evaluating it. (Counted
    conservatively: a maximal failing node only when a passing node above it has a lower loss
    than the optimum, so its own bound is lower too.)"""
    loss = {r.levels: r.scores["entropy"] for r in results if r.anonymous}
    fail = [r.levels for r in results if not r.anonymous]
    passing = list(loss)

    def le(a, b):
        return all(x <= y for x, y in zip(a, b))

    top = loss[tuple(chosen)]
    # a failing node's loss is not known; its bound is at most any passing node's above it, so a
    # maximal failing node counts when some passing successor of it is not above the optimum's loss
    maximal = [n for n in fail if not any(m != n and le(n, m) for m in fail)]
    minimal = [n for n in passing if not any(m != n and le(m, n) for m in passing)]
    need = sum(1 for n in minimal if loss[n] < top or n == tuple(chosen))
    need += sum(1 for n in maximal if any(le(n, m) and loss[m] < top for m in passing))
    return max(need, 1)


def sampled_models(session, hierarchies, models, limit, qi, size, seed):
    """The models of a seeded random sample of ``size`` nodes (a lattice too large to evaluate
    whole at this size in a bench run), as the exhaustive search's ``evaluated_nodes``."""
    from types import SimpleNamespace

    import numpy as np

    from qar_sql.anonymization.evaluate import evaluator
    from qar_sql.anonymization.search import _Search

    with evaluator(session, hierarchies, models, qi=qi) as ev:
        rng = np.random.default_rng(seed)
        # a uniform sample of distinct nodes (the first `size` of a sorted larger draw, as before,
        # favoured low levels of the first column: 1,555 nodes were estimated to pass where 3,105 do)
        total = math.prod(ev.heights)
        picked = np.sort(rng.choice(total, size=min(size, total), replace=False))
        nodes = [tuple(int(v) for v in lv) for lv in zip(*np.unravel_index(picked, ev.heights))]
        s = _Search(ev, "entropy", limit, models, False)
        t0 = time.perf_counter()
        got = s.run(nodes)
        return SimpleNamespace(evaluated_nodes=got, seconds=time.perf_counter() - t0)


def main() -> int:
    ap = parser(__doc__, rows=1_000_000, cols=14, repeat=1)
    ap.add_argument("--engine", choices=("duckdb", "postgresql"), default="duckdb")
    ap.add_argument("--qi", type=int, default=6, help="QI columns with a hierarchy")
    ap.add_argument("--levels", type=int, default=3, help="levels per hierarchy (value … *), groups of 4 ** level")
    ap.add_argument(
        "--depths",
        help="levels per QI column instead (e.g. 5,4,6,3,3,4,5: ARX's adult hierarchies run 2 to 5 deep), groups of "
        "2 ** level; sets --qi",
    )
    ap.add_argument(
        "--model-sample", type=int, default=0,
        help="evaluate the models of this many sampled nodes only (exhaustive time extrapolated; for large lattices)",
    )  # fmt: skip
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--suppression-limit", type=float, default=0.01)
    ap.add_argument("--quantile", type=float, default=0.3, help="τ: this quantile of the exhaustive T̂")
    ap.add_argument("--sample", type=int, default=0, help="measure T̂ of this many sampled nodes (0: all)")
    ap.add_argument("--url", default=os.environ.get("QAR_TEST_PG_URL"), help="PostgreSQL URL (--engine postgresql)")
    args = ap.parse_args()

    import numpy as np

    import qar_sql
    from qar_sql.anonymization.choose import load_hierarchies, privacy_models
    from qar_sql.anonymization.evaluate import evaluator
    from qar_sql.anonymization.export import generalized
    from qar_sql.anonymization.risk import RiskSpec, RiskTarget
    from qar_sql.anonymization.search import anonymize_session
    from qar_sql.parameters.treat import AnonymizeParams

    print_versions()
    data = datagen.skewed_table(args.rows, args.cols, args.seed)
    # (NULLs: a hierarchy CSV has no row for NULL; the generator's NULL columns are left out)
    depths = [int(x) for x in args.depths.split(",")] if args.depths else [args.levels] * args.qi
    base = 2 if args.depths else 4
    qi = [datagen.column_name(j) for j in range(FIRST_QI, FIRST_QI + len(depths))]
    extra = [c for c in (datagen.column_name(j) for j in (3, 4)) if c not in qi]
    for c in qi + extra:
        if any(v is None for v in data[c]):
            data[c] = np.array([v if v is not None else f"{c.replace('c', 'v', 1)}_0" for v in data[c]], dtype=object)
    data = {c: data[c] for c in qi + extra}
    audit = qi + extra
    tmp = Path(tempfile.mkdtemp(prefix="qar_bench_anonymize_"))
    files = hierarchy_files(tmp, data, qi, depths, base)
    table = f"qar_bench_anon_{os.getpid()}"
    if args.engine == "duckdb":
        source = str(tmp / "bench.duckdb")
        datagen.write_duckdb(source, table, data)
    else:
        if not args.url:
            print("--engine postgresql needs --url or $QAR_TEST_PG_URL", file=sys.stderr)
            return 2
        source = args.url
        datagen.write_postgres(source, table, data)
    del data
    nodes = math.prod(depths)
    shape = " x ".join(map(str, depths)) if args.depths else f"{args.levels} levels"
    print(f"{args.engine}: {args.rows:,} rows, {len(qi)} QI columns x {shape} = {nodes:,} nodes, "
          f"{len(audit)} audit columns, p = 3, k = {args.k}, suppression limit {args.suppression_limit:g}")  # fmt: skip
    params = AnonymizeParams(
        hierarchy=files, k=args.k, suppression_limit=args.suppression_limit, risk_below=0.5, p=3, columns=audit
    )
    try:
        # -- exhaustive: every node's models, T̂ of every node that passes them -----------------
        t0, m0 = time.perf_counter(), peak_mb()
        hierarchies = load_hierarchies(params)
        models = privacy_models(params, hierarchies)
        with qar_sql.connect(source, table=table) as s:
            if args.model_sample:
                every = sampled_models(s, hierarchies, models, args.suppression_limit, qi, args.model_sample, args.seed)
            else:
                every = anonymize_session(
                    s, hierarchies, models, args.suppression_limit, "entropy", qi=qi, strategy="exhaustive"
                )
            spec = RiskSpec(columns=tuple(audit), p=3, alpha=0.01, pi_u=0.05)
            target = RiskTarget(
                s.db, s.relation, spec, qi, lambda c, lv: generalized(s.dialect, hierarchies[c], lv), jobs=2
            )
            passing = [r for r in every.evaluated_nodes if r.anonymous]
            models_seconds = time.perf_counter() - t0
            t1 = time.perf_counter()
            # θ counted as the search counts it (in memory when the cells fit; timed with the risk)
            with evaluator(s, hierarchies, models, qi=qi, cells=0) as ev:
                in_memory = target.fetch_cells(ev.codings)
            fetch_seconds = time.perf_counter() - t1
            n_passing = len(passing)
            if args.model_sample:  # evaluations = the lattice by definition; their time and passing scaled
                models_seconds += every.seconds * (nodes / len(every.evaluated_nodes) - 1)
                n_passing = round(len(passing) * nodes / len(every.evaluated_nodes))
            measure = passing
            if args.sample and args.sample < len(passing):
                pick = np.random.default_rng(args.seed).choice(len(passing), size=args.sample, replace=False)
                measure = [passing[i] for i in sorted(pick)]
            t1 = time.perf_counter() - fetch_seconds
            risks = {}
            for r in measure:
                risks[r.levels] = (target.evaluate(r.levels, smallest=args.k, suppressed=r.suppressed).risk, r)
            risk_seconds = time.perf_counter() - t1
        ex_seconds, ex_scans = time.perf_counter() - t0, target.scanned
        sampled = len(measure) < len(passing) or bool(args.model_sample)
        if sampled:
            ex_seconds = models_seconds + risk_seconds / len(measure) * n_passing
        values = sorted(v for v, _ in risks.values() if v is not None)
        tau = float(values[int(args.quantile * (len(values) - 1))])
        feasible = [(r.scores["entropy"], sum(lv), lv) for lv, (v, r) in risks.items() if v is not None and v <= tau]
        want = min(feasible)[2]
        print(
            f"exhaustive{' (extrapolated)' if sampled else ''}: {ex_seconds:.1f} s "
            f"(models {models_seconds:.1f} s, {len(measure):,} risk measurements {risk_seconds:.1f} s), "
            f"{nodes:,} node evaluations, {n_passing:,} nodes pass the models"
            f"{f' (models timed on a random sample of {len(every.evaluated_nodes):,} nodes)' if args.model_sample else ''}"
            f"{f', T̂ measured for a random sample of {len(measure):,}' if sampled else ''} "
            f"({ex_scans:,} subset scans{', θ in memory' if in_memory else ''}), peak {peak_mb():,.0f} MB (from {m0:,.0f}); "
            f"tau = {tau:.6g} ({args.quantile:g} quantile of {len(values):,} T̂)"
        )
        # -- the search ---------------------------------------------------------------------------
        t0 = time.perf_counter()
        got = qar_sql.anonymize(
            source, table=table, hierarchy=files, k=args.k, suppression_limit=args.suppression_limit, risk_below=tau,
            p=3, columns=audit, jobs=2,
        )  # fmt: skip
        seconds = time.perf_counter() - t0
        if sampled:
            # partial check: the choice meets τ and no sampled node meeting τ has a lower loss
            mine = None if got.chosen is None else got.chosen.levels
            same = mine is not None and got.risk is not None and got.risk <= tau
            same = same and (got.chosen.scores["entropy"], sum(mine), mine) <= min(feasible)
        else:
            same = got.chosen is not None and got.chosen.levels == want
        print(
            f"search:     {seconds:.1f} s, {got.evaluated:,} node evaluations, {got.measured:,} risk measurements "
            f"({got.subsets_scanned:,} subset scans), peak {peak_mb():,.0f} MB; chose {got.chosen.levels if got.chosen else None} "
            f"(T̂ = {got.risk}), exhaustive{' (sample)' if sampled else ''} chose {want}: "
            f"{('consistent' if sampled else 'same') if same else 'DIFFERENT'}"
        )
        fewer = nodes / max(got.evaluated, 1)
        print(f"node evaluations: {nodes:,} -> {got.evaluated:,} of {nodes:,}, "
              f"{fewer:.1f}x fewer  {verdict(fewer >= 10)} (target >= 10x)")  # fmt: skip
        if got.chosen is not None and not args.model_sample:
            least = fewest_evaluations(every.evaluated_nodes, got.chosen.levels)
            print(
                f"any exact search evaluates at least {least:,} nodes here (the maximal failing and minimal "
                f"passing nodes of loss up to the optimum's): at best {len(every.evaluated_nodes) / least:.1f}x fewer"
            )
        print(f"risk measurements: {n_passing:,} -> {got.measured:,}, {n_passing / max(got.measured, 1):.1f}x fewer")
        print(f"time: exhaustive{' (extrapolated)' if sampled else ''} / search = {ex_seconds / seconds:.1f}x")
        if args.engine == "duckdb":
            print(f"search time: {seconds:.1f} s  {verdict(seconds < 600)} (target < 600 s)")
        return 0 if same else 1
    finally:
        if args.engine == "postgresql":
            import sqlalchemy as sa

            with sa.create_engine(source).begin() as c:
                c.exec_driver_sql(f'drop table if exists "{table}"')


if __name__ == "__main__":
    sys.exit(main())
