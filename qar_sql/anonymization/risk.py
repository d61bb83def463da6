"""The QaR target of the search: T̂(p, α) of a node's release at most τ (``--risk-below``).

A node is a level vector over the QI columns. Its release is the source with each column
generalized to its level and the suppressed records removed; T̂ is the audit's estimator over
every set of p audit columns of that release (a column without a hierarchy stays as it is).

What is shared across nodes: θ over one p-subset depends only on the levels of that subset's
columns (generalization is row by row), so a node that suppresses nothing computes only the
subsets whose levels are new (:class:`RiskTarget` keeps (distinct, singletons) per (subset,
its levels)). A node that suppresses records removes rows chosen by the classes of the *whole*
QID, so in SQL such a node scans its subsets itself; with the cells in memory
(:meth:`RiskTarget.fetch_cells`) it corrects each subset's class sizes over the whole table,
kept per (subset, levels), on its suppressed cells alone (:class:`_Cells`).

A scan is one statement: the release's frequency table (its cells: the generalized audit and QI
columns with their records), the suppressed cells dropped by a window over the cells, and each
subset's (distinct, singletons) summed from the cells; only two numbers per subset cross the
wire. Measured against the audit's pushed-down scan of the release (a temp table or CTE of the
generalized rows with a window over the rows, then the class-size histogram of every subset):
the same θ, 1.5× faster on PostgreSQL at 20,000 rows, as fast on DuckDB at 100,000.

Each θ (distinct or singletons over the rows) is non-increasing from a node to its successors
when nothing is suppressed: generalization maps each value combination of a subset to one, so
the distinct combinations cannot grow, and a class of one record after it was one before it.

With ``theta="unique"`` (θ = S/L, as ``qar audit --theta unique``) a subset on which no record is
unique stands at 0.5/L, as in the audit. A release on which no record is unique on *any* set of
p audit columns has every θ = 0: no attacker who knows p of the columns singles anyone out, so
T̂ is 0 exactly (no tail is fitted; the audit, fitting that θ-vector, finds no tail there).

T̂ is not monotone in the level vector (each θ is non-increasing under generalization without
suppression, but u and the tail fit move), so no node is ruled out by another's risk: the search
(:func:`best_first`) reaches the optimum by visiting nodes in increasing loss instead.
"""

from __future__ import annotations

import dataclasses
import heapq
import itertools
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from qar_sql.anonymization.evaluate import LOCAL_CELLS, Coding, classes, code0_sql
from qar_sql.engines.database import Database, Relation
from qar_sql.errors import NoTailError
from qar_sql.parameters.tail import check_theta
from qar_sql.pushdown.scan import combinations
from qar_sql.rules import check_risk_below
from qar_sql.stats import evt

#: ``expression(column, level)``: the SQL of the column generalized to ``level``, over the row
#: alias ``t`` (level 0: the column itself).
Expression = Callable[[str, int], str]


@dataclass(frozen=True)
class RiskSpec:
    """What the target measures: the audit columns, p, α, π_u, the PWM estimator, θ, and τ."""

    columns: tuple[str, ...]
    p: int = 3
    alpha: float = 0.01
    pi_u: float = 0.05
    pwm: str = "plotting"
    theta: str = "distinct"
    below: float | None = None

    def __post_init__(self) -> None:
        check_theta(self.theta)
        check_risk_below(self.below)
        # p above the audit columns is named as the audit names it, before the tail's own check.
        evt.check_n_qi(len(combinations(len(self.columns), self.p)), self.pi_u)


@dataclass(frozen=True)
class NodeRisk:
    """T̂ of one node's release (None when no tail can be fitted: ``note`` says why)."""

    levels: tuple[int, ...]
    rows: int
    theta: np.ndarray
    fit: evt.TailFit | None
    note: str | None
    #: Subsets this node scanned (the rest came from nodes before it).
    scanned: int
    #: θ = S/L and no record of the release is unique on any subset: T̂ = 0 without a fit.
    unique_free: bool = False

    @property
    def risk(self) -> float | None:
        if self.fit is None:
            return 0.0 if self.unique_free else None
        return self.fit.risk

    def meets(self, below: float | None) -> bool:
        """Whether T̂ ≤ τ (no τ: always; no tail: never, as no number can be shown to meet it)."""
        return below is None or (self.risk is not None and self.risk <= below)


