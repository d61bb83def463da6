"""Plots on results, never on pyplot state: each function draws one result onto a
matplotlib ``Axes`` and returns it — the caller's ``ax``, or, with ``ax=None``, the one Axes of a
new bare ``Figure`` on the Agg canvas (:func:`new_figure`), known to no pyplot manager.

These are the drawings behind ``AuditResult.plot``, ``Elimination.plot``,
``UniquenessResult.plot`` and ``CompareResult.plot``, and the same code draws the matching panels
of ``--plot`` files and of the HTML report, so a figure looks the same wherever it is drawn.
Results are read by attribute (no import of ``qar_sql.results``), so this module sits below
every result type. matplotlib is the extra ``qar-sql[plot]``; it is imported here only when a
figure is made.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from qar_sql.errors import UsageError
from qar_sql.extras import require
from qar_sql.stats import koot as U
from qar_sql.user_text import one_line


def new_figure(what: str, **kwargs: Any) -> Any:
    """A ``matplotlib.figure.Figure`` (``kwargs`` as its constructor takes them) drawn by the Agg
    canvas; without matplotlib (``qar-sql[plot]``), UsageError: "``what`` needs matplotlib, …".

    pyplot is process-wide state — its backend and its list of open figures. A figure made here
    is known to no pyplot manager, needs no ``close``, and saves to PNG or SVG from any thread.
    Its layout is constrained (labels and titles are kept inside the saved image: a bare Figure
    has no layout engine and cut the x label off), and it shows itself as a PNG when it is a
    notebook cell's value (``ax.figure`` as the last line), which IPython does for a bare Figure
    only once pyplot's inline backend is loaded."""
    require("plot", what)
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    kwargs.setdefault("layout", "constrained")
    fig = _figure_class()(**kwargs)
    FigureCanvasAgg(fig)
    return fig


@functools.cache
def _figure_class() -> Any:
    """``Figure`` with ``_repr_png_`` (made once, on first use: matplotlib is an extra)."""
    from io import BytesIO

    from matplotlib.figure import Figure

    class QarFigure(Figure):
        """A bare Figure that IPython displays as a PNG."""

        def _repr_png_(self) -> bytes:
            buf = BytesIO()
            self.savefig(buf, format="png")
            return buf.getvalue()

    return QarFigure


def literal(text: str) -> str:
    """``text`` (a column, table or file name) as matplotlib prints it, character for character:
    a name holding two ``$`` would otherwise be read as mathtext, drawn in italics or, when it is
    no valid TeX (``$\\foo$``), fail the whole figure with a ParseFatalException; on one line, a
    control character as its escape (:func:`~qar_sql.user_text.one_line`: no font has a glyph
    for ESC, and a line break would stack a legend's label)."""
    return one_line(text).replace("$", r"\$")


def short_label(text: str, width: int = 24) -> str:
    """``text`` as a tick or legend label: :func:`literal`, cut to ``width`` characters with "…" (a
    120-character column name left the plot no room, and the saved image cut it off)."""
    return literal(text if len(text) <= width else text[: width - 1] + "…")


def readable_name(source: str, table: str | None, rows: int | None) -> str:
    """How a figure's title names what was audited: the table, else the file or URL, else for a
    frame (labelled ``<pandas.DataFrame>`` in results) "pandas DataFrame (1,000 rows)"."""
    if table:
        return table
    if source.startswith("<") and source.endswith(">"):
        library, _, kind = source[1:-1].rpartition(".")
        name = f"{library} {kind}".strip()
        return f"{name} ({rows:,} rows)" if rows is not None else name
    return source


def _axes(ax: Any, what: str, figsize: tuple[float, float]) -> Any:
    """``ax``, or the Axes of a new Agg figure when it is None."""
    if ax is not None:
        return ax
    return new_figure(what, figsize=figsize).subplots()


def theta(ax: Any, theta: np.ndarray, u: float | None, xi: float | None, beta: float | None, pi_u: float) -> Any:
    """Histogram of θ with the threshold u and, above it, the fitted GPD tail's density (on the
    θ scale: logit θ − logit u ~ GPD(ξ, β), scaled to the share π_u above u)."""
    theta = np.asarray(theta, dtype=float)
    bins = min(60, max(10, int(np.sqrt(theta.size))))
    ax.hist(theta, bins=bins, density=True, color="#9db7d5", edgecolor="white", label="θ of the QIs")
    if u is not None:
        ax.axvline(u, color="#b2182b", linestyle="--", linewidth=1.2, label=f"threshold u = {u:.4g}")
        if xi is not None and beta is not None and beta > 0:
            hi = float(theta.max())
            if hi > u:
                x = np.linspace(u, hi, 200)[1:]
                xc = np.clip(x, 1e-12, 1 - 1e-12)
                y = np.log(xc / (1 - xc)) - np.log(u / (1 - u))  # the excess on the logit scale
                with np.errstate(all="ignore"):
                    if abs(xi) < 1e-9:
                        dens = np.exp(-y / beta) / beta
                    else:
                        dens = (1 + xi * y / beta) ** (-1 / xi - 1) / beta
                    dens = np.where(np.isfinite(dens), dens, 0.0) / (xc * (1 - xc)) * pi_u
                ax.plot(x, dens, color="#b2182b", linewidth=1.6, label="fitted GPD tail")
    ax.set_xlabel("θ = distinct combinations / rows")
    ax.set_ylabel("density")
    ax.legend(frameon=False, fontsize=8)
    return ax


