"""ARX's loss metrics, node for node (pure numpy, no database).

A node is a level vector (one hierarchy level per quasi-identifier). What a metric reads of it:

* :class:`Domain` — computed once per search: the number of rows ``N`` and, per column, the
  count of each original value (``a``), where each value goes at each level, the count of each
  generalized value (``b``) and its domain share (hierarchy rows under it / hierarchy rows);
* :class:`Classes` — per node, from the database: the equivalence classes as a histogram of
  (size, suppressed) → number of classes, and, for the metrics that need them (loss and the
  non-monotonic entropy), per column the records suppressed for each generalized value.

Suppressed classes are those violating the privacy models when the node is anonymous (ARX's
outliers). ARX's generalization/suppression factor ``gs`` (0.5 by default: both weigh the same)
gives ``gFactor = 1 if gs <= 0.5 else 1 - 2 (gs - 0.5)`` and ``sFactor = 2 gs if gs < 0.5 else 1``.

The metrics (ARX's class, its default aggregate over columns, its definition):

* ``entropy`` (``MetricMDNUEntropyPrecomputed``, monotonic, SUM) — per column
  ``gFactor · Σ_v a_v log2(b_{g(v)} / a_v)``; suppression ignored, so it depends on the levels only;
* ``entropy_nm`` (``MetricMDNUNMEntropyPrecomputed``, SUM) — the same plus, per column,
  ``sFactor · Σ_w s_w log2(S / s_w)`` over the generalized values ``w`` of the ``S`` suppressed
  records (``s_w`` of them with ``w``);
* ``loss`` (``MetricMDNMLoss``, GEOMETRIC_MEAN) — per column ``gFactor Σ n·share(w)`` over kept
  classes plus ``Σ n·share + sFactor·n·(1 − share)`` over suppressed ones (``n`` when sFactor = 1),
  normalised to ``(x − gFactor N / |domain|) / (N − gFactor N / |domain|)`` (at least 0);
* ``precision`` (``MetricMDNMPrecision``, ARITHMETIC_MEAN) — per column
  ``(kept · level / height · gFactor + suppressed · sFactor) / N``;
* ``discernibility`` (``MetricSDNMDiscernability``) — ``Σ n²`` over kept classes plus ``N · n`` over
  suppressed ones;
* ``aecs`` (``MetricSDAECS``) — ``N / (kept classes · sFactor + gFactor if any record suppressed)``
  (ARX swaps the two factors there on purpose).

Multi-column values are rounded down to 10 decimals per column as ARX does (``Metric.round``) and
aggregated with the metric's function. Each metric also has a lower bound that needs no data
(:func:`lower_bound`): exact for ``entropy``, and never above the score for the others.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

#: The metrics, in the order reported; the first is the default to minimise.
METRICS = ("entropy", "entropy_nm", "loss", "precision", "discernibility", "aecs")
#: Metrics that need the per-column counts of suppressed values (:attr:`Classes.suppressed_values`).
NEEDS_SUPPRESSED_VALUES = frozenset({"entropy_nm", "loss"})
#: Metrics ARX declares monotonic (a generalization never has a lower score).
MONOTONIC = frozenset({"entropy"})

_FACTOR = 10.0**10


def arx_round(x: float) -> float:
    """ARX's ``Metric.round``: down to 10 decimals."""
    return math.floor(x * _FACTOR) / _FACTOR


def factors(gs_factor: float) -> tuple[float, float]:
    """(gFactor, sFactor) of ARX's generalization/suppression factor."""
    if not 0.0 <= gs_factor <= 1.0:
        raise ValueError(f"gs_factor = {gs_factor!r} must be in [0, 1]")
    s = 2.0 * gs_factor if gs_factor < 0.5 else 1.0
    g = 1.0 if gs_factor <= 0.5 else 1.0 - 2.0 * (gs_factor - 0.5)
    return g, s


@dataclass(frozen=True)
class ColumnDomain:
    """One quasi-identifier's values and how they generalize.

    ``counts[i]`` records hold original value ``i``; ``up[level][i]`` is the index of the value
    ``i`` becomes at ``level`` (``up[0]`` the identity); ``shares[level][j]`` is the domain share of
    generalized value ``j`` at that level (hierarchy rows under it / all hierarchy rows)."""

    column: str
    counts: np.ndarray
    up: tuple[np.ndarray, ...]
    shares: tuple[np.ndarray, ...]
    #: Rows of the hierarchy (ARX's domain size for the loss metric).
    domain_size: int
    #: Count of each generalized value at each level (bincount of ``counts`` through ``up``).
    level_counts: tuple[np.ndarray, ...] = field(init=False)

    def __post_init__(self) -> None:
        lc = tuple(
            np.bincount(u, weights=self.counts, minlength=len(s)).astype(np.int64) for u, s in zip(self.up, self.shares)
        )
        object.__setattr__(self, "level_counts", lc)

    @property
    def height(self) -> int:
        """The highest level (ARX's ``height``: number of levels − 1)."""
        return len(self.up) - 1


