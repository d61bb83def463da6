"""A chosen node as what a user takes away: the release as one SELECT (``--format sql``) and as a
treatments file (``-o FILE.toml``) that ``qar whatif``, ``qar compare --treatments`` and ``qar
report --treatments`` read as they are.

The treatments file uses the existing kinds, each giving the same partition of the records as
the hierarchy level it stands for (so the same classes, k and T̂; the labels may differ):

* a level of an ARX hierarchy CSV: ``map`` from each value of the table to its group;
* an interval level: ``bands`` (``width`` and ``origin``, or ``edges`` from ``bottom`` to ``top``,
  whose ``< bottom`` and ``>= top`` bands are the hierarchy's bottom and top codes);
* the top level ``*``: ``map`` of every value to ``*`` (an interval column: ``suppress``);
* the suppressed records: ``suppress_records`` (the records of classes smaller than k on the QID,
  as the treatments before it left them, are removed).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from qar_sql.anonymization.hierarchy import ROOT, CsvHierarchy, Hierarchy, IntervalHierarchy
from qar_sql.engines.dialects import Dialect, sql_comment
from qar_sql.toml_text import toml_value


def column_text(dialect: Dialect, column: str) -> str:
    """A column of the row alias ``t`` as text (what a hierarchy compares)."""
    return f"cast(t.{dialect.quote(column)} as {dialect.text})"


def generalized(dialect: Dialect, hierarchy: Hierarchy, level: int) -> str:
    """The SQL of ``hierarchy``'s column at ``level`` (level 0: the column as it is)."""
    if level == 0:
        return f"t.{dialect.quote(hierarchy.column)}"
    return hierarchy.sql(level, column_text(dialect, hierarchy.column), dialect)


def release_select(
    dialect: Dialect,
    relation_sql: str,
    columns: Sequence[str],
    hierarchies: Mapping[str, Hierarchy],
    levels: Mapping[str, int],
    smallest: int | None = None,
    *,
    comment: str = "",
) -> str:
    """One SELECT of every column of the relation with the QI columns generalized to ``levels``
    and, with ``smallest``, without the records of classes smaller than it on the generalized
    QI (ARX's record suppression)."""
    q = dialect.quote
    exprs = {c: generalized(dialect, hierarchies[c], levels[c]) if c in levels else f"t.{q(c)}" for c in columns}
    select = ",\n  ".join(f"{exprs[c]} as {q(c)}" for c in columns)
    head = "".join(f"-- {sql_comment(line)}\n" for line in comment.splitlines())
    if not smallest or smallest < 2:
        return f"{head}select\n  {select}\nfrom {relation_sql} as t\n"
    keys = ", ".join(exprs[c] for c in levels)
    outer = ",\n  ".join(f"g.{q(c)}" for c in columns)
    return (
        f"{head}select\n  {outer}\nfrom (\n  select\n  {select},\n  count(*) over (partition by {keys}) as qar__class\n"
        f"  from {relation_sql} as t\n) as g\nwhere g.qar__class >= {int(smallest)}\n"
    )


def _num(x: float) -> int | float:
    return int(x) if float(x).is_integer() and abs(x) < 2**53 else float(x)


def _interval_treatment(h: IntervalHierarchy, level: int, low: float | None, high: float | None) -> dict[str, Any]:
    """``bands`` with the partition of the interval level (``low``/``high``: the column's range)."""
    w = h.widths[level - 1]
    origin = h.origin or 0
    if h.bottom is None and h.top is None:
        return {"kind": "bands", "width": _num(w), "origin": _num(origin)}
    start = h.bottom if h.bottom is not None else origin + math.floor(((low or origin) - origin) / w) * w
    stop = h.top if h.top is not None else origin + (math.floor(((high or start) - origin) / w) + 1) * w
    edges = [start]
    while edges[-1] + w < stop:
        edges.append(edges[-1] + w)
    edges.append(stop)
    if len(edges) < 2:
        edges = [start, start + w]
    return {"kind": "bands", "edges": [_num(e) for e in edges]}


def treatments(
    qi: Sequence[str],
    hierarchies: Mapping[str, Hierarchy],
    levels: Mapping[str, int],
    values: Mapping[str, Sequence[str]],
    ranges: Mapping[str, tuple[float | None, float | None]],
    *,
    smallest: int | None,
    suppressed: int,
) -> dict[str, dict[str, Any]]:
    """{treatment name: its table} for the node: one treatment per generalized column, and
    ``suppress_records`` when the node suppresses records. ``values``: each CSV-hierarchy
    column's values in the table (as text); ``ranges``: each interval column's (min, max)."""
    out: dict[str, dict[str, Any]] = {}
    for c in qi:
        level = levels[c]
        if level == 0:
            continue
        h = hierarchies[c]
        name = f"{c}_level{level}"
        top = level == h.height - 1
        if isinstance(h, IntervalHierarchy):
            spec = {"kind": "suppress"} if top else _interval_treatment(h, level, *ranges.get(c, (None, None)))
        elif isinstance(h, CsvHierarchy) or hasattr(h, "generalize"):
            mapping = {v: h.generalize(v, level) for v in values.get(c, ()) if v is not None}
            spec = {"kind": "map", "map": {str(k): str(v if v is not None else ROOT) for k, v in mapping.items()}}
        out[name] = {"column": c, **spec, "description": h.label(level)}
    if suppressed and smallest and smallest >= 2:
        out["suppress_small_classes"] = {
            "kind": "suppress_records",
            "columns": list(qi),
            "below": int(smallest),
            "description": f"{suppressed:,} records in classes of fewer than {int(smallest)} removed",
        }
    return out


def treatments_toml(
    qi: Sequence[str],
    steps: Mapping[str, Mapping[str, Any]],
    *,
    header: str = "",
) -> str:
    """The treatments file of a node: ``qid``, ``release`` (the steps in order) and one table per
    step (TOML written here: the values are strings, numbers and lists of them)."""

    lines = [f"# {line}" for line in header.splitlines()]
    lines.append(f"qid = {toml_value(list(qi))}")
    if steps:
        lines.append(f"release = {toml_value(list(steps))}")
        if len(steps) >= 2:
            lines.append(f"combinations = [{toml_value(list(steps))}]")
    for name, spec in steps.items():
        lines.append("")
        lines.append(f"[treatments.{json.dumps(name, ensure_ascii=False)}]")
        lines += [f"{k} = {toml_value(v)}" for k, v in spec.items()]
    return "\n".join(lines) + "\n"
