"""Population uniqueness: how many people in the population are unique on a quasi-identifier,
estimated from the sample's class-size histogram, as ARX computes it. Pure numpy/scipy.

Input: the histogram of one QI, ``sizes[k]`` (a class size) and ``counts[k]`` (how many classes
of that size), the sample size n = Σ sizes·counts and the population size N (sampling fraction
f = n / N). Output: the estimated number of population uniques by

* **Zayatz** (1991): the sample uniques that are population uniques, c1·P(unique | unique)/f,
  with P from the hypergeometric probability that a class of size k shows one member in the
  sample (ARX ``risk/ModelZayatz.java``);
* **Pitman** (Hoshino 2001): the Pitman sampling formula's parameters (θ, α) by maximum
  likelihood, solved by Newton–Raphson, then Γ(θ+1)/Γ(θ+α)·N^α (ARX ``risk/ModelPitman.java``);
* **SNB** (Chen & Keller-McNulty 1998): the slide-negative-binomial model with K, the number
  of non-empty population classes, from Shlosser's estimator, then K·β^α
  (ARX ``risk/ModelSNB.java``);
* **Pitman on its parameter space**: ARX's root can lie where the likelihood is undefined
  (α < 0 with θ ≠ −mα); :mod:`qar_sql.stats.pitman` maximises the likelihood over the valid
  space instead. ``pitman`` (and Dankar's rule) use that estimate, ``pitman_arx`` is ARX's;
* **Dankar et al.** (2012)'s decision rule: Pitman when f ≤ 0.1 (Zayatz when Pitman fails),
  otherwise the smaller of Zayatz and SNB (Zayatz when SNB fails)
  (ARX ``risk/RiskModelPopulationUniqueness.java``).

Everything follows ARX's implementation step for step — the same closed forms, the same
Newton–Raphson solver with the same start values and accuracy (``de.linearbits.newtonraphson``
``NewtonRaphson2D`` configured by ARX's ``ARXSolverConfiguration``: accuracy 1e-6, 1,000
iterations per try, the initial guess and then the 16 start values {0, .33, .66, .99}²), and
ARX's own digamma/trigamma approximations (``risk/Gamma.java``) — so that the numbers equal
ARX's. Two ARX details are kept on purpose, because users compare numbers with ARX's:
Shlosser's denominator subtracts 1 per distinct class size, not per class, and the SNB moment
equation for c2 multiplies by (1 − (1−f)(1−β))^(α+2) where Chen's paper divides (both in
``ModelSNB.java``). Where we differ: ARX stops the solver after 100 ms per try / 1 s in all, a
wall-clock limit that makes results depend on the machine; here only the iteration limits
apply, so results are reproducible. ARX also clamps N to 2³¹ − 1 in Zayatz's hypergeometric
probabilities (an overflow its source marks as an error); here N is used as given.

An estimate ARX flags as unavailable (NaN, or exactly 0 while the sample has uniques) is
``None`` here.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np

from qar_sql.errors import ParameterError
from qar_sql.rules import check_population, check_sampling_fraction
from qar_sql.stats import pitman as pitman_valid

__all__ = [
    "ACCURACY",
    "ITERATIONS_PER_TRY",
    "START_VALUES",
    "PopulationUniqueness",
    "digamma",
    "pitman",
    "population_size",
    "pitman_root",
    "population_uniqueness",
    "shlosser_classes",
    "snb",
    "trigamma",
    "zayatz",
]

ACCURACY = 1e-6
"""ARX's solver accuracy: both equations within this of zero (``ARXSolverConfiguration``)."""

ITERATIONS_PER_TRY = 1000
"""ARX's Newton–Raphson iterations per start value (``ARXSolverConfiguration``)."""


# ARXSolverConfiguration.getDefaultStartValues: d1, d2 = 0, .33, .66, .99 by repeated
# addition of 0.33 (so the last is the double 0.33+0.33+0.33, as in Java).
START_VALUES = tuple(itertools.product(itertools.accumulate([0.33] * 3, initial=0.0), repeat=2))
"""The 16 start values ARX's solver tries after the initial guess, in ARX's order."""

_EULER = 0.57721566490153286060651209008240243104215933593992
_ZETA2 = math.pi * math.pi / 6.0
_ZETA3 = 1.202056903159594285399738161511449990764986292