def audit(result: Any, ax: Any = None, title: str | None = None) -> Any:
    """An :class:`~qar_sql.AuditResult`: θ of its grouped QIs, u and the fitted tail; ``title``
    replaces the default "θ of NAME (p = …, T̂ = …)"."""
    ax = _axes(ax, "AuditResult.plot()", (6.4, 3.4))
    values = result.theta
    values = values[~np.isnan(values)]  # pruned QIs have bounds, not θ
    f = result.fit
    theta(ax, values, f.u if f else None, f.xi if f else None, f.beta if f else None, result.pi_u)
    risk = "no tail" if result.risk is None else f"T̂ = {result.risk:.4g}"
    name = literal(readable_name(result.source, result.table, result.rows))
    ax.set_title(title or f"θ of {name} (p = {result.p}, {risk})", fontsize=10)
    return ax


def elimination(result: Any, ax: Any = None, title: str | None = None) -> Any:
    """An :class:`~qar_sql.Elimination`: reduction against records removed, one line per
    ranking (the paper's Fig. 10)."""
    ax = _axes(ax, "Elimination.plot()", (7.5, 4.5))
    for name, pts in result.curves.items():
        xs = [0] + [pt.removed for pt in pts]
        ys = [0.0] + [np.nan if pt.reduction is None else 100 * pt.reduction for pt in pts]
        ax.plot(xs, ys, label=name, linewidth=2 if name in ("greedy", "dt") else 1.4)
    ax.axhline(0, color="grey", linewidth=0.8)
    ax.set_xlabel("records removed")
    ax.set_ylabel("risk reduction 1 − T̂ₖ / T̂₀ (%)")
    ax.set_title(title or f"Backward elimination (T̂₀ = {result.risk:.4g}, L = {result.rows:,})")
    ax.legend(title="ranking")
    ax.grid(alpha=0.3)
    return ax


def uniqueness(result: Any, ax: Any = None, n_curves: int = 3, title: str | None = None) -> Any:
    """A :class:`~qar_sql.UniquenessResult`: π(k) of the ``n_curves`` riskiest QIs against the
    group size k — exact (solid), the KL approximation (dashed), the uniform curve on the same M
    (dotted); the paper's Figure 3."""
    ax = _axes(ax, "UniquenessResult.plot()", (7.5, 4.5))
    shown = list(result.qis[:n_curves])
    k_max = max([2 * result.group_size] + [2 * q.k50 for q in shown])
    for i, q in enumerate(shown):
        top = min(k_max, q.distinct + 1)
        ks = np.unique(np.linspace(1, top, num=min(top, 200)).round().astype(int))
        colour = f"C{i}"
        label = short_label(", ".join(q.columns), 40)
        dist = U.Grouped.from_histogram(q.class_sizes)
        exact = np.array([U.pi_exact(int(k), dist) for k in ks])
        ax.plot(ks, exact, color=colour, label=f"{label} (κ = {q.kappa:.3f}, M = {q.domain:,})")
        ax.plot(ks, [U.pi_kl(int(k), q.domain, q.kappa) for k in ks], color=colour, linestyle="--")
        ax.plot(ks, [U.pi_uniform(int(k), q.domain) for k in ks], color=colour, linestyle=":")
    ax.axvline(result.group_size, color="grey", linewidth=0.8)
    ax.set_xlabel("group size k")
    ax.set_ylabel("P(all k unique)")
    ax.set_title(title or "Uniqueness probability: exact (solid), KL (dashed), uniform (dotted)", fontsize=10)
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize=8)
    return ax


def distances(result: Any, ax: Any = None, title: str | None = None) -> Any:
    """A :class:`~qar_sql.CompareResult` made with ``figures=True``: the distance of each
    treated record to its closest original (DCR), with their median, the DTC."""
    if result.distributions is None:
        raise UsageError("the comparison kept no distributions to plot; run it with figures=True")
    ax = _axes(ax, "CompareResult.plot()", (6.4, 4.2))
    ax.hist(result.distributions.dcr, bins=60, color="#4c72b0")
    ax.axvline(result.dtc, color="k", ls="--", lw=1, label=f"DTC (median) {result.dtc:.3g}")
    ax.set(title=title or "Distance to the closest original (DCR)", xlabel="distance", ylabel="treated records")
    ax.legend()
    return ax


def frontier(r: Any, ax: Any = None) -> Any:
    """The loss minimised against T̂ of the nodes ``qar anonymize`` measured (grey), the Pareto
    frontier among them (line), the chosen node (red) and the target τ (dashed)."""
    ax = _axes(ax, "the frontier plot", (7, 4.5))
    metric = r.metric
    rows = [n for n in r.frontier if n.risk is not None]
    if rows:
        ax.plot([n.scores[metric] for n in rows], [n.risk for n in rows], marker="o", color="#2166ac", label="frontier")
    chosen = r.chosen
    if chosen is not None and chosen.risk is not None:
        ax.scatter([chosen.scores[metric]], [chosen.risk], color="#b2182b", zorder=3, label="chosen node")
    target = r.models.get("risk_below")
    if target is not None:
        ax.axhline(target, color="#b2182b", linestyle="--", linewidth=1, label=f"τ = {float(target)!r}")
    ax.set_xlabel(f"{metric} (loss minimised)")
    ax.set_ylabel(f"T̂({r.p}, {r.alpha:g})" if r.p is not None else "T̂")
    ax.legend(fontsize=8)
    return ax
