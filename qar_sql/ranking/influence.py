"""The influence score: a first-order, pushed-down stand-in for DT (our method; docs/method.md).

Removing record i moves θ by (θ − U(i, ·)) / (L − 1), so to first order

    DT(i) ≈ I(i) = ( Σ_j g_j U(i, j) − Σ_j g_j θ(j) ) / (L − 1),   g = ∇T̂(θ).

g is non-zero only on the exceedances and the order statistics u interpolates between, so the
ranking needs uniqueness flags on a few dozen QIs, not all C(N, p), and the database returns just
the top k records. Where θ ties near u the first-order picture breaks (a record can move a QI
across u); ``refine=N`` recomputes exact DT for the top N candidates (:mod:`.refine`) and ranks
them by it.
"""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from qar_sql.engines.database import Database, Relation
from qar_sql.engines.session import coded
from qar_sql.errors import DataError
from qar_sql.measures.audit import Options, audit_relation
from qar_sql.pushdown.record_keys import ROW_KEY, fetch_keys, key_warnings, record_order
from qar_sql.pushdown.scan import code_type, scan
from qar_sql.ranking import capture
from qar_sql.ranking.influence_sql import render_influence
from qar_sql.ranking.records import key_of
from qar_sql.ranking.refine import exact_dt
from qar_sql.results import AuditResult, Tabular, format_risk, json_key, shown_records
from qar_sql.stats import evt

if TYPE_CHECKING:
    from qar_sql.parameters.ranking import RecordsParams


@dataclass(frozen=True, repr=False)
class Influence(Tabular):
    table_at = ("records",)
    audit: AuditResult
    key: tuple[str, ...]
    gradient: np.ndarray  # g_j for every QI
    baseline: float  # −Σ g θ / (L − 1): the score of a record unique on none of the weighted QIs
    top: tuple[tuple[int, float], ...]  # (r, I) best first, ties by key order
    keys: dict[int, tuple]
    scores: np.ndarray | None = None  # every record's I in key order, when asked
    warnings: tuple[str, ...] = ()
    #: DuckDB top-k path: weighted QIs grouped during the audit, and those grouped again
    #: afterwards because the estimate did not pick them (None: the path ranking every record).
    captured: tuple[int, int] | None = None
    #: With ``refine=N``: (r, exact DT, I) of the top N records by I, ranked by exact DT.
    refined: tuple[tuple[int, float, float], ...] = ()
    #: With ``compare_dt``: Pearson and Kendall correlation of I with exact DT over every record.
    correlation_with_dt: dict | None = None

    @property
    def n_weighted(self) -> int:
        return int(np.count_nonzero(self.gradient))

    @property
    def notes(self) -> tuple[str, ...]:
        """What its numbers are, in words: its text's heading and its Markdown's notes say it."""
        return (f"ranked on {self.n_weighted} of {self.audit.n_qi} QIs (those with ∂T̂/∂θ ≠ 0)",)

    def key_of(self, r: int):
        return key_of(self.keys, self.key, r)

    def to_dict(self, params: RecordsParams | None = None) -> dict[str, Any]:
        """The JSON of ``qar records --by influence``: the top records (every one with
        ``params.all_records`` when every score was kept), and the refined ones with ``refine``."""
        _, every = shown_records(params)
        ranked = (
            self.top
            if not (every and self.scores is not None)
            else [(int(r), float(self.scores[r])) for r in np.argsort(-self.scores, kind="stable")]
        )
        d: dict[str, Any] = {
            "risk": self.audit.risk,
            "rows": self.audit.rows,
            "p": self.audit.p,
            "key": list(self.key),
            "by": "influence",
            "weighted_qis": self.n_weighted,
            "baseline": self.baseline,
            "correlation_with_dt": self.correlation_with_dt,
            "warnings": list(self.audit.warnings) + list(self.warnings),
            "records": [{"key": json_key(self.key_of(r)), "r": r, "influence": s} for r, s in ranked],
        }
        if params is not None and params.refine:
            d["refined"] = [
                {"key": json_key(self.key_of(r)), "r": r, "dt": None if np.isnan(dt) else dt, "influence": s}
                for r, dt, s in self.refined
            ]
        return d

    def summary_line(self) -> str:
        return (
            f"{self.audit.source}: top {len(self.top):,} of {self.audit.rows:,} records by influence; "
            f"{self.n_weighted:,} weighted QIs; T = {format_risk(self.audit.risk)}"
        )


def gradient(result: AuditResult) -> np.ndarray:
    return evt.qar_risk_gradient(result.theta, result.rows, alpha=result.alpha, pi_u=result.pi_u, pwm=result.pwm)


