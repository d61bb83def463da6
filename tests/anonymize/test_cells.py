"""Nodes grouped from the frequency table's cells in memory (size-only models) against the same
nodes grouped in SQL: the same classes, violators and suppressed values, on every engine; and a
key range wide enough to need compacting (a lattice whose codes overflow 63 bits as one key)."""

from __future__ import annotations

import random

import pytest

from qar_sql.anonymization.evaluate import evaluator
from qar_sql.anonymization.hierarchy import CsvHierarchy, read_hierarchy_dir
from qar_sql.anonymization.models import KAnonymity, NoSingletons
from qar_sql.anonymization.search import anonymize_session
from tests.anonymize.fixtures import ADULT_HIERARCHIES, ENGINES, need_adult


def _same(sql, mem) -> None:
    for e, f in zip(sql, mem, strict=True):
        assert e.levels == f.levels and e.violating == f.violating and e.k == f.k
        assert e.classes.sizes.tolist() == f.classes.sizes.tolist()
        assert e.classes.classes.tolist() == f.classes.classes.tolist()
        assert e.classes.suppressed.tolist() == f.classes.suppressed.tolist()
        assert e.classes.suppressed_values == f.classes.suppressed_values


@pytest.mark.parametrize("engine", ENGINES)
def test_cells_group_as_sql_on_adult(adult, engine):
    need_adult()
    hs = read_hierarchy_dir(ADULT_HIERARCHIES)
    session = adult(engine)
    models = [KAnonymity(k=5)]
    with evaluator(session, hs, models, cells=0) as a, evaluator(session, hs, models) as b:
        assert a._cells is None and b._cells is not None
        rng = random.Random(7)
        nodes = [tuple(rng.randrange(h) for h in a.heights) for _ in range(24)]
        nodes += [tuple(0 for _ in a.heights), tuple(h - 1 for h in a.heights)]
        for values in (False, True):
            _same(a.evaluate(nodes, values=values), b.evaluate(nodes, values=values))


def test_cells_limit_and_models(adult):
    need_adult()
    hs = read_hierarchy_dir(ADULT_HIERARCHIES)
    session = adult("duckdb")
    with evaluator(session, hs, [KAnonymity(k=5)], cells=1000) as ev:
        assert ev._cells is None  # 19,502 cells: above the limit, grouped in SQL
    with evaluator(session, hs, [NoSingletons()]) as ev:
        assert ev._cells is not None


def test_wide_keys_are_compacted(tables):
    """Eight columns of 400 distinct values: 400**8 > 2**62, so the key is compacted on the way."""
    rng = random.Random(3)
    n = 600
    data = {f"q{j}": [f"v{rng.randrange(400)}" for _ in range(n)] for j in range(8)}
    hs = {c: CsvHierarchy(c, tuple((f"v{i}", f"g{i % 7}", "*") for i in range(400)), "test") for c in data}
    session = tables.load("wide", data)
    models = [KAnonymity(k=2)]
    with evaluator(session, hs, models, cells=0) as a, evaluator(session, hs, models) as b:
        assert b._cells is not None
        nodes = [(0,) * 8, (1, 0, 0, 0, 0, 0, 0, 0), (0, 0, 0, 0, 0, 0, 0, 1), (2,) * 8, (1,) * 8]
        _same(a.evaluate(nodes, values=True), b.evaluate(nodes, values=True))
    x = anonymize_session(session, hs, models, 0.02, "entropy", strategy="exhaustive")
    y = anonymize_session(session, hs, models, 0.02, "entropy")
    assert x.levels == y.levels and x.scores == pytest.approx(y.scores, rel=1e-12)
