"""How much T̂'s tail fit moves: a seeded bootstrap over the QIs' θ vector, the *tail-fit band*
(docs/uncertainty.md). Pure numpy.

The band of T̂(p, α), and of the tail fit behind it (u, ξ̂, β̂), is the BCa interval
(bias-corrected and accelerated, Efron 1987) of the *whole* estimator of
:func:`qar_sql.stats.evt.qar_risk` re-run on B resamples of the N_p θ values drawn with
replacement: each resample gets its own threshold u*, its own exceedances and its own PWM fit, so
the interval carries the variability of u and of the number of exceedances as well as that of
(ξ̂, β̂).  The delta method through the PWM estimators' asymptotic covariance (Hosking & Wallis
1987) takes u as fixed, holds only for ξ < 1/2 and gives a symmetric normal interval where T̂'s
sampling distribution is skewed; a percentile-type interval follows any monotone transformation,
so the interval of T̂ stays in (0, 1).  BCa's two corrections come from the bootstrap itself (z0,
the share of resampled T̂* below T̂) and from the delete-one jackknife (a, the skewness).

Resampling the θ treats them as exchangeable, independent draws.  They are not: every p-subset
of the columns is enumerated (no QI is sampled) and QIs that share columns have related θ.  So
the band says how much the extrapolation moves if the exceedances were other draws from the same
tail, and nothing more: it is not a confidence interval for the table's risk, whose uncertainty
lies mostly in the choice of columns and the row count.  Its measured coverage under designs
that vary those (scripts/interval_coverage.py, scripts/band_coverage.py) is far below its level;
docs/uncertainty.md publishes it.

Only the top of a resample matters (T̂ reads the :func:`~qar_sql.stats.evt.tail_width` W largest
θ).  Of a resample's N_p draws, Binomial(N_p, K/N_p) fall among the K = 2W + 40 largest θ, each
uniformly; their values, largest first, are the resample's top exactly when there are at least W
of them (a shortfall, vanishingly rare, is redrawn in full).  The work is B × K, not B × N_p.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from qar_sql.errors import DataError, ParameterError
from qar_sql.rules import (
    DEFAULT_LEVEL,
    DEFAULT_RESAMPLES,
    check_level,
    check_min_exceedances,
    check_resamples,
)
from qar_sql.stats import evt
from qar_sql.stats.evt import fit_rows

__all__ = [
    "DEFAULT_LEVEL",
    "DEFAULT_RESAMPLES",
    "FEW_EXCEEDANCES",
    "METHOD",
    "METHOD_DESCRIPTION",
    "SEED",
    "SMALL_TAIL_NOTE",
    "Interval",
    "TailIntervals",
    "band_width",
    "bca_interval",
    "bootstrap_intervals",
    "check_level",
    "check_min_exceedances",
    "check_resamples",
    "exceedance_note",
    "fit_rows",
    "require_exceedances",
]

SEED = 29
"""The fixed seed of the bootstrap: the same θ give the same interval on every run and machine
(numpy's PCG64)."""

FEW_EXCEEDANCES = 3
"""A fit from fewer exceedances than this is flagged in every format (a warning entry)."""

METHOD = "tail_fit_band_bca"
"""The ``method`` of every band: a machine token; :data:`METHOD_DESCRIPTION` says it in words."""

METHOD_DESCRIPTION = (
    "tail-fit band: BCa bootstrap over the QIs' θ, which it treats as independent draws; it shows "
    "how much the extrapolation moves if the exceedances were other draws from the same tail, and "
    "is not a confidence interval for the table's risk (it does not cover the choice of columns or "
    "the row count)"
)
"""The ``description`` beside ``method`` in the JSON (docs/uncertainty.md)."""

SMALL_TAIL_NOTE = (
    "only {n} exceedance{s}: T̂ extrapolates from a handful of the riskiest column combinations, "
    "so it can move a lot when one column changes; read it, and its tail-fit band, as rough"
)
"""The plain-language caution shown beside the interval below 10 exceedances (evt.SMALL_TAIL);
``{n}`` and ``{s}`` (plural s) are filled in."""

_NORMAL = NormalDist()
_JACKKNIFE_ROWS = 256  # delete-one estimates computed at most (see _jackknife)
_CHUNK_CELLS = 2_000_000  # values per chunk of resamples: bounds the memory of a large N_p


@dataclass(frozen=True)
class Interval:
    """A two-sided band [low, high] computed by ``method`` at the nominal ``level`` (the bootstrap
    quantiles it reads; its coverage of any truth is whatever docs/uncertainty.md measured). The
    point estimate always lies inside."""

    low: float
    high: float
    level: float
    method: str


@dataclass(frozen=True)
class TailIntervals:
    """Tail-fit bands of T̂ (``risk``) and of the tail fit (u, ξ̂, β̂), from ``resamples`` bootstrap
    resamples drawn with ``seed``; ``failed`` of them had no tail (every top value tied with
    u*) and are left out; ``widened``: bounds moved out to the point estimate (see
    :func:`bca_interval`)."""

    risk: Interval
    u: Interval
    xi: Interval
    beta: Interval
    resamples: int
    seed: int
    failed: int = 0
    widened: tuple[str, ...] = ()


def exceedance_note(n: int) -> str | None:
    """The warning entry for a fit from fewer than :data:`FEW_EXCEEDANCES` exceedances, else None."""
    if n >= FEW_EXCEEDANCES:
        return None
    return (
        f"T̂ rests on {n} exceedance{'s' if n != 1 else ''} of u (fewer than {FEW_EXCEEDANCES}): a tail "
        f"model fitted to {'one point' if n == 1 else 'two points'} says next to nothing, so do not "
        "base a release decision on T̂; more quasi-identifier columns or a larger pi_u give more "
        f"exceedances, and --min-exceedances {FEW_EXCEEDANCES} makes a gate refuse such a fit"
    )


def require_exceedances(
    n: int, minimum: int | None, *, option: str = "--min-exceedances", pi_u: float | None = None
) -> None:
    """The gate: a DataError (exit 2) when the fit rests on fewer than ``minimum`` exceedances.
    T̂ itself is still computed and shown as the paper defines it; the gate only refuses to
    pass a verdict on it. ``pi_u``, the one in use, makes the suggested larger π_u larger than it
    (twice it, at most 0.5: "--pi-u 0.1" was suggested to a run at 0.1)."""
    if minimum is None or n >= minimum:
        return
    value = 0.1 if pi_u is None else min(2 * pi_u, 0.5)
    larger = f"--pi-u {value:g}" if option.startswith("--") else f"pi_u = {value:g}"
    raise_pi_u = f" or raise pi_u (e.g. {larger}) for a larger tail," if pi_u is None or pi_u < 0.5 else ""
    raise DataError(
        f"T̂ rests on {n} exceedance{'s' if n != 1 else ''} of u, fewer than the {minimum} that {option} "
        f"requires, so its tail fit is too thin to judge by; audit more quasi-identifier columns{raise_pi_u} "
        f"or lower {option} if such a fit is acceptable"
    )


# --------------------------------------------------------------------------------------------
# Resampling


def _resample_tops(top_desc: np.ndarray, n_qi: int, width: int, rows: int, rng: np.random.Generator) -> np.ndarray:
    """``rows`` × ``width``: the ``width`` largest values of each of ``rows`` resamples (with
    replacement, size n_qi) of a vector whose K largest values are ``top_desc`` (descending).

    Of a resample's n_qi draws, c ~ Binomial(n_qi, K/n_qi) fall among the K largest, each
    uniformly; the resample's largest values are those draws' values, largest (smallest
    position) first.  When K = n_qi every draw is among them; otherwise a row with fewer than
    ``width`` such draws would need values below the K largest, and is redrawn in full."""
    k = top_desc.size
    hits = rng.binomial(n_qi, k / n_qi, size=rows) if k < n_qi else np.full(rows, n_qi)
    cols = int(hits.max())
    picks = rng.integers(0, k, size=(rows, cols))
    picks[np.arange(cols)[None, :] >= hits[:, None]] = k  # past the row's own draws: "below the top K"
    # A counting sort: how often each of the K largest was drawn, then the value at sorted position
    # w is the i with #{i' ≤ i drawn} > w, found for every row at once in one flat search (row r
    # shifted by r·(cols + 1), so that rows do not mix).
    counts = np.bincount((picks + (k + 1) * np.arange(rows)[:, None]).ravel(), minlength=rows * (k + 1))
    ends = np.cumsum(counts.reshape(rows, k + 1)[:, :k], axis=1)
    short = ends[:, -1] < width
    shift = np.arange(rows)[:, None] * (cols + 1)
    found = np.searchsorted((ends + shift).ravel(), (np.arange(width)[None, :] + shift).ravel(), side="right")
    first = found.reshape(rows, width) - k * np.arange(rows)[:, None]
    out = top_desc[np.minimum(first, k - 1)]
    if short.any():  # only when the K largest are not all of θ
        raise _Shortfall(np.flatnonzero(short), out)
    return out


class _Shortfall(Exception):
    def __init__(self, rows: np.ndarray, partial: np.ndarray):
        self.rows, self.partial = rows, partial


def _top_k(n_qi: int, width: int) -> int:
    """K: how many of the largest θ the resamples draw their tops from (module doc)."""
    return min(n_qi, 2 * width + 40)


def band_width(n_qi: int, pi_u: float) -> int:
    """How many of the largest θ :func:`bootstrap_intervals` reads: the K of the resamples and
    the W' + 2 of the delete-one fits (W' = tail_width(N_p − 1)). A θ-vector whose values below
    these are only known to lie below them (a pruned audit's) gives the same intervals, unless a
    resample falls short of the K (vanishingly rare; :func:`_tops` then reads every θ)."""
    need = _top_k(n_qi, evt.tail_width(n_qi, pi_u))
    with contextlib.suppress(DataError):  # N_p − 1 too few for π_u: no delete-one fits (see _jackknife)
        need = max(need, min(n_qi, evt.tail_width(n_qi - 1, pi_u) + 2))
    return need


def _tops(theta: np.ndarray, width: int, resamples: int, rng: np.random.Generator) -> np.ndarray:
    n_qi = theta.size
    desc = np.sort(theta)[::-1]
    k = _top_k(n_qi, width)
    try:
        return _resample_tops(desc[:k], n_qi, width, resamples, rng)
    except _Shortfall as gap:
        out = gap.partial
        for r in gap.rows:
            draw = theta[rng.integers(0, n_qi, size=n_qi)]
            out[r] = np.sort(draw)[-width:][::-1]
        return out


def _jackknife(theta: np.ndarray, m: int, *, alpha: float, pi_u: float, pwm: str) -> dict[str, np.ndarray]:
    """The estimator's parts on the N_p delete-one vectors, as (values, multiplicities).

    T̂ reads only the top of θ, so deleting any value below the W + 1 largest leaves the same
    top and gives one value (multiplicity N_p − W − 1); only the W + 1 largest need their own
    (at most _JACKKNIFE_ROWS of them, see below)."""
    n_qi = theta.size
    desc = np.sort(theta)[::-1]
    try:
        if n_qi - 1 < 2:  # one value left: no quantile between two order statistics to interpolate
            raise DataError("too few")
        width = evt.tail_width(n_qi - 1, pi_u)
    except DataError:  # N_p − 1 values are too few for π_u: no delete-one estimates, no skew correction
        nan = np.full(1, np.nan)
        return {"risk": nan, "u": nan, "n": np.zeros(1), "xi": nan, "beta": nan, "weight": np.ones(1)}
    top = min(n_qi, width + 1)
    # Past _JACKKNIFE_ROWS deletions, evenly spaced ones stand for their neighbours (each weighted
    # by how many it stands for): the delete-one values vary smoothly with the rank, and the
    # acceleration is a skewness of order 1/√n there, so a sample of them is plenty; the W² work
    # of all of them is not (N_p = 161,700 has W = 8,086).
    if top > _JACKKNIFE_ROWS:
        edges = np.linspace(0, top, _JACKKNIFE_ROWS + 1).round().astype(int)
        picked = ((edges[:-1] + edges[1:]) // 2).tolist()
        weights = np.diff(edges).astype(float).tolist()
    else:
        picked, weights = list(range(top)), [1.0] * top
    rows = [np.delete(desc[: top + 1], i)[:width] for i in picked]
    if n_qi > top:
        rows.append(desc[:width])
        weights.append(float(n_qi - top))
    parts = fit_rows(np.array(rows), m, n_qi - 1, alpha=alpha, pi_u=pi_u, pwm=pwm)
    parts["weight"] = np.array(weights)
    return parts


def _acceleration(values: np.ndarray, weights: np.ndarray) -> float:
    """BCa's a = Σ w·d³ / (6·(Σ w·d²)^(3/2)), d = mean − J_i over the delete-one values J_i
    (Efron & Tibshirani 1993, ch. 14); 0 when they do not vary or a fit failed."""
    ok = np.isfinite(values)
    if not ok.all():
        return 0.0
    d = np.sum(weights * values) / np.sum(weights) - values
    ss = float(np.sum(weights * d * d))
    return 0.0 if ss <= 0 else float(np.sum(weights * d**3) / (6.0 * ss**1.5))


def bca_interval(draws: np.ndarray, point: float, level: float, accel: float) -> tuple[float, float, bool]:
    """(low, high, widened): the BCa interval (Efron 1987) of the finite bootstrap ``draws``.

    z0 = Φ⁻¹(share of draws below the point estimate, ties counted half) corrects the median
    bias of the bootstrap distribution; a (:func:`_acceleration`) its skewness.  The bounds are
    the draws' type-7 quantiles at Φ(z0 + (z0 + z)/(1 − a(z0 + z))), z = Φ⁻¹((1 ∓ level)/2).
    With z0 = a = 0 this is the percentile interval.  When the point estimate lies outside
    (only possible if nearly every draw falls on one side of it: one or two exceedances),
    the bound is moved out to it, and ``widened`` says so: an interval that excludes the
    estimate it accompanies would read as a contradiction."""
    ndtr, ndtri = _NORMAL.cdf, _NORMAL.inv_cdf
    ok = np.sort(draws[np.isfinite(draws)])
    if ok.size == 0:
        return point, point, True
    below = (np.count_nonzero(ok < point) + 0.5 * np.count_nonzero(ok == point)) / ok.size
    z0 = float(ndtri(min(max(below, 0.5 / ok.size), 1.0 - 0.5 / ok.size)))
    qs = []
    for z in (ndtri((1.0 - level) / 2.0), ndtri((1.0 + level) / 2.0)):
        w = z0 + z
        qs.append(float(ndtr(z0 + w / (1.0 - accel * w))))
    lo, hi = (float(q) for q in np.quantile(ok, qs))
    widened = not lo <= point <= hi
    return min(lo, point), max(hi, point), widened


def bootstrap_intervals(
    theta,
    m: int,
    fit: evt.TailFit,
    *,
    alpha: float = 0.01,
    pi_u: float = 0.05,
    pwm: str = "plotting",
    level: float = DEFAULT_LEVEL,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = SEED,
) -> TailIntervals:
    """BCa bootstrap tail-fit bands of T̂, u, ξ̂ and β̂ of one θ-vector whose fit is ``fit``
    (from :func:`qar_sql.stats.evt.qar_risk` with the same M, α, π_u and pwm).

    Each of the ``resamples`` resamples draws N_p values of θ with replacement and re-runs the
    whole estimator (new u, new exceedances, new fit).  Resamples without a tail are left out
    (counted in ``failed``).  Deterministic: the same θ, parameters and seed give the same
    intervals.
    """
    level = check_level(level)
    resamples = check_resamples(resamples)
    if resamples == 0:
        raise ParameterError("bootstrap_intervals needs resamples >= 100; pass 0 only to skip it in the caller")
    raw = np.asarray(theta, dtype=float).ravel()
    n_qi = raw.size
    width = evt.tail_width(n_qi, pi_u)
    rng = np.random.default_rng(seed)
    # In chunks of rows: a resample's draws among the K ≈ 2W largest, then a W-wide fit.
    step = max(1, _CHUNK_CELLS // (2 * width + 40))
    chunks = [
        fit_rows(
            _tops(raw, width, min(step, resamples - start), rng)[:, ::-1],
            int(m),
            n_qi,
            alpha=alpha,
            pi_u=pi_u,
            pwm=pwm,
            ascending=True,
        )
        for start in range(0, resamples, step)
    ]
    parts = {name: np.concatenate([c[name] for c in chunks]) for name in chunks[0]}
    failed = int(np.count_nonzero(~np.isfinite(parts["risk"])))
    jack = _jackknife(raw, int(m), alpha=alpha, pi_u=pi_u, pwm=pwm)
    intervals, widened = {}, []
    for name in ("risk", "u", "xi", "beta"):
        draws = parts[name] if name != "u" else np.where(np.isfinite(parts["risk"]), parts["u"], np.nan)
        accel = _acceleration(jack[name], jack["weight"])
        low, high, moved = bca_interval(draws, float(getattr(fit, name)), level, accel)
        intervals[name] = Interval(low, high, level, METHOD)
        if moved:
            widened.append(name)
    return TailIntervals(**intervals, resamples=resamples, seed=seed, failed=failed, widened=tuple(widened))
