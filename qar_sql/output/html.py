"""The HTML report: one self-contained, offline file rendered from ``templates/report/``.

Rendering reads only result objects (:class:`ReportInputs`, filled by :mod:`qar_sql.commands.report`), never the
database, so a stored run can be rendered again. Sections are a registry (:data:`SECTIONS`): each
has a builder that returns its template context, or None when its input is absent — a section is
in the page iff its result object is given.

Every number shown is also in the JSON block at the end; each shown number carries
``data-qar="path.in.json"`` so tests (and readers) can check the page against the JSON.
"""

from __future__ import annotations

import functools
import json
import platform
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import jinja2
import numpy as np
from markupsafe import Markup, escape

from qar_sql.engines.render import templates_dir
from qar_sql.errors import UsageError
from qar_sql.measures.classic import RiskResult
from qar_sql.output import figures, readable_numbers
from qar_sql.output.render import FORMATS
from qar_sql.output.render_anonymize import METRIC_NAMES, models_text
from qar_sql.output.render_audit import most_unique, small_tail
from qar_sql.output.render_uniqueness import curve
from qar_sql.output.report_md import html_to_markdown
from qar_sql.results import AuditResult, CompareResult, Tabular, UniquenessResult, json_number, to_plain
from qar_sql.stats import interval
from qar_sql.stats.evt import SMALL_TAIL
from qar_sql.user_text import html_page, html_text
from qar_sql.version import __version__

#: What ``--release-kind`` accepts: an internal report holds per-record tables; an external one
#: (handed outside the team) leaves out every record, key, position and value combination.
RELEASE_KINDS = ("internal", "external")


@dataclass(frozen=True)
class RecordRow:
    """One of the top records: its position (1-based, in key order) and, with a secret, its
    hashed key. The raw key never reaches the report."""

    position: int  # in a stored run's records: the rank
    hashed_key: str | None
    dt: float | None
    u_plus: float | None  # None: not recorded (a report rebuilt from a results store)
    u_star: float | None
    n_unique: int | None


@dataclass(frozen=True)
class RecordsSummary:
    key: tuple[str, ...]
    hashed: bool
    top: tuple[RecordRow, ...]
    share_unique_on_no_qi: float | None
    warnings: tuple[str, ...] = ()
    stored: bool = False  # the top records a run recorded in a results store: rank, hashed key, DT
    unique_on_no_qi: int | None = None  # records unique on no QI (None: not recorded)


@dataclass(frozen=True, repr=False)
class ReportInputs(Tabular):
    """Everything a report shows: a section is in the report iff its result object is here."""

    audit: AuditResult | None  # None: a report of another command's result alone (whatif, compare, …)
    #: The risk the verdict compares T̂ with, only when the user set one (None: no verdict at all),
    #: and where it came from as shown ("--fail-above (command line)", "$QAR_FAIL_ABOVE (config)", …).
    threshold: float | None = None
    threshold_source: str | None = None
    records: RecordsSummary | None = None
    elimination: Any = None  # qar_sql.ranking.eliminate.Elimination
    whatif: Any = None  # qar_sql.treat.whatif.WhatIfResult
    history: Any = None  # qar_sql.compliance.history.History
    compare: CompareResult | None = None  # original vs treated (qar compare)
    uniqueness: UniquenessResult | None = None  # qar uniqueness; else the audit's own (audit --group-size)
    classic: RiskResult | None = None  # the classic measures of qar risk
    anonymize: Any = None  # qar_sql.anonymization.outcome.AnonymizeResult (qar report --anonymize)
    stored_run: str | None = None  # the run id when rebuilt from a results store
    sql: str | None = None
    parameters: Mapping[str, Any] = field(default_factory=dict)
    command: str | None = None  # secrets masked
    created: str = ""
    title: str | None = None  # the release context (--title, --owner, --purpose, --release-kind)
    owner: str | None = None
    purpose: str | None = None
    release_kind: str = "internal"  # "external": no record, key, position or value combination

    def to_html(self) -> str:
        """The report as one self-contained HTML document."""
        return render_html(self)

    # A notebook shows the audit's view (the whole report, figures and all, is to_html()).
    def table_columns(self, data: Mapping[str, Any] | None = None) -> dict[str, list]:
        """The audit's QIs (:meth:`AuditResult.table_columns`); empty without an audit."""
        return self.audit.table_columns() if self.audit is not None else {}

    def summary_line(self) -> str:
        names = (
            "audit",
            "records",
            "elimination",
            "whatif",
            "history",
            "compare",
            "uniqueness",
            "classic",
            "anonymize",
        )
        sections = ", ".join(name for name in names if getattr(self, name) is not None)
        return f"report of {self.subject}; sections: {sections} (the page: .to_html())"

    def _repr_html_(self) -> str:
        head = self.audit._repr_html_() if self.audit is not None else f"<p>{html_text(self.summary_line())}</p>"
        return head + "<p>The whole report: <code>.to_html()</code></p>"

    @property
    def subject(self) -> str:
        """What the report is about: the table (else the source) of the first result given."""
        for r in (self.audit, self.classic, self.uniqueness, self.whatif, self.anonymize):
            if r is not None:
                return r.table or r.source
        if self.compare is not None:
            return f"{self.compare.original} vs {self.compare.treated}"
        return "no result"


