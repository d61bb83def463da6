"""The privacy metrics of a release against its source, on records already placed in a common
space (rows × components coordinates): pure numpy/scipy, no database.

Distances are Euclidean. Nearest neighbours come from scipy's ``cKDTree`` (exact search;
``workers=-1`` uses every core).

**Ties.** Two distances count as equal when they differ by at most
``TIE_TOLERANCE · (1 + d)`` — floating-point rounding, not a difference between records (the
space is standardised: a numeric column has unit variance). Identical records have bitwise
identical coordinates (see :mod:`qar_sql.comparison.projection`), so duplicates are exact ties.

Definitions, for original records o_i and treated records t_j:

* ``dcr`` (per treated record) d1(j) = min_i ‖t_j − o_i‖; **DTC** = median_j d1(j).
* ``nndr`` (per treated record) d1(j)/d2(j), the closest over the second closest original
  distance, 1 when d2(j) = 0 (two originals on the record); **CDR** = its median.
* With a link, t_{σ(i)} made from o_i:

  - the attacker links o_i to its nearest treated record. With m treated records at the
    minimum distance and t_{σ(i)} among them, the attacker is right with probability 1/m (fair
    tie rule), else 0. **Hidden rate** = 1 − mean_i P(right). The **correlation protection
    rate** is the same figure in the space of the attacker's columns.
  - **local cloaking** of o_i = #{j : ‖t_j − o_i‖ < ‖t_{σ(i)} − o_i‖}, strictly closer
    (ties with the own record do not count); the median is reported.
  - **local cloaking with ties** of o_i = #{j ≠ σ(i) : ‖t_j − o_i‖ ≤ ‖t_{σ(i)} − o_i‖}: the
    Avatar paper's count (octopize/avatar-paper, ``metrics/privacy_metrics/local_cloaking.py``:
    the other avatars up to and at the own avatar's distance, the own avatar left out). Where
    records repeat, many avatars sit exactly at the own avatar's distance, so the two differ
    (Wisconsin breast cancer at 2 components: medians 11 and 24).

* Inference: the attacker takes o_i's nearest treated records (in the space of the other
  columns) and reads their target. Categorical target: the share of those tied records whose
  target equals o_i's (averaged over i: the **accuracy**). Numeric target: the mean of the tied
  records' targets predicts o_i's (the **mean absolute error** over i).

Limiting cases (tested): identical tables of distinct records give DTC 0, hidden rate 0, local
cloaking 0; independently shuffled columns give a hidden rate near 1 − 1/n.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # scipy.spatial is imported where a tree is built: it costs more than the rest
    from scipy.spatial import cKDTree

#: Relative tolerance under which two distances are taken as equal (see the module docstring).
TIE_TOLERANCE = 1e-9

_WORKERS = -1

#: Neighbours first asked per record when counting local cloaking; multiplied by 4 for the
#: records that have more, until the share of counts asked for is exact.
CLOAKING_FIRST_K = 64

#: Neighbour distances held at once while counting (rows × k floats per chunk: 32 MB).
_CHUNK_VALUES = 1 << 22

#: Local cloaking asks the points, sorted by radius, in about this many chunks (each with its
#: own distance bound), of at least ``_BOUND_ROWS`` points (a query's thread start-up).
_BOUND_CHUNKS = 64
_BOUND_ROWS = 1024

#: Undecided points whose exact counts choose the next round's k (see ``_next_k``).
_SAMPLE_POINTS = 512


def tie_radius(d: np.ndarray) -> np.ndarray:
    """The largest distance still tied with d."""
    return d + TIE_TOLERANCE * (1.0 + d)


def below_radius(d: np.ndarray) -> np.ndarray:
    """The largest distance strictly (beyond rounding) below d; negative when nothing is."""
    return d - TIE_TOLERANCE * (1.0 + d)


def distances_to_own(original: np.ndarray, treated: np.ndarray, own: np.ndarray) -> np.ndarray:
    """‖o_i − t_{own[i]}‖ per original record."""
    diff = original - treated[own]
    return np.sqrt(np.einsum("ij,ij->i", diff, diff))


@dataclass(frozen=True, eq=False)
class Closest:
    """Per treated record: the distances to its closest and second closest original."""

    d1: np.ndarray
    d2: np.ndarray

    @property
    def dcr(self) -> np.ndarray:
        """Distance to the closest original record, per treated record."""
        return self.d1

    @property
    def nndr(self) -> np.ndarray:
        """d1/d2 per treated record (1 where d2 is 0: two originals coincide with it)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.d2 > 0, self.d1 / np.where(self.d2 > 0, self.d2, 1.0), 1.0)

    @property
    def dtc(self) -> float:
        return float(np.median(self.d1))

    @property
    def cdr(self) -> float:
        return float(np.median(self.nndr))


