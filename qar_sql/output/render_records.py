"""``qar records`` and ``qar eliminate`` in text, Markdown and JSON.

``qar records`` has three results, one per kind of ``--by``: the exact contributions
(:class:`~qar_sql.ranking.records.Contributions`, by DT, U+, U* or n_unique), the influence
ranking (:class:`~qar_sql.ranking.influence.Influence`) and SUDA
(:class:`~qar_sql.measures.classic.SudaRecords`); ``qar eliminate`` one, the curves
(:class:`~qar_sql.ranking.eliminate.Elimination`). The JSON goes through the one writer,
:func:`qar_sql.output.render.to_json`.
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np

from qar_sql import plots
from qar_sql.errors import ParameterError
from qar_sql.measures.classic import SudaRecords, suda_order
from qar_sql.output.render import renders, to_json
from qar_sql.output.render_risk import suda_dict, suda_text
from qar_sql.parameters.ranking import RecordsParams

# ``qar records``'s results (:func:`qar_sql.commands.records.run`), one type per kind of --by,
# in text, Markdown or JSON as ``params`` (its RecordsParams) asks. ranking/ is above output/
# (it draws with plot_elimination), so its types are named, not imported.


@renders("qar_sql.ranking.records.Contributions", "text", "json", "markdown")
def render_contributions(c: Any, fmt: str, *, params: RecordsParams) -> str:
    return contributions_records(c, fmt, params.by, params.top or 0, params.all_records)


@renders("qar_sql.ranking.influence.Influence", "text", "json", "markdown")
def render_influence(inf: Any, fmt: str, *, params: RecordsParams) -> str:
    return influence_records(inf, fmt, params.top or 0, params.refine, params.all_records)


@renders(SudaRecords, "text", "json", "markdown")
def render_suda(found: SudaRecords, fmt: str, *, params: RecordsParams) -> str:
    return suda_records(found, fmt, params.top or 0, params.all_records)


def _f(x) -> float | None:
    x = float(x)
    return x if math.isfinite(x) else None


def _key(key: tuple | None):
    """A record's key as the JSON shows it: one value, a list of several, or null."""
    return list(key) if key is not None and len(key) > 1 else (key[0] if key else None)


def record_row(c, r: int) -> dict:
    """One record of the exact contributions as the JSON lists it."""
    return {
        "key": _key(c.key_of(r)),
        "r": int(r),
        "dt": _f(c.dt[r]),
        "u_plus": _f(c.u_plus[r]),
        "u_star": _f(c.u_star[r]),
        "n_unique": int(c.n_unique[r]),
    }


def contributions_records(c, fmt: str, by: str, top: int, all_records: bool) -> str:
    """``qar records`` (by DT, U+, U* or n_unique) in text, Markdown or JSON."""
    order = c.order(by)
    shown = order if (all_records and fmt == "json") else order[:top]
    summary = c.summary()
    if fmt == "json":
        obj = {
            "risk": c.audit.risk,
            "rows": c.rows,
            "p": c.audit.p,
            "key": list(c.key),
            "by": by,
            "summary": summary,
            "warnings": list(c.audit.warnings) + list(c.warnings),
            "records": [dict(record_row(c, r), unique_on=[list(q) for q in c.unique_on(r)]) for r in shown],
        }
        return to_json(obj) + "\n"
    md = fmt == "markdown"
    cor = summary["correlations"]

    def fc(d):
        return "—" if d["pearson"] is None else f"Pearson {d['pearson']:.4f}, Kendall {d['kendall']:.4f}"

    lines = [
        f"{'## ' if md else ''}Records by {by} — T̂ = {c.audit.risk:.10g}, {c.rows:,} records, key {', '.join(c.key)}",
        "",
        f"- records unique on no QI: {100 * summary['share_unique_on_no_qi']:.2f}% ({summary['distinct_patterns']:,} distinct uniqueness patterns)",
        f"- DT–U+: {fc(cor['dt_u_plus'])}",
        f"- DT–U*: {fc(cor['dt_u_star'])}",
        f"- U+–U*: {fc(cor['u_plus_u_star'])}",
        "",
    ]
    header = ["key", "DT", "U+", "U*", "n_unique", "unique on (first 3 QIs)"]
    if md:
        lines += ["| " + " | ".join(header) + " |", "|---|---:|---:|---:|---:|---|"]
    else:
        lines.append(f"  {'key':<16} {'DT':>13} {'U+':>9} {'U*':>9} {'n_unique':>8}  unique on")
    for r in shown:
        row = record_row(c, r)
        qis = c.unique_on(r)
        on = "; ".join("(" + ", ".join(q) + ")" for q in qis[:3]) + (f" … +{len(qis) - 3}" if len(qis) > 3 else "")
        key = ", ".join(str(k) for k in (c.key_of(r) or ()))
        dt = "undefined" if row["dt"] is None else f"{row['dt']:.6e}"
        if md:
            lines.append(
                f"| {key} | {dt} | {row['u_plus']:.4f} | {row['u_star']:.4f} | {row['n_unique']} | {on.replace('|', '/')} |"
            )
        else:
            lines.append(f"  {key:<16} {dt:>13} {row['u_plus']:>9.4f} {row['u_star']:>9.4f} {row['n_unique']:>8}  {on}")
    warnings = list(c.audit.warnings) + list(c.warnings)
    if warnings:
        lines += ["", "Warnings:"] + [f"  - {w}" for w in warnings]
    return "\n".join(lines) + "\n"


