"""The audit for people (text, Markdown; its JSON is :meth:`qar_sql.results.AuditResult.to_dict`)
and the pieces every command's text and Markdown share. No database code here."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from qar_sql.output.registry import renders
from qar_sql.results import AuditResult, QIStats, UniquenessResult
from qar_sql.stats.evt import SMALL_TAIL
from qar_sql.stats.interval import SMALL_TAIL_NOTE


def interval_rows(fmt: str, r: AuditResult) -> list[str]:
    """The rows under T̂ in a text or Markdown report: its tail-fit band beside the number of
    exceedances (Markdown adds those of u, ξ and β) and, in plain words, what a small tail means
    (fewer than 10 exceedances). One function so both formats say the same."""
    f, iv = r.fit, r.intervals
    if f is None:
        return []
    n = f.n_exceedances
    markdown = fmt == "markdown"
    cells: list[tuple[str, str]] = []  # (label, text)
    if iv is not None:
        cells.append(
            (
                "tail-fit band of T̂" if markdown else "tail-fit band",
                f"{iv.risk.low:.4g} to {iv.risk.high:.4g} (BCa bootstrap over the QIs' θ, level {iv.risk.level:g}, "
                f"{iv.resamples:,} resamples; from {n} exceedance{'s' if n != 1 else ''})",
            )
        )
        if markdown:
            cells += [
                (f"tail-fit band of {name}", f"{getattr(iv, key).low:.4g} to {getattr(iv, key).high:.4g}")
                for name, key in (("u", "u"), ("ξ", "xi"), ("β", "beta"))
            ]
    if n < SMALL_TAIL:
        cells.append(("caution", SMALL_TAIL_NOTE.format(n=n, s="s" if n != 1 else "")))
    if markdown:
        return [f"| {label} | {md_escape(text)} |" for label, text in cells]
    return [f"  {label:<19} {text}" for label, text in cells]


def percent(x: float | None) -> str:
    """A probability for people: percent to 3 significant digits, scientific when tiny."""
    if x is None:
        return "—"
    if x == 0:
        return "0"
    return f"{100 * x:.3g}%" if x >= 1e-4 else f"{x:.2e}"


def _uniqueness_rows(u: UniquenessResult, top: int) -> list[tuple[str, str, str, str]]:
    return [(", ".join(q.columns), f"{q.kappa:.4f}", percent(q.pi_exact), f"{q.k50:,}") for q in u.qis[:top]]


def _g(x: float | None, digits: int = 6) -> str:
    return "—" if x is None else f"{x:.{digits}g}"


def audit_text(r: AuditResult, top: int = 10) -> str:
    f = r.fit
    name = r.table or r.source
    lines = [
        f"QaR audit of {name} ({r.engine} {r.engine_version}, {r.seconds:.2f} s)",
        "",
        f"  rows                {r.rows:,}",
        f"  columns             {len(r.columns)}: {', '.join(r.columns)}",
        f"  quasi-identifiers   {r.n_qi:,} (every set of p = {r.p} columns)",
    ]
    if r.n_pruned:
        lines.append(f"  grouped             {pruned_line(r)}")
    if f:
        lines += [
            f"  risk T̂({r.p}, {r.alpha:g})     {f.risk:.10g}",
            *interval_rows("text", r),
            f"  threshold u         {f.u:.10g} (the {1 - r.pi_u:g} quantile of θ)",
            f"  exceedances         {f.n_exceedances}",
            f"  GPD fit             ξ = {f.xi:.6g}, β = {f.beta:.6g} (PWM, {r.pwm})",
        ]
        if r.intervals is not None:
            iv = r.intervals
            lines.append(
                f"  {'tail-fit bands':<19} u {iv.u.low:.4g} to {iv.u.high:.4g}, "
                f"ξ {iv.xi.low:.4g} to {iv.xi.high:.4g}, β {iv.beta.low:.4g} to {iv.beta.high:.4g}"
            )
    else:
        lines += [f"  risk T̂({r.p}, {r.alpha:g})     undefined: no tail (see warnings)"]
    lines += [
        f"  smallest class      {smallest_class(r)} (k-anonymity over all QIs)",
        f"  keys (θ = 1)        {r.n_keys}",
        "",
        f"The {min(top, r.n_qi)} riskiest quasi-identifiers:",
        f"  {'θ':>10}  {'singletons':>10}  {'min class':>9}  {'< k=' + str(r.k):>8}  columns",
    ]
    for q in r.riskiest(top):
        lines.append(
            f"  {q.theta:>10.6f}  {q.singletons:>10,}  {q.min_class_size:>9,}  "
            f"{q.records_below(r.k):>8,}  {', '.join(q.columns)}"
        )
    if r.uniqueness is not None:
        u = r.uniqueness
        lines += ["", f"Uniqueness of groups of k = {u.group_size} (riskiest QIs; qar uniqueness for more):"]
        lines.append(f"  {'kappa':>8}  {'pi_exact':>9}  {'k50':>6}  columns")
        lines += [f"  {kp:>8}  {pe:>9}  {k50:>6}  {cols}" for cols, kp, pe, k50 in _uniqueness_rows(u, top)]
    lines += sensitivity_rows("text", r)
    if f:
        lines += ["", verdict(r, f.risk)]
    lines += section("text", "Warnings", r.warnings) + section("text", "Notes", r.column_notes)
    return "\n".join(lines) + "\n"


def sensitivity_rows(fmt: str, r: AuditResult) -> list[str]:
    """The unique measure's T̂ (where computed besides the run's own) and how T̂ moves: without
    each column (a small table: column, T̂ without it, change), at p ± 1 and on row subsamples,
    where computed. One function so text and Markdown say the same."""
    markdown, out = fmt == "markdown", []
    if r.measure != "unique" and r.unique is not None:
        value = "no tail" if r.unique.risk is None else f"{r.unique.risk:.4g}"
        label = f"T̂({r.p}, {r.alpha:g}) of the unique measure (S/L)"
        out += ["", f"{label}: {value}"] if not markdown else ["", f"**{label}**: {value}"]
    loco = r.leave_one_column_out
    reasons = {c.reason for c in loco or ()}
    if loco and r.risk is not None and len(reasons) == 1 and None not in reasons:  # one reason for all
        line = f"T̂ without each column: none ({loco[0].reason})"
        out += ["", line if not markdown else md_escape(line)]
    elif loco and r.risk is not None:
        title = f"T̂ without each column (the {loco[0].n_qi:,} QIs that avoid it; same α, π_u)"
        if markdown:
            out += ["", f"### {title}", "", "| column | T̂ without it | change |", "|---|---:|---:|"]
        else:
            out += ["", f"{title}:", f"  {'T̂ without':>12}  {'change':>9}  column"]
        for c in sorted(loco, key=lambda c: (c.risk is None, c.risk if c.risk is not None else 0.0)):
            value = "—" if c.risk is None else f"{c.risk:.4g}"
            change = "" if c.risk is None else f"{c.risk - r.risk:+.4g}"
            why = f" ({c.reason})" if c.reason else ""
            if markdown:
                out.append(f"| `{md_escape(c.column)}`{md_escape(why)} | {value} | {change} |")
            else:
                out.append(f"  {value:>12}  {change:>9}  {c.column}{why}")
    rows: list[tuple[str, str]] = []
    if r.risk_by_p:
        rows += [(f"T̂ at p = {q}", "—" if v is None else f"{v:.4g}") for q, v in r.risk_by_p]
    if r.risk_by_rows:
        rows += [
            (f"T̂ on {x.rows:,} rows ({100 * x.share:g}%)", "no tail" if x.risk is None else f"{x.risk:.4g}")
            for x in r.risk_by_rows
        ]
    if rows and markdown:
        out += ["", "| sensitivity | T̂ |", "|---|---:|"] + [f"| {a} | {b} |" for a, b in rows]
    elif rows:
        out += ["", "Sensitivity:"] + [f"  {a:<28} {b}" for a, b in rows]
    return out


def pruned_line(r: AuditResult) -> str:
    """How many QIs a pruned audit grouped, and why the rest need not be."""
    return (
        f"{r.n_grouped:,} of {r.n_qi:,} QIs (and {r.n_subsets:,} smaller ones for the bounds); "
        f"{r.n_pruned:,} pruned: below the tail by their bounds (--prune off counts them all)"
    )


def smallest_class(r: AuditResult) -> str:
    """The smallest class, with "at most" where pruned QIs leave it a bound."""
    return f"at most {r.min_class_size}" if "min_class_size" in r.bounded else str(r.min_class_size)


def most_unique(r: AuditResult) -> tuple[QIStats | None, bool]:
    """The QI with the most records unique on it (S, ties: QI order) among those grouped, and
    whether a pruned QI (known only by a lower bound on S) might have more: then the count is a
    lower bound ("at least")."""
    grouped = [q for q in r.qis if q.bounds is None]
    best = max(grouped, key=lambda q: (q.singletons, -q.index), default=None)
    top = best.singletons if best else 0
    return best, any(q.bounds is not None and (q.theta_bounds or (0, 1))[1] * r.rows > top for q in r.qis)


def people_line(r: AuditResult) -> str | None:
    """T̂'s neighbour in people: the records unique on the riskiest QI (S/L, the largest over the
    QIs), since θ is not a share of people."""
    q, bound = most_unique(r)
    if q is None or not r.rows:
        return None
    return (
        f"In people: {'at least ' if bound else ''}{q.singletons:,} records ({100 * q.singletons / r.rows:.3g}%) "
        f"are unique on the riskiest quasi-identifier ({', '.join(q.columns)}); qar records counts those "
        "unique on at least one."
    )


def verdict(r: AuditResult, risk: float) -> str:
    """The plain-language reading of T̂(p, α) = ``risk`` (README, "A worked example"); only
    said when the tail was fitted, so ``risk`` is a number. θ = H/L counts distinct value
    combinations per record, and T̂ is a level of θ, not a share of people; of the unique measure
    (θ = S/L) it is a share of records unique on the QI."""
    band = (
        " The tail-fit band shows how much that extrapolation moves if the exceedances were other draws "
        "from the same tail; it is not a confidence interval (it does not cover the choice of columns or "
        "the row count)."
        if r.intervals is not None
        else ""
    )
    people = people_line(r)
    if r.measure == "unique":
        return (
            f"Read it as: an attacker who knows {r.p} of these columns singles out (finds unique) more than "
            f"{100 * risk:.3g}% of the records with probability α = {100 * r.alpha:g}%, extrapolated from the "
            "tail of the largest θ (θ = records unique on the QI / rows)."
            f"{band}" + (f" {people}" if people else "")
        )
    return (
        f"Read it as: T̂ = {risk:.3g} is the level of θ that a quasi-identifier made of {r.p} of these columns "
        f"exceeds with probability α = {100 * r.alpha:g}%, extrapolated from the tail of the largest θ; "
        "θ = distinct value combinations / rows, a count per record, not a number of people."
        f"{band}" + (f" {people}" if people else "")
    )


def md_escape(text: str) -> str:
    return text.replace("|", "\\|")


def section(fmt: str, title: str, items: Sequence[str]) -> list[str]:
    """A closing list of a text or Markdown report (warnings, notes); nothing when it is empty."""
    if not items:
        return []
    if fmt == "markdown":
        return ["", f"**{title}**", ""] + [f"- {md_escape(x)}" for x in items]
    return ["", f"{title}:"] + [f"  - {x}" for x in items]


def render_result(
    fmt: str, markdown: Callable[[], list[str]], text: Callable[[], list[str]], warnings: Sequence[str] = ()
) -> str:
    """One result's Markdown or text lines, closed by its warnings (the shape every ``render_*``
    of a command shares)."""
    lines = markdown() if fmt == "markdown" else text()
    return "\n".join(lines + section(fmt, "Warnings", warnings)) + "\n"


def audit_markdown(r: AuditResult, top: int = 10) -> str:
    f = r.fit
    name = md_escape(r.table or r.source)
    lines = [
        f"## QaR audit of `{name}`",
        "",
        "| measure | value |",
        "|---|---|",
        f"| rows | {r.rows:,} |",
        f"| columns | {len(r.columns)} |",
        f"| quasi-identifiers (p = {r.p}) | {r.n_qi:,} |",
        *([f"| grouped | {pruned_line(r)} |"] if r.n_pruned else []),
        f"| risk T̂({r.p}, {r.alpha:g}) | {'undefined (no tail)' if not f else f'{f.risk:.10g}'} |",
        *interval_rows("markdown", r),
        f"| threshold u | {_g(f.u if f else None, 10)} |",
        f"| exceedances | {f.n_exceedances if f else 0} |",
        f"| ξ, β | {_g(f.xi if f else None)}, {_g(f.beta if f else None)} |",
        f"| smallest class | {smallest_class(r)} |",
        f"| keys (θ = 1) | {r.n_keys} |",
        "",
        f"### The {min(top, r.n_qi)} riskiest quasi-identifiers",
        "",
        f"| θ | singletons | min class | records in classes < {r.k} | columns |",
        "|---:|---:|---:|---:|---|",
    ]
    for q in r.riskiest(top):
        cols = ", ".join(f"`{md_escape(c)}`" for c in q.columns)
        lines.append(f"| {q.theta:.6f} | {q.singletons:,} | {q.min_class_size:,} | {q.records_below(r.k):,} | {cols} |")
    if r.uniqueness is not None:
        u = r.uniqueness
        lines += ["", f"### Uniqueness of groups of k = {u.group_size}", "", "| κ | π exact | k50 | columns |"]
        lines += ["|---:|---:|---:|---|"]
        lines += [f"| {kp} | {pe} | {k50} | {md_escape(cols)} |" for cols, kp, pe, k50 in _uniqueness_rows(u, top)]
    lines += sensitivity_rows("markdown", r)
    lines += section("markdown", "Warnings", r.warnings) + section("markdown", "Notes", r.column_notes)
    return "\n".join(lines) + "\n"


@renders(AuditResult, "text", "markdown")
def render_audit(r: AuditResult, fmt: str, *, top: int = 10) -> str:
    return audit_markdown(r, top) if fmt == "markdown" else audit_text(r, top)