def scores_in_db(
    db: Database,
    relation: Relation,
    result: AuditResult,
    order_by,
    g,
    *,
    limit: int | None,
    positive_only=True,
    codes_table=None,
):
    """[(r, Σ g U)] from the database, best first, ties by r: the top ``limit`` positive
    tallies, or (``positive_only=False``) every non-zero one."""
    if not np.any(g):
        return []
    sql = render_influence(
        db.dialect, relation.sql, result.columns, result.p, order_by, g, limit=limit, positive_only=positive_only,
        codes_table=codes_table,
    )  # fmt: skip
    return [(int(r), float(s)) for r, s in db.query(sql)]


def all_tallies(db: Database, relation: Relation, result: AuditResult, order_by, g, *, codes_table=None) -> np.ndarray:
    """Σ_j g_j U(i, j) for every record in key order (0 for records unique on no weighted QI)."""
    tally = np.zeros(result.rows)
    for r, s in scores_in_db(
        db, relation, result, order_by, g, limit=None, positive_only=False, codes_table=codes_table
    ):
        tally[r] = s
    return tally


def compute(
    db: Database,
    relation: Relation,
    opts: Options,
    *,
    key=None,
    top=100,
    all_scores=False,
    source=None,
    started=None,
    refine=0,
) -> Influence:
    order_by, key_names = record_order(db, relation, key, relation.columns)
    shown, top = top, max(top, refine)
    where = dict(source=source, started=started)
    if db.dialect.temp_tables and not all_scores and capture.has_rowid(db, relation):
        # DuckDB, top k only: the likely weighted QIs are grouped once, in the audit (capture.py).
        result, g, rows, keys, captured = capture.top_records(
            db, relation, opts, key_names=key_names, top=top, gradient=gradient, **where
        )
    else:
        result, g, rows = _audit_and_top(db, relation, opts, order_by, top=top, all_scores=all_scores, **where)
        keys, captured = None, None
    m1 = result.rows - 1
    baseline = -float(np.dot(g, result.theta)) / m1
    scores = None
    if rows is None:
        # Every record's score (also when fewer than `top` records score above the baseline:
        # then records at the baseline, and below it, complete the ranking in key order).
        tally = all_tallies(db, relation, result, order_by, g)
        full = tally / m1 + baseline
        scores = full if all_scores else None
        order = np.argsort(-tally, kind="stable")[:top]
        top_rows = tuple((int(r), float(full[r])) for r in order)
        keys = None
    else:
        top_rows = tuple((r, s / m1 + baseline) for r, s in rows)
    refined: tuple[tuple[int, float, float], ...] = ()
    if refine:
        # Exact DT for the top `refine` records by I, ranked by it (ties by key order).
        cands = [r for r, _ in top_rows[:refine]]
        with coded(db, relation, result.columns, order_by=order_by, materialize=False) as codes:
            dts = exact_dt(db, result, cands, encoded=codes.encoded, encode_sql=codes.encode_sql)
        score = dict(top_rows)
        refined = tuple(
            sorted(
                ((r, dts[r], score[r]) for r in cands),
                key=lambda t: (np.isnan(t[1]), -t[1] if not np.isnan(t[1]) else 0.0, t[0]),
            )
        )
    if keys is None or refine:
        keys = {}
        if key_names != (ROW_KEY,):
            keys = fetch_keys(db, relation, key_names, [r for r, _ in top_rows])
    return Influence(
        audit=result,
        key=key_names,
        gradient=g,
        baseline=baseline,
        top=top_rows[:shown],
        keys=keys,
        scores=scores,
        warnings=tuple(key_warnings(key, result.columns) + relation.token_notes(result.columns)),
        captured=captured,
        refined=refined,
    )


def _audit_and_top(db, relation, opts, order_by, *, top, all_scores, **where):
    """(audit, g, [(r, tally)] of the top records, or None when every record's tally is
    needed). DuckDB keeps the codes (with r) in one temp table for the audit and the tally."""
    held: dict[str, str] = {}

    with ExitStack() as stack:

        def scanner(cols, batch_size, jobs, progress, cardinalities):
            if db.dialect.temp_tables:  # coded once the audit knows the columns' cardinalities
                types = [code_type(k) for k in cardinalities]
                codes = stack.enter_context(
                    coded(db, relation, cols, order_by=order_by, code_types=types, what="influence")
                )
                held["codes"] = codes.name
            return scan(
                db, relation.sql, cols, opts.p, batch_size=batch_size, jobs=jobs, progress=progress,
                codes_table=held.get("codes"),
            )  # fmt: skip

        result = audit_relation(db, relation, opts, scanner=scanner, bootstrap=0, **where)
        if result.fit is None:
            raise DataError("the table's risk is undefined (no tail), so influence scores are too")
        g = gradient(result)
        if all_scores:
            return result, g, None
        rows = scores_in_db(db, relation, result, order_by, g, limit=top, codes_table=held.get("codes"))
        return result, g, (rows if len(rows) >= min(top, result.rows) else None)
