"""The probability that k people are all unique on a quasi-identifier (Koot et al. 2011).

Pure numpy/scipy: the database has already counted each QI's class-size histogram (class size →
number of classes), which is exactly the grouping every formula here needs. A QI is a
:class:`Grouped` distribution: ``mult[g]`` values each of probability ``prob[g]``.

With p_v the share of value v (NULL a value, as in the audit), M the size of the domain and k
people drawn independently (the paper's equation numbers in brackets):

- ``pi_uniform``  π_u(k, M) = M! / ((M − k)! M^k)                               (section 2)
- ``kappa``       κ = Σ_v p_v log(p_v M), the Kullback-Leibler distance to uniform (section 3.2)
- ``pi_kl``       exp(−(1/2 + κ) k² / M)                                          (section 4.2)
- ``pi_kl_u``     π_u(k, M) · exp(−κ k² / M), the approximation section 4.1 validates; it is
                  π_u exactly at κ = 0, where ``pi_kl`` is only its first-order form
                  (95 equal values, k = 29: 0.0083993 against pi_kl's 0.011958)
- ``pi_poisson``  e^(−k) Π_v (1 + k p_v), the Poissonized probability              (3)
- ``pi_exact``    k! e_k(p), e_k the elementary symmetric polynomial: the exact probability
- ``k_at``        the largest k with π_exact(k) ≥ target (``k50``: target 1/2)
- ``exposure``    (1 − p_v)^(k−1), the chance that a person with value v is unique among k.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from qar_sql.errors import DataError, ParameterError, require_whole, shown
from qar_sql.rules import check_target
from qar_sql.stats.pitman import stirling_tail

#: k_at: log π within this of log target reaches the target (rounding, not probability).
_TIE = 1e-12
_LOG_TINY = 41.5  # e^-41.5 ≈ 1e-18: aliasing below this, relative to the coefficient, is ignored


@dataclass(frozen=True)
class Grouped:
    """A discrete distribution stored by groups of equally likely values: ``mult[g]`` values of
    probability ``prob[g]`` each (a class-size histogram divided by the row count)."""

    prob: np.ndarray  # float64, > 0
    mult: np.ndarray  # int64, > 0

    @classmethod
    def from_histogram(cls, histogram: Iterable[tuple[int, int]]) -> Grouped:
        """From ``[(class size, number of classes), ...]``; p = size / rows."""
        # pairs of Python ints, as the scan returns them: flattened without a Python loop
        pairs = np.fromiter(itertools.chain.from_iterable(histogram), dtype=np.int64).reshape(-1, 2)
        pairs = pairs[(pairs[:, 0] > 0) & (pairs[:, 1] > 0)]
        if not len(pairs):
            raise DataError("the class-size histogram is empty; a QI needs at least one row")
        sizes = pairs[:, 0].astype(np.float64)
        mult = pairs[:, 1].copy()
        rows = float(np.dot(sizes, mult))
        if np.all(np.diff(sizes) > 0):  # the scan's histograms: one row per size, ascending
            return cls(prob=sizes / rows, mult=mult)
        return cls._merged(sizes / rows, mult)

    @classmethod
    def from_marginals(cls, columns: Sequence[Iterable[tuple[int, int]]]) -> Grouped:
        """The product of one-column distributions (independence; the paper's section 4.2):
        each column given as its value-frequency histogram ``[(records, values), ...]``. A
        combination's probability is the product of its values' shares; equal products are
        merged, so the groups stay few when the columns have few distinct frequencies."""
        if not columns:
            raise ParameterError("from_marginals needs at least one column")
        out = cls.from_histogram(columns[0])
        for g in map(cls.from_histogram, columns[1:]):
            out = cls._merged(np.multiply.outer(out.prob, g.prob).ravel(), np.multiply.outer(out.mult, g.mult).ravel())
        return out

    @classmethod
    def _merged(cls, prob: np.ndarray, mult: np.ndarray) -> Grouped:
        # Sorted by probability and equal probabilities merged: one group per distinct value.
        uniq, inverse = np.unique(prob, return_inverse=True)
        return cls(prob=uniq, mult=np.bincount(inverse.ravel(), weights=mult).astype(np.int64))

    @property
    def support(self) -> int:
        """H: the number of values with positive probability."""
        return int(self.mult.sum())

    @property
    def groups(self) -> int:
        return len(self.prob)


# --- parameters ----------------------------------------------------------------------------


def check_domain(domain: float, support: int, what: str = "the QI") -> None:
    if domain < support:
        raise ParameterError(
            f"domain M = {domain:g} is smaller than the {support} values observed on {what}; "
            "use --domain observed or a number at least that large"
        )


# --- the formulas --------------------------------------------------------------------------


def log_pi_uniform(k: int, m: float) -> float:
    """log π_u(k, M) = log(M! / ((M − k)! M^k)); −inf when k > M. Stable for huge M (a
    product domain): Σ log1p(−i/M) up to a million terms, the Stirling series of the difference for
    large M and k, where lgamma(M + 1) − lgamma(M − k + 1) would cancel catastrophically."""
    if k <= 1:
        return 0.0
    if k > m:
        return -math.inf
    if k <= 1_000_000:  # each term to an ulp, summed pairwise: relative error ~1e-16
        return float(np.sum(np.log1p(-np.arange(k, dtype=np.float64) / m)))
    x = m - k  # M − k
    if x < 100:  # k ≈ M > 10^6: π_u is far below the smallest float anyway, lgamma will do
        return math.lgamma(m + 1) - math.lgamma(x + 1) - k * math.log(m)
    # ln Γ(n+1) = (n+½) ln n − n + ½ ln 2π + Σ B_2j / (2j (2j−1) n^(2j−1)); the difference at
    # n = M and n = M − k, minus k ln M, is −(M − k + ½) log1p(−a) − k + (series terms) with
    # a = k/M. For a < ½ the first two are rewritten as −k Σ_n a^n / (n(n+1)) − ½ log1p(−a),
    # where nothing cancels (their sum is ≈ −k²/2M, tiny beside k).
    a = k / m
    if a < 0.5:
        n = np.arange(1, 80, dtype=np.float64)
        lead = -k * float(np.sum(a**n / (n * (n + 1)))) - 0.5 * math.log1p(-a)
    else:
        lead = -(x + 0.5) * math.log1p(-a) - k
    return lead + stirling_tail(m) - stirling_tail(x)


def pi_uniform(k: int, m: float) -> float:
    """π_u(k, M) = M! / ((M − k)! M^k): the classical birthday problem, 0 when k > M."""
    return math.exp(log_pi_uniform(k, m))


def kappa(dist: Grouped, domain: float) -> float:
    """κ = Σ_v p_v log(p_v M) ≥ 0, the Kullback-Leibler distance from the value shares to the
    uniform distribution on M values (0 exactly when every one of M values has share 1/M)."""
    check_domain(domain, dist.support)
    # p·M is exactly 1.0 for a uniform table (size·M = rows in integers), so κ is exactly 0.
    value = float(np.sum(dist.mult * dist.prob * np.log(dist.prob * domain)))
    return max(value, 0.0)  # ≥ 0 in exact arithmetic; rounding may leave −1e-17


def pi_kl(k: int, domain: float, kappa_: float, support: int | None = None) -> float:
    """The paper's approximation exp(−(1/2 + κ) k² / M); 0 when k exceeds ``support`` (H, the
    values with positive probability: k people cannot all differ then)."""
    if support is not None and k > support:
        return 0.0
    return math.exp(-(0.5 + kappa_) * k * k / domain)


def pi_kl_u(k: int, domain: float, kappa_: float, support: int | None = None) -> float:
    """Koot et al.'s validated approximation (section 4.1) π_u(k, M) · exp(−κ k² / M); 0 when
    k exceeds ``support`` (H) or M."""
    if support is not None and k > support:
        return 0.0
    return math.exp(log_pi_uniform(k, domain) - kappa_ * k * k / domain)


def log_pi_poisson(k: float, dist: Grouped) -> float:
    """log of eq. (3): e^(−k) Π_v (1 + k p_v), the probability that all values differ when the
    group size is Poisson with mean k."""
    return float(-k + np.dot(dist.mult, np.log1p(k * dist.prob)))


def pi_poisson(k: float, dist: Grouped) -> float:
    return math.exp(log_pi_poisson(k, dist))


def exposure(k: int, prob: np.ndarray | float) -> np.ndarray | float:
    """(1 − p_v)^(k−1): the probability that a person whose value has share p_v meets no one
    with the same value among the other k − 1 of a random group of k. A value every record
    holds (p_v = 1: a constant or all-NULL QI) leaves no one unique: 0, not log1p(−1)'s −inf."""
    p = np.asarray(prob, dtype=np.float64)
    with np.errstate(divide="ignore"):
        out = np.where(p >= 1.0, 0.0, np.exp((k - 1) * np.log1p(-np.minimum(p, 1.0))))
    return out if out.ndim else float(out)


