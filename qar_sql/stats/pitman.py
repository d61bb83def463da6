"""The Pitman sampling formula's maximum-likelihood (θ, α) on the model's parameter space.

A sample of n records in u classes, c_j classes of size j, has under the Pitman (two-parameter
Poisson-Dirichlet) model the log-likelihood (Hoshino 2001, eq. 2.1)

    ℓ(θ, α) = Σ_{i=1}^{u−1} log(θ + iα) − Σ_{i=1}^{n−1} log(θ + i) + Σ_j c_j Σ_{i=1}^{j−1} log(i − α),

defined on 0 ≤ α < 1 with θ > −α, or on α < 0 with θ = −mα for a whole number m ≥ u (a
population of m classes). ARX solves ∂ℓ/∂θ = ∂ℓ/∂α = 0 by Newton–Raphson anywhere in the plane
(:func:`qar_sql.stats.population.pitman`); its root can lie outside that space, where some
θ + iα < 0 and ℓ is undefined (adult, (sex, age) at f = 0.01: θ = 135.72, α = −1.003), and it
finds no root where ℓ is largest on the boundary. Here ℓ is maximised over the space itself:

* 0 ≤ α < 1: a bounded quasi-Newton search (TNC) over (α, log(θ + α)) from several starts (ARX's root when it lies there,
  Hoshino's initial guess, a few fixed points), the boundary α = 0 (Ewens) included;
* α < 0, θ = −mα: for each m, ℓ in β = −α is a function of one variable (the sums in closed
  form through log Γ), maximised by a bounded search; m runs over a geometric grid from u and
  is refined around the best by an integer bisection. As m → ∞ with mβ fixed the model tends
  to Ewens' (α = 0), which the first part covers.

The population uniques then follow as in ARX, Γ(θ+1)/Γ(θ+α)·N^α (Hoshino's asymptotic
expected number of size-one classes in a population of N), which is θ at α = 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import ModuleType

import numpy as np

# scipy is imported where it is used: its special functions and optimiser cost more to load than
# everything else a command imports (`qar --help`, and the commands that never fit a model).

#: log(θ + α) is searched in [-LOG_BOUND, LOG_BOUND]: an optimum at the upper end means that ℓ
#: grows without bound as θ → ∞ (every class a singleton): no finite estimate.
LOG_BOUND = 30.0
#: α is searched in [0, 1 − ALPHA_MARGIN].
ALPHA_MARGIN = 1e-9


#: From this argument on, log Γ(x + k) − log Γ(x) is taken from Stirling's series (the two
#: log Γ values, each near x·log x, would cancel to an absolute error of about x·log x·ε).
_STIRLING_FROM = 1e5


def stirling_tail(v):
    """The correction to Stirling's formula for log Γ(v), and for log Γ(v + 1), to v⁻⁵."""
    return 1.0 / (12.0 * v) - 1.0 / (360.0 * v**3) + 1.0 / (1260.0 * v**5)


def log_rising(x: float, k):
    """log Γ(x + k) − log Γ(x) = Σ_{i<k} log(x + i) for x > 0, k ≥ 0 (a number or an array),
    without the cancellation of two large log Γ values."""
    lib: ModuleType = np if isinstance(k, np.ndarray) else math
    if lib is np:
        from scipy import special  # (not for numbers, which the likelihood calls most)

    lgamma = special.gammaln if lib is np else math.lgamma
    with np.errstate(all="ignore"):
        if x < _STIRLING_FROM:
            return lgamma(x + k) - lgamma(x)
        # (x+k−½)log(x+k) − (x−½)log x − k + tail(x+k) − tail(x), rearranged so that nothing
        # large cancels: (x − ½)·log1p(k/x) + k·log(x + k) − k.
        return (x - 0.5) * lib.log1p(k / x) + k * lib.log(x + k) - k + stirling_tail(x + k) - stirling_tail(x)


@dataclass(frozen=True)
class PitmanFit:
    """The maximum-likelihood (θ, α) on the valid space, ℓ there, and the population uniques."""

    theta: float
    alpha: float
    loglik: float
    uniques: float  # Γ(θ+1)/Γ(θ+α)·N^α, NaN when the likelihood has no finite maximum


