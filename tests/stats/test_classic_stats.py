"""The classic measures' pure statistics (qar_sql.stats: diversity, individual_risk, population,
suda) against published figures and plain-Python oracles. No database."""

from __future__ import annotations

import math
import random

import classic_oracle as oracle
import numpy as np
import pytest
from scipy import optimize, special, stats  # noqa: F401  (stats: population.py imports it on first use; the timings below time the work)

from qar_sql.errors import ParameterError
from qar_sql.stats import diversity, individual_risk, population, suda

# --- individual risk: sdcMicro's own test table (tests/testthat/test_indivRisk.R) ---------------

WEIGHTS = [18.0, 45.5, 39.0, 17.0, 92.0, 8.0, 123.5, 51.0]
COMPLETE = [
    (2, 3, 1),
    (3, 3, 3),
    (2, 3, 1),
    (2, 3, 2),
    (3, 3, 1),
    (3, 3, 1),
    (1, 4, 1),
    (2, 3, 1),
]
WITH_NA = [
    (2, 3, 1),
    (3, 3, 3),
    (2, 3, None),
    (2, 3, 2),
    (3, 3, 1),
    (3, 3, 1),
    (1, 4, None),
    (None, 3, 1),
]


def _rows(keys):
    return [{"A": a, "B": b, "C": c, "w": w} for (a, b, c), w in zip(keys, WEIGHTS)]


@pytest.mark.parametrize(
    "keys, expected_fk, expected_rk",
    [
        # expect_equal(ind$rk, ...) of sdcMicro's test_indivRisk.R, method = "approx", weighted
        (
            COMPLETE,
            [3, 1, 3, 1, 2, 2, 1, 3],
            [
                0.01369863,
                0.08579129,
                0.01369863,
                0.17707583,
                0.01877883,
                0.01877883,
                0.03931625,
                0.01369863,
            ],
        ),
        # the same table with missing values: sdcMicro matches a missing value with anything
        (
            WITH_NA,
            [3, 1, 4, 2, 3, 3, 1, 5],
            [
                0.013698630,
                0.085791288,
                0.010554090,
                0.032466112,
                0.009836066,
                0.009836066,
                0.039316254,
                0.005973716,
            ],
        ),
    ],
)
def test_benedetti_franconi_reproduces_sdcmicro(keys, expected_fk, expected_rk):
    freq = oracle.frequencies(_rows(keys), ["A", "B", "C"], "wildcard", "w")
    fk = [f for f, _ in freq]
    Fk = [F for _, F in freq]
    assert fk == expected_fk
    rk = individual_risk.benedetti_franconi(fk, Fk)
    np.testing.assert_allclose(rk, expected_rk, atol=5e-9)
    np.testing.assert_allclose(rk, [oracle.bf_risk(f, F) for f, F in freq], rtol=1e-13)
    # without weights sdcMicro's risk is 1/fk (survey = FALSE)
    np.testing.assert_allclose(individual_risk.individual_risk(fk), [1 / f for f in fk])


def test_benedetti_franconi_hand_checked():
    # fk = 1, Fk = 4: pk = 1/4, r = (1/3)·ln 4; fk = 2, Fk = 8: pk = 1/4, r = 1/3 − (1/9)·ln 4;
    # fk = 3, Fk = 6: pk = 1/2, r = 0.5/(3 − 0.5) = 0.2; fk = Fk = 2: r = 1/2.
    r = individual_risk.benedetti_franconi([1, 2, 3, 2], [4.0, 8.0, 6.0, 2.0])
    np.testing.assert_allclose(r, [math.log(4) / 3, 1 / 3 - math.log(4) / 9, 0.2, 0.5], rtol=1e-14)


