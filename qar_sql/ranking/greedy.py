"""Proper (greedy) backward elimination (METHOD §4): at each step remove the record with the
largest DT *in the current data*, then update everything.

In memory by nature: the update needs every record's group on every quasi-identifier, so it
reads the L × N integer codes of the QI columns (never the values; :mod:`.record_codes`), as
record entropy and PLS do — unlike DT, U+ and U*, which are tallied in the database. It keeps
a group id per (record, QI) (4 bytes) and a size and a member sum per group (12 bytes; at most
one group per pair), so at most 16 bytes per pair, plus one bool row per distinct uniqueness
pattern. Tables with L × C(N, p) above
:data:`~qar_sql.pushdown.record_codes.MAX_CELLS` (200 million) are refused before anything is read.

State, per QI j: a packed group id for each record, the size of each group and the sum of the
positions r of its members. Removing record i decrements its group in every QI; a group going
1 → 0 lowers H(j); a group going 2 → 1 makes its remaining member unique — the group's sum is
then that member's r, found in O(1). Only the removed record and those members change
uniqueness pattern, so the distinct patterns are kept in a table updated per step.

DT per step: every record's DT changes each step (T̂ and M = L − s change), but it depends on a
record only through its pattern, so it is computed once per distinct live pattern. Only the
largest θ enter T̂ (u and the exceedances sit in the top K ≈ π_u·N_p + 3 order statistics),
and removing a record lowers each H by at most 1, so only the QIs with H ≥ (K-th largest H) − 1
matter: patterns that agree on those give the same T̂ bit for bit and are evaluated once, on
their top K values (:func:`pattern_risks`; the estimator of :func:`qar_sql.stats.evt.qar_risk_batch`
restricted to the top K, equal to it to summation rounding). A step costs about
(distinct patterns) × K, not L × N_p.

Ties (equal DT) go to the record earliest in key order (smallest r), as in every ranking.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from typing import Required, TypedDict, Unpack

import numpy as np

from qar_sql.engines.source import Database, Relation
from qar_sql.errors import ParameterError, shown
from qar_sql.pushdown.record_codes import check_size, count_rows, fetch_codes
from qar_sql.pushdown.scan import combinations
from qar_sql.stats import evt


@dataclasses.dataclass(frozen=True)
class GreedyResult:
    """Greedy elimination: ``removed[s]`` is the record (position r in key order) removed at
    step s + 1; ``risk[s]`` is T̂ after s removals (``risk[0]`` = T̂ of the whole table).

    ``risk`` has one more entry than ``removed``. It is shorter than ``steps + 1`` only when
    the elimination stopped early (see ``warnings``)."""

    removed: np.ndarray
    risk: np.ndarray
    seconds: float
    warnings: tuple[str, ...] = ()
    #: Distinct uniqueness patterns at the start (the empty one included): a step costs ~ this.
    distinct_patterns: int = 0

    @property
    def reduction(self) -> np.ndarray:
        """1 − T̂_s / T̂_0 after each step."""
        return 1.0 - self.risk / self.risk[0]


# --------------------------------------------------------------------------------------------
# Group ids


def _densify(key: np.ndarray, span: int) -> tuple[np.ndarray, int]:
    """Dense ids 0..k-1 (in key order) of non-negative integer keys below ``span``."""
    if span <= 2 * key.size + 1024:
        present = np.zeros(span, dtype=bool)
        present[key] = True
        remap = np.cumsum(present) - 1
        return remap[key], int(present.sum())
    uniq, inv = np.unique(key, return_inverse=True)
    return inv.reshape(-1), uniq.size


def group_ids(codes: np.ndarray, combos: Sequence[tuple[int, ...]]) -> tuple[np.ndarray, np.ndarray]:
    """(G, offsets): G[j, r] = global id of record r's group on QI j (the groups of QI j are
    offsets[j] .. offsets[j+1] − 1, numbered in code order). NULL (code −1) is a value of its
    own (GROUP BY semantics). QI-major, so each QI's ids are one contiguous array."""
    n_rows = codes.shape[0]
    cols = np.ascontiguousarray((codes + 1).T)  # NULL −1 → 0; one contiguous array per column
    cards = cols.max(axis=1) + 1 if n_rows else np.ones(codes.shape[1], dtype=np.int64)
    out = np.empty((len(combos), n_rows), dtype=np.int32 if n_rows < 2**31 else np.int64)
    offsets = np.zeros(len(combos) + 1, dtype=np.int64)
    prefix_key: tuple | None = None  # consecutive combinations share prefixes: reuse the last
    prefix: tuple = (None, 0)
    for j, combo in enumerate(combos):
        if prefix_key == combo[:-1]:
            gid, n = prefix
        else:
            gid, n = cols[combo[0]], int(cards[combo[0]])
            for c in combo[1:-1]:
                gid, n = _densify(gid * cards[c] + cols[c], n * int(cards[c]))
            prefix_key, prefix = combo[:-1], (gid, n)
        if len(combo) > 1:
            c = combo[-1]
            gid, n = _densify(gid * cards[c] + cols[c], n * int(cards[c]))
        else:
            gid, n = _densify(gid, n)
        out[j] = gid
        out[j] += offsets[j]
        offsets[j + 1] = offsets[j] + n
    return out, offsets