def digamma(x: float) -> float:
    """ψ(x) as ARX's ``Gamma.digamma`` approximates it (Minka's Lightspeed toolbox): reflection
    for x < 0, a Taylor term near 0, recurrence up to 12, then de Moivre's expansion."""
    if math.isnan(x) or math.isinf(x):
        return math.nan
    if x == 0.0:
        return -math.inf
    if x < 0.0:
        return digamma(1.0 - x) + math.pi / math.tan(-math.pi * x)
    if x <= 1e-6:
        return -_EULER - 1.0 / x + _ZETA2 * x
    acc = 0.0
    while x < 12.0:
        acc -= 1.0 / x
        x += 1.0
    r = 1.0 / x
    acc += math.log(x) - 0.5 * r
    r *= r
    return acc - r * (1 / 12 - r * (1 / 120 - r * (1 / 252 - r * (1 / 240 - r * (1 / 132)))))


def trigamma(x: float) -> float:
    """ψ'(x) as ARX's ``Gamma.trigamma`` computes it. Kept as ARX has it: the recurrence stops
    at 8 but the asymptotic tail is added only from 12, so below 12 (and above 1e-4) only the
    recurrence terms Σ 1/(x + j)² remain. It only enters the solver's Jacobian (the equations
    themselves use ψ), so it changes the path of the iterations, not the equations solved."""
    if math.isnan(x) or math.isinf(x):
        return math.nan
    if x == 0.0:
        return -math.inf
    if x < 0.0:
        r = math.pi / math.sin(-math.pi * x)
        return -trigamma(1.0 - x) + r * r
    if x <= 1e-4:
        return 1.0 / (x * x) + _ZETA2 - 2.0 * _ZETA3 * x
    acc = 0.0
    while x < 8.0:
        acc += 1.0 / (x * x)
        x += 1.0
    if x >= 12.0:
        r = 1.0 / (x * x)
        b2, b4, b6, b8, b10 = 1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66
        acc += 0.5 * r + (1.0 + r * (b2 + r * (b4 + r * (b6 + r * (b8 + r * b10))))) / x
    return acc


def _log_gamma(x: float) -> float:
    # Apache Commons Math Gamma.logGamma: NaN for x <= 0 (scipy would give log|Γ(x)|).
    from scipy import special  # here, as in every function of this module: scipy only when one runs

    return math.nan if not x > 0 else float(special.gammaln(x))


def _gamma(x: float) -> float:
    # Apache Commons Math Gamma.gamma: NaN at the poles 0, -1, -2, ...; ±inf on overflow.
    from scipy import special

    if math.isnan(x) or (x <= 0 and x == math.floor(x)):
        return math.nan
    return float(special.gamma(x))


def _java(op: Callable[..., np.floating], *args: float) -> float:
    """``op`` on doubles as Java computes it: ±inf or NaN on division by zero, overflow or a
    negative base's non-integer power, where Python's operators would raise or turn complex."""
    with np.errstate(all="ignore"):
        return float(op(*(np.float64(a) for a in args)))


_pow, _div, _log, _exp = (partial(_java, op) for op in (np.power, np.divide, np.log, np.exp))


# (f1, f2, ∂f1/∂x, ∂f1/∂y, ∂f2/∂x, ∂f2/∂y) at (x, y)
System = Callable[[float, float], tuple[float, float, float, float, float, float]]


def _solve(
    system: System,
    start: tuple[float, float],
    constraint: Callable[[float, float], bool] | None = None,
):
    """Newton–Raphson as ``de.linearbits.newtonraphson.NewtonRaphson2D._solve`` runs it with
    ARX's configuration: first from ``start``, then from each of :data:`START_VALUES`; a try
    ends when the equations are both within :data:`ACCURACY` of 0 (success), when the iterate
    is NaN or violates the constraint, or after :data:`ITERATIONS_PER_TRY` steps. As in that
    solver, the last start value is only evaluated at its starting point (the solver leaves
    its loop after the first step from it). (NaN, NaN) when no try succeeds."""
    tries = [start, *START_VALUES]
    with np.errstate(all="ignore"):
        for number, (x, y) in enumerate(tries):
            iterations = 0
            while True:
                f1, f2, a, b, c, d = system(x, y)
                if abs(f1) <= ACCURACY and abs(f2) <= ACCURACY:
                    return x, y
                det = a * d - b * c
                s = _div(1.0, det)
                ia, ib, ic, id_ = d * s, -b * s, -c * s, a * s
                x, y = x - (ia * f1 + ib * f2), y - (ic * f1 + id_ * f2)
                if number == len(tries) - 1:
                    return math.nan, math.nan
                if constraint is not None and not constraint(x, y):
                    break
                if math.isnan(x) or math.isnan(y) or iterations >= ITERATIONS_PER_TRY:
                    break
                iterations += 1
    return math.nan, math.nan