def test_reidentification_summaries_match_arx_and_sdcmicro():
    rows = _rows(WITH_NA)
    freq = oracle.frequencies(rows, ["A", "B", "C"], "value", "w")
    fk = np.array([f for f, _ in freq])
    Fk = np.array([F for _, F in freq])
    s = individual_risk.reidentification_risks(fk, Fk, threshold=0.3)
    expected = sum(oracle.bf_risk(f, F) for f, F in freq)
    assert s.expected_reidentifications == pytest.approx(expected, rel=1e-13)
    assert s.global_risk == pytest.approx(expected / 8, rel=1e-13)
    want = oracle.prosecutor(list(fk), 0.3)
    assert s.prosecutor.highest == want["highest"]
    assert s.prosecutor.average == pytest.approx(want["average"])
    assert s.prosecutor.records_at_risk == pytest.approx(want["records_at_risk"])
    # journalist: population class sizes Fk; marketer: Σ_classes fk/Fk / n = Σ_records 1/Fk / n
    assert s.journalist.highest == pytest.approx(1 / Fk.min())
    assert s.journalist.records_at_risk == pytest.approx(np.mean(1 / Fk > 0.3))
    classes = len({(r["A"], r["B"], r["C"]) for r in rows})
    assert s.marketer == pytest.approx(np.mean(1 / Fk))
    assert s.journalist.average == pytest.approx(max(classes / sum(set_sum(rows)), np.mean(1 / Fk)))
    # grouping records by (fk, Fk) gives the same numbers
    pairs, counts = np.unique(np.c_[fk, Fk], axis=0, return_counts=True)
    g = individual_risk.reidentification_risks(pairs[:, 0], pairs[:, 1], counts, threshold=0.3)
    assert g.expected_reidentifications == pytest.approx(s.expected_reidentifications)
    for a, b in ((g.prosecutor, s.prosecutor), (g.journalist, s.journalist)):
        assert (a.highest, a.average, a.records_at_risk) == pytest.approx((b.highest, b.average, b.records_at_risk))
    assert individual_risk.violations(fk) == {
        "2": int((fk < 2).sum()),
        "3": int((fk < 3).sum()),
        "5": 8,
    }


def set_sum(rows):
    """Σ over classes of the class's weight (ARX's population class sizes)."""
    sums = {}
    for r in rows:
        sums[(r["A"], r["B"], r["C"])] = sums.get((r["A"], r["B"], r["C"]), 0) + r["w"]
    return list(sums.values())


def test_unweighted_summaries_are_prosecutor_risks():
    fk = [1, 2, 2, 4, 4, 4, 4]
    s = individual_risk.reidentification_risks(fk, threshold=0.3)
    assert s.expected_reidentifications == pytest.approx(3.0)  # one per class
    assert s.prosecutor.average == pytest.approx(3 / 7)
    assert s.journalist == s.prosecutor
    assert s.marketer == pytest.approx(3 / 7)
    assert s.prosecutor.records_at_risk == pytest.approx(3 / 7)  # 1/1 and 1/2 > 0.3, 1/4 not


def test_bad_risk_inputs():
    with pytest.raises(ParameterError, match="fk"):
        individual_risk.individual_risk([0, 1])
    with pytest.raises(ParameterError, match="weight"):
        individual_risk.benedetti_franconi([1], [0.0])
    with pytest.raises(ParameterError, match="risk-threshold"):
        individual_risk.reidentification_risks([1], threshold=1.5)


# --- l-diversity and t-closeness ----------------------------------------------------------------


def test_li_et_al_t_closeness_example():
    # Li, Li & Venkatasubramanian (2007), the salary example: 9 salaries 3k … 11k; the class
    # {3k, 4k, 5k} is at EMD 0.375 from the table and {6k, 8k, 11k} at 0.167.
    value = [0, 1, 2, 3, 5, 8, 4, 6, 7]
    cls = [0, 0, 0, 1, 1, 1, 2, 2, 2]
    emd = diversity.t_closeness_ordered(cls, value, [1] * 9)
    assert emd[0] == pytest.approx(0.375, abs=1e-15)
    assert emd[1] == pytest.approx(1 / 6, abs=1e-15)
    # equal distance: each class covers 3 of 9 values, ½Σ|p − q| = ½(3·(1/3 − 1/9) + 6/9) = 2/3
    np.testing.assert_allclose(diversity.t_closeness_equal(cls, value, [1] * 9), [2 / 3] * 3)


