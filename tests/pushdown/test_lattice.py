"""Cubes (lattice.py): the estimate against closed forms, the plan's bookkeeping, and the scan
with cubes against a brute-force oracle and against the scan without cubes, on both engines."""

from __future__ import annotations

import dataclasses
import itertools
import math
import random
from collections import Counter

import numpy as np
import pytest

from qar_sql.engines.source import open_source
from qar_sql.pushdown import lattice
from qar_sql.pushdown.scan import combinations, plan_cubes, scan
from tests.measures.test_audit import HOSTILE_TABLE, as_columns, random_table


def estimate_cells(freqs, columns, rows: int) -> float:
    """E[number of distinct cells] of ``columns`` under independence, one QI at a time: the
    convolution of its columns' log2 histograms, read through the presence curve."""
    dist = np.ones(1)
    for i in columns:
        dist = np.convolve(dist, lattice._column_dist(freqs[i], rows))
    return float(np.dot(dist, lattice._curve(rows, len(dist))))


def uniform(k: int, rows: int) -> dict[int, int]:
    """k values, each in rows / k records."""
    return {rows // k: k}


def test_estimate_matches_the_closed_form_for_uniform_independent_columns():
    # Probabilities that are powers of two fall exactly on the log2 bins, so the estimate is
    # the closed form E[D] = K (1 - exp(-L / K)) for K equally likely cells.
    rows = 2**14
    freqs = [uniform(2**4, rows), uniform(2**3, rows), uniform(2**6, rows), uniform(2**7, rows)]
    for cols in [(0,), (0, 1), (0, 1, 2), (1, 2, 3), (0, 1, 2, 3)]:
        k = math.prod((16, 8, 64, 128)[i] for i in cols)
        want = k * -math.expm1(-rows / k)
        assert estimate_cells(freqs, cols, rows) == pytest.approx(want, rel=1e-12)


def test_estimate_is_close_for_skewed_columns():
    # Two skewed columns (shares 1/2, 1/4, 1/8, ...): E[D] summed cell by cell, by hand.
    rows = 4096
    shares = [2.0**-i for i in range(1, 9)] + [2.0**-8]
    freq = dict(Counter(int(rows * s) for s in shares))
    want = sum(-math.expm1(-rows * a * b) for a in shares for b in shares)
    assert estimate_cells([freq, freq], (0, 1), rows) == pytest.approx(want, rel=1e-9)


def check_plan(plan: lattice.Plan, combos):
    covered = [j for c in plan.cubes for j in c.qis] + list(plan.direct)
    assert sorted(covered) == list(range(len(combos)))  # every QI exactly once
    for cube in plan.cubes:
        assert len(cube.qis) >= 2
        assert list(cube.columns) == sorted(set(cube.columns))
        assert all(set(combos[j]) <= set(cube.columns) for j in cube.qis)


@pytest.mark.parametrize("p", [1, 2, 3, 4])
def test_plan_counts_every_qi_once(p):
    rng = random.Random(p)
    rows = 100_000
    freqs = []
    for k in (2, 3, 4, 5, 7, 9, 12, 30, 80, 300):
        counts = Counter(rng.choices(range(k), weights=[1 / (i + 1) for i in range(k)], k=rows))
        freqs.append(dict(Counter(counts.values())))
    combos = combinations(len(freqs), p)
    plan = lattice.plan(freqs, rows, combos, beta=3.0)
    check_plan(plan, combos)
    if p >= 2:
        assert plan.cubes, "small columns should share cubes"
        # the plan never costs more than counting every QI from the table
        cost = rows * len(plan.direct) + sum(rows + 3.0 * c.cells + len(c.qis) * c.cells for c in plan.cubes)
        assert cost < rows * len(combos)
    # creating groups that cost a million row reads each: never worth a cube
    assert lattice.plan(freqs, rows, combos, beta=1e6).cubes == ()


def skewed_freqs(seed: int, rows: int, cards=(2, 3, 4, 5, 7, 9, 12, 30, 80, 300)) -> list[dict[int, int]]:
    rng = random.Random(seed)
    freqs = []
    for k in cards:
        counts = Counter(rng.choices(range(k), weights=[1 / (i + 1) for i in range(k)], k=rows))
        freqs.append(dict(Counter(counts.values())))
    return freqs


@pytest.mark.parametrize("p", [1, 2, 3, 4, 5])
def test_qi_cells_equal_each_qis_own_convolution(p):
    """The vectorised estimate (pairs and a Hankel matrix) equals the convolution of each QI's
    columns, QI by QI (estimate_cells), to rounding."""
    rows = 20_000
    freqs = skewed_freqs(p, rows)
    combos = combinations(len(freqs), p)
    want = [estimate_cells(freqs, c, rows) for c in combos]
    assert lattice.qi_cells(freqs, rows, combos) == pytest.approx(want, rel=1e-12)


def test_plan_without_small_columns_has_no_cubes():
    rows = 1000
    freqs = [uniform(500, rows)] * 5  # every pair is nearly a key
    assert lattice.plan(freqs, rows, combinations(5, 3), beta=3.0).cubes == ()


def histograms(rows, p):
    """Brute force: {combo: sorted (class size, classes)}."""
    out = {}
    for combo in itertools.combinations(range(len(rows[0])), p):
        sizes = Counter(Counter(tuple(r[i] for i in combo) for r in rows).values())
        out[combo] = tuple(sorted(sizes.items()))
    return out


@pytest.mark.parametrize("seed,p,n_rows", [(11, 2, 300), (12, 3, 300), (13, 4, 3000)])
def test_scan_with_cubes_equals_brute_force_and_plain_scan(engine, seed, p, n_rows):
    names, rows, types = random_table(seed, n_rows)
    source, table = engine.load(HOSTILE_TABLE, as_columns(names, rows), types)
    db, relation = open_source(source, table=table)
    with db:
        plain_dialect = dataclasses.replace(db.dialect, cube_beta=None)
        cube_dialect = dataclasses.replace(db.dialect, cube_beta=1.0)
        db.dialect = cube_dialect
        plan = plan_cubes(db, relation.sql, names, p)
        assert plan is not None and plan.cubes, "this table should be counted partly from cubes"
        with_cubes = scan(db, relation.sql, names, p, jobs=2)
        db.dialect = plain_dialect
        without = scan(db, relation.sql, names, p, jobs=2)
    want = histograms(rows, p)
    for a, b, combo in zip(with_cubes.qis, without.qis, combinations(len(names), p), strict=True):
        assert a.columns == tuple(names[i] for i in combo)
        assert a.class_sizes == b.class_sizes == want[combo], a.columns
    assert with_cubes.rows == without.rows == len(rows)


def test_postgresql_statements_with_cubes_hold_at_most_cube_batch_qis():
    """One statement per connection, but never more than CUBE_BATCH QIs: 6,325 QIs in one
    PostgreSQL statement (12,650 at p = 4 over two connections) grew a backend past 11 GB."""
    from qar_sql.engines.dialects import DIALECTS
    from qar_sql.pushdown import scan as scan_module

    rows = 20_000
    freqs = skewed_freqs(7, rows, cards=(2, 3, 4, 5, 2, 3, 4, 5, 6, 7, 2, 3, 4, 8))
    combos = combinations(len(freqs), 4)  # 1,001 QIs
    plan = lattice.plan(freqs, rows, combos, beta=3.0)
    assert plan.cubes
    cols = [f"c{i}" for i in range(len(freqs))]
    _, statements, batches, _ = scan_module.render_statements(DIALECTS["postgresql"], '"t"', cols, 4, jobs=1, plan=plan)
    assert sorted(q for b in batches for q in b) == sorted(combos)
    assert len(statements) == 2 and max(len(b) for b in batches) <= scan_module.CUBE_BATCH
