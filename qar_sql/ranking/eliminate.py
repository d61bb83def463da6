"""Backward elimination curves (METHOD §4): T̂ after removing the top k records of a ranking.

Block elimination is pushed down and exact: the removal order is sent to the database (a
registered in-memory view on DuckDB, an array parameter elsewhere — never a write), and one
aggregation per QI returns, for each removal step, how many classes it empties. Then
H_k(j) = H(j) − (classes of j emptied by step k) for every k at once, and T̂_k is the estimator
on θ_k = H_k / (L − k). The table is read once per ranking, not once per point.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from qar_sql import plots
from qar_sql.engines.database import Database, Relation
from qar_sql.engines.render import render
from qar_sql.engines.session import Session, coded
from qar_sql.errors import NoTailError, ParameterError, UsageError
from qar_sql.measures.audit import Options
from qar_sql.output.render_records import plot_elimination as plot  # noqa: F401 (qar_sql.ranking.eliminate.plot, documented)
from qar_sql.parameters.ranking import RANKINGS, EliminateParams, check_max
from qar_sql.pushdown.scan import Progress, QIBatch, combinations
from qar_sql.ranking.entropy import entropy_scores
from qar_sql.ranking.greedy import greedy_elimination
from qar_sql.ranking.influence import all_tallies, gradient
from qar_sql.ranking.pls import pls_scores
from qar_sql.ranking.records import Contributions, compute
from qar_sql.results import Tabular, format_risk, pick
from qar_sql.stats import evt


@dataclass(frozen=True)
class CurvePoint:
    removed: int
    risk: float | None  # None: no tail after removing these records
    reduction: float | None  # 1 − T̂_k / T̂_0


_POINT_FIELDS = ("removed", "risk", "reduction")


@dataclass(frozen=True, repr=False)
class Elimination(Tabular):
    table_at = ("curves",)  # one row per point, its ranking in the column "curves"
    risk: float
    rows: int
    step: int
    max_removed: int
    curves: dict[str, tuple[CurvePoint, ...]]
    notes: tuple[str, ...] = ()
    auc: dict[str, float] = field(default_factory=dict)  # e.g. the PLS predictor's AUC
    seconds: float = 0.0
    ascii_json: ClassVar[bool] = True  # qar eliminate's JSON has always escaped non-ASCII

    def plot(self, ax: Any = None, *, title: str | None = None) -> Any:
        """Risk reduction against records removed, one line per ranking (the paper's Fig. 10),
        on ``ax`` or a new pyplot-free figure; returns the Axes. Needs ``qar-sql[plot]``."""
        return plots.elimination(self, ax, title)

    def summary_line(self) -> str:
        return (
            f"T = {format_risk(self.risk)} over {self.rows:,} records; removing up to {self.max_removed:,} "
            f"in steps of {self.step:,} by {', '.join(self.curves) or 'nothing'}"
        )

    def to_dict(self) -> dict:
        """The JSON of ``qar eliminate``: each curve's points, the AUCs and the notes."""
        return {
            "risk": self.risk,
            "rows": self.rows,
            "step": self.step,
            "max_removed": self.max_removed,
            "curves": {name: [pick(p, _POINT_FIELDS) for p in pts] for name, pts in self.curves.items()},
            "auc": dict(self.auc),
            "notes": list(self.notes),
        }


def parse_max(value: str | int | float, rows: int, step: int) -> int:
    """``--max`` as a record count: ``"20%"`` of L or a whole number of records."""
    text = str(value).strip()
    number = check_max(text)
    count = int(rows * number / 100) if text.endswith("%") else int(text)
    if count > rows:
        raise ParameterError(f"--max {text} is more than the {rows} records of the table; use at most 100%")
    if count > rows - 2:
        count = rows - 2  # the estimator needs at least 2 records left
    if step < 1:
        raise ParameterError(f"--step {step} must be at least 1 record")
    if count < step:
        raise ParameterError(f"--max {text} ({count} records) is below one step of {step}; raise --max or lower --step")
    return count


def check_block(db: Database, fix: str = "--by greedy alone runs here") -> None:
    """Refuse block elimination on an engine that cannot run it (its dialect reads no array as a
    relation), before the audit reads a row (``qar eliminate``; ``qar report``'s elimination
    section, whose ``fix`` differs)."""
    if not db.dialect.array_relation:
        raise UsageError(
            f"block elimination is not implemented for {db.dialect.name} yet; use DuckDB or PostgreSQL ({fix})"
        )


def emptied_classes(
    db: Database, relation: Relation, columns, p, order_by, order: np.ndarray, kmax: int
) -> dict[int, np.ndarray]:
    """{qi: array of the removal step at which each emptied class empties} (steps ≤ kmax)."""
    # The (r, pos) list of the first kmax records of ``order``, read by the engine in place.
    removed = db.array_relation(
        {"r": np.asarray(order[:kmax], dtype=np.int64), "pos": np.arange(1, kmax + 1, dtype=np.int64)}
    )
    qis = [QIBatch(j, tuple(f"c{i}" for i in c)) for j, c in enumerate(combinations(len(columns), p))]
    # the codes travel as a CTE: one statement reads them
    with removed as (removed_sql, params), coded(db, relation, columns, order_by=order_by, materialize=False) as codes:
        sql = render(
            "elimination.sql", db.dialect, encode_sql=codes.encode_sql, encoded=codes.encoded, removed=removed_sql,
            qis=qis, kmax=int(kmax), never=int(kmax) + 1,
        )  # fmt: skip
        rows = db.query(sql, params)
    out: dict[int, list] = defaultdict(list)
    for qi, last, classes in rows:
        out[int(qi)].append((int(last), int(classes)))
    return {qi: np.repeat([a for a, _ in v], [b for _, b in v]) for qi, v in out.items()}


def curve(
    distinct: np.ndarray,
    rows: int,
    emptied: dict[int, np.ndarray],
    points: Sequence[int],
    risk0: float,
    *,
    alpha,
    pi_u,
    pwm,
) -> tuple[CurvePoint, ...]:
    out = []
    n_qi = len(distinct)
    # For each QI, sorted emptying steps → classes emptied by step k via searchsorted.
    sorted_steps = [np.sort(emptied.get(j, np.zeros(0, dtype=np.int64))) for j in range(n_qi)]
    for k in points:
        h = distinct - np.array([np.searchsorted(s, k, side="right") for s in sorted_steps])
        try:
            t = evt.qar_risk(h / (rows - k), rows - k, alpha=alpha, pi_u=pi_u, pwm=pwm).risk
            out.append(CurvePoint(int(k), t, 1.0 - t / risk0))
        except NoTailError:
            out.append(CurvePoint(int(k), None, None))
    return tuple(out)


def ranking_order(
    name: str, contrib: Contributions, db, relation, columns, p, order_by, *, seed=0, orders=None, aucs=None
) -> np.ndarray:
    """Record positions in removal order for a block ranking (ties by key order)."""
    if name in ("dt", "u_plus", "u_star", "n_unique"):
        return contrib.order(name)
    if name == "random":
        return np.random.default_rng(seed).permutation(contrib.rows)
    if name == "influence":
        tally = all_tallies(db, relation, contrib.audit, order_by, gradient(contrib.audit))
        return np.argsort(-tally, kind="stable")
    if name == "entropy":
        e = entropy_scores(db, relation, columns, p, order_by, orders=orders)
        return np.argsort(-np.asarray(e, dtype=float), kind="stable")
    if name == "pls":
        res = pls_scores(db, relation, columns, order_by, contrib.dt, seed=seed)
        if aucs is not None and res.auc is not None:  # None: the held-out 25% has one class
            aucs["pls"] = float(res.auc)
        return np.argsort(-np.asarray(res.scores, dtype=float), kind="stable")
    raise ParameterError(f"--by {name!r} is not a ranking; use some of {', '.join(RANKINGS)}")


def eliminate_relation(
    session: Session, params: EliminateParams, progress: Progress | None = None, *, started: float | None = None
) -> Elimination:
    """Block elimination curves for each ranking of ``params.by`` (plus greedy when asked) of
    the session's relation (:func:`qar_sql.eliminate`)."""
    started = time.perf_counter() if started is None else started
    db, relation, source = session.db, session.relation, session.label
    opts = Options.of(params, progress)
    if any(name != "greedy" for name in params.by):
        check_block(db)  # (before the audit: refused before any row is read)
    contrib, order_by = compute(db, relation, opts, key=params.key, source=source)
    risk0 = contrib.audit.risk
    assert risk0 is not None  # compute() refuses an audit without a tail
    kmax = parse_max(params.max_removed, contrib.rows, params.step)
    orders = dict(params.orders) if params.orders is not None else None
    aucs: dict[str, float] = {}
    curves = block_curves(
        contrib, db, relation, order_by, opts, [n for n in params.by if n != "greedy"], params.step, kmax,
        seed=params.seed, orders=orders, aucs=aucs,
    )  # fmt: skip
    if "greedy" in params.by:
        steps = params.greedy_steps or kmax
        g = greedy_elimination(
            db, relation, contrib.audit.columns, opts.p, order_by, steps=steps, alpha=opts.alpha, pi_u=opts.pi_u,
            pwm=opts.pwm,
        )  # fmt: skip
        curves["greedy"] = greedy_points(g, params.step, steps, risk0)
    return Elimination(
        risk=risk0, rows=contrib.rows, step=params.step, max_removed=kmax, curves=curves,
        notes=contrib.warnings, auc=aucs, seconds=time.perf_counter() - started,
    )  # fmt: skip


def block_curves(
    contrib: Contributions, db, relation, order_by, opts: Options, by: Sequence[str], step: int, kmax: int, **ranking
) -> dict[str, tuple[CurvePoint, ...]]:
    """T̂ of the rest after removing the first k records (every ``step`` up to ``kmax``) of each
    ranking of ``by`` (``ranking``: :func:`ranking_order`'s keywords), from the audit and
    contributions ``contrib`` (qar eliminate's curves and the report's)."""
    risk0 = contrib.audit.risk or 0.0  # (never None: compute() refuses an audit without a tail)
    points = list(range(step, kmax + 1, step))
    cols = contrib.audit.columns
    distinct = np.array([q.distinct for q in contrib.audit.qis], dtype=np.int64)
    curves: dict[str, tuple[CurvePoint, ...]] = {}
    for name in by:
        order = ranking_order(name, contrib, db, relation, cols, opts.p, order_by, **ranking)
        emptied = emptied_classes(db, relation, cols, opts.p, order_by, order, kmax)
        curves[name] = curve(
            distinct, contrib.rows, emptied, points, risk0, alpha=opts.alpha, pi_u=opts.pi_u, pwm=opts.pwm
        )
    return curves


def greedy_points(g: Any, step: int, steps: int, risk0: float) -> tuple[CurvePoint, ...]:
    """The greedy elimination ``g`` (:func:`~qar_sql.ranking.greedy.greedy_elimination` of
    ``steps`` removals) as a curve, a point every ``step`` records."""
    return tuple(
        CurvePoint(k, float(g.risk[k]), 1.0 - float(g.risk[k]) / risk0)
        for k in range(step, min(steps, len(g.risk) - 1) + 1, step)
    )