@dataclass(frozen=True)
class _Histogram:
    sizes: np.ndarray  # int64, ascending, distinct
    counts: np.ndarray  # float64: classes of each size (fractional with wildcard matching)

    @property
    def n(self) -> float:
        return float(np.dot(self.sizes, self.counts))

    @property
    def classes(self) -> float:
        return float(self.counts.sum())

    def of_size(self, k: int) -> float:
        hit = np.nonzero(self.sizes == k)[0]
        return float(self.counts[hit[0]]) if hit.size else 0.0


def _histogram(sizes: Sequence[int] | np.ndarray, counts: Sequence[float] | np.ndarray) -> _Histogram:
    s = np.asarray(sizes, dtype=np.int64)
    c = np.asarray(counts, dtype=np.float64)
    if s.shape != c.shape or s.ndim != 1:
        raise ParameterError("class sizes and class counts must be two vectors of the same length")
    if s.size and (s.min() < 1 or c.min() < 0):
        raise ParameterError("class sizes must be at least 1 and class counts not negative")
    keep = c > 0
    s, c = s[keep], c[keep]
    order = np.argsort(s, kind="stable")
    s, c = s[order], c[order]
    if s.size and np.any(np.diff(s) == 0):
        raise ParameterError("each class size must appear once in the histogram")
    return _Histogram(s, c)


def population_size(rows: int, *, population: int | None = None, sampling_fraction: float | None = None) -> int:
    """N from ``--population`` or ``--sampling-fraction`` f, as ARX's ``ARXPopulationModel``:
    N = round(n / f)."""
    if population is not None and sampling_fraction is not None:
        raise ParameterError("give either --population or --sampling-fraction, not both")
    if sampling_fraction is not None:
        f = check_sampling_fraction(sampling_fraction, rows)
        return math.floor(rows / f + 0.5)  # Java's Math.round
    if population is None:
        raise ParameterError("give --population N or --sampling-fraction f")
    check_population(population, rows)
    return int(population)


# --- Zayatz -------------------------------------------------------------------------------------


def zayatz(sizes, counts, population: int) -> float:
    """Zayatz's estimate of the number of population uniques (ARX ``ModelZayatz.java``):
    c1·P(unique | sample unique)/f with P = (c1/u)·h(1) / Σ_k (c_k/u)·h(k), where h(k) is the
    hypergeometric probability that a population class of size k has exactly one member in a
    sample of n from N."""
    h = _histogram(sizes, counts)
    n, u, c1 = h.n, h.classes, h.of_size(1)
    if c1 == 0:
        return 0.0
    f = n / population
    if population > ZAYATZ_SCIPY_MAX:
        return _zayatz_log_space(h, population)
    # scipy's hypergeom(M, n, N): M population, n successes (the class size), N draws (sample).
    from scipy import stats

    probability = stats.hypergeom.pmf(1, population, h.sizes, round(n))
    temp = float(np.sum(h.counts / u * probability))
    p1 = float(stats.hypergeom.pmf(1, population, 1, round(n)))
    conditional = _div(c1 / u * p1, temp)
    return c1 * conditional / f


#: Above this N, :func:`zayatz` uses the product form: scipy's hypergeometric takes time
#: linear in N (0.16 s at 2³¹, minutes at 10¹³) and loses digits; ARX clamps N here anyway.
ZAYATZ_SCIPY_MAX = 2**31 - 1


def _zayatz_log_space(h: _Histogram, population: int) -> float:
    """Zayatz with h(k) = k·C(N−k, n−1)/C(N, n) = k·f·Π_{i=0}^{k−2} (1 − (n−1)/(N−1−i)): the
    factor f cancels in P(unique | sample unique), and the products are sums of log1p terms
    (one cumulative sum up to the largest class), exact to rounding however large N is; as
    N → ∞ they tend to 1 and the estimate to c1²/(f·n)."""
    n, c1 = h.n, h.of_size(1)
    big = float(population)
    i = np.arange(int(h.sizes[-1]) - 1, dtype=np.float64)
    logs = np.concatenate([[0.0], np.cumsum(np.log1p(-(n - 1.0) / (big - 1.0 - i)))])
    weights = h.sizes * np.exp(logs[h.sizes - 1])  # k·Π for each class size k (Π = 1 at k = 1)
    return c1 * c1 / float(np.dot(h.counts, weights)) * (big / n)


