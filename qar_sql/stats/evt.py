"""Extreme-value statistics of the QaR risk (METHOD.md §2): pure numpy, no database.

Given the vector θ(j) = H(j)/M over all N_p quasi-identifiers (QIs) of size p, the QaR risk is

    T̂(p, α) = expit( logit u + (β̂/ξ̂)·[(α/π_u)^(−ξ̂) − 1] )

where

* θ is first clipped to [0.5/M, 1 − 0.5/M] (a key, θ = 1, would have logit θ = ∞);
* u is the Hyndman & Fan definition-8 (1 − π_u) quantile of the clipped θ;
* the exceedances are the θ(j) > u (strictly), n of them, with excesses
  l(j) = logit θ(j) − logit u > 0;
* (ξ̂, β̂) is the probability-weighted-moment (PWM) fit of the Generalised Pareto Distribution
  G(x) = 1 − (1 + ξx/β)^(−1/ξ) to the l(j) (Hosking & Wallis 1987), as in R's
  ``evir::gpd(method = "pwm")`` and ``fExtremes::gpdFit(type = "pwm")``.

Meaning: a QI of size p has risk above T̂(p, α) with probability α.

The module offers the scalar estimator (:func:`qar_risk`, returning a :class:`TailFit`), a
vectorised estimator for many θ-vectors at once (:func:`qar_risk_batch`, used for the record
contributions of METHOD §3, where each record i gives a vector θ(· : i)), and the analytic
gradient ∂T̂/∂θ (:func:`qar_risk_gradient`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from qar_sql.errors import DataError, NoTailError, ParameterError, shown
from qar_sql.rules import PWM_METHODS, check_tail

__all__ = [
    "PWM_METHODS",
    "SMALL_TAIL",
    "XI_ZERO_TOL",
    "TailFit",
    "clip_theta",
    "fit_gpd_pwm",
    "qar_risk",
    "qar_risk_batch",
    "qar_risk_gradient",
    "quantile_type8",
    "tail_quantile",
    "validate_parameters",
]


SMALL_TAIL = 10
"""A tail with fewer exceedances than this gets a warning: the fit is computed but fragile."""

XI_ZERO_TOL = 1e-9
"""Below this |ξ̂|, :func:`tail_quantile` uses the series of the ξ → 0 limit (see there)."""

# Bound on the memory one chunk of qar_risk_batch may use.  About seven float64 arrays of the
# chunk's shape live at the same time (sorted θ, logits, excesses, weights, products, mask).
_BATCH_BYTES = 50_000_000
_ARRAYS_PER_CHUNK = 7

# θ is H/M <= 1 in exact arithmetic; θ(j : i) computed as θ + (θ − U)/(L − 1) may land a few ulps
# above 1.  Accept that rounding, reject anything clearly above 1.
_THETA_ONE_SLACK = 1e-9


@dataclass(frozen=True)
class TailFit:
    """The QaR risk of one θ-vector and the tail fit behind it.

    Attributes
    ----------
    risk : T̂(p, α).
    u : the threshold, the type-8 (1 − π_u) quantile of the clipped θ.
    n_exceedances : n, the number of clipped θ strictly above u.
    xi, beta : the PWM estimates ξ̂, β̂ of the GPD fitted to logit θ − logit u.
    n_qi : N_p, the length of θ.
    n_clipped : how many θ were clipped at the upper bound 1 − 0.5/M (keys, θ = 1).
    warnings : human-readable notes (small tail, keys clipped); empty when all is well.
    """

    risk: float
    u: float
    n_exceedances: int
    xi: float
    beta: float
    n_qi: int
    n_clipped: int
    warnings: tuple[str, ...]


# --------------------------------------------------------------------------------------------
# Building blocks


def _logit(x):
    """logit x = ln(x / (1 − x)); x is clipped to (0, 1) by the caller, so it is finite."""
    return np.log(x / (1.0 - x))


def _expit(y):
    """expit y = 1/(1 + e^(−y)), written with e^(−|y|) so that it never overflows."""
    e = np.exp(-np.abs(y))
    return np.where(y >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def _type8_index(n: int, q: float) -> float:
    """0-based virtual index of the type-8 q-quantile of n sorted values.

    Hyndman & Fan definition 8 puts the q-quantile at 1-based position h = n·q + (q + 1)/3;
    the 0-based index is h − 1.  Written exactly as numpy's ``method="median_unbiased"``
    (α = β = 1/3 in ``n·q + (α + q·(1 − α − β)) − 1``) so that both round the same way.
    """
    a = b = 1.0 / 3.0
    return n * q + (a + q * (1.0 - a - b)) - 1.0


def _lerp(lo, hi, g: float):
    """lo + g·(hi − lo), in numpy's form (from the nearer end) so that results match numpy."""
    d = hi - lo
    if g >= 0.5:
        return hi - d * (1.0 - g)
    return lo + d * g