def test_sdcmicro_ldiversity_example():
    # sdcMicro tests/testthat/test_ldiversity.R: groups (1,0,2), (1,0), (0,1) → distinct 3, 2, 2
    cls, val, cnt = [0, 0, 0, 1, 1, 2, 2], [1, 0, 2, 1, 0, 0, 1], [1] * 7
    np.testing.assert_array_equal(diversity.distinct_l(cls, val, cnt), [3, 2, 2])
    np.testing.assert_allclose(diversity.entropy_l(cls, val, cnt), [3, 2, 2])


def _random_long(rng):
    C, m = rng.randint(1, 6), rng.randint(1, 6)
    cells = {}
    for _ in range(rng.randint(1, 25)):
        key = (rng.randrange(C), rng.randint(-1, m - 1))
        cells[key] = cells.get(key, 0) + rng.randint(1, 4)
    classes = sorted({c for c, _ in cells})
    renum = {c: i for i, c in enumerate(classes)}
    vals = sorted({v for _, v in cells if v >= 0})
    vnum = {v: i for i, v in enumerate(vals)}
    rows = [(renum[c], vnum.get(v, -1), k) for (c, v), k in cells.items()]
    return rows, len(classes)


@pytest.mark.parametrize("seed", range(5))
def test_diversity_against_oracle(seed):
    rng = random.Random(seed)
    for _ in range(200):
        rows, n = _random_long(rng)
        cls, val, cnt = (list(x) for x in zip(*rows))
        per_class = {c: [v if v >= 0 else None for cc, v, k in rows if cc == c for _ in range(k)] for c in range(n)}
        everything = [v for vs in per_class.values() for v in vs]
        c_const = rng.choice([1.0, 2.0, 3.0, 0.5])
        d = diversity.distinct_l(cls, val, cnt, n)
        e = diversity.entropy_l(cls, val, cnt, n)
        r = diversity.recursive_l(cls, val, cnt, c_const, n)
        te = diversity.t_closeness_equal(cls, val, cnt, n)
        to = diversity.t_closeness_ordered(cls, val, cnt, n)
        for c in range(n):
            want = oracle.ldiversity(per_class[c], c_const)
            assert (d[c], r[c]) == (want[0], want[2]), (rows, c)
            assert e[c] == pytest.approx(want[1], rel=1e-12)
            for got, ordered in ((te[c], False), (to[c], True)):
                w = oracle.emd(per_class[c], everything, ordered)
                assert (math.isnan(w) and math.isnan(got)) or got == pytest.approx(w, abs=1e-12), (rows, c)


def test_recursive_l_definition():
    # counts 5, 3, 2: (2,2): 5 < 2·(3+2) yes; (2,3): 5 < 2·2 no → l = 2. With c = 3: 5 < 6 → 3.
    assert diversity.recursive_l([0, 0, 0], [0, 1, 2], [5, 3, 2], 2.0)[0] == 2
    assert diversity.recursive_l([0, 0, 0], [0, 1, 2], [5, 3, 2], 3.0)[0] == 3
    assert diversity.recursive_l([0], [0], [4])[0] == 1  # one value
    assert diversity.recursive_l([0], [-1], [4])[0] == 0  # only missing values


def test_recursive_l_leaves_missing_values_out():
    # docs/risk-measures.md's example: 3 missing and 2 `flu` (code 0). Distinct l counts the
    # missing as one more value (2); recursive l sees only the counts [2] (l = 1), as sdcMicro.
    assert diversity.distinct_l([0, 0], [-1, 0], [3, 2])[0] == 2
    assert diversity.recursive_l([0, 0], [-1, 0], [3, 2])[0] == 1
    # and the missing records do not count towards r_l + … + r_m: counts 4, 3 with 10 missing
    # give l = 2 (4 < 2·3), as without them
    assert (
        diversity.recursive_l([0, 0, 0], [0, 1, -1], [4, 3, 10])[0]
        == diversity.recursive_l([0, 0], [0, 1], [4, 3])[0]
        == 2
    )


# --- SUDA ---------------------------------------------------------------------------------------


