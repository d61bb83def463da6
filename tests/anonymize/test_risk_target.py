"""The QaR target of ``qar anonymize``: T̂ of every node's release against a plain-Python oracle,
and the search's choice against an exhaustive evaluation of every node, on random small tables,
on DuckDB and PostgreSQL.

The oracle generalizes the rows in Python, drops the records of classes smaller than k on the
generalized QID, counts each p-subset's distinct combinations and singletons with ``Counter``
and fits the tail with the audit's estimator (:func:`qar_sql.stats.evt.qar_risk`).
"""

from __future__ import annotations

import itertools
import random
from collections import Counter

import pytest

import qar_sql
from qar_sql.anonymization.risk import RiskSpec, RiskTarget, best_first, lattice
from qar_sql.errors import NoTailError, ParameterError
from qar_sql.stats import evt
from tests.anonymize.oracle import exhaustive

# Hostile names: quoting is the dialect's.
A, B, C = 'a "x"', "b; drop", "select"
OTHER = ("d", "e", "f")
QI = (A, B, C)
COLUMNS = QI + OTHER


def make_table(seed: int, n: int = 60):
    rng = random.Random(seed)
    return {
        A: [rng.randrange(0, 16) for _ in range(n)],
        B: [rng.randrange(0, 8) for _ in range(n)],
        C: [rng.randrange(0, 6) for _ in range(n)],
        **{c: [rng.randrange(0, 3 + i) for _ in range(n)] for i, c in enumerate(OTHER)},
    }


#: Levels per QI column: level l of a value is value // WIDTH[c] ** l (the top level: one value).
MAXIMA = (3, 2, 2)
WIDTH = {A: 3, B: 3, C: 4}


def general(column: str, value: int, level: int) -> int:
    return 0 if level == MAXIMA[QI.index(column)] else value // WIDTH[column] ** level


def expression(q):
    def expr(column: str, level: int) -> str:
        x = f"t.{q(column)}"
        if level == 0:
            return x
        if level == MAXIMA[QI.index(column)]:
            return f"(0 * {x})"
        return f"cast(floor({x} / {WIDTH[column] ** level}) as bigint)"

    return expr


def oracle_release(data, levels, k):
    n = len(data[A])
    rows = [
        tuple(general(c, data[c][i], levels[QI.index(c)]) if c in QI else data[c][i] for c in COLUMNS) for i in range(n)
    ]
    classes = Counter(r[:3] for r in rows)
    kept = [r for r in rows if classes[r[:3]] >= k]
    return kept, n - len(kept)


def oracle_risk(kept, p, pi_u, theta="distinct"):
    if len(kept) < 2:
        return None
    out = []
    for combo in itertools.combinations(range(len(COLUMNS)), p):
        counts = Counter(tuple(r[i] for i in combo) for r in kept)
        out.append((len(counts) if theta == "distinct" else sum(1 for v in counts.values() if v == 1)) / len(kept))
    try:
        return evt.qar_risk(out, len(kept), alpha=0.05, pi_u=pi_u).risk
    except NoTailError:
        return None


