"""Record entropy E(i) against a brute-force O(L²) plain-Python oracle (METHOD §3).

The oracle compares values directly (NULL below every value; a text column by the position of
its value in the user's order), counts F and G record by record, and bins G·M in integers
(bins [k/M, (k+1)/M), the last one closed). Both engines must match it.
"""

from __future__ import annotations

import datetime as dt
import itertools
import math
import random

import numpy as np
import pytest

from qar_sql.engines.source import open_source
from qar_sql.errors import ColumnError, DataError, ParameterError
from qar_sql.ranking import entropy
from qar_sql.ranking.entropy import entropy_from_codes, entropy_scores
from qar_sql.ranking.records import record_order

KEY = "id; ü"
NUM, DBL, DAY, FLAG, TXT = 'n"um', "dbl val", "dä;y", "select", "size'txt"
TEXT_ORDER = ["small", "medium", "large", "x l"]


def oracle_entropy(rows, p, keys):
    """E per record; ``keys[k]`` maps a value of column k to a sortable key (NULL handled here)."""
    n = len(rows)
    combos = list(itertools.combinations(range(len(rows[0])), p))
    n_bins = round(math.sqrt(len(combos)))

    def sort_key(k, v):
        return (0, 0) if v is None else (1, keys[k](v))

    bins = [[0] * n_bins for _ in rows]
    for combo in combos:
        f = [
            sum(all(sort_key(k, rows[r][k]) <= sort_key(k, rows[i][k]) for k in combo) for r in range(n))
            for i in range(n)
        ]
        g = [sum(f[r] <= f[i] for r in range(n)) for i in range(n)]
        for i in range(n):
            bins[i][min(g[i] * n_bins // n, n_bins - 1)] += 1
    return [-sum(c / len(combos) * math.log(c / len(combos)) for c in b if c) for b in bins]


def test_hand_example():
    # One column, p = 1: N_p = 1, one bin, E = 0 for everyone.
    assert entropy_from_codes(np.array([[0], [1], [-1]]), [(0,)]).tolist() == [0.0, 0.0, 0.0]
    # Two columns, p = 1: N_p = 2, M = round(√2) = 1 bin: still 0.
    # Five columns, p = 1: M = 2. Record values x, y: G = rank share.
    codes = np.array([[0, 0, 0, 0, 0], [1, 1, 1, 1, 0], [2, 2, 0, 0, 1], [3, 0, 1, 1, 1]])
    # G per column (counts of F ≤ own F, of 4): col0: 1,2,3,4; col1: 2,3,4,2; col2/3: 2,4,2,4; col4: 2,2,4,4
    # bins (⌊G·2/4⌋, capped at 1): r0: 0,1,1,1,1 → p = (1/5, 4/5); r1: 1,1,1,1,1 → 0;
    # r2: 1,1,1,1,1 → 0; r3: 1,1,1,1,1 → 0.
    e = entropy_from_codes(codes, [(k,) for k in range(5)])
    want0 = -(0.2 * math.log(0.2) + 0.8 * math.log(0.8))
    assert e == pytest.approx([want0, 0.0, 0.0, 0.0], abs=1e-15)


@pytest.mark.parametrize("grid", [True, False])
@pytest.mark.parametrize("seed, p", [(0, 2), (1, 3)])
def test_codes_equal_oracle_grid_and_pairwise(monkeypatch, grid, seed, p):
    if not grid:
        monkeypatch.setattr(entropy, "GRID_CELLS", 1)  # force the pairwise path
    rng = random.Random(seed)
    rows = [tuple(rng.choice([None, 0, 1, 2, 5][: 2 + k]) for k in range(5)) for _ in range(45)]
    codes = np.array([[-1 if v is None else v for v in r] for r in rows])
    combos = list(itertools.combinations(range(5), p))
    want = oracle_entropy(rows, p, [lambda v: v] * 5)
    np.testing.assert_allclose(entropy_from_codes(codes, combos), want, rtol=0, atol=1e-13)


def make_table(n=40, seed=11):
    rng = random.Random(seed)
    data = {
        NUM: [rng.choice([None, -3, 0, 7, 12]) for _ in range(n)],
        DBL: [rng.choice([0.5, None, 2.25, -1.0]) for _ in range(n)],
        DAY: [rng.choice([None, dt.date(2020, 1, 5), dt.date(1999, 12, 31), dt.date(2024, 2, 29)]) for _ in range(n)],
        FLAG: [rng.choice([True, False, None]) for _ in range(n)],
        # Alphabetical order (large, medium, small, x l) differs from the given order.
        TXT: [rng.choice([None] + TEXT_ORDER) for _ in range(n)],
    }
    data[KEY] = rng.sample(range(1000), n)
    types = {NUM: "bigint", DBL: "double precision", DAY: "date", FLAG: "boolean", TXT: "text", KEY: "bigint"}
    return data, types


COLS = [NUM, DBL, DAY, FLAG, TXT]


def open_scores(source, table, columns, p, orders):
    db, relation = open_source(source, table=table)
    with db:
        order_by, _ = record_order(db, relation, [KEY], columns)
        return entropy_scores(db, relation, columns, p, order_by, orders=orders)


def test_entropy_equals_oracle_on_both_engines(engine):
    data, types = make_table()
    source, table = engine.load("my tablé", data, types)
    order = sorted(range(len(data[KEY])), key=lambda i: data[KEY][i])
    rows = [tuple(data[c][i] for c in COLS) for i in order]
    rank = {v: k for k, v in enumerate(TEXT_ORDER)}
    keys = [lambda v: v] * 4 + [rank.__getitem__]
    for p in (2, 3):
        got = open_scores(source, table, COLS, p, {TXT: TEXT_ORDER})
        np.testing.assert_allclose(got, oracle_entropy(rows, p, keys), rtol=0, atol=1e-13)
        assert got.max() > 0


def test_order_can_replace_a_numeric_order_given_as_text(duck):
    data, types = make_table(n=30, seed=4)
    source, table = duck.load("t", data, types)
    order = sorted(range(30), key=lambda i: data[KEY][i])
    rows = [tuple(data[c][i] for c in (NUM, DBL, FLAG)) for i in order]
    # The CLI passes values as text: "12" matches 12 and "2.250" matches 2.25. Reversed orders.
    num_order = ["12", "7", "0", "-3"]
    dbl_order = ["2.250", "0.5", "-1"]
    rank = {int(v): k for k, v in enumerate(num_order)}
    rank_dbl = {float(v): k for k, v in enumerate(dbl_order)}
    got = open_scores(source, table, [NUM, DBL, FLAG], 1, {NUM: num_order, DBL: dbl_order})
    want = oracle_entropy(rows, 1, [rank.__getitem__, rank_dbl.__getitem__, lambda v: v])
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-13)


def test_nominal_column_is_refused_with_its_name(engine):
    data, types = make_table(n=10)
    source, table = engine.load("t", data, types)
    with pytest.raises(ColumnError) as err:
        open_scores(source, table, COLS, 2, None)
    msg = str(err.value)
    assert repr(TXT) in msg and "nominal" in msg and "order of its values" in msg and "--exclude" in msg


@pytest.mark.parametrize(
    "orders, error, needle",
    [
        ({TXT: ["small", "medium", "large"]}, ColumnError, "'x l' of column"),
        ({TXT: TEXT_ORDER + ["small"]}, ParameterError, "twice"),
        ({TXT: [None] + TEXT_ORDER}, ParameterError, "NULL always sorts first"),
        ({TXT: TEXT_ORDER, "nope": [1]}, ColumnError, "'nope'"),
    ],
)
def test_bad_orders(duck, orders, error, needle):
    data, types = make_table(n=25)
    source, table = duck.load("t", data, types)
    with pytest.raises(error, match=needle):
        open_scores(source, table, COLS, 2, orders)


def test_grid_too_large_is_refused(monkeypatch):
    monkeypatch.setattr(entropy, "GRID_CELLS", 4)
    monkeypatch.setattr(entropy, "PAIRWISE_CELLS", 3)
    codes = np.array([[0, 0], [1, 1], [2, 0], [0, 2]])
    with pytest.raises(DataError, match=r"quasi-identifier \('a', 'b'\).*fewer categories"):
        entropy_from_codes(codes, [(0, 1)], ["a", "b"])
