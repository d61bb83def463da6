"""``qar records`` and ``qar eliminate`` in text (their JSON is each result's ``to_dict()``, and
their Markdown that JSON's).

``qar records`` has three results, one per kind of ``--by``: the exact contributions
(:class:`~qar_sql.ranking.records.Contributions`, by DT, U+, U* or n_unique), the influence
ranking (:class:`~qar_sql.ranking.influence.Influence`) and SUDA
(:class:`~qar_sql.measures.classic.SudaRecords`); ``qar eliminate`` one, the curves
(:class:`~qar_sql.ranking.eliminate.Elimination`).
"""

from __future__ import annotations

import itertools
from typing import Any

from qar_sql import plots
from qar_sql.measures.classic import SudaRecords, suda_order
from qar_sql.output.files import save_figure
from qar_sql.output.registry import renders
from qar_sql.output.render_risk import suda_text
from qar_sql.parameters.ranking import RecordsParams
from qar_sql.user_text import one_line

# ``qar records``'s results (:func:`qar_sql.commands.records.run`), one type per kind of --by,
# in text as ``params`` (its RecordsParams) asks. ranking/ is above output/
# (it draws with plot_elimination), so its types are named, not imported.


@renders("qar_sql.ranking.records.Contributions", "text")
def render_contributions(c: Any, fmt: str, *, params: RecordsParams) -> str:
    return contributions_records(c, params)


@renders("qar_sql.ranking.influence.Influence", "text")
def render_influence(inf: Any, fmt: str, *, params: RecordsParams) -> str:
    return influence_records(inf, params)


@renders(SudaRecords, "text")
def render_suda(found: SudaRecords, fmt: str, *, params: RecordsParams) -> str:
    return suda_text(found.suda, found.keys, found.key, suda_order(found.suda), params.top or 0)


def contributions_records(c, params: RecordsParams) -> str:
    """``qar records`` (by DT, U+, U* or n_unique) in text: the top records of its JSON, each with
    its key and the QIs it is unique on."""
    data, top = c.to_dict(params), params.top or 0
    summary, cor = data["summary"], data["summary"]["correlations"]

    def fc(d):
        return "—" if d["pearson"] is None else f"Pearson {d['pearson']:.4f}, Kendall {d['kendall']:.4f}"

    lines = [
        f"Records by {data['by']} — T̂ = {c.audit.risk:.10g}, {c.rows:,} records, key {', '.join(c.key)}",
        "",
        f"- records unique on no QI: {100 * summary['share_unique_on_no_qi']:.2f}% ({summary['distinct_patterns']:,} distinct uniqueness patterns)",
        f"- DT–U+: {fc(cor['dt_u_plus'])}",
        f"- DT–U*: {fc(cor['dt_u_star'])}",
        f"- U+–U*: {fc(cor['u_plus_u_star'])}",
        "",
        f"  {'key':<16} {'DT':>13} {'U+':>9} {'U*':>9} {'n_unique':>8}  unique on",
    ]
    for row in data["records"][:top]:
        qis = row["unique_on"]
        on = "; ".join("(" + ", ".join(q) + ")" for q in qis[:3]) + (f" … +{len(qis) - 3}" if len(qis) > 3 else "")
        key = ", ".join(one_line(str(k)) for k in (c.key_of(row["r"]) or ()))
        dt = "undefined" if row["dt"] is None else f"{row['dt']:.6e}"
        lines.append(f"  {key:<16} {dt:>13} {row['u_plus']:>9.4f} {row['u_star']:>9.4f} {row['n_unique']:>8}  {on}")
    if data["warnings"]:
        lines += ["", "Warnings:"] + [f"  - {w}" for w in data["warnings"]]
    return "\n".join(lines) + "\n"


def influence_records(inf, params: RecordsParams) -> str:
    """``qar records --by influence`` in text: the top records of its JSON, or the refined ones
    by exact DT (its Markdown, as that of ``--by suda``, is written from its ``to_dict()``)."""
    data, top, refine = inf.to_dict(params), params.top or 0, params.refine
    rows, refined, cor = data["records"], data.get("refined", []), data["correlation_with_dt"]
    lines = [
        f"Records by influence — T̂ = {inf.audit.risk:.10g}, {inf.audit.rows:,} records; {inf.notes[0]}",
    ]
    if cor:
        lines.append(f"- influence vs exact DT: Pearson {cor['pearson']:.8f}, Kendall {cor['kendall']:.8f}")
    if refine:
        lines += ["", f"Exact DT of the top {len(refined)} by influence, ranked by DT:"]
    lines += [f"  {'key':<16} {'DT':>13} {'influence':>13}" if refine else f"\n  {'key':<16} {'influence':>13}"]
    for row in (refined if refine else rows)[:top]:
        key = (
            one_line(str(row["key"]))
            if not isinstance(row["key"], list)
            else ", ".join(one_line(str(k)) for k in row["key"])
        )
        dt = "" if not refine else f" {'undefined' if row['dt'] is None else format(row['dt'], '.6e'):>13}"
        lines.append(f"  {str(key):<16}{dt} {row['influence']:>13.6e}")
    return "\n".join(lines) + "\n"


@renders("qar_sql.ranking.eliminate.Elimination", "text")
def render_eliminate(res, fmt: str) -> str:
    """``qar eliminate`` in text (a plot is its own file, --plot: nothing is said of it here)."""
    names = list(res.curves)
    lines = [
        f"Backward elimination: T̂₀ = {res.risk:.10g}, {res.rows:,} records, step {res.step}",
        "",
        "  reduction 1 − T̂ₖ/T̂₀ (%)",
        f"  {'removed':>8} " + " ".join(f"{n:>10}" for n in names),
    ]
    for points in itertools.zip_longest(*res.curves.values()):
        k = next(p.removed for p in points if p is not None)
        cells = ["no tail" if p is None or p.reduction is None else f"{100 * p.reduction:.2f}" for p in points]
        lines.append(f"  {k:>8} " + " ".join(f"{c:>10}" for c in cells))
    lines += [f"\n{name} AUC (25% held out): {auc:.4f}" for name, auc in res.auc.items()]
    return "\n".join(lines) + "\n"


def plot_elimination(result, path: str, title: str | None = None) -> None:
    """``qar eliminate --plot``: the reduction against records removed, one line per ranking
    (the paper's Fig. 10), to PNG or SVG (``qar_sql.ranking.eliminate.plot``)."""
    fig = plots.new_figure("the elimination plot", figsize=(7.5, 4.5), dpi=120)
    plots.elimination(result, fig.subplots(), title)
    save_figure(fig, path)