def quantile_type8(x: np.ndarray, q: float) -> float:
    """Sample q-quantile, Hyndman & Fan (1996) definition 8 (median-unbiased).

    With x sorted ascending, x_(1) ≤ … ≤ x_(n), and h = n·q + (q + 1)/3:

        Q(q) = x_(⌊h⌋) + (h − ⌊h⌋)·(x_(⌊h⌋+1) − x_(⌊h⌋))

    with Q = x_(1) when h < 1 and Q = x_(n) when h ≥ n: numpy's
    ``np.quantile(x, q, method="median_unbiased")`` and R's ``quantile(x, q, type = 8)``.
    x: non-empty, finite, any order; q in [0, 1].
    """
    x = np.asarray(x, dtype=float).ravel()
    if x.size == 0:
        raise DataError("cannot take a quantile of an empty vector; pass at least one value.")
    if not 0.0 <= q <= 1.0:
        raise ParameterError(f"quantile level q = {shown(q)} is outside [0, 1]; pass a probability.")
    return float(np.quantile(x, q, method="median_unbiased"))


def clip_theta(theta: np.ndarray, m: int) -> np.ndarray:
    """Clip θ to [0.5/M, 1 − 0.5/M] (METHOD §2, "θ = 1").

    A key (every record unique, θ = 1) would have logit θ = +∞.  Moving it half a record below
    1 keeps it the largest possible value yet finite.  Valid θ = H/M ≥ 1/M, so the lower clip
    never binds; it only guards logit against 0.  Returns a new float array.
    """
    m = int(m)
    return np.clip(np.asarray(theta, dtype=float), 0.5 / m, 1.0 - 0.5 / m)


def _pwm_moments(x_sorted: np.ndarray, method: str) -> tuple[float, float, np.ndarray]:
    """(a0, a1, w) for sorted excesses, w_k = n·∂a1/∂x_(k); see :func:`fit_gpd_pwm`."""
    n = x_sorted.size
    k = np.arange(1, n + 1, dtype=float)
    a0 = float(np.sum(x_sorted) / n)
    if method == "plotting":
        w = 1.0 - (k - 0.35) / n
        return a0, float(np.sum(w * x_sorted) / n), w
    # Unbiased: b1 = (1/n) Σ (k − 1)/(n − 1) x_(k), a1 = a0 − b1; needs n ≥ 2.
    b = (k - 1.0) / (n - 1)
    return a0, a0 - float(np.sum(b * x_sorted) / n), 1.0 - b