class Likelihood:
    """ℓ(θ, α) of one class-size histogram (sizes ≥ 1, counts > 0)."""

    def __init__(self, sizes: np.ndarray, counts: np.ndarray):
        self.sizes = np.asarray(sizes, dtype=np.float64)
        self.counts = np.asarray(counts, dtype=np.float64)
        self.n = float(np.dot(self.sizes, self.counts))
        self.u = float(self.counts.sum())
        self._i_u = np.arange(1.0, round(self.u))  # i = 1 … u − 1
        big = self.sizes > 1
        self._s, self._c = self.sizes[big], self.counts[big]  # the classes of more than one

    def __call__(self, theta: float, alpha: float) -> float:
        """ℓ(θ, α); −inf outside the space where every logarithm is defined."""
        if not valid(theta, alpha, self.u):
            return -math.inf
        return self._loglik(theta, alpha)

    def _loglik(self, theta: float, alpha: float) -> float:
        with np.errstate(all="ignore"):
            a = float(np.sum(np.log(theta + self._i_u * alpha)))
            b = log_rising(theta + 1.0, self.n - 1.0)
            d = float(np.dot(self._c, log_rising(1.0 - alpha, self._s - 1.0)))
        return a - b + d

    def gradient(self, theta: float, alpha: float) -> tuple[float, float]:
        """(∂ℓ/∂θ, ∂ℓ/∂α): ARX's two equations (``ModelPitman``), in closed form."""
        from scipy import special

        with np.errstate(all="ignore"):
            inv = 1.0 / (theta + self._i_u * alpha)
            d_theta = float(inv.sum()) - float(special.digamma(theta + self.n) - special.digamma(theta + 1.0))
            d_alpha = float((self._i_u * inv).sum()) - float(
                np.dot(self._c, special.digamma(self._s - alpha) - special.digamma(1.0 - alpha))
            )
        return d_theta, d_alpha

    def finite_classes(self, m: int, beta: float) -> float:
        """ℓ at α = −β < 0, θ = mβ (a population of m ≥ u classes), every sum in closed form."""
        if beta <= 0 or m < self.u:
            return -math.inf
        u1 = self.u - 1.0
        a = u1 * math.log(beta) + log_rising(m - u1, u1)  # Σ_{i<u} log(β(m − i))
        b = log_rising(m * beta + 1.0, self.n - 1.0)
        d = float(np.dot(self._c, log_rising(1.0 + beta, self._s - 1.0)))
        return a - b + d


def valid(theta: float, alpha: float, u: float, tol: float = 1e-9) -> bool:
    """Whether (θ, α) lies in the model's parameter space for a sample of u classes: 0 ≤ α < 1
    and θ > −α, or α < 0 and θ = −mα for a whole number m ≥ u."""
    if not (math.isfinite(theta) and math.isfinite(alpha)):
        return False
    if 0.0 <= alpha < 1.0:
        return theta > -alpha
    if alpha < 0.0:
        m = -theta / alpha
        return m >= u - tol and abs(m - round(m)) <= tol * max(1.0, m)
    return False


def population_uniques(theta: float, alpha: float, population: float) -> float:
    """Γ(θ+1)/Γ(θ+α)·N^α (θ at α = 0), kept in [0, N] (NaN outside, as ARX's ``getResult``)."""
    from scipy import special

    if not (math.isfinite(theta) and math.isfinite(alpha)) or theta + alpha <= 0:
        return math.nan
    with np.errstate(all="ignore"):
        log_value = float(special.gammaln(theta + 1.0) - special.gammaln(theta + alpha)) + alpha * math.log(population)
    if not log_value <= math.log(population):  # above N (or NaN): no estimate, as ARX
        return math.nan
    return math.exp(log_value)


def fit(
    sizes: np.ndarray,
    counts: np.ndarray,
    population: float,
    starts: tuple[tuple[float, float], ...] = (),
) -> PitmanFit:
    """The maximum of ℓ over the valid space; ``starts`` are extra (θ, α) to start from (ARX's
    root, say). A start that is a stationary point the search cannot better is kept exactly,
    so a valid ARX root gives ARX's figure."""
    lik = Likelihood(sizes, counts)
    kept = [(t, a) for t, a in starts if valid(t, a, lik.u) and 0.0 <= a < 1.0]
    best_kept = max(((lik(t, a), t, a) for t, a in kept), default=None)
    fixed = [(1.0, 0.5), (10.0, 0.1), (0.5, 0.9), (lik.u, 0.0), (0.1, 0.99)]
    searched = [_search_unit(lik, t, a) for t, a in kept + fixed]
    searched.append(_search_finite(lik))
    best = max((c for c in searched if c is not None), default=None)
    if best_kept is not None and (best is None or best[0] <= best_kept[0] + 1e-9 * max(1.0, abs(best_kept[0]))):
        best = best_kept
    if best is None or not math.isfinite(best[0]):
        return PitmanFit(math.nan, math.nan, -math.inf, math.nan)
    value, theta, alpha = best
    # An optimum on the search's edge (θ + α → ∞, or β = −α → ∞) is a supremum the likelihood
    # only approaches: no finite estimate.
    edge = math.log(theta + alpha) if alpha >= 0 else math.log(-alpha)
    unbounded = edge >= LOG_BOUND - 1e-6
    uniques = math.nan if unbounded else population_uniques(theta, alpha, population)
    return PitmanFit(theta, alpha, value, uniques)