# --- Pitman -------------------------------------------------------------------------------------


def _pitman_closed(h: _Histogram) -> System:
    u, n = h.classes, h.n
    rest = [(float(k), float(v)) for k, v in zip(h.sizes, h.counts) if k != 1]

    def system(t: float, a: float):
        # ModelPitman.getMasterFunctionClosed: the likelihood equations in polygamma form.
        v0 = u - 1.0
        v1 = digamma(v0 + _div(t, a) + 1.0)
        v2 = trigamma(_div(a + t + a * v0, a))
        v3 = trigamma(_div(t, a) + 1.0)
        v4 = digamma(_div(t, a) + 1.0)
        v5 = a * a
        d1 = _div(v3 - v2, v5)
        d5 = _div(((a * v1) + (t * v2)) - (a * v4) - (t * v3), v5 * a)
        d3 = _div(
            (((v5 * v0) - (t * t * v2)) + (t * t * v3)) - (2.0 * a * t * v1) + (2.0 * a * t * v4),
            v5 * v5,
        )
        o1 = _div(v1 - v4, a)
        o3 = _div((-t * v1) + (a * v0) + (t * v4), a * a)
        o2 = digamma(n + t) - digamma(t + 1.0)
        d2 = trigamma(t + 1.0) - trigamma(n + t)
        v6, v7 = digamma(1.0 - a), trigamma(1.0 - a)
        d4 = o4 = 0.0
        for key, value in rest:
            d4 += value * (v7 - trigamma(key - a))
            o4 += value * (digamma(key - a) - v6)
        return o1 - o2, o3 - o4, d2 - d1, -d5, -d5, -d3 - d4

    return system


def _pitman_iterative(h: _Histogram) -> System:
    u, n = h.classes, h.n
    i_u = np.arange(1.0, math.ceil(u)) if u > 1 else np.zeros(0)  # i = 1, 2, ... while i < u
    i_n = np.arange(1.0, math.ceil(n)) if n > 1 else np.zeros(0)
    keys = [(int(k), float(v)) for k, v in zip(h.sizes, h.counts) if k != 1]
    top = max((k for k, _ in keys), default=1)
    j = np.arange(1.0, top)

    def system(t: float, a: float):
        # ModelPitman.getMasterFunctionIterative: the same equations as explicit sums.
        with np.errstate(all="ignore"):
            v0 = t + i_u * a
            inv = 1.0 / v0
            inv2 = inv * inv
            d1, d5, d3 = (
                float(inv2.sum()),
                float((i_u * inv2).sum()),
                float((i_u * i_u * inv2).sum()),
            )
            o1, o3 = float(inv.sum()), float((i_u * inv).sum())
            w = 1.0 / (j - a)
            c_w, c_w2 = np.cumsum(w), np.cumsum(w * w)
            d4 = sum(v * float(c_w2[k - 2]) for k, v in keys)
            o4 = sum(v * float(c_w[k - 2]) for k, v in keys)
            m = 1.0 / (t + i_n)
            d2, o2 = float((m * m).sum()), float(m.sum())
        return o1 - o2, o3 - o4, d2 - d1, -d5, -d5, -d3 - d4

    return system


def _pitman_result(t: float, a: float, population: float) -> float:
    # ModelPitman.getResult: Γ(θ+1)/Γ(θ+α)·N^α, by log-gamma and by gamma, each kept only in
    # [0, N]; the larger of the valid ones.
    if math.isnan(a) or math.isnan(t) or a == 0:
        return math.nan
    scale = _pow(population, a)
    v1 = _exp(_log_gamma(t + 1.0) - _log_gamma(t + a)) * scale
    v1 = v1 if 0.0 <= v1 <= population else math.nan
    v2 = _div(_gamma(t + 1.0), _gamma(t + a)) * scale
    v2 = v2 if 0.0 <= v2 <= population else math.nan
    valid = [v for v in (v1, v2) if not math.isnan(v)]
    return max(valid) if valid else math.nan