def fit_gpd_pwm(x: np.ndarray, method: str = "plotting") -> tuple[float, float]:
    """Fit a GPD to positive excesses by probability-weighted moments; return (ξ̂, β̂).

    The GPD is G(x) = 1 − (1 + ξx/β)^(−1/ξ) (ξ = 0: 1 − e^(−x/β)).  With x sorted ascending,
    x_(1) ≤ … ≤ x_(n):

        a0 = (1/n) Σ x_(k)
        a1 = (1/n) Σ (1 − p_k) x_(k),   p_k = (k − 0.35)/n             (method="plotting")
        a1 = a0 − b1,  b1 = (1/n) Σ (k − 1)/(n − 1) x_(k)              (method="unbiased")
        ξ̂ = 2 − a0/(a0 − 2·a1),   β̂ = 2·a0·a1/(a0 − 2·a1)

    ("plotting" is ``evir::gpd(method = "pwm")`` / ``fExtremes::gpdFit(type = "pwm")``.)

    Limiting cases.  With "plotting", a0 − 2·a1 = (1/n) Σ (2p_k − 1) x_(k) ≥ 0.3·a0/n > 0 for any
    n ≥ 1 and x ≥ 0 not all 0 (Chebyshev's sum inequality: increasing weights summing to 0.3), and
    a1 > 0, so ξ̂ < 1 and β̂ > 0 always exist; n = 1 gives ξ̂ = −4/3, β̂ = 7x/3.  With "unbiased"
    the weights of a0 − 2·a1 sum to 0, so it needs n ≥ 2 and at least two distinct values.

    Parameters
    ----------
    x : 1-D array of excesses, ≥ 0 and not all 0, any order (sorted here).
    method : one of :data:`PWM_METHODS`.

    Raises
    ------
    ParameterError : unknown method.
    DataError : empty, non-finite or negative x, or a fit that does not exist.
    """
    _check_pwm(method)
    xs = np.sort(np.asarray(x, dtype=float).ravel())
    n = xs.size
    if n == 0:
        raise DataError("cannot fit a GPD to no excesses; the tail is empty.")
    if not np.all(np.isfinite(xs)) or xs[0] < 0 or xs[-1] <= 0:
        raise DataError(
            f"GPD excesses must be finite, non-negative and not all zero; got values in [{shown(xs[0])}, {shown(xs[-1])}]."
        )
    if method == "unbiased" and (n < 2 or xs[0] == xs[-1]):
        raise DataError(
            f"the unbiased PWM fit needs at least 2 distinct excesses, got n = {n}; "
            'use pwm="plotting" or a larger pi_u.'
        )
    a0, a1, _ = _pwm_moments(xs, method)
    d = a0 - 2.0 * a1
    return 2.0 - a0 / d, 2.0 * a0 * a1 / d


def _bracket(xi, ell):
    """c(ξ) = [(α/π_u)^(−ξ) − 1]/ξ = expm1(ξ·ℓ)/ξ with ℓ = ln(π_u/α) > 0 (array-safe).

    expm1 keeps full relative accuracy for small ξ·ℓ, so the only issue is ξ = 0 itself.  For
    |ξ| < XI_ZERO_TOL we use the series ℓ·(1 + ξℓ/2), whose neglected term ξ²ℓ³/6 is ~1e-18·ℓ³:
    the switch is continuous to rounding, and at ξ = 0 this is exactly the exponential-tail value ℓ.
    """
    xi = np.asarray(xi, dtype=float)
    small = np.abs(xi) < XI_ZERO_TOL
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        exact = np.expm1(xi * ell) / np.where(small, 1.0, xi)
    return np.where(small, ell * (1.0 + 0.5 * xi * ell), exact)


def _bracket_derivative(xi, ell):
    """c'(ξ) = [ξℓ·e^(ξℓ) − expm1(ξℓ)]/ξ² = ℓ²·Σ_{k≥2} (k − 1)·z^(k−2)/k!, z = ξℓ.

    The closed form cancels catastrophically for small z, so |z| < 1e-3 uses the series
    ℓ²(1/2 + z/3 + z²/8 + z³/30 + z⁴/144), whose error is below ℓ²·z⁵/840 ≈ 1e-18·ℓ².
    """
    xi = np.asarray(xi, dtype=float)
    z = xi * ell
    small = np.abs(z) < 1e-3
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        zs = np.where(small, 1.0, z)
        exact = ell * ell * (zs * np.exp(zs) - np.expm1(zs)) / (zs * zs)
    series = ell * ell * (0.5 + z * (1 / 3 + z * (1 / 8 + z * (1 / 30 + z / 144))))
    return np.where(small, series, exact)


def tail_quantile(u: float, xi: float, beta: float, alpha: float, pi_u: float) -> float:
    """The GPD tail quantile on the logit scale, mapped back: T̂.

        T̂ = expit( logit u + (β/ξ)·[(α/π_u)^(−ξ) − 1] ),   expit y = 1/(1 + e^(−y))

    It solves π_u·(1 − G(logit T̂ − logit u)) = α: the probability of exceeding u is π_u and,
    beyond u, the excess of logit θ follows the GPD (ξ, β).

    Limiting case ξ → 0 (exponential tail): the bracket term tends to β·ln(π_u/α), evaluated
    as :func:`_bracket` says.
    """
    return float(_expit(_logit(u) + beta * _bracket(xi, math.log(pi_u / alpha))))


