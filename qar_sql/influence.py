"""The influence score: a first-order, pushed-down stand-in for DT (our method; README).

Removing record i moves θ by (θ − U(i, ·)) / (L − 1), so to first order

    DT(i) ≈ I(i) = ( Σ_j g_j U(i, j) − Σ_j g_j θ(j) ) / (L − 1),   g = ∇T̂(θ).

g is non-zero only on the exceedances and the order statistics u interpolates between, so the
ranking needs uniqueness flags on a few dozen QIs, not all C(N, p), and the database returns just
the top k records. Where θ ties near u the first-order picture breaks (a record can move a QI
across u); ``refine`` recomputes exact DT for the top candidates to settle those.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from . import evt
from .audit import audit_relation, validate
from .errors import DataError, ParameterError
from .records import ROW_KEY, fetch_keys, key_warnings, record_order
from .render import render
from .results import AuditResult
from .scan import _QI, combinations
from .source import Database, Relation, open_source


@dataclass(frozen=True)
class Weight:
    index: int
    g: str  # repr of the float: full precision in SQL


@dataclass(frozen=True)
class Influence:
    audit: AuditResult
    key: tuple[str, ...]
    gradient: np.ndarray  # g_j for every QI
    baseline: float  # −Σ g θ / (L − 1): the score of a record unique on none of the weighted QIs
    top: tuple[tuple[int, float], ...]  # (r, I) best first, ties by key order
    keys: dict[int, tuple]
    scores: np.ndarray | None = None  # every record's I in key order, when asked
    warnings: tuple[str, ...] = ()

    @property
    def n_weighted(self) -> int:
        return int(np.count_nonzero(self.gradient))

    def key_of(self, r: int):
        return self.keys.get(int(r), (int(r) + 1,) if self.key == (ROW_KEY,) else None)


def gradient(result: AuditResult) -> np.ndarray:
    return evt.qar_risk_gradient(result.theta, result.rows, alpha=result.alpha, pi_u=result.pi_u, pwm=result.pwm)


def render_influence(dialect, relation_sql, columns, p, order_by, g: np.ndarray, *, limit: int | None, only_nonzero=False) -> str:
    combos = combinations(len(columns), p)
    nz = np.flatnonzero(g)
    qis = [_QI(int(j), tuple(f"c{i}" for i in combos[j])) for j in nz]
    weights = [Weight(int(j), repr(float(g[j]))) for j in nz]
    encode_sql = render("encode.sql", dialect, columns=list(columns), relation=relation_sql, order_by=order_by)
    return render(
        "influence.sql", dialect, encode_sql=encode_sql, encoded="encoded", qis=qis,
        weights=weights, limit=limit, only_nonzero=only_nonzero,
    )


def scores_in_db(db: Database, relation: Relation, result: AuditResult, order_by, g, *, limit: int | None, only_nonzero=False):
    """[(r, Σ g U)] from the database, best first, ties by r."""
    if not np.any(g):
        return []
    sql = render_influence(db.dialect, relation.sql, result.columns, result.p, order_by, g, limit=limit, only_nonzero=only_nonzero)
    return [(int(r), float(s)) for r, s in db.query(sql)]


def compute(db: Database, relation: Relation, *, columns=None, exclude=None, key=None, p=3, alpha=0.01, pi_u=0.05, pwm="plotting", top=100, all_scores=False, jobs=2, progress=None, source=None, started=None) -> Influence:
    result = audit_relation(db, relation, columns=columns, exclude=exclude, p=p, alpha=alpha, pi_u=pi_u, pwm=pwm, jobs=jobs, progress=progress, source=source, started=started)
    if result.fit is None:
        raise DataError("the table's risk is undefined (no tail), so influence scores are too")
    order_by, key_names = record_order(db, relation, key, result.columns)
    g = gradient(result)
    m1 = result.rows - 1
    baseline = -float(np.dot(g, result.theta)) / m1
    scores = None
    if all_scores:
        # Every record's score: only records unique on a weighted QI come back; the rest share
        # the baseline.
        tally = np.zeros(result.rows)
        for r, s in scores_in_db(db, relation, result, order_by, g, limit=None, only_nonzero=True):
            tally[r] = s
        scores = tally / m1 + baseline
        order = np.argsort(-scores, kind="stable")[:top]
        top_rows = tuple((int(r), float(scores[r])) for r in order)
    else:
        rows = scores_in_db(db, relation, result, order_by, g, limit=top)
        if not rows:  # g = 0 everywhere: every record has the baseline score
            rows = [(r, 0.0) for r in range(min(top, result.rows))]
        top_rows = tuple((r, s / m1 + baseline) for r, s in rows)
    keys = {}
    if key_names != (ROW_KEY,):
        keys = fetch_keys(db, relation, key_names, [r for r, _ in top_rows])
    return Influence(
        audit=result, key=key_names, gradient=g, baseline=baseline, top=top_rows, keys=keys,
        scores=scores, warnings=tuple(key_warnings(key, result.columns)),
    )


def influence(
    source: str | None = None,
    *,
    table: str | None = None,
    columns: Sequence[str] | None = None,
    exclude: Sequence[str] | None = None,
    key: Sequence[str] | None = None,
    p: int = 3,
    alpha: float = 0.01,
    pi_u: float = 0.05,
    pwm: str = "plotting",
    delimiter: str | None = None,
    top: int = 100,
    all_scores: bool = False,
    jobs: int = 2,
    progress=None,
) -> Influence:
    """Top records by influence score I(i), computed in the database (no exact DT needed)."""
    validate(p, alpha, pi_u, pwm)
    if not isinstance(top, int) or top < 1:
        raise ParameterError(f"--top {top!r} must be a whole number of records, at least 1")
    started = time.perf_counter()
    db, relation = open_source(source, table=table, delimiter=delimiter)
    with db:
        return compute(db, relation, columns=columns, exclude=exclude, key=key, p=p, alpha=alpha, pi_u=pi_u, pwm=pwm, top=top, all_scores=all_scores, jobs=jobs, progress=progress, source=getattr(db, "masked_url", relation.display), started=started)
