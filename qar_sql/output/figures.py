"""Plots for the HTML report, drawn by matplotlib and returned as inline SVG text.

Each function returns one ``<svg>`` element (no XML prolog, no metadata block, no external
reference) so the report stays one self-contained file. matplotlib is the optional extra
``qar-sql[plot]``; without it the report has the tables and a note instead of the figures.
"""

from __future__ import annotations

import html
import io
import re
from collections.abc import Sequence

import numpy as np

from qar_sql import plots
from qar_sql.extras import installed
from qar_sql.stats import evt

_PROLOG = re.compile(r"<\?xml[^>]*\?>\s*|<!DOCTYPE[^>]*>\s*|<metadata>.*?</metadata>\s*", re.DOTALL)


_MISSING = "each figure of the report"


def available() -> bool:
    """Whether matplotlib (``qar-sql[plot]``) is installed; without it the report has its tables
    and a note in place of each figure."""
    return installed("plot")


def _svg(fig, name: str, label: str) -> str:
    """The figure as an inline ``<svg>`` with a text alternative (role=img, aria-label, <title>)."""
    import matplotlib

    for ax in fig.axes:  # numbers as people read them: no 1e5 offset, no scientific tick labels
        try:
            ax.ticklabel_format(style="plain", useOffset=False)
        except AttributeError:  # an axis with its own (categorical) labels
            pass
    buf = io.StringIO()
    # A salt per figure: matplotlib derives element ids from it, and several SVGs share one page.
    with matplotlib.rc_context({"svg.hashsalt": f"qar-{name}", "svg.fonttype": "none"}):
        fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    text = _PROLOG.sub("", buf.getvalue()).strip()
    esc = html.escape(label, quote=False).replace('"', "&quot;")
    # The title goes after the tag matplotlib wrote (before the label is in it, so a '>' of a
    # column name cannot end the tag), as text: a backslash of a name is no regex escape.
    tag = re.search(r"<svg[^>]*>", text)
    if tag is None:
        return text
    opened = tag.group(0).replace("<svg ", f'<svg role="img" aria-label="{esc}" ', 1)
    return text[: tag.start()] + opened + f"<title>{esc}</title>" + text[tag.end() :]


def _fig(width=6.4, height=3.4):
    fig = plots.new_figure(_MISSING, figsize=(width, height))
    ax = fig.subplots()
    ax.spines[["top", "right"]].set_visible(False)
    return fig, ax


def exceedances(theta: np.ndarray, rows: int, u: float) -> np.ndarray:
    """The clipped θ strictly above u, as the tail fit uses them (evt.qar_risk)."""
    t = evt.clip_theta(np.asarray(theta, dtype=float), rows)
    return np.sort(t[t > u])


def theta_distribution(
    theta: np.ndarray, rows: int, u: float | None, xi: float | None, beta: float | None, pi_u: float, label: str
) -> str:
    """Histogram of θ with the threshold u and, above it, the fitted GPD tail's density
    (:func:`qar_sql.plots.theta`, which ``AuditResult.plot`` draws too)."""
    fig, ax = _fig()
    plots.theta(ax, theta, u, xi, beta, pi_u)
    return _svg(fig, "theta", label)


def qq(exc: np.ndarray, u: float, xi: float, beta: float, label: str) -> str:
    """QQ plot of the exceedances (logit scale) against the fitted GPD's quantiles."""
    fig, ax = _fig(4.2, 3.4)
    y = np.sort(np.log(exc / (1 - exc)) - np.log(u / (1 - u)))
    n = y.size
    q = (np.arange(1, n + 1) - 0.5) / n
    model = beta * np.log1p(-q) * -1 if abs(xi) < 1e-9 else beta / xi * ((1 - q) ** (-xi) - 1)
    ax.plot(model, y, "o", color="#2166ac", markersize=3)
    lim = [0, float(max(model.max(initial=0), y.max(initial=0)))]
    ax.plot(lim, lim, color="#777777", linewidth=0.8)
    ax.set(xlabel="fitted GPD quantile", ylabel="observed excess")
    return _svg(fig, "qq", label)


