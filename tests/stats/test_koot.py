"""Uniqueness probability (Koot et al. 2011): the formulas against independent computations.

Oracles: the paper's published figures, brute-force enumeration of every k-tuple, an exact
rational (``fractions.Fraction``) product of the generating polynomial, closed forms written
out value by value, and Monte Carlo with numpy's own sampler.
"""

from __future__ import annotations

import itertools
import math
import re
from fractions import Fraction

import numpy as np
import pytest

from qar_sql import rules
from qar_sql.errors import ParameterError
from qar_sql.measures import birthday
from qar_sql.results import QIStats
from qar_sql.stats import koot as U


def shares(histogram) -> list[float]:
    """Every value's share, one entry per value (the histogram expanded)."""
    rows = sum(s * n for s, n in histogram)
    return [s / rows for s, n in histogram for _ in range(n)]


def brute_force(p: list[float], k: int) -> float:
    """Σ over all k-tuples of distinct values of Π p: the probability that k draws differ."""
    return math.fsum(math.prod(p[i] for i in t) for t in itertools.product(range(len(p)), repeat=k) if len(set(t)) == k)


def rational(histogram, k: int) -> Fraction:
    """k! e_k(p) exactly: Π_v (1 + p_v x) expanded value by value in rational arithmetic."""
    rows = sum(s * n for s, n in histogram)
    e = [Fraction(1)] + [Fraction(0)] * k
    for s, n in histogram:
        p = Fraction(s, rows)
        for _ in range(n):
            for j in range(k, 0, -1):
                e[j] += p * e[j - 1]
    return math.factorial(k) * e[k]


TINY = [
    [(1, 1)],
    [(1, 2)],
    [(1, 2), (2, 1), (5, 1)],
    [(3, 4)],
    [(1, 1), (7, 1)],
    [(2, 3), (9, 2)],
    [(1, 3), (4, 1), (10, 2)],
]


# --- the paper's figures and the uniform closed form ---------------------------------------


def test_paper_uniform_figures():
    # Section 4.1: π_u(29, 95) = 0.84% and π_u(41, 190) = 0.95%, rounded to two decimals.
    assert round(100 * U.pi_uniform(29, 95), 2) == 0.84
    assert round(100 * U.pi_uniform(41, 190), 2) == 0.95
    # and to full precision, as the exact product (N/N)(N−1)/N … (N−k+1)/N
    for k, m in ((29, 95), (41, 190)):
        exact = math.prod(Fraction(m - i, m) for i in range(k))
        assert U.pi_uniform(k, m) == pytest.approx(float(exact), rel=1e-13)


def test_pi_uniform_limits_and_large_domains():
    assert U.pi_uniform(1, 5) == 1.0
    assert U.pi_uniform(5, 5) == pytest.approx(math.factorial(5) / 5**5, rel=1e-14)
    assert U.pi_uniform(6, 5) == 0.0
    # Huge domains (a product of distinct counts): the Stirling branch against Σ log1p(−i/M)
    # summed with math.fsum (exact enough: k terms, each to 1 ulp).
    for k, m in (
        (29, 1e6 + 1),
        (1000, 2e6),
        (5000, 3.7e12),
        (200_000, 1e9),
        (10, 1e18),
        (2_000_000, 1e13),
    ):
        reference = math.fsum(math.log1p(-i / m) for i in range(k))
        assert U.log_pi_uniform(k, m) == pytest.approx(reference, rel=1e-12, abs=1e-15)


# --- pi_exact --------------------------------------------------------------------------------


@pytest.mark.parametrize("histogram", TINY)
def test_pi_exact_against_brute_force(histogram):
    p = shares(histogram)
    d = U.Grouped.from_histogram(histogram)
    for k in range(1, len(p) + 2):
        if len(p) ** k > 200_000:
            break
        expected = brute_force(p, k)
        got = U.pi_exact(k, d)
        assert got == pytest.approx(expected, rel=1e-12, abs=1e-15), (histogram, k)