@dataclass(frozen=True)
class Domain:
    """What every node's metrics share: rows and per-column domains, and the gs-factor."""

    rows: int
    columns: tuple[ColumnDomain, ...]
    gs_factor: float = 0.5

    @property
    def heights(self) -> tuple[int, ...]:
        return tuple(c.height for c in self.columns)


@dataclass(frozen=True)
class Classes:
    """One node's equivalence classes: ``classes[i]`` classes of ``sizes[i]`` records each, all
    suppressed or all kept (``suppressed[i]``). ``suppressed_values[c]`` maps a generalized value
    index of column ``c`` (at the node's level) to its suppressed records (None: not fetched)."""

    sizes: np.ndarray
    classes: np.ndarray
    suppressed: np.ndarray
    suppressed_values: tuple[Mapping[int, int], ...] | None = None

    @property
    def suppressed_records(self) -> int:
        return int((self.sizes * self.classes)[self.suppressed].sum())

    @property
    def kept_records(self) -> int:
        return int((self.sizes * self.classes)[~self.suppressed].sum())


def _aggregate(values: Sequence[float], how: str) -> float:
    v = np.asarray(values, dtype=float)
    if how == "sum":
        out = float(sum(float(x) for x in v))
    elif how == "mean":
        out = float(sum(float(x) / len(v) for x in v))
    else:  # geometric mean of (x + 1), minus 1 (ILMultiDimensionalGeometricMean)
        r = 1.0
        for x in v:
            r *= (float(x) + 1.0) ** (1.0 / len(v))
        out = r - 1.0
    return out if math.isfinite(out) else float(np.finfo(float).max)


def _entropy_columns(domain: Domain, levels: Sequence[int]) -> list[float]:
    """Per column ``gFactor Σ_v a_v log2(a_v / b)``, ≤ 0 (ARX's raw, before its sign flip)."""
    g, _ = factors(domain.gs_factor)
    out = []
    for col, level in zip(domain.columns, levels):
        a = col.counts.astype(float)
        b = col.level_counts[level][col.up[level]].astype(float)
        keep = a > 0
        out.append(float(np.sum(a[keep] * np.log2(a[keep] / b[keep]))) * g)
    return out


def _flip(raw: Sequence[float]) -> list[float]:
    return [arx_round(-x if x != 0.0 else x) for x in raw]


def entropy(domain: Domain, levels: Sequence[int]) -> float:
    """Monotonic precomputed non-uniform entropy (suppression ignored; levels only)."""
    return _aggregate(_flip(_entropy_columns(domain, levels)), "sum")


def entropy_nm(domain: Domain, levels: Sequence[int], classes: Classes) -> float:
    """Non-monotonic precomputed non-uniform entropy: :func:`entropy` plus the suppressed values'."""
    _, s = factors(domain.gs_factor)
    raw = _entropy_columns(domain, levels)
    total = classes.suppressed_records
    if total:
        values = _need_values(classes)
        for c, counts in enumerate(values):
            for n in counts.values():
                if n:
                    raw[c] += n * math.log2(n / total) * s
    return _aggregate(_flip(raw), "sum")


def _need_values(classes: Classes) -> tuple[Mapping[int, int], ...]:
    if classes.suppressed_values is None:
        raise ValueError("this metric needs the suppressed records' values per column (suppressed_values)")
    return classes.suppressed_values


def _loss_columns(domain: Domain, levels: Sequence[int], classes: Classes | None) -> list[float]:
    g, s = factors(domain.gs_factor)
    n_rows = float(domain.rows)
    out = []
    for c, (col, level) in enumerate(zip(domain.columns, levels)):
        shares = col.shares[level]
        counts = col.level_counts[level].astype(float)
        if classes is None:  # the bound: every record kept
            x = g * float(np.dot(counts, shares))
        else:
            supp = np.zeros(len(shares))
            for j, n in _need_values(classes)[c].items():
                supp[j] += n
            kept = counts - supp
            x = g * float(np.dot(kept, shares))
            x += float(supp.sum()) if s == 1.0 else float(np.dot(supp, shares) + s * np.dot(supp, 1.0 - shares))
        lo = g * n_rows / col.domain_size
        out.append(arx_round(max((x - lo) / (n_rows - lo), 0.0)) if n_rows != lo else 0.0)
    return out


def loss(domain: Domain, levels: Sequence[int], classes: Classes) -> float:
    """ARX's Loss (non-monotonic), geometric mean over columns."""
    return _aggregate(_loss_columns(domain, levels, classes), "geometric")


def _precision_columns(domain: Domain, levels: Sequence[int], classes: Classes | None) -> list[float]:
    g, s = factors(domain.gs_factor)
    kept = float(domain.rows if classes is None else classes.kept_records)
    supp = 0.0 if classes is None else float(classes.suppressed_records)
    out = []
    for col, level in zip(domain.columns, levels):
        share = 0.0 if col.height == 0 else level / col.height
        if classes is None:  # the bound: each record at its cheaper of kept and suppressed
            out.append(min(share * g, s))
        else:
            out.append((kept * share * g + supp * s) / domain.rows)
    return out


