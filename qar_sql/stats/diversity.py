"""l-diversity and t-closeness of the classes of a quasi-identifier, from the counts of
(class × sensitive value). Pure numpy.

The input is one row per (class, sensitive value) present: ``cls`` (class number 0 … C−1),
``value`` (the sensitive value's code 0 … m−1, numbered in value order; −1 for NULL) and
``count`` (records of that class with that value; with wildcard matching of missing key values
a record counts in every class it matches). Every function returns one number per class.

**l-diversity** (Machanavajjhala et al. 2007), exactly as sdcMicro's ``ldiversity()``
computes it per class (``src/Measure_Risk.h``, ``compute_group_ldiversity``):

* distinct l: the number of distinct sensitive values; a missing value counts as one more
  value when the class has a non-missing one (a class with only missing values has l = 0);
* entropy l: exp(H), H = −Σ p ln p over those values (missing included on the same
  condition), p the share of the class's records (missing ones included) — natural log, as
  sdcMicro and ARX report it; 1 for a class with only missing values;
* recursive (c, l): with the non-missing value counts sorted r1 ≥ r2 ≥ … ≥ rm, the largest l
  with r1 < c·(r_l + r_{l+1} + … + r_m) (1 when no l ≥ 2 qualifies or m = 1; 0 when m = 0,
  where sdcMicro leaves the previous class's value). sdcMicro accumulates in single precision;
  the sums here are exact for whole counts and any c that is a sum of powers of two (c = 2),
  so the results agree.

**t-closeness** (Li, Li & Venkatasubramanian 2007): the Earth Mover's Distance between the
class's distribution of the sensitive value and the whole table's, NULLs left out of both
(a class with only NULLs has none: NaN):

* equal ground distance (categorical values): ½ Σ_i |p_i − q_i|;
* ordered distance (numbers, ordinal values): 1/(m − 1) · Σ_{i=1}^{m} |Σ_{j≤i} (p_j − q_j)|,
  m the number of distinct values in the table (0 when m = 1).

Li et al.'s example (salaries 3k … 11k, one record each): the class {3k, 4k, 5k} is at 0.375
from the table, the class {6k, 8k, 11k} at 0.1667.
"""

from __future__ import annotations

import numpy as np

from qar_sql.errors import ParameterError

__all__ = [
    "all_missing",
    "distinct_l",
    "entropy_l",
    "recursive_l",
    "t_closeness_equal",
    "t_closeness_ordered",
]


def _long(cls, value, count, n_classes: int | None = None):
    c = np.asarray(cls, dtype=np.int64)
    v = np.asarray(value, dtype=np.int64)
    k = np.asarray(count, dtype=np.float64)
    if not (c.shape == v.shape == k.shape) or c.ndim != 1:
        raise ParameterError("class, value and count must be vectors of the same length")
    if c.size and (c.min() < 0 or k.min() < 0 or v.min() < -1):
        raise ParameterError("classes and counts must not be negative; NULL values are coded -1")
    n = int(c.max()) + 1 if n_classes is None and c.size else (n_classes or 0)
    return c, v, k, n


def all_missing(cls, value, count, n_classes: int | None = None) -> np.ndarray:
    """Per class: True when none of its records has a sensitive value (only NULLs, or no
    record). sdcMicro's ``ldiversity`` leaves such classes out of the table's figures."""
    c, v, k, n = _long(cls, value, count, n_classes)
    present = np.bincount(c, weights=((v >= 0) & (k > 0)).astype(float), minlength=n)
    return present == 0


def distinct_l(cls, value, count, n_classes: int | None = None) -> np.ndarray:
    """Distinct l-diversity per class (sdcMicro's ``Distinct_Ldiversity``)."""
    c, v, k, n = _long(cls, value, count, n_classes)
    present = np.bincount(c, weights=((v >= 0) & (k > 0)).astype(float), minlength=n)
    missing = np.bincount(c, weights=np.where(v < 0, k, 0.0), minlength=n)
    return present + ((missing > 0) & (present > 0))


def entropy_l(cls, value, count, n_classes: int | None = None) -> np.ndarray:
    """Entropy l-diversity per class: exp of the Shannon entropy (natural log) of the class's
    sensitive values, missing counted as a value when the class has others (sdcMicro's
    ``Entropy_Ldiversity``)."""
    c, v, k, n = _long(cls, value, count, n_classes)
    size = np.bincount(c, weights=k, minlength=n)
    present = np.bincount(c, weights=((v >= 0) & (k > 0)).astype(float), minlength=n)
    use = (k > 0) & ((v >= 0) | (present[c] > 0))
    with np.errstate(divide="ignore", invalid="ignore"):
        p = k / size[c]
        term = np.where(use, p * np.log(np.where(use, p, 1.0)), 0.0)
    return np.exp(-np.bincount(c, weights=term, minlength=n))