# --------------------------------------------------------------------------------------------
# Validation


def _check_pwm(pwm: str) -> None:
    if pwm not in PWM_METHODS:
        raise ParameterError(f"unknown PWM method pwm = {pwm!r}; use one of {', '.join(map(repr, PWM_METHODS))}.")


#: Checks p, α and π_u (the rule lives in :mod:`qar_sql.rules`).
validate_parameters = check_tail


def _check_m(m) -> int:
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)):
        raise DataError(f"the number of records M = {shown(m)} is not a whole number.")
    mi = int(m)
    if mi < 2:
        raise DataError(f"the data have M = {mi} record(s); the QaR risk needs at least 2 records.")
    return mi


def _check_theta(theta: np.ndarray, ndim: int) -> None:
    if theta.ndim != ndim:
        raise DataError(f"theta must be a {ndim}-D array, got shape {theta.shape}.")
    if theta.size == 0:
        raise DataError("theta is empty: there are no quasi-identifiers to compute a risk from.")
    bad = ~np.isfinite(theta) | (theta <= 0.0) | (theta > 1.0 + _THETA_ONE_SLACK)
    if bad.any():
        value = float(theta[bad].flat[0])
        raise DataError(
            f"theta contains {shown(value)}, outside (0, 1]; θ(j) = H(j)/M must be a share of "
            "distinct values, check how it was computed."
        )


def check_n_qi(n_qi: int, pi_u: float) -> float:
    """The type-8 index of the (1 − π_u) quantile; a DataError when no tail is possible (callers
    refuse with it before scanning a table).

    Rule for "N_p too small for the chosen π_u": the type-8 (1 − π_u) quantile is the largest
    θ exactly when h = N_p(1 − π_u) + (2 − π_u)/3 ≥ N_p, i.e. N_p·π_u ≤ (2 − π_u)/3, i.e.
    π_u ≤ 2/(3·N_p + 1).  Then no θ can exceed u whatever the data (for π_u = 0.05: N_p ≤ 13),
    so we refuse up front instead of reporting "no tail".  The test uses the same floating-point
    index as the quantile itself, so the rule and the computation never disagree.
    """
    v = _type8_index(n_qi, 1.0 - pi_u)
    if v >= n_qi - 1:
        # Closed form N_p > (2 − π_u)/(3π_u), then confirmed with the floating-point index.
        need = max(n_qi + 1, math.floor((2.0 - pi_u) / (3.0 * pi_u)) + 1)
        while _type8_index(need, 1.0 - pi_u) >= need - 1:
            need += 1
        raise DataError(
            f"N_p = {n_qi} quasi-identifiers is too small for pi_u = {pi_u!r}: the (1 - pi_u) "
            f"quantile is then the largest θ and nothing can exceed it; use at least {need} "
            f"quasi-identifiers (more columns or another p) or pi_u > {2 / (3 * n_qi + 1):.4g}."
        )
    return v


# --------------------------------------------------------------------------------------------
# The estimator


def _prepare(theta, m, alpha, pi_u, pwm, ndim=1):
    """Validate everything; return (raw θ, clipped θ, M, index of u)."""
    validate_parameters(None, alpha, pi_u)
    _check_pwm(pwm)
    mi = _check_m(m)
    raw = np.asarray(theta, dtype=float)
    _check_theta(raw, ndim)
    if ndim == 2:  # rows of a batch: N_p is checked there (a row may hold only the top)
        return raw, None, mi, None
    return raw, clip_theta(raw, mi), mi, check_n_qi(raw.size, pi_u)


def _no_tail(n_qi: int, u: float) -> NoTailError:
    return NoTailError(
        f"no θ exceeds the threshold u = {u:.6g} (the {n_qi} values are all equal or the "
        "largest ties with u), so there is no tail to fit; the risk is undefined here, "
        "try a larger pi_u or a different p."
    )