def test_pi_exact_against_rational_arithmetic():
    rng = np.random.default_rng(20111114)
    for _ in range(40):
        histogram = sorted(
            {
                int(rng.integers(1, int(rng.choice([3, 50, 1000])))): int(rng.integers(1, 30))
                for _ in range(int(rng.integers(1, 7)))
            }.items()
        )
        support = sum(n for _, n in histogram)
        d = U.Grouped.from_histogram(histogram)
        for k in {
            2,
            3,
            min(support, 40),
            max(2, support - 1),
            int(rng.integers(2, min(support, 40) + 2)),
        }:
            if k > 40:
                continue
            expected = float(rational(histogram, k))
            assert U.pi_exact(k, d) == pytest.approx(expected, rel=1e-12, abs=1e-300), (
                histogram,
                k,
            )


def test_pi_exact_against_monte_carlo():
    # numpy's own categorical sampler, independent of U.monte_carlo.
    histogram = [(1, 40), (2, 30), (5, 10), (20, 4), (60, 1)]
    p = np.array(shares(histogram))
    d = U.Grouped.from_histogram(histogram)
    rng = np.random.default_rng(7)
    for k in (5, 12, 20):
        draws = rng.choice(len(p), size=(40_000, k), p=p)
        draws.sort(axis=1)
        share = np.mean(np.all(draws[:, 1:] != draws[:, :-1], axis=1))
        expected = U.pi_exact(k, d)
        assert abs(share - expected) < 4 * math.sqrt(expected * (1 - expected) / 40_000), k


def test_monte_carlo_interval_covers_pi_exact():
    d = U.Grouped.from_histogram([(1, 50), (3, 20), (10, 5)])
    mc = U.monte_carlo(15, d, 20_000, seed=3)
    assert mc.low <= U.pi_exact(15, d) <= mc.high
    assert mc.low < mc.share < mc.high
    assert U.monte_carlo(15, d, 20_000, seed=3) == mc  # seeded


def test_uniform_table_kappa_zero_and_exact_equals_uniform():
    for m, size in ((95, 7), (190, 1), (1000, 3), (50_000, 2)):
        d = U.Grouped.from_histogram([(size, m)])
        assert U.kappa(d, m) == 0.0
        for k in (2, 10, 29, int(math.sqrt(m)), min(m, 300)):
            assert U.pi_exact(k, d) == pytest.approx(U.pi_uniform(k, m), rel=1e-11)
        assert U.pi_kl(29, m, 0.0) == pytest.approx(math.exp(-0.5 * 29 * 29 / m), rel=1e-15)


def test_pi_exact_large_k_and_many_classes_in_log_space():
    # A million equally likely values: π_exact = π_u for group sizes whose probability is far
    # below 1e-300 (no overflow, no underflow in the logarithm).
    d = U.Grouped.from_histogram([(1, 1_000_000)])
    for k in (1000, 3000, 60_000):
        assert U.log_pi_exact(k, d) == pytest.approx(U.log_pi_uniform(k, 1_000_000), rel=1e-10)
    assert U.log_pi_exact(60_000, d) < -1700  # exp() of it underflows; the log does not
    # k = H: k! Π p exactly
    d = U.Grouped.from_histogram([(1, 3), (2, 2)])
    assert U.pi_exact(5, d) == pytest.approx(120 * (1 / 7) ** 3 * (2 / 7) ** 2, rel=1e-13)
    assert U.pi_exact(6, d) == 0.0


def test_heterogeneity_reduces_pi():
    # The paper's majorization result: any non-uniform distribution on H values has a smaller
    # uniqueness probability than the uniform one on H values, for every k ≥ 2.
    rng = np.random.default_rng(11)
    for _ in range(30):
        histogram = sorted({int(rng.integers(1, 40)): int(rng.integers(1, 50)) for _ in range(3)}.items())
        d = U.Grouped.from_histogram(histogram)
        if d.groups == 1:
            continue
        assert U.kappa(d, d.support) > 0
        for k in (2, 5, min(d.support, 20)):
            assert U.pi_exact(k, d) < U.pi_uniform(k, d.support)