def size_bins(pairs: Sequence[tuple[int, int]], k: int, *, per_class: bool = True) -> list[tuple[str, int, bool]]:
    """(label, records, below k) per bar: each size below k on its own, then widening ranges
    (k–9, 10–19, 20–49, 50–99, …) so that a long tail of sizes stays readable. ``pairs`` are
    (class size, classes), or with ``per_class=False`` (class size, records) already."""
    edges = [k] + [e for e in (10, 20, 50, 100, 200, 500, 1000, 5000, 10000) if e > k]
    bars: list[tuple[str, int, bool]] = [(str(s), 0, True) for s in range(1, k)]
    ranges = [(lo, hi) for lo, hi in zip(edges, edges[1:] + [None])]
    counts = [0] * len(ranges)
    for size, count in pairs:
        records = size * count if per_class else count
        if size < k:
            bars[size - 1] = (str(size), bars[size - 1][1] + records, True)
            continue
        for i, (lo, hi) in enumerate(ranges):
            if size >= lo and (hi is None or size < hi):
                counts[i] += records
                break
    for (lo, hi), c in zip(ranges, counts):
        label = f"{lo}+" if hi is None else (str(lo) if hi == lo + 1 else f"{lo}–{hi - 1}")
        bars.append((label, c, False))
    while len(bars) > k - 1 and bars[-1][1] == 0:  # drop empty ranges at the top
        bars.pop()
    return bars


def class_sizes(
    pairs: Sequence[tuple[int, int]],
    k: int,
    label: str,
    *,
    per_class: bool = True,
    name: str = "class-sizes",
    xlabel: str = "class size",
    ylabel: str = "records (summed over the QIs)",
) -> str:
    """Records by equivalence-class size, classes below k in red (``pairs`` as :func:`size_bins`)."""
    fig, ax = _fig()
    bars = size_bins(pairs, k, per_class=per_class)
    x = np.arange(len(bars))
    ax.bar(x, [b[1] for b in bars], color=["#b2182b" if b[2] else "#9db7d5" for b in bars])
    ax.set_xticks(x, [b[0] for b in bars], rotation=45 if len(bars) > 10 else 0)
    ax.set(xlabel=f"{xlabel} (red: below k = {k})", ylabel=ylabel)
    return _svg(fig, name, label)


def bars(labels: Sequence[str], values: Sequence[int], xlabel: str, name: str, label: str) -> str:
    """Horizontal bars, the first label at the top: one value per item (e.g. the records in
    classes below k on each of the 15 QIs with the most)."""
    fig, ax = _fig(6.4, 0.9 + 0.28 * max(len(labels), 1))
    y = np.arange(len(labels))
    ax.barh(y, list(values), color="#b2182b")
    ax.set_yticks(y, [plots.short_label(t) for t in labels], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel(xlabel)
    return _svg(fig, name, label)


def scatter(x: Sequence[float], y: Sequence[float], xlabel: str, ylabel: str, name: str, label: str) -> str:
    """Points (x, y) with the diagonal y = x: one value before (x) and after (y) per item."""
    fig, ax = _fig(4.6, 4.0)
    ax.plot(x, y, "o", color="#2166ac", markersize=3, alpha=0.7)
    hi = float(max(max(x, default=0.0), max(y, default=0.0), 1e-9))
    ax.plot([0, hi], [0, hi], color="#777777", linewidth=0.8)
    ax.set(xlabel=xlabel, ylabel=ylabel)
    return _svg(fig, name, label)


def curves(
    series: dict[str, Sequence[tuple[float, float | None]]], xlabel: str, ylabel: str, name: str, label: str
) -> str:
    """Line plot of named (x, y) series; None y values are gaps."""
    fig, ax = _fig()
    for key, pts in series.items():
        xs = [x for x, _ in pts]
        ys = [np.nan if y is None else y for _, y in pts]
        ax.plot(xs, ys, marker="o", markersize=3, linewidth=1.4, label=plots.literal(key))
    ax.set(xlabel=xlabel, ylabel=ylabel)
    if len(series) > 1:
        ax.legend(frameon=False, fontsize=8)
    return _svg(fig, name, label)


def frontier(result, label: str) -> str:
    """The loss minimised against T̂ of the nodes ``qar anonymize`` measured
    (:func:`qar_sql.plots.frontier`, which ``AnonymizeResult.plot`` draws too)."""
    fig, ax = _fig()
    plots.frontier(result, ax)
    return _svg(fig, "anonymize-frontier", label)
