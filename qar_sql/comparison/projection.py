"""The space records are compared in: saiph's FAMD fitted on the original table, exactly.

Numeric columns are continuous, the others categorical. saiph picks the method from the
column kinds as its ``fit`` does: FAMD for a mix, PCA when every column is numeric, MCA when
every column is categorical (FAMD reduces to those two).

**Exact and reproducible.** ``saiph.fit`` switches to an unseeded randomized SVD when fewer than
80 % of the components are asked for, so two runs can disagree (0.963 and 0.964 for the hidden
rate of a real avatar pair whose exact figure is 0.942). The fit here is saiph's two-pass
streaming fit (:class:`saiph.ScalingAccumulator` then :class:`saiph.DecompositionAccumulator`):
pass 1 accumulates means, standard deviations and modality counts; pass 2 folds each scaled
batch into a carried QR factor ``R`` (tall-skinny QR) and ends with a *full*
``numpy.linalg.svd(R)``, of which the first N axes are kept. ``R`` has the singular values and
right singular vectors of the whole scaled table, so the axes are those of a whole-table exact
SVD, computed from batches: the table is never held in memory, and the same data always gives
the same axes (signs fixed by ``svd_flip``).

**NULL.** In a categorical column a NULL is a category of its own. In a numeric column it is
replaced by the original's mean (saiph's pass 1 skips NULLs, so mean and standard deviation are
those of the non-NULL values): a NULL then scales to 0, the column's centre, and moves the
record along no axis of that column. With ``impute="mean"`` (the Avatar paper's pipeline: the
mean imputed first, then the column standardised) the standard deviation is that of the
imputed column, over every row: the non-NULL values' population variance times the share of
rows that have one (an imputed value adds 0 to the sum of squares). NULL still scales to 0; the
column's other values spread further, so it weighs more in the projection.

**Categories.** Values are compared as canonical text: ``2``, ``2.0`` and ``Decimal('2')`` are one
category, so an integer column in one table and a float column in the other still match.
A treated value the original never had scales like an absent modality (all of that column's
indicators 0), as in ``saiph.transform``.

**Transform.** Coordinates are computed here from the fitted model rather than by
``saiph.transform``: a record's coordinates are a constant plus one axis row per numeric value
and one table row per category, summed in a fixed order with elementwise numpy operations.
Each record's coordinates therefore depend on its own values only, bit for bit — identical
records get identical coordinates, whichever batch they arrive in, so a duplicate is an exact
tie — and no DataFrame of dummies is built. Tests check the result against ``saiph.transform``.
"""

from __future__ import annotations

import math
import numbers
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import numpy as np

from qar_sql.errors import DataError, ParameterError
from qar_sql.parameters.release import IMPUTE

# pandas and saiph (the [compare] extra) are imported where they are used, not here: importing
# this module costs neither their load time nor, without the extra, an ImportError
# (qar_sql.compare() and the CLI check the extra first thing: one sentence naming it, exit 2).
if TYPE_CHECKING:
    import pandas as pd

#: What a batch of rows is, here: column name → numpy array (NaN or None is NULL).
Batch = Mapping[str, np.ndarray]
Batches = Callable[[], Iterable[Batch]]

#: The token of a NULL category. Every real value's token starts with "=", so no value can
#: collide with it.
NULL_TOKEN = "NULL"

#: saiph's separator between a column name and a modality in its dummy-column names.
_SEP = "___"


def value_token(value: Any) -> str:
    """The canonical text of one categorical value (``NULL_TOKEN`` for None or NaN)."""
    if type(value) is str:  # the common case first: text columns
        return f"={value}"
    if value is None:
        return NULL_TOKEN
    if isinstance(value, (bool, np.bool_)):
        return "=true" if value else "=false"
    if isinstance(value, (numbers.Integral, np.integer)):
        return f"={int(value)}"
    if isinstance(value, (float, np.floating, Decimal)):
        if isinstance(value, Decimal) and not value.is_finite():
            return NULL_TOKEN if value.is_nan() else f"={value}"
        as_float = float(value)
        if math.isnan(as_float):
            return NULL_TOKEN
        if isinstance(value, Decimal) and value == value.to_integral_value():
            return f"={int(value)}"
        if as_float.is_integer() and abs(as_float) < 2**53:
            return f"={int(as_float)}"
        return f"={as_float!r}"
    if isinstance(value, bytes):
        return "=" + value.hex()
    return f"={value}"


