"""The pushed-down audit against a plain-Python oracle.

The oracle counts equivalence classes with ``collections.Counter`` over row tuples, where
``None`` (SQL NULL) is a value like any other and equals other ``None``s: GROUP BY semantics,
independent of any SQL. Tables are small and random, with NULLs, ties, an empty string (a value,
not NULL), near-keys, and hostile column and table names. Every engine of the ``engine`` fixture
(DuckDB file, PostgreSQL) must reproduce the oracle exactly; θ and T̂ must equal ``evt.qar_risk``
applied to the oracle's θ.

The helpers here (``oracle``, ``random_table``, ``check_against_oracle``) are imported by the
other audit test modules.
"""

from __future__ import annotations

import itertools
import operator
import random
from collections import Counter

import numpy as np
import pytest

import qar_sql
from qar_sql.errors import NoTailError
from qar_sql.stats import evt

#: Names chosen to break SQL built by pasting: quotes, spaces, semicolons, a stray
#: placeholder sign (%), dots, unicode, reserved words, and an injection attempt.
HOSTILE_COLUMNS = (
    'a"b',
    "with space",
    "semi;colon 50%",
    "dot.ted",
    "ünï©ødé",
    "select",
    "order",
    'a"; drop table x; --',
)
HOSTILE_TABLE = 'my "table"; drop.x ü'


def oracle(rows: list[tuple], p: int, only=None) -> list[dict]:
    """Per QI (itertools.combinations order): distinct, singletons, min class, histogram.
    ``only``: a set of QI indices to count (the others are skipped)."""
    ncols = len(rows[0]) if rows else 0
    out = []
    for j, combo in enumerate(itertools.combinations(range(ncols), p)):
        if only is not None and j not in only:
            continue
        # itemgetter(*combo)(row) is the tuple of the QI's values (a bare value when p = 1)
        classes = Counter(map(operator.itemgetter(*combo), rows))
        sizes = Counter(classes.values())
        out.append(
            {
                "combo": combo,
                "distinct": len(classes),
                "singletons": sizes.get(1, 0),
                "min_class_size": min(classes.values()) if classes else 0,
                "class_sizes": tuple(sorted(sizes.items())),
                "rows": sum(classes.values()),
            }
        )
    return out


def oracle_notes(names, rows) -> set[str]:
    """Columns the audit must warn about: entirely NULL, or a single value (NULL counts)."""
    flagged = set()
    for i, name in enumerate(names):
        values = [r[i] for r in rows]
        if all(v is None for v in values) or len(set(values)) == 1:
            flagged.add(name)
    return flagged


def _maybe_null(rng: random.Random, values, share: float):
    return None if rng.random() < share else rng.choice(values)


def random_table(
    seed: int, n_rows: int = 40, *, names=HOSTILE_COLUMNS, empty_string: bool = True
) -> tuple[list[str], list[tuple], dict[str, str]]:
    """(column names, rows, SQL types) of a small random table with NULLs and many ties.

    Types are text, bigint, double precision, boolean; text values never look like numbers, so a CSV
    reader cannot merge two of them. ``empty_string`` adds '' as a text value (distinct from
    NULL in a database, but not in a CSV, where an empty field is NULL).
    """
    rng = random.Random(seed)
    texts = ["x", "y", "z"] + ([""] if empty_string else [])
    generators = [
        ("text", lambda: _maybe_null(rng, texts, 0.2)),
        ("bigint", lambda: _maybe_null(rng, [0, 1, 2, 3], 0.25)),
        ("double precision", lambda: _maybe_null(rng, [0.5, 1.25, 2.0], 0.15)),
        ("boolean", lambda: _maybe_null(rng, [True, False], 0.3)),
        ("text", lambda: _maybe_null(rng, ["é", "ß", "日本", "a b", "x'y"], 0.2)),
        ("bigint", lambda: rng.randrange(10)),
        ("text", lambda: _maybe_null(rng, [f"v{i}" for i in range(15)], 0.1)),
        ("text", lambda: rng.choice(["p", "q"])),
    ]
    names = list(names)
    gens = [generators[i % len(generators)] for i in range(len(names))]
    rows = [tuple(g() for _, g in gens) for _ in range(n_rows)]
    return names, rows, {n: t for n, (t, _) in zip(names, gens)}


