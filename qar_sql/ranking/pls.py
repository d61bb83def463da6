"""The PLS predictor of sign(DT) (METHOD §3; the paper's §3.5).

PLS regression with 3 components (scikit-learn's ``PLSRegression``, the optional extra
``qar-sql[pls]``) of S(i) = 1(DT(i) > 0) on the record's standardised column values, fitted on a
seeded random 75% of the records; the score of a record is its prediction, and the AUC on the
other 25% (and on the training 75%) says how well it separates DT > 0 from DT ≤ 0.

Features, one or two per column, each standardised over all records (mean 0, standard deviation
1; constant features are dropped):

* numeric columns: the value (as a double); where a column has NULLs, NULL is imputed with the
  mean (0 after standardising) and a 0/1 "is NULL" feature is added;
* every other column (text, dates, booleans): its integer code, numbered in the engine's value
  order with NULL = −1 (the codes of ``encode.sql``) — arbitrary for nominal text, like any
  numeric coding of categories.

Records whose DT is undefined (NaN) are left out of the fit and of the AUCs; they still get a
score. Like greedy elimination and entropy, this reads per-record codes (and numeric values)
into memory (:mod:`.record_codes`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from qar_sql.engines.source import Database, Relation
from qar_sql.errors import DataError, ParameterError
from qar_sql.extras import require
from qar_sql.pushdown.record_codes import check_size, column_kinds, count_rows, fetch_codes, fetch_values

N_COMPONENTS = 3
TRAIN_SHARE = 0.75


@dataclass(frozen=True)
class PLSResult:
    """PLS scores per record in key order (index r), and the AUC on the 25% test split
    (``auc``) and on the 75% training split (``auc_train``); an AUC is None when its split
    holds records of one class only (see ``warnings``)."""

    scores: np.ndarray
    auc: float | None
    auc_train: float | None
    n_train: int
    n_test: int
    n_components: int
    features: tuple[str, ...]
    warnings: tuple[str, ...] = ()


def _sklearn():
    require("pls", "the PLS predictor")
    from sklearn.cross_decomposition import PLSRegression
    from sklearn.metrics import roc_auc_score

    return PLSRegression, roc_auc_score


def features(
    db: Database, relation: Relation, columns: Sequence[str], order_by: Sequence[str]
) -> tuple[np.ndarray, tuple[str, ...]]:
    """(L × F standardised feature matrix in key order, feature names); see the module doc."""
    columns = list(columns)
    kinds = column_kinds(db, relation, columns)
    numeric = [c for c, k in zip(columns, kinds) if k == "numeric"]
    coded = [c for c, k in zip(columns, kinds) if k != "numeric"]
    raw: dict[str, np.ndarray] = {}
    if numeric:
        values = fetch_values(db, relation, numeric, order_by)
        for k, name in enumerate(numeric):
            raw[name] = values[:, k]
    if coded:
        codes = fetch_codes(db, relation, coded, order_by)
        for k, name in enumerate(coded):
            raw[name] = codes[:, k].astype(float)
    return standardise(raw, columns)


def standardise(raw: dict[str, np.ndarray], columns: Sequence[str]) -> tuple[np.ndarray, tuple[str, ...]]:
    """Features from per-column float arrays (NaN = NULL), in column order. Pure numpy."""
    cols, names = [], []
    for name in columns:
        x = raw[name]
        null = np.isnan(x)
        parts = [(name, x)]
        if null.any():
            filled = x.copy()
            filled[null] = x[~null].mean() if (~null).any() else 0.0
            parts = [(name, filled), (f"{name} is NULL", null.astype(float))]
        for label, v in parts:
            sd = v.std()
            if sd > 0:
                cols.append((v - v.mean()) / sd)
                names.append(label)
    n = len(next(iter(raw.values()))) if raw else 0
    matrix = np.column_stack(cols) if cols else np.zeros((n, 0))
    return matrix, tuple(names)


def fit_scores(x: np.ndarray, dt: np.ndarray, *, seed: int = 0, names: tuple[str, ...] = ()) -> PLSResult:
    """PLS fit of 1(DT > 0) on features ``x`` (rows = records). Pure numpy + scikit-learn."""
    PLSRegression, roc_auc_score = _sklearn()
    dt = np.asarray(dt, dtype=float)
    if dt.ndim != 1 or dt.shape[0] != x.shape[0]:
        raise ParameterError(
            f"dt has {dt.shape[0] if dt.ndim == 1 else dt.shape} values for {x.shape[0]} records; "
            "pass one DT per record, in key order"
        )
    if x.shape[1] == 0:
        raise DataError(
            "the PLS predictor has no features: every column is constant; name varying columns with --columns"
        )
    defined = np.flatnonzero(~np.isnan(dt))
    y = (dt > 0).astype(float)
    positives = int(y[defined].sum())
    if positives in (0, defined.size):
        raise DataError(
            f"the PLS predictor needs records with DT > 0 and with DT ≤ 0, but all {defined.size} "
            f"records with a defined DT have DT {'> 0' if positives else '≤ 0'}; there is nothing to predict"
        )
    rng = np.random.default_rng(seed)
    perm = rng.permutation(defined)
    n_train = min(max(int(round(TRAIN_SHARE * perm.size)), 2), perm.size - 1)
    train, test = np.sort(perm[:n_train]), np.sort(perm[n_train:])
    if np.ptp(y[train]) == 0:
        raise DataError(
            f"the random 75% training split (seed {seed}) holds records of one class only "
            f"(DT {'> 0' if y[train][0] else '≤ 0'}); the table has too few records of the other "
            "class for the PLS predictor, try another seed"
        )
    n_comp = min(N_COMPONENTS, x.shape[1], train.size - 1)
    warnings = []
    if n_comp < N_COMPONENTS:
        warnings.append(
            f"PLS used {n_comp} component(s), not {N_COMPONENTS}: there are only {x.shape[1]} varying features"
        )
    model = PLSRegression(n_components=n_comp, scale=False)
    model.fit(x[train], y[train])
    scores = np.asarray(model.predict(x)).reshape(-1)

    def auc(idx, label):
        if np.ptp(y[idx]) == 0:
            warnings.append(f"the {label} split holds records of one class only, so its AUC is undefined")
            return None
        return float(roc_auc_score(y[idx], scores[idx]))

    return PLSResult(
        scores=scores, auc=auc(test, "25% test"), auc_train=auc(train, "75% training"), n_train=int(train.size),
        n_test=int(test.size), n_components=int(n_comp), features=tuple(names), warnings=tuple(warnings),
    )  # fmt: skip


def pls_scores(
    db: Database, relation: Relation, columns: Sequence[str], order_by: Sequence[str], dt: np.ndarray, *, seed: int = 0
) -> PLSResult:
    """Scores of the PLS predictor of sign(DT) for every record (key order), with its AUC on a
    seeded 75/25 split. ``dt`` is DT per record in key order (``Contributions.dt``);
    ``order_by`` from :func:`qar_sql.pushdown.record_keys.record_order`. Needs ``pip install 'qar-sql[pls]'``."""
    _sklearn()  # fail before reading anything
    n_rows = count_rows(db, relation)
    check_size(n_rows, len(columns), "the PLS predictor", "columns")
    x, names = features(db, relation, columns, order_by)
    return fit_scores(x, dt, seed=seed, names=names)
