"""A comparison for people: text, Markdown (that of its JSON,
:meth:`~qar_sql.results.CompareResult.to_dict`) and a figure. No database code."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from qar_sql import plots
from qar_sql.errors import UsageError
from qar_sql.output.files import save_figure
from qar_sql.output.registry import renders
from qar_sql.output.render_audit import render_result, section
from qar_sql.results import CompareResult
from qar_sql.user_text import one_line


def _g(x: float | None, digits: int = 4) -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}g}"


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.1f} %"


def _rows(r: CompareResult) -> list[tuple[str, str, str]]:
    """(metric, value, what it means) rows: the text's table, and the Markdown's notes."""
    rows = [
        ("DTC", _g(r.dtc), "median distance from a treated record to its closest original"),
        ("CDR", _g(r.cdr), "median closest / second-closest original distance (1: no single closest)"),
        ("hidden rate", _pct(r.hidden_rate), "originals a distance attacker links to the wrong treated record"),
        ("local cloaking", _g(r.local_cloaking), "median treated records closer to an original than its own"),
        (
            "local cloaking (ties)",
            _g(r.local_cloaking_ties),
            "median other treated records as close or closer than its own (the Avatar paper's count)",
        ),
        (
            "correlation protection",
            _pct(r.correlation_protection_rate),
            "hidden rate when linking on " + (", ".join(r.attacker_columns) or "the attacker's columns"),
        ),
    ]
    inf = r.inference
    if inf is not None:
        accuracy = inf.kind == "accuracy"
        how = "accuracy" if accuracy else "mean absolute error"
        value = _pct(inf.value) if accuracy else _g(inf.value)
        rows.append((f"inference ({inf.target})", value, f"{how} of reading the target off the nearest treated record"))
    rows += [
        (f"QaR T̂ original (p = {r.p})", _g(r.risk_original, 6), "re-identification risk of the original"),
        (f"QaR T̂ treated (p = {r.p})", _g(r.risk_treated, 6), "re-identification risk of the treated table"),
    ]
    return rows


def _missing(r: CompareResult) -> str:
    """How missing numeric values entered the projection, and how many there were."""
    how = (
        "mean imputed, then standardised (--impute mean)"
        if r.impute == "mean"
        else "standardised on the present values, NULL at the centre (--impute none)"
    )
    counted = ", ".join(f"{c} {n:,}" for c, n in r.missing_numeric.items()) or "none in the original"
    tokens = f"; read as NULL: {', '.join(repr(t) for t in r.null_tokens)}" if r.null_tokens else ""
    return f"{how}; {counted}{tokens}"


def _text_lines(r: CompareResult, top: int) -> list[str]:
    lines = [
        one_line(f"Comparison of {r.treated} against {r.original} ({r.seconds:.2f} s)"),
        "",
        f"  rows                {r.rows_original:,} original, {r.rows_treated:,} treated",
        f"  columns             {len(r.columns)}: {', '.join(r.columns)}",
        f"  space               {r.method.upper()} (saiph, exact), {r.components} components, "
        f"{100 * r.explained_variance:.1f} % of the variance",
        f"  link                {r.link or 'none'}",
        f"  missing numbers     {_missing(r)}",
        "",
    ]
    rows = _rows(r)
    width = max(len(m) for m, _, _ in rows)
    lines += [f"  {m:<{width}}  {v:>10}  {why}" for m, v, why in rows]
    if r.anonymeter:
        lines += ["", "anonymeter (risk, 95 % confidence interval):"]
        lines += [
            f"  {a.evaluator:<14} {a.risk:.4f}  [{a.ci_low:.4f}, {a.ci_high:.4f}]  {a.detail}" for a in r.anonymeter
        ]
    if r.qis:
        lines += ["", f"θ before → after for the {min(top, len(r.qis))} riskiest quasi-identifiers of the original:"]
        lines += [
            f"  {q.theta_original:>9.6f} → {q.theta_treated:<9.6f}  {', '.join(q.columns)}"
            for q in (r.qis[i] for i in r.table_order()[:top])
        ]
    return lines + section("Notes", r.notes)


@renders(CompareResult, "text")
def render_compare(r: CompareResult, fmt: str, *, top: int = 10) -> str:
    return render_result(_text_lines(r, top))


def plot_compare(r: CompareResult, path: str | Path) -> Path:
    """Four panels: the distributions of DCR, NNDR and local cloaking, and the original and
    treated records on the first two axes. Needs ``compare(..., figures=True)``."""
    if r.distributions is None:
        raise UsageError("the comparison kept no distributions to plot; run it with figures=True")

    d = r.distributions
    fig = plots.new_figure("the compare plot", figsize=(11, 8.5))
    axes = fig.subplots(2, 2)
    plots.distances(r, axes[0][0])
    ax = axes[0][1]
    ax.hist(d.nndr, bins=60, range=(0, 1), color="#55a868")
    ax.axvline(r.cdr, color="k", ls="--", lw=1, label=f"CDR (median) {r.cdr:.3g}")
    ax.set(title="Closest / second-closest distance (NNDR)", xlabel="ratio", ylabel="treated records")
    ax.legend()
    ax = axes[1][0]
    if d.local_cloaking is not None:
        top = max(10, int(np.percentile(d.local_cloaking, 95)))
        ax.hist(d.local_cloaking.clip(max=top), bins=min(top + 1, 60), color="#c44e52")
        ax.axvline(r.local_cloaking or 0, color="k", ls="--", lw=1, label=f"median {r.local_cloaking:g}")
        ax.set(
            title=f"Local cloaking (values above {top} shown at {top})",
            xlabel="treated records closer than its own",
            ylabel="original records",
        )
        ax.legend()
    else:
        ax.text(0.5, 0.5, "local cloaking needs a link\n(--link KEY or --aligned)", ha="center", va="center")
        ax.set(title="Local cloaking")
        ax.set_axis_off()
    ax = axes[1][1]
    ax.scatter(d.original_xy[:, 0], d.original_xy[:, 1], s=4, alpha=0.4, label="original", color="#4c72b0")
    ax.scatter(d.treated_xy[:, 0], d.treated_xy[:, 1], s=4, alpha=0.4, label="treated", color="#dd8452")
    ax.set(title=f"First two axes ({r.method.upper()} fitted on the original)", xlabel="axis 1", ylabel="axis 2")
    ax.legend(markerscale=3)
    hidden = "—" if r.hidden_rate is None else f"{r.hidden_rate:.3f}"
    fig.suptitle(f"{plots.literal(r.treated)} vs {plots.literal(r.original)}: hidden rate {hidden}", fontsize=10)
    return save_figure(fig, path, dpi=110)
