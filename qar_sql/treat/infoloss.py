"""Information loss of a release: what a treatment costs, from SQL aggregates over the original
and released values of the same rows (the release carries each reported column's original
value as ``qar__o_N`` beside its released value ``qar__t_N``).

Per column: the share of changed cells; mean and standard deviation before and after (numeric
columns); IL1s as published (Yancey, Winkler & Creecy 2002; sdcMicro's ``dUtility`` method
"IL1" since its 2017 fix, commit 4d42643): Σ|x − y| / (√2 · s_x · n), s_x the original's sample
standard deviation, n all rows (a row missing either value adds 0); the table's IL1s,
(1/(p·n))·Σ_j Σ_i |x_ij − y_ij| / (√2 · s_j), is the mean over its p treated numeric columns.
A column a scenario treats with PRAM or shuffling holds category codes, for which a distance
means nothing: it gets no IL1s, only the changed share and, when its values are numbers (an
order), the **rank displacement** — the mean over all rows of |r(x) − r(y)|, r a value's dense
rank among the distinct values of the original and the release (a row missing either adds 0).
Per pair of columns (at least one of them treated): the association before and after (Pearson's
r when both columns are numeric before and after, else Cramér's V of the two-way table) and the
total variation distance between the original's and the release's two-way tables. Numeric
columns enter two-way tables cut at the original's deciles; NULL is a category of its own.

The utility score is 1 − the mean |change of association| over those pairs (1: every
relationship between columns survives; 0: all are gone), or 1 − the mean changed-cell share
when no pair was measured; it does not see record-level distortion, which IL1s and the
changed share report. docs/perturbative.md explains the figures.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from qar_sql.engines.dialects import Dialect
from qar_sql.engines.render import render
from qar_sql.results import pick
from qar_sql.treat.prng import Arith

NUMERIC = ("integer", "float")


@dataclass(frozen=True)
class ColumnLoss:
    column: str
    treated: bool
    changed: int
    changed_share: float
    mean_before: float | None
    sd_before: float | None
    mean_after: float | None
    sd_after: float | None
    il1s: float | None
    rank_displacement: float | None = None  # PRAM'd or shuffled number codes: mean |rank change|


@dataclass(frozen=True)
class PairLoss:
    columns: tuple[str, str]
    measure: str  # "pearson" or "cramers_v"
    before: float | None
    after: float | None
    change: float | None
    tvd: float


@dataclass(frozen=True)
class InfoLoss:
    rows: int
    columns: tuple[ColumnLoss, ...]
    pairs: tuple[PairLoss, ...]
    il1s: float | None  # mean over the treated numeric columns (sdcMicro's overall IL1s)
    utility: float


@dataclass(frozen=True)
class LossColumn:
    """A reported column: its name, kinds before/after, whether the scenario treats it, and the
    names of its original and released value columns in the paired release."""

    name: str
    before: str
    after: str
    treated: bool
    original: str
    released: str
    categorical: bool = False  # treated by PRAM or shuffle: category codes, no IL1s


def json_number(v: Any) -> float | None:
    if v is None:
        return None
    f = float(v)
    return f if math.isfinite(f) else None


def information_loss(query, dialect: Dialect, relation: str, columns: Sequence[LossColumn]) -> InfoLoss:
    """The report for the paired release ``relation`` (a name or a parenthesised SELECT), with
    ``query(sql)`` running statements on the engine."""
    a = Arith(dialect)
    q = dialect.quote
    cols = list(columns)
    treated = [c for c in cols if c.treated]
    if not treated:
        return InfoLoss(0, (), (), None, 1.0)

    def o(c: LossColumn) -> str:
        return f"t.{q(c.original)}"

    def t(c: LossColumn) -> str:
        return f"t.{q(c.released)}"

    # Deciles of the numeric originals (the bins of the two-way tables).
    numeric_o = [c for c in cols if c.before in NUMERIC]
    edges: dict[str, list[float]] = {c.name: [] for c in numeric_o}
    if numeric_o:
        rows = query(
            render("infoloss_deciles.sql", dialect, relation=relation, columns=[q(c.original) for c in numeric_o])
        )
        for col, nt, edge in sorted(rows, key=lambda r: (int(r[0]), int(r[1]))):
            if int(nt) < 10 and edge is not None:
                edges[numeric_o[int(col)].name].append(float(edge))
    for name in edges:
        edges[name] = sorted(set(edges[name]))

    def binned(expr: str, c: LossColumn, kind: str) -> str:
        if c.before in NUMERIC and kind in NUMERIC:
            e = edges[c.name]
            if not e:
                return a.as_text(expr, kind)
            arms = " ".join(f"when {expr} <= {a.f(v)} then '{i}'" for i, v in enumerate(e))
            return f"case when {expr} is null then null {arms} else '{len(e)}' end"
        return a.as_text(expr, kind)

    specs = []
    for c in cols:
        specs.append(
            {
                "changed": dialect.differs(*a.comparable(t(c), c.after, o(c), c.before)),
                "numeric_before": c.before in NUMERIC,
                "numeric_after": c.after in NUMERIC,
                "o": a.to_double(o(c)),
                "t": a.to_double(t(c)),
                "ob": binned(o(c), c, c.before),
                "tb": binned(t(c), c, c.after),
            }
        )
    pairs = [(i, j) for i in range(len(cols)) for j in range(i + 1, len(cols)) if cols[i].treated or cols[j].treated]
    pearson = [(i, j) for i, j in pairs if all(cols[k].before in NUMERIC and cols[k].after in NUMERIC for k in (i, j))]
    pearson_specs = [
        {"oa": specs[i]["o"], "ob": specs[j]["o"], "ta": specs[i]["t"], "tb": specs[j]["t"]} for i, j in pearson
    ]
    row = query(render("infoloss_columns.sql", dialect, relation=relation, columns=specs, pearson=pearson_specs))[0]
    values = list(row)
    n = int(values.pop(0) or 0)
    losses = []
    il1s_terms = []
    for c, s in zip(cols, specs):
        changed = int(values.pop(0) or 0)
        mo = so = mt = st = il1 = None
        if s["numeric_before"]:
            mo, so = json_number(values.pop(0)), json_number(values.pop(0))
        if s["numeric_after"]:
            mt, st = json_number(values.pop(0)), json_number(values.pop(0))
        rank = None
        if s["numeric_before"] and s["numeric_after"]:
            total = json_number(values.pop(0)) or 0.0
            if c.categorical:
                rank = _rank_displacement(query, dialect, relation, c, n)
            else:
                il1 = total / (math.sqrt(2.0) * so * n) if so and n else None
            if il1 is not None and c.treated:
                il1s_terms.append(il1)
        share = changed / n if n else 0.0
        losses.append(ColumnLoss(c.name, c.treated, changed, share, mo, so, mt, st, il1, rank))
    r_values = {}
    for p in pearson:
        r_values[p] = (json_number(values.pop(0)), json_number(values.pop(0)))

    table_rows = {}
    if pairs:
        out = query(
            render(
                "infoloss_tables.sql",
                dialect,
                relation=relation,
                double=a.double,
                columns=[{"ob": s["ob"], "tb": s["tb"]} for s in specs],
                pairs=[{"i": i, "j": j} for i, j in pairs],
            )
        )
        table_rows = {int(r[0]): r[1:] for r in out}
    pair_losses = []
    for k, (i, j) in enumerate(pairs):
        chi_o, r_o, c_o, chi_t, r_t, c_t, diff = table_rows.get(k, (None,) * 7)
        tvd = float(diff or 0) / (2 * n) if n else 0.0
        if (i, j) in r_values:
            before, after = r_values[(i, j)]
            measure = "pearson"
        else:
            before, after = _cramers_v(chi_o, r_o, c_o, n), _cramers_v(chi_t, r_t, c_t, n)
            measure = "cramers_v"
        change = after - before if before is not None and after is not None else None
        pair_losses.append(PairLoss((cols[i].name, cols[j].name), measure, before, after, change, tvd))
    measured = [abs(p.change) for p in pair_losses if p.change is not None]
    if measured:
        utility = max(0.0, 1.0 - sum(measured) / len(measured))
    else:
        shares = [c.changed_share for c in losses if c.treated]
        utility = 1.0 - sum(shares) / len(shares)
    overall = sum(il1s_terms) / len(il1s_terms) if il1s_terms else None
    return InfoLoss(n, tuple(losses), tuple(pair_losses), overall, utility)


def _rank_displacement(query, dialect: Dialect, relation: str, c: LossColumn, n: int) -> float | None:
    """Mean |r(x) − r(y)| over the n rows, r the dense rank of a value among the distinct
    values of both sides (a row with a NULL adds 0: the inner joins drop it)."""
    if not n:
        return None
    q, double = dialect.quote, dialect.double
    o, t = f"cast(t.{q(c.original)} as {double})", f"cast(t.{q(c.released)} as {double})"
    # UNION ALL then DISTINCT: ClickHouse refuses a bare UNION.
    ranks = (
        f"(select v, dense_rank() over (order by v) as r from (select distinct v from ("
        f"select {o} as v from {relation} as t union all select {t} as v from {relation} as t"
        f") as b where v is not null) as a)"
    )
    sql = (
        f"select sum(abs(ro.r - rt.r)) from {relation} as t "
        f"join {ranks} as ro on ro.v = {o} join {ranks} as rt on rt.v = {t}"
    )
    total = query(sql)[0][0]
    return float(total or 0) / n


def _cramers_v(chi_sum, rows, cols, n: int) -> float | None:
    """V = √(χ² / (n·(min(r, c) − 1))), χ² = n·(Σ n_ab²/(n_a·n_b) − 1)."""
    if chi_sum is None or not n:
        return None
    k = min(int(rows or 0), int(cols or 0)) - 1
    if k <= 0:
        return None
    chi2 = n * (float(chi_sum) - 1.0)
    return math.sqrt(max(0.0, chi2) / (n * k))


# A ColumnLoss's JSON fields after its column, treated flag and changed cells, in order.
_COLUMN_FIELDS = ("changed_share", "mean_before", "sd_before", "mean_after", "sd_after", "il1s", "rank_displacement")


def loss_dict(loss: InfoLoss) -> dict[str, Any]:
    """The JSON form (field names are the documented contract)."""
    return {
        "rows": loss.rows,
        "il1s": loss.il1s,
        "utility": loss.utility,
        "columns": [
            {"column": c.column, "treated": c.treated, "changed_cells": c.changed, **pick(c, _COLUMN_FIELDS)}
            for c in loss.columns
        ],
        "pairs": [{**asdict(p), "columns": list(p.columns)} for p in loss.pairs],
    }