class RiskTarget:
    """T̂ of the releases of one source's nodes, over ``spec.columns``.

    ``qi`` are the columns a level vector gives levels to (in its order); ``expression`` gives
    their generalized SQL. A node's records are suppressed as its classes on the generalized QI
    with fewer than ``smallest`` records (the class-based models' violators)."""

    def __init__(
        self,
        db: Database,
        relation: Relation,
        spec: RiskSpec,
        qi: Sequence[str],
        expression: Expression,
        *,
        jobs: int = 1,
        batch_size: int | None = None,
    ):
        self.db, self.relation, self.spec = db, relation, spec
        self.qi, self.expression = tuple(qi), expression
        self.jobs, self.batch_size = jobs, batch_size
        self.combos = combinations(len(spec.columns), spec.p)
        position = {c: i for i, c in enumerate(self.qi)}
        # per subset: the positions in the level vector of its generalizable columns
        self._levels_of = [
            tuple(position[spec.columns[i]] for i in c if spec.columns[i] in position) for c in self.combos
        ]
        self._shared: dict[tuple[int, tuple[int, ...]], tuple[int, int]] = {}
        self._rows: int | None = None
        self._cells: _Cells | None = None
        #: Subsets scanned, over every node so far (what the cache spares is nodes × C(N, p) − this).
        self.scanned = 0
        self.nodes = 0

    # -- SQL ---------------------------------------------------------------------------------

    def _expr(self, column: str, levels: Sequence[int]) -> str:
        if column in self.qi:
            return self.expression(column, int(levels[self.qi.index(column)]))
        return f"t.{self.db.dialect.quote(column)}"

    def fetch_cells(self, codings: Sequence[Coding], limit: int = LOCAL_CELLS) -> bool:
        """Read the frequency table of the audit and QI columns once when it has at most
        ``limit`` cells; θ is then counted from those cells in memory (:class:`_Cells`), the same
        counts as the statement of :meth:`_scan`. Only codes cross the wire, no value of the
        table: a QI's level-0 code of ``codings`` (the search's, in QI order; its higher levels
        are the codings' maps) and an audit column's rank among its distinct values (NULL one
        value, as in a GROUP BY), with each cell's records. True when it did."""
        if limit <= 0:
            return False
        d = self.db.dialect
        names = list(dict.fromkeys([*self.spec.columns, *self.qi]))
        raw = [f"cast(t.{d.quote(c)} as {d.text})" if c in self.qi else f"t.{d.quote(c)}" for c in names]
        grouped = (
            f"select {', '.join(f'{x} as v{i}' for i, x in enumerate(raw))}, count(*) as n "
            f"from {self.relation.sql} as t group by {', '.join(raw)}"
        )
        coded = [
            code0_sql(f"v{i}", codings[self.qi.index(c)], d)
            if c in self.qi
            else f"dense_rank() over (order by v{i}) - 1"
            for i, c in enumerate(names)
        ]
        mat = "materialized " if d.cte_materialized else ""
        sql = (
            f"with qar_rc as {mat}(select {', '.join(f'{x} as x{i}' for i, x in enumerate(coded))}, n "
            f"from ({grouped}) as r)\nselect * from qar_rc where (select count(*) from qar_rc) <= {int(limit)}"
        )
        got = self.db.arrays(sql, {**{f"x{i}": np.int64 for i in range(len(names))}, "n": np.int64})
        if not len(got["n"]):  # more cells than the limit (the table is not empty: the search refuses that)
            return False
        maps = {c: codings[self.qi.index(c)].codes for c in names if c in self.qi}
        self._cells = _Cells({c: got[f"x{i}"] for i, c in enumerate(names)}, maps, got["n"])
        return True

    # -- θ and T̂ ------------------------------------------------------------------------------

    def counts(self, levels: Sequence[int], smallest: int | None = None, suppressed: int = 0) -> tuple[int, np.ndarray]:
        """(rows of the release, (distinct, singletons) per subset as an n × 2 array)."""
        levels = tuple(int(v) for v in levels)
        self.nodes += 1
        if suppressed:
            got = self._scan(levels, smallest, range(len(self.combos)))
            return got[-1][0], np.array([got[j] for j in range(len(self.combos))], dtype=float).reshape(-1, 2)
        keys = [(j, tuple(levels[i] for i in self._levels_of[j])) for j in range(len(self.combos))]
        missing = [j for j, key in enumerate(keys) if key not in self._shared]
        if missing or self._rows is None:
            got = self._scan(levels, None, missing)
            self._rows = got[-1][0]
            for j in missing:
                self._shared[keys[j]] = got[j]
        assert self._rows is not None
        return self._rows, np.array([self._shared[k] for k in keys], dtype=float).reshape(-1, 2)

    def _scan(self, levels, smallest, only) -> dict[int, tuple[int, int]]:
        """(distinct, singletons) of the subsets ``only`` of the node's release, and its rows
        (key -1), in one statement per batch.

        The release is grouped once by its generalized audit and QI columns with the records
        per cell ``n`` (its frequency table: at most the rows, far fewer where the node
        generalizes), the suppressed cells dropped by their class size summed over the QI
        (a window over the cells, not the rows), and each subset's classes summed from the cells.
        NULL is a value of its own, as in the audit's GROUP BYs."""
        only = list(only)
        self.scanned += len(only)
        if self._cells is not None:
            return self._cells.scan(self.spec.columns, self.qi, self.combos, levels, smallest, only)
        d = self.db.dialect
        names = list(dict.fromkeys([*self.spec.columns, *self.qi]))
        alias = {c: f"a{i}" for i, c in enumerate(names)}
        exprs = [self._expr(c, levels) for c in names]
        mat = "materialized " if d.cte_materialized else ""
        # grouped by the aliases of a subquery: a generalized column may be a constant ('*'),
        # which PostgreSQL refuses in GROUP BY
        cols = ", ".join(alias[c] for c in names)
        freq = (
            f"select {cols}, count(*) as n from (select "
            f"{', '.join(f'{x} as {alias[c]}' for c, x in zip(names, exprs))} "
            f"from {self.relation.sql} as t) as r group by {cols}"
        )
        ctes = [f"qar_cells as {mat}(\n{freq}\n)"]
        cells = "qar_cells"
        if smallest and smallest > 1:
            keys = ", ".join(alias[c] for c in self.qi)
            ctes.append(
                f"qar_kept as {mat}(select * from (select qar_cells.*, sum(n) over (partition by {keys}) as qar__class "
                f"from qar_cells) as w where qar__class >= {int(smallest)})"
            )
            cells = "qar_kept"
        size = self.batch_size or len(only) or 1
        out: dict[int, tuple[int, int]] = {}
        for start in range(0, max(len(only), 1), size):
            parts = [f"select -1 as j, sum(n) as d, 0 as s from {cells}"] if start == 0 else []
            for j in only[start : start + size]:
                cols = ", ".join(alias[self.spec.columns[i]] for i in self.combos[j])
                parts.append(
                    f"select {j} as j, count(*) as d, sum(case when s = 1 then 1 else 0 end) as s "
                    f"from (select sum(n) as s from {cells} group by {cols}) as x{j}"
                )
            sql = "with " + ",\n".join(ctes) + "\n" + "\nunion all\n".join(parts)
            for j, dist, single in self.db.query(sql):
                out[int(j)] = (int(dist or 0), int(single or 0))
        return out

    def evaluate(self, levels: Sequence[int], smallest: int | None = None, suppressed: int = 0) -> NodeRisk:
        """T̂ of the node ``levels`` whose release drops ``suppressed`` records (those in classes
        smaller than ``smallest``)."""
        before = self.scanned
        rows, counts = self.counts(levels, smallest, suppressed)
        theta = theta_of(counts, rows, self.spec.theta)
        scanned = self.scanned - before
        if unique_free(counts, rows, self.spec.theta):
            return NodeRisk(tuple(int(v) for v in levels), rows, theta, None, NO_UNIQUE, scanned, unique_free=True)
        fit, note = fit_theta(theta, rows, self.spec)
        return NodeRisk(tuple(int(v) for v in levels), rows, theta, fit, note, scanned)


