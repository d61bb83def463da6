"""ARX's published optima on adult (its own tests), searched in DuckDB, PostgreSQL and SQLite.

TestAnonymizationKAnonymity: the nine QIs in file order, k-anonymity, suppression limit,
``Metric.createPrecomputedEntropyMetric(0.1, true)`` (0.1 is the precomputation threshold; the
gs-factor is ARX's default 0.5; monotonic) — qar's ``entropy`` metric.
TestAnonymizationLDiversity: entropy l-diversity on occupation, the non-monotonic
precomputed entropy (``entropy_nm``), with no solution for l = 100.
"""

from __future__ import annotations

import pytest

from qar_sql.anonymization.hierarchy import read_hierarchy_dir
from qar_sql.anonymization.models import EntropyLDiversity, KAnonymity
from qar_sql.anonymization.search import anonymize_session
from qar_sql.errors import DataError
from tests.anonymize.fixtures import (
    ADULT_HIERARCHIES,
    ADULT_QI,
    ENGINES,
    need_adult,
)

K_ANONYMITY = [
    (5, 0.04, [1, 0, 1, 1, 3, 2, 2, 0, 1], 255559.85455731067),
    (100, 0.04, [1, 1, 1, 1, 3, 2, 2, 1, 1], 379417.3460570988),
    (5, 0.0, [1, 2, 1, 1, 3, 2, 2, 1, 1], 407289.5388925293),
    (100, 0.0, [0, 4, 1, 1, 3, 2, 2, 1, 1], 453196.8932458743),
]


def _hierarchies():
    need_adult()
    return read_hierarchy_dir(ADULT_HIERARCHIES)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(("k", "limit", "levels", "score"), K_ANONYMITY)
def test_k_anonymity_optimum_as_arx(adult, engine, k, limit, levels, score):
    r = anonymize_session(adult(engine), _hierarchies(), [KAnonymity(k=k)], limit, "entropy")
    assert r.columns == ADULT_QI
    assert list(r.level_vector) == levels
    assert r.scores["entropy"] == pytest.approx(score, rel=1e-9)
    assert r.optimal and r.nodes == 12_960
    assert r.k >= k and r.suppressed <= limit * r.rows
    assert r.evaluated < r.nodes / 10


def test_exhaustive_agrees_on_adult(adult):
    """The exact search's optimum is the exhaustive one (every node of 12,960 evaluated)."""
    hs = _hierarchies()
    for name in ("native-country", "education"):  # a smaller lattice keeps this quick
        hs.pop(name)
    a = anonymize_session(adult("duckdb"), hs, [KAnonymity(k=5)], 0.04, "entropy", strategy="exhaustive")
    b = anonymize_session(adult("duckdb"), hs, [KAnonymity(k=5)], 0.04, "entropy", strategy="flash")
    assert a.evaluated == a.nodes and b.evaluated < a.nodes
    assert a.levels == b.levels and a.scores == pytest.approx(b.scores, rel=1e-12)


@pytest.mark.parametrize(
    ("l", "limit", "levels", "score"),
    [(5, 0.04, [1, 0, 1, 1, 2, 2, 2, 1], 228878.2039109517), (5, 0.0, [1, 1, 1, 1, 3, 2, 2, 1], 324620.5269918692)],
)
def test_entropy_l_diversity_as_arx(adult, l, limit, levels, score):  # noqa: E741
    hs = _hierarchies()
    hs.pop("occupation")
    model = EntropyLDiversity(sensitive="occupation", l=l)
    r = anonymize_session(adult("duckdb"), hs, [model], limit, "entropy_nm")
    assert list(r.level_vector) == levels
    assert r.scores["entropy_nm"] == pytest.approx(score, rel=1e-9)


def test_entropy_l_diversity_without_solution(adult):
    hs = _hierarchies()
    hs.pop("occupation")
    with pytest.raises(DataError, match="no generalization meets entropy 100-diversity"):
        anonymize_session(adult("duckdb"), hs, [EntropyLDiversity(sensitive="occupation", l=100)], 0.0, "entropy_nm")