@dataclass(frozen=True)
class Section:
    name: str  # the element id and the key of its numbers in the JSON block
    title: str
    template: str  # under templates/report/sections/
    build: Callable[[ReportInputs, dict], dict | None]  # (inputs, numbers) → context, or None: absent


def fmt(x: Any, kind: str = "auto") -> str:
    """How a number is shown (:func:`qar_sql.output.readable_numbers.show`): counts with separators,
    shares (``kind="share"``) as percentages, other reals to four significant digits, None as a
    dash; the full value is in the JSON block and the number's tooltip."""
    return readable_numbers.show(x, kind)


def lookup(numbers: Mapping[str, Any], path: str) -> Any:
    """The value at a dotted path (list indexes as numbers) of the JSON block."""
    cur: Any = numbers
    for part in path.split("."):
        cur = cur[int(part)] if isinstance(cur, list) else cur[part]
    return cur


# --------------------------------------------------------------------------------------------
# Section builders: (inputs, numbers) → template context; each writes its numbers into `numbers`.


def driving_columns(a: AuditResult, top: int = 5) -> list[dict[str, Any]]:
    """The columns that drive T̂: how often each column is in the QIs of the tail (θ > u, the
    exceedances that decide T̂; without a fit, the 10 riskiest QIs), most first (ties: column
    order); the ``top`` first."""
    f = a.fit
    if f is not None:
        qis = [q for q in a.qis if not q.pruned and q.theta > f.u]
    else:
        qis = [q for q in a.riskiest(10) if not q.pruned]
    counts = {c: 0 for c in a.columns}
    for q in qis:
        for c in q.columns:
            counts[c] += 1
    ranked = sorted((c for c in a.columns if counts[c]), key=lambda c: (-counts[c], a.columns.index(c)))
    return [{"column": c, "qis": counts[c], "of": len(qis)} for c in ranked[:top]]