class _Cells:
    """The frequency table of the audit and QI columns in memory (:meth:`RiskTarget.fetch_cells`):
    a node's release and its subsets' classes are grouped from the cells as :meth:`RiskTarget._scan`
    groups them in SQL, on the same cells, so the same counts.

    Shared across nodes, also those that suppress: a subset's classes over *every* cell depend
    only on its columns' levels, so their sizes are kept per (subset, levels) (:meth:`_whole`),
    and a node's release differs from them only by its suppressed cells (at most the suppression
    limit's share of the records). Its (distinct, singletons) are the whole table's, corrected
    on the classes the suppressed cells fall in: a class emptied is one fewer distinct, a class
    left with one record one more singleton."""

    #: Bytes of class sizes kept across nodes (the oldest go first); a subset of more classes
    #: than :data:`DENSE` is grouped afresh for each node.
    BUDGET = 256 << 20
    DENSE = 1 << 22

    def __init__(self, codes: Mapping[str, np.ndarray], maps: Mapping[str, Sequence[np.ndarray]], n: np.ndarray):
        self.codes, self.maps, self.n = codes, maps, n
        self.weights = n.astype(np.float64)
        self.total = int(n.sum())
        self._levels: dict[tuple[str, int], tuple[np.ndarray, int]] = {}
        self._sizes: dict[tuple, tuple[np.ndarray, int, int]] = {}
        self._bytes = 0

    def column(self, name: str, level: int) -> tuple[np.ndarray, int]:
        """(each cell's code of ``name`` at ``level``, the number of codes), kept once made."""
        key = (name, level if name in self.maps else 0)
        if key not in self._levels:
            code0 = self.codes[name]
            if name in self.maps:
                m = self.maps[name][level]
                self._levels[key] = (m[code0].astype(np.int32), int(m.max()) + 1 if len(m) else 1)
            else:
                self._levels[key] = (code0.astype(np.int32), int(code0.max()) + 1 if len(code0) else 1)
        return self._levels[key]

    def _whole(self, picked: Sequence[tuple[str, int]]) -> tuple[np.ndarray, int, int] | None:
        """(records per class key, distinct, singletons) of the subset's classes over every cell,
        the key the mixed-radix number of the columns' codes; None when the keys are too many."""
        key = tuple(picked)
        if key in self._sizes:
            return self._sizes[key]
        cols = [self.column(c, lv) for c, lv in picked]
        if math.prod(r for _, r in cols) > self.DENSE:
            return None
        per = np.bincount(_mixed(cols, slice(None)), weights=self.weights, minlength=math.prod(r for _, r in cols))
        got = (per.astype(np.int64), int(np.count_nonzero(per)), int(np.count_nonzero(per == 1)))
        self._sizes[key] = got
        self._bytes += got[0].nbytes
        while self._bytes > self.BUDGET and len(self._sizes) > 1:
            oldest = next(iter(self._sizes))
            self._bytes -= self._sizes.pop(oldest)[0].nbytes
        return got

    def scan(self, columns, qi, combos, levels, smallest, only) -> dict[int, tuple[int, int]]:
        level_of = dict(zip(qi, levels))
        drop = np.zeros(0, dtype=np.int64)
        if smallest and smallest > 1:
            qcols = [self.column(c, level_of[c]) for c in qi]
            inverse, size = classes([code for code, _ in qcols], [r for _, r in qcols], self.n)
            drop = np.flatnonzero(size[inverse] < smallest)
        n_drop = self.n[drop]
        out = {-1: (self.total - int(n_drop.sum()), 0)}
        keep = np.ones(len(self.n), dtype=bool)
        keep[drop] = False
        for j in only:
            picked = [(columns[i], level_of.get(columns[i], 0)) for i in combos[j]]
            whole = self._whole(picked)
            if whole is None:  # too many classes to keep: grouped from the kept cells
                cols = [self.column(c, lv) for c, lv in picked]
                _, size = classes([code[keep] for code, _ in cols], [r for _, r in cols], self.n[keep])
                out[j] = (len(size), int((size == 1).sum()))
                continue
            per, distinct, singles = whole
            if len(drop):
                bins, at = np.unique(_mixed([self.column(c, lv) for c, lv in picked], drop), return_inverse=True)
                before = per[bins]
                after = before - np.bincount(at.reshape(-1), weights=n_drop).astype(np.int64)
                distinct -= int(np.count_nonzero(after == 0))
                singles += int(np.count_nonzero(after == 1)) - int(np.count_nonzero(before == 1))
            out[j] = (distinct, singles)
        return out