# --- the Poisson and KL approximations ------------------------------------------------------


def test_pi_poisson_closed_form():
    rng = np.random.default_rng(5)
    for _ in range(20):
        histogram = sorted({int(rng.integers(1, 30)): int(rng.integers(1, 20)) for _ in range(4)}.items())
        p = shares(histogram)
        d = U.Grouped.from_histogram(histogram)
        for k in (2, 7.5, 30):
            # eq. (3), value by value
            assert U.pi_poisson(k, d) == pytest.approx(math.exp(-k) * math.prod(1 + k * pv for pv in p), rel=1e-12)
    # The uniform case of section 3.1: e^(−k) (1 + k/N)^N.
    d = U.Grouped.from_histogram([(4, 95)])
    assert U.pi_poisson(29, d) == pytest.approx(math.exp(-29) * (1 + 29 / 95) ** 95, rel=1e-13)


def test_kappa_and_pi_kl_closed_forms():
    histogram = [(1, 4), (3, 2), (8, 1)]
    p = shares(histogram)
    d = U.Grouped.from_histogram(histogram)
    for m in (d.support, 10, 1e6):
        kappa = math.fsum(pv * math.log(pv * m) for pv in p)
        assert U.kappa(d, m) == pytest.approx(kappa, rel=1e-13)
        assert U.pi_kl(4, m, kappa) == pytest.approx(math.exp(-(0.5 + kappa) * 16 / m), rel=1e-14)
    # The paper's small-perturbation identity: κ ≈ ½ Σ (α² f − 1)… i.e. ½ (M Σ p² − 1).
    d = U.Grouped.from_histogram([(100, 50), (101, 50)])
    m = d.support
    assert U.kappa(d, m) == pytest.approx(0.5 * (m * float(np.dot(d.mult, d.prob**2)) - 1), rel=1e-3)


# --- k50 / k_at ------------------------------------------------------------------------------


def _k_at_linear(target, d):
    # π equal to the target up to rounding reaches it (π(2) of [(1, 2)] is exactly 1/2;
    # test_k_at_on_an_exact_tie_with_the_target checks such ties in rational arithmetic).
    k = 1
    while k + 1 <= d.support and U.pi_exact(k + 1, d) >= target * (1 - 1e-12):
        k += 1
    return k


@pytest.mark.parametrize(
    "histogram",
    TINY + [[(1, 500), (2, 200), (7, 30)], [(1, 3000)], [(5, 40), (900, 2)]],
)
def test_k_at_is_the_largest_k_reaching_the_target(histogram):
    d = U.Grouped.from_histogram(histogram)
    for target in (0.01, 0.5, 0.9, 0.999):
        assert U.k_at(target, d) == _k_at_linear(target, d), (histogram, target)
    assert U.k50(d) == U.k_at(0.5, d)


def test_k50_uniform_birthday_problem():
    # The classical birthday problem: 23 people on 365 days share a birthday with p > 1/2.
    assert U.k50(U.Grouped.from_histogram([(1, 365)])) == 22


def test_window_values_equal_single_evaluations():
    d = U.Grouped.from_histogram([(1, 900), (2, 300), (6, 40), (50, 3)])
    window = U._log_pi_window(60, d, 20)
    assert set(window) <= set(range(40, 81)) and 60 in window and len(window) > 30
    for j, value in window.items():
        assert value == pytest.approx(U.log_pi_exact(j, d), rel=1e-8, abs=1e-8)


# --- per-record exposure ---------------------------------------------------------------------


def test_exposure_and_its_mean():
    histogram = [(1, 2), (2, 1), (5, 1)]
    p = shares(histogram)
    d = U.Grouped.from_histogram(histogram)
    k = 3
    assert np.allclose(U.exposure(k, np.array(p)), [(1 - pv) ** (k - 1) for pv in p], rtol=1e-14)
    # The mean exposure is the chance that the first of k draws meets its value nowhere else.
    first_unique = math.fsum(
        math.prod(p[i] for i in t) for t in itertools.product(range(len(p)), repeat=k) if t.count(t[0]) == 1
    )
    assert U.exposure_mean(k, d) == pytest.approx(first_unique, rel=1e-13)


