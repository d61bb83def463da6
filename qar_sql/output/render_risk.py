"""``qar risk`` in text and Markdown (that of its JSON, :meth:`~qar_sql.measures.classic.RiskResult.to_dict`)
and ``qar records --by suda`` in text. No database code here."""

from __future__ import annotations

from typing import Any

from qar_sql.errors import shown
from qar_sql.measures.classic import QIRisk, RiskResult, SudaResult
from qar_sql.output.readable_numbers import dash
from qar_sql.output.registry import renders
from qar_sql.user_text import one_line


def _pitman_params(pu) -> str:
    """ " (θ = …, α = …)" of the valid-space Pitman fit, or nothing when there is none."""
    if pu.pitman_theta is None or pu.pitman_alpha is None:
        return ""
    return f" (θ = {pu.pitman_theta:.6g}, α = {pu.pitman_alpha:.6g})"


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.2f}%"


def _lines(q: QIRisk, r: RiskResult) -> list[tuple[str, str]]:
    rows = r.rows
    out = [
        (
            "classes",
            f"{q.classes:,}" + (f" (Σ fk = {q.fk_sum:,} > {rows:,} rows: classes overlap)" if q.fk_sum > rows else ""),
        ),
        ("sample uniques", f"{q.sample_uniques:,} ({_pct(q.sample_uniques / rows if rows else None)})"),
        ("records with fk < 2, 3, 5", ", ".join(f"{q.violations[k]:,}" for k in ("2", "3", "5"))),
        ("expected re-identifications", f"{q.expected_reidentifications:,.2f} (global risk {_pct(q.global_risk)})"),
        (
            "prosecutor risk",
            f"highest {dash(q.prosecutor.highest, '.4g')}, average {dash(q.prosecutor.average, '.4g')}, "
            f"records above {r.risk_threshold:g}: {_pct(q.prosecutor.records_at_risk)}",
        ),
    ]
    if r.weight and q.individual_risk is not None:
        ir = q.individual_risk
        out.append(
            (
                "individual risk (Benedetti–Franconi)",
                f"highest {dash(ir.highest, '.4g')}, records above {r.risk_threshold:g}: {_pct(ir.records_at_risk)}",
            )
        )
    if r.weight:
        out += [
            (
                "journalist risk",
                f"highest {dash(q.journalist.highest, '.4g')}, average {dash(q.journalist.average, '.4g')}, "
                f"records above {r.risk_threshold:g}: {_pct(q.journalist.records_at_risk)}",
            ),
            ("marketer risk", dash(q.marketer, ".4g")),
        ]
    pu = q.population_uniqueness
    if pu is not None:
        out.append(
            (
                f"population uniques (N = {_people(pu.population)})",
                f"Pitman {_pct(pu.pitman)}{_pitman_params(pu)}, Zayatz {_pct(pu.zayatz)}, SNB {_pct(pu.snb)}; "
                f"Dankar ({pu.dankar_model}) {_pct(pu.dankar)}; ARX's Pitman root {_pct(pu.pitman_arx)}",
            )
        )
    ld = q.l_diversity
    if ld is not None:
        out.append(
            (
                "l-diversity",
                f"distinct {dash(ld.distinct, '.4g')}, entropy {dash(ld.entropy, '.4g')}, recursive (2, l) {dash(ld.recursive_c2, '.4g')}; "
                f"records in classes with l < {ld.threshold}: {ld.records_below:,}",
            )
        )
        out.append(
            (
                "t-closeness",
                f"{dash(q.t_closeness, '.4g')}; records in classes above t = {r.t_threshold:g}: "
                f"{q.t_closeness_records_above or 0:,}",
            )
        )
    return out


def risk_text(r: RiskResult, top: int = 10) -> str:
    head = [
        one_line(
            f"Classic risk measures of {r.source}" + (f" (table {r.table})" if r.table and r.table != r.source else "")
        ),
        "",
        f"  rows                {r.rows:,}",
        f"  key columns         {len(r.columns)}: {', '.join(r.columns)}",
        f"  quasi-identifiers   {len(r.qis)} (every set of p = {r.p} columns)",
        f"  missing values      {r.missing}"
        + (" (NULL matches any value, as sdcMicro)" if r.missing == "wildcard" else " (NULL is a value of its own)"),
    ]
    if r.weight:
        head.append(f"  weight              {r.weight}")
    if r.sensitive:
        head.append(f"  sensitive           {', '.join(r.sensitive)}")
    if r.population:
        head.append(f"  population          {_people(r.population)} (sampling fraction {r.sampling_fraction:.4g})")
    out = head + [""]
    shown = r.riskiest(top)
    if len(r.qis) > 1:
        out.append(f"The {len(shown)} quasi-identifiers with the most expected re-identifications:")
        out.append("")
    for q in shown:
        if len(r.qis) > 1:
            out.append(f"{', '.join(q.columns)}")
        width = max(len(label) for label, _ in _lines(q, r))
        out += [f"  {label:<{width}}  {value}" for label, value in _lines(q, r)]
        out.append("")
    if r.per_record:
        out.append(f"Per-record values written to {r.per_record}.")
    out += [f"Warning: {w}" for w in r.warnings]
    out += [f"Note: {n}" for n in r.column_notes]
    return "\n".join(out).rstrip() + "\n"


def _people(n: int) -> str:
    """N with thousands separators, or in scientific notation beyond 15 digits (N = n/f from a
    tiny fraction is a float's digits, not a count anyone wrote)."""
    return shown(n) if n >= 10**15 else f"{n:,}"


@renders(RiskResult, "text")
def render_risk(r: RiskResult, fmt: str, *, top: int = 10) -> str:
    return risk_text(r, top)


def suda_text(s: SudaResult, keys: Any, key_names, order, top: int) -> str:
    n = s.score.size
    out = [
        f"SUDA of {n:,} records on {len(s.columns)} key columns ({', '.join(s.columns)}), "
        f"MSUs up to {s.max_size} columns, missing values: {s.missing}",
        "",
        f"- records with a minimal sample unique: {int((s.score > 0).sum()):,}",
        f"- unique on all key columns: {s.uniques:,}; in classes of two: {s.pair_records:,} "
        f"(DIS with sampling fraction {s.dis_fraction:g})",
        "",
        f"  {'/'.join(key_names):<20}{'SUDA':>12}{'DIS-SUDA':>12}  MSUs by size",
    ]
    for r in order[:top]:
        key = ", ".join(one_line(str(v)) for v in keys[r])
        msus = " ".join(str(int(x)) for x in s.msu_counts[r])
        out.append(f"  {key:<20}{s.score[r]:>12g}{s.dis_score[r]:>12.6f}  {msus}")
    return "\n".join(out) + "\n"
