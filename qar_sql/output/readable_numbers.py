"""Numbers as people read them (the HTML and Markdown reports): counts with thousands
separators, shares as percentages with sensible digits, tiny shares as "< 0.01%", and never
scientific notation for a value above 1e-4. The full precision stays in the report's JSON
block and in each number's tooltip (``title``); :func:`show` is what a test recomputes.
"""

from __future__ import annotations

import math
from typing import Any

#: The kinds of :func:`show`: "count" (a whole number), "share" (a proportion shown as a
#: percentage), "plain" (any other quantity: ξ, β, κ, U+) and "auto" (by the value's type).
KINDS = ("auto", "count", "share", "plain")

#: The smallest percentage shown as digits; below it a share reads "< 0.01%".
SMALLEST_PERCENT = 0.01


def count(n: int | float) -> str:
    """A whole number with thousands separators: 30,162."""
    return f"{int(n):,}"


def share(x: float) -> str:
    """A proportion as a percentage: three significant digits (11.4%, 0.123%), at most two
    decimals above 1% (79.67% → 79.7%), "< 0.01%" for a positive share below 0.01% (and
    "> −0.01%" for a negative one, e.g. a record whose removal raises T̂ a little)."""
    pct = 100.0 * x
    if pct == 0:
        return "0%"
    if abs(pct) < SMALLEST_PERCENT:
        return "< 0.01%" if pct > 0 else "> −0.01%"
    text = f"{pct:.3g}" if abs(pct) < 1000 else f"{pct:,.0f}"
    return text.replace("-", "−") + "%"


def plain(x: float) -> str:
    """Any other real number: four significant digits, thousands separators from 1,000 and
    scientific notation only below 1e-4 (where people read "about zero" anyway)."""
    if x == 0:
        return "0"
    if abs(x) >= 1000:
        text = f"{x:,.0f}"
    elif abs(x) >= 1e-4:
        text = f"{x:.4g}"
    else:
        text = f"{x:.2e}"
    return text.replace("-", "−")


def show(x: Any, kind: str = "auto") -> str:
    """How the report shows ``x``: None and NaN as a dash, booleans as yes/no, else by ``kind``
    (:data:`KINDS`; "auto": ints as counts, floats as :func:`plain`)."""
    if x is None:
        return "—"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int | float):
        if isinstance(x, float) and not math.isfinite(x):
            return "—"
        if kind == "share":
            return share(float(x))
        if kind == "count" or (kind == "auto" and isinstance(x, int)):
            return count(x)
        return plain(float(x))
    return str(x)


def dash(x: float | None, spec: str = ".6g") -> str:
    """``x`` formatted by ``spec`` (the text outputs' digits), or a dash for a missing value."""
    return "—" if x is None else format(x, spec)


def exact(x: Any) -> str:
    """The full precision of a shown number (its tooltip): repr of a float, str otherwise."""
    return repr(x) if isinstance(x, float) else str(x)