# --------------------------------------------------------------------------------------------
# Patterns


class _Patterns:
    """Distinct uniqueness patterns (bool rows over QIs) with their live record counts."""

    def __init__(self, n_qi: int):
        self.n_qi = n_qi
        self.masks = np.zeros((64, n_qi), dtype=bool)
        self.counts = np.zeros(64, dtype=np.int64)
        self.index: dict[bytes, int] = {}

    def __len__(self) -> int:
        return len(self.index)

    def _grow(self, size: int) -> None:
        if size > self.masks.shape[0]:
            cap = max(size, 2 * self.masks.shape[0])
            self.masks = np.concatenate([self.masks, np.zeros((cap - self.masks.shape[0], self.n_qi), dtype=bool)])
            self.counts = np.concatenate([self.counts, np.zeros(cap - self.counts.size, dtype=np.int64)])

    def get(self, packed_row: np.ndarray) -> int:
        """Pattern id of one packed bool row (added when new)."""
        key = packed_row.tobytes()
        pid = self.index.get(key)
        if pid is None:
            pid = len(self.index)
            self._grow(pid + 1)
            self.masks[pid] = np.unpackbits(packed_row, count=self.n_qi).astype(bool)
            self.index[key] = pid
        return pid

    def get_many(self, packed: np.ndarray) -> np.ndarray:
        """Pattern ids of distinct packed rows (the new ones added in bulk)."""
        pids = np.array([self.index.get(row.tobytes(), -1) for row in packed], dtype=np.int64)
        new = np.flatnonzero(pids < 0)
        start = len(self.index)
        self._grow(start + new.size)
        self.masks[start : start + new.size] = np.unpackbits(packed[new], axis=1, count=self.n_qi).astype(bool)
        for k, row in enumerate(new):
            self.index[packed[row].tobytes()] = pids[row] = start + k
        return pids


def _row_keys(bits: np.ndarray) -> np.ndarray:
    """One sortable key per row of a bool matrix (equal rows ↔ equal keys): a uint64 when the
    rows fit in 64 bits (sorts several times faster), else the packed bytes as one void item."""
    packed = np.packbits(bits, axis=1)
    if packed.shape[1] <= 8:
        wide = np.zeros((packed.shape[0], 8), dtype=np.uint8)
        wide[:, : packed.shape[1]] = packed
        return wide.view(np.uint64)[:, 0]
    packed = np.ascontiguousarray(packed)
    return packed.view(np.dtype((np.void, packed.shape[1])))[:, 0]


def pattern_risks(
    h: np.ndarray, masks: np.ndarray, m: int, *, alpha: float, pi_u: float, pwm: str, rows: np.ndarray | None = None
) -> np.ndarray:
    """T̂ of θ = (H − mask) / m for each mask row (only ``rows``, when given; NaN where there
    is no tail).

    Equal to ``evt.qar_risk_batch((h - masks) / m, m, ...)`` (to summation rounding), at a cost
    per distinct pattern of K ≈ π_u·N_p + 3, not N_p: the estimator reads only the top K of the
    sorted θ, and since H drops by at most 1, only the QIs with H ≥ (K-th largest H) − 1 can
    reach them. So masks are deduplicated on those QIs — patterns agreeing there get the same T̂,
    bit for bit — and each distinct restriction is evaluated on its top K values."""
    # The top tail_width values decide T̂; one more so that a tie at the boundary is kept.
    k = min(h.size, evt.tail_width(h.size, pi_u) + 1)
    kth = np.partition(h, h.size - k)[h.size - k]
    cols = np.flatnonzero(h >= kth - 1)
    sub = masks[np.ix_(np.arange(masks.shape[0]) if rows is None else rows, cols)]
    _, first, inverse = np.unique(_row_keys(sub), return_index=True, return_inverse=True)
    thetas = (h[cols].astype(float)[None, :] - sub[first]) / m
    top = np.sort(thetas, axis=1)[:, thetas.shape[1] - k :]
    risks = evt.qar_risk_batch(top, m, alpha=alpha, pi_u=pi_u, pwm=pwm, n_qi=h.size)
    return risks[inverse.reshape(-1)]


# --------------------------------------------------------------------------------------------
# The elimination


class GreedyOptions(TypedDict, total=False):
    """The keywords :func:`greedy_elimination` hands on to :func:`eliminate_codes`."""

    steps: Required[int]
    alpha: Required[float]
    pi_u: Required[float]
    pwm: str
    progress: Callable[[int, int], None] | None


