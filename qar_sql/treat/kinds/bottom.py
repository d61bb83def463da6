"""``bottom``: bottom coding — values below ``below`` become ``value`` (as top coding, :mod:`.top`)."""

from __future__ import annotations

from typing import Any

from qar_sql.treat.kinds import top
from qar_sql.treat.kinds.base import Fail, Kind, threshold


def shape(fail: Fail, o: dict[str, Any], has_column: bool) -> None:
    threshold(fail, o, "below")


def step(b: Any, t: Any, x: str, kind: str, index: int) -> tuple[str, str, str]:
    return top.code(b, t, x, kind, "<", t.opt("below"))


KIND = Kind("bottom", frozenset({"below", "value"}), shape, step, top.fits, top.check)