def _suda_scores(rows, cols):
    patterns = [oracle.unique_sets(rows, i, cols, len(cols)) for i in range(len(rows))]
    return suda.suda_scores(suda.msu_counts(patterns, len(cols)), len(cols))


def test_suda_sdcmicro_book_example():
    # sdcMicro tests/testthat/test_suda2.R "suda2 book example": scores of rows 5–8 are 4, 2, 6, 8
    rows = [
        dict(zip(("age", "gender", "income", "education"), r))
        for r in zip(
            ["20s"] * 7 + ["60s"],
            ["male"] * 4 + ["female"] * 3 + ["male"],
            ["50k+"] * 2 + ["50k-"] * 6,
            ["highschool"] * 4 + ["university", "highschool", "middleschool", "university"],
        )
    ]
    np.testing.assert_array_equal(_suda_scores(rows, list(rows[0])), [0, 0, 0, 0, 4, 2, 6, 8])


def test_suda_sdc_guideline_example():
    # sdcMicro tests/testthat/test_suda2.R "suda2 sdc guideline": 0,0,6,0,12,0,6,10,0,0
    data = zip(
        ["Urban"] * 4 + ["Rural"] + ["Urban"] * 5,
        [
            "Female",
            "Female",
            "Female",
            "Male",
            "Female",
            "Male",
            "Female",
            "Male",
            "Female",
            "Female",
        ],
        [
            "Secondary incomplete",
            "Secondary incomplete",
            "Primary incomplete",
            "Secondary complete",
            "Secondary complete",
            "Secondary complete",
            "Primary complete",
            "Post-secondary",
            "Secondary incomplete",
            "Secondary incomplete",
        ],
        [
            "Employed",
            "Employed",
            "Non-LF",
            "Employed",
            "Unemployed",
            "Employed",
            "Non-LF",
            "Unemployed",
            "Non-LF",
            "Non-LF",
        ],
    )
    rows = [dict(zip("RGEL", r)) for r in data]
    np.testing.assert_array_equal(_suda_scores(rows, list("RGEL")), [0, 0, 6, 0, 12, 0, 6, 10, 0, 0])


def test_msu_needs_no_unique_subset():
    # unique on {0}, {0,1}, {1,2}: MSUs {0} (size 1) and {1,2} (size 2); {0,1} contains {0}
    counts = suda.msu_counts([{0b001, 0b011, 0b110}], 3)
    np.testing.assert_array_equal(counts, [[1, 1, 0]])
    assert suda.score_weights(5, 3).tolist() == [24, 6, 2]
    assert suda.score_weights(2, 2).tolist() == [2, 1]  # sdcMicro pads to 3 columns


@pytest.mark.parametrize("seed", range(3))
def test_dis_suda_against_oracle(seed):
    rng = random.Random(seed)
    cols = ["a", "b", "c", "d"]
    rows = [{c: rng.choice([1, 2, 3, None] if c == "d" else [1, 2, 3]) for c in cols} for _ in range(25)]
    scores, dis = oracle.suda(rows, cols, dis_fraction=0.05)
    fk = [len(oracle.matches(rows, i, cols, "value")) for i in range(len(rows))]
    got_scores = _suda_scores(rows, cols)
    np.testing.assert_array_equal(got_scores, scores)
    values, records = np.unique(got_scores, return_counts=True)
    got = suda.dis_suda(
        values,
        records,
        uniques=fk.count(1),
        pair_records=fk.count(2),
        n_columns=4,
        dis_fraction=0.05,
    )
    lookup = dict(zip(values, got))
    np.testing.assert_allclose([lookup[s] for s in scores], dis, rtol=1e-12)


# --- population uniqueness (ARX) ----------------------------------------------------------------


