"""Record contributions to the QaR risk (METHOD §3): DT, U+, U*, n_unique. Pure numpy.

A record enters the risk only through its *uniqueness pattern*, the set P(i) = {j : U(i, j) = 1}
of QIs on which it is unique. Removing it gives H(j : i) = H(j) − 1(j ∈ P(i)), so

    θ(j : i) = (H(j) − 1(j ∈ P(i))) / (L − 1)

and DT(i) = T̂ − T̂(· : i) is the whole estimator (new u, new exceedances, new fit) re-run on that
vector. Records sharing a pattern share DT, so it is computed once per distinct pattern (the
empty pattern included), vectorised over patterns with :func:`qar_sql.stats.evt.qar_risk_batch`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from qar_sql.stats import evt

#: Rankings by score; ties are broken by key order (record position r ascending), stably.
SCORES = ("dt", "u_plus", "u_star", "n_unique")


@dataclass(frozen=True)
class PatternSet:
    """Distinct uniqueness patterns. Pattern 0 is the empty pattern (unique on no QI)."""

    qis: tuple[np.ndarray, ...]  # QI indices of each pattern
    counts: np.ndarray  # records per pattern
    of_record: np.ndarray  # pattern id of each record, in key order (length L)

    @classmethod
    def from_rows(cls, n_records: int, patterns: dict[int, tuple[list[int], int]], records: list[tuple[int, int]]):
        """Build from the SQL rows: patterns {pid: (qis, count)} (pid ≥ 1), records [(r, pid)]."""
        pids = sorted(patterns)  # renumbered 1, 2, … in this order
        qis = [np.zeros(0, dtype=np.int64)] + [np.asarray(sorted(patterns[p][0]), dtype=np.int64) for p in pids]
        counts = np.array([0] + [patterns[p][1] for p in pids], dtype=np.int64)
        of_record = np.zeros(n_records, dtype=np.int64)
        if records:
            arr = np.asarray(records, dtype=np.int64)
            of_record[arr[:, 0]] = np.searchsorted(pids, arr[:, 1]) + 1
        counts[0] = n_records - int(counts[1:].sum())
        return cls(tuple(qis), counts, of_record)

    def __len__(self) -> int:
        return len(self.qis)


def dt_per_pattern(
    distinct: np.ndarray,
    n_records: int,
    patterns: PatternSet,
    risk: float,
    *,
    alpha: float,
    pi_u: float,
    pwm: str = "plotting",
    chunk: int = 4096,
) -> np.ndarray:
    """DT of each pattern: T̂ − T̂(θ(· : i)). NaN where θ(· : i) has no tail (reported by caller)
    and for patterns no record has (the empty pattern when every record is unique somewhere:
    its θ(· : i) would exceed 1)."""
    out = np.full(len(patterns), np.nan)
    used = np.flatnonzero(patterns.counts > 0)
    n_qi = distinct.size
    # Only the largest θ enter T̂. Removing a record lowers at most |P| of them, so the top
    # W = tail width + longest pattern QIs of the table's θ hold every value T̂(· : i) reads.
    longest = max((len(patterns.qis[k]) for k in used), default=0)
    width = min(n_qi, evt.tail_width(n_qi, pi_u) + longest)
    top = np.sort(np.argsort(-distinct, kind="stable")[:width])
    column = np.full(n_qi, -1)
    column[top] = np.arange(width)
    base = distinct[top].astype(float)
    for start in range(0, used.size, chunk):
        ids = used[start : start + chunk]
        thetas = np.tile(base, (ids.size, 1))
        rows = np.repeat(np.arange(ids.size), [len(patterns.qis[k]) for k in ids])
        cols = column[np.concatenate([patterns.qis[k] for k in ids])] if ids.size else np.zeros(0, int)
        keep = cols >= 0
        thetas[rows[keep], cols[keep]] -= 1.0
        thetas /= n_records - 1
        out[ids] = risk - evt.qar_risk_batch(thetas, n_records - 1, alpha=alpha, pi_u=pi_u, pwm=pwm, n_qi=n_qi)
    return out


def pattern_scores(theta: np.ndarray, patterns: PatternSet) -> dict[str, np.ndarray]:
    """U+, U*, n_unique per pattern: Σ θ(j), Σ (1 − θ(j)), |P| over the pattern's QIs."""
    u_plus = np.array([theta[q].sum() for q in patterns.qis])
    n_unique = np.array([len(q) for q in patterns.qis], dtype=np.int64)
    return {"u_plus": u_plus, "u_star": n_unique - u_plus, "n_unique": n_unique}


def rank(scores: np.ndarray) -> np.ndarray:
    """Record positions ordered by score (largest first), ties by key order (stable); NaN
    (undefined DT) last."""
    return np.argsort(np.where(np.isnan(scores), np.inf, -scores), kind="stable")


def correlations(a: np.ndarray, b: np.ndarray) -> dict[str, float | None]:
    """Pearson and Kendall tau-b between two score vectors (None when undefined)."""
    from scipy import stats

    ok = ~(np.isnan(a) | np.isnan(b))
    a, b = a[ok], b[ok]
    if a.size < 2 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return {"pearson": None, "kendall": None}
    pearson = float(np.corrcoef(a, b)[0, 1])
    kendall = float(stats.kendalltau(a, b, variant="b").statistic)
    return {"pearson": pearson, "kendall": kendall}
