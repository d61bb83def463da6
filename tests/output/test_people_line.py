"""The audit's reading of T̂ in people: beside T̂ (a level of θ, not a share of people) the
records unique on the riskiest QI, S and S/L, the largest over the QIs — against a Counter over
every QI, on DuckDB and PostgreSQL, with and without pruning."""

from __future__ import annotations

import itertools
import random
from collections import Counter

import pytest

from qar_sql import audit
from qar_sql.output.render_audit import most_unique, people_line, verdict

COLS = ["a", "b c", 'd"e', "f", "g", "h"]  # hostile names reach SQL only quoted


def table(seed: int, rows: int = 300) -> dict[str, list]:
    rng = random.Random(seed)
    sizes = [3, 4, 6, 8, 12, 25]
    data = {c: [rng.randrange(n) for _ in range(rows)] for c, n in zip(COLS, sizes)}
    data["f"] = [None if v == 0 else v for v in data["f"]]  # NULL is a value of its own
    return data


def most_singletons(data: dict[str, list], p: int) -> tuple[int, tuple[str, ...]]:
    rows = list(zip(*(data[c] for c in COLS)))
    best = (-1, ())
    for q in itertools.combinations(range(len(COLS)), p):  # QI order: ties keep the first
        counts = Counter(tuple(r[i] for i in q) for r in rows)
        s = sum(n == 1 for n in counts.values())
        if s > best[0]:
            best = (s, tuple(COLS[i] for i in q))
    return best


@pytest.mark.parametrize("p, prune", [(2, "off"), (4, "off"), (3, "auto")])
def test_records_unique_on_the_riskiest_qi(engine, p, prune):
    data = table(7)
    source, name = engine.load("people", data)
    r = audit(source, table=name, p=p, pi_u=0.2, prune=prune, bootstrap=0)
    want, cols = most_singletons(data, p)
    assert (r.n_pruned > 0) == (prune == "auto")  # the pruned case does prune
    q, bound = most_unique(r)
    assert q is not None
    if prune == "off" or not r.n_pruned:
        assert (q.singletons, q.columns, bound) == (want, cols, False)
    else:  # pruned QIs are known only by bounds: the grouped maximum is a lower bound
        assert q.singletons <= want and (bound or q.singletons == want)
    line = people_line(r)
    assert line is not None
    assert f"{'at least ' if bound else ''}{q.singletons:,} records ({100 * q.singletons / 300:.3g}%)" in line
    assert f"unique on the riskiest quasi-identifier ({', '.join(q.columns)})" in line
    if r.fit is not None:
        text = verdict(r, r.fit.risk)
        assert f"T̂ = {r.fit.risk:.3g} is the level of θ" in text and line in text
        assert "not a confidence interval" not in text  # no band was computed (bootstrap=0)
