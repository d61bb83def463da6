"""The generalized birthday problem for every quasi-identifier, from the scan's histograms.

No database here: the audit's class-size histograms (class size → number of classes) are the
grouped distributions :mod:`qar_sql.stats.koot` needs, so ``qar audit --group-size`` and
``qar uniqueness`` add no pass over the data for these figures. The audit (for its optional
``uniqueness`` block) and :mod:`qar_sql.commands.uniqueness` (the command) both call
:func:`measure`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from qar_sql.errors import ParameterError
from qar_sql.results import MarginalUniqueness, QIStats, QIUniqueness
from qar_sql.rules import check_group_size, check_target
from qar_sql.stats import koot as U


def domain_mode(domain: str | int) -> str:
    """The JSON ``domain_mode``: "observed", "product", or "number" for a fixed M."""
    return domain if isinstance(domain, str) else "number"


def qi_domain(domain: str | int, columns: Sequence[str], distinct: int, column_values: Mapping[str, int] | None) -> int:
    """M for one QI: H (observed), the product of its columns' value counts (NULL a value of
    its column), or the user's number."""
    if domain == "observed":
        return distinct
    if domain == "product":
        if column_values is None:
            raise ParameterError("--domain product needs each column's number of values; none were counted")
        return math.prod(column_values[c] for c in columns)
    assert isinstance(domain, int)
    U.check_domain(domain, distinct, f"QI ({', '.join(columns)})")
    return domain


def measure_one(dist: U.Grouped, k: int, target: float, m: int) -> tuple[float, float, float, float, float, int, int]:
    """(κ, π_u, π_KL, π_Pois, π_exact, k50, k_at) of one distribution on a domain of M values
    (π_KL-u, section 4.1's form, is :func:`qar_sql.stats.koot.pi_kl_u`)."""
    kappa = U.kappa(dist, m)
    k50 = U.k50(dist)
    k_at = k50 if target == 0.5 else U.k_at(target, dist)
    return (
        kappa,
        U.pi_uniform(k, m),
        U.pi_kl(k, m, kappa, dist.support),
        U.pi_poisson(k, dist),
        U.pi_exact(k, dist),
        k50,
        k_at,
    )


def measure(
    qis: Sequence[QIStats],
    rows: int,
    *,
    group_size: int,
    target: float = 0.5,
    domain: str | int = "observed",
    column_values: Mapping[str, int] | None = None,
    marginals: Mapping[str, Sequence[tuple[int, int]]] | None = None,
    monte_carlo: int = 0,
    seed: int | None = None,
) -> tuple[QIUniqueness, ...]:
    """Every QI's uniqueness figures for a group of ``group_size`` people, riskiest first
    (largest π_exact, then largest k50, then QI order). ``marginals``: each column's
    value-frequency histogram, for the independence model; ``monte_carlo``: groups to simulate
    per QI (seeded per QI from ``seed``)."""
    check_group_size(group_size, rows)
    check_target(target)
    # one independent stream per QI, so a QI's draws do not depend on which QIs come before it
    seeds = [int(ss.generate_state(1)[0]) for ss in np.random.SeedSequence(seed).spawn(len(qis))] if monte_carlo else []
    out = []
    for i, q in enumerate(qis):
        dist = U.Grouped.from_histogram(q.class_sizes)
        m = qi_domain(domain, q.columns, q.distinct, column_values)
        measured = measure_one(dist, group_size, target, m)  # QIUniqueness's fields kappa … k_at
        mc = None
        if monte_carlo:
            mc = U.monte_carlo(group_size, dist, monte_carlo, seed=seeds[i])
        marginal = None
        if marginals is not None:
            model = U.Grouped.from_marginals([marginals[c] for c in q.columns])
            mm = model.support if domain == "observed" else max(m, model.support)
            if isinstance(domain, int):
                U.check_domain(domain, model.support, f"the independence model of ({', '.join(q.columns)})")
            values = measure_one(model, group_size, target, mm)
            marginal = MarginalUniqueness(mm, *values[:6], pi_kl_u=U.pi_kl_u(group_size, mm, values[0], model.support))
        out.append(
            QIUniqueness(
                q.index,
                q.columns,
                q.distinct,
                m,
                *measured,
                exposure_mean=U.exposure_mean(group_size, dist),
                exposure_max=float(U.exposure(group_size, dist.prob[0])),
                class_sizes=q.class_sizes,
                monte_carlo=mc,
                marginal=marginal,
                pi_kl_u=U.pi_kl_u(group_size, m, measured[0], dist.support),
            )
        )
    return tuple(sorted(out, key=lambda q: (-q.pi_exact, -q.k50, q.index)))