def pitman(sizes, counts, population: int) -> float:
    """Pitman's estimate of the number of population uniques (ARX ``ModelPitman.java``): the
    maximum-likelihood (θ, α) of the Pitman sampling formula from the initial guess of
    Hoshino (2001), solved with the closed (polygamma) equations, checked against — and if
    needed re-solved with — the iterative sums; θ ≥ 0 is enforced. NaN when unsolved."""
    h = _histogram(sizes, counts)
    if h.of_size(1) == 0:
        return 0.0
    t, a = pitman_root(h.sizes, h.counts)
    return _pitman_result(t, a, float(population))


def pitman_root(sizes, counts) -> tuple[float, float]:
    """(θ, α) as ARX's solver finds them (NaN, NaN when it finds none); the root may lie
    outside the model's parameter space (see :mod:`qar_sql.stats.pitman`)."""
    h = _histogram(sizes, counts)
    c1, c2, u, n = h.of_size(1), h.of_size(2), h.classes, h.n
    c2 = c2 if c2 != 0 else 1.0  # ARX: "Overestimate"
    c = _div(c1 * (c1 - 1.0), c2)
    t = _div(
        (n * u * c) - (c1 * (n - 1.0) * ((2.0 * u) + c)),
        ((2.0 * c1 * u) + (c1 * c)) - (n * c),
    )
    a = _div((t * (c1 - n)) + ((n - 1.0) * c1), n * u)
    result = _solve(_pitman_closed(h), (t, a), lambda x, _y: x >= 0)  # θ ≥ 0 enforced
    iterative = _pitman_iterative(h)
    # unsolved, or not a root of the iterative sums: solved again with those
    if any(map(math.isnan, result)) or not all(abs(f) <= ACCURACY for f in iterative(*result)[:2]):
        return _solve(iterative, (t, a), lambda x, _y: x >= 0)
    return result


# --- SNB ----------------------------------------------------------------------------------------


def shlosser_classes(sizes, counts, f: float) -> float:
    """K, the number of non-empty population classes, by Shlosser's estimator as ARX's
    ``ModelSNB.estimateNonEmptyEquivalenceClasses`` computes it (see the module docstring for
    its denominator)."""
    h = _histogram(sizes, counts)
    var1 = var2 = var3 = var4 = 0.0
    f2 = f * f
    # A large class makes (1 − f)^k underflow to 0 and (1 + f)^k overflow: 0·inf is NaN, as in
    # Java, without numpy's RuntimeWarning on stderr.
    with np.errstate(all="ignore"):
        for size, count in zip(h.sizes.astype(float), h.counts):
            v2 = _pow(1.0 - f, size) * count
            var1 += size * f2 * _pow(1.0 - f2, size - 1.0) * count
            var2 += v2 * _pow(1.0 + f, size) - 1.0
            var3 += v2
            var4 += size * f * _pow(1.0 - f, size - 1.0) * count
    return h.classes + h.of_size(1) * _div(var1, var2) * _div(var3, var4) * _div(var3, var4)


def _snb_system(k: float, f: float, c1: float, c2: float) -> System:
    def system(a: float, b: float):
        # ModelSNB.getObjectFunction: the first two moment equations of the SNB model.
        dividend = (1.0 - f) * (1.0 - b)
        r1 = k * f * _pow(_div(b, 1.0 - dividend), a) * (_div(a * dividend, 1.0 - dividend) + 1.0) - c1
        r2 = k * a * _pow(b, a) * (f * f) * (1.0 - b) / 2.0 * _pow(1.0 - dividend, a + 2.0)
        r2 = r2 * (2.0 - (1.0 - a) * dividend) - c2
        # ModelSNB.getDerivatives (as ARX derived them).
        v0 = (b - 1.0) * (f - 1.0)
        v1 = v0 - 1.0
        v2 = 1.0 - v0
        v3 = _div(a * v0, v1) - 1.0
        v4 = _pow(_div(-b, v1), a)
        v6 = f * f
        v7 = _pow(b, a)
        v9 = a * (v7 * v6 * k)
        v10 = 2.0 * _pow(v2, a + 2.0)
        v11 = v1 * v1
        v13 = f * k
        v14 = f - 1.0
        v15 = a - 1.0
        v16 = b - 1.0
        v17 = v15 * v0
        v18 = v6 * k
        v19 = v17 + 2.0
        v20 = v18 * v19
        x1 = -v13 * _log(_div(-b, v1)) * v3 * v4 - _div(v13 * v4 * v0, v1)
        x2 = a * v13 * (_div(1.0, v1) - _div(b * v14, v11)) * v3 * _pow(_div(-b, v1), v15) - v13 * v4 * (
            _div(a * v14, v1) - _div(a * v16 * v14 * v14, v11)
        )
        y1 = (
            _div(v9 * _log(v2) * v19 * v16, v10)
            - _div(v9 * v16 * v16 * v14, v10)
            - _div(v7 * v20 * v16, v10)
            - _div(a * v7 * v18 * _log(b) * v19 * v16, v10)
        )
        y2 = (
            -_div(v9 * v19, v10)
            - _div(a * a * _pow(b, v15) * v20 * v16, v10)
            - _div(a * v7 * v18 * v17, v10)
            - _div(a * v7 * v20 * (a + 2.0) * v0, 2.0 * _pow(v2, a + 3.0))
        )
        return r1, r2, x1, x2, y1, y2

    return system