# --- independence (marginals) ---------------------------------------------------------------


def test_from_marginals_is_the_product_distribution():
    a = [(1, 2), (3, 1)]  # a column with values of 1, 1 and 3 records
    b = [(2, 1), (3, 1)]
    d = U.Grouped.from_marginals([a, b])
    pa, pb = shares(a), shares(b)
    joint = sorted(x * y for x in pa for y in pb)
    assert d.support == 6
    assert np.allclose(np.repeat(d.prob, d.mult), joint, rtol=1e-15)
    for k in (2, 3, 4):
        assert U.pi_exact(k, d) == pytest.approx(brute_force(joint, k), rel=1e-12)
    # KL to the uniform on the product domain adds up over independent columns.
    da, db = U.Grouped.from_histogram(a), U.Grouped.from_histogram(b)
    assert U.kappa(d, 6) == pytest.approx(U.kappa(da, 3) + U.kappa(db, 2), rel=1e-13)


# --- bad input -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: rules.check_group_size(1, 100), "at least 2"),
        (lambda: rules.check_group_size(101, 100), "larger than the table's 100 rows"),
        (lambda: rules.check_group_size(2.5, 100), "whole number"),
        (lambda: rules.check_target(0.0), "strictly between 0 and 1"),
        (lambda: rules.check_target(1.0), "strictly between 0 and 1"),
        (lambda: rules.check_target(-0.2), "strictly between 0 and 1"),
        (lambda: rules.parse_domain("observd"), "unknown"),
        (lambda: rules.parse_domain("0"), "at least 1"),
        (lambda: rules.parse_domain("9.5"), "whole number"),
        (
            lambda: U.kappa(U.Grouped.from_histogram([(1, 10)]), 5),
            "smaller than the 10 values",
        ),
        (
            lambda: U.monte_carlo(3, U.Grouped.from_histogram([(1, 10)]), 0),
            "at least 1",
        ),
    ],
)
def test_bad_input_is_one_clear_sentence(call, words):
    with pytest.raises(ParameterError) as info:
        call()
    message = str(info.value)
    assert words in message and not re.search(r"[.;!?] [A-Z]", message) and "\n" not in message


def test_domain_parsing():
    assert rules.parse_domain("observed") == "observed"
    assert rules.parse_domain(" Product ") == "product"
    assert rules.parse_domain("190") == 190
    assert rules.parse_domain("1e6") == 1_000_000
    assert rules.parse_domain(95) == 95


# =============================================================================================
# Through the database: qar_sql.uniqueness on DuckDB and PostgreSQL against a Python oracle
# =============================================================================================

import operator  # noqa: E402
from collections import Counter  # noqa: E402
from dataclasses import replace  # noqa: E402

from conftest import Loader  # noqa: E402

import qar_sql  # noqa: E402
from tests.measures.test_audit import HOSTILE_TABLE, as_columns, random_table  # noqa: E402


def qi_oracle(rows, combo, k, domain):
    """Every figure of one QI from the raw rows: Counter for the classes, rational arithmetic
    for π_exact, the textbook formulas for the rest."""
    classes = Counter(map(operator.itemgetter(*combo), rows)) if len(combo) > 1 else Counter(r[combo[0]] for r in rows)
    sizes = Counter(classes.values())
    histogram = sorted(sizes.items())
    p = [n / len(rows) for n in classes.values()]
    m = len(classes) if domain == "observed" else domain
    kappa = math.fsum(pv * math.log(pv * m) for pv in p)
    return {
        "distinct": len(classes),
        "domain": m,
        "kappa": kappa,
        "pi_uniform": float(math.prod(Fraction(m - i, m) for i in range(k))) if k <= m else 0.0,
        # Both approximations are 0 when k exceeds the values with positive probability.
        "pi_kl": math.exp(-(0.5 + kappa) * k * k / m) if k <= len(classes) else 0.0,
        "pi_kl_u": float(math.prod(Fraction(m - i, m) for i in range(k))) * math.exp(-kappa * k * k / m)
        if k <= len(classes)
        else 0.0,
        "pi_poisson": math.exp(-k) * math.prod(1 + k * pv for pv in p),
        "pi_exact": float(rational(histogram, k)),
        "k50": max(j for j in range(1, len(classes) + 1) if rational(histogram, j) >= Fraction(1, 2)),
        "exposure_max": (1 - min(classes.values()) / len(rows)) ** (k - 1),
        "exposure_mean": math.fsum(pv * (1 - pv) ** (k - 1) for pv in p),
    }