def first_page(inp: ReportInputs) -> dict[str, Any]:
    """The numbers of the first page beside T̂, in people (the ``summary`` block of the JSON): the
    records unique on at least one QI (exact with the records pass, else None; always the
    records unique on the worst QI, a lower bound), the records in classes below k on the worst
    QI, the expected re-identifications on the worst QI (the classic measures' when present,
    else the number of classes: Σ 1/fk), T̂ with its tail-fit band, the records unique on the
    riskiest QI (S and S/L, the largest over the QIs) and the columns that drive it."""
    a = inp.audit
    assert a is not None
    grouped = [q for q in a.qis if not q.pruned]
    out: dict[str, Any] = {"rows": a.rows}
    r = inp.records
    unique = None
    if r is not None and r.unique_on_no_qi is not None:
        unique = a.rows - r.unique_on_no_qi
    elif r is not None and r.share_unique_on_no_qi is not None:
        unique = a.rows - round(r.share_unique_on_no_qi * a.rows)
    out["records_unique_on_some_qi"] = unique
    out["share_unique_on_some_qi"] = None if unique is None or not a.rows else unique / a.rows
    worst_unique, bound = most_unique(a)
    out["records_unique_on_worst_qi"] = worst_unique.singletons if worst_unique else None
    out["worst_unique_qi"] = list(worst_unique.columns) if worst_unique else None
    out["share_unique_on_worst_qi"] = None if worst_unique is None or not a.rows else worst_unique.singletons / a.rows
    out["worst_unique_is_bound"] = bound
    below = max(grouped, key=lambda q: (q.records_below(a.k), -q.index), default=None)
    histograms = any(q.class_sizes for q in grouped)
    out["records_below_k"] = below.records_below(a.k) if below is not None and histograms else None
    out["share_below_k"] = None if out["records_below_k"] is None or not a.rows else out["records_below_k"] / a.rows
    out["records_below_k_qi"] = list(below.columns) if below is not None and histograms else None
    if inp.classic is not None and inp.classic.qis:
        cq = max(inp.classic.qis, key=lambda q: (q.expected_reidentifications, -q.index))
        out["expected_reidentifications"] = json_number(float(cq.expected_reidentifications))
        out["expected_reidentifications_qi"] = list(cq.columns)
        out["expected_reidentifications_from"] = "classic"
    else:
        most = max(grouped, key=lambda q: (q.distinct, -q.index), default=None)
        out["expected_reidentifications"] = float(most.distinct) if most else None
        out["expected_reidentifications_qi"] = list(most.columns) if most else None
        out["expected_reidentifications_from"] = "classes"
    e = out["expected_reidentifications"]
    out["share_reidentified"] = None if e is None or not a.rows else e / a.rows
    out["driving_columns"] = driving_columns(a)
    n = a.fit.n_exceedances if a.fit else 0
    out["n_exceedances"] = n
    out["few_exceedances"] = a.fit is not None and n < interval.FEW_EXCEEDANCES
    out["small_tail"] = a.fit is not None and n < SMALL_TAIL
    return out


def _summary(inp: ReportInputs, numbers: dict) -> dict:
    a = inp.audit
    risk = a.risk if a is not None else None
    limit = inp.threshold
    given = limit is not None
    verdict = None if risk is None or limit is None else ("above" if risk > limit else "at or below")
    numbers["summary"] = {
        "threshold": inp.threshold,
        "threshold_source": inp.threshold_source if given else None,
        "verdict": verdict,
        "created": inp.created,
        "qar_sql_version": __version__,
        "python_version": platform.python_version(),
        "release_kind": inp.release_kind,
        "title": inp.title,
        "owner": inp.owner,
        "purpose": inp.purpose,
    }
    page = None
    if a is not None:
        page = first_page(inp)
        numbers["summary"] |= page
    n = page["n_exceedances"] if page else 0
    caution = small_tail(n) if page and page["small_tail"] else None
    few = interval.exceedance_note(n) if page and page["few_exceedances"] else None
    return {"verdict": verdict, "page": page, "caution": caution, "few": few}


def _theta(inp: ReportInputs, numbers: dict) -> dict | None:
    a = inp.audit
    if a is None:
        return None
    f = a.fit
    fig_theta = fig_diag = None
    exc_n = 0
    if figures.available():
        theta = a.theta
        over = f"the {a.n_qi} quasi-identifiers"
        if a.n_pruned:  # pruned QIs have no θ, only bounds below the tail: plot the grouped ones
            theta = theta[~np.isnan(theta)]
            over = f"the {a.n_grouped} grouped quasi-identifiers ({a.n_pruned} more pruned, all below u)"
        fig_theta = figures.theta_distribution(
            theta,
            a.rows,
            f.u if f else None,
            f.xi if f else None,
            f.beta if f else None,
            a.pi_u,
            f"Histogram of θ over {over}"
            + (f", threshold u = {f.u:.4g} and the fitted GPD tail above it" if f else ""),
        )
        if f:
            exc = figures.exceedances(theta, a.rows, f.u)
            exc_n = int(exc.size)
            if exc.size >= 3:
                fig_diag = figures.qq(
                    exc,
                    f.u,
                    f.xi,
                    f.beta,
                    f"QQ plot of the {exc.size} exceedances of u against the fitted GPD; "
                    "points near the diagonal mean the tail model fits",
                )
    return {"f": f, "fig_theta": fig_theta, "fig_diag": fig_diag, "exc_n": exc_n, "figures": figures.available()}


