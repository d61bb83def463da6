"""Exact tail pruning: which quasi-identifiers of size p need a GROUP BY for T̂ to be
exact, from the counts of their (p − 1)-column subsets. Pure numpy: no database code.

T̂ reads the θ vector only through its top W values (:func:`qar_sql.stats.evt.tail_width`):
the two order statistics the type-8 quantile u interpolates between and everything above them
(the exceedances θ > u are among those). Below them only the *count* of QIs matters, which is
N_p whatever their values. So a QI whose θ is provably below the W-th largest θ may keep any
value below that and T̂, u, ξ̂, β̂ and the exceedances come out bit for bit the same.

Bounds on H(A) (classes of QI A, θ = H / L) from each (p − 1)-subset B = A \\ {c}, c the column
A adds to B:

* lower: H(A) ≥ H(B): adding a column splits classes, never merges them; so H(A) ≥ max_B H(B).
* upper: a class of B of size s splits into at most min(s, V_c) classes of A, V_c the values of
  column c (NULL one of them). So H(A) ≤ Σ over B's classes min(s, V_c) — the class-size
  histogram of B gives this sum exactly — which is ≤ H(B)·V_c and ≤ L; H(A) ≤ min over B.
* singletons: a record unique on B is unique on A, so S(A) ≥ max_B S(B);
* smallest class: a class of A lies inside a class of B, so min class(A) ≤ min_B min class(B).

θ = H / L is increasing in H (and so is the clip of METHOD §2 and its float rounding), so the
bounds on H are bounds on θ, and comparing QIs by H compares their θ exactly.

The frontier (:class:`Frontier`) groups QIs highest upper bound first, in rounds; after each
round, the W-th largest of (exact H of the grouped QIs, lower bound of the others) is a lower
bound y of the W-th largest H. A QI whose upper bound is below y can never reach the top W, so
it is pruned; it stops when every QI is grouped or pruned. At the end, the W-th largest exact H
is ≥ y > every pruned QI's upper bound (the W largest of the mixed vector are all exact), which
:meth:`Frontier.check` verifies again before the result is used.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from qar_sql.rules import resolve_prune

#: The first round groups at least this many QIs (the rounds double after it): fewer, larger
#: rounds waste less per statement, smaller ones prune more.
FIRST_ROUND = 256


#: The prune mode an audit at size p runs with (the rule lives in :mod:`qar_sql.rules`).
resolve = resolve_prune


def qi_array(n_columns: int, p: int) -> np.ndarray:
    """Every QI as a row of column indices, in ``itertools.combinations`` order (the QI index)."""
    n = math.comb(n_columns, p)
    flat = np.fromiter(itertools.chain.from_iterable(itertools.combinations(range(n_columns), p)), np.int64, n * p)
    return flat.reshape(n, p)


def combination_index(combos: np.ndarray, n_columns: int) -> np.ndarray:
    """The ``itertools.combinations(range(n_columns), k)`` index of each row of ``combos``
    (ascending column indices): C(n, k) − 1 − Σ_i C(n − 1 − c_i, k − i) (lexicographic rank)."""
    combos = np.asarray(combos, dtype=np.int64)
    return Ranker(n_columns, combos.shape[1])(combos)


class Ranker:
    """:func:`combination_index` for many calls with the same n and k (the binomials once)."""

    def __init__(self, n_columns: int, k: int):
        self.n, self.k = n_columns, k
        # binom[m, r] = C(m, r) for m ≤ n, r ≤ k
        self.binom = np.array([[math.comb(m, r) for r in range(k + 1)] for m in range(n_columns + 1)], dtype=np.int64)
        self.top = math.comb(n_columns, k) - 1

    def __call__(self, combos: np.ndarray) -> np.ndarray:
        if self.k == 0:
            return np.zeros(len(combos), dtype=np.int64)
        rank = np.full(len(combos), self.top, dtype=np.int64)
        for i in range(self.k):
            rank -= self.binom[self.n - 1 - combos[:, i], self.k - i]
        return rank


@dataclass(frozen=True)
class Level:
    """What the (p − 1)-level scan says about each of its QIs, by QI index."""

    distinct: np.ndarray  # H(B)
    singletons: np.ndarray  # S(B)
    min_class: np.ndarray  # smallest class of B
    capped: np.ndarray  # capped[b, v] = Σ over B's classes min(size, caps[v])
    caps: np.ndarray  # the distinct V_c, ascending


def level(hist: Mapping[int, Sequence[tuple[int, int]]], n_lower: int, values: Sequence[int]) -> Level:
    """:class:`Level` from the (p − 1)-level histograms {QI index: [(class size, classes)]};
    ``values``: V_c per column (distinct values, NULL counted as one)."""
    caps = np.unique(np.asarray(values, dtype=np.int64))
    qi = np.fromiter((j for j, h in hist.items() for _ in h), np.int64)
    size = np.fromiter((s for h in hist.values() for s, _ in h), np.int64)
    count = np.fromiter((n for h in hist.values() for _, n in h), np.int64)
    distinct = np.bincount(qi, weights=count, minlength=n_lower)
    singletons = np.bincount(qi, weights=np.where(size == 1, count, 0), minlength=n_lower)
    min_class = np.full(n_lower, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(min_class, qi, size)
    capped = np.empty((n_lower, len(caps)), dtype=np.int64)
    for v, cap in enumerate(caps):
        # sums of whole numbers ≤ L < 2**53: exact in float64
        capped[:, v] = np.rint(np.bincount(qi, weights=count * np.minimum(size, cap), minlength=n_lower))
    return Level(np.rint(distinct).astype(np.int64), np.rint(singletons).astype(np.int64), min_class, capped, caps)


def empty_level(rows: int, values: Sequence[int]) -> Level:
    """The level below p = 1: the empty QI, one class of all L rows."""
    caps = np.unique(np.asarray(values, dtype=np.int64))
    return Level(np.array([1]), np.array([int(rows == 1)]), np.array([rows]), np.minimum(caps, rows)[None, :], caps)


@dataclass(frozen=True)
class Bounds:
    """Per QI of size p (by QI index): H low/high, S low, smallest class high (module doc)."""

    distinct_low: np.ndarray
    distinct_high: np.ndarray
    singletons_low: np.ndarray
    min_class_high: np.ndarray


def bounds(below: Level, combos: np.ndarray, n_columns: int, values: Sequence[int]) -> Bounds:
    """The bounds of every QI (rows of ``combos``, size p) from the level below (size p − 1)."""
    n_qi, p = combos.shape
    cap_of = np.searchsorted(below.caps, np.asarray(values, dtype=np.int64))  # column -> caps index
    big = np.iinfo(np.int64).max
    low = np.zeros(n_qi, dtype=np.int64)
    high = np.full(n_qi, big, dtype=np.int64)
    s_low = np.zeros(n_qi, dtype=np.int64)
    mc_high = np.full(n_qi, big, dtype=np.int64)
    for k in range(p):
        rest = np.delete(combos, k, axis=1)  # B = A without its k-th column
        b = combination_index(rest, n_columns)
        added = combos[:, k]
        np.maximum(low, below.distinct[b], out=low)
        np.minimum(high, below.capped[b, cap_of[added]], out=high)
        np.maximum(s_low, below.singletons[b], out=s_low)
        np.minimum(mc_high, below.min_class[b], out=mc_high)
    return Bounds(low, high, s_low, mc_high)


class Frontier:
    """Which QIs to group next; the QIs not grouped when :attr:`done` are pruned (module doc).

    ``width``: W, how many of the largest θ the estimator reads (evt.tail_width)."""

    def __init__(self, low: np.ndarray, high: np.ndarray, width: int, first_round: int | None = None):
        first_round = FIRST_ROUND if first_round is None else first_round
        self.low, self.high, self.width = low, high, int(width)
        self.n = len(low)
        self.exact = np.full(self.n, -1, dtype=np.int64)  # H once grouped, else -1
        self.grouped = np.zeros(self.n, dtype=bool)
        self.rounds = 0
        self.round_size = max(first_round, self.width)
        # highest upper bound first (then the highest lower bound, then QI order)
        self.order = np.lexsort((np.arange(self.n), -low, -high))
        self.floor = self._floor()

    def _floor(self) -> int:
        """y: the W-th largest of (exact H where grouped, lower bound elsewhere), a lower bound
        of the W-th largest H."""
        if self.width >= self.n:
            return -1  # every QI is read: prune nothing
        mixed = np.where(self.grouped, self.exact, self.low)
        return int(np.partition(mixed, self.n - self.width)[self.n - self.width])

    def candidates(self) -> np.ndarray:
        """QIs not yet grouped that may still reach the top W (upper bound ≥ y), in order."""
        o = self.order
        return o[~self.grouped[o] & (self.high[o] >= self.floor)]

    @property
    def done(self) -> bool:
        return len(self.candidates()) == 0

    def next_round(self) -> list[int]:
        """The QI indices to group next (ascending): the candidates with the highest upper
        bounds, the round twice the last one."""
        chosen = self.candidates()[: self.round_size]
        self.round_size *= 2
        self.rounds += 1
        return sorted(int(j) for j in chosen)

    def record(self, distinct: Mapping[int, int]) -> None:
        """Exact H of newly grouped QIs; raises ValueError when one is outside its bounds
        (the table changed between the statements)."""
        for j, h in distinct.items():
            if not self.low[j] <= h <= self.high[j]:
                raise ValueError(f"QI {j}: {h} classes outside its bounds [{self.low[j]}, {self.high[j]}]")
            self.exact[j], self.grouped[j] = h, True
        self.floor = self._floor()

    @property
    def pruned(self) -> np.ndarray:
        return ~self.grouped

    def check(self) -> None:
        """Check what pruning rests on, again: at least W grouped QIs, and every pruned QI's
        upper bound strictly below the W-th largest exact H; ValueError if not."""
        if not self.pruned.any():
            return
        exact = self.exact[self.grouped]
        if len(exact) < self.width:
            raise ValueError("fewer QIs were grouped than the tail reads")
        wth = np.partition(exact, len(exact) - self.width)[len(exact) - self.width]
        if not self.high[self.pruned].max() < wth:
            raise ValueError("a pruned QI's upper bound reaches the tail")


#: A residual (below) is made for a (p − 1)-subset when the rows it spares the GROUP BYs of its
#: QIs add up to at least this many times the table: making it costs about 1.5 passes over the
#: table (a GROUP BY of the subset and a join back; measured at 1,000,000 rows × 50 columns).
RESIDUAL_MIN_SAVED = 2.0


def residual_plan(
    chosen: Sequence[int], combos: np.ndarray, below: Level, n_columns: int, rows: int, min_saved: float | None = None
) -> dict[int, tuple[tuple[int, ...], int]]:
    """Which of the ``chosen`` QIs to count from a residual, and which: {QI index: (the columns
    of its (p − 1)-subset B, S(B))}.

    A record unique on B is unique on every QI A ⊃ B (adding a column never merges classes), so
    A's class sizes are S(B) singletons plus the class sizes of A over the *residual* of B, the
    records in B's classes of two or more: exact, from fewer rows. One residual serves every
    chosen QI that contains B; the subsets are taken greedily, the one that spares the most rows
    first (S(B) times the QIs it serves), while that is at least ``min_saved`` × L rows."""
    min_saved = RESIDUAL_MIN_SAVED if min_saved is None else min_saved
    qis = np.asarray(sorted(chosen), dtype=np.int64)
    p = combos.shape[1]
    if p < 2 or len(qis) == 0:
        return {}
    a = combos[qis]
    ranker = Ranker(n_columns, p - 1)
    subsets = np.stack([ranker(np.delete(a, k, axis=1)) for k in range(p)], axis=1)  # (QIs, p)
    spared = below.singletons[subsets].astype(np.float64)
    owner = np.full(len(qis), -1, dtype=np.int64)
    while True:
        open_ = owner < 0
        keys, inverse = np.unique(subsets[open_], return_inverse=True)
        if len(keys) == 0:
            break
        total = np.bincount(inverse.ravel(), weights=spared[open_].ravel())
        best = int(total.argmax())
        if total[best] <= 0 or total[best] < min_saved * rows:
            break
        owner[open_ & (subsets == keys[best]).any(axis=1)] = keys[best]
    plan: dict[int, tuple[tuple[int, ...], int]] = {}
    for k in range(p):  # B = A without its k-th column, where that B was taken
        hit = (owner >= 0) & (subsets[:, k] == owner)
        for j, row, b in zip(qis[hit].tolist(), np.delete(a[hit], k, axis=1).tolist(), owner[hit].tolist()):
            plan.setdefault(j, (tuple(row), int(below.singletons[b])))
    return plan