def as_columns(names, rows) -> dict[str, list]:
    return {n: [r[i] for r in rows] for i, n in enumerate(names)}


def expected_fit(names, rows, p, *, alpha, pi_u, pwm="plotting"):
    """(oracle QIs, TailFit or None) from the oracle's θ = H / L."""
    qis = oracle(rows, p)
    theta = np.array([q["distinct"] for q in qis], dtype=float) / len(rows)
    try:
        fit = evt.qar_risk(theta, len(rows), alpha=alpha, pi_u=pi_u, pwm=pwm)
    except NoTailError:
        fit = None
    return qis, fit


def check_against_oracle(result, names, rows, p, *, alpha=0.01, pi_u=0.05, pwm="plotting"):
    """Assert every number of ``result`` equals the oracle's; return the expected fit."""
    qis, fit = expected_fit(names, rows, p, alpha=alpha, pi_u=pi_u, pwm=pwm)
    n = len(rows)
    assert result.rows == n
    assert list(result.columns) == list(names)
    assert result.n_qi == len(qis)
    for got, want in zip(result.qis, qis, strict=True):
        cols = tuple(names[i] for i in want["combo"])
        assert got.columns == cols
        assert got.distinct == want["distinct"], cols
        assert got.singletons == want["singletons"], cols
        assert got.min_class_size == want["min_class_size"], cols
        assert got.class_sizes == want["class_sizes"], cols
        assert got.rows == n
        # L for every QI: the classes add up to the table.
        assert sum(size * count for size, count in got.class_sizes) == n
        assert got.theta == want["distinct"] / n
        assert got.records_below(result.k) == sum(s * c for s, c in want["class_sizes"] if s < result.k)
        assert got.is_key == (want["distinct"] == n)
    assert np.array_equal(result.theta, np.array([q["distinct"] for q in qis]) / n)
    assert result.n_keys == sum(q["distinct"] == n for q in qis)
    assert result.min_class_size == min(q["min_class_size"] for q in qis)
    if fit is None:
        assert result.fit is None and result.risk is None
        assert any("no tail" in w for w in result.warnings)
    else:
        assert result.fit == fit
        assert result.risk == fit.risk
        assert result.warnings[len(result.warnings) - len(fit.warnings) :] == fit.warnings
    flagged = oracle_notes(names, rows)
    column_notes = [w for w in result.warnings if "separates no records" in w]
    assert len(column_notes) == len(flagged)
    for name in flagged:
        assert any(repr(name) in w for w in column_notes), name
    return fit


# ---------------------------------------------------------------------------------------------
# The oracle itself, on a table counted by hand


def test_oracle_counts_by_hand():
    rows = [(1, None), (1, None), (None, None), (2, "a"), (None, "a")]
    c0, c1, c01 = oracle(rows, 1) + oracle(rows, 2)
    # column 0: {1: 2, None: 2, 2: 1}
    assert (c0["distinct"], c0["singletons"], c0["min_class_size"]) == (3, 1, 1)
    assert c0["class_sizes"] == ((1, 1), (2, 2))
    # column 1: {None: 3, 'a': 2}
    assert (c1["distinct"], c1["singletons"], c1["min_class_size"]) == (2, 0, 2)
    # both: {(1, None): 2, (None, None): 1, (2, 'a'): 1, (None, 'a'): 1}
    assert (c01["distinct"], c01["singletons"]) == (4, 3)
    assert c01["class_sizes"] == ((1, 3), (2, 1))
    assert all(q["rows"] == 5 for q in (c0, c1, c01))
    assert oracle_notes(["a", "b"], [(None, 1), (None, 1)]) == {"a", "b"}
    assert oracle_notes(["a", "b"], [(None, 1), (2, 1)]) == {"b"}


