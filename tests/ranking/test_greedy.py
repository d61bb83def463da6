"""Proper (greedy) backward elimination against brute force.

The oracle deletes each remaining record in turn and recomputes every H from scratch with
``collections.Counter`` (NULL a value like any other), picks the largest DT (ties: earliest in
key order), and repeats. On real tables (DuckDB and PostgreSQL, hostile names, NULLs, a shuffled
key) every step's T̂ must also equal a from-scratch ``qar_sql.measures.audit`` of the reduced table, and
the first removal must be the argmax of the exact DT of ``qar_sql.commands.records.contributions``.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter

import numpy as np
import pytest
from conftest import Loader

import qar_sql
from qar_sql.commands.records import contributions
from qar_sql.engines.source import open_source
from qar_sql.errors import NoTailError, ParameterError, UsageError
from qar_sql.pushdown import record_codes
from qar_sql.ranking import greedy
from qar_sql.ranking.records import record_order
from qar_sql.stats import evt

COLS = ['a"b', "with space", "semi;colon", "dot.ted", "ünï©ødé"]
KEY = "the key; ü"
P, ALPHA, PI_U = 2, 0.01, 0.2


def oracle_risk(rows, combos, pi_u=PI_U):
    h = [len(Counter(tuple(r[k] for k in q) for r in rows)) for q in combos]
    try:
        return evt.qar_risk(np.array(h, dtype=float) / len(rows), len(rows), alpha=ALPHA, pi_u=pi_u).risk
    except NoTailError:
        return None


def oracle_greedy(rows, p, steps, pi_u=PI_U):
    """(removed positions, risks): brute force, every candidate re-audited from scratch; stops
    early when no removal leaves a tail."""
    combos = list(itertools.combinations(range(len(rows[0])), p))
    alive = list(range(len(rows)))
    risk = [oracle_risk(rows, combos, pi_u)]
    removed = []
    for _ in range(steps):
        best = None
        for i in alive:  # ascending r: a later record wins only with a strictly larger DT
            t = oracle_risk([rows[a] for a in alive if a != i], combos, pi_u)
            if t is not None and (best is None or risk[-1] - t > best[0]):
                best = (risk[-1] - t, i, t)
        if best is None:
            break
        removed.append(best[1])
        alive.remove(best[1])
        risk.append(best[2])
    return removed, risk


def python_codes(rows):
    """Codes as encode.sql defines them: values numbered in order, NULL = −1."""
    out = np.empty((len(rows), len(rows[0])), dtype=np.int64)
    for k in range(len(rows[0])):
        values = sorted({r[k] for r in rows if r[k] is not None})
        index = {v: c for c, v in enumerate(values)}
        out[:, k] = [-1 if r[k] is None else index[r[k]] for r in rows]
    return out


def make_table(n=80, seed=5):
    """5 columns with NULLs and ties, and a unique key in shuffled order."""
    rng = random.Random(seed)
    pools = [
        [None, 1, 2],
        [None, "x", "y", "z"],
        [0.5, 1.5, None, 2.5, 3.5],
        list(range(7)),
        [None, "é", "日本", "a b", "x'y", "q"],
    ]
    data = {c: [rng.choice(pool) for _ in range(n)] for c, pool in zip(COLS, pools)}
    data[KEY] = rng.sample(range(100_000), n)
    return data


def key_ordered_rows(data):
    order = sorted(range(len(data[KEY])), key=lambda i: data[KEY][i])
    return [tuple(data[c][i] for c in COLS) for i in order], [data[KEY][i] for i in order]


@pytest.mark.parametrize("seed, n_rows, n_cols, p", [(0, 40, 5, 2), (1, 36, 6, 3), (2, 50, 5, 3)])
def test_codes_elimination_equals_brute_force(seed, n_rows, n_cols, p):
    rng = random.Random(seed)
    cards = [2, 3, 5, 8, 4, 6][:n_cols]
    rows = [tuple(rng.choice([None] + list(range(c))) for c in cards) for _ in range(n_rows)]
    res = greedy.eliminate_codes(python_codes(rows), p, steps=8, alpha=ALPHA, pi_u=PI_U)
    want_removed, want_risk = oracle_greedy(rows, p, 8)
    assert list(res.removed) == want_removed
    np.testing.assert_allclose(res.risk, want_risk, rtol=1e-12)
    np.testing.assert_allclose(res.reduction, 1 - np.array(want_risk) / want_risk[0], rtol=1e-12, atol=1e-15)
    assert res.warnings == () and res.distinct_patterns > 1


@pytest.mark.parametrize("pwm", ["plotting", "unbiased"])
def test_pattern_risks_equal_the_full_estimator(pwm):
    rng = np.random.default_rng(7)
    for n_qi, m in [(30, 60), (120, 500), (220, 1000), (816, 100)]:
        for trial in range(3):
            h = rng.integers(2, m + 1, size=n_qi)
            h[:3] = m + 1  # keys: every record unique, so every mask has them
            if trial == 1:
                h[3 : n_qi // 3] = m  # massive ties at the top
            if trial == 2:
                h[:] = m // 2  # no tail for most patterns
            masks = rng.random((300, n_qi)) < 0.15
            masks[0] = False  # the empty pattern
            if trial != 2:
                masks[:, :3] = True
            for pi_u in (0.05, 0.2):
                full = evt.qar_risk_batch((h - masks) / m, m, alpha=ALPHA, pi_u=pi_u, pwm=pwm)
                got = greedy.pattern_risks(h, masks, m, alpha=ALPHA, pi_u=pi_u, pwm=pwm)
                np.testing.assert_array_equal(np.isnan(got), np.isnan(full))
                np.testing.assert_allclose(got, full, rtol=1e-13, equal_nan=True)
                assert trial != 2 or np.isnan(full).any()  # trial 2 covers the no-tail rows


def test_stops_when_no_removal_leaves_a_tail():
    rows = [
        (1, 3, 1, 2, 1),
        (1, 3, 0, 2, 1),
        (2, 3, 1, 2, 2),
        (1, 0, 2, 0, 3),
        (3, 3, 0, 3, 3),
        (2, 3, 3, 3, 0),
        (0, 1, 0, 2, 3),
        (2, 1, 2, 2, 3),
        (0, 3, 0, 2, 1),
        (3, 3, 0, 2, 0),
        (0, 1, 3, 0, 0),
        (3, 1, 0, 2, 1),
        (1, 1, 1, 3, 3),
        (1, 1, 2, 2, 2),
        (3, 0, 1, 3, 3),
        (1, 1, 3, 1, 1),
    ]
    res = greedy.eliminate_codes(python_codes(rows), 2, steps=14, alpha=ALPHA, pi_u=0.3)
    want_removed, want_risk = oracle_greedy(rows, 2, 14, pi_u=0.3)
    assert len(want_removed) == 10  # brute force finds no removal with a tail at step 11
    assert list(res.removed) == want_removed
    np.testing.assert_allclose(res.risk, want_risk, rtol=1e-12)
    assert res.warnings == (
        "greedy elimination stopped after 10 step(s): removing any of the remaining 6 records "
        "leaves no tail, so no DT is defined",
    )


def test_steps_are_checked():
    codes = python_codes([(i % 3, i % 5, i % 7) for i in range(20)])
    with pytest.raises(ParameterError, match="at most 18 steps"):
        greedy.eliminate_codes(codes, 1, steps=19, alpha=ALPHA, pi_u=0.3)
    with pytest.raises(ParameterError, match="at least 0"):
        greedy.eliminate_codes(codes, 1, steps=-1, alpha=ALPHA, pi_u=0.3)


def run_greedy(source, table, steps, key=(KEY,)):
    db, relation = open_source(source, table=table)
    with db:
        order_by, _ = record_order(db, relation, list(key), COLS)
        return greedy.greedy_elimination(db, relation, COLS, P, order_by, steps=steps, alpha=ALPHA, pi_u=PI_U)


def test_each_step_equals_a_from_scratch_audit(engine, tmp_path):
    data = make_table()
    source, table = engine.load("people; ü", data)
    steps = 6
    res = run_greedy(source, table, steps)
    assert len(res.removed) == steps and len(res.risk) == steps + 1 and res.seconds > 0

    # First step: the argmax of the exact DT (ties by key order).
    contrib = contributions(source, table=table, columns=COLS, key=[KEY], p=P, alpha=ALPHA, pi_u=PI_U)
    assert res.risk[0] == pytest.approx(contrib.audit.risk, rel=1e-14)
    assert res.removed[0] == contrib.order("dt")[0]
    assert res.risk[1] == pytest.approx(contrib.audit.risk - contrib.dt[res.removed[0]], rel=1e-12)

    # Same answer as the in-memory run on codes built in Python from the key-ordered rows
    # (so both engines agree), and as brute force.
    rows, keys = key_ordered_rows(data)
    mem = greedy.eliminate_codes(python_codes(rows), P, steps=steps, alpha=ALPHA, pi_u=PI_U)
    np.testing.assert_array_equal(res.removed, mem.removed)
    np.testing.assert_array_equal(res.risk, mem.risk)
    want_removed, want_risk = oracle_greedy(rows, P, steps)
    assert list(res.removed) == want_removed

    # Every step: audit the reduced table (the removed records deleted by key) from scratch.
    (tmp_path / "reduced").mkdir()
    loader = Loader("duckdb", tmp_path / "reduced")
    loader.load("people; ü", data)
    import duckdb

    for s in range(steps + 1):
        if s:
            con = duckdb.connect(loader.path)
            con.execute('delete from "people; ü" where "the key; ü" = ?', [keys[res.removed[s - 1]]])
            con.close()
        audit = qar_sql.audit(loader.path, table="people; ü", columns=COLS, p=P, alpha=ALPHA, pi_u=PI_U)
        assert audit.rows == len(rows) - s
        assert res.risk[s] == pytest.approx(audit.risk, rel=1e-12)
        assert res.risk[s] == pytest.approx(want_risk[s], rel=1e-12)


def test_file_source_uses_row_order(tmp_path):
    data = make_table(n=50, seed=9)
    rows = [tuple(data[c][i] for c in COLS) for i in range(50)]
    path = tmp_path / "people.parquet"
    (tmp_path / "db").mkdir()
    loader = Loader("duckdb", tmp_path / "db")
    loader.load("people", data)
    import duckdb

    con = duckdb.connect(loader.path, read_only=True)
    con.execute(f"copy (select * from people) to '{path}' (format parquet)")
    con.close()
    db, relation = open_source(str(path))
    with db:
        order_by, _ = record_order(db, relation, None, COLS)
        res = greedy.greedy_elimination(db, relation, COLS, P, order_by, steps=3, alpha=ALPHA, pi_u=PI_U)
    mem = greedy.eliminate_codes(python_codes(rows), P, steps=3, alpha=ALPHA, pi_u=PI_U)
    np.testing.assert_array_equal(res.removed, mem.removed)


def test_too_large_tables_are_refused_before_reading(duck, monkeypatch):
    source, table = duck.load("people", make_table(n=30))
    monkeypatch.setattr(record_codes, "MAX_CELLS", 299)  # 30 records × 10 QIs = 300 pairs
    with pytest.raises(UsageError, match=r"30 records × 10 quasi-identifiers = 300 pairs.*limit of 299"):
        run_greedy(source, table, 2)
