"""``qar anonymize``'s result as text and SQL (its JSON, docs/anonymize.md, is
:meth:`qar_sql.anonymization.outcome.AnonymizeResult.to_dict`, and its Markdown that JSON's)."""

from __future__ import annotations

from typing import Any

from qar_sql.output.readable_numbers import dash
from qar_sql.output.registry import renders
from qar_sql.output.render_audit import render_result

# output/ is below anonymize/ in the flow: the result is read by its attributes.
AnonymizeResult = Any

#: How the text and the report name a metric, where its key is not its name.
METRIC_NAMES = {"entropy": "non-uniform entropy", "entropy_nm": "non-uniform entropy (non-monotonic)", "aecs": "AECS"}


def models_text(r: AnonymizeResult) -> str:
    """The models asked for, in words (the text output's and the report's)."""
    m = r.models
    out = []
    if m.get("k"):
        out.append(f"{m['k']}-anonymity")
    if m.get("no_singletons"):
        out.append("no singletons")
    if m.get("l") is not None:
        c = f", c = {m['c']:g}" if m.get("c") is not None else ""
        out.append(f"{m['l_kind']} {m['l']}-diversity{c} on {m['sensitive']}")
    if m.get("t") is not None:
        out.append(f"{m['t']:g}-closeness ({m['t_kind']}) on {m['sensitive']}")
    if m.get("risk_below") is not None:
        out.append(f"T̂({r.p}, {r.alpha:g}) ≤ {float(m['risk_below'])!r}")  # (:g read 0.9999999 as 1)
    return ", ".join(out) + f"; at most {100 * m.get('suppression_limit', 0):g}% of rows suppressed"


def _facts(r: AnonymizeResult) -> list[tuple[str, str]]:
    c = r.chosen
    rows: list[tuple[str, str]] = [("models", models_text(r))]
    if c is None:
        rows.append(("chosen node", "none: no node of the lattice meets every target"))
    else:
        share = c.suppressed / r.rows if r.rows else 0.0
        rows += [
            ("records suppressed", f"{c.suppressed:,} of {r.rows:,} ({100 * share:.2f}%)"),
            ("k (smallest class)", f"{c.k:,}"),
        ]
        if r.l_value is not None:
            rows.append(("l (smallest in a class)", dash(r.l_value)))
        if r.t_value is not None:
            rows.append(("t (largest distance)", dash(r.t_value)))
        if r.p is not None:
            risk = "undefined (no tail)" if c.risk is None else f"{c.risk:.6g}"
            if r.risk_band is not None:
                b = r.risk_band
                risk += f" (tail-fit band {b.low:.4g} – {b.high:.4g})"
            elif c.risk == 0 and r.risk_note:
                risk += f" ({r.risk_note})"
            of = " of θ = S/L" if r.theta == "unique" else ""
            rows.append((f"T̂({r.p}, {r.alpha:g}){of} over {len(r.audit_columns)} columns", risk))
        for m, v in c.scores.items():
            star = " (minimised)" if m == r.metric else ""
            rows.append((f"{METRIC_NAMES.get(m, m)}{star}", dash(v, ".10g")))
    anonymous = "" if r.anonymous is None else f", {r.anonymous:,} known to pass the models"
    rows.append(("nodes", f"{r.nodes:,} in the lattice, {r.evaluated:,} evaluated{anonymous}"))
    if r.p is not None:
        rows.append(
            (
                "risk measured",
                f"{r.measured:,} node{'' if r.measured == 1 else 's'} ({r.subsets_scanned:,} subset scans)",
            )
        )
    rows.append(("optimal", "yes" if r.optimal else "no (a heuristic search: the best node found)"))
    rows.append(("time", f"{r.seconds:.2f} s"))
    return rows


def _local_rows(r: AnonymizeResult) -> list[tuple[str, str]]:
    v = r.local
    if v is None:
        return []
    c = r.chosen
    glob = "—" if c is None else f"{c.suppressed:,} suppressed, k = {c.k:,}, T̂ = {dash(c.risk)}"
    loc = f"{v.modified:,} records generalized, {v.singletons:,} singletons, k = {v.k:,}, T̂ = {dash(v.risk)}"
    return [
        ("global recoding", glob),
        ("local recoding (QID singletons only)", loc + ("" if v.meets else f", misses {_missed(r)}")),
    ]


def _missed(r: AnonymizeResult) -> str:
    """Which of the asked targets the local variant misses (its ``meets`` checks these three)."""
    v, m = r.local, r.models
    assert v is not None
    out = []
    if m.get("k") and v.k < m["k"]:
        out.append(f"k = {m['k']}")
    if m.get("no_singletons") and v.singletons:
        out.append("no singletons")
    below = m.get("risk_below")
    if below is not None and (v.risk is None or v.risk > below):
        out.append(f"T̂ ≤ {dash(below)}")
    return " and ".join(out) or "the targets"


def _text(r: AnonymizeResult) -> list[str]:
    lines = [f"Anonymization of {r.table or r.source} ({r.engine}, {r.rows:,} rows, {r.seconds:.2f} s)", ""]
    if r.chosen is not None:
        width = max(len(c) for c in r.qi)
        lines.append("  chosen levels")
        for c, label, level in zip(r.qi, r.labels.values(), r.chosen.levels):
            lines.append(f"    {c:<{width}}  {level}  {label}")
        lines.append("")
    facts = _facts(r) + _local_rows(r)
    width = max(len(k) for k, _ in facts)
    lines += [f"  {k:<{width}}  {v}" for k, v in facts]
    if len(r.frontier) > 1:
        lines += ["", f"  frontier of {METRIC_NAMES.get(r.metric, r.metric)} against T̂ (the nodes measured)"]
        table = [[*r.qi, r.metric, "T̂"]]
        table += [[*(str(v) for v in n.levels), dash(n.scores[r.metric], ".10g"), dash(n.risk)] for n in r.frontier]
        widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
        lines += ["    " + "  ".join(cell.rjust(w) for cell, w in zip(row, widths)) for row in table]
    return lines


@renders("qar_sql.anonymization.outcome.AnonymizeResult", "text")
def render_anonymize(r: AnonymizeResult, fmt: str) -> str:
    return render_result(_text(r), r.warnings)


@renders("qar_sql.anonymization.outcome.AnonymizeResult", "sql")
def render_anonymize_sql(r: AnonymizeResult, fmt: str) -> str:
    """The release as one SELECT (a view the user may create; qar creates nothing)."""
    if not r.release_sql:
        return "-- no node meets every target: there is no release to select\n"
    return r.release_sql
