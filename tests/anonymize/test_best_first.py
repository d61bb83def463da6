""":func:`best_first` with monotone models (binary search along upward paths) against
:func:`exhaustive` on random lattices: random up-sets of passing nodes, losses that rise under
generalization (with ties), and a risk target that is not monotone. Pure Python: the search's
bookkeeping, not the database (tests/anonymize/test_risk_target.py runs it on the engines)."""

from __future__ import annotations

import itertools
import random

import pytest

from qar_sql.anonymization.risk import best_first, lattice
from tests.anonymize.oracle import exhaustive


def _case(seed: int):
    rng = random.Random(seed)
    maxima = tuple(rng.randrange(1, 5) for _ in range(rng.randrange(2, 6)))
    generators = [tuple(rng.randrange(0, m + 1) for m in maxima) for _ in range(rng.randrange(1, 6))]

    def passes(lv):
        return any(all(g <= v for g, v in zip(gen, lv)) for gen in generators)

    weights = [rng.choice((1, 2, 3)) for _ in maxima]  # integers: equal losses happen

    def loss(lv):
        return float(sum(w * v for w, v in zip(weights, lv)))

    risk = {lv: rng.random() for lv in lattice(maxima)}
    return maxima, passes, loss, risk


@pytest.mark.parametrize("seed", range(40))
def test_binary_search_along_paths_equals_exhaustive(seed):
    maxima, passes, loss, risk = _case(seed)
    nodes = list(lattice(maxima))
    passing = sum(passes(lv) for lv in nodes)
    for tau in (0.05, 0.3, 0.7, 1.0):

        def evaluate(batch):
            return [(passes(lv), loss(lv)) for lv in batch]

        def meets(lv, tau=tau):
            return risk[lv] <= tau

        want = exhaustive(maxima, evaluate, meets)
        for mode in itertools.product((True, False), (1, 3)):
            exact, batch = mode
            bound = loss if exact else (lambda lv: loss(lv) / 2)
            visit = best_first(
                maxima, evaluate, meets, lower_bound=bound, exact_bound=exact, monotone_models=True, batch=batch
            )
            assert visit.chosen == want, (tau, mode)
            assert all(passes(lv) for lv in visit.measured)
            assert visit.anonymous(maxima) <= passing
            if exact and want is not None and batch == 1:
                # each evaluation resolves at least one node: never more than the lattice
                assert visit.evaluated <= len(nodes)