def _mixed(cols: Sequence[tuple[np.ndarray, int]], rows) -> np.ndarray:
    """The mixed-radix class key of the cells ``rows`` on columns ``cols`` ((codes, radix) each)."""
    key = np.zeros(len(cols[0][0][rows]), dtype=np.int64)
    for code, radix in cols:
        key = key * radix + code[rows]
    return key


#: Why T̂ is 0 without a fit (``theta="unique"``).
NO_UNIQUE = "no record of the release is unique on any set of p audit columns, so T̂ of θ = S/L is 0"


def theta_of(counts: np.ndarray, rows: int, measure: str) -> np.ndarray:
    """θ of each subset from its (distinct, singletons) counts: H/L, or S/L with a subset that
    singles out no one at 0.5/L (the audit's, ``qar_sql.measures.audit.fit_theta``)."""
    counts = np.asarray(counts, dtype=float).reshape(-1, 2)
    if not rows:
        return np.zeros(len(counts))
    if measure == "unique":
        return np.maximum(counts[:, 1], 0.5) / rows
    return counts[:, 0] / rows


def unique_free(counts: np.ndarray, rows: int, measure: str) -> bool:
    """θ = S/L of a release that keeps records, none of them unique on any subset (T̂ = 0)."""
    counts = np.asarray(counts, dtype=float).reshape(-1, 2)
    return measure == "unique" and rows > 0 and len(counts) > 0 and not counts[:, 1].any()


