"""``suppress``: the value set to NULL — every value, or only those listed in ``values``."""

from __future__ import annotations

from typing import Any

from qar_sql.errors import shown
from qar_sql.treat.kinds.base import Fail, Kind, is_number


def shape(fail: Fail, o: dict[str, Any], has_column: bool) -> None:
    if "values" in o:
        v = o["values"]
        if not isinstance(v, list) or not v or not all(isinstance(x, str) or is_number(x) for x in v):
            fail("values", f"= {shown(v)} must be a non-empty list of values to set to NULL")


def step(b: Any, t: Any, x: str, kind: str, index: int) -> tuple[str, str, str]:
    values = t.opt("values")
    if values is None:
        return f"nullif({x}, {x})", kind, ""
    numeric = kind in ("integer", "float") and all(is_number(v) for v in values)
    probe = x if numeric or kind == "text" else b.as_text(x, kind)
    lits = ", ".join(b.lit(v if numeric else str(v)) for v in values)
    return f"case when {probe} in ({lits}) then null else {x} end", kind, ""


KIND = Kind("suppress", frozenset({"values"}), shape, step)
