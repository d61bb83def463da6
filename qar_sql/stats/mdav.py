"""MDAV, the Maximum Distance to Average Vector microaggregation (Domingo-Ferrer & Mateo-Sanz
2002; the fixed-size form of Domingo-Ferrer & Torra 2005 that sdcMicro's
``microaggregation(method = "mdav")`` runs): multivariate groups of k to 2k − 1 records.

Each column is standardised (mean 0, standard deviation 1; a constant column is left unscaled),
distances are Euclidean, and with R the records not yet grouped:

* while |R| ≥ 3k: c = the mean of R; r = the record of R farthest from c; r and its k − 1
  nearest records in R form a group and leave R; s = the record of R farthest from r; s and its
  k − 1 nearest records in R form a group and leave R;
* if |R| ≥ 2k: r = the record of R farthest from the mean of R; r and its k − 1 nearest form a
  group; the rest (k to 2k − 1 records) form the last group;
* otherwise R (fewer than 2k records) is one group.

Ties (equal distances) go to the record that comes first in the given order, which the caller
makes the row identity's, so the grouping is a function of the data alone. Pure numpy: the
caller reads the columns and ships the grouping back into SQL. The cost is O(n²·p / k), which
is why qar_sql.treat.perturb caps the rows one MDAV run may take.
"""

from __future__ import annotations

import numpy as np


def standardise(x: np.ndarray) -> np.ndarray:
    """Columns centred and divided by their sample standard deviation (1 for a constant one):
    every column counts alike in the distance, whatever its unit."""
    x = np.asarray(x, dtype=np.float64)
    if len(x) < 2:
        return x - x.mean(axis=0) if len(x) else x
    sd = x.std(axis=0, ddof=1)
    sd[~(sd > 0)] = 1.0
    return (x - x.mean(axis=0)) / sd


def mdav(x: np.ndarray, k: int) -> np.ndarray:
    """Group number (0, 1, …) of every row of ``x`` (n × p, already standardised)."""
    x = np.asarray(x, dtype=np.float64)
    n = len(x)
    group = np.full(n, -1, dtype=np.int64)
    ids = np.arange(n)  # rows not yet grouped, in the caller's order
    rest = x.copy()  # their values, compacted as groups leave
    g = 0

    def farthest(point: np.ndarray) -> int:
        d = ((rest - point) ** 2).sum(axis=1)
        return int(np.argmax(d))  # the first of equal maxima

    def take(pos: int) -> np.ndarray:
        """Group the record at position ``pos`` of ``rest`` with its k − 1 nearest; return it."""
        nonlocal ids, rest, g
        centre = rest[pos].copy()
        d = ((rest - centre) ** 2).sum(axis=1)
        d[pos] = -1.0  # the centre leads its group even beside a duplicate of itself
        if len(d) > k:
            cut = np.partition(d, k - 1)[k - 1]
            near = np.flatnonzero(d <= cut)
        else:
            near = np.arange(len(d))
        # Nearest first; equal distances in the caller's order.
        chosen = near[np.lexsort((near, d[near]))][:k]
        group[ids[chosen]] = g
        g += 1
        keep = np.ones(len(ids), dtype=bool)
        keep[chosen] = False
        ids, rest = ids[keep], rest[keep]
        return centre

    while len(ids) >= 3 * k:
        r = take(farthest(rest.mean(axis=0)))
        take(farthest(r))
    if len(ids) >= 2 * k:
        take(farthest(rest.mean(axis=0)))
    group[ids] = g
    return group