def snb(sizes, counts, population: int) -> float:
    """The SNB estimate of the number of population uniques (ARX ``ModelSNB.java``): K·β^α with
    (α, β) solving the model's equations for c1 and c2 from the start (1, 1). NaN when
    unsolved."""
    h = _histogram(sizes, counts)
    c1, c2 = h.of_size(1), h.of_size(2)
    if c1 == 0:
        return 0.0
    f = h.n / population
    k = shlosser_classes(h.sizes, h.counts, f)
    a, b = _solve(_snb_system(k, f, c1, c2), (1.0, 1.0))
    return k * _pow(b, a)


# --- Dankar's rule ------------------------------------------------------------------------------


@dataclass(frozen=True)
class PopulationUniqueness:
    """Estimated population uniques of one QI, as fractions of the population N (ARX's
    ``getFractionOfUniqueTuples*``); None where ARX reports the estimate as unavailable.
    ``dankar_model`` names the model Dankar's rule picked ("none" when the sample has no
    uniques, so every estimate is 0)."""

    population: int
    sampling_fraction: float
    pitman: float | None  # on the model's parameter space (qar_sql.stats.pitman)
    zayatz: float | None
    snb: float | None
    dankar: float | None
    dankar_model: str
    pitman_arx: float | None = None  # from ARX's root, which may lie outside that space
    pitman_theta: float | None = None  # the maximum-likelihood θ and α behind ``pitman``
    pitman_alpha: float | None = None


def _valid(value: float) -> bool:
    # RiskModelPopulationUniqueness.isValid
    return not math.isnan(value) and value != 0.0


def population_uniqueness(sizes, counts, population: int) -> PopulationUniqueness:
    """All four estimates and Dankar's choice for one QI's histogram (ARX
    ``RiskModelPopulationUniqueness``)."""
    h = _histogram(sizes, counts)
    n = h.n
    if population < n:
        raise ParameterError(
            f"the population ({population}) is smaller than the table ({round(n)} rows); "
            "give the size of the population the table was drawn from"
        )
    f = n / population if population else math.nan
    if h.of_size(1) == 0:
        zero = 0.0
        return PopulationUniqueness(population, f, zero, zero, zero, zero, "none", pitman_arx=zero)
    # Pitman on the model's parameter space (Hoshino 2001), ARX's root kept for comparison
    # and as a start: where it is valid and no better point exists, the figure is ARX's.
    root = pitman_root(h.sizes, h.counts)
    p_arx = _pitman_result(root[0], root[1], float(population))
    fitted = pitman_valid.fit(h.sizes, h.counts, float(population), starts=(root,))
    p_ = fitted.uniques
    if fitted.theta == root[0] and fitted.alpha == root[1]:
        p_ = p_arx  # the same root: ARX's own arithmetic for the figure
    z_ = zayatz(h.sizes, h.counts, population)
    s_ = snb(h.sizes, h.counts, population)  # reported even where the rule does not use it
    if f <= 0.1:
        dankar, model = (p_, "pitman") if _valid(p_) else (z_, "zayatz")
    else:
        dankar, model = (s_, "snb") if _valid(s_) and not z_ < s_ else (z_, "zayatz")

    def fraction(v: float) -> float | None:
        return v / population if _valid(v) and math.isfinite(v) else None

    solved = math.isfinite(fitted.theta) and math.isfinite(fitted.alpha)
    return PopulationUniqueness(
        population,
        f,
        fraction(p_),
        fraction(z_),
        fraction(s_),
        fraction(dankar),
        model,
        pitman_arx=fraction(p_arx),
        pitman_theta=fitted.theta if solved else None,
        pitman_alpha=fitted.alpha if solved else None,
    )