def _sensitivity(inp: ReportInputs, numbers: dict) -> dict | None:
    """The unique measure's T̂ beside T̂, and T̂ without each column (largest drop first)."""
    a = inp.audit
    if a is None or a.fit is None or (a.unique is None and not a.leave_one_column_out):
        return None
    loco = sorted(a.leave_one_column_out or (), key=lambda c: (c.risk is None, c.risk or 0.0))
    return {"unique": a.unique, "distinct": a.risk if a.measure == "distinct" else None, "loco": loco}


def _qis(inp: ReportInputs, numbers: dict) -> dict | None:
    a = inp.audit
    if a is None:
        return None
    order = {q.index: i for i, q in enumerate(a.qis)}
    return {"top": [(order[q.index], q) for q in a.riskiest(10)]}


def _kanon(inp: ReportInputs, numbers: dict) -> dict | None:
    a = inp.audit
    if a is None:
        return None
    order = {q.index: i for i, q in enumerate(a.qis)}
    histograms = any(q.class_sizes for q in a.qis)
    below = sorted((q for q in a.qis if not q.pruned), key=lambda q: (-q.records_below(a.k), q.index))[:15]
    below = [q for q in below if q.records_below(a.k) > 0] if histograms else below
    fig = None
    if figures.available() and histograms and below:
        fig = figures.bars(
            [", ".join(q.columns) for q in below],
            [q.records_below(a.k) for q in below],
            f"records in classes smaller than k = {a.k} (of {a.rows:,})",
            "below-k",
            f"Records in classes smaller than k = {a.k} on each of the {len(below)} quasi-identifiers with the most; "
            f"each bar counts people of the {a.rows:,} records, once per quasi-identifier",
        )
    return {"below": [(order[q.index], q) for q in below], "fig": fig, "histograms": histograms}


def _records(inp: ReportInputs, numbers: dict) -> dict | None:
    r = inp.records
    if r is None:
        return None
    external = inp.release_kind == "external"
    data = to_plain(r)  # (a summary made for the report: its fields)
    if external:  # no record position, key or per-record number leaves the team
        data.pop("top", None)
    numbers["records"] = data
    fig = None
    e = inp.elimination
    rises: list[dict[str, Any]] = []
    if e is not None:
        numbers["elimination"] = e.to_dict()
        for name, pts in e.curves.items():
            worst = max((p for p in pts if p.risk is not None), key=lambda p: p.risk, default=None)
            if worst is not None and worst.risk > e.risk:
                rises.append({"ranking": name, "removed": worst.removed, "risk": worst.risk})
        numbers["elimination"]["rises"] = rises
        if figures.available():
            fig = figures.curves(
                {CURVE_NAMES.get(k, k): [(p.removed, p.risk) for p in pts] for k, pts in e.curves.items()},
                "records removed",
                "T̂ of the rest",
                "elimination",
                "Elimination curves: the risk T̂ of the table after removing records: in one block by their DT "
                "in the whole table, greedily (re-ranking by DT after every removal), and at random",
            )
    return {"r": r, "e": e, "fig": fig, "external": external, "rises": rises, "names": CURVE_NAMES}


#: How the report names each elimination curve.
CURVE_NAMES = {"dt": "block by DT", "greedy": "greedy (re-ranked)", "random": "random"}


