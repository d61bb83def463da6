"""Tests of qar_sql.stats.evt (pure statistics, no database)."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from scipy import stats

from qar_sql.errors import DataError, NoTailError, ParameterError
from qar_sql.stats import evt
from qar_sql.stats.evt import (
    PWM_METHODS,
    clip_theta,
    fit_gpd_pwm,
    qar_risk,
    qar_risk_batch,
    qar_risk_gradient,
    quantile_type8,
    tail_quantile,
    validate_parameters,
)


def expit(y):
    return 1.0 / (1.0 + math.exp(-y))


def logit(x):
    return math.log(x / (1.0 - x))


# ---- quantile_type8 -------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 3, 5, 14, 20, 84, 1000])
def test_quantile_type8_equals_numpy_median_unbiased(n):
    rng = np.random.default_rng(n)
    for x in (rng.normal(size=n), rng.integers(0, 4, size=n).astype(float)):  # with ties
        for q in (0.0, 0.01, 0.05, 0.25, 0.5, 0.8, 0.9, 0.95, 0.99, 1.0, *rng.uniform(size=5)):
            assert quantile_type8(x, q) == np.quantile(x, q, method="median_unbiased")


def test_quantile_type8_by_hand():
    # h = n q + (q + 1)/3; n = 4, q = 0.5: h = 2.5, halfway between x_(2) = 2 and x_(3) = 3.
    assert quantile_type8(np.array([4.0, 1.0, 3.0, 2.0]), 0.5) == 2.5
    # n = 20, q = 0.95: h = 19.65, so u = x_(19) + 0.65 (x_(20) - x_(19)).
    x = np.arange(1.0, 21.0) ** 2
    assert quantile_type8(x, 0.95) == pytest.approx(361 + 0.65 * 39, rel=1e-15)
    # h below 1 / at least n: the extremes.
    assert quantile_type8(x, 0.0) == 1.0 and quantile_type8(x, 1.0) == 400.0


def test_quantile_type8_rejects_empty_and_bad_q():
    with pytest.raises(DataError):
        quantile_type8(np.array([]), 0.5)
    with pytest.raises(ParameterError, match="1.5"):
        quantile_type8(np.array([1.0]), 1.5)


# ---- PWM fit ----------------------------------------------------------------------------------


def test_pwm_hand_example():
    # x = 1, 2, 3: a0 = 2; p_k = (0.65, 1.65, 2.65)/3, so
    # a1 = (2.35·1 + 1.35·2 + 0.35·3)/9 = 6.1/9, a0 − 2 a1 = 5.8/9,
    # ξ = 2 − 2/(5.8/9) = −32/29, β = 2·2·(6.1/9)/(5.8/9) = 122/29.
    xi, beta = fit_gpd_pwm(np.array([3.0, 1.0, 2.0]))  # any order
    assert xi == pytest.approx(-32 / 29, rel=1e-14)
    assert beta == pytest.approx(122 / 29, rel=1e-14)
    # Unbiased: b1 = (0·1 + ½·2 + 1·3)/3 = 4/3, a1 = 2/3, a0 − 2 a1 = 2/3: ξ = −1, β = 4.
    xi, beta = fit_gpd_pwm(np.array([2.0, 3.0, 1.0]), "unbiased")
    assert xi == pytest.approx(-1.0, rel=1e-14)
    assert beta == pytest.approx(4.0, rel=1e-14)


def test_pwm_single_excess():
    # n = 1: a1 = 0.35 x, a0 − 2 a1 = 0.3 x, ξ = 2 − 1/0.3 = −4/3, β = 2·0.35 x/0.3 = 7x/3.
    xi, beta = fit_gpd_pwm(np.array([0.7]))
    assert xi == pytest.approx(-4 / 3, rel=1e-14)
    assert beta == pytest.approx(7 * 0.7 / 3, rel=1e-14)
    with pytest.raises(DataError, match="n = 1"):
        fit_gpd_pwm(np.array([0.7]), "unbiased")
    with pytest.raises(DataError, match="distinct"):
        fit_gpd_pwm(np.array([0.7, 0.7, 0.7]), "unbiased")


def test_pwm_all_equal_plotting_exists():
    # n equal excesses x: a0 = x, a1 = (x/n) Σ (1 − (k − 0.35)/n) = x(n − 0.3)/(2n),
    # a0 − 2 a1 = 0.3 x/n > 0, so ξ = 2 − n/0.3 and β = 2 a0 a1/(a0 − 2 a1) = x(n − 0.3)/0.3.
    n, x = 5, 0.4
    xi, beta = fit_gpd_pwm(np.full(n, x))
    assert xi == pytest.approx(2 - n / 0.3, rel=1e-12)
    assert beta == pytest.approx(x * (n - 0.3) / 0.3, rel=1e-12)


@pytest.mark.parametrize("bad", [np.array([]), np.array([1.0, -0.1]), np.array([0.0, 0.0]), np.array([1.0, np.inf])])
def test_pwm_rejects_bad_excesses(bad):
    with pytest.raises(DataError):
        fit_gpd_pwm(bad)


@pytest.mark.parametrize("method", PWM_METHODS)
@pytest.mark.parametrize("xi_true, beta_true, seed", [(-0.3, 1.5, 1), (0.0, 0.8, 2), (0.2, 1.5, 3), (0.35, 0.3, 4)])
def test_pwm_recovers_gpd_parameters(method, xi_true, beta_true, seed):
    # scipy's genpareto(c, scale) is G = 1 − (1 + c x/scale)^(−1/c): c = ξ, scale = β.
    x = stats.genpareto.rvs(xi_true, scale=beta_true, size=200_000, random_state=seed)
    xi, beta = fit_gpd_pwm(x, method)
    # PWM standard errors at n = 2e5 are ≈ 0.003–0.006 for ξ and < 1% for β.
    assert xi == pytest.approx(xi_true, abs=0.03)
    assert beta == pytest.approx(beta_true, rel=0.03)


# Reference values produced by
#     Rscript tests/reference/gpd_pwm_reference.R
# (R 4.2.2, fExtremes 4021.83; "plotting" from fExtremes::gpdFit(x, u = 0, type = "pwm"),
# "unbiased" from the plain-R formulas in that script).
R_VECTORS = {
    "hand": np.array([1.0, 2.0, 3.0]),
    "gamma12": np.array(
        [0.3809, 0.0224, 0.5902, 0.3078, 0.377, 0.2484, 0.4332, 1.5444, 1.5725, 0.0923, 0.7642, 0.3815]
    ),
    "gpdq40": 0.5 / 0.2 * ((1 - np.arange(1, 41) / 41) ** (-0.2) - 1),
    "single": np.array([0.7]),
}
R_PWM = [
    ("hand", "plotting", -1.1034482758620694, 4.2068965517241388),
    ("hand", "unbiased", -1.0000000000000009, 4.0000000000000018),
    ("gamma12", "plotting", -0.158738731787611, 0.64839156968395428),
    ("gamma12", "unbiased", -0.091731375914000601, 0.61089648691561094),
    ("gpdq40", "plotting", 0.10021977110911817, 0.51777636505047864),
    ("gpdq40", "unbiased", 0.12094078017079046, 0.50585251030501965),
    ("single", "plotting", -1.3333333333333326, 1.6333333333333329),
]


@pytest.mark.parametrize("name, method, xi_r, beta_r", R_PWM)
def test_pwm_matches_r(name, method, xi_r, beta_r):
    xi, beta = fit_gpd_pwm(R_VECTORS[name], method)
    assert xi == pytest.approx(xi_r, rel=1e-12, abs=1e-14)
    assert beta == pytest.approx(beta_r, rel=1e-12)


# ---- tail_quantile and the ξ → 0 limit ------------------------------------------------------


def test_tail_quantile_formula():
    u, xi, beta, alpha, pi_u = 0.7, 0.25, 0.6, 0.01, 0.05
    expected = expit(logit(u) + beta / xi * ((alpha / pi_u) ** (-xi) - 1))
    assert tail_quantile(u, xi, beta, alpha, pi_u) == pytest.approx(expected, rel=1e-14)
    xi = -0.8
    expected = expit(logit(u) + beta / xi * ((alpha / pi_u) ** (-xi) - 1))
    assert tail_quantile(u, xi, beta, alpha, pi_u) == pytest.approx(expected, rel=1e-14)


def test_tail_quantile_xi_zero_is_exponential():
    u, beta, alpha, pi_u = 0.3, 0.9, 0.001, 0.05
    exponential = expit(logit(u) + beta * math.log(pi_u / alpha))
    assert tail_quantile(u, 0.0, beta, alpha, pi_u) == pytest.approx(exponential, rel=1e-15)
    assert tail_quantile(u, -0.0, beta, alpha, pi_u) == pytest.approx(exponential, rel=1e-15)


def test_tail_quantile_continuous_across_switch():
    u, beta, alpha, pi_u = 0.3, 0.9, 0.001, 0.05
    tol = evt.XI_ZERO_TOL
    for sign in (1.0, -1.0):
        inside = tail_quantile(u, sign * np.nextafter(tol, 0), beta, alpha, pi_u)
        outside = tail_quantile(u, sign * tol, beta, alpha, pi_u)
        assert inside == pytest.approx(outside, rel=1e-15)


@pytest.mark.parametrize("xi", [1e-12, -1e-12, 3e-10, 1e-9, -1e-9, 2e-9, 1e-7, -1e-5, 1e-3])
def test_tail_quantile_small_xi_matches_high_precision(xi):
    u, beta, alpha, pi_u = 0.3, 0.9, 0.001, 0.05
    mpmath.mp.dps = 50
    m_xi = mpmath.mpf(xi)
    y = mpmath.log(mpmath.mpf(u) / (1 - mpmath.mpf(u))) + mpmath.mpf(beta) / m_xi * (
        (mpmath.mpf(alpha) / mpmath.mpf(pi_u)) ** (-m_xi) - 1
    )
    exact = float(1 / (1 + mpmath.exp(-y)))
    assert tail_quantile(u, xi, beta, alpha, pi_u) == pytest.approx(exact, rel=1e-14)


# ---- clipping and keys ------------------------------------------------------------------------


def test_clip_theta_bounds():
    m = 200
    theta = np.array([1 / m, 0.3, 1.0, 1.0, 0.0])
    clipped = clip_theta(theta, m)
    np.testing.assert_array_equal(clipped, [1 / m, 0.3, 1 - 0.5 / m, 1 - 0.5 / m, 0.5 / m])
    assert clipped is not theta


def test_keys_are_clipped_counted_and_noted():
    m = 500
    rng = np.random.default_rng(5)
    theta = np.r_[rng.integers(50, 480, size=97) / m, 1.0, 1.0, 1.0]
    fit = qar_risk(theta, m)
    assert fit.n_clipped == 3
    assert fit.n_qi == 100
    assert math.isfinite(fit.risk) and 0 < fit.risk < 1
    assert any("3 of 100 quasi-identifiers are keys" in w for w in fit.warnings)
    # The keys enter the fit as θ = 1 − 0.5/M.
    same = qar_risk(np.r_[theta[:97], [1 - 0.5 / m] * 3], m)
    assert same.risk == fit.risk and same.n_clipped == 0
    assert not any("keys" in w for w in same.warnings)


# ---- the estimator on hand-computable and R reference examples ------------------------------


def test_qar_risk_hand_example():
    # N_p = 20, π_u = 0.2: type-8 position h = 20·0.8 + 1.8/3 = 16.6,
    # so u = x_(16) + 0.6 (x_(17) − x_(16)).
    # With x_(16) = x_(17) = 0.5, u = 0.5 (logit u = 0); the exceedances have logits 1, 2, 3,
    # so the excesses are 1, 2, 3: ξ = −32/29, β = 122/29 (test_pwm_hand_example), and
    # T̂ = expit((β/ξ)[(α/π_u)^(−ξ) − 1]) = expit(−(122/32)[(0.01/0.2)^(32/29) − 1]).
    theta = np.r_[np.linspace(0.1, 0.4, 15), 0.5, 0.5, expit(1), expit(2), expit(3)]
    fit = qar_risk(np.random.default_rng(0).permutation(theta), 10_000, alpha=0.01, pi_u=0.2)
    assert fit.u == 0.5
    assert fit.n_exceedances == 3
    assert fit.xi == pytest.approx(-32 / 29, rel=1e-12)
    assert fit.beta == pytest.approx(122 / 29, rel=1e-12)
    expected = expit(-(122 / 32) * ((0.01 / 0.2) ** (32 / 29) - 1))
    assert fit.risk == pytest.approx(expected, rel=1e-12)
    assert fit.n_clipped == 0
    assert len(fit.warnings) == 1 and "only 3 exceedances" in fit.warnings[0]


# θ = H/M with M = 1000, N_p = 84 (two keys, some ties); same vector in the R script.
R_H = np.array(
    [
        512,
        252,
        541,
        989,
        336,
        1000,
        961,
        839,
        302,
        321,
        182,
        182,
        787,
        795,
        221,
        553,
        104,
        932,
        406,
        666,
        327,
        258,
        766,
        542,
        926,
        696,
        847,
        791,
        372,
        340,
        105,
        800,
        265,
        463,
        800,
        850,
        438,
        620,
        590,
        222,
        1000,
        929,
        606,
        668,
        296,
        196,
        535,
        919,
        348,
        897,
        318,
        394,
        371,
        885,
        502,
        333,
        882,
        711,
        492,
        129,
        929,
        929,
        929,
        348,
        988,
        920,
        486,
        214,
        304,
        281,
        852,
        505,
        925,
        981,
        276,
        577,
        862,
        133,
        451,
        536,
        604,
        527,
        377,
        145,
    ]
)
R_M = 1000
R_THETAS = {"keys": R_H / R_M, "nokeys": R_H[R_H < R_M] / R_M}
# Produced by `Rscript tests/reference/gpd_pwm_reference.R` (quantile(type = 8), logit, PWM
# formulas of METHOD §2 in plain R; the plotting fit cross-checked against fExtremes::gpdFit).
# vector, alpha, pi_u, pwm, risk, u, n, xi, beta
R_QAR = [
    (
        "keys",
        0.01,
        0.05,
        "plotting",
        0.99925628421083634,
        0.98415000000000008,
        4,
        -0.032459585356033216,
        1.9606264218565097,
    ),
    (
        "keys",
        0.001,
        0.05,
        "plotting",
        0.99998801232595336,
        0.98415000000000008,
        4,
        -0.032459585356033216,
        1.9606264218565097,
    ),
    (
        "keys",
        0.01,
        0.2,
        "plotting",
        0.99879722226131284,
        0.88440000000000007,
        17,
        0.26730646773913325,
        1.0208833775351056,
    ),
    (
        "keys",
        0.01,
        0.2,
        "unbiased",
        0.99888009540153966,
        0.88440000000000007,
        17,
        0.31779286208770618,
        0.95053920427196537,
    ),
    (
        "nokeys",
        0.01,
        0.05,
        "plotting",
        0.99060926223497092,
        0.94794999999999996,
        4,
        -1.1310124822126979,
        2.3706094063035135,
    ),
    (
        "nokeys",
        0.001,
        0.05,
        "plotting",
        0.99312519851105241,
        0.94794999999999996,
        4,
        -1.1310124822126979,
        2.3706094063035135,
    ),
    (
        "nokeys",
        0.01,
        0.2,
        "plotting",
        0.98486452810742486,
        0.8660000000000001,
        16,
        -0.41518687785044062,
        1.3472339166983258,
    ),
    (
        "nokeys",
        0.01,
        0.2,
        "unbiased",
        0.98559308518246058,
        0.8660000000000001,
        16,
        -0.37163668159249319,
        1.3057748681473007,
    ),
]


@pytest.mark.parametrize("name, alpha, pi_u, pwm, risk, u, n, xi, beta", R_QAR)
def test_qar_risk_matches_r(name, alpha, pi_u, pwm, risk, u, n, xi, beta):
    fit = qar_risk(R_THETAS[name], R_M, alpha=alpha, pi_u=pi_u, pwm=pwm)
    assert fit.u == pytest.approx(u, rel=1e-15)
    assert fit.n_exceedances == n
    assert fit.xi == pytest.approx(xi, rel=1e-11)
    assert fit.beta == pytest.approx(beta, rel=1e-11)
    assert fit.risk == pytest.approx(risk, rel=1e-13)
    assert fit.n_clipped == (2 if name == "keys" else 0)
    assert fit.n_qi == R_THETAS[name].size


# ---- no tail, small tails, N_p too small -----------------------------------------------------


def test_constant_theta_has_no_tail():
    with pytest.raises(NoTailError, match="no θ exceeds"):
        qar_risk(np.full(50, 0.4), 100)


def test_top_values_tied_with_u_have_no_tail():
    # N_p = 20, π_u = 0.05: u interpolates x_(19) and x_(20); equal, so u = max.
    theta = np.r_[np.linspace(0.1, 0.5, 18), 0.9, 0.9]
    with pytest.raises(NoTailError):
        qar_risk(theta, 100)
    assert issubclass(NoTailError, DataError)


def test_small_tail_warns_large_tail_does_not():
    rng = np.random.default_rng(11)
    small = qar_risk(rng.uniform(0.1, 0.9, size=100), 1000)  # n = 5
    assert small.n_exceedances == 5
    assert any("only 5 exceedances" in w and "fragile" in w for w in small.warnings)
    large = qar_risk(rng.uniform(0.1, 0.9, size=400), 1000)  # n = 20
    assert large.n_exceedances == 20
    assert large.warnings == ()


def test_np_too_small_for_pi_u():
    # Rule: the type-8 (1 − π_u) quantile is the maximum iff N_p·π_u ≤ (2 − π_u)/3;
    # for π_u = 0.05 that is N_p ≤ 13.
    theta13 = np.linspace(0.1, 0.9, 13)
    with pytest.raises(DataError, match=r"N_p = 13 .*pi_u = 0.05.*at least 14"):
        qar_risk(theta13, 100)
    fit = qar_risk(np.linspace(0.1, 0.9, 14), 100)
    assert fit.n_exceedances == 1
    # A larger π_u makes 13 QIs enough: 2/(3·13 + 1) = 0.05.
    assert qar_risk(theta13, 100, pi_u=0.06).n_exceedances == 1
    with pytest.raises(DataError, match="N_p = 1 "):
        qar_risk(np.array([0.5]), 100)
    with pytest.raises(DataError, match="N_p = 13"):
        qar_risk_batch(np.tile(theta13, (3, 1)), 100)


# ---- bad input ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "alpha, pi_u, named",
    [
        (0.05, 0.05, "alpha = 0.05"),
        (0.1, 0.05, "alpha = 0.1"),
        (0.0, 0.05, "alpha = 0.0"),
        (-0.01, 0.05, "alpha = -0.01"),
        (1.0, 0.05, "alpha = 1.0"),
        (float("nan"), 0.05, "alpha = nan"),
        (0.01, 1.0, "pi_u = 1.0"),
        (0.01, 1.5, "pi_u = 1.5"),
        (0.01, 0.0, "pi_u = 0.0"),
        (0.01, "x", "pi_u = 'x'"),
    ],
)
def test_bad_alpha_pi_u(alpha, pi_u, named):
    with pytest.raises(ParameterError, match=named):
        validate_parameters(3, alpha, pi_u)
    theta = np.linspace(0.1, 0.9, 100)
    with pytest.raises(ParameterError, match=named):
        qar_risk(theta, 100, alpha=alpha, pi_u=pi_u)
    with pytest.raises(ParameterError, match=named):
        qar_risk_batch(theta[None, :], 100, alpha=alpha, pi_u=pi_u)
    with pytest.raises(ParameterError, match=named):
        qar_risk_gradient(theta, 100, alpha=alpha, pi_u=pi_u)


@pytest.mark.parametrize("p", [0, -1, 2.5, True, "3"])
def test_bad_p(p):
    # (a boolean as a file writes it, errors.shown: the same sentence for qar.toml and the API)
    with pytest.raises(ParameterError, match=f"p = {'true' if p is True else repr(p)}"):
        validate_parameters(p, 0.01, 0.05)


def test_good_parameters_pass():
    validate_parameters(3, 0.01, 0.05)
    validate_parameters(None, 0.001, 0.05)
    validate_parameters(np.int64(1), 0.01, 0.5)


def test_unknown_pwm():
    theta = np.linspace(0.1, 0.9, 100)
    for f in (qar_risk, qar_risk_gradient):
        with pytest.raises(ParameterError, match="pwm = 'mle'"):
            f(theta, 100, pwm="mle")
    with pytest.raises(ParameterError, match="'mle'"):
        qar_risk_batch(theta[None, :], 100, pwm="mle")
    with pytest.raises(ParameterError, match="'mle'"):
        fit_gpd_pwm(np.array([1.0, 2.0]), "mle")


@pytest.mark.parametrize("m", [1, 0, -3])
def test_too_few_records(m):
    with pytest.raises(DataError, match=f"M = {m}"):
        qar_risk(np.linspace(0.1, 0.9, 100), m)


@pytest.mark.parametrize(
    "theta",
    [
        np.array([]),
        np.full((3, 30), 0.5),
        np.r_[np.linspace(0.1, 0.9, 30), 1.5],
        np.r_[np.linspace(0.1, 0.9, 30), np.nan],
        np.r_[np.linspace(0.1, 0.9, 30), 0.0],
    ],
)
def test_bad_theta(theta):
    with pytest.raises(DataError):
        qar_risk(theta, 100)


# ---- batch ----------------------------------------------------------------------------------


def _random_rows(rng, n_qi, m):
    """θ rows of several kinds: continuous, few distinct values (ties), keys, constant (no tail)."""
    rows = [
        rng.uniform(0.05, 0.95, size=n_qi),
        rng.integers(1, m + 1, size=n_qi) / m,
        rng.integers(m - 5, m + 1, size=n_qi) / m,  # many keys and ties near 1
        np.round(rng.beta(2, 5, size=n_qi), 2) + 0.01,  # heavy ties
        np.full(n_qi, 0.3),  # no tail
        np.r_[rng.uniform(0.1, 0.5, size=n_qi - 3), [0.7, 0.7, 0.7]],  # top tied; maybe no tail
        rng.beta(0.5, 3, size=n_qi) * (1 - 1 / m) + 1 / m,
    ]
    return np.array(rows)


@pytest.mark.parametrize("pwm", PWM_METHODS)
@pytest.mark.parametrize("n_qi, m, pi_u", [(14, 30, 0.05), (84, 1000, 0.05), (300, 50, 0.1), (1000, 12_128, 0.05)])
def test_batch_equals_rows(pwm, n_qi, m, pi_u):
    rng = np.random.default_rng(n_qi)
    thetas = np.vstack([_random_rows(rng, n_qi, m) for _ in range(4)])
    got = qar_risk_batch(thetas, m, alpha=0.01, pi_u=pi_u, pwm=pwm)
    assert got.shape == (thetas.shape[0],)
    n_nan = 0
    for row, value in zip(thetas, got):
        try:
            expected = qar_risk(row, m, alpha=0.01, pi_u=pi_u, pwm=pwm).risk
        except DataError:  # includes NoTailError
            expected = math.nan
            n_nan += 1
        if math.isnan(expected):
            assert math.isnan(value)
        else:
            assert value == pytest.approx(expected, rel=1e-12)
    assert n_nan >= 4  # the constant rows at least


def test_batch_chunks(monkeypatch):
    rng = np.random.default_rng(3)
    thetas = np.vstack([_random_rows(rng, 84, 1000) for _ in range(10)])
    whole = qar_risk_batch(thetas, 1000)
    monkeypatch.setattr(evt, "_BATCH_BYTES", 8 * 6 * 84 * 3)  # 3 rows per chunk
    chunked = qar_risk_batch(thetas, 1000)
    np.testing.assert_array_equal(np.isnan(whole), np.isnan(chunked))
    np.testing.assert_allclose(chunked, whole, rtol=1e-15)


def test_batch_rejects_bad_input():
    with pytest.raises(DataError, match="2-D"):
        qar_risk_batch(np.linspace(0.1, 0.9, 50), 100)
    with pytest.raises(DataError):
        qar_risk_batch(np.empty((0, 50)), 100)
    with pytest.raises(DataError, match="M = 1"):
        qar_risk_batch(np.full((2, 50), 0.5), 1)


# ---- gradient -------------------------------------------------------------------------------


def _fd(theta, m, j, h, **kw):
    a, b = theta.copy(), theta.copy()
    a[j] += h
    b[j] -= h
    return (qar_risk(a, m, **kw).risk - qar_risk(b, m, **kw).risk) / (2 * h)


@pytest.mark.parametrize("pwm", PWM_METHODS)
@pytest.mark.parametrize("n_qi, pi_u, seed", [(84, 0.05, 1), (300, 0.1, 2), (40, 0.2, 3)])
def test_gradient_matches_finite_differences(pwm, n_qi, pi_u, seed):
    rng = np.random.default_rng(seed)
    m = 10**6
    theta = rng.beta(2, 5, size=n_qi)  # continuous: no ties, none clipped
    kw = dict(alpha=0.01, pi_u=pi_u, pwm=pwm)
    g = qar_risk_gradient(theta, m, **kw)
    fit = qar_risk(theta, m, **kw)
    # Non-zero exactly on the n exceedances and the order statistics x_(h), x_(h+1) that u
    # interpolates (x_(h+1) > u is itself the smallest exceedance).
    assert np.count_nonzero(g) == fit.n_exceedances + 1
    order = np.argsort(theta)
    assert np.all(g[order[: n_qi - fit.n_exceedances - 1]] == 0)
    h = 1e-7
    fd = np.array([_fd(theta, m, j, h, **kw) for j in np.flatnonzero(g)])
    np.testing.assert_allclose(g[g != 0], fd, rtol=1e-6, atol=1e-9 * np.abs(g).max())
    # A zero entry really has no effect.
    j0 = order[0]
    assert _fd(theta, m, j0, 1e-3, **kw) == 0.0


def test_gradient_at_ties_splits_equally_and_sums_right():
    m = 10**6
    rng = np.random.default_rng(7)
    theta = rng.uniform(0.1, 0.6, size=100)
    theta[[3, 17, 42]] = 0.8  # a tied group inside the tail
    theta[[5, 6]] = 0.9
    g = qar_risk_gradient(theta, m)
    assert g[3] == g[17] == g[42] != 0
    assert g[5] == g[6] != 0
    # The sum over a tie group is the derivative of moving the whole group together.
    for group in ([3, 17, 42], [5, 6]):
        h = 1e-7
        a, b = theta.copy(), theta.copy()
        a[group] += h
        b[group] -= h
        fd = (qar_risk(a, m).risk - qar_risk(b, m).risk) / (2 * h)
        assert g[group].sum() == pytest.approx(fd, rel=1e-6)


def test_gradient_zero_for_keys():
    m = 1000
    rng = np.random.default_rng(8)
    theta = np.r_[rng.integers(100, 990, size=97) / m, 1.0, 1.0, 1.0]
    g = qar_risk_gradient(theta, m)
    np.testing.assert_array_equal(g[-3:], 0.0)
    assert np.count_nonzero(g) > 0


def test_gradient_no_tail():
    with pytest.raises(NoTailError):
        qar_risk_gradient(np.full(50, 0.4), 100)


def test_bracket_derivative_series_and_closed_form_agree():
    ell = math.log(50.0)
    for xi in (-2e-3 / ell, -1.0001e-3 / ell, 0.9999e-3 / ell, 1.0001e-3 / ell, 0.3, -0.7):
        h = 1e-6
        fd = (evt._bracket(xi + h, ell) - evt._bracket(xi - h, ell)) / (2 * h)
        assert float(evt._bracket_derivative(xi, ell)) == pytest.approx(float(fd), rel=1e-8)
    below = float(evt._bracket_derivative(np.nextafter(1e-3 / ell, 0), ell))
    above = float(evt._bracket_derivative(1e-3 / ell, ell))
    assert below == pytest.approx(above, rel=1e-12)


def test_batch_on_top_values_equals_full_rows():
    """Rows holding only the largest W ≥ tail_width values give the full-row T̂."""
    rng = np.random.default_rng(42)
    n_qi, m = 300, 5000
    full = rng.integers(50, m, size=(200, n_qi)) / m
    full[:5, -3:] = 1.0  # keys
    full[5:10] = np.round(full[5:10], 2)  # ties
    w = evt.tail_width(n_qi, 0.05)
    for width in (w, w + 7, n_qi):
        top = -np.sort(-full, axis=1)[:, :width]
        rng.shuffle(top, axis=1)
        np.testing.assert_allclose(
            evt.qar_risk_batch(top, m, n_qi=n_qi), evt.qar_risk_batch(full, m), rtol=1e-13, equal_nan=True
        )
    with pytest.raises(ValueError):
        evt.qar_risk_batch(full[:, : w - 1], m, n_qi=n_qi)