def closest_originals(original: np.ndarray, treated: np.ndarray, tree: cKDTree | None = None) -> Closest:
    """d1, d2 for every treated record (needs at least 2 original records)."""
    if len(original) < 2:
        raise ValueError("the closest distances ratio needs at least 2 original records")
    from scipy.spatial import cKDTree

    tree = tree if tree is not None else cKDTree(original)
    d, _ = tree.query(treated, k=2, workers=_WORKERS)
    return Closest(np.ascontiguousarray(d[:, 0]), np.ascontiguousarray(d[:, 1]))


@dataclass(frozen=True, eq=False)
class Linkage:
    """Per original record: the probability that the distance attacker is right, the number
    of treated records tied at the minimum distance, and the local cloaking (strictly closer
    treated records; with ties: as close or closer, the own one left out)."""

    right: np.ndarray
    tied: np.ndarray
    local_cloaking: np.ndarray | None
    local_cloaking_ties: np.ndarray | None = None

    @property
    def hidden_rate(self) -> float:
        """1 − mean P(right): the share of originals the attacker links wrongly."""
        return float(1.0 - self.right.mean())

    @property
    def median_local_cloaking(self) -> float | None:
        return None if self.local_cloaking is None else float(np.median(self.local_cloaking))

    @property
    def median_local_cloaking_ties(self) -> float | None:
        return None if self.local_cloaking_ties is None else float(np.median(self.local_cloaking_ties))


def link(
    original: np.ndarray,
    treated: np.ndarray,
    own: np.ndarray,
    *,
    cloaking: bool = True,
    exact_share: float = 0.5,
    tree: cKDTree | None = None,
) -> Linkage:
    """The distance attack: each original o_i against every treated record; ``own[i]`` is the
    row of the treated record made from o_i.

    Local cloaking is exact for at least the lowest ``exact_share`` of the records (0.5: the
    median; 1: every record), see :func:`cloaking_counts`; ``cloaking=False`` skips it.
    """
    from scipy.spatial import cKDTree

    tree = tree if tree is not None else cKDTree(treated)
    dmin, _, tied = nearest_and_tied(tree, original)
    d_own = distances_to_own(original, treated, own)
    right = np.where(d_own <= tie_radius(dmin), 1.0 / np.maximum(tied, 1), 0.0)
    counts = ties = None
    if cloaking:
        # Both counts from the same neighbour distances (one search): strictly closer, and up to
        # the own distance with ties; every own record lies within its own tie radius, so one
        # less is the others' count.
        both = cloaking_counts(tree, original, np.column_stack([below_radius(d_own), tie_radius(d_own)]), exact_share)
        counts, ties = both[:, 0], both[:, 1] - 1
    return Linkage(right=right, tied=tied.astype(np.int64), local_cloaking=counts, local_cloaking_ties=ties)