def recursive_l(cls, value, count, c_constant: float = 2.0, n_classes: int | None = None) -> np.ndarray:
    """Recursive (c, l)-diversity per class: the largest l with r1 < c·Σ_{i≥l} r_i over the
    class's non-missing value counts sorted descending (sdcMicro's ``Recursive_Ldiversity``)."""
    if not c_constant > 0:
        raise ParameterError(f"the recursive l-diversity constant c = {c_constant!r} must be positive, e.g. 2")
    c, v, k, n = _long(cls, value, count, n_classes)
    keep = (v >= 0) & (k > 0)
    c, k = c[keep], k[keep]
    order = np.lexsort((-k, c))
    c, k = c[order], k[order]
    out = np.zeros(n)
    if not c.size:
        return out
    start = np.r_[0, np.flatnonzero(np.diff(c)) + 1]
    first = np.repeat(start, np.diff(np.r_[start, c.size]))
    rank = np.arange(c.size) - first
    before = np.cumsum(k) - k
    tail = np.bincount(c, weights=k, minlength=n)[c] - (before - before[first])  # Σ_{i ≥ rank} r_i
    ok = (rank >= 1) & (c_constant * tail > k[first])
    out[c[start]] = 1.0
    out += np.bincount(c, weights=ok.astype(float), minlength=n)
    return out


def _sensitive(cls, value, count, n_classes, overall):
    """The rows with a sensitive value, the class sizes over them and the table's distribution:
    ``overall`` (records per value code) or, by default, the sum of the classes' counts."""
    c, v, k, n = _long(cls, value, count, n_classes)
    keep = (v >= 0) & (k > 0)
    c, v, k = c[keep], v[keep], k[keep]
    size = np.bincount(c, weights=k, minlength=n)
    summed = np.bincount(v, weights=k, minlength=int(v.max()) + 1 if v.size else 0)
    if overall is None:
        return c, v, k, n, size, summed
    out = np.asarray(overall, dtype=np.float64)
    if out.ndim != 1 or out.size < summed.size or (out.size and out.min() < 0):
        raise ParameterError("the table's distribution must count every sensitive value code, none negative")
    return c, v, k, n, size, out


def t_closeness_equal(cls, value, count, n_classes: int | None = None, overall=None) -> np.ndarray:
    """EMD with the equal ground distance per class: ½ Σ |p_i − q_i| (total variation), q the
    table's distribution of the sensitive value (NULLs left out; NaN for a class with only
    NULLs). ``overall`` (records per value code) is the table's distribution; by default the
    sum of the classes' counts (not the same when classes overlap)."""
    c, v, k, n, size, overall = _sensitive(cls, value, count, n_classes, overall)
    total = overall.sum()
    if total == 0:
        return np.full(n, np.nan)
    q = overall / total
    with np.errstate(invalid="ignore", divide="ignore"):
        p = k / size[c]
    diff = np.bincount(c, weights=np.abs(p - q[v]), minlength=n)
    covered = np.bincount(c, weights=q[v], minlength=n)
    out = 0.5 * (diff + 1.0 - covered)
    return np.where(size > 0, np.maximum(out, 0.0), np.nan)


def t_closeness_ordered(cls, value, count, n_classes: int | None = None, overall=None) -> np.ndarray:
    """EMD with the ordered distance per class: Σ_i |Σ_{j≤i}(p_j − q_j)| / (m − 1) over the m
    distinct values in value order (codes 0 … m−1). ``overall`` as for
    :func:`t_closeness_equal`; m is its length (by default the largest code + 1)."""
    c, v, k, n, size, overall = _sensitive(cls, value, count, n_classes, overall)
    m = overall.size
    total = overall.sum()
    if total == 0:
        return np.full(n, np.nan)
    if m <= 1:
        return np.where(size > 0, 0.0, np.nan)
    q_cum = np.cumsum(overall) / total
    q_cum[-1] = 1.0
    prefix = np.r_[0.0, np.cumsum(q_cum)]  # prefix[i] = Σ_{j<i} Q(j)

    def segment(a, b, level):
        # Σ_{i=a}^{b} |level − Q(i)| for Q non-decreasing, vectorised; empty when b < a.
        b1 = np.maximum(b + 1, a)
        s = np.clip(np.searchsorted(q_cum, level, side="right"), a, b1)
        below = level * (s - a) - (prefix[s] - prefix[a])
        above = (prefix[b1] - prefix[s]) - level * (b1 - s)
        return below + above

    order = np.lexsort((v, c))
    c, v, k = c[order], v[order], k[order]
    emd = np.zeros(n)
    if c.size:
        with np.errstate(invalid="ignore", divide="ignore"):
            p = k / size[c]
        start = np.r_[0, np.flatnonzero(np.diff(c)) + 1]
        first = np.repeat(start, np.diff(np.r_[start, c.size]))
        cum = np.cumsum(p)
        level = cum - (cum[first] - p[first])  # P(i) from this value up to the class's next value
        last = np.r_[c[1:] != c[:-1], True]
        nxt = np.where(last, m, np.r_[v[1:], 0])
        emd += np.bincount(c, weights=segment(v, nxt - 1, np.where(last, 1.0, level)), minlength=n)
        head = segment(np.zeros(start.size, dtype=np.int64), v[start] - 1, np.zeros(start.size))
        emd[c[start]] += head
    return np.where(size > 0, emd / (m - 1), np.nan)