# ---------------------------------------------------------------------------------------------
# Every engine equals the oracle


PARAMS = [  # (seed, rows, p, alpha, pi_u)
    (1, 80, 2, 0.01, 0.2),
    (3, 40, 3, 0.01, 0.1),  # keys (θ = 1) are clipped
    (4, 30, 3, 0.001, 0.2),
    (2, 100, 1, 0.01, 0.3),
    (3, 15, 2, 0.01, 0.2),  # few rows: many keys
    (5, 40, 3, 0.01, 0.1),  # the largest θ tie with u: no tail, no risk
]


@pytest.mark.parametrize("seed,n_rows,p,alpha,pi_u", PARAMS)
def test_audit_equals_oracle(engine, seed, n_rows, p, alpha, pi_u):
    names, rows, types = random_table(seed, n_rows)
    source, table = engine.load(HOSTILE_TABLE, as_columns(names, rows), types)
    result = qar_sql.audit(source, table=table, p=p, alpha=alpha, pi_u=pi_u)
    assert result.engine == engine.name
    check_against_oracle(result, names, rows, p, alpha=alpha, pi_u=pi_u)


def test_these_tables_have_tails_keys_and_nulls():
    """The random tables above exercise what they are meant to (guards the generator)."""
    fits, tails, keys, null_groups = 0, 0, 0, 0
    for seed, n_rows, p, alpha, pi_u in PARAMS:
        names, rows, _ = random_table(seed, n_rows)
        qis, fit = expected_fit(names, rows, p, alpha=alpha, pi_u=pi_u)
        fits += fit is not None
        tails += fit is not None and fit.n_exceedances >= 3
        keys += sum(q["distinct"] == n_rows for q in qis)
        null_groups += sum(r[0] is None and r[1] is None for r in rows)
    assert fits == len(PARAMS) - 1
    assert tails >= 3
    assert keys >= 1
    assert null_groups >= 1


@pytest.mark.parametrize("pwm", ["plotting", "unbiased"])
def test_columns_subset_order_and_pwm(engine, pwm):
    """--columns picks and orders the QI columns; the oracle follows the same order."""
    names, rows, types = random_table(11, 50)
    source, table = engine.load(HOSTILE_TABLE, as_columns(names, rows), types)
    chosen = [names[6], names[0], names[4], names[2], names[7], names[1]]
    idx = [names.index(c) for c in chosen]
    sub = [tuple(r[i] for i in idx) for r in rows]
    result = qar_sql.audit(source, table=table, columns=chosen, p=2, pwm=pwm)
    check_against_oracle(result, chosen, sub, 2, pwm=pwm)
    # exclude = all columns minus the named ones, in table order
    rest = [n for n in names if n not in ("select", 'a"; drop table x; --')]
    idx = [names.index(c) for c in rest]
    sub = [tuple(r[i] for i in idx) for r in rows]
    result = qar_sql.audit(source, table=table, exclude=["select", 'a"; drop table x; --'], p=2, pwm=pwm)
    check_against_oracle(result, rest, sub, 2, pwm=pwm)


def test_all_null_and_constant_columns_are_values(engine):
    """An all-NULL column and a constant column still audit; NULL-only and constant QIs
    collapse rows exactly as the oracle says, and both columns are named in warnings."""
    names, rows, types = random_table(21, 30, names=[f"c{i}" for i in range(6)])
    names += ["all null", "constant"]
    rows = [r + (None, "k") for r in rows]
    types.update({"all null": "text", "constant": "text"})
    source, table = engine.load("t", as_columns(names, rows), types)
    result = qar_sql.audit(source, table=table, p=2)
    check_against_oracle(result, names, rows, 2)
    both = next(q for q in result.qis if q.columns == ("all null", "constant"))
    assert (both.distinct, both.min_class_size, both.class_sizes) == (1, 30, ((30, 1),))