def qar_risk(theta, m: int, *, alpha=0.01, pi_u=0.05, pwm="plotting") -> TailFit:
    """The QaR risk T̂(p, α) of one θ-vector (METHOD §2), by the steps of the module docstring.

    Parameters
    ----------
    theta : 1-D array of θ(j) = H(j)/M over all QIs, each in (0, 1].
    m : M, the number of records the vector belongs to (L for the table, L − 1 for θ(· : i)).
    alpha, pi_u : tail probability of T̂ and of the threshold u; 0 < α < π_u < 1.
    pwm : one of :data:`PWM_METHODS`.

    Returns
    -------
    TailFit, with a warning when n < SMALL_TAIL and a note when keys (θ = 1) were clipped.

    Raises
    ------
    ParameterError : bad alpha, pi_u or pwm.
    DataError : M < 2, θ empty or outside (0, 1], N_p too small for π_u (N_p·π_u ≤ (2 − π_u)/3),
        or an unbiased fit that does not exist.
    NoTailError : n = 0 (every θ equal, or u equals the largest θ).
    """
    raw, t, mi, v = _prepare(theta, m, alpha, pi_u, pwm)
    n_qi = raw.size
    n_clipped = int(np.count_nonzero(raw > 1.0 - 0.5 / mi))
    u = quantile_type8(t, 1.0 - pi_u)
    exc = t[t > u]
    n = exc.size
    if n == 0:
        raise _no_tail(n_qi, u)
    xi, beta = fit_gpd_pwm(_logit(exc) - _logit(u), pwm)
    risk = tail_quantile(u, xi, beta, alpha, pi_u)

    notes = []
    if n < SMALL_TAIL:
        notes.append(
            f"the tail has only {n} exceedance{'s' if n != 1 else ''} of u = {u:.6g}; the GPD "
            f"fit is fragile with fewer than {SMALL_TAIL}, so read T̂ with caution "
            "(a larger pi_u or more quasi-identifiers give a larger tail)."
        )
    if n_clipped:
        notes.append(
            f"{n_clipped} of {n_qi} quasi-identifiers are keys (θ = 1, every record unique) and "
            f"were clipped to 1 - 0.5/M = {1.0 - 0.5 / mi:.10g} so that their logit is finite."
        )
    return TailFit(
        risk=risk,
        u=u,
        n_exceedances=int(n),
        xi=float(xi),
        beta=float(beta),
        n_qi=int(n_qi),
        n_clipped=n_clipped,
        warnings=tuple(notes),
    )


def tail_width(n_qi: int, pi_u: float) -> int:
    """How many of the largest θ the estimator reads: the order statistics u interpolates
    between and everything above them. Rows of :func:`qar_risk_batch` may hold just these."""
    v = check_n_qi(n_qi, pi_u)
    return n_qi - (math.floor(v) if v >= 0 else 0)