def fit_theta(theta: np.ndarray, rows: int, spec: RiskSpec) -> tuple[evt.TailFit | None, str | None]:
    """The audit's tail fit of ``theta`` (the release's ``rows``), or (None, why not)."""
    if rows < 2:
        return None, f"the release keeps {rows} record(s); T̂ needs at least 2"
    try:
        return evt.qar_risk(theta, rows, alpha=spec.alpha, pi_u=spec.pi_u, pwm=spec.pwm), None
    except NoTailError as exc:
        return None, str(exc)


# -- the search over a lattice ------------------------------------------------------------------


def lattice(maxima: Sequence[int]) -> Iterator[tuple[int, ...]]:
    """Every level vector with level i in 0 .. maxima[i] (the bottom first, lexicographically)."""
    return itertools.product(*(range(m + 1) for m in maxima))


def successors(levels: tuple[int, ...], maxima: Sequence[int]) -> Iterator[tuple[int, ...]]:
    for i, (v, m) in enumerate(zip(levels, maxima)):
        if v < m:
            yield levels[:i] + (v + 1,) + levels[i + 1 :]


def order_key(loss: float, levels: tuple[int, ...]) -> tuple:
    """How nodes of equal loss are ordered: lower first, then lexicographically (so the search and
    an exhaustive evaluation pick the same node among ties)."""
    return (loss, sum(levels), levels)


@dataclass
class Visit:
    """What :func:`best_first` did: how many nodes it evaluated (loss and models), the nodes it
    measured the risk of, in order, and the one it chose (None: no node meets every target)."""

    chosen: tuple[int, ...] | None
    evaluated: int
    measured: list[tuple[int, ...]]
    #: The minimal nodes found passing the models (with monotone models every node above one
    #: passes too), or every node found passing.
    passing: list[tuple[int, ...]] = dataclasses.field(default_factory=list)

    def anonymous(self, maxima: Sequence[int]) -> int:
        """The nodes known to pass the models: evaluated, or above one that passed."""
        if not self.passing:
            return 0
        grid = np.zeros(tuple(int(m) + 1 for m in maxima), dtype=bool)
        for p in self.passing:
            grid[tuple(slice(v, None) for v in p)] = True
        return int(grid.sum())