def loss_of(levels):
    """A loss non-decreasing under generalization (ARX's Precision without suppression)."""
    return sum(v / m for v, m in zip(levels, MAXIMA)) / len(MAXIMA)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_risk_and_search_equal_the_oracle(engine, seed):
    data = make_table(seed)
    source, table = engine.load("t", data)
    k, limit, p, pi_u = 2, 0.1, 2, 0.4
    spec_theta = "distinct"
    with qar_sql.connect(source, table=table) as session:
        spec = RiskSpec(columns=COLUMNS, p=p, alpha=0.05, pi_u=pi_u, theta=spec_theta)
        target = RiskTarget(session.db, session.relation, spec, QI, expression(session.dialect.quote))
        models, risks = {}, {}
        for levels in lattice(MAXIMA):
            kept, suppressed = oracle_release(data, levels, k)
            models[levels] = suppressed <= limit * len(data[A])
            node = target.evaluate(levels, smallest=k, suppressed=suppressed)
            want = oracle_risk(kept, p, pi_u, spec_theta)
            assert node.rows == len(kept)
            if want is None:
                assert node.risk is None
            else:
                assert node.risk == pytest.approx(want, rel=1e-12)
            risks[levels] = node.risk
        # every (subset, levels) was scanned once among the nodes that suppress nothing
        assert target.scanned < len(risks) * len(target.combos)
    feasible = sorted(r for lv, r in risks.items() if models[lv] and r is not None)
    assert len(feasible) > 3
    for tau in (feasible[len(feasible) // 4], feasible[len(feasible) // 2], feasible[0] / 2):
        measured: list = []

        def meets(levels, tau=tau, measured=measured):
            measured.append(levels)
            return risks[levels] is not None and risks[levels] <= tau

        def evaluate(nodes):
            return [(models[lv], loss_of(lv)) for lv in nodes]

        want = exhaustive(MAXIMA, evaluate, lambda lv, tau=tau: risks[lv] is not None and risks[lv] <= tau)
        modes = [
            {"monotone_loss": True},
            {"monotone_loss": False},
            {"lower_bound": lambda lv: loss_of(lv) / 2},
            {"lower_bound": loss_of, "monotone_models": True},
            {"lower_bound": loss_of, "monotone_models": True, "exact_bound": True, "batch": 4},
            {"lower_bound": lambda lv: loss_of(lv) / 3, "monotone_models": True, "batch": 3},
            {"monotone_loss": False, "batch": 5},
        ]
        for mode in modes:
            measured.clear()
            visit = best_first(MAXIMA, evaluate, meets, **mode)
            assert visit.chosen == want, mode
            assert visit.measured == measured
            # only nodes that pass the models, each once, the chosen one last
            assert all(models[lv] for lv in measured) and len(set(measured)) == len(measured)
            if want is not None:
                assert measured[-1] == want
        if want is not None:
            n_nodes = len(risks)
            assert len(set(measured)) <= n_nodes


def test_the_cache_shares_subsets_across_nodes(duck):
    data = make_table(9)
    source, table = duck.load("t", data)
    with qar_sql.connect(source, table=table) as session:
        spec = RiskSpec(columns=COLUMNS, p=2, alpha=0.05, pi_u=0.4)
        target = RiskTarget(session.db, session.relation, spec, QI, expression(session.dialect.quote))
        first = target.evaluate((0, 0, 0))
        assert first.scanned == 15
        # one column changes level: only the subsets holding it are scanned again
        again = target.evaluate((1, 0, 0))
        assert again.scanned == 5
        assert target.evaluate((1, 0, 0)).scanned == 0
        # a node that suppresses records scans all its subsets
        assert target.evaluate((1, 0, 0), smallest=2, suppressed=3).scanned == 15


@pytest.mark.parametrize("seed", [4, 5])
def test_theta_never_rises_under_generalization_without_suppression(engine, seed):
    """Generalization maps each value combination of a subset to one combination, so the distinct
    combinations cannot grow, and a class of one record after it is one before it, so the
    singletons cannot grow either; with the rows unchanged every θ is non-increasing from a node
    to each successor (checked for every edge of the lattice, against the brute-force release)."""
    data = make_table(seed)
    source, table = engine.load("t", data)
    with qar_sql.connect(source, table=table) as session:
        spec = RiskSpec(columns=COLUMNS, p=2, alpha=0.05, pi_u=0.4)
        target = RiskTarget(session.db, session.relation, spec, QI, expression(session.dialect.quote))
        counts = {}
        for levels in lattice(MAXIMA):
            rows, got = target.counts(levels)
            kept, _ = oracle_release(data, levels, 1)
            for j, combo in enumerate(itertools.combinations(range(len(COLUMNS)), 2)):
                c = Counter(tuple(r[i] for i in combo) for r in kept)
                assert tuple(got[j]) == (len(c), sum(1 for v in c.values() if v == 1))
            assert rows == len(kept)
            counts[levels] = got
        for levels, got in counts.items():
            for i, m in enumerate(MAXIMA):
                if levels[i] < m:
                    up = levels[:i] + (levels[i] + 1,) + levels[i + 1 :]
                    assert (counts[up] <= got).all()


def test_bad_targets_are_one_sentence():
    with pytest.raises(ParameterError, match="--risk-below 1.5"):
        RiskSpec(columns=COLUMNS, p=2, pi_u=0.4, below=1.5)
    with pytest.raises(ParameterError, match="--theta 'share'"):
        RiskSpec(columns=COLUMNS, p=2, pi_u=0.4, theta="share")
