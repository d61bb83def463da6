"""Coverage of the tail-fit band of T̂ under three designs in which the audited table varies
(docs/uncertainty.md, "What the band covers", prints this script's tables).

The band is the BCa bootstrap over the QIs' θ that ``qar audit`` prints (seed 29, level 0.95).
Each design draws many audits whose truth is known, and counts how often the band holds it:

effects   θ built from column effects: logit θ(S) = b + Σ_{c ∈ S} e_c + ε_S over every p-subset S
          of N columns (e_c ~ Exponential(1), ε_S ~ N(0, 0.5²), b = logit 0.002), so QIs that
          share a column are related, as in a real table; truth = the (1 − α) quantile of θ of a
          p-subset of fresh columns (the distribution each θ(S) is drawn from, by Monte Carlo).
          The same design with the N_p θ drawn independently from that distribution is the
          band's own assumption.
subsets   column subsets of real tables: random k of the N columns of adult (ARX, 30,162 × 9) and
          of the demo population (100,000 × 13); truth = T̂ over all N columns.
rows      record samples without replacement of a register (Valle d'Aosta's driving licences,
          87,642 × 13 after the id): n rows; truth = the full table's T̂.

θ = H / L is counted here in numpy (value codes combined per QI, then distinct keys), not by
qar's SQL, so the truth is an independent computation; the full tables' T̂ is printed beside
``qar audit``'s for a check.

    PYTHONPATH=. python scripts/band_coverage.py all --reps 100   # about 6 minutes on one core
    PYTHONPATH=. python scripts/band_coverage.py rows --reps 100
"""

from __future__ import annotations

import argparse
import csv
import itertools
import math
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from qar_sql.errors import DataError
from qar_sql.stats import evt, interval

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
ADULT = DATA / "arx" / "adult.csv"
VALLE = DATA / "driver_license" / "driverLicense_ValleAosta.csv"
P, ALPHA, PI_U = 3, 0.01, 0.05


def band(theta: np.ndarray, m: int, resamples: int) -> tuple[float, float, float, int] | None:
    """(T̂, low, high, n) as ``qar audit`` computes them, or None without a tail."""
    try:
        fit = evt.qar_risk(theta, m, alpha=ALPHA, pi_u=PI_U)
        iv = interval.bootstrap_intervals(theta, m, fit, alpha=ALPHA, pi_u=PI_U, resamples=resamples)
    except DataError:
        return None
    return fit.risk, iv.risk.low, iv.risk.high, fit.n_exceedances


def tally(truth, results) -> dict:
    """Coverage of ``truth`` (one number or one per result) by the bands in ``results``."""
    ok = [(t, r) for t, r in zip(truth if np.ndim(truth) else itertools.repeat(truth), results) if r is not None]
    below = sum(t < r[1] for t, r in ok)
    above = sum(t > r[2] for t, r in ok)
    risks = np.array([r[0] for _, r in ok])
    half = np.array([(r[2] - r[1]) / 2 for _, r in ok])
    return {
        "fits": len(ok),
        "coverage": 1 - (below + above) / len(ok) if ok else math.nan,
        "below": below,
        "above": above,
        "n": float(np.median([r[3] for _, r in ok])) if ok else math.nan,
        "median_risk": float(np.median(risks)) if ok else math.nan,
        "spread": float(np.std(risks)) if ok else math.nan,
        "half_width": float(np.median(half)) if ok else math.nan,
    }


def row(design: str, r: dict, truth: float | None = None) -> str:
    t = "varies" if truth is None else f"{truth:.4f}"
    return (
        f"| {design} | {r['fits']} | {r['n']:g} | {t} | {r['median_risk']:.4f} | {r['spread']:.4f} | "
        f"{r['half_width']:.4f} | **{100 * r['coverage']:.0f}%** | {r['below']} | {r['above']} |"
    )


HEADER = (
    "| design | audits | median n | truth | median T̂ | sd of T̂ | median half-width | coverage | "
    "truth below | truth above |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
)


# --------------------------------------------------------------------------------------------
# (a) column effects


def effects(reps: int, resamples: int, columns=(13, 18), seed: int = 1) -> None:
    rng = np.random.default_rng(seed)
    base, sd = math.log(0.002 / 0.998), 0.5
    m = 10**7

    def draw_logit(size) -> np.ndarray:
        return base + rng.exponential(1.0, size=(*np.atleast_1d(size), P)).sum(axis=-1) + rng.normal(0, sd, size)

    big = draw_logit(4_000_000)
    truth = float(1 / (1 + math.exp(-np.quantile(big, 1 - ALPHA))))
    print("(a) θ from column effects, p = 3, α = 0.01; truth = the 0.99 quantile of θ of a fresh QI\n")
    print(HEADER)
    for n_col in columns:
        subsets = np.array(list(itertools.combinations(range(n_col), P)))
        shared, independent = [], []
        for _ in range(reps):
            e = rng.exponential(1.0, size=n_col)
            lg = base + e[subsets].sum(axis=1) + rng.normal(0, sd, len(subsets))
            shared.append(band(1 / (1 + np.exp(-lg)), m, resamples))
            independent.append(band(1 / (1 + np.exp(-draw_logit(len(subsets)))), m, resamples))
        print(row(f"N = {n_col} columns, QIs share columns", tally(truth, shared), truth))
        print(row(f"N = {n_col}, the same θ drawn independently", tally(truth, independent), truth), flush=True)