def influence_records(inf, fmt: str, top: int, refine: int, all_records: bool) -> str:
    """``qar records --by influence`` in text, Markdown or JSON."""
    ranked = (
        inf.top
        if not (all_records and inf.scores is not None)
        else [(int(r), float(inf.scores[r])) for r in np.argsort(-inf.scores, kind="stable")]
    )
    rows = [{"key": _key(inf.key_of(r)), "r": r, "influence": s} for r, s in ranked]
    refined = [
        {"key": _key(inf.key_of(r)), "r": r, "dt": None if np.isnan(dt) else dt, "influence": s}
        for r, dt, s in inf.refined
    ]
    cor = inf.correlation_with_dt
    if fmt == "json":
        obj = {
            "risk": inf.audit.risk,
            "rows": inf.audit.rows,
            "p": inf.audit.p,
            "key": list(inf.key),
            "by": "influence",
            "weighted_qis": inf.n_weighted,
            "baseline": inf.baseline,
            "correlation_with_dt": cor,
            "warnings": list(inf.audit.warnings) + list(inf.warnings),
            "records": rows,
        }
        if refine:
            obj["refined"] = refined
        return to_json(obj) + "\n"
    lines = [
        f"Records by influence — T̂ = {inf.audit.risk:.10g}, {inf.audit.rows:,} records; "
        f"ranked on {inf.n_weighted} of {inf.audit.n_qi} QIs (those with ∂T̂/∂θ ≠ 0)",
    ]
    if cor:
        lines.append(f"- influence vs exact DT: Pearson {cor['pearson']:.8f}, Kendall {cor['kendall']:.8f}")
    if refine:
        lines += [
            "",
            f"Exact DT of the top {len(refined)} by influence, ranked by DT:",
            f"  {'key':<16} {'DT':>13} {'influence':>13}",
        ]
        for row in refined[:top]:
            key = row["key"] if not isinstance(row["key"], list) else ", ".join(map(str, row["key"]))
            dt = "undefined" if row["dt"] is None else f"{row['dt']:.6e}"
            lines.append(f"  {str(key):<16} {dt:>13} {row['influence']:>13.6e}")
        return "\n".join(lines) + "\n"
    lines += ["", f"  {'key':<16} {'influence':>13}"]
    for row in rows[:top]:
        key = row["key"] if not isinstance(row["key"], list) else ", ".join(map(str, row["key"]))
        lines.append(f"  {str(key):<16} {row['influence']:>13.6e}")
    return "\n".join(lines) + "\n"


def suda_records(found: SudaRecords, fmt: str, top: int, all_records: bool) -> str:
    """``qar records --by suda`` in text (also for Markdown) or JSON."""
    result, key_names = found.suda, found.key
    keys: Any = found.keys  # {position: key values}, indexed by position as a list would be
    order = suda_order(result)
    if fmt == "json":
        obj = suda_dict(result, keys, order, None if all_records else top)
        obj["key"] = list(key_names)
        return to_json(obj) + "\n"
    return suda_text(result, keys, key_names, order, top)


@renders("qar_sql.ranking.eliminate.Elimination", "text", "json", "markdown")
def render_eliminate(res, fmt: str, plot_path: str | None = None) -> str:
    """``qar eliminate`` in text, Markdown or JSON (``plot_path``: where the curves were drawn)."""
    if fmt == "json":
        return to_json(res.to_dict(), ascii_only=True) + "\n"  # (eliminate's JSON always escaped non-ASCII)
    md = fmt == "markdown"
    names = list(res.curves)
    lines = [
        f"{'## ' if md else ''}Backward elimination: T̂₀ = {res.risk:.10g}, {res.rows:,} records, step {res.step}",
        "",
    ]
    if md:
        lines += ["| removed | " + " | ".join(names) + " |", "|---:|" + "---:|" * len(names)]
    else:
        lines.append("  reduction 1 − T̂ₖ/T̂₀ (%)")
        lines.append(f"  {'removed':>8} " + " ".join(f"{n:>10}" for n in names))
    n_points = max((len(v) for v in res.curves.values()), default=0)
    for i in range(n_points):
        k = next(v[i].removed for v in res.curves.values() if len(v) > i)
        cells = []
        for n in names:
            pts = res.curves[n]
            red = pts[i].reduction if i < len(pts) else None
            cells.append("no tail" if red is None else f"{100 * red:.2f}")
        lines.append(
            ("| " + str(k) + " | " + " | ".join(cells) + " |")
            if md
            else f"  {k:>8} " + " ".join(f"{c:>10}" for c in cells)
        )
    for name, auc in res.auc.items():
        lines.append(f"\n{name} AUC (25% held out): {auc:.4f}")
    if plot_path:
        lines.append(f"\nPlot written to {plot_path}")
    return "\n".join(lines) + "\n"


def plot_elimination(result, path: str, title: str | None = None) -> None:
    """``qar eliminate --plot``: the reduction against records removed, one line per ranking
    (the paper's Fig. 10), to PNG or SVG (``qar_sql.ranking.eliminate.plot``)."""
    if not re.search(r"\.(png|svg)$", path, re.I):
        raise ParameterError(f"--plot {path!r} must end in .png or .svg")
    fig = plots.new_figure("the elimination plot", figsize=(7.5, 4.5), dpi=120)
    plots.elimination(result, fig.subplots(), title)
    fig.savefig(path)