@pytest.mark.parametrize("x", [1e-7, 0.3, 1.0, 2.5, 7.9, 12.0, 30.0, 1e5, -0.5, -2.3])
def test_arx_digamma_is_digamma(x):
    assert population.digamma(x) == pytest.approx(float(special.digamma(x)), rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("x", [1e-5, 12.0, 30.0, 1e4])
def test_arx_trigamma_is_trigamma_where_arx_is_right(x):
    assert population.trigamma(x) == pytest.approx(float(special.polygamma(1, x)), rel=1e-9)


@pytest.mark.parametrize("x", [0.3, 2.5, 7.5, 10.0])
def test_arx_trigamma_keeps_arx_gap(x):
    # ARX's Gamma.trigamma recurses up to 8 but adds the asymptotic tail only from 12: below
    # 12 it returns the recurrence terms alone, Σ 1/(x + j)² until x + j ≥ 8 (nothing in [8, 12)).
    terms = sum(1 / (x + j) ** 2 for j in range(20) if x + j < 8)
    assert population.trigamma(x) == pytest.approx(terms, rel=1e-14, abs=0)


def _hist(classes):
    sizes, counts = np.unique(classes, return_counts=True)
    return sizes, counts


def test_zayatz_is_the_hypergeometric_formula():
    sizes, counts = [1, 2, 3, 7], [40, 15, 6, 2]
    n = 1 * 40 + 2 * 15 + 3 * 6 + 7 * 2
    N = 10 * n

    def h(k):  # P(one member of a class of k in a sample of n from N), exact integers
        return k * math.comb(N - k, n - 1) / math.comb(N, n)

    u = sum(counts)
    cond = (40 / u * h(1)) / sum(c / u * h(k) for k, c in zip(sizes, counts))
    assert population.zayatz(sizes, counts, N) == pytest.approx(40 * cond / (n / N), rel=1e-10)


def test_pitman_solves_its_likelihood_equations():
    rng = np.random.default_rng(7)
    classes = rng.zipf(1.8, 400)
    classes = classes[classes < 200]
    sizes, counts = _hist(classes)
    n, u = float(np.dot(sizes, counts)), float(counts.sum())
    N = int(n * 20)
    est = population.pitman(sizes, counts, N)
    assert 0 < est < N
    # An independent solve of the same maximum-likelihood equations (Hoshino 2001, explicit sums)
    i_u, i_n = np.arange(1, u), np.arange(1, n)
    rest = [(k, c) for k, c in zip(sizes, counts) if k != 1]

    def eqs(v):
        t, a = v
        o1, o3 = np.sum(1 / (t + i_u * a)), np.sum(i_u / (t + i_u * a))
        o2 = np.sum(1 / (t + i_n))
        o4 = sum(c * np.sum(1 / (np.arange(1, k) - a)) for k, c in rest)
        return [o1 - o2, o3 - o4]

    t, a = optimize.fsolve(eqs, [1.0, 0.5], xtol=1e-13)
    want = math.exp(special.gammaln(t + 1) - special.gammaln(t + a)) * N**a
    assert est == pytest.approx(want, rel=1e-4)


def test_shlosser_as_arx_computes_it():
    sizes, counts, f = [1, 2, 5], [30.0, 10.0, 4.0], 0.2
    var1 = sum(k * f * f * (1 - f * f) ** (k - 1) * c for k, c in zip(sizes, counts))
    var2 = sum((1 - f) ** k * c * (1 + f) ** k - 1 for k, c in zip(sizes, counts))  # ARX: −1 per size
    var3 = sum((1 - f) ** k * c for k, c in zip(sizes, counts))
    var4 = sum(k * f * (1 - f) ** (k - 1) * c for k, c in zip(sizes, counts))
    want = 44 + 30 * var1 / var2 * (var3 / var4) ** 2
    assert population.shlosser_classes(sizes, counts, f) == pytest.approx(want, rel=1e-14)


def test_start_values_are_arx_grid():
    assert len(population.START_VALUES) == 16
    assert population.START_VALUES[0] == (0.0, 0.0)
    assert population.START_VALUES[-1][0] == pytest.approx(0.99)


def test_dankar_rule_and_no_uniques():
    rng = np.random.default_rng(3)
    classes = rng.zipf(2.0, 2000)
    sizes, counts = _hist(classes[classes < 500])
    n = int(np.dot(sizes, counts))
    small = population.population_uniqueness(sizes, counts, n * 50)  # f = 0.02 ≤ 0.1: Pitman
    assert small.dankar_model == "pitman" and small.dankar == small.pitman
    large = population.population_uniqueness(sizes, counts, int(n * 2.5))  # f = 0.4
    assert large.dankar_model in ("zayatz", "snb")
    if large.snb is None:
        assert large.dankar == large.zayatz
    else:
        assert large.dankar == min(large.zayatz, large.snb)
    none = population.population_uniqueness([2, 3], [5, 5], 1000)
    assert (none.pitman, none.zayatz, none.snb, none.dankar, none.dankar_model) == (
        0,
        0,
        0,
        0,
        "none",
    )


def test_population_size_from_options():
    assert population.population_size(1000, sampling_fraction=0.3) == 3333
    assert population.population_size(1000, population=5000) == 5000
    for bad in (0.0, 1.5, -0.1, float("nan")):
        with pytest.raises(ParameterError, match=r"must be in \(0, 1\]"):
            population.population_size(10, sampling_fraction=bad)
    with pytest.raises(ParameterError, match="at least the number of rows"):
        population.population_size(10, population=5)


# --- Pitman on the model's parameter space ---------------------------------------------------


def _grid_max(lik, u):
    """The largest log-likelihood on a grid over the valid space (Hoshino 2001): 0 ≤ α < 1 with
    θ > −α, and α < 0 with θ = −mα for whole m ≥ u."""
    best = -math.inf
    for a in np.linspace(0.0, 0.98, 50):
        for t in np.concatenate([-a + np.geomspace(1e-3, 1e4, 120)]):
            best = max(best, lik(t, a))
    for m in np.unique(np.round(np.geomspace(u, 1000 * u, 60)).astype(int)):
        for beta in np.geomspace(1e-4, 50, 120):
            best = max(best, lik(m * beta, -beta))
    return best


def _loglik(sizes, counts, t, a):
    """ℓ(θ, α) of the Pitman sampling formula term by term (Hoshino 2001, eq. 2.1), written
    apart from qar_sql.stats.pitman: −inf outside the space where every term is defined."""
    n, u = int(np.dot(sizes, counts)), int(np.sum(counts))
    terms = [t + i * a for i in range(1, u)]
    if any(x <= 0 for x in terms) or t <= -1:
        return -math.inf
    total = sum(math.log(x) for x in terms) - sum(math.log(t + i) for i in range(1, n))
    for j, c in zip(sizes, counts):
        total += c * sum(math.log(i - a) for i in range(1, int(j)))
    return total


@pytest.mark.parametrize("seed", [1, 4, 9])
def test_pitman_valid_root_is_the_maximum_on_a_grid(seed):
    """The fit maximises ℓ over the valid space: no grid point does better, the fit is in the
    space, ℓ there equals the term-by-term sum, and a valid ARX root is kept exactly."""
    from qar_sql.stats import pitman

    rng = np.random.default_rng(seed)
    classes = rng.zipf(1.7, 300)
    sizes, counts = _hist(classes[classes < 150])
    n, u = int(np.dot(sizes, counts)), int(counts.sum())
    fit = pitman.fit(sizes, counts, 50.0 * n)
    lik = pitman.Likelihood(sizes, counts)
    assert pitman.valid(fit.theta, fit.alpha, u)
    assert fit.loglik == pytest.approx(_loglik(sizes, counts, fit.theta, fit.alpha), rel=1e-12)
    # The module's ℓ is the term-by-term sum wherever defined (checked at points of both parts),
    # so the grid may use it.
    for t, a in ((3.0, 0.2), (0.5, 0.9), (40.0, 0.0), (3.0 * u, -3.0), (u * 0.25, -0.25)):
        assert lik(t, a) == pytest.approx(_loglik(sizes, counts, t, a), rel=1e-11)
    assert _grid_max(lik, u) <= fit.loglik + 1e-7
    root = population.pitman_root(sizes, counts)
    res = population.population_uniqueness(sizes, counts, 50 * n)
    assert res.pitman_theta == pytest.approx(fit.theta, rel=1e-5) and res.pitman_alpha == pytest.approx(
        fit.alpha, rel=1e-4, abs=1e-7
    )
    if pitman.valid(*root, u) and lik(*root) >= fit.loglik - 1e-9:
        assert res.pitman == res.pitman_arx  # ARX's root is the maximum: ARX's figure, unchanged


def test_pitman_finite_population_branch_on_a_grid():
    """A sample whose likelihood peaks at α < 0 (few, even classes): the fit sits on
    θ = −mα with m whole, and beats every grid point of both parts of the space."""
    from qar_sql.stats import pitman

    sizes, counts = np.array([1, 30, 40, 50, 60]), np.array([1, 3, 3, 3, 3])
    u = int(counts.sum())
    fit = pitman.fit(sizes, counts, 1e6)
    assert fit.alpha < 0
    m = -fit.theta / fit.alpha
    assert m == pytest.approx(round(m), abs=1e-6) and round(m) >= u
    lik = pitman.Likelihood(sizes, counts)
    for t, a in ((3.0, 0.2), (0.5, 0.9), (3.0 * u, -3.0)):
        assert lik(t, a) == pytest.approx(_loglik(sizes, counts, t, a), rel=1e-11)
    assert _grid_max(lik, u) <= fit.loglik + 1e-7
    assert math.isfinite(fit.uniques) and fit.uniques >= 0


def test_population_models_leak_no_runtime_warning():
    """A class of 25,933 records at f = 0.5 (adult's largest race class) made (1 − f)^k
    underflow and (1 + f)^k overflow in Shlosser's estimator: numpy printed a RuntimeWarning
    on stderr. The figures are unchanged (NaN terms as in ARX's Java); the warning is gone."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = population.population_uniqueness([1, 2, 3, 25933], [20, 5, 3, 1], 2 * (20 + 10 + 9 + 25933))
    assert res.zayatz is not None


def _zayatz_exact(sizes, counts, N):
    """Zayatz's estimate with h(k) = k·C(N − k, n − 1)/C(N, n) in exact rational arithmetic."""
    from fractions import Fraction

    n = sum(k * c for k, c in zip(sizes, counts))
    total = math.comb(N, n)
    h = {k: Fraction(k * math.comb(N - k, n - 1), total) for k in sizes}
    c1 = counts[sizes.index(1)]
    cond = Fraction(c1) * h[1] / sum(c * h[k] for k, c in zip(sizes, counts))
    return float(c1 * cond / Fraction(n, N))


@pytest.mark.parametrize("N", [10 * 102, 2**31 + 11, 10**12 + 39])
def test_zayatz_equals_the_exact_hypergeometric(N):
    """Below 2³¹ scipy's hypergeometric as before; above it (where scipy took minutes and lost
    digits: f = 1e-9 ran past 120 s) the log-space product k·f·Π(1 − (n−1)/(N−1−i)), in well
    under a second."""
    import time

    sizes, counts = [1, 2, 3, 7], [40, 15, 6, 2]
    started = time.process_time()  # CPU seconds: other processes' load does not count
    got = population.zayatz(sizes, counts, N)
    assert time.process_time() - started < 1.0
    assert got == pytest.approx(_zayatz_exact(sizes, counts, N), rel=1e-10)


@pytest.mark.parametrize("N", [10**30, 3 * 10**304])
def test_zayatz_at_an_extreme_population_is_its_limit(N):
    """As f = n/N → 0 every class of the sample is a sample of its own population class and
    P(unique | sample unique) → c1·1/Σ c_k·k = c1/n: the fraction of population uniques →
    c1²/n²."""
    import time

    sizes, counts = [1, 2, 3, 7], [40, 15, 6, 2]
    n = 102
    # CPU seconds of Zayatz alone: population_uniqueness also fits Pitman's model (0.2 s of CPU,
    # over a second of wall clock on a loaded machine), which this bound is not about.
    started = time.process_time()
    zayatz = population.zayatz(sizes, counts, N)
    assert time.process_time() - started < 1.0
    pu = population.population_uniqueness(sizes, counts, N)
    assert pu.zayatz == zayatz / N == pytest.approx(40**2 / n**2, rel=1e-12)  # uniques → their fraction
    assert pu.population == N