def _whatif(inp: ReportInputs, numbers: dict) -> dict | None:
    if inp.whatif is None:
        return None
    numbers["whatif"] = inp.whatif.to_dict()  # qar whatif's JSON object, as -f json writes it
    return {"w": inp.whatif}


def _anonymize(inp: ReportInputs, numbers: dict) -> dict | None:
    r = inp.anonymize
    if r is None:
        return None
    # qar anonymize's JSON object, as -f json writes it (the section's numbers are read from it)
    numbers["anonymize"] = r.to_dict()
    fig = None
    if figures.available() and any(n.risk is not None for n in r.frontier):
        fig = figures.frontier(
            r,
            f"The loss minimised ({r.metric}) against T̂ of the release, for the nodes whose T̂ the search "
            "measured: the Pareto frontier (line), the chosen node (red) and the target τ (dashed)",
        )
    chosen = [] if r.chosen is None else list(zip(r.qi, r.labels.values(), r.chosen.levels))
    return {
        "r": r,
        "fig": fig,
        "metric_names": METRIC_NAMES,
        "models": models_text(r),
        "chosen_rows": chosen,
        "numbers_of_anonymize": numbers["anonymize"],
    }


def _history(inp: ReportInputs, numbers: dict) -> dict | None:
    h = inp.history
    if h is None:
        return None
    numbers["history"] = h.to_dict()  # qar history's JSON object, as -f json writes it
    fig = None
    points: dict[str, Sequence[tuple[float, float | None]]] = {
        s.label: [(i + 1.0, pt.risk) for i, pt in enumerate(s.points)] for s in h.series
    }
    if figures.available() and any(len(v) > 1 for v in points.values()):
        fig = figures.curves(points, "run", "T̂", "history", "T̂ over the past runs recorded in the results store")
    return {"h": h, "fig": fig}


def _compare(inp: ReportInputs, numbers: dict) -> dict | None:
    c = inp.compare
    if c is None:
        return None
    numbers["compare"] = c.to_dict()
    # The QIs whose θ changed most (in either direction), as indexes into compare.qis.
    changes = sorted(range(len(c.qis)), key=lambda i: (-abs(c.qis[i].change), i))[:10]
    fig = None
    if figures.available() and c.qis:
        fig = figures.scatter(
            [q.theta_original for q in c.qis],
            [q.theta_treated for q in c.qis],
            "θ in the original",
            "θ in the treated release",
            "compare-theta",
            f"θ of each of the {len(c.qis)} quasi-identifiers before (x) and after (y) treatment; "
            "points below the diagonal became less identifying",
        )
    return {"c": c, "changes": changes, "fig": fig}


def _uniqueness(inp: ReportInputs, numbers: dict) -> dict | None:
    u = inp.uniqueness if inp.uniqueness is not None else (inp.audit.uniqueness if inp.audit else None)
    if u is None:
        return None
    data = u.to_dict()
    # The most exposed value combinations are the rare values themselves: a report handed on
    # never carries them (qar uniqueness prints them to whoever ran it).
    for q in [*data["qis"], *(q for s in data.get("scenarios", ()) for q in s["qis"])]:
        q.pop("most_exposed", None)
    numbers["uniqueness"] = data
    shown = [q for q in u.qis[:3] if q.class_sizes]  # the riskiest first (UniquenessResult's order)
    fig = None
    if figures.available() and shown:
        k_max = max([2 * u.group_size] + [2 * q.k50 for q in shown])
        series: dict[str, Sequence[tuple[float, float | None]]] = {}
        for q in shown:
            top = min(k_max, q.distinct + 1)
            ks = np.unique(np.linspace(1, top, num=min(top, 60)).round().astype(int))
            series[", ".join(q.columns)] = list(zip(ks.tolist(), curve(q, ks).tolist()))
        fig = figures.curves(
            series,
            "group size k",
            "P(all k unique)",
            "uniqueness",
            f"The probability that k people are all unique, against k, for the {len(shown)} riskiest "
            f"quasi-identifiers; the report's group size is k = {u.group_size}",
        )
    return {"u": u, "top": list(enumerate(u.qis[:10])), "fig": fig}