def exposure_mean(k: int, dist: Grouped) -> float:
    """Σ_v p_v (1 − p_v)^(k−1): the expected share of a random group of k that is unique."""
    return float(np.dot(dist.mult * dist.prob, exposure(k, dist.prob)))


# --- pi_exact: k! e_k(p) ------------------------------------------------------------------


def log_pi_exact(k: int, dist: Grouped) -> float:
    """log π(k) = log(k! e_k(p)), the exact log probability that k independent draws are all
    different; −inf when k exceeds the number of values."""
    return _log_pi_window(k, dist, 0)[k]


def pi_exact(k: int, dist: Grouped) -> float:
    """π(k) = k! e_k(p): the exact probability that k independent draws are all different.

    e_k(p) is the coefficient of x^k in Π_v (1 + p_v x) = Π_g (1 + p_g x)^(m_g), one factor
    per group of equal probabilities. The coefficient is read off by Cauchy's integral on the
    circle |x| = r at the saddle point (the radius at which the x^k term dominates), as a
    discrete Fourier transform of the product evaluated in log space. Every term is then at
    most the result times a modest factor (no cancellation, no overflow, no factorials); the
    number of points is chosen so that aliased coefficients weigh less than 1e-18 of the
    result, and with at most H + 1 points the transform is exact up to rounding. Cost:
    (groups) × O(k + √k) complex logarithms.
    """
    return math.exp(log_pi_exact(k, dist))


