"""SUDA and DIS-SUDA scores (Elliot et al. 2002; Manning, Haglin & Keane 2008) from per-record
uniqueness, as sdcMicro's ``suda2()`` computes them. Pure numpy.

A record's *minimal sample unique* (MSU) is a set of key columns on which it is unique while it
is unique on none of the set's proper subsets. Uniqueness only grows with the set, so a set S of
size p is an MSU of the record exactly when the record is unique on S and on none of the p sets
S minus one column. sdcMicro's SUDA2 (``src/Suda2.h``) finds them by recursive search; here
they come from the database's uniqueness tallies for every column set up to ``max_size``:
each record's *uniqueness pattern* (the column sets it is unique on) is read once per distinct
pattern, and :func:`msu_counts` turns a pattern into MSU counts by size.

Scores, with M the number of key columns (``R/suda2.R``, ``original_scores = TRUE``, the default
since sdcMicro 5.0.2, which follows Elliot et al.'s paper):

* SUDA score of a record: Σ over its MSUs of size k of (M − k)!  (``g_ab[k−1]``);
* DIS-SUDA score: with U the records unique on all M columns, P the records in classes of
  exactly two on all M columns, f the sampling fraction (sdcMicro's ``DisFraction``, default
  0.01), DIS = U·f / (U·f + P·(1 − f)), Q = 1 + (8 − M)/20 and A = Σ_records score^(−Q) over
  records with a score, a scored record gets 1 / (1 + (U/DIS − U) / (score^Q · A)), others 0.

Kept from sdcMicro so the numbers agree: DIS, U/DIS − U and Q are computed in single precision
as there; with fewer than 3 key columns sdcMicro adds constant dummy columns up to 3 (they
never form an MSU but make M = 3 in the weights and in Q). A missing value never belongs to an
MSU (SUDA2 skips the item), so the caller flags a record unique on S only where the record has
no NULL in S.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np

from qar_sql.errors import ParameterError, shown

__all__ = ["dis_suda", "msu_counts", "score_weights", "suda_scores"]


def msu_counts(patterns: Sequence[Iterable[int]], max_size: int) -> np.ndarray:
    """MSU counts by size for each uniqueness pattern: ``out[i, k − 1]`` is the number of MSUs
    of size k of a record whose pattern is ``patterns[i]``, a collection of column sets given
    as bit masks (bit c set when column c is in the set), covering every set of size ≤
    ``max_size`` on which the record is unique."""
    if max_size < 1:
        raise ParameterError(f"--max-size {max_size} must be at least 1")
    out = np.zeros((len(patterns), max_size), dtype=np.int64)
    for i, pattern in enumerate(patterns):
        sets = set(pattern)
        for s in sets:
            size = s.bit_count()
            if size == 0 or size > max_size:
                continue
            minimal = size == 1 or all((s & ~(1 << c)) not in sets for c in range(s.bit_length()) if s >> c & 1)
            if minimal:
                out[i, size - 1] += 1
    return out


def _effective_columns(n_columns: int) -> int:
    if n_columns < 1:
        raise ParameterError("SUDA needs at least one key column")
    return max(n_columns, 3)  # sdcMicro's dummy columns (R/suda2.R)


def score_weights(n_columns: int, max_size: int) -> np.ndarray:
    """(M − k)! for k = 1 … max_size: the weight of an MSU of size k (Elliot et al.)."""
    m = _effective_columns(n_columns)
    return np.array([float(math.factorial(m - k)) if k <= m else 0.0 for k in range(1, max_size + 1)])


def suda_scores(counts: np.ndarray, n_columns: int) -> np.ndarray:
    """SUDA score per row of ``counts`` (MSU counts by size, as :func:`msu_counts` gives)."""
    counts = np.asarray(counts, dtype=np.float64)
    if counts.ndim != 2:
        raise ParameterError("MSU counts must be a matrix: one row per record, one column per size")
    return counts @ score_weights(n_columns, counts.shape[1])


def dis_suda(
    scores,
    records,
    *,
    uniques: int,
    pair_records: int,
    n_columns: int,
    dis_fraction: float = 0.01,
) -> np.ndarray:
    """DIS-SUDA score for each distinct SUDA score in ``scores``, ``records`` of them each.
    ``uniques`` (U) and ``pair_records`` (P) are counted on all the key columns together."""
    if not (0.0 < dis_fraction <= 1.0):
        raise ParameterError(f"the sampling fraction {shown(dis_fraction)} must be in (0, 1]")
    s = np.asarray(scores, dtype=np.float64)
    m = np.asarray(records, dtype=np.float64)
    cols = _effective_columns(n_columns)
    f = np.float32(dis_fraction)
    u = np.float32(uniques)
    with np.errstate(all="ignore"):
        dis = (u * f) / (u * f + np.float32(pair_records) * (np.float32(1.0) - f))
        excess = float(u / dis - u)
        q = float(np.float32(1.0) + (np.float32(8.0) - np.float32(cols)) / np.float32(20.0))
        scored = s != 0
        powered = np.where(scored, np.power(s, q), 1.0)
        adj = float(np.sum(np.where(scored, m / powered, 0.0)))
        out = np.where(scored, 1.0 / (1.0 + excess / (powered * adj)), 0.0)
    return out