def nearest_and_tied(tree: cKDTree, points: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(dmin, nearest, tied) per point: the distance to its nearest tree point, that point's
    row, and how many tree points are tied at it (at most ``tie_radius(dmin)`` away).

    One k = 2 query serves most points: when the second nearest is clearly beyond the tie
    radius, exactly one point is tied. The ball count, whose cost grows with the count, runs
    only on the others (a margin of a further tolerance keeps the tree's rounding on the side
    of asking), so the counts are those of a ball count for every point.
    """
    if int(tree.n) < 2:
        d, i = tree.query(points, k=1, workers=_WORKERS)
        return d, i, np.ones(len(points), dtype=np.int64)
    d, i = tree.query(points, k=2, workers=_WORKERS)
    dmin, nearest = np.ascontiguousarray(d[:, 0]), np.ascontiguousarray(i[:, 0])
    tied = np.ones(len(points), dtype=np.int64)
    ask = np.flatnonzero(d[:, 1] <= tie_radius(tie_radius(dmin)))
    if len(ask):
        tied[ask] = tree.query_ball_point(points[ask], tie_radius(dmin[ask]), return_length=True, workers=_WORKERS)
    return dmin, nearest, tied


def cloaking_counts(tree: cKDTree, points: np.ndarray, radius: np.ndarray, exact_share: float = 0.5) -> np.ndarray:
    """#{j : ‖t_j − p_i‖ ≤ radius_i} per point (0 where radius_i < 0), with t the tree's points.
    ``radius`` may be a matrix (points × r, each row ascending): then the r counts of each point
    come from the same neighbour distances (points × r counts), a point being decided when its
    largest radius is; the counts of every column are exact up to the ``exact_share`` quantile.

    Why not a ball count per point: its cost grows with the count, and a release that moves a
    few records far from their originals puts tens of thousands of records in their balls
    (the benchmark's 100,000 perturbed records: mean count 2,570, median 19 — 30 CPU seconds,
    and a hundred times more at a million rows). Instead the k nearest distances are read (k = 64 first): a
    count below k is exact; a point with k or more is asked again with a larger k (chosen by
    ``_next_k``), and so on, until at most a share 1 − ``exact_share`` of the points is left
    undecided. Those keep the lower bound k as their count: more than every exact count, so the
    sorted counts are exact up to the ``exact_share`` quantile (the median for 0.5; every count
    for 1). Memory stays at
    ``_CHUNK_VALUES`` distances per chunk.

    The points are asked in chunks of similar radius, each with its largest radius (plus a
    tolerance) as the tree's ``distance_upper_bound``: the search then stops at the ball
    instead of finding k neighbours a point with a small ball does not need (half the work on
    the benchmark). Every distance up to the radius is still returned, so the counts are the
    same as without the bound.
    """
    radius = np.asarray(radius, dtype=np.float64)
    if radius.ndim == 2:
        return _cloaking_counts(tree, points, radius, exact_share)
    return _cloaking_counts(tree, points, radius[:, None], exact_share)[:, 0]


def _cloaking_counts(tree: cKDTree, points: np.ndarray, radii: np.ndarray, exact_share: float) -> np.ndarray:
    """:func:`cloaking_counts` for a matrix of radii (points × r, rows ascending)."""
    n, n_tree = len(points), int(tree.n)
    counts = np.zeros(radii.shape, dtype=np.int64)
    radius = radii[:, -1]  # the largest: it decides a point and bounds the search
    todo = np.flatnonzero(radius >= 0)
    todo = todo[np.argsort(radius[todo], kind="stable")]
    # Sorted positions 0..keep-1 must be exact: at most n - keep points may stay undecided.
    keep = min(n, int(np.ceil(exact_share * n)) + 1)
    k = CLOAKING_FIRST_K
    while len(todo):
        k_eff = min(k, n_tree)
        rows = max(1, min(_CHUNK_VALUES // k_eff, max(_BOUND_ROWS, -(-len(todo) // _BOUND_CHUNKS))))
        undecided = []
        for start in range(0, len(todo), rows):
            idx = todo[start : start + rows]
            bound = tie_radius(tie_radius(radius[idx].max()))
            d, _ = tree.query(points[idx], k=k_eff, distance_upper_bound=bound, workers=_WORKERS)
            d = d.reshape(len(idx), k_eff)
            for j in range(radii.shape[1]):
                counts[idx, j] = (d <= radii[idx, j, None]).sum(axis=1)
            if k_eff < n_tree:
                undecided.append(idx[counts[idx, -1] == k_eff])
        todo = np.concatenate(undecided) if undecided else todo[:0]
        if len(todo) <= n - keep:
            break
        k = _next_k(tree, points, radius, todo, len(todo) - (n - keep), k)
    return counts


def _next_k(tree: cKDTree, points: np.ndarray, radius: np.ndarray, todo: np.ndarray, wanted: int, k: int) -> int:
    """The k of the next round: a little above the count of the ``wanted``-th smallest
    undecided point, as estimated from the exact ball counts of a seeded sample of them (at
    least twice the last k). Why: growing k by a fixed factor overshoots — on 1,000,000
    benchmark records, whose median count is a few hundred, k went 64, 256, 1024, and a round's
    cost grows with k. A low estimate costs one more round; the counts are exact either way."""
    sample = todo
    if len(todo) > _SAMPLE_POINTS:
        sample = np.sort(np.random.default_rng(0).choice(todo, _SAMPLE_POINTS, replace=False))
    exact = np.asarray(tree.query_ball_point(points[sample], radius[sample], return_length=True, workers=_WORKERS))
    share = min(1.0, wanted / len(todo) + 0.05 + 2.0 / np.sqrt(len(sample)))
    return max(2 * k, int(np.quantile(exact, share, method="higher")) + 1)


def _tied_groups(query: np.ndarray, points: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each query row, the points at the minimum distance (ties included), as flat arrays
    (query row, point row) sorted by query row; plus each point's group of identical points.

    Returns (query_rows, groups, group_of_point): identical points form one group, so a
    thousand duplicates cost one tree entry, and a query's tied set is a few groups.
    """
    from scipy.spatial import cKDTree

    groups, group_of_point = np.unique(points, axis=0, return_inverse=True)
    group_of_point = group_of_point.reshape(-1)
    tree = cKDTree(groups)
    dmin, nearest, n_tied = nearest_and_tied(tree, query)
    radius = tie_radius(dmin)
    rows = [np.flatnonzero(n_tied <= 1)]
    found = [nearest[rows[0]]]
    several = np.flatnonzero(n_tied > 1)
    if len(several):
        lists = tree.query_ball_point(query[several], radius[several], workers=_WORKERS)
        lengths = np.array([len(x) for x in lists])
        rows.append(np.repeat(several, lengths))
        found.append(np.concatenate([np.asarray(x, dtype=np.int64) for x in lists]))
    q = np.concatenate(rows)
    g = np.concatenate(found).astype(np.int64)
    order = np.argsort(q, kind="stable")
    return q[order], g[order], group_of_point


def infer_categorical(
    original: np.ndarray, treated: np.ndarray, original_target: np.ndarray, treated_target: np.ndarray
) -> np.ndarray:
    """Per original record: the share of its nearest treated records (ties averaged) whose
    target code equals its own. Targets are integer codes shared by both tables."""
    q, g, group_of = _tied_groups(original, treated)
    n_groups = int(group_of.max()) + 1 if len(group_of) else 0
    levels = int(max(original_target.max(initial=0), treated_target.max(initial=0))) + 1
    size = np.bincount(group_of, minlength=n_groups)
    # Treated records per (group, target) pair, looked up through a sorted key.
    keys, key_counts = np.unique(group_of.astype(np.int64) * levels + treated_target, return_counts=True)
    wanted = g * levels + original_target[q]
    pos = np.clip(np.searchsorted(keys, wanted), 0, max(len(keys) - 1, 0))
    match = np.where(keys[pos] == wanted, key_counts[pos], 0) if len(keys) else np.zeros(len(wanted))
    n = len(original)
    hits = np.bincount(q, weights=match, minlength=n)
    total = np.bincount(q, weights=size[g], minlength=n)
    return hits / total


def infer_numeric(
    original: np.ndarray, treated: np.ndarray, original_target: np.ndarray, treated_target: np.ndarray
) -> np.ndarray:
    """Per original record: |mean target of its nearest treated records (ties averaged) − its
    own target|; NaN where either is NULL (NaN)."""
    q, g, group_of = _tied_groups(original, treated)
    n_groups = int(group_of.max()) + 1 if len(group_of) else 0
    present = ~np.isnan(treated_target)
    sums = np.bincount(group_of, weights=np.where(present, treated_target, 0.0), minlength=n_groups)
    counts = np.bincount(group_of, weights=present.astype(float), minlength=n_groups)
    n = len(original)
    s = np.bincount(q, weights=sums[g], minlength=n)
    c = np.bincount(q, weights=counts[g], minlength=n)
    with np.errstate(invalid="ignore", divide="ignore"):
        prediction = np.where(c > 0, s / np.where(c > 0, c, 1.0), np.nan)
    return np.abs(prediction - original_target)
