"""Coverage of the tail-fit band of T̂ under its own assumption: independent θ from one simulated
GPD tail with a known quantile (docs/uncertainty.md, "Under its own assumption", prints this
script's table). An audit never meets that assumption (every QI is enumerated and QIs share
columns); scripts/band_coverage.py measures the band under designs that vary the columns and the
rows.

The N_p values θ are i.i.d. with logit θ = logit 0.01 + Y, Y ~ GPD(ξ, σ = 0.5): every excess over
any threshold is again GPD, so the tail model of T̂ holds exactly and the true T(p, α) is
expit(logit 0.01 + σ/ξ·(α^(−ξ) − 1)).  Each replication draws one θ-vector, computes T̂ and its
band (as ``qar audit`` does: seed 29, the given resamples) and checks whether the band holds the
true T.

    PYTHONPATH=. python scripts/interval_coverage.py --reps 1000 --resamples 1000
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from qar_sql.stats import evt, interval

SIGMA, BASE, M = 0.5, 0.01, 10**7


def gpd_quantile(xi: float, sigma: float, q: float) -> np.ndarray | float:
    """Quantile of GPD(ξ, σ) at probability q (array-safe in q)."""
    return sigma / xi * ((1.0 - q) ** (-xi) - 1.0) if xi != 0 else -sigma * np.log1p(-q)


def true_risk(xi: float, alpha: float) -> float:
    y = math.log(BASE / (1 - BASE)) + gpd_quantile(xi, SIGMA, 1.0 - alpha)
    return 1.0 / (1.0 + math.exp(-y))


def simulate(n_qi: int, xi: float, reps: int, resamples: int, *, alpha=0.01, pi_u=0.05, seed=1) -> dict:
    rng = np.random.default_rng(seed)
    y = math.log(BASE / (1 - BASE)) + gpd_quantile(xi, SIGMA, rng.random((reps, n_qi)))
    thetas = 1.0 / (1.0 + np.exp(-y))
    truth = true_risk(xi, alpha)
    below = above = widened = 0
    n_exc = []
    for theta in thetas:
        fit = evt.qar_risk(theta, M, alpha=alpha, pi_u=pi_u)
        iv = interval.bootstrap_intervals(theta, M, fit, alpha=alpha, pi_u=pi_u, resamples=resamples)
        below += truth < iv.risk.low
        above += truth > iv.risk.high
        widened += "risk" in iv.widened
        n_exc.append(fit.n_exceedances)
    return {
        "n_qi": n_qi,
        "xi": xi,
        "n": float(np.median(n_exc)),
        "coverage": 1 - (below + above) / reps,
        "below": below,
        "above": above,
        "widened": widened,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=1000)
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--n-qi", type=int, nargs="*", default=[120, 286, 816, 2000])
    ap.add_argument("--xi", type=float, nargs="*", default=[-0.2, 0.1, 0.3])
    args = ap.parse_args()
    print("| N_p | median n | ξ | coverage | truth below | truth above | widened |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for n_qi in args.n_qi:
        for xi in args.xi:
            t0 = time.perf_counter()
            r = simulate(n_qi, xi, args.reps, args.resamples)
            print(
                f"| {n_qi} | {r['n']:g} | {xi:g} | {r['coverage']:.3f} | {r['below']} | {r['above']} | "
                f"{r['widened']} |  <!-- {time.perf_counter() - t0:.0f} s -->",
                flush=True,
            )


if __name__ == "__main__":
    main()
