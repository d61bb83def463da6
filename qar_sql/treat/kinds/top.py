"""``top``: top coding — values above ``above`` become ``value`` (a number, or a label on a whole-number column)."""

from __future__ import annotations

from typing import Any

from qar_sql.errors import shown
from qar_sql.treat.kinds.base import Fail, Kind, needs_numbers, threshold


def shape(fail: Fail, o: dict[str, Any], has_column: bool) -> None:
    threshold(fail, o, "above")


def fits(b: Any, t: Any, column: str, kind: str, here: str) -> None:
    """Top and bottom coding: a numeric column; a label ``value`` only on whole numbers."""
    needs_numbers(b, t, column, kind, "code it with a map", here)
    if isinstance(t.opt("value"), str) and kind != "integer":
        b.fail(
            t,
            "value",
            f"= {shown(t.opt('value'))} is a label, which needs a whole-number column; {column!r} holds {kind} values, so give a number",
        )


def check(b: Any, t: Any) -> None:
    b.kind_ok(t, b.kinds[t.column])


def code(b: Any, t: Any, x: str, kind: str, op: str, limit: Any) -> tuple[str, str, str]:
    """Top (``op`` ">") or bottom ("<") coding of ``x`` at ``limit``."""
    value = t.opt("value", limit)
    if isinstance(value, str):
        return f"case when {x} {op} {b.lit(limit)} then {b.lit(value)} else {b.as_text(x, kind)} end", "text", ""
    whole = kind == "integer" and float(value).is_integer()
    out = "integer" if whole else "float"
    keep = x if whole else b.as_float(x)
    new = b.lit(value) if whole else b.as_float(b.lit(value))
    return f"case when {x} {op} {b.lit(limit)} then {new} else {keep} end", out, ""


def step(b: Any, t: Any, x: str, kind: str, index: int) -> tuple[str, str, str]:
    return code(b, t, x, kind, ">", t.opt("above"))


KIND = Kind("top", frozenset({"above", "value"}), shape, step, fits, check)
