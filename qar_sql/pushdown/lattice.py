"""Which quasi-identifiers to count from a pre-aggregated superset of their columns (a cube).

A QI's class sizes can be counted from any GROUP BY over a superset S of its columns: group S's
cells (each with its record count n) by the QI's columns and add up n. When S has far fewer
cells than the table has rows, one pass over the table for S plus one pass over S's small result
per QI replaces one pass over the table per QI. The counts are the same either way (sums of
counts); only the speed depends on the plan, so a poor estimate costs time, never correctness.

Cost model, in units of "one row read by a GROUP BY over the table" (L rows):

* a QI counted directly:     L
* a cube S:                  L + beta * D(S)   (read the table, create D(S) groups)
* a QI counted from cube S:  D(S)

``beta`` — what creating one group costs against reading one row — is an engine property
(:attr:`qar_sql.engines.dialects.Dialect.cube_beta`), measured on each engine; ``None`` turns cubes off.

D(S) is estimated from each column's value frequencies as if the columns were independent:
E[D] = Σ over cells (1 − exp(−L·p_cell)). Real columns are usually dependent, which makes D
smaller than this estimate, so cubes are if anything underused. Cell probabilities are binned on
a log scale (a quarter octave), so the estimate for any set of columns is a short convolution.

Pure: no database code.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from qar_sql.pushdown.prune import Ranker

#: Bins per octave of the log2 cell-probability histograms.
_RES = 4
#: Largest cube (columns); bigger cubes rarely have few cells and cost planning time.
MAX_CUBE_COLUMNS = 12
#: Above this many QIs planning would take seconds; such scans are planned without cubes.
MAX_PLANNED_QIS = 20_000


@dataclass(frozen=True)
class Cube:
    columns: tuple[int, ...]  # column indices, ascending
    qis: tuple[int, ...]  # indices (into the combinations list) of the QIs counted from it
    cells: float  # estimated number of groups D(S)


@dataclass(frozen=True)
class Plan:
    cubes: tuple[Cube, ...]
    direct: tuple[int, ...]  # QI indices counted from the table
    rows: int
    beta: float = 0.0
    qi_cells: tuple[float, ...] = ()  # estimated classes of every QI (by QI index)

    def unit_costs(self) -> list[tuple[float, Cube | None, tuple[int, ...]]]:
        """(estimated cost, cube or None, QI indices) of each unit of work — a cube with its
        QIs, or one QI counted directly — including the cost of creating each QI's classes,
        which the plan does not change but which makes some units much heavier than others."""

        def cells(j: int) -> float:
            return self.qi_cells[j] if self.qi_cells else 0.0

        units: list[tuple[float, Cube | None, tuple[int, ...]]] = [
            (self.rows + self.beta * c.cells + sum(c.cells + self.beta * cells(j) for j in c.qis), c, c.qis)
            for c in self.cubes
        ]
        units += [(self.rows + self.beta * cells(j), None, (j,)) for j in self.direct]
        return units


def _column_dist(freq: Mapping[int, int], rows: int) -> np.ndarray:
    """Histogram of log2 value probabilities: index b counts values with p ≈ 2**(-b / _RES)."""
    top = int(math.ceil(math.log2(max(rows, 2)) * _RES)) + 1
    dist = np.zeros(top + 1)
    for n, values in freq.items():
        if n > 0 and values > 0:
            b = int(round(-math.log2(n / rows) * _RES))
            dist[min(b, top)] += values
    return dist


def _curve(rows: int, length: int) -> np.ndarray:
    """f[b] = 1 − exp(−L·2^(−b/_RES)): expected presence of a cell in bin b, so that
    E[number of distinct cells] = Σ_b dist[b]·f[b] under independence (module doc)."""
    return -np.expm1(-rows * np.exp2(-np.arange(length) / _RES))


def _convolved(dists: np.ndarray, columns) -> np.ndarray:
    """The log2 cell-probability histogram of ``columns`` together: their histograms convolved."""
    dist = np.ones(1)
    for i in columns:
        dist = np.convolve(dist, dists[i])
    return dist


def _hankel(f: np.ndarray, n: int) -> np.ndarray:
    """H[s, t] = f[s + t] for s, t < n (f has at least 2n − 1 entries)."""
    idx = np.arange(n)
    return f[idx[:, None] + idx[None, :]]


def qi_cells(freqs: Sequence[Mapping[int, int]], rows: int, combos: Sequence[tuple[int, ...]]) -> np.ndarray:
    """Estimated number of classes of every QI (independence estimate, as for cubes).

    Vectorised over QIs: E[D] = Σ_b dist(b)·f(b) with dist the convolution of the QI's column
    histograms. Split the QI into a left part (up to two columns) and the rest (up to two
    columns): E[D] = left · H · right with H the Hankel matrix f(s + t), and left·H computed once
    per column pair. QIs of more than four columns fall back to one convolution each."""
    dists = np.array([_column_dist(f, rows) for f in freqs])
    n_cols, width = dists.shape if len(freqs) else (0, 0)
    combos_a = np.asarray(combos, dtype=np.int64).reshape(len(combos), -1)
    p = combos_a.shape[1]
    if not len(combos) or p > 4 or p == 0:
        return np.array([float(np.dot(d, _curve(rows, len(d)))) for d in (_convolved(dists, c) for c in combos)])
    f = _curve(rows, 4 * width)
    if p == 1:
        return dists[combos_a[:, 0]] @ f[:width]
    # pair convolutions, only of the pairs the QIs start with (and end with, at p = 4)
    pw = 2 * width - 1

    def pairs(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        out = np.zeros((len(a), pw))
        for k in range(width):  # conv: out[:, k + j] += A[:, k]·B[:, j]
            out[:, k : k + width] += dists[a, k][:, None] * dists[b]
        return out

    key = combos_a[:, 0] * n_cols + combos_a[:, 1]
    uniq, inv = np.unique(key, return_inverse=True)
    left = pairs(uniq // n_cols, uniq % n_cols)  # (pairs, pw)
    if p == 2:
        return (left @ f[:pw])[inv]
    g = left @ _hankel(f, pw)  # g[s'][t] = Σ_s left[s]·f[s + t]
    if p == 3:
        return np.einsum("ij,ij->i", g[inv][:, :width], dists[combos_a[:, 2]])
    key2 = combos_a[:, 2] * n_cols + combos_a[:, 3]
    uniq2, inv2 = np.unique(key2, return_inverse=True)
    right = pairs(uniq2 // n_cols, uniq2 % n_cols)
    out = np.empty(len(combos))
    step = 50_000  # bounded memory: (step, pw) floats at a time
    for i in range(0, len(combos), step):
        sl = slice(i, i + step)
        out[sl] = np.einsum("ij,ij->i", g[inv[sl]], right[inv2[sl]])
    return out


def plan(freqs: Sequence[Mapping[int, int]], rows: int, combos: Sequence[tuple[int, ...]], *, beta: float) -> Plan:
    """Greedy plan: from the QI with the fewest estimated cells up, grow a cube one column at a
    time while the estimated saving grows; keep it if it saves anything, else count the QI
    directly. ``freqs[i]`` maps a record count n to the number of values of column i (NULL
    included) that occur n times.

    Each growth step weighs every column at once: the cells of cube ∪ {x} are Σ_j D_x(j)·h(j)
    with h = the cube's histogram correlated with f (one correlation, one matrix-vector
    product), and the QIs each x would add are counted by rank in a boolean array."""
    if not combos:
        return Plan((), (), rows, beta)
    p = len(combos[0])
    if len(combos) > MAX_PLANNED_QIS or p < 1:
        return Plan((), tuple(range(len(combos))), rows, beta)

    n_cols = len(freqs)
    dists = np.array([_column_dist(f, rows) for f in freqs])
    width = dists.shape[1]
    f = _curve(rows, (MAX_CUBE_COLUMNS + 1) * width)
    combos_a = np.asarray(combos, dtype=np.int64)
    rank = Ranker(n_cols, p)
    ranks = rank(combos_a)
    index_of = np.full(math.comb(n_cols, p), -1, dtype=np.int64)  # rank -> position in combos
    index_of[ranks] = np.arange(len(combos))
    uncovered = np.zeros(len(index_of), dtype=bool)  # by rank
    uncovered[ranks] = True

    def saving(m, cells):
        return (m - 1) * rows - beta * cells - m * cells

    cells_of = qi_cells(freqs, rows, combos)
    order = np.argsort(cells_of, kind="stable")
    qi_cells_t = tuple(float(c) for c in cells_of)

    # A cube of m QIs saves at most (m − 1)·L − (beta + m)·cells, and its cells are at least
    # its seed's: a seed with more cells than this saves nothing whatever it grows into.
    most = math.comb(MAX_CUBE_COLUMNS, p)
    hopeless = rows * (most - 1) / (beta + most)
    cubes, direct = [], []
    for j in order.tolist():
        if not uncovered[ranks[j]]:
            continue
        if cells_of[j] >= hopeless:
            uncovered[ranks[j]] = False
            direct.append(j)
            continue
        combo = combos[j]
        members = list(combo)
        inside = np.zeros(n_cols, dtype=bool)
        inside[members] = True
        dist = _convolved(dists, combo)
        cells = float(cells_of[j])
        m, best = 1, saving(1, cells)
        while len(members) < MAX_CUBE_COLUMNS:
            outside = np.flatnonzero(~inside)
            if not len(outside):
                break
            gained = _gained(members, outside, p, uncovered, rank)
            if not gained.any():
                break
            h = np.correlate(f[: len(dist) + width - 1], dist, "valid")  # h[k] = Σ_b dist[b]·f[b + k]
            c_cells = dists[outside] @ h
            s = np.where(gained > 0, saving(m + gained, c_cells), -np.inf)
            k = int(np.argmax(s))  # the first of equals: the lowest column, as the loop did
            if not s[k] > best:
                break
            x = int(outside[k])
            best, cells = float(s[k]), float(c_cells[k])
            dist = np.convolve(dist, dists[x])
            members.append(x)
            inside[x] = True
            m += int(gained[k])
        if m >= 2 and best > 0:
            cols = tuple(sorted(members))
            sub = np.array(list(itertools.combinations(cols, p)), dtype=np.int64)
            r = rank(sub)
            r = r[uncovered[r]]
            uncovered[r] = False
            cubes.append(Cube(cols, tuple(sorted(int(q) for q in index_of[r])), cells))
        else:
            uncovered[ranks[j]] = False
            direct.append(j)
    return Plan(tuple(cubes), tuple(sorted(direct)), rows, beta, qi_cells_t)


def _gained(members: list[int], outside: np.ndarray, p: int, uncovered: np.ndarray, rank) -> np.ndarray:
    """For each column x outside the cube: how many uncovered QIs the cube gains with x (the
    (p − 1)-subsets of its members joined with x)."""
    if p == 1:
        return uncovered[outside].astype(np.int64)
    rest = np.array(list(itertools.combinations(sorted(members), p - 1)), dtype=np.int64)
    n_out, n_rest = len(outside), len(rest)
    grid = np.empty((n_out, n_rest, p), dtype=np.int64)
    grid[:, :, : p - 1] = rest[None, :, :]
    grid[:, :, p - 1] = outside[:, None]
    flat = grid.reshape(-1, p)
    flat.sort(axis=1)
    return uncovered[rank(flat)].reshape(n_out, n_rest).sum(axis=1)
