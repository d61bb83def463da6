"""Tie-aware refinement of the influence ranking: exact DT for the top candidates only.

I(i) is first order; where θ values tie near u a record can move a QI across u and I misses it.
Exact DT of a record needs its uniqueness on the QIs that can still enter T̂ after its removal:
with the top-M QIs by θ (stable order, as :func:`qar_sql.stats.contributions.dt_per_pattern` reads
them) and P its set of unique QIs among them, removing the record lowers only the QIs in P, so
the top ``tail_width`` values afterwards lie in the top W = tail_width + |P| — exact as long as
W ≤ M. One statement flags the candidates' uniqueness on the top-M QIs (in the database; only
(qi, record) pairs of the candidates return), and DT comes from the same vectorised estimator
as ``qar records``. A candidate unique on too many of them is retried with a larger M.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from qar_sql.engines.render import render
from qar_sql.engines.source import Database
from qar_sql.pushdown.scan import QIBatch, combinations
from qar_sql.results import AuditResult
from qar_sql.stats import evt
from qar_sql.stats.contributions import PatternSet, dt_per_pattern

#: QIs beyond the tail width flagged in the first try (doubled while a candidate needs more).
MARGIN = 32


def exact_dt(
    db: Database, result: AuditResult, candidates: Sequence[int], *, encoded: str, encode_sql: str | None = None
) -> dict[int, float]:
    """{r: exact DT} for the candidate records r (ids of the ``r`` column of ``encoded``:
    a codes table, or the ``encoded`` CTE built from ``encode_sql``)."""
    if not candidates:
        return {}
    distinct = np.array([q.distinct for q in result.qis], dtype=float)
    n_qi = distinct.size
    width = evt.tail_width(n_qi, result.pi_u)
    order = np.argsort(-distinct, kind="stable")
    combos = combinations(len(result.columns), result.p)
    margin = MARGIN
    while True:
        m = min(n_qi, width + margin)
        top = sorted(int(j) for j in order[:m])
        qis = [QIBatch(j, tuple(f"c{i}" for i in combos[j])) for j in top]
        sql = render(
            "refine_pairs.sql", db.dialect, qis=qis, encoded=encoded, encode_sql=encode_sql,
            candidates=[int(r) for r in candidates],
        )  # fmt: skip
        unique_on: dict[int, list[int]] = {int(r): [] for r in candidates}
        for qi, r in db.query(sql):
            unique_on[int(r)].append(int(qi))
        longest = max(len(v) for v in unique_on.values())
        if width + longest <= m or m == n_qi:
            break
        margin *= 2
    rs = list(unique_on)
    patterns = PatternSet(
        qis=(np.zeros(0, dtype=np.int64),) + tuple(np.asarray(sorted(unique_on[r]), dtype=np.int64) for r in rs),
        counts=np.array([0] + [1] * len(rs), dtype=np.int64),
        of_record=np.zeros(0, dtype=np.int64),
    )
    assert result.risk is not None  # the caller refines only audits with a tail
    dt = dt_per_pattern(
        distinct, result.rows, patterns, result.risk, alpha=result.alpha, pi_u=result.pi_u, pwm=result.pwm
    )
    return {r: float(dt[k + 1]) for k, r in enumerate(rs)}