def _classic(inp: ReportInputs, numbers: dict) -> dict | None:
    r = inp.classic
    if r is None:
        return None
    numbers["classic"] = r.to_dict()
    order = {q.index: i for i, q in enumerate(r.qis)}
    top = [(order[q.index], q) for q in r.riskiest(10)]
    fig = None
    if figures.available() and top and top[0][1].fk_histogram:
        q = top[0][1]
        fig = figures.class_sizes(
            [(int(k), int(n)) for k, n in q.fk_histogram.items()],
            2,
            f"Records by the size fk of their class on {', '.join(q.columns)} (the QI with the most expected "
            "re-identifications); sample uniques (fk = 1) in red",
            per_class=False,
            name="fk-histogram",
            xlabel="fk, the size of the record's class",
            ylabel="records",
        )
    return {"r": r, "top": top, "fig": fig}


def _repro(inp: ReportInputs, numbers: dict) -> dict:
    numbers["parameters"] = dict(inp.parameters)
    return {"inp": inp}


SECTIONS: list[Section] = [
    Section("summary", "Summary", "summary.html", _summary),
    Section("theta", "How identifying the column combinations are", "theta.html", _theta),
    Section("sensitivity", "How T̂ depends on the columns and the measure", "sensitivity.html", _sensitivity),
    Section("qis", "The riskiest quasi-identifiers", "qis.html", _qis),
    Section("kanonymity", "k-anonymity", "kanonymity.html", _kanon),
    # sdcMicro's and ARX's measures, early: those users look for them first
    Section("classic", "Classic risk measures (sdcMicro, ARX)", "classic.html", _classic),
    Section("records", "The records that carry the risk", "records.html", _records),
    Section("whatif", "What if the table were treated", "whatif.html", _whatif),
    Section("compare", "Original vs treated", "compare.html", _compare),
    Section("anonymize", "The cheapest generalization (qar anonymize)", "anonymize.html", _anonymize),
    Section("uniqueness", "Uniqueness probability", "uniqueness.html", _uniqueness),
    Section("history", "History", "history.html", _history),
    Section("reproducibility", "Reproducibility", "reproducibility.html", _repro),
]


_SQL_TOKENS = re.compile(
    r"(?P<cm>--[^\n]*)|(?P<st>'(?:[^']|'')*')|(?P<id>\"(?:[^\"]|\"\")*\")|"
    r"(?P<kw>\b(?:select|from|where|group|by|order|with|as|union|all|count|distinct|sum|case|when|then|else|end|"
    r"and|or|not|null|is|in|on|join|left|create|temp|table|having|over|partition|cast|coalesce|min|max)\b)",
    re.IGNORECASE,
)


#: A list of numbers (class-size pairs, column lists) indented one item per line: put on one line.
_INNER_LIST = re.compile(r"\[[^\[\]{}]*\]")


#: The element that marks each kind of SQL token: keywords ``<b>`` and comments ``<i>`` (styled by
#: report.css as a highlighter's spans would be: the same look, a third of the markup, which in
#: a report's SQL of thousands of keywords is most of the file), strings a span.
_SQL_MARKUP = {"kw": Markup("<b>{}</b>"), "cm": Markup("<i>{}</i>"), "st": Markup('<span class="st">{}</span>')}


def highlight_sql(sql: str) -> Markup:
    """SQL with comments, strings and keywords marked up (escaped; no script, CSS only)."""
    out, pos = [], 0
    for m in _SQL_TOKENS.finditer(sql):
        out.append(escape(sql[pos : m.start()]))
        kind = m.lastgroup
        text = escape(m.group(0))
        out.append(text if kind == "id" else _SQL_MARKUP[str(kind)].format(text))
        pos = m.end()
    out.append(escape(sql[pos:]))
    return Markup("").join(out)


