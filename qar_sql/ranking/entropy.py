"""Record entropy E(i) (METHOD §3; the paper's §3.4), for ordinal columns only.

For QI j with columns j1..jp:

    F(i, j) = (1/L) Σ_r 1(x_r,j1 ≤ x_i,j1, …, x_r,jp ≤ x_i,jp)   (empirical p-variate CDF)
    G(i, j) = (1/L) Σ_r 1(F(r, j) ≤ F(i, j))
    p_m(i)  = share of the N_p values G(i, ·) in bin m of M = round(√N_p) equal bins of [0, 1]
    E(i)    = −Σ_m p_m(i) ln p_m(i)   (0 ln 0 = 0)

Bins are [k/M, (k+1)/M) for k = 0..M−2 and [(M−1)/M, 1] for the last (G = 1, the largest F,
falls in it); bin indices are computed in integers, ⌊L·G·M / L⌋, so no rounding moves a value
across a boundary.

Order: numeric, date, time and boolean columns are ordinal in their value order. Text columns
are nominal and refused unless ``orders`` gives their order (every value, lowest first). NULL is
a value of its own and sorts first, below every value, in every column (as in the scan, where
NULL groups with NULL); it cannot be placed elsewhere.

Computation: like greedy elimination this works in memory on the L × N integer codes of the
columns (codes follow the value order; :mod:`.record_codes`), never the values, and refuses
tables with more than :data:`~qar_sql.pushdown.record_codes.MAX_CELLS` codes. Per QI, the records'
cells are counted with ``np.bincount`` — the codes are needed per record anyway, and per-QI cell
counts pulled from the database would be N_p × (cells) rows, usually more than the L × N codes.
F is then a cumulative sum over the p-dimensional grid of cells when the grid has at most
:data:`GRID_CELLS` cells; otherwise it is counted pairwise over the distinct cells that occur,
when there are at most :data:`PAIRWISE_CELLS`; otherwise the QI is refused with a clear
message (recode the columns into fewer categories, or use a smaller p).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Mapping, Sequence

import numpy as np

from qar_sql.engines.source import Database, Relation
from qar_sql.errors import ColumnError, DataError, ParameterError
from qar_sql.pushdown.record_codes import check_size, column_kinds, count_rows, fetch_codes, kind_of, value_codes
from qar_sql.pushdown.scan import combinations

#: Largest p-dimensional grid (product of the QI columns' numbers of values, NULL included)
#: whose cumulative sums give F.
GRID_CELLS = 1 << 23
#: Above that grid size, F is counted pairwise over the distinct cells that occur, up to this many.
PAIRWISE_CELLS = 20_000


def entropy_scores(
    db: Database,
    relation: Relation,
    columns: Sequence[str],
    p: int,
    order_by: Sequence[str],
    *,
    orders: Mapping[str, Sequence] | None = None,
) -> np.ndarray:
    """E(i) for every record, in key order (index r), over all C(N, p) QIs of ``columns``.

    ``orders`` maps a column to the list of all its values, lowest first (required for text
    columns; allowed for any column, replacing its value order). NULL always sorts first and
    must not be listed. Reads the L × N integer codes in key order (``order_by`` from
    :func:`qar_sql.pushdown.record_keys.record_order`); refuses tables with L × N above
    :data:`qar_sql.pushdown.record_codes.MAX_CELLS`. Time grows with L × C(N, p).
    """
    columns = list(columns)
    orders = dict(orders or {})
    for name in orders:
        if name not in columns:
            raise ColumnError(
                f"an order is given for column {name!r}, which is not a quasi-identifier column "
                f"here; give orders only for: {', '.join(columns)}"
            )
    kinds = column_kinds(db, relation, columns)
    for name, kind in zip(columns, kinds):
        if kind == "nominal" and name not in orders:
            raise ColumnError(
                f"record entropy needs ordered values, and column {name!r} holds text (nominal) "
                f"values; give the order of its values, lowest first (--order '{name}=v1,v2,...'), "
                f"or leave it out with --exclude {name!r}"
            )
    n_rows = count_rows(db, relation)
    check_size(n_rows, len(columns), "record entropy", "columns")
    combos = combinations(len(columns), p)
    codes = fetch_codes(db, relation, columns, order_by)
    for k, name in enumerate(columns):
        if name in orders:
            codes[:, k] = _reorder(codes[:, k], name, value_codes(db, relation, name), orders[name])
    return entropy_from_codes(codes, combos, columns)


def _reorder(col: np.ndarray, name: str, coded: list[tuple[object, int]], order: Sequence) -> np.ndarray:
    """Codes of one column renumbered by the user's order (NULL, code −1, stays first)."""
    order = list(order)
    if any(v is None for v in order):
        raise ParameterError(f"the order of column {name!r} lists NULL; NULL always sorts first, leave it out")
    # A value matches an entry equal to it, else one with the same text, else (numbers) one
    # with the same numeric value: the CLI passes every entry as text ("2" matches 2.0).
    exact: dict = {}
    as_text: dict[str, int] = {}
    as_number: dict[float, int] = {}
    for position, v in enumerate(order):
        key = str(v)
        if key in as_text:
            raise ParameterError(f"the order of column {name!r} lists {v!r} twice; list each value once")
        as_text[key] = position
        if _hashable(v):
            exact[v] = position
        with contextlib.suppress(TypeError, ValueError):
            as_number.setdefault(float(v), position)
    remap = np.empty(len(coded) + 1, dtype=np.int64)
    remap[0] = -1  # NULL
    for value, code in coded:
        pos = exact.get(value) if _hashable(value) else None
        if pos is None:
            pos = as_text.get(str(value))
        if pos is None and kind_of(value) == "numeric":
            pos = as_number.get(float(value))  # type: ignore[arg-type]  # kind_of said numeric
        if pos is None:
            raise ColumnError(
                f"value {value!r} of column {name!r} is missing from the order given for it; "
                "list every value of the column, lowest first"
            )
        remap[code + 1] = pos
    return remap[col + 1]