# --------------------------------------------------------------------------------------------
# θ of every p-subset of a table, counted in numpy


def codes_of(columns: Mapping[str, Sequence | np.ndarray]) -> dict[str, np.ndarray]:
    """Each column as integer codes 0..d−1 (NULL, the empty string of a CSV or None, is one value)."""
    return {
        name: np.unique(np.array(["\0" if x is None else str(x) for x in v]), return_inverse=True)[1].astype(np.int64)
        for name, v in columns.items()
    }


def thetas(codes: list[np.ndarray], rows: np.ndarray | None = None) -> np.ndarray:
    """θ = H / L of every p-subset of ``codes`` (in itertools.combinations order), on ``rows``."""
    cs = [c if rows is None else c[rows] for c in codes]
    card = [int(c.max()) + 1 for c in codes]
    n = cs[0].size
    out = []
    for combo in itertools.combinations(range(len(cs)), P):
        key = np.zeros(n, dtype=np.int64)
        for j in combo:
            key = key * card[j] + cs[j]
        out.append(np.unique(key).size / n)
    return np.array(out)


def read_csv(path: Path, sep: str, drop=()) -> dict[str, list]:
    with path.open(newline="", encoding="utf-8") as f:
        reader = csv.reader(f, delimiter=sep)
        names = next(reader)
        cols: list[list] = [[] for _ in names]
        for rec in reader:
            for c, v in zip(cols, rec):
                c.append(v)
    return {n: c for n, c in zip(names, cols) if n not in drop}


# --------------------------------------------------------------------------------------------
# (b) column subsets


def subsets(reps: int, resamples: int, seed: int = 1) -> None:
    from qar_sql.demo import generate_population

    rng = np.random.default_rng(seed)
    tables: list[tuple[str, dict[str, np.ndarray], tuple[int, ...]]] = []
    if ADULT.exists():
        tables.append(("adult", codes_of(read_csv(ADULT, ";")), (7, 8)))
    demo = generate_population(100_000, 20261122)
    tables.append(("demo population", codes_of({k: v for k, v in demo.items() if k != "person_id"}), (9, 10, 11)))
    print("\n(b) column subsets of real tables, p = 3, α = 0.01; truth = T̂ over all the columns\n")
    print(HEADER)
    for name, codes, sizes in tables:
        names = list(codes)
        rows = len(next(iter(codes.values())))
        every = thetas([codes[c] for c in names])
        index = {combo: i for i, combo in enumerate(itertools.combinations(range(len(names)), P))}
        truth = band(every, rows, resamples)
        assert truth is not None
        print(f"<!-- {name}: {rows:,} rows × {len(names)} columns, T̂ over all = {truth[0]:.10g} -->")
        for k in sizes:
            picks = [np.sort(rng.choice(len(names), size=k, replace=False)) for _ in range(reps)]
            results = [
                band(every[[index[c] for c in itertools.combinations(pk.tolist(), P)]], rows, resamples) for pk in picks
            ]
            print(row(f"{name}: {k} of its {len(names)} columns", tally(truth[0], results), truth[0]), flush=True)


# --------------------------------------------------------------------------------------------
# (c) record samples


def rows(reps: int, resamples: int, sizes=(20_000, 50_000), seed: int = 1) -> None:
    if not VALLE.exists():
        print(f"\n(c) skipped: {VALLE} is absent")
        return
    rng = np.random.default_rng(seed)
    table = codes_of(read_csv(VALLE, ",", drop=("id",)))
    codes = list(table.values())
    total = codes[0].size
    full = band(thetas(codes), total, resamples)
    assert full is not None
    print("\n(c) record samples without replacement of Valle d'Aosta's driving licences, p = 3, α = 0.01;")
    print(f"truth = the full table's T̂ ({total:,} rows × {len(codes)} columns: T̂ = {full[0]:.10g})\n")
    print(HEADER)
    for n in sizes:
        results = [band(thetas(codes, rng.choice(total, size=n, replace=False)), n, resamples) for _ in range(reps)]
        print(row(f"{n:,} of the {total:,} records", tally(full[0], results), full[0]), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("design", choices=["effects", "subsets", "rows", "all"])
    ap.add_argument("--reps", type=int, default=200, help="audits per design (default 200)")
    ap.add_argument("--resamples", type=int, default=interval.DEFAULT_RESAMPLES)
    args = ap.parse_args()
    t0 = time.perf_counter()
    if args.design in ("effects", "all"):
        effects(args.reps, args.resamples)
    if args.design in ("subsets", "all"):
        subsets(args.reps, args.resamples)
    if args.design in ("rows", "all"):
        rows(args.reps, args.resamples)
    print(f"\n<!-- {time.perf_counter() - t0:.0f} s -->")


if __name__ == "__main__":
    main()
