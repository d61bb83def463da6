"""``qar whatif``'s result as text (its JSON, docs/treatments.md, is
:meth:`qar_sql.treat.whatif.WhatIfResult.to_dict`, and its Markdown that JSON's)."""

from __future__ import annotations

from typing import Any

from qar_sql.output.readable_numbers import dash
from qar_sql.output.registry import renders
from qar_sql.output.render_audit import render_result

# output/ is below treat/ (CONTRIBUTING.md's flow), so the result types are not imported here:
# a WhatIfResult (qar_sql.treat.whatif) is read by its attributes.
WhatIfResult = Any
Scenario = Any


def _extra(s: Scenario) -> list[str]:
    """true S (share of singletons left with their original QID), the largest PRAM posterior
    odds, IL1s and the utility score, as table cells."""
    il = s.information_loss
    share = s.true_singleton_share if s.treatments else None
    return [
        dash(None if share is None else 100 * share, ".1f") + ("%" if share is not None else ""),
        dash(s.posterior_odds_max, ".3f"),
        dash(il.il1s if il else None, ".4g"),
        dash(il.utility if il else None, ".3f"),
    ]


@renders("qar_sql.treat.whatif.WhatIfResult", "text")
def render_whatif(r: WhatIfResult, fmt: str) -> str:
    return render_result(_whatif_text(r), r.warnings)


def _risk_label(r: WhatIfResult) -> str:
    return f"T̂({r.p}, {r.alpha:g})"


def _whatif_text(r: WhatIfResult) -> list[str]:
    has_risk, tlabel, name = bool(r.audit_columns), _risk_label(r), r.table or r.source
    width = max(len(s.name) for s in r.scenarios)
    lines = [
        f"What-if treatments on {name} ({r.engine}, {r.seconds:.2f} s)",
        "",
        f"  QID        {', '.join(r.qid)}",
        f"  rows       {r.original.rows:,}" + (" (rows with NULL in the QID dropped)" if r.drop_null else ""),
    ]
    if has_risk:
        lines.append(f"  risk       {tlabel} over {len(r.audit_columns)} columns; before: {dash(r.risk_before)}")
    lines += [
        "",
        f"  {'treatments':<{width}}  {'#S':>8}  {'%S':>7}  {'MR':>9}  {'DV':>9}  {'min class':>9}"
        + (f"  {tlabel:>12}" if has_risk else "")
        + f"  {'true S':>7}  {'max odds':>8}  {'IL1s':>7}  {'utility':>7}",
    ]
    for s in r.scenarios:
        lines.append(
            f"  {s.name:<{width}}  {s.singletons:>8,}  {100 * s.singleton_share:>6.2f}%  {s.modified_rows:>9,}  "
            f"{s.distinct:>9,}  {s.min_class_size:>9,}"
            + (f"  {dash(s.risk):>12}" if has_risk else "")
            + "  {:>7}  {:>8}  {:>7}  {:>7}".format(*_extra(s))
        )
    return lines