def precision(domain: Domain, levels: Sequence[int], classes: Classes) -> float:
    """ARX's non-monotonic Precision, arithmetic mean over columns."""
    return _aggregate(_precision_columns(domain, levels, classes), "mean")


def discernibility(domain: Domain, levels: Sequence[int], classes: Classes) -> float:
    """ARX's non-monotonic Discernibility: Σ n² over kept classes + N·n over suppressed ones."""
    sz = classes.sizes.astype(float)
    cl = classes.classes.astype(float)
    kept = float(np.sum((sz * sz * cl)[~classes.suppressed]))
    return kept + float(domain.rows) * float(np.sum((sz * cl)[classes.suppressed]))


def aecs(domain: Domain, levels: Sequence[int], classes: Classes) -> float:
    """ARX's AECS: rows over the classes of the release (the suppressed records one class)."""
    g, s = factors(domain.gs_factor)
    kept = float(np.sum(classes.classes[~classes.suppressed]))
    any_suppressed = bool(np.any(classes.classes[classes.suppressed] > 0))
    groups = kept * s + (g if any_suppressed else 0.0)  # ARX swaps the factors here
    return float(domain.rows) / groups if groups else float("inf")


def score(metric: str, domain: Domain, levels: Sequence[int], classes: Classes | None) -> float:
    """``metric`` of a node (``classes`` may be None for ``entropy``, which reads no data)."""
    if metric == "entropy":
        return entropy(domain, levels)
    if classes is None:
        raise ValueError(f"metric {metric!r} needs the node's classes")
    fn = {
        "entropy_nm": entropy_nm,
        "loss": loss,
        "precision": precision,
        "discernibility": discernibility,
        "aecs": aecs,
    }.get(metric)
    if fn is None:
        raise ValueError(f"unknown metric {metric!r}; use one of {', '.join(METRICS)}")
    return fn(domain, levels, classes)


def lower_bound(metric: str, domain: Domain, levels: Sequence[int]) -> float:
    """A score no release of this node goes below, from the levels alone (no data): exact for
    ``entropy``; for the others the score with every record kept in classes as fine as the
    columns allow (loss and precision: no suppression; discernibility: N; aecs: N over the
    most classes the levels can make)."""
    if metric in ("entropy", "entropy_nm"):
        return entropy(domain, levels)
    if metric == "loss":
        return _aggregate(_loss_columns(domain, levels, None), "geometric")
    if metric == "precision":
        return _aggregate(_precision_columns(domain, levels, None), "mean")
    if metric == "discernibility":
        return float(domain.rows)
    if metric == "aecs":
        g, s = factors(domain.gs_factor)
        most = 1.0
        for col, level in zip(domain.columns, levels):
            most *= float(np.count_nonzero(col.level_counts[level]))
        most = min(most, float(domain.rows))
        # with suppression the groups are at most (most - 1) kept + 1 suppressed
        return float(domain.rows) / max(most * s, (most - 1) * s + g)
    raise ValueError(f"unknown metric {metric!r}; use one of {', '.join(METRICS)}")


def lower_bounds(metric: str, domain: Domain, nodes: np.ndarray) -> np.ndarray:
    """:func:`lower_bound` of every row of ``nodes`` (an array of level vectors), vectorised
    over the lattice: each column's value at each level is computed once."""
    nodes = np.asarray(nodes, dtype=np.int64)
    n_nodes = nodes.shape[0]
    if metric == "discernibility":
        return np.full(n_nodes, float(domain.rows))
    if metric == "aecs":
        distinct = [np.array([np.count_nonzero(lc) for lc in c.level_counts], dtype=float) for c in domain.columns]
        most = np.ones(n_nodes)
        for j, d in enumerate(distinct):
            most *= d[nodes[:, j]]
        most = np.minimum(most, float(domain.rows))
        g, s = factors(domain.gs_factor)
        return float(domain.rows) / np.maximum(most * s, (most - 1) * s + g)
    if metric not in ("entropy", "entropy_nm", "loss", "precision"):
        raise ValueError(f"unknown metric {metric!r}; use one of {', '.join(METRICS)}")
    table = []
    for j, col in enumerate(domain.columns):
        per_level = []
        for level in range(col.height + 1):
            lv = [0] * len(domain.columns)
            lv[j] = level
            if metric in ("entropy", "entropy_nm"):
                per_level.append(_flip(_entropy_columns(domain, lv))[j])
            elif metric == "loss":
                per_level.append(_loss_columns(domain, lv, None)[j])
            else:
                per_level.append(_precision_columns(domain, lv, None)[j])
        table.append(np.array(per_level))
    values = [t[nodes[:, j]] for j, t in enumerate(table)]
    if metric in ("entropy", "entropy_nm"):
        out = np.zeros(n_nodes)
        for v in values:  # column order, as ARX sums
            out = out + v
        return out
    if metric == "precision":
        out = np.zeros(n_nodes)
        for v in values:
            out = out + v / len(values)
        return out
    out = np.ones(n_nodes)
    for v in values:
        out = out * (v + 1.0) ** (1.0 / len(values))
    return out - 1.0