def _search_unit(lik: Likelihood, theta: float, alpha: float) -> tuple[float, float, float] | None:
    """A bounded search on 0 ≤ α ≤ 1 − ALPHA_MARGIN, s = log(θ + α) in [−LOG_BOUND, LOG_BOUND]."""
    from scipy import optimize

    alpha = min(max(alpha, 0.0), 1.0 - ALPHA_MARGIN)
    s0 = math.log(max(theta + alpha, 1e-12))
    s0 = min(max(s0, -LOG_BOUND), LOG_BOUND)

    def negative(x):
        a, s = x
        t = math.exp(s) - a
        value = lik._loglik(t, a)
        dt, da = lik.gradient(t, a)
        # θ = e^s − α: ∂/∂s = e^s ∂ℓ/∂θ, ∂/∂α (s fixed) = ∂ℓ/∂α − ∂ℓ/∂θ.
        grad = np.array([-(da - dt), -(dt * math.exp(s))])
        if not (math.isfinite(value) and np.all(np.isfinite(grad))):
            return 1e300, np.zeros(2)
        return -value, grad

    with np.errstate(all="ignore"):
        res = optimize.minimize(
            negative,
            np.array([alpha, s0]),
            jac=True,
            # TNC, not L-BFGS-B: the same bounded quasi-Newton search, and here 30 times faster
            # (L-BFGS-B's Fortran step dominated at a few ms per call).
            method="TNC",
            bounds=[(0.0, 1.0 - ALPHA_MARGIN), (-LOG_BOUND, LOG_BOUND)],
            options={"maxfun": 2000, "ftol": 1e-14, "xtol": 1e-12, "gtol": 1e-10},
        )
    a, s = (float(v) for v in res.x)
    t = math.exp(s) - a
    value = lik(t, a)
    return (value, t, a) if math.isfinite(value) else None


def _best_beta(lik: Likelihood, m: int) -> tuple[float, float]:
    """(ℓ, β) maximising ℓ over β > 0 at θ = mβ, α = −β (bounded search in log β)."""
    from scipy import optimize

    res = optimize.minimize_scalar(
        lambda lb: -lik.finite_classes(m, math.exp(lb)),
        bounds=(-LOG_BOUND, LOG_BOUND),
        method="bounded",
        options={"xatol": 1e-10},
    )
    return -float(res.fun), math.exp(float(res.x))


def _search_finite(lik: Likelihood) -> tuple[float, float, float] | None:
    """The best α < 0, θ = −mα over whole m ≥ u: a geometric grid of m, then an integer
    bisection around the best grid point (the profile in m is taken to be unimodal there)."""
    u = int(round(lik.u))
    if u < 2:
        return None
    grid = sorted({u, *(int(u + math.ceil(u * (2.0**k - 1))) for k in range(0, 40)), *range(u, u + 8)})
    scored: list[tuple[float, int]] = []
    for m in grid:  # up the grid while the profile may still rise (it is taken to be unimodal)
        value = _best_beta(lik, m)[0]
        if scored and value >= max(v for v, _ in scored) and value - scored[-1][0] <= 1e-11 * abs(value):
            # Still rising, by rounding only: the profile tends to its limit m → ∞, Ewens' α = 0,
            # which the search over 0 ≤ α < 1 covers.
            return None
        scored.append((value, m))
        top = max(range(len(scored)), key=lambda j: scored[j][0])
        if len(scored) - 1 - top >= 3:
            break
    grid = [m for _, m in scored]
    i = max(range(len(scored)), key=lambda j: scored[j][0])
    if i == len(grid) - 1:
        # Still rising at the largest m: the supremum is the limit m → ∞, Ewens' α = 0, which
        # the search over 0 ≤ α < 1 covers.
        return None
    lo = grid[max(i - 1, 0)]
    hi = grid[min(i + 1, len(grid) - 1)]
    while hi - lo > 2:  # ternary search on whole numbers
        m1, m2 = lo + (hi - lo) // 3, hi - (hi - lo) // 3
        if _best_beta(lik, m1)[0] < _best_beta(lik, m2)[0]:
            lo = m1
        else:
            hi = m2
    value, m = max((_best_beta(lik, m)[0], m) for m in range(lo, hi + 1))
    beta = _best_beta(lik, m)[1]
    return value, m * beta, -beta