def _hashable(v) -> bool:
    try:
        hash(v)
    except TypeError:
        return False
    return True


def entropy_from_codes(
    codes: np.ndarray, combos: Sequence[tuple[int, ...]], columns: Sequence[str] | None = None
) -> np.ndarray:
    """E(i) from an L × N matrix of ordinal integer codes (row r = record r; any integers whose
    order is the value order, NULL lowest). Pure numpy."""
    n_rows = codes.shape[0]
    n_qi = len(combos)
    n_bins = max(1, round(math.sqrt(n_qi)))
    if n_rows == 0:
        return np.zeros(0)
    # Dense ranks 0..k-1 per column: grid coordinates.
    ranks = np.empty(codes.shape, dtype=np.int64)
    cards = np.empty(codes.shape[1], dtype=np.int64)
    for k in range(codes.shape[1]):
        uniq, inv = np.unique(codes[:, k], return_inverse=True)
        ranks[:, k] = inv.reshape(-1)
        cards[k] = uniq.size
    bins = np.zeros((n_rows, n_bins), dtype=np.int64)
    rows = np.arange(n_rows)
    for combo in combos:
        cell, f_cell, w_cell = _cdf(ranks[:, combo], cards[list(combo)], combo, columns)
        # G in counts: records whose F is at most this cell's F.
        order = np.argsort(f_cell, kind="stable")
        f_sorted = f_cell[order]
        cum = np.cumsum(w_cell[order])
        g_cell = cum[np.searchsorted(f_sorted, f_cell, side="right") - 1]
        b = np.minimum(g_cell * n_bins // n_rows, n_bins - 1)
        bins[rows, b[cell]] += 1
    share = bins / n_qi
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(bins > 0, share * np.log(np.where(bins > 0, share, 1.0)), 0.0)
    return -terms.sum(axis=1) + 0.0  # + 0.0 turns −0.0 into 0.0


def _cdf(x: np.ndarray, cards: np.ndarray, combo, columns) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(cell of each record, F count of each cell, records per cell) for one QI; F count =
    records whose coordinates are all ≤ the cell's."""
    n_cells = math.prod(int(c) for c in cards)
    if n_cells <= GRID_CELLS:
        packed = np.ravel_multi_index(tuple(x.T), tuple(int(c) for c in cards))
        counts = np.bincount(packed, minlength=n_cells)
        grid = counts.reshape(tuple(int(c) for c in cards))
        for axis in range(grid.ndim):
            grid = np.cumsum(grid, axis=axis)
        present = np.flatnonzero(counts)
        lookup = np.zeros(n_cells, dtype=np.int64)
        lookup[present] = np.arange(present.size)
        return lookup[packed], grid.ravel()[present], counts[present]
    uniq, inv, w = np.unique(x, axis=0, return_inverse=True, return_counts=True)
    if uniq.shape[0] > PAIRWISE_CELLS:
        names = ", ".join(repr(columns[i]) for i in combo) if columns else str(combo)
        raise DataError(
            f"record entropy needs the joint CDF of quasi-identifier ({names}): its columns have "
            f"{n_cells:,} value combinations, {uniq.shape[0]:,} of which occur, too many to "
            f"count (limits {GRID_CELLS:,} and {PAIRWISE_CELLS:,}); recode these columns into "
            "fewer categories or use a smaller -p"
        )
    f = np.empty(uniq.shape[0], dtype=np.int64)
    step = max(1, 20_000_000 // (uniq.shape[0] * uniq.shape[1]))
    for start in range(0, uniq.shape[0], step):
        below = (uniq[None, :, :] <= uniq[start : start + step, None, :]).all(axis=2)
        f[start : start + step] = below @ w
    return inv.reshape(-1), f, w
