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

    def cost(self, beta: float | None = None) -> float:
        """Estimated cost in table-row reads (the cost model above)."""
        b = self.beta if beta is None else beta
        return self.rows * len(self.direct) + sum(self.rows + b * c.cells + len(c.qis) * c.cells for c in self.cubes)

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


def _distinct(dist: np.ndarray, rows: int) -> float:
    p = np.exp2(-np.arange(len(dist)) / _RES)
    return float(np.dot(dist, -np.expm1(-rows * p)))


def estimate_cells(freqs: Sequence[Mapping[int, int]], columns: Sequence[int], rows: int) -> float:
    """E[number of distinct cells] of ``columns`` under independence (see module doc)."""
    dist = np.ones(1)
    for i in columns:
        dist = np.convolve(dist, _column_dist(freqs[i], rows))
    return _distinct(dist, rows)


def qi_cells(freqs: Sequence[Mapping[int, int]], rows: int, combos: Sequence[tuple[int, ...]]) -> np.ndarray:
    """Estimated number of classes of every QI (independence estimate, as for cubes)."""
    dists = [_column_dist(f, rows) for f in freqs]
    out = np.empty(len(combos))
    for j, combo in enumerate(combos):
        dist = np.ones(1)
        for i in combo:
            dist = np.convolve(dist, dists[i])
        out[j] = _distinct(dist, rows)
    return out


def plan(
    freqs: Sequence[Mapping[int, int]],
    rows: int,
    combos: Sequence[tuple[int, ...]],
    *,
    beta: float,
    max_columns: int = MAX_CUBE_COLUMNS,
) -> Plan:
    """Greedy plan: from the QI with the fewest estimated cells up, grow a cube one column at a
    time while the estimated saving grows; keep it if it saves anything, else count the QI
    directly. ``freqs[i]`` maps a record count n to the number of values of column i (NULL
    included) that occur n times."""
    if not combos:
        return Plan((), (), rows, beta)
    p = len(combos[0])
    if len(combos) > MAX_PLANNED_QIS or p < 1:
        return Plan((), tuple(range(len(combos))), rows, beta)
    n_cols = len(freqs)
    dists = [_column_dist(f, rows) for f in freqs]
    index = {c: j for j, c in enumerate(combos)}
    uncovered = set(index)

    def conv(dist, i):
        return np.convolve(dist, dists[i])

    def saving(m: int, cells: float) -> float:
        return (m - 1) * rows - beta * cells - m * cells

    seeds = []
    for c in combos:
        dist = np.ones(1)
        for i in c:
            dist = conv(dist, i)
        seeds.append((_distinct(dist, rows), c, dist))
    qi_cells = tuple(s[0] for s in seeds)
    seeds.sort(key=lambda s: s[0])

    cubes, direct = [], []
    for cells, combo, dist in seeds:
        if combo not in uncovered:
            continue
        members, m, best = set(combo), 1, saving(1, cells)
        while len(members) < max_columns:
            choice = None
            for x in range(n_cols):
                if x in members:
                    continue
                gained = sum(
                    1
                    for rest in itertools.combinations(sorted(members), p - 1)
                    if tuple(sorted(rest + (x,))) in uncovered
                )
                if not gained:
                    continue
                d = conv(dist, x)
                c_cells = _distinct(d, rows)
                s = saving(m + gained, c_cells)
                if choice is None or s > choice[0]:
                    choice = (s, x, d, c_cells, gained)
            if choice is None or choice[0] <= best:
                break
            best, x, dist, cells, gained = choice
            members.add(x)
            m += gained
        if m >= 2 and best > 0:
            cols = tuple(sorted(members))
            qis = [q for q in itertools.combinations(cols, p) if q in uncovered]
            uncovered.difference_update(qis)
            cubes.append(Cube(cols, tuple(index[q] for q in qis), cells))
        else:
            uncovered.discard(combo)
            direct.append(index[combo])
    return Plan(tuple(cubes), tuple(sorted(direct)), rows, beta, qi_cells)