def column_values(rows, i):
    return len({r[i] for r in rows})


def figures(result):
    """Everything the measure computes, not where it ran or how long it took."""
    return replace(result, source="", table=None, engine="", seconds=0.0)


def _load(engine, seed=12, n=48):
    names, rows, types = random_table(seed, n)
    names, rows = names[:5], [r[:5] for r in rows]
    source, table = engine.load(HOSTILE_TABLE, as_columns(names, rows), {c: types[c] for c in names})
    return names, rows, source, table


@pytest.mark.parametrize("domain", ["observed", "product"])
def test_every_qi_against_the_oracle(engine, domain):
    names, rows, source, table = _load(engine)
    k = 4
    result = qar_sql.uniqueness(source, table=table, p=2, group_size=k, domain=domain, exposed=3, exposed_qis=2)
    assert result.engine == engine.name and result.rows == len(rows) and result.domain_mode == domain
    assert len(result.qis) == math.comb(5, 2)
    for q in result.qis:
        combo = tuple(names.index(c) for c in q.columns)
        m = "observed" if domain == "observed" else math.prod(column_values(rows, i) for i in combo)
        expected = qi_oracle(rows, combo, k, m)
        for field_, value in expected.items():
            assert getattr(q, field_) == pytest.approx(value, rel=1e-12, abs=1e-15), (q.columns, field_)
    # riskiest first: π_exact descending, then k50 descending
    order = [(-q.pi_exact, -q.k50, q.index) for q in result.qis]
    assert order == sorted(order)
    # the most exposed records: the smallest classes, each with (1 − n/L)^(k−1)
    for q in result.qis[:2]:
        combo = tuple(names.index(c) for c in q.columns)
        classes = Counter(tuple(r[i] for i in combo) for r in rows)
        assert [e.class_size for e in q.most_exposed] == sorted(classes.values())[:3]
        for e in q.most_exposed:
            assert classes[e.values] == e.class_size
            assert e.exposure == pytest.approx((1 - e.class_size / len(rows)) ** (k - 1), rel=1e-14)
    assert all(not q.most_exposed for q in result.qis[2:])


def test_duckdb_and_postgresql_give_identical_figures(tmp_path):
    results = []
    for name in ("duckdb", "postgresql"):
        loader = Loader(name, tmp_path)
        try:
            _, _, source, table = _load(loader, seed=31, n=60)
            results.append(
                qar_sql.uniqueness(
                    source,
                    table=table,
                    p=3,
                    group_size=5,
                    domain="product",
                    from_marginals=True,
                    monte_carlo=2000,
                    seed=9,
                    target=0.9,
                    exposed=0,
                )  # fmt: skip
            )
        finally:
            loader.cleanup()
    assert figures(results[0]) == figures(results[1])
    assert figures(results[0]).to_dict() == figures(results[1]).to_dict()


def test_qid_monte_carlo_and_marginals(duck):
    names, rows, source, table = _load(duck, seed=5, n=60)
    qid = (names[3], names[0])
    result = qar_sql.uniqueness(
        source, table=table, qid=qid, group_size=6, monte_carlo=20_000, seed=1, from_marginals=True
    )
    (q,) = result.qis
    assert q.columns == qid and result.p == 2
    mc = q.monte_carlo
    assert mc.draws == 20_000 and mc.low <= q.pi_exact <= mc.high
    # the independence model: the product of the two columns' distributions
    a = sorted(Counter(Counter(r[3] for r in rows).values()).items())
    b = sorted(Counter(Counter(r[0] for r in rows).values()).items())
    model = U.Grouped.from_marginals([a, b])
    assert q.marginal.domain == column_values(rows, 3) * column_values(rows, 0) == model.support
    assert q.marginal.pi_exact == pytest.approx(U.pi_exact(6, model), rel=1e-13)
    kappa_sum = U.kappa(U.Grouped.from_histogram(a), column_values(rows, 3)) + U.kappa(
        U.Grouped.from_histogram(b), column_values(rows, 0)
    )
    assert q.marginal.kappa == pytest.approx(kappa_sum, rel=1e-12)


