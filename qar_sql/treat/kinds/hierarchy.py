"""``hierarchy``: a coarser level of the value — a column of the same row, or a lookup table or file."""

from __future__ import annotations

from typing import Any

from qar_sql.errors import shown
from qar_sql.treat.kinds.base import Fail, Kind, needs_categories, other


def shape(fail: Fail, o: dict[str, Any], has_column: bool) -> None:
    if not isinstance(o.get("parent"), str) or not o["parent"]:
        fail("parent", "is missing; name the column that holds the coarser level (e.g. the province)")
    if "table" in o and "file" in o:
        fail("file", "cannot go with table; take the hierarchy from one of them")
    lookup = "table" in o or "file" in o
    if lookup and (not isinstance(o.get("key"), str) or not o["key"]):
        fail("key", "is missing; name the lookup column that matches this column's values")
    if not lookup and "key" in o:
        fail("key", "only goes with table or file; without them parent is a column of the same row")
    for k in ("table", "file"):
        if k in o and (not isinstance(o[k], str) or not o[k]):
            fail(k, f"= {shown(o[k])} must be a name")
    other(fail, o)


def fits(b: Any, t: Any, column: str, kind: str, here: str) -> None:
    needs_categories(b, t, column, kind)


def _lookup(t: Any) -> bool:
    return "table" in dict(t.options) or "file" in dict(t.options)


def check(b: Any, t: Any) -> None:
    if _lookup(t):
        b.check_lookup(t)
    else:
        b.check_column(t, t.opt("parent"), "parent")


def step(b: Any, t: Any, x: str, kind: str, index: int) -> tuple[str, str, str]:
    otherwise = b.lit(t.opt("other")) if "other" in dict(t.options) else b.as_text(x, kind)
    join = ""
    if _lookup(t):
        alias = f"h{index}"
        join = f"left join ({b.lookup_sql(t, b.dialect)}) as {alias} on {b.as_text(x, kind)} = {alias}.qar__key"
        parent = f"{alias}.qar__parent"
    else:
        pcol = f"t.{b.dialect.quote(t.opt('parent'))}"
        parent = b.as_text(pcol, b.kinds[t.opt("parent")])
    return f"case when {x} is null then null when {parent} is null then {otherwise} else {parent} end", "text", join


KIND = Kind("hierarchy", frozenset({"parent", "table", "file", "key", "other"}), shape, step, fits, check)