def factorize(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(codes, tokens): each row's index into ``tokens``, the batch's distinct canonical tokens.

    The tokens are computed once per distinct value (pandas' hash factorisation), so a column of
    a million rows costs one hash pass and a few Python calls.
    """
    import pandas as pd

    codes, uniques = pd.factorize(np.asarray(values), use_na_sentinel=True)
    tokens = [value_token(u) for u in uniques]
    tokens.append(NULL_TOKEN)  # code -1 → the last entry
    # Two distinct values can share a token (2 and 2.0 in one object column): merge them.
    distinct, first = np.unique(np.array(tokens, dtype=object), return_inverse=True)
    return first[codes].astype(np.int64), distinct


def category_tokens(values: np.ndarray) -> np.ndarray:
    """Each row's canonical token, as an object array (what saiph sees)."""
    codes, tokens = factorize(values)
    return tokens[codes]


@dataclass(frozen=True, eq=False)
class Projection:
    """A fitted projection: column kinds, the model's constants, and how to place a record."""

    columns: tuple[str, ...]
    numeric: tuple[str, ...]
    categorical: tuple[str, ...]
    method: str  # "famd", "pca" or "mca", saiph's name
    rows: int  # records the projection was fitted on
    components: int
    max_components: int
    explained_variance_ratio: np.ndarray  # of each kept axis, against the total variance
    mean: np.ndarray  # per numeric column, over its non-NULL values
    scale: np.ndarray  # per numeric column: the standard deviation (1 where it is 0)
    numeric_axes: np.ndarray  # (numeric columns × components)
    levels: dict[str, dict[str, int]] = field(repr=False)  # column → token → row of its table
    tables: dict[str, np.ndarray] = field(repr=False)  # column → (levels + 1) × components
    constant: np.ndarray = field(repr=False)  # (components,)

    def transform(self, batch: Batch) -> np.ndarray:
        """The coordinates (rows × components) of a batch with this projection's columns."""
        n = _batch_length(batch, self.columns)
        out = np.empty((n, self.components))
        out[:] = self.constant
        for j, col in enumerate(self.numeric):
            x = np.asarray(batch[col], dtype=np.float64)
            z = np.where(np.isnan(x), 0.0, (x - self.mean[j]) / self.scale[j])
            out += z[:, None] * self.numeric_axes[j][None, :]
        seen = np.zeros(n, dtype=np.int64)
        for col in self.categorical:
            rows = self._level_rows(col, batch[col])
            seen += rows < len(self.levels[col])
            out += self.tables[col][rows]
        if self.method == "mca":
            # MCA places a record at the mean of its categories' points (its row profile).
            with np.errstate(invalid="ignore", divide="ignore"):
                out /= np.where(seen > 0, seen, 1)[:, None]
        return out

    def _level_rows(self, col: str, values: np.ndarray) -> np.ndarray:
        codes, tokens = factorize(values)
        known = self.levels[col]
        unseen = len(known)  # the table's last row: zeros
        lut = np.array([known.get(t, unseen) for t in tokens], dtype=np.int64)
        return lut[codes]


def _batch_length(batch: Batch, columns: Sequence[str]) -> int:
    lengths = {len(batch[c]) for c in columns}
    if len(lengths) != 1:
        raise ValueError(f"the batch's columns have different lengths: {sorted(lengths)}")
    return lengths.pop()


def _frame(
    batch: Batch, numeric: Sequence[str], categorical: Sequence[str], fill: Mapping[str, float] | None
) -> pd.DataFrame:
    """The batch as saiph reads it: numeric float64 (NULLs filled when ``fill`` is given),
    categorical as canonical tokens (object)."""
    import pandas as pd

    data: dict[str, Any] = {}
    for col in numeric:
        x = np.asarray(batch[col], dtype=np.float64)
        data[col] = np.where(np.isnan(x), fill[col], x) if fill is not None else x
    for col in categorical:
        data[col] = category_tokens(batch[col])
    return pd.DataFrame(data, columns=[*numeric, *categorical])


#: The axes kept when none are asked for: the Avatar paper's setting, or fewer when the columns
#: allow fewer (a table of 3 numeric columns has 3 axes).
DEFAULT_COMPONENTS = 5

#: How the option is spelled in messages: on the command line, and to a Python caller.
CLI_OPTION, API_KEYWORD = "--components {}", "components={!r}"


def resolve_components(
    requested: int | str | None, max_components: int, *, cap: bool, what: str, spelled: str = CLI_OPTION
) -> int:
    """The number of axes to keep: ``requested`` ("all" or a positive integer) against what the
    columns allow. Over the maximum is an error, or capped when ``cap``; ``None`` is
    :data:`DEFAULT_COMPONENTS` capped. ``spelled`` formats the option in messages."""
    if max_components < 1:
        raise DataError(
            f"{what} give no axis to compare records on (one record, or nothing varies); compare tables with at least 2 records"
        )
    if isinstance(requested, str):
        if requested.strip().lower() != "all":
            try:
                requested = int(requested)
            except ValueError:
                raise ParameterError(
                    f"{spelled.format(requested)} is not a number; give a positive integer or 'all'"
                ) from None
        else:
            return max_components
    if requested is None:
        return min(DEFAULT_COMPONENTS, max_components)
    if requested < 1:
        raise ParameterError(f"{spelled.format(requested)} must be at least 1; give a positive integer or 'all'")
    if requested > max_components:
        if cap:
            return max_components
        raise ParameterError(
            f"{spelled.format(requested)} is more than the {max_components} axes {what} allow; "
            f"use at most {max_components}, or 'all'"
        )
    return int(requested)


class ProjectionFit:
    """One projection being fitted: feed every batch to ``first_pass``, call ``end_first_pass``,
    feed the same batches to ``second_pass``, then ``result``. Several fits can share the two
    passes over the table (the comparison fits three projections in the same reads).

    Pass 1 is saiph's :class:`~saiph.ScalingAccumulator`. Pass 2 accumulates the cross-product
    (Gram) matrix of saiph's scaled table from the records' codes (see :class:`_Gram`), and the
    axes are its exact eigendecomposition; ``decomposition="qr"`` uses saiph's
    :class:`~saiph.DecompositionAccumulator` instead (the tests check both agree).
    """

    def __init__(
        self,
        numeric: Sequence[str],
        categorical: Sequence[str],
        components: int | str | None = None,
        *,
        cap: bool = False,
        what: str = "the columns",
        decomposition: str = "gram",
        impute: str = "none",
        spelled: str = CLI_OPTION,
    ) -> None:
        from saiph import ScalingAccumulator  # saiph imports pandas/scikit-learn: load on use

        self.numeric, self.categorical = tuple(numeric), tuple(categorical)
        if not self.numeric and not self.categorical:
            raise ParameterError("no columns to compare records on; name at least one with --columns")
        if decomposition not in ("gram", "qr"):
            raise ValueError(f"decomposition {decomposition!r} is 'gram' or 'qr'")
        if impute not in IMPUTE:
            raise ParameterError(f"--impute {impute!r} is unknown; use one of {', '.join(IMPUTE)}")
        self.requested, self.cap, self.what, self.spelled = components, cap, what, spelled
        self.decomposition = decomposition
        self.impute = impute
        self._present = np.zeros(len(self.numeric))  # non-NULL values per numeric column
        self._scaling = ScalingAccumulator()
        self._rows = 0
        self._params: Any = None
        self._fill: dict[str, float] = {}
        self._accumulator: Any = None
        self.components = 0

    def first_pass(self, batch: Batch) -> None:
        frame = _frame(batch, self.numeric, self.categorical, None)
        self._rows += len(frame)
        self._scaling.partial_fit(frame)
        if self.numeric:
            self._present += frame[list(self.numeric)].notna().sum(axis=0).to_numpy(dtype=np.float64)

    def missing_numeric(self) -> dict[str, int]:
        """{numeric column: its NULL values} over the fitted rows, for the columns that have any."""
        return {c: int(self._rows - k) for c, k in zip(self.numeric, self._present) if self._rows - k > 0}

    def end_first_pass(self) -> None:
        """Fix the scaling constants and the number of axes (errors on bad --components here)."""
        from saiph import DecompositionAccumulator

        if self._rows == 0:  # saiph would raise a bare ValueError
            raise DataError(
                f"{self.what} have no records to fit a projection on; compare tables with at least 2 records"
            )
        self._params = self._scaling.finalize()
        if self.impute == "mean" and self.numeric:
            # The imputed column's population variance: Σ(x − m)² over the present values
            # (an imputed m adds 0) divided by every row, not by the present ones.
            import pandas as pd

            share = pd.Series(self._present / self._rows, index=list(self.numeric))
            std = self._params.std.copy()
            std[list(self.numeric)] = std[list(self.numeric)] * np.sqrt(share)
            self._params.std = std
        self.components = resolve_components(
            self.requested, int(self._params.max_rank), cap=self.cap, what=self.what, spelled=self.spelled
        )
        self._fill = {c: float(self._params.mean[c]) for c in self.numeric}
        if self.decomposition == "qr":
            self._accumulator = DecompositionAccumulator(self._params, nf=self.components)
        else:
            self._accumulator = _Gram(self._params, self.numeric, self.categorical)

    def second_pass(self, batch: Batch) -> None:
        if self.decomposition == "qr":
            self._accumulator.partial_fit(_frame(batch, self.numeric, self.categorical, self._fill))
        else:
            self._accumulator.add(batch)

    def result(self) -> Projection:
        model = self._accumulator.finalize() if self.decomposition == "qr" else self._accumulator.model(self.components)
        return _from_model(model, self._params, self.numeric, self.categorical, self.components)


@dataclass
class _Axes:
    """What :func:`_from_model` reads of a saiph model."""

    V: np.ndarray
    explained_var_ratio: np.ndarray


class _Gram:
    """Pass 2 without the dense scaled table: the Gram matrix G = Zᵀ Z of saiph's weighted
    scaled matrix Z (what its QR factor R satisfies, Rᵀ R = G), from the records' codes.

    Why: a categorical column becomes one scaled column per category, so 18 columns of 2 to
    300 values make Z 959 columns wide; saiph's pass 2 builds that dense block per batch and
    folds it into R by a QR costing 2·n·959² flops (about ten minutes for a million rows
    here). Each row of Z is a few codes and numbers, so G is a sum of small tallies instead:
    Zᵀ Z of the numeric columns, per category the sum of each numeric column (a bincount), and
    per pair of categorical columns the co-occurrence counts (the Burt table, a bincount of the
    paired codes) — about n·c² operations for c columns. The right singular vectors and singular
    values of Z are the eigenvectors and the square roots of the eigenvalues of G, computed
    exactly by ``numpy.linalg.eigh`` (no randomisation; signs as saiph's ``svd_flip``).

    With every categorical value a category (NULL included) each row has one indicator per
    categorical column, which saiph's FAMD and MCA scalings turn into the closed forms below.
    """

    def __init__(self, params: Any, numeric: tuple[str, ...], categorical: tuple[str, ...]) -> None:
        self.params = params
        self.numeric = tuple(c for c in params.quanti)  # saiph's column order
        self.categorical = tuple(c for c in params.quali)
        self.n = int(params.n)
        owned = _modalities(params, self.categorical)
        # column → global scaled-column index per level
        self.index = {col: np.array([m for _, m in owned[col]], dtype=np.int64) for col in self.categorical}
        self.levels = {col: {tok: i for i, (tok, _) in enumerate(owned[col])} for col in self.categorical}
        self.mean, self.scale = _centre_and_scale(params, self.numeric)
        k = len(self.numeric)
        self.zz = np.zeros((k, k))
        self.zsum = np.zeros(k)
        self.zc: dict[tuple[int, str], np.ndarray] = {
            (j, c): np.zeros(len(self.index[c])) for j in range(k) for c in self.categorical
        }
        self.burt: dict[tuple[str, str], np.ndarray] = {
            (a, b): np.zeros((len(self.index[a]), len(self.index[b])), dtype=np.int64)
            for i, a in enumerate(self.categorical)
            for b in self.categorical[i:]
        }

    def add(self, batch: Batch) -> None:
        z = np.empty((_batch_length(batch, (*self.numeric, *self.categorical)), len(self.numeric)))
        for j, col in enumerate(self.numeric):
            x = np.asarray(batch[col], dtype=np.float64)
            z[:, j] = np.where(np.isnan(x), 0.0, (x - self.mean[j]) / self.scale[j])
        self.zz += z.T @ z
        self.zsum += z.sum(axis=0)
        codes = {}
        for col in self.categorical:
            c, tokens = factorize(batch[col])
            # Every level of the batch was counted in pass 1 (-1 only for tokens no row has).
            lut = np.array([self.levels[col].get(t, -1) for t in tokens], dtype=np.int64)
            codes[col] = lut[c]
        for (j, col), acc in self.zc.items():
            acc += np.bincount(codes[col], weights=z[:, j], minlength=len(acc))
        for (a, b), acc in self.burt.items():
            kb = acc.shape[1]
            acc += np.bincount(codes[a] * kb + codes[b], minlength=acc.size).reshape(acc.shape)

    def gram(self) -> np.ndarray:
        """G of saiph's weighted scaled matrix (``scaled · column_weights / n``)."""
        params, n = self.params, self.n
        k = len(self.numeric)
        size = params.n_scaled_columns
        counts = np.asarray(params.modality_counts, dtype=np.float64)  # in scaled order after the numeric
        G = np.zeros((size, size))
        if params.method == "mca":
            total = counts.sum()
            c = counts / total
            r = len(self.categorical) / total  # every row holds one category per column
            eps = np.finfo(float).eps
            denom_c = eps + np.sqrt(c)
            for (a, b), B in self.burt.items():
                ia, ib = self.index[a], self.index[b]
                ca, cb = c[ia - k], c[ib - k]
                block = B / total**2 - r * (np.outer(ca, counts[ib - k]) + np.outer(counts[ia - k], cb)) / total
                block += n * r**2 * np.outer(ca, cb)
                block /= (eps + np.sqrt(r)) ** 2 * np.outer(denom_c[ia - k], denom_c[ib - k])
                G[np.ix_(ia, ib)] = block
                G[np.ix_(ib, ia)] = block.T
        else:
            p = counts / n
            sq = np.sqrt(p)
            G[:k, :k] = self.zz
            for (j, col), acc in self.zc.items():
                ia = self.index[col]
                G[j, ia] = (acc - p[ia - k] * self.zsum[j]) / sq[ia - k]
                G[ia, j] = G[j, ia]
            for (a, b), B in self.burt.items():
                ia, ib = self.index[a], self.index[b]
                block = (B - n * np.outer(p[ia - k], p[ib - k])) / np.outer(sq[ia - k], sq[ib - k])
                G[np.ix_(ia, ib)] = block
                G[np.ix_(ib, ia)] = block.T
        w = np.asarray(params.column_weights, dtype=np.float64)
        return G * np.outer(w, w) / float(n) ** 2

    def model(self, components: int) -> _Axes:
        from saiph.reduction.utils.common import get_explained_variance

        G = self.gram()
        values, vectors = np.linalg.eigh(G)
        order = np.argsort(values)[::-1]
        S = np.sqrt(np.clip(values[order], 0.0, None))
        Vt = vectors[:, order].T
        # saiph's svd_flip(u_based_decision=False): each axis' largest entry is positive.
        Vt *= np.sign(Vt[np.arange(len(Vt)), np.argmax(np.abs(Vt), axis=1)])[:, None]
        if self.params.method != "mca":
            Vt = Vt / np.sqrt(np.asarray(self.params.column_weights, dtype=np.float64))
        _, ratio = get_explained_variance(S, self.n, components)
        return _Axes(V=Vt[:components], explained_var_ratio=np.asarray(ratio))


def fit_projections(batches: Batches, fits: Sequence[ProjectionFit]) -> list[Projection]:
    """Fit several projections in the same two passes over ``batches``.

    The linear algebra runs on one BLAS thread. Why: OpenBLAS' threads spin while they wait
    for each other, and on a machine busier than its cores the eigendecomposition of a
    959 × 959 Gram matrix took 10–15 s of wall time with two threads against 0.5 s with one
    (the matrices are small; threads gain little even on an idle machine). One thread also
    sums in the same order on every machine, so the axes do not depend on its number of cores.
    """
    from threadpoolctl import threadpool_limits

    for batch in batches():
        for f in fits:
            f.first_pass(batch)
    with threadpool_limits(limits=1, user_api="blas"):
        for f in fits:
            f.end_first_pass()
        for batch in batches():
            for f in fits:
                f.second_pass(batch)
        return [f.result() for f in fits]


def fit_projection(
    batches: Batches,
    numeric: Sequence[str],
    categorical: Sequence[str],
    components: int | str | None = None,
    *,
    cap: bool = False,
    what: str = "the columns",
) -> Projection:
    """Fit saiph's exact projection on the original's batches (called twice: one pass each).

    ``components`` is a positive integer or ``"all"`` (``None``: 5, or fewer when the columns
    allow fewer); more than the columns allow is a
    :class:`ParameterError`, unless ``cap`` (then the maximum is used). ``what`` names the
    columns in that message.
    """
    return fit_projections(batches, [ProjectionFit(numeric, categorical, components, cap=cap, what=what)])[0]


def _from_model(model: Any, params: Any, numeric: tuple[str, ...], categorical: tuple[str, ...], k: int) -> Projection:
    V = np.asarray(model.V, dtype=np.float64)  # (k × scaled columns): numeric first, then modalities
    position = {name: i for i, name in enumerate(params.quanti)}
    offset = len(params.quanti)
    mean, scale = _centre_and_scale(params, numeric)
    numeric_axes = np.array([V[:, position[c]] for c in numeric]).reshape(len(numeric), k)

    constant = np.zeros(k)
    levels: dict[str, dict[str, int]] = {}
    tables: dict[str, np.ndarray] = {}
    if params.method == "mca":
        c_mass = params.column_masses
        weight = 1.0 / (np.finfo(float).eps + np.sqrt(c_mass))  # saiph's D_c
    else:
        prop = np.asarray(params.prop, dtype=np.float64)
    owned = _modalities(params, categorical)
    for col in categorical:
        table = np.zeros((len(owned[col]) + 1, k))  # the last row: a value the original never had
        lv: dict[str, int] = {}
        for row, (token, m) in enumerate(owned[col]):
            if params.method == "mca":
                table[row] = V[:, m] * weight[m - offset]
            else:
                p = prop[m - offset]
                table[row] = V[:, m] / math.sqrt(p)
                # (indicator − p)/√p summed over the column's modalities: the −√p parts are constant.
                constant -= math.sqrt(p) * V[:, m]
            lv[token] = row
        levels[col] = lv
        tables[col] = table

    return Projection(
        columns=(*numeric, *categorical),
        numeric=numeric,
        categorical=categorical,
        method=str(params.method),
        rows=int(params.n),
        components=k,
        max_components=int(params.max_rank),
        explained_variance_ratio=np.asarray(model.explained_var_ratio, dtype=np.float64)[:k],
        mean=mean,
        scale=scale,
        numeric_axes=numeric_axes,
        levels=levels,
        tables=tables,
        constant=constant,
    )


def _centre_and_scale(params: Any, numeric: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Each numeric column's mean and standard deviation in saiph's model (1 for a constant column,
    saiph's rule)."""
    std = np.array([float(params.std[c]) for c in numeric])
    return np.array([float(params.mean[c]) for c in numeric]), np.where(std <= sys.float_info.min, 1.0, std)


def _modalities(params: Any, categorical: Sequence[str]) -> dict[str, list[tuple[str, int]]]:
    """Each categorical column's (token, scaled-column index) of saiph's modalities, in its order."""
    owned: dict[str, list[tuple[str, int]]] = {c: [] for c in categorical}
    for i, modality in enumerate(params.modalities):
        name = str(modality)
        col = _owner(name, categorical)
        owned[col].append((name[len(col) + len(_SEP) :], len(params.quanti) + i))
    return owned


def _owner(name: str, categorical: Sequence[str]) -> str:
    """The categorical column a saiph dummy name ``column___token`` belongs to: the longest
    column name it starts with before the separator and a token (``a`` and ``a___b`` can both be
    columns)."""
    owners = []
    for col in categorical:
        rest = name[len(col) + len(_SEP) :]
        if name.startswith(f"{col}{_SEP}") and (rest == NULL_TOKEN or rest.startswith("=")):
            owners.append(col)
    return max(owners, key=len)
