"""Render ``qar uniqueness`` (text, and Markdown from its JSON,
:meth:`qar_sql.results.UniquenessResult.to_dict`) and draw its figures (matplotlib).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from qar_sql import plots
from qar_sql.output.files import save_figure
from qar_sql.output.registry import renders
from qar_sql.output.render_audit import percent, render_result
from qar_sql.results import QIUniqueness, UniquenessResult
from qar_sql.stats import koot as U
from qar_sql.user_text import one_line

_p = percent


def _cols(q: QIUniqueness) -> str:
    return ", ".join(q.columns)


def _title(r: UniquenessResult) -> str:
    return r.table or r.source


def _text_lines(r: UniquenessResult, top: int) -> list[str]:
    k = r.group_size
    lines = [
        f"Uniqueness probability of groups of k = {k} in {_title(r)} ({r.engine}, {r.seconds:.2f} s)",
        "",
        f"  rows       {r.rows:,}",
        f"  QIs        {len(r.qis):,} (p = {r.p} of {len(r.columns)} columns)",
        f"  domain     {r.domain_mode}",
        f"  k_at       largest k with pi_exact >= {r.target:g}",
        "",
        f"  Riskiest {min(top, len(r.qis))} QIs (largest chance that all {k} people are unique):",
        "",
    ]
    shown = r.qis[:top]
    width = max((len(_cols(q)) for q in shown), default=10)
    header = f"  {'QI':<{width}}  {'M':>10}  {'kappa':>7}  {'pi_exact':>9}  {'pi_kl':>9}  {'pi_kl_u':>9}  {'pi_unif':>9}  {'pi_pois':>9}  {'k50':>6}  {'k_at':>6}"
    if r.monte_carlo_draws:
        header += f"  {'Monte Carlo (95%)':>26}"
    lines.append(header)
    for q in shown:
        line = (
            f"  {_cols(q):<{width}}  {q.domain:>10,}  {q.kappa:>7.4f}  {_p(q.pi_exact):>9}  {_p(q.pi_kl):>9}  "
            f"{_p(q.pi_kl_u):>9}  {_p(q.pi_uniform):>9}  {_p(q.pi_poisson):>9}  {q.k50:>6,}  {q.k_at:>6,}"
        )
        if q.monte_carlo is not None:
            mc = q.monte_carlo
            line += f"  {_p(mc.share):>8} [{_p(mc.low)}, {_p(mc.high)}]"
        lines.append(line)
    if r.from_marginals:
        lines += ["", "  Independence model (p from one-column distributions) for the same QIs:", ""]
        lines.append(f"  {'QI':<{width}}  {'M':>12}  {'kappa':>7}  {'pi_exact':>9}  {'pi_kl':>9}  {'k50':>6}")
        for q in shown:
            m = q.marginal
            assert m is not None
            lines.append(
                f"  {_cols(q):<{width}}  {m.domain:>12,}  {m.kappa:>7.4f}  {_p(m.pi_exact):>9}  {_p(m.pi_kl):>9}  {m.k50:>6,}"
            )
    exposed = [q for q in r.qis if q.most_exposed]
    for q in exposed:
        lines += ["", f"  Most exposed records on ({_cols(q)}): chance to be unique among {k}", ""]
        for e in q.most_exposed:
            values = ", ".join("NULL" if v is None else one_line(str(v)) for v in e.values)
            lines.append(f"    {_p(e.exposure):>9}  class of {e.class_size:,}  ({values})")
    if r.scenarios:
        lines += ["", "  Treatments (kappa and pi_exact before -> after):", ""]
        for q in shown:  # before, then after each treatment
            lines.append(f"  {_cols(q)}")
            after = [(s.name, next(a for a in s.qis if a.index == q.index)) for s in r.scenarios]
            for name, a in [("original", q), *after]:
                lines.append(f"    {name:<30}  kappa {a.kappa:.4f}  pi_exact {_p(a.pi_exact):>9}  k50 {a.k50:,}")
    return lines


@renders(UniquenessResult, "text")
def render_uniqueness(r: UniquenessResult, fmt: str, *, top: int = 10) -> str:
    return render_result(_text_lines(r, top), r.warnings)


# --- figures ----------------------------------------------------------------------------------


def curve(q: QIUniqueness, ks: np.ndarray) -> np.ndarray:
    """π_exact(k) of one QI at every k of ``ks``."""
    dist = U.Grouped.from_histogram(q.class_sizes)
    return np.array([U.pi_exact(int(k), dist) for k in ks])


def plot(r: UniquenessResult, path: str | Path, *, n_curves: int = 3) -> Path:
    """The paper's Figure 3 for the ``n_curves`` riskiest QIs — π(k) against k, exact (solid)
    with the KL approximation (dashed) and the uniform curve on the same M (dotted) — and κ per
    QI (right). ``.png`` or ``.svg``; matplotlib is the optional extra ``qar-sql[plot]``."""
    fig = plots.new_figure("the uniqueness plot", figsize=(12, 4.5))
    left, right = fig.subplots(1, 2, gridspec_kw={"width_ratios": [3, 2]})
    plots.uniqueness(r, left, n_curves)
    order = sorted(r.qis, key=lambda q: q.kappa)
    right.plot(range(1, len(order) + 1), [q.kappa for q in order], marker="." if len(order) < 60 else None)
    if len(order) <= 20:
        right.set_xticks(
            range(1, len(order) + 1),
            [plots.short_label(", ".join(q.columns)) for q in order],
            rotation=60,
            ha="right",
            fontsize=7,
        )
    else:
        right.set_xlabel(f"QI, by κ ({len(order):,} QIs)")
    right.set_ylabel("κ (Kullback-Leibler distance to uniform)")
    right.set_title(f"κ per QI (domain: {r.domain_mode})", fontsize=10)
    fig.suptitle(
        f"{plots.literal(plots.readable_name(r.source, r.table, r.rows))}: groups of k = {r.group_size}", fontsize=11
    )
    return save_figure(fig, path)
