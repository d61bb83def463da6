"""``suppress_records``: the records of the classes smaller than ``below`` on ``columns`` (as the
treatments before it left them) are removed from the release — ARX's record suppression, as
``qar anonymize`` writes it. No value changes; the release has fewer rows."""

from __future__ import annotations

from typing import Any

from qar_sql.errors import shown
from qar_sql.treat.kinds.base import Fail, Kind, names


def shape(fail: Fail, o: dict[str, Any], has_column: bool) -> None:
    if has_column:
        fail("column", 'does not go with suppress_records; list the QI as columns = ["a", "b"]')
    if "columns" not in o:
        fail("columns", 'is missing; list the QI whose small classes are removed, e.g. columns = ["age", "sex"]')
    names(fail, "columns", o["columns"])
    below = o.get("below")
    if not isinstance(below, int) or isinstance(below, bool) or below < 2:
        fail("below", f"= {shown(below)} must be a whole number of at least 2 (records of smaller classes are removed)")


def check(b: Any, t: Any) -> None:
    for col in t.opt("columns"):
        b.check_column(t, col, "columns")


def step(b: Any, t: Any, x: str, kind: str, index: int) -> tuple[str, str, str]:
    return x, kind, ""


def keep(b: Any, t: Any) -> str:
    """The rows kept: those whose class on the columns, as the chain left them, is big enough."""
    cols = ", ".join(f"t.{b.dialect.quote(c)}" for c in t.opt("columns"))
    return f"count(*) over (partition by {cols}) >= {int(t.opt('below'))}"


KIND = Kind("suppress_records", frozenset({"columns", "below"}), shape, step, None, check, several=True, keep=keep)