def _saddle(k: int, dist: Grouped) -> float:
    """log r with Σ_v p_v r / (1 + p_v r) = k (0 < k < H): the mean of the tilted count.

    Newton's method on g(u) = log Σ_v q_v(u) − log k with u = log r and q = expit(log p + u):
    g is increasing and concave (g' = the q-weighted mean of 1 − q, which falls as u grows),
    so from u = log k, where g < 0, the iterates rise to the root without overshooting."""
    from scipy import special  # here, not at the top: results.py and the CLI import this module

    logp = np.log(dist.prob)
    weights = dist.mult.astype(np.float64)
    log_k = math.log(k)
    u = log_k  # Σ p r/(1 + p r) < r Σ p = r: below the root
    for _ in range(100):
        x = logp + u
        q = special.expit(x)
        total = float(np.dot(weights, q))
        slope = float(np.dot(weights, q * special.expit(-x))) / total
        step = (log_k - math.log(total)) / slope
        u += step
        if abs(step) <= 1e-14 * max(1.0, abs(u)):
            break
    return u


def _log_pi_window(k: int, dist: Grouped, width: int) -> dict[int, float]:
    """{j: log π(j)} for j within ``width`` of k. The ends are closed forms (π = 1 for j ≤ 1,
    k! Π p for j = H, 0 beyond H); the rest comes from one transform at the saddle point of k,
    accurate to rounding at j = k and to a relative 1e-8 or better elsewhere (coefficients
    too small for that are left out)."""
    H = dist.support
    out: dict[int, float] = {}
    inner = []
    for j in range(max(k - width, 0), k + width + 1):
        if j <= 1:
            out[j] = 0.0
        elif j > H:
            out[j] = -math.inf
        elif j == H:  # the x^H coefficient is the product of all shares
            out[j] = math.lgamma(H + 1) + float(np.dot(dist.mult, np.log(dist.prob)))
        else:
            inner.append(j)
    if inner:
        centre = min(max(k, 2), H - 1)
        out.update(_transform(centre, dist, inner))
    return out