def test_heterogeneity_reduces_pi_on_every_qi_of_adult(shared_data):
    path = shared_data / "arx" / "adult.csv"
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    result = qar_sql.uniqueness(str(path), delimiter=";", p=2, group_size=30, exposed=0)
    assert len(result.qis) == math.comb(9, 2) and result.rows == 30162
    for q in result.qis:
        assert q.kappa > 0, q.columns
        # the majorization result: below the uniform birthday problem on the same M values
        assert q.pi_exact < q.pi_uniform or q.pi_uniform == 0.0, q.columns
        assert q.pi_exact <= U.pi_uniform(30, q.distinct)


def test_audit_block_equals_the_command(duck):
    names, rows, source, table = _load(duck, seed=8, n=50)
    audit = qar_sql.audit(source, table=table, p=2, pi_u=0.2, group_size=5)
    direct = qar_sql.uniqueness(source, table=table, p=2, group_size=5, exposed=0)
    assert audit.uniqueness is not None
    assert audit.uniqueness.qis == direct.qis
    assert qar_sql.audit(source, table=table, p=2, pi_u=0.2).uniqueness is None


def test_treatments_before_and_after(duck, tmp_path):
    # The paper's Figure 4: age alone, then in bands of 2 and 5 years.
    import random

    rng = random.Random(4)
    ages = [min(94, int(rng.expovariate(1 / 35))) for _ in range(400)]
    sexes = [rng.choice("MF") for _ in ages]
    source, table = duck.load("people", {"age": ages, "sex": sexes})
    plan = tmp_path / "bands.toml"
    plan.write_text(
        '[treatments.age_2y]\nkind = "bands"\ncolumn = "age"\nwidth = 2\n\n'
        '[treatments.age_5y]\nkind = "bands"\ncolumn = "age"\nwidth = 5\n'
    )
    result = qar_sql.uniqueness(source, table=table, qid=["age"], group_size=10, treatments=str(plan))
    assert [s.name for s in result.scenarios] == ["age_2y", "age_5y"]
    (before,) = result.qis
    assert before.kappa == pytest.approx(qi_oracle([(a,) for a in ages], (0,), 10, "observed")["kappa"], rel=1e-12)
    for s, width in zip(result.scenarios, (2, 5)):
        (after,) = s.qis
        banded = [(a // width,) for a in ages]
        expected = qi_oracle(banded, (0,), 10, "observed")
        assert after.distinct == expected["distinct"]
        assert after.kappa == pytest.approx(expected["kappa"], rel=1e-12)
        assert after.pi_exact == pytest.approx(expected["pi_exact"], rel=1e-12)
        assert s.rows == 400


def test_bad_input_through_the_api(duck):
    names, rows, source, table = _load(duck, n=20)
    with pytest.raises(ParameterError, match="larger than the table's 20 rows"):
        qar_sql.uniqueness(source, table=table, p=2, group_size=21)
    with pytest.raises(ParameterError, match="at least 2"):
        qar_sql.uniqueness(source, table=table, p=2, group_size=1)
    with pytest.raises(ParameterError, match="strictly between 0 and 1"):
        qar_sql.uniqueness(source, table=table, p=2, group_size=3, target=1.0)
    with pytest.raises(ParameterError, match="unknown"):
        qar_sql.uniqueness(source, table=table, p=2, group_size=3, domain="guess")
    with pytest.raises(ParameterError, match="smaller than the"):
        qar_sql.uniqueness(source, table=table, p=2, group_size=3, domain=2)


def test_pi_kl_u_koot_section_4_1():
    """Koot et al. (2011), section 4.1: the validated approximation π ≈ π_u(k, N)·e^(−κk²/N).
    95 equally likely values, k = 29: κ = 0, so it is π_u(29, 95) = 0.84 % (the paper's
    published figure, section 2), while the cruder exp(−(½ + κ)k²/N) of section 4.2 gives
    e^(−841/190) = 0.011958."""
    d = U.Grouped.from_histogram([(1, 95)])
    assert U.kappa(d, 95) == 0.0
    assert U.pi_kl(29, 95, 0.0, d.support) == pytest.approx(0.011958, abs=5e-7)
    assert U.pi_kl_u(29, 95, 0.0, d.support) == pytest.approx(0.0083993, abs=5e-8)
    assert round(100 * U.pi_kl_u(29, 95, 0.0, d.support), 2) == 0.84  # the paper's π_u(29, 95)
    assert U.pi_kl_u(29, 95, 0.0) == pytest.approx(U.pi_uniform(29, 95), rel=1e-14)
    # Skewed shares: π_u · e^(−κk²/M), from the definitions.
    histogram = [(1, 40), (3, 10), (9, 2)]
    d = U.Grouped.from_histogram(histogram)
    p = shares(histogram)
    m = 200
    kappa = math.fsum(pv * math.log(pv * m) for pv in p)
    pu = math.prod((m - i) / m for i in range(12))
    assert U.pi_kl_u(12, m, kappa, d.support) == pytest.approx(pu * math.exp(-kappa * 144 / m), rel=1e-12)


def test_pi_kl_and_pi_kl_u_zero_beyond_the_support():
    """k people cannot all differ on H < k values: both approximations are 0 there (pi_kl was
    positive before), whatever the domain M."""
    d = U.Grouped.from_histogram([(2, 5)])  # H = 5 values
    for m in (5, 50, 10**6):
        assert U.pi_kl(6, m, U.kappa(d, m), d.support) == 0.0
        assert U.pi_kl_u(6, m, U.kappa(d, m), d.support) == 0.0
    assert U.pi_kl(5, 50, U.kappa(d, 50), d.support) > 0
    (q,) = birthday.measure([QIStats(0, ("a",), 5, 0, 2, ((2, 5),), 10)], 10, group_size=6)
    assert q.pi_kl == 0.0 and q.pi_kl_u == 0.0 and q.pi_exact == 0.0


@pytest.mark.parametrize(
    "histogram",
    [[(1, 2), (4, 1)], [(2, 2), (8, 1)], [(1, 1), (4, 1), (9, 1)], [(1, 1), (9, 1), (16, 1)], [(1, 2)]],
)
def test_k_at_on_an_exact_tie_with_the_target(histogram):
    """π(2) = 1 − Σp² is exactly 1/2 here (rational arithmetic), so k50 = 2; floating point gave
    π = 0.49999999999999994 and k50 = 1. The oracle: π(k) in exact fractions."""
    d = U.Grouped.from_histogram(histogram)
    support = sum(c for _, c in histogram)
    want = max(k for k in range(1, support + 1) if k == 1 or rational(histogram, k) >= Fraction(1, 2))
    assert rational(histogram, 2) == Fraction(1, 2)
    assert U.k50(d) == U.k_at(0.5, d) == want == 2


def test_a_domain_written_as_a_power_of_ten_is_that_number():
    """--domain 1e40 is 10^40, not the float's 10000000000000000303786028427003666890752."""
    assert rules.parse_domain("1e40") == rules.parse_domain(1e40) == rules.parse_domain("10_000e36") == 10**40
    assert rules.parse_domain(np.float64(1e20)) == rules.parse_domain(np.int64(10**18)) * 100
    assert rules.parse_domain(" 95 ") == rules.parse_domain(95.0) == 95
    for bad in ("1.5", "1e400x", "1e400", "inf", "nan", "0", 0.5):
        with pytest.raises(ParameterError):
            rules.parse_domain(bad)
