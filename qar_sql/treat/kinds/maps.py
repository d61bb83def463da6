"""``map``: a category map (value = "new value"); values it does not name keep theirs or take ``other``."""

from __future__ import annotations

from typing import Any

from qar_sql.treat.kinds.base import Fail, Kind, needs_categories, other


def shape(fail: Fail, o: dict[str, Any], has_column: bool) -> None:
    m = o.get("map")
    if not isinstance(m, dict) or not m or not all(isinstance(v, str) for v in m.values()):
        fail("map", 'must be a non-empty table of value = "new value" strings, e.g. { M = "*", F = "*" }')
    other(fail, o)


def fits(b: Any, t: Any, column: str, kind: str, here: str) -> None:
    needs_categories(b, t, column, kind)


def check(b: Any, t: Any) -> None:
    b.kind_ok(t, b.kinds[t.column])


def step(b: Any, t: Any, x: str, kind: str, index: int) -> tuple[str, str, str]:
    key = b.as_text(x, kind)
    arms = " ".join(f"when {b.lit(k)} then {b.lit(v)}" for k, v in t.opt("map").items())
    otherwise = b.lit(t.opt("other")) if "other" in dict(t.options) else key
    return f"case when {x} is null then null else case {key} {arms} else {otherwise} end end", "text", ""


KIND = Kind("map", frozenset({"map", "other"}), shape, step, fits, check)