def _transform(k: int, dist: Grouped, wanted: Sequence[int]) -> dict[int, float]:
    """log π(j) for the ``wanted`` j (1 < j < H) from Cauchy's integral on the circle at the
    saddle point of k (1 < k < H)."""
    from scipy import special  # (as in _saddle: scipy only when a π is computed)

    H = dist.support
    u = _saddle(k, dist)
    x = np.log(dist.prob) + u
    q, qc = (
        special.expit(x),
        special.expit(-x),
    )  # tilted probabilities p r / (1 + p r) and 1 − q
    var = float(np.dot(dist.mult, q * qc))
    width = max(abs(wanted[0] - k), abs(wanted[-1] - k))  # ``wanted`` is ascending
    # Points: aliasing brings in coefficients N apart; with N ≥ t + width every aliased one lies
    # at least t from the mean k, where Bernstein's bound exp(−t²/(2(σ² + t/3))) is below
    # 1e-18 of the central coefficient (≈ 1/√(2πσ²)). N = H + 1 points need no bound: exact.
    lam = _LOG_TINY + 0.5 * math.log(2 * math.pi * (var + 1.0))
    t = lam / 3 + math.sqrt(lam * lam / 9 + 2 * lam * var)
    n = max(2, int(min(H + 1, math.ceil(t) + width + 2)))
    # |f(r e^{iθ})| / f(r) ≤ exp(−σ² (1 − cos θ)): points where that is below e^−λ (1e-18 of the
    # central coefficient) add nothing and are skipped — about λ/π ≈ 15 points remain however
    # large k is.
    theta = 2 * np.pi * np.arange(n // 2 + 1) / n
    keep = var * (1 - np.cos(theta)) <= lam
    log_f = _log_product_on_circle(q, qc, dist.mult, theta[keep])
    values = np.zeros(len(theta), dtype=np.complex128)
    values[keep] = np.exp(log_f)
    # Coefficient j of f(r x) / f(r) is P(J = j) for the tilted count J (a sum of Bernoulli(q)).
    coef = np.fft.irfft(values.conj(), n=n)
    log_f_r = float(np.dot(dist.mult, np.logaddexp(0.0, x)))  # log Π (1 + p r), to an ulp per value
    js = np.asarray(wanted, dtype=np.int64)
    c = coef[js % n]
    ok = (js == k) | (c > 1e-8)
    js, c = js[ok], c[ok]
    logs = special.gammaln(js + 1.0) + np.log(c) + log_f_r - js * u
    return dict(zip(js.tolist(), logs.tolist()))


_SERIES_Q = 0.15  # groups with q at most this are summed as a power series (|q z| ≤ 0.3)


def _log_product_on_circle(q: np.ndarray, qc: np.ndarray, mult: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """Σ_g m_g log((1 − q_g) + q_g e^{iθ}) at every angle θ.

    Most groups are rare values with a small tilted probability q: for them log(1 + q z), with
    z = e^{iθ} − 1, is summed as the power series Σ_n (−1)^(n+1) A_n z^n / n, whose
    coefficients A_n = Σ_g m_g q_g^n are computed once for all points (as many terms as bring
    (q |z|)^n / n below 1e-17). The other groups are summed directly in real arithmetic:
    |(1 − q) + q e^{iθ}|² = 1 − 2 q (1 − q)(1 − cos θ) gives the real part as a log1p (no
    cancellation) and an arctan2 the imaginary part, both sums over groups real matrix products."""
    cos, sin = np.cos(theta), np.sin(theta)
    weights = mult.astype(np.float64)
    out = np.zeros(len(theta), dtype=np.complex128)
    small = q <= _SERIES_Q
    if small.any():
        z = np.expm1(1j * theta)  # e^{iθ} − 1, accurate near θ = 0
        rate = float(q[small].max()) * float(np.abs(z).max())
        if rate > 0:
            terms = max(1, math.ceil(math.log(1e-17) / math.log(rate)))
            qs, power = q[small], weights[small] * q[small]
            sums = np.empty(terms)
            for i in range(terms):  # A_1 … A_terms
                sums[i] = power.sum()
                power = power * qs
            n = np.arange(1, terms + 1)
            coef = np.where(n % 2 == 1, 1.0, -1.0) * sums / n
            acc = np.full(len(z), coef[-1], dtype=np.complex128)
            for c in coef[-2::-1]:  # Horner
                acc = acc * z + c
            out += acc * z
    rest = ~small
    if rest.any():
        q_, qc_, w_ = q[rest], qc[rest], weights[rest]
        step = max(1, 2_000_000 // max(len(theta), 1))
        re = np.zeros(len(theta))
        im = np.zeros(len(theta))
        for g0 in range(0, len(q_), step):
            qg, qcg, wg = q_[g0 : g0 + step], qc_[g0 : g0 + step], w_[g0 : g0 + step]
            re += wg @ np.log1p(np.multiply.outer(-2 * qg * qcg, 1 - cos))
            im += wg @ np.arctan2(np.multiply.outer(qg, sin), qcg[:, None] + np.multiply.outer(qg, cos))
        out += 0.5 * re + 1j * im
    return out


def k_at(target: float, dist: Grouped) -> int:
    """The largest k with π_exact(k) ≥ target. π is decreasing in k (π(1) = 1, π(H + 1) = 0),
    so this is a bisection; it starts where the Poisson approximation (3) crosses the target
    and each transform settles a window of k around its centre, so one transform is the
    usual cost."""
    check_target(target)
    H = dist.support
    log_t = math.log(target)
    lo, hi = 1, H + 1  # π(lo) ≥ target > π(hi)
    m = min(max(_poisson_crossing(log_t, dist), 2), H)
    while hi - lo > 1:
        if not lo < m < hi:
            m = (lo + hi) // 2
        width = min(64, max(2, int(3 * math.sqrt(m))))
        for j, lp in _log_pi_window(m, dist, width).items():
            if lo < j < hi:
                if j != m and abs(lp - log_t) <= 1e-7:
                    lp = log_pi_exact(j, dist)  # near the target: to rounding, not to 1e-8
                # π(j) equal to the target in exact arithmetic (1 − Σp² = 1/2) comes out a few
                # ulps either side of it: within 1e-12 (relative) counts as reaching it.
                if lp >= log_t - _TIE:
                    lo = j
                else:
                    hi = j
        m = -1
    return lo


def _poisson_crossing(log_t: float, dist: Grouped) -> int:
    """floor of the k > 0 where log π_Pois(k) = log t. g(k) = −k + Σ m log(1 + k p) is concave
    and decreasing with g(0) = 0, so Newton's method lands right of the root after one step
    and then decreases to it monotonically."""
    # start at the quadratic approximation log π ≈ −k² Σ p² / 2 (any start > 0 would do)
    k = max(1.0, math.sqrt(-2 * log_t / float(np.dot(dist.mult, dist.prob**2))))
    for _ in range(100):
        g = log_pi_poisson(k, dist) - log_t
        slope = -1.0 + float(np.dot(dist.mult, dist.prob / (1 + k * dist.prob)))
        if slope >= 0:  # only at k = 0 in exact arithmetic
            break
        step = g / slope
        k -= step
        if abs(step) < 1e-9 * max(k, 1.0):
            break
    return math.floor(k + 1e-9)


def k50(dist: Grouped) -> int:
    return k_at(0.5, dist)


# --- Monte Carlo ---------------------------------------------------------------------------


@dataclass(frozen=True)
class MonteCarlo:
    """Share of ``draws`` simulated groups in which all k values differed, with its 95%
    Wilson score interval."""

    draws: int
    share: float
    low: float
    high: float


def monte_carlo(k: int, dist: Grouped, draws: int, seed: int | None = None) -> MonteCarlo:
    """Draw ``draws`` groups of k values from the distribution (with replacement, as the
    formulas assume) and count the groups whose values are all different."""
    require_whole(draws, 1, f"--monte-carlo {shown(draws)} must be a whole number of draws of at least 1, e.g. 10000")
    rng = np.random.default_rng(seed)
    weights = dist.mult * dist.prob
    weights = weights / weights.sum()
    offsets = np.concatenate([[0], np.cumsum(dist.mult)[:-1]])
    hits = 0
    chunk = max(1, 4_000_000 // k)
    for start in range(0, draws, chunk):
        n = min(chunk, draws - start)
        group = rng.choice(dist.groups, size=(n, k), p=weights)
        # a value within its group of equally likely values: uniform
        value = offsets[group] + (rng.random((n, k)) * dist.mult[group]).astype(np.int64)
        value.sort(axis=1)
        hits += int(np.count_nonzero(np.all(value[:, 1:] != value[:, :-1], axis=1)))
    share = hits / draws
    low, high = wilson(hits, draws)
    return MonteCarlo(draws=draws, share=share, low=low, high=high)


def wilson(successes: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The Wilson score interval for a binomial share (95% by default)."""
    phat = successes / n
    denom = 1 + z * z / n
    centre = (phat + z * z / (2 * n)) / denom
    half = z * math.sqrt(phat * (1 - phat) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)