@functools.lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir() / "report")),
        undefined=jinja2.StrictUndefined,
        autoescape=True,  # every value from the data (column names, sources) is escaped
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["fmt"] = fmt
    env.filters["sqlhl"] = highlight_sql
    # The stylesheet inlined on one line: a smaller file, and the same CSS.
    css = (templates_dir() / "report" / "report.css").read_text(encoding="utf-8")
    env.globals["css"] = Markup(" ".join(line.strip() for line in css.splitlines() if line.strip()))
    return env


def _marker(numbers: Mapping[str, Any]) -> Callable[..., Markup]:
    def num(path: str, kind: str = "auto") -> Markup:
        """A number from the JSON block, marked with its path and how it is shown (``data-fmt``),
        its full precision in the tooltip."""
        v = lookup(numbers, path)
        return Markup('<span class="num" data-qar="{}" data-fmt="{}" title="{}">{}</span>').format(
            path, kind, readable_numbers.exact(v), fmt(v, kind)
        )

    return num


def _pretty(numbers: Mapping[str, Any]) -> str:
    """The JSON block: indented, with lists of numbers on one line."""
    return _INNER_LIST.sub(
        lambda m: re.sub(r"\s+", " ", m.group(0)).replace("[ ", "[").replace(" ]", "]"),
        json.dumps(numbers, indent=1, ensure_ascii=False, allow_nan=False, default=str),
    )


def render_html(inp: ReportInputs) -> str:
    """The report as one HTML document (control and bidirectional characters shown: :func:`~qar_sql.user_text.html_page`)."""
    numbers: dict[str, Any] = {} if inp.audit is None else {"audit": inp.audit.to_dict(histograms=True)}
    env = environment()
    env.globals["num"] = _marker(numbers)
    built = [(s, ctx) for s in SECTIONS if (ctx := s.build(inp, numbers)) is not None]
    # What every section's template may read: the inputs, the audit (``a``), the versions.
    common = {
        "inp": inp,
        "a": inp.audit,
        "version": __version__,
        "python_version": platform.python_version(),
        "numbers_pretty": _pretty(numbers),
    }
    bodies = [
        (s, Markup(env.get_template(f"sections/{s.template}").render(section=s, **{**common, **ctx})))
        for s, ctx in built
    ]
    return html_page(env.get_template("report.html").render(inp=inp, sections=bodies, version=__version__))


def render_index(data: Mapping[str, Any], links: Mapping[str, str]) -> str:
    """The index page of ``qar scan --format html``: ``data`` is the scan's JSON (``scans`` a list
    of name, table, status, risk, thresholds, rows, error), ``links`` scan name → report file."""
    env = environment()
    env.globals["num"] = _marker(data)
    return html_page(
        env.get_template("index.html").render(data=data, links=links, version=__version__, numbers_pretty=_pretty(data))
    )


def render_report(inp: ReportInputs | str, fmt: str = "html") -> str:
    """The report as ``fmt``: "html" (one self-contained page), "md" (the same as Markdown), or a
    generic format of every command (csv: the audit's QIs, from the report's table)."""
    spec = FORMATS.get(fmt)
    if spec is not None and spec.from_table is not None:
        if isinstance(inp, str):
            raise UsageError(f"--format {fmt} needs the report's results, not its page; use html or md")
        return spec.from_table(inp.table_columns())
    page = html_page(inp) if isinstance(inp, str) else render_html(inp)  # (render_html's is safe already)
    # (the Markdown again: converting reads the page's entities back as characters)
    return html_page(html_to_markdown(page)) if fmt == "md" else page


def write_report(inp: ReportInputs | str, path: str, fmt: str = "html") -> None:
    """Write a report to ``path`` as ``fmt`` (:func:`render_report`)."""
    text = render_report(inp, fmt)
    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:
        raise UsageError(f"cannot write the report to {path!r}: {exc.strerror}; choose another -o path") from exc


__all__ = [
    "SECTIONS",
    "Section",
    "render_html",
    "render_index",
    "write_report",
    "render_report",
    "fmt",
    "lookup",
    "escape",
]
