"""θ counted in memory from the frequency table of the audit and QI columns
(:meth:`RiskTarget.fetch_cells`) against the same counts as GROUP BYs in the database, for every
node of a small lattice, with and without suppression, on DuckDB and PostgreSQL, with hostile
names and NULLs in the audit columns that have no hierarchy."""

from __future__ import annotations

import random

import pytest

import qar_sql
from qar_sql.anonymization.evaluate import evaluator
from qar_sql.anonymization.export import generalized
from qar_sql.anonymization.hierarchy import CsvHierarchy
from qar_sql.anonymization.models import KAnonymity
from qar_sql.anonymization.risk import RiskSpec, RiskTarget, _Cells, lattice

A, B = 'a "x"', "b; drop"
OTHER = ("select", "d é", "e")
QI = (A, B)


def make_table(seed: int, n: int = 80):
    rng = random.Random(seed)
    return {
        A: [rng.randrange(0, 12) for _ in range(n)],
        B: [rng.randrange(0, 6) for _ in range(n)],
        OTHER[0]: [rng.choice([None, 1, 2, 3]) for _ in range(n)],
        OTHER[1]: [rng.choice(["x", "y", None, "z'"]) for _ in range(n)],
        OTHER[2]: [rng.randrange(0, 9) for _ in range(n)],
    }


def hierarchies():
    a = CsvHierarchy(A, tuple((str(v), str(v // 3), str(v // 6), "*") for v in range(12)))
    b = CsvHierarchy(B, tuple((str(v), str(v // 2), "*") for v in range(6)))
    return {A: a, B: b}


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("kept", ["kept", "none kept", "too many to keep"])
def test_theta_in_memory_equals_the_database(engine, seed, kept, monkeypatch):
    # the class sizes of a subset over every cell, kept across nodes and corrected by a node's
    # suppressed cells; or dropped at once (budget); or never kept (too many classes)
    if kept == "none kept":
        monkeypatch.setattr(_Cells, "BUDGET", 1)
    elif kept == "too many to keep":
        monkeypatch.setattr(_Cells, "DENSE", 1)
    data = make_table(seed)
    source, table = engine.load("t", data)
    h = hierarchies()
    columns = (*QI, *OTHER)
    with qar_sql.connect(source, table=table) as session:
        spec = RiskSpec(columns=columns, p=2, alpha=0.05, pi_u=0.4)

        def target():
            return RiskTarget(
                session.db, session.relation, spec, QI, lambda c, lv: generalized(session.dialect, h[c], lv)
            )

        in_sql, in_memory = target(), target()
        with evaluator(session, h, [KAnonymity(k=2)], qi=QI) as ev:
            assert in_memory.fetch_cells(ev.codings)
            assert not target().fetch_cells(ev.codings, limit=5)  # more cells than that: stays in SQL
        everything = range(len(in_sql.combos))
        for levels in lattice((3, 2)):
            for smallest in (None, 2, 4):
                want = in_sql._scan(levels, smallest, everything)
                assert in_memory._scan(levels, smallest, everything) == want, (levels, smallest)
            risk_sql = in_sql.evaluate(levels, smallest=3, suppressed=1)
            risk_memory = in_memory.evaluate(levels, smallest=3, suppressed=1)
            assert risk_memory.rows == risk_sql.rows
            assert list(risk_memory.theta) == list(risk_sql.theta)
            assert risk_memory.risk == risk_sql.risk