def best_first(
    maxima: Sequence[int],
    evaluate: Callable[[list[tuple[int, ...]]], list[tuple[bool, float]]],
    meets_risk: Callable[[tuple[int, ...]], bool],
    *,
    lower_bound: Callable[[tuple[int, ...]], float] | None = None,
    exact_bound: bool = False,
    monotone_models: bool = False,
    monotone_loss: bool = True,
    batch: int = 1,
) -> Visit:
    """The node of least loss that passes the models and meets the risk target.

    ``evaluate(nodes) → [(passes the models, loss)]`` (one statement for up to ``batch`` nodes);
    ``meets_risk(levels)`` is asked only of nodes that pass the models, in increasing loss (ties:
    :func:`order_key`), until one meets it.

    Why this is the optimum although T̂ is not monotone: nodes leave a priority queue in key
    order (loss, height, levels), and a node's risk is measured only once its exact loss is
    its key; when it leaves, no other node can have a smaller key, so the first that meets
    every target is the least-loss feasible node, whatever T̂ does elsewhere. No other node's
    risk is needed. What keeps every node's key at or below its loss before it is evaluated:

    * ``lower_bound(levels)`` (ARX's bounds, which need no data and are never above the loss):
      every node enters the queue at its bound and is evaluated when the bound comes first
      (``exact_bound``: the bound is the loss, as for the monotonic entropy);
    * else a loss non-decreasing under generalization (``monotone_loss``): the queue starts at
      the bottom and a node's successors enter when it leaves (every node is reached along a
      path where the key strictly increases);
    * else nothing: every node is evaluated, then taken in key order (the same answer, at the
      cost of the whole lattice).

    ``monotone_models`` (ARX's predictive tagging): a node below one that fails the models
    fails, and is not evaluated; a node above one that passes passes, and with ``exact_bound``
    its loss is known, so it is not evaluated either."""
    maxima = tuple(int(m) for m in maxima)
    visit = Visit(None, 0, [])
    failed: list[tuple[int, ...]] = []  # maximal failing nodes seen
    passed: list[tuple[int, ...]] = []  # minimal passing nodes seen
    if monotone_models:
        visit.passing = passed

    def below(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
        return all(x <= y for x, y in zip(a, b))

    def tagged(levels: tuple[int, ...]) -> bool | None:
        """Known to pass (True) or fail (False) from the nodes evaluated, else None."""
        if not monotone_models:
            return None
        if any(below(levels, f) for f in failed):
            return False
        if any(below(p, levels) for p in passed):
            return True
        return None

    def run(nodes: list[tuple[int, ...]]) -> list[tuple[bool, float]]:
        visit.evaluated += len(nodes)
        got = evaluate(nodes) if nodes else []
        if not monotone_models:
            visit.passing.extend(lv for lv, (ok, _) in zip(nodes, got) if ok)
        else:  # (visit.passing is `passed`: the minimal passing nodes)
            for levels, (ok, _) in zip(nodes, got):
                if ok and not any(below(p, levels) for p in passed):
                    passed[:] = [p for p in passed if not below(levels, p)] + [levels]
                elif not ok and not any(below(levels, f) for f in failed):
                    failed[:] = [f for f in failed if not below(f, levels)] + [levels]
        return got

    def measure(levels: tuple[int, ...]) -> bool:
        visit.measured.append(levels)
        if meets_risk(levels):
            visit.chosen = levels
            return True
        return False

    if lower_bound is None and not monotone_loss:
        nodes = list(lattice(maxima))
        got = [r for i in range(0, len(nodes), batch) for r in run(nodes[i : i + batch])]
        ranked = sorted((order_key(loss, lv), lv) for lv, (ok, loss) in zip(nodes, got) if ok)
        for _, levels in ranked:
            if measure(levels):
                break
        return visit
    if lower_bound is not None:
        done: dict[tuple[int, ...], float] = {}  # nodes evaluated and passing: their loss
        # (key, exact?, levels): a node at its bound until evaluated, then at its loss
        queue: list = [(order_key(lower_bound(lv), lv), False, lv) for lv in lattice(maxima)]
        heapq.heapify(queue)
        while queue:
            key, exact, levels = heapq.heappop(queue)
            if exact:
                if measure(levels):
                    return visit
                continue
            state = tagged(levels)
            if state is False:
                continue
            if state and exact_bound:
                heapq.heappush(queue, (key, True, levels))
                continue
            if levels in done:  # probed on a path already: its loss is known
                heapq.heappush(queue, (order_key(done[levels], levels), True, levels))
                continue
            todo = [(key, levels)]
            while queue and len(todo) < batch and not queue[0][1]:  # the next bounds, in one statement
                nxt_key, _, nxt = heapq.heappop(queue)
                nxt_state = tagged(nxt)
                if nxt_state is False:
                    continue
                if nxt in done or (nxt_state and exact_bound):
                    loss = done[nxt] if nxt in done else lower_bound(nxt)
                    heapq.heappush(queue, (order_key(loss, nxt), True, nxt))
                    continue
                todo.append((nxt_key, nxt))
            # with monotone models, each node is learned through the midpoint of an upward path of
            # unresolved nodes (Flash's binary search): failing there resolves the node and
            # everything below the midpoint; passing halves the path. The node itself goes back
            # in the queue at its bound until it is resolved.
            probes = list(
                dict.fromkeys(_midpoint(lv, maxima, tagged, lower_bound) if monotone_models else lv for _, lv in todo)
            )
            for lv, (ok, loss) in zip(probes, run(probes)):
                if ok:
                    done[lv] = loss
            for k, lv in todo:
                if lv in done:
                    heapq.heappush(queue, (order_key(done[lv], lv), True, lv))
                elif lv not in probes:  # not evaluated: taken again (tagged by now, or probed again)
                    heapq.heappush(queue, (k, False, lv))
        return visit
    bottom = tuple(0 for _ in maxima)
    ((ok0, loss0),) = run([bottom])
    heap = [(order_key(loss0, bottom), ok0, bottom)]
    seen = {bottom}
    while heap:
        _, ok, levels = heapq.heappop(heap)
        if ok and measure(levels):
            return visit
        fresh = [n for n in successors(levels, maxima) if n not in seen]
        seen.update(fresh)
        # (the monotone path needs every node's loss: no tagging)
        visit.evaluated += len(fresh)
        for nxt, (nxt_ok, nxt_loss) in zip(fresh, evaluate(fresh) if fresh else []):
            if nxt_ok:
                visit.passing.append(nxt)
            heapq.heappush(heap, (order_key(nxt_loss, nxt), nxt_ok, nxt))
    return visit


def _midpoint(
    levels: tuple[int, ...],
    maxima: tuple[int, ...],
    tagged: Callable[[tuple[int, ...]], bool | None],
    lower_bound: Callable[[tuple[int, ...]], float],
) -> tuple[int, ...]:
    """The node two thirds of the way up an upward path of unresolved nodes from ``levels``, the
    path taking at each step the unresolved successor of the lowest bound (the gentlest ascent).

    Measured on the node results of the benchmark's lattices (every node's models at 20,000,
    100,000 and 1,000,000 rows on the 12,960-node lattice and at 100,000 on the 729-node one,
    the search replayed for optima of several ranks): 15 to 65% fewer evaluations than the middle
    of the steepest path used before (1,000,000 rows, the benchmark's optimum: 1,388 → 1,178).
    A failing probe high on the path tags more nodes below it; the gentle path keeps it among
    the nodes of low loss, those the search must resolve."""
    path = [levels]
    while True:
        nxt = [n for n in successors(path[-1], maxima) if tagged(n) is None]
        if not nxt:
            return path[2 * (len(path) - 1) // 3]
        path.append(min(nxt, key=lower_bound))
