"""The PLS predictor of sign(DT): features, split, scores and AUC against an independent build.

The oracle builds the feature matrix in plain Python from the key-ordered rows (numeric values
with mean-imputed NULLs and an "is NULL" indicator, other columns as value-order codes with
NULL = −1, everything standardised), fits scikit-learn's PLSRegression on the documented split,
and computes the AUC by counting concordant pairs (Mann–Whitney), not with scikit-learn.
"""

from __future__ import annotations

import random
import sys

import numpy as np
import pytest

from qar_sql.commands.records import contributions
from qar_sql.engines.source import open_source
from qar_sql.errors import DataError, ParameterError, UsageError
from qar_sql.ranking import pls
from qar_sql.ranking.records import record_order

KEY = "id; ü"
NUM, DBL, FLAG, TXT, TXT2 = 'n"um', "dbl val", "select", "t;xt", "ünï"
COLS = [NUM, DBL, FLAG, TXT, TXT2]


def make_table(n=120, seed=2):
    rng = random.Random(seed)
    data = {
        NUM: [rng.choice([None, -3, 0, 7, 12, 40]) for _ in range(n)],
        DBL: [rng.choice([0.5, 2.25, -1.0, 9.5]) for _ in range(n)],
        FLAG: [rng.choice([True, False, None]) for _ in range(n)],
        # Plain lowercase letters: the same order under any collation.
        TXT: [rng.choice([None, "p", "q", "r", "s", "t"]) for _ in range(n)],
        TXT2: [rng.choice(["a", "b"]) for _ in range(n)],
    }
    data[KEY] = rng.sample(range(10_000), n)
    types = {NUM: "bigint", DBL: "double precision", FLAG: "boolean", TXT: "text", TXT2: "text", KEY: "bigint"}
    return data, types


def oracle_features(rows):
    cols = []
    for k, name in enumerate(COLS):
        values = [r[k] for r in rows]
        if name in (NUM, DBL):
            present = [float(v) for v in values if v is not None]
            mean = sum(present) / len(present)
            parts = [[mean if v is None else float(v) for v in values]]
            if len(present) < len(values):
                parts.append([1.0 if v is None else 0.0 for v in values])
        else:
            distinct = sorted({v for v in values if v is not None})
            parts = [[-1.0 if v is None else float(distinct.index(v)) for v in values]]
        for part in parts:
            x = np.array(part)
            cols.append((x - x.mean()) / x.std())
    return np.column_stack(cols)


def mann_whitney_auc(y, s):
    pos = [v for v, t in zip(s, y) if t]
    neg = [v for v, t in zip(s, y) if not t]
    wins = sum((a > b) + 0.5 * (a == b) for a in pos for b in neg)
    return wins / (len(pos) * len(neg))


def run(source, table, dt, seed=0):
    db, relation = open_source(source, table=table)
    with db:
        order_by, _ = record_order(db, relation, [KEY], COLS)
        return pls.pls_scores(db, relation, COLS, order_by, dt, seed=seed)


def test_scores_and_auc_equal_an_independent_build(engine):
    from sklearn.cross_decomposition import PLSRegression

    data, types = make_table()
    source, table = engine.load("people", data, types)
    contrib = contributions(source, table=table, columns=COLS, key=[KEY], p=2, pi_u=0.2)
    dt = contrib.dt
    y = dt > 0
    assert 0 < y.sum() < len(y)  # both classes: something to predict

    res = run(source, table, dt, seed=3)
    order = sorted(range(len(data[KEY])), key=lambda i: data[KEY][i])
    rows = [tuple(data[c][i] for c in COLS) for i in order]
    x = oracle_features(rows)
    assert res.features == (NUM, f"{NUM} is NULL", DBL, FLAG, TXT, TXT2)

    perm = np.random.default_rng(3).permutation(np.flatnonzero(~np.isnan(dt)))
    n_train = round(0.75 * perm.size)
    train, test = np.sort(perm[:n_train]), np.sort(perm[n_train:])
    model = PLSRegression(n_components=3, scale=False).fit(x[train], y[train].astype(float))
    want = model.predict(x).reshape(-1)
    np.testing.assert_allclose(res.scores, want, rtol=1e-9, atol=1e-12)
    assert (res.n_train, res.n_test, res.n_components) == (train.size, test.size, 3)
    assert res.auc == pytest.approx(mann_whitney_auc(y[test], res.scores[test]), abs=1e-12)
    assert res.auc_train == pytest.approx(mann_whitney_auc(y[train], res.scores[train]), abs=1e-12)


def test_same_seed_same_split_other_seed_other_split(duck):
    data, types = make_table(n=80, seed=5)
    source, table = duck.load("people", data, types)
    dt = np.array([(-1.0) ** i * (i % 7) for i in range(80)])
    a, b, c = run(source, table, dt, seed=1), run(source, table, dt, seed=1), run(source, table, dt, seed=2)
    np.testing.assert_array_equal(a.scores, b.scores)
    assert a.auc == b.auc
    assert not np.array_equal(a.scores, c.scores)


def test_single_class_and_bad_length_are_refused():
    x = np.random.default_rng(0).normal(size=(20, 3))
    with pytest.raises(DataError, match="DT > 0 and with DT ≤ 0"):
        pls.fit_scores(x, np.ones(20))
    with pytest.raises(ParameterError, match="one DT per record"):
        pls.fit_scores(x, np.ones(19))


def test_undefined_dt_left_out_but_scored():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(40, 4))
    dt = np.where(x[:, 0] > 0, 1.0, -1.0)
    dt[:5] = np.nan
    res = pls.fit_scores(x, dt)
    assert res.n_train + res.n_test == 35 and np.isfinite(res.scores).all() and res.auc > 0.9


def test_missing_scikit_learn_says_how_to_install(monkeypatch):
    for name in [m for m in sys.modules if m == "sklearn" or m.startswith("sklearn.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "sklearn", None)  # import sklearn now raises ImportError
    with pytest.raises(UsageError, match=r"pip install 'qar-sql\[pls\]'"):
        pls.fit_scores(np.zeros((4, 1)), np.array([1.0, -1, 1, -1]))