def fit_rows(
    tops: np.ndarray, m: int, n_qi: int, *, alpha: float, pi_u: float, pwm: str, ascending: bool = False
) -> dict[str, np.ndarray]:
    """T̂, u, n, ξ̂ and β̂ of each row of ``tops``: the W ≥ :func:`tail_width` largest values of
    a θ-vector of length ``n_qi`` (any order; ``ascending``: each row sorted already, which
    saves the sort), M = ``m``; unchecked (see :func:`qar_risk_batch`).

    Each row gives the values of :func:`qar_risk` (to rounding), vectorised over rows: since
    N_p and π_u are shared, the type-8 index (hence which two order statistics u interpolates
    and with what weight) is the same for every row; the exceedances of a sorted row are its
    last n_r entries, so the PWM weights follow from the column index and n_r, and a0, a1 are
    row sums of masked arrays.  Rows without a tail, or whose unbiased fit does not exist, give
    NaN (n = 0 for no tail).
    """
    v = check_n_qi(n_qi, pi_u)
    # v < 0: tiny N_p with a large π_u, the quantile is the minimum (as in quantile_type8)
    j, g = (0, 0.0) if v < 0 else (math.floor(v), v - math.floor(v))
    width = tops.shape[1]
    offset = n_qi - width  # full-row index of a truncated row's first column
    j -= offset
    s = np.clip(tops, 0.5 / m, 1.0 - 0.5 / m)  # (the clip keeps the order)
    if not ascending:
        s = np.sort(s, axis=1)
    u = _lerp(s[:, j], s[:, j + 1], g)
    mask = s > u[:, None]
    n = mask.sum(axis=1)
    nf = np.maximum(n, 1).astype(float)[:, None]
    lu = _logit(u)
    x = np.where(mask, _logit(s) - lu[:, None], 0.0)
    # 1-based rank among the exceedances: the tail of a sorted row starts at column N − n.
    rank = np.arange(width, dtype=float)[None, :] + offset - (n_qi - nf) + 1.0
    a0 = x.sum(axis=1) / nf[:, 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        if pwm == "plotting":
            a1 = (np.where(mask, 1.0 - (rank - 0.35) / nf, 0.0) * x).sum(axis=1) / nf[:, 0]
        else:
            a1 = a0 - (np.where(mask, (rank - 1.0) / (nf - 1.0), 0.0) * x).sum(axis=1) / nf[:, 0]
        d = a0 - 2.0 * a1
        xi = 2.0 - a0 / d
        beta = 2.0 * a0 * a1 / d
        risk = _expit(lu + beta * _bracket(xi, math.log(pi_u / alpha)))
    bad = n == 0
    if pwm == "unbiased":
        # The unbiased fit needs two distinct excesses (see fit_gpd_pwm); test that exactly
        # rather than trusting the sign of a rounded a0 − 2a1.
        bad |= (n < 2) | (s[:, -1] == np.take_along_axis(s, np.clip(width - n, 0, width - 1)[:, None], axis=1)[:, 0])
    for a in (risk, xi, beta):
        a[bad] = np.nan
    return {"risk": risk, "u": u, "n": n, "xi": xi, "beta": beta}


def qar_risk_batch(
    thetas: np.ndarray, m: int, *, alpha=0.01, pi_u=0.05, pwm="plotting", n_qi: int | None = None
) -> np.ndarray:
    """T̂ for each row of a k × N_p matrix of θ-vectors that share the same M (:func:`fit_rows`,
    in chunks of rows of at most ~50 MB).

    With ``n_qi``, each row holds only the largest W ≥ :func:`tail_width` values (any order)
    of a vector of length ``n_qi``: T̂ reads nothing below them, so the result is the same
    (to rounding) and the work is W/N_p of it.

    Rows with no tail (n_r = 0), or whose unbiased fit does not exist, give NaN; the caller
    decides what that means.  Problems common to all rows (bad parameters, M < 2, θ outside
    (0, 1], N_p too small for π_u) raise as in :func:`qar_risk`.
    """
    raw, _, mi, _ = _prepare(thetas, m, alpha, pi_u, pwm, ndim=2)
    k_rows, width = raw.shape
    n_qi = width if n_qi is None else int(n_qi)
    j = max(0, math.floor(check_n_qi(n_qi, pi_u)))
    if n_qi < width or j < n_qi - width:
        raise ValueError(f"rows of width {width} do not hold the top {n_qi - j} of {n_qi} values")
    out = np.empty(k_rows)
    chunk = max(1, _BATCH_BYTES // (8 * _ARRAYS_PER_CHUNK * width))
    for start in range(0, k_rows, chunk):
        part = raw[start : start + chunk]
        out[start : start + chunk] = fit_rows(part, mi, n_qi, alpha=alpha, pi_u=pi_u, pwm=pwm)["risk"]
    return out


def qar_risk_gradient(theta, m, *, alpha=0.01, pi_u=0.05, pwm="plotting") -> np.ndarray:
    """Analytic gradient g_j = ∂T̂/∂θ(j) of the whole estimator of :func:`qar_risk`.

    With the clipped θ sorted, s_(1) ≤ … ≤ s_(N), u = (1 − γ)·s_(h) + γ·s_(h+1) (type 8), the
    exceedances s_(N−n+1..N) with excesses x_k = logit s_(N−n+k) − logit u, a0 = (1/n) Σ x_k,
    a1 = (1/n) Σ w_k x_k (w_k = 1 − p_k, or 1 − (k − 1)/(n − 1) for "unbiased"),
    d = a0 − 2a1, ξ = 2 − a0/d, β = 2a0a1/d, y = logit u + β·c(ξ), T̂ = expit y:

        ∂y/∂β = c(ξ),            ∂y/∂ξ = β·c'(ξ)
        ∂ξ/∂a0 = 2a1/d²,         ∂ξ/∂a1 = −2a0/d²
        ∂β/∂a0 = −4a1²/d²,       ∂β/∂a1 = 2a0²/d²
        ∂y/∂x_k = (∂y/∂a0 + w_k·∂y/∂a1)/n
        ∂T̂/∂s_(N−n+k) = T̂(1 − T̂)·∂y/∂x_k / (s(1 − s))
        ∂T̂/∂u = T̂(1 − T̂)·(1 − Σ_k ∂y/∂x_k)/(u(1 − u)),  shared (1 − γ, γ) by s_(h), s_(h+1).

    The gradient is non-zero only for the exceedances and the order statistics u interpolates.
    It is taken at fixed ranks and fixed exceedance set; T̂ is smooth there.  Clipped entries
    (keys) get 0: the clip is flat beyond its bound.

    Ties: where θ values are equal the estimator is only piecewise smooth (each way of ranking
    the tied values is one smooth piece).  We give every member of a tie group the mean of the
    group's order-statistic derivatives, i.e. the average of the gradients of all those pieces
    (an element of the Clarke generalised gradient).  The sum over the group is exact: it is the
    derivative of moving the whole group together.  For the PWM part the weights are linear in
    rank, so the mean equals the symmetric (central-difference) derivative.  A θ tied with u
    moving up would jump into the tail, where T̂ is discontinuous; we keep it out of the tail.

    Raises as :func:`qar_risk`.
    """
    raw, t, mi, v = _prepare(theta, m, alpha, pi_u, pwm)
    n_qi = raw.size
    order = np.argsort(t, kind="stable")
    s = t[order]
    j = max(0, math.floor(v))
    g = v - j if v >= 0 else 0.0
    u = float(_lerp(s[j], s[j + 1], g))
    first = int(np.searchsorted(s, u, side="right"))
    n = n_qi - first
    if n == 0:
        raise _no_tail(n_qi, u)
    xs = s[first:]
    x = _logit(xs) - _logit(u)
    xi, beta = fit_gpd_pwm(x, pwm)  # (raising as in qar_risk when the unbiased fit does not exist)
    a0, a1, w = _pwm_moments(x, pwm)
    d = a0 - 2.0 * a1
    risk = tail_quantile(u, xi, beta, alpha, pi_u)
    ell = math.log(pi_u / alpha)
    dy_dxi = beta * float(_bracket_derivative(xi, ell))
    dy_dbeta = float(_bracket(xi, ell))
    d2 = d * d
    dy_da0 = dy_dxi * (2.0 * a1 / d2) + dy_dbeta * (-4.0 * a1 * a1 / d2)
    dy_da1 = dy_dxi * (-2.0 * a0 / d2) + dy_dbeta * (2.0 * a0 * a0 / d2)
    dy_dx = (dy_da0 + w * dy_da1) / n

    dpos = np.zeros(n_qi)
    dpos[first:] = dy_dx / (xs * (1.0 - xs))
    dy_du = (1.0 - dy_dx.sum()) / (u * (1.0 - u))
    dpos[j] += dy_du * (1.0 - g)
    dpos[j + 1] += dy_du * g

    # Ties: replace each order statistic's derivative by its tie group's mean.
    starts = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])
    sizes = np.diff(np.r_[starts, n_qi])
    if sizes.max() > 1:
        dpos = np.repeat(np.add.reduceat(dpos, starts) / sizes, sizes)

    grad = np.empty(n_qi)
    grad[order] = dpos * (risk * (1.0 - risk))
    clipped = (raw > 1.0 - 0.5 / mi) | (raw < 0.5 / mi)
    grad[clipped] = 0.0
    return grad