def eliminate_codes(
    codes: np.ndarray,
    p: int,
    *,
    steps: int,
    alpha: float,
    pi_u: float,
    pwm: str = "plotting",
    progress: Callable[[int, int], None] | None = None,
) -> GreedyResult:
    """Greedy elimination on an L × N code matrix (row r = record r). Pure numpy."""
    started = time.perf_counter()
    n_rows = codes.shape[0]
    if not isinstance(steps, (int, np.integer)) or isinstance(steps, bool) or steps < 0:
        raise ParameterError(f"steps = {shown(steps)} must be a whole number of at least 0, e.g. 500")
    if steps > n_rows - 2:
        raise ParameterError(
            f"steps = {steps} would leave fewer than 2 of the {n_rows} records; use at most {max(n_rows - 2, 0)} steps"
        )
    combos = combinations(codes.shape[1], p)
    evt.check_n_qi(len(combos), pi_u)
    g, offsets = group_ids(codes, combos)
    n_groups = int(offsets[-1])
    # Per group: its size and the sum of its members' positions r — when one member is left,
    # the sum is that member. Float sums from bincount are exact below 2**53 (L < ~10**8).
    sizes = np.zeros(n_groups, dtype=np.int32)
    sums = np.zeros(n_groups, dtype=np.int64)
    r_col = np.arange(n_rows, dtype=np.float64)
    for j in range(g.shape[0]):
        lo, hi = offsets[j], offsets[j + 1]
        local = g[j] - lo
        sizes[lo:hi] = np.bincount(local, minlength=hi - lo)
        sums[lo:hi] = np.bincount(local, weights=r_col, minlength=hi - lo).astype(np.int64)
    h = np.diff(offsets).astype(np.int64)  # every group of the full table is non-empty

    pats = _Patterns(len(combos))
    single = sizes == 1
    pattern_of = np.empty(n_rows, dtype=np.int64)
    chunk = max(1, 50_000_000 // max(len(combos), 1))
    for start in range(0, n_rows, chunk):
        packed = np.ascontiguousarray(np.packbits(single[g[:, start : start + chunk]], axis=0).T)
        view = packed.view(np.dtype((np.void, packed.shape[1])))[:, 0]
        _, first, inverse, counts = np.unique(view, return_index=True, return_inverse=True, return_counts=True)
        pids = pats.get_many(packed[first])
        pats.counts[pids] += counts
        pattern_of[start : start + chunk] = pids[inverse.reshape(-1)]
    alive = np.ones(n_rows, dtype=bool)
    n_patterns = len(pats)

    risk = [evt.qar_risk(h / n_rows, n_rows, alpha=alpha, pi_u=pi_u, pwm=pwm).risk]
    removed: list[int] = []
    warnings: list[str] = []
    for s in range(steps):
        m = n_rows - s
        live = np.flatnonzero(pats.counts[: len(pats)] > 0)
        t_after = pattern_risks(h, pats.masks, m - 1, alpha=alpha, pi_u=pi_u, pwm=pwm, rows=live)
        dt = risk[-1] - t_after
        if np.isnan(dt).all():
            warnings.append(
                f"greedy elimination stopped after {s} step(s): removing any of the remaining "
                f"{m} records leaves no tail, so no DT is defined"
            )
            break
        best = np.nanmax(dt)
        best_pids = live[dt == best]
        # Ties: the record earliest in key order among the best patterns.
        hit = pattern_of == best_pids[0] if best_pids.size == 1 else np.isin(pattern_of, best_pids)
        i = int(np.flatnonzero(alive & hit)[0])
        risk.append(float(t_after[np.searchsorted(live, pattern_of[i])]))
        removed.append(i)

        gs = g[:, i]
        sizes[gs] -= 1
        sums[gs] -= i
        h -= sizes[gs] == 0
        alive[i] = False
        pats.counts[pattern_of[i]] -= 1
        partners = np.unique(sums[gs[sizes[gs] == 1]])
        for k in partners:
            pid = pats.get(np.packbits(sizes[g[:, k]] == 1))
            pats.counts[pattern_of[k]] -= 1
            pats.counts[pid] += 1
            pattern_of[k] = pid
        if progress:
            progress(s + 1, steps)
    return GreedyResult(
        removed=np.asarray(removed, dtype=np.int64), risk=np.asarray(risk), seconds=time.perf_counter() - started,
        warnings=tuple(warnings), distinct_patterns=n_patterns,
    )  # fmt: skip


def greedy_elimination(
    db: Database,
    relation: Relation,
    columns: Sequence[str],
    p: int,
    order_by: Sequence[str],
    **options: Unpack[GreedyOptions],
) -> GreedyResult:
    """Proper backward elimination: ``steps`` times, remove the record with the largest DT in
    the current data (ties: smallest r, the earliest in key order) and update. ``options``: the
    keywords of :func:`eliminate_codes` (:class:`GreedyOptions`).

    In memory by nature: reads the L × N integer codes of ``columns`` in key order (``order_by``
    from :func:`qar_sql.pushdown.record_keys.record_order`), as entropy and PLS do, and keeps at most 16
    bytes per (record, QI). Refuses (UsageError) when L × C(N, p) is above
    :data:`qar_sql.pushdown.record_codes.MAX_CELLS` (200 million), before reading anything.
    """
    started = time.perf_counter()
    n_rows = count_rows(db, relation)
    check_size(n_rows, len(combinations(len(columns), p)), "greedy elimination")
    codes = fetch_codes(db, relation, columns, order_by)
    result = eliminate_codes(codes, p, **options)
    return dataclasses.replace(result, seconds=time.perf_counter() - started)
