"""The search over the lattice of level vectors, and :func:`anonymize_session`, the entry point.

A **node** is a level vector (one hierarchy level per QI, in QI order); the lattice holds
Π heights of them (12,960 for ARX's adult hierarchies). Node ``x`` *generalizes* ``y`` when
``x ≥ y`` in every column. A node is **anonymous** when the records of the classes violating the
privacy models are at most ``suppression_limit × rows``; those records are then suppressed.

Strategies (``strategy=``):

* ``"exhaustive"`` — every node evaluated (tests, small lattices);
* ``"flash"`` — exact, after ARX's Flash (``FLASHAlgorithmImpl``/``FLASHStrategy``), batched:
  every metric has a lower bound from the levels alone (:func:`.metrics.lower_bounds`; exact for
  the monotonic entropy), so a node whose bound is above the best score found is never
  evaluated. When the models are monotone under the limit (:func:`.models.monotone`), every
  result is propagated by **predictive tagging** — a node found anonymous makes all its
  generalizations anonymous, one found not anonymous all its specializations not anonymous —
  and each round evaluates (up to :data:`.evaluate.BATCH` per round trip, lowest bound first)
  the *maximal* unresolved nodes among those whose bound is below the best: one found not
  anonymous resolves every candidate below it at once, one found anonymous lowers the best.
  This replaced Flash's binary search along upward paths (still here, ``tops=False`` in
  :func:`_flash`), which evaluated 922/674/203/109 nodes on ARX's four adult cases against
  792/460/110/37. Nodes tagged anonymous are evaluated only when the metric needs their data
  (all but the monotonic entropy, whose bound is its score), lowest bound first, while their
  bound is below the best. When the models are not monotone (entropy/recursive l-diversity,
  t-closeness with suppression; a non-monotone ``node_check``) no tagging is sound: every
  node whose bound is below the best is evaluated, lowest bound first. Either way the
  optimum is guaranteed (``optimal: True``);
* ``"heuristic"`` — beyond ``max_nodes`` (ARX switches at 100,000) or when asked: a top-down
  best-first descent from the top node (evaluate the direct specializations of the current node,
  move to the anonymous one with the lowest score) within ``max_evaluations`` and
  ``time_limit``; ``optimal: False``.

Ties on the score go to the node with the lowest level sum, then the lowest level vector.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from qar_sql.anonymization import metrics
from qar_sql.anonymization.evaluate import BATCH, Evaluator, NodeEval, evaluator
from qar_sql.anonymization.hierarchy import Hierarchy
from qar_sql.anonymization.models import Model, monotone
from qar_sql.errors import DataError, ParameterError

#: Lattices larger than this are searched by the heuristic (ARX's own threshold).
MAX_EXACT_NODES = 100_000


@dataclass(frozen=True)
class NodeResult:
    """One evaluated node: ``scores`` holds every metric computable from what was fetched
    (the loss and non-monotonic entropy only when the suppressed values were); None where the
    node is not anonymous (ARX scores releases, and a non-anonymous node has none)."""

    levels: tuple[int, ...]
    anonymous: bool
    suppressed: int
    k: int
    scores: dict[str, float | None]


class NoNodeMeets(DataError):
    """No node meets the models within the suppression limit, not even the most general. The
    search's figures ride along (``qar anonymize`` reports them and exits 1, as a target it tried
    and missed): ``fewest``, the fewest records a node evaluated leaves in classes failing the
    models; ``rows``, ``nodes``, ``evaluated``."""

    def __init__(self, message: str, *, fewest: int, rows: int, nodes: int, evaluated: int):
        super().__init__(message)
        self.fewest, self.rows, self.nodes, self.evaluated = fewest, rows, nodes, evaluated


@dataclass(frozen=True)
class SearchResult:
    """The outcome of :func:`anonymize_session` (JSON-ready through ``dataclasses.asdict``).

    ``levels`` and ``labels`` map each QI (in QI order) to the chosen level and its label;
    ``suppressed`` is the records suppressed; ``scores`` every metric of the chosen node, as ARX
    computes it; ``k`` the smallest class of the release; ``nodes``/``evaluated``/``anonymous``
    the lattice's size, the nodes evaluated in the database and the nodes known anonymous
    (evaluated or tagged); ``optimal`` whether the chosen node is guaranteed minimal for
    ``metric``; ``evaluated_nodes`` every evaluated node (for a frontier)."""

    columns: tuple[str, ...]
    levels: dict[str, int]
    labels: dict[str, str]
    suppressed: int
    scores: dict[str, float]
    metric: str
    k: int
    optimal: bool
    nodes: int
    evaluated: int
    anonymous: int
    seconds: float
    rows: int
    suppression_limit: float
    models: tuple[str, ...]
    strategy: str
    statements: int
    evaluated_nodes: tuple[NodeResult, ...] = field(repr=False, default=())

    @property
    def level_vector(self) -> tuple[int, ...]:
        return tuple(self.levels[c] for c in self.columns)


class _Lattice:
    """The nodes as an array, their status (1 anonymous, −1 not, 0 unknown) and tagging."""

    def __init__(self, heights: Sequence[int]):
        self.heights = tuple(heights)
        self.size = math.prod(self.heights)
        grids = np.meshgrid(*[np.arange(h, dtype=np.int16) for h in self.heights], indexing="ij")
        self.nodes = np.stack([g.ravel() for g in grids], axis=1) if self.heights else np.zeros((1, 0), np.int16)
        self.status = np.zeros(self.size, dtype=np.int8)
        self.strides = np.array([math.prod(self.heights[j + 1 :]) for j in range(len(self.heights))], dtype=np.int64)
        self.level_sum = self.nodes.sum(axis=1)

    def index(self, node: Sequence[int]) -> int:
        return int(np.dot(np.asarray(node, dtype=np.int64), self.strides))

    def tag(self, node: Sequence[int], anonymous: bool, predictive: bool) -> None:
        self.status[self.index(node)] = 1 if anonymous else -1
        if not predictive:
            return
        # the nodes above (below) a node are a box of the row-major grid: a view of status
        grid = self.status.reshape(self.heights)
        if anonymous:
            box = grid[tuple(slice(int(v), None) for v in node)]
            box[box == 0] = 1
        else:
            box = grid[tuple(slice(0, int(v) + 1) for v in node)]
            box[box == 0] = -1


def _order(keys: np.ndarray, lattice: _Lattice, idx: np.ndarray) -> np.ndarray:
    """``idx`` sorted by key, then level sum, then node (the tie rule)."""
    return idx[np.lexsort((idx, lattice.level_sum[idx], keys[idx]))]


#: A node-level criterion beyond the class-level models: ``check(levels, node) -> bool``, True
#: when the node (whose violating classes would be suppressed) is acceptable.
NodeCheck = Callable[[tuple[int, ...], NodeEval], bool]


class _Search:
    def __init__(
        self,
        ev: Evaluator,
        metric: str,
        limit: float,
        models: Sequence[Model],
        predictive: bool,
        node_check: NodeCheck | None = None,
    ):
        self.ev, self.metric = ev, metric
        self.max_suppressed = limit * ev.rows
        self.models = models
        self.predictive = predictive
        self.node_check = node_check
        self.values = metric in metrics.NEEDS_SUPPRESSED_VALUES
        self.results: dict[tuple[int, ...], NodeResult] = {}
        self.evals: dict[tuple[int, ...], NodeEval] = {}

    def run(self, nodes: Sequence[tuple[int, ...]]) -> list[NodeResult]:
        todo = [n for n in dict.fromkeys(nodes) if n not in self.results]
        if todo:
            # the suppressed values per column (9 more GROUP BYs a node on adult) only for the
            # nodes found anonymous: the others have no score
            found = self.ev.evaluate(todo, values=False)
            again = [e.levels for e in found if self.values and e.anonymous(self.max_suppressed)]
            scored = {e.levels: e for e in self.ev.evaluate(again, values=True)} if again else {}
            for e in found:
                e = scored.get(e.levels, e)
                self.evals[e.levels] = e
                self.results[e.levels] = self._result(e)
        return [self.results[n] for n in nodes]

    def _result(self, e: NodeEval) -> NodeResult:
        anonymous = e.anonymous(self.max_suppressed)
        if anonymous and self.node_check is not None:
            anonymous = bool(self.node_check(e.levels, e))
        scores: dict[str, float | None] = {}
        for m in metrics.METRICS:
            if not anonymous or (m in metrics.NEEDS_SUPPRESSED_VALUES and e.classes.suppressed_values is None):
                scores[m] = None
            else:
                scores[m] = metrics.score(m, self.ev.domain, e.levels, e.classes)
        return NodeResult(e.levels, anonymous, e.violating if anonymous else 0, e.k, scores)


def _exhaustive(s: _Search, lattice: _Lattice) -> None:
    all_nodes = [tuple(int(x) for x in n) for n in lattice.nodes]
    for r in s.run(all_nodes):
        lattice.tag(r.levels, r.anonymous, predictive=False)


def _flash(s: _Search, lattice: _Lattice, bounds: np.ndarray, exact_bound: bool, tops: bool = True) -> None:
    best = math.inf

    def note(results: Sequence[NodeResult]) -> None:
        nonlocal best
        for r in results:
            lattice.tag(r.levels, r.anonymous, s.predictive)
            if r.anonymous and r.scores[s.metric] is not None:
                best = min(best, float(r.scores[s.metric]))  # type: ignore[arg-type]
        if exact_bound and s.predictive:  # a tagged anonymous node's score is its bound
            known = lattice.status == 1
            if known.any():
                best = min(best, float(bounds[known].min()))

    if s.predictive and tops:
        while True:
            # the unresolved nodes that could still beat the best; evaluate their maximal ones:
            # one found not anonymous resolves every node of the set below it
            cand = (lattice.status == 0) & _below(bounds, best)
            idx = np.flatnonzero(cand)
            if not len(idx):
                break
            covered = np.zeros(len(idx), dtype=bool)
            for j, h in enumerate(lattice.heights):
                up = lattice.nodes[idx, j] + 1 < h
                covered[up] |= cand[idx[up] + lattice.strides[j]]
            top = idx[~covered]
            batch = top[np.lexsort((top, lattice.level_sum[top], bounds[top]))][:BATCH]
            note(s.run([tuple(int(x) for x in lattice.nodes[i]) for i in batch]))
    elif s.predictive:
        while True:
            open_idx = np.flatnonzero((lattice.status == 0) & _below(bounds, best))
            if not len(open_idx):
                break
            starts = open_idx[np.lexsort((open_idx, bounds[open_idx], lattice.level_sum[open_idx]))][:BATCH]
            paths = [_path(lattice, bounds, int(i)) for i in starts]
            while paths:
                mids = []
                for p in paths:
                    st = lattice.status[p]
                    lo = (int(np.flatnonzero(st == -1).max()) + 1) if (st == -1).any() else 0
                    hi = (int(np.flatnonzero(st == 1).min()) - 1) if (st == 1).any() else len(p) - 1
                    if lo > hi:
                        continue
                    mids.append((p, (lo + hi) // 2))
                if not mids:
                    break
                nodes = list(dict.fromkeys(tuple(int(x) for x in lattice.nodes[p[m]]) for p, m in mids))
                note(s.run(nodes))
                paths = [p for p, _ in mids]
    # the nodes whose score still needs their data, lowest bound first
    while True:
        if s.predictive:
            cand = (lattice.status == 1) & _below(bounds, best)
        else:
            cand = (lattice.status == 0) & _below(bounds, best)
        if exact_bound and s.predictive:
            break  # every anonymous node's score is its bound
        idx = np.flatnonzero(cand)
        idx = np.array([i for i in idx if tuple(int(x) for x in lattice.nodes[i]) not in s.results], dtype=np.int64)
        if not len(idx):
            break
        batch = _order(bounds, lattice, idx)[:BATCH]
        note(s.run([tuple(int(x) for x in lattice.nodes[i]) for i in batch]))


def _below(bounds: np.ndarray, best: float) -> np.ndarray:
    """Nodes that may still beat or tie the best score."""
    return bounds <= best + TIE * abs(best) if math.isfinite(best) else np.ones(len(bounds), dtype=bool)


def _path(lattice: _Lattice, bounds: np.ndarray, start: int) -> np.ndarray:
    """An upward path of unknown nodes from ``start``: each step raises the one column whose
    successor is unknown and has the lowest bound (then the lowest index)."""
    path = [start]
    node = lattice.nodes[start].astype(np.int64)
    while True:
        best = None
        for j, h in enumerate(lattice.heights):
            if node[j] + 1 < h:
                i = lattice.index(node) + int(lattice.strides[j])
                if lattice.status[i] == 0 and (best is None or (bounds[i], i) < (bounds[best], best)):
                    best = i
        if best is None:
            return np.array(path, dtype=np.int64)
        path.append(best)
        node = lattice.nodes[best].astype(np.int64)


def _heuristic(s: _Search, heights: Sequence[int], max_evaluations: int, time_limit: float, started: float) -> bool:
    """Top-down best-first descent; True when it stopped on a limit (not at a local optimum)."""
    current = tuple(h - 1 for h in heights)
    (top,) = s.run([current])
    if not top.anonymous:
        return False
    while True:
        children = [tuple(x - (i == j) for i, x in enumerate(current)) for j in range(len(heights)) if current[j] > 0]
        if not children:
            return False
        if len(s.results) + len(children) > max_evaluations or time.perf_counter() - started > time_limit:
            return True
        good = [r for r in s.run(children) if r.anonymous and r.scores[s.metric] is not None]
        if not good:
            return False
        current = min(good, key=lambda r: (r.scores[s.metric], sum(r.levels), r.levels)).levels


def anonymize_session(
    session,
    hierarchies: Mapping[str, Hierarchy],
    models: Sequence[Model],
    suppression_limit: float = 0.0,
    metric: str = "entropy",
    *,
    qi: Sequence[str] | None = None,
    gs_factor: float = 0.5,
    strategy: str = "auto",
    max_nodes: int = MAX_EXACT_NODES,
    max_evaluations: int = 10_000,
    time_limit: float = 600.0,
    node_check: NodeCheck | None = None,
    node_check_monotone: bool = False,
) -> SearchResult:
    """The cheapest full-domain generalization of ``session``'s relation meeting ``models``.

    ``hierarchies``: column → :class:`~.hierarchy.Hierarchy`; the QIs are ``qi`` (default: the
    columns with a hierarchy, in table order). ``models``: :mod:`.models` instances, all met by
    every kept class. ``suppression_limit``: the share of rows (0 ≤ limit < 1) that may be
    suppressed. ``metric``: one of :data:`.metrics.METRICS` (``"entropy"`` is ARX's
    ``createPrecomputedEntropyMetric(…, true)``), minimised with ARX's ``gs_factor``.
    ``strategy``: ``"auto"`` (``"flash"`` up to ``max_nodes`` nodes, else ``"heuristic"``),
    ``"flash"``, ``"exhaustive"`` or ``"heuristic"`` (see the module docstring).

    ``node_check(levels, node) -> bool`` adds a criterion on the whole release of a node (the
    QaR target T̂ ≤ τ, say): a node within the suppression limit is anonymous only when it also
    returns True; ``node.classes`` and ``node.violating`` describe the release. Say
    ``node_check_monotone=True`` only when every generalization of an accepted node is accepted
    too: predictive tagging is then still used; otherwise the exact search evaluates every node
    whose bound is below the best score (still optimal, more evaluations).

    Raises :class:`NoNodeMeets` (a :class:`~qar_sql.errors.DataError`) when no node is anonymous (even full generalization
    leaves more violating records than the limit), and the hierarchy/column errors of
    :func:`.evaluate.evaluator`. Nothing is written to the database (DuckDB's frequency table is
    a session temp table in memory, dropped before returning)."""
    started = time.perf_counter()
    if metric not in metrics.METRICS:
        raise ParameterError(f"metric {metric!r} is unknown; use one of {', '.join(metrics.METRICS)}")
    if (
        isinstance(suppression_limit, bool)
        or not isinstance(suppression_limit, int | float)
        or not 0 <= suppression_limit < 1
    ):
        raise ParameterError(
            f"suppression limit {suppression_limit!r} must be a share of rows from 0 to below 1, e.g. 0.04"
        )
    if strategy not in ("auto", "flash", "exhaustive", "heuristic"):
        raise ParameterError(f"strategy {strategy!r} is unknown; use auto, flash, exhaustive or heuristic")
    if not models:
        raise ParameterError("no privacy model given; ask for at least one (k-anonymity, l-diversity, t-closeness)")
    with evaluator(session, hierarchies, models, qi=qi, gs_factor=gs_factor) as ev:
        heights = ev.heights
        size = math.prod(heights)
        if strategy == "auto":
            strategy = "flash" if size <= max_nodes else "heuristic"
        predictive = monotone(models, suppression_limit) and (node_check is None or node_check_monotone)
        s = _Search(ev, metric, suppression_limit, models, predictive and strategy == "flash", node_check)
        optimal = True
        anonymous_known: int
        if strategy == "heuristic":
            stopped = _heuristic(s, heights, max_evaluations, time_limit, started)
            optimal = False
            del stopped
            anonymous_known = sum(r.anonymous for r in s.results.values())
        else:
            if size > 5_000_000:
                raise ParameterError(
                    f"the lattice has {size:,} nodes, too many to enumerate; use strategy='heuristic' or coarser hierarchies"
                )
            lattice = _Lattice(heights)
            if strategy == "exhaustive":
                _exhaustive(s, lattice)
            else:
                bounds = metrics.lower_bounds(metric, ev.domain, lattice.nodes)
                _flash(s, lattice, bounds, exact_bound=metric in metrics.MONOTONIC)
            anonymous_known = int((lattice.status == 1).sum())
        best = _best(s, ev, lattice if strategy != "heuristic" else None, metric)
        if best is None:
            raise NoNodeMeets(
                f"no generalization meets {', '.join(m.name for m in models)} with at most "
                f"{suppression_limit:.2%} of the {ev.rows:,} rows suppressed, not even the most general; "
                "raise the suppression limit or relax the models",
                fewest=min((e.violating for e in s.evals.values()), default=ev.rows),
                rows=ev.rows,
                nodes=size,
                evaluated=len(s.results),
            )
        # the chosen node with every metric (the suppressed values fetched once, for it alone)
        (full,) = ev.evaluate([best], values=True)
        chosen = s._result(full)
        scores = {m: float(v) for m, v in chosen.scores.items() if v is not None}
        levels = dict(zip(ev.qi, best))
        labels = {c: hierarchies[c].label(lv) for c, lv in levels.items()}
        return SearchResult(
            columns=ev.qi,
            levels=levels,
            labels=labels,
            suppressed=chosen.suppressed,
            scores=scores,
            metric=metric,
            k=chosen.k,
            optimal=optimal,
            nodes=size,
            evaluated=len(s.results),
            anonymous=anonymous_known,
            seconds=time.perf_counter() - started,
            rows=ev.rows,
            suppression_limit=float(suppression_limit),
            models=tuple(m.name for m in models),
            strategy=strategy,
            statements=ev.statements,
            evaluated_nodes=tuple(s.results.values()),
        )


def _best(s: _Search, ev: Evaluator, lattice: _Lattice | None, metric: str) -> tuple[int, ...] | None:
    """The anonymous node of lowest score (tagged nodes scored by their exact bound)."""
    cands: list[tuple[float, int, tuple[int, ...]]] = []
    for r in s.results.values():
        v = r.scores[metric]
        if r.anonymous and v is not None:
            cands.append((float(v), sum(r.levels), r.levels))
    if lattice is not None and metric in metrics.MONOTONIC:
        idx = np.flatnonzero(lattice.status == 1)
        if len(idx):
            b = metrics.lower_bounds(metric, ev.domain, lattice.nodes[idx])
            order = np.lexsort((idx, lattice.level_sum[idx], b))
            i = idx[order[0]]
            node = tuple(int(x) for x in lattice.nodes[i])
            cands.append((float(b[order[0]]), sum(node), node))
    if not cands:
        return None
    low = min(c[0] for c in cands)
    return min(c for c in cands if _ties(c[0], low))[2]


def _ties(a: float, b: float) -> bool:
    """Scores equal but for the rounding of their sums (the tie rule applies)."""
    return a == b or abs(a - b) <= TIE * max(abs(a), abs(b))


#: Relative difference below which two scores tie (sums taken in different orders differ by
#: a few ulps; the lower level sum then wins, as it would on exact arithmetic).
TIE = 1e-12


__all__ = ["MAX_EXACT_NODES", "NoNodeMeets", "NodeCheck", "NodeResult", "SearchResult", "anonymize_session"]
