"""``bands``: numeric bands — a label per band, the band's mean or its midpoint."""

from __future__ import annotations

from typing import Any

from qar_sql.errors import shown
from qar_sql.treat.kinds.base import Fail, Kind, is_number, needs_numbers

TARGETS = ("label", "mean", "midpoint")


def shape(fail: Fail, o: dict[str, Any], has_column: bool) -> None:
    if ("width" in o) == ("edges" in o):
        fail(None, "needs exactly one of width (equal bands) or edges (explicit bands)")
    if "width" in o:
        if not is_number(o["width"]) or o["width"] <= 0:
            fail("width", f"= {shown(o['width'])} must be a positive number, e.g. 10")
        if "origin" in o and not is_number(o["origin"]):
            fail("origin", f"= {shown(o['origin'])} must be a number (where the first band starts)")
        if "labels" in o:
            fail("labels", "only goes with edges; with width the labels are the bands")
    else:
        if "origin" in o:
            fail("origin", "only goes with width; edges already say where bands start")
        edges = o["edges"]
        if not isinstance(edges, list) or len(edges) < 2 or not all(is_number(e) for e in edges):
            fail("edges", f"= {shown(edges)} must list two or more numbers, e.g. [0, 18, 65]")
        for a, b in zip(edges, edges[1:]):
            if b <= a:
                what = "repeats" if a == b else "is unsorted"
                fail("edges", f"{what}: {b!r} follows {a!r}; edges must be strictly increasing so bands do not overlap")
        if "labels" in o:
            labels = o["labels"]
            if (
                not isinstance(labels, list)
                or len(labels) != len(edges) - 1
                or not all(isinstance(x, str) for x in labels)
            ):
                fail("labels", f"must be {len(edges) - 1} strings, one per band between the edges")
    to = o.get("to", "label")
    if to not in TARGETS:
        fail("to", f"= {shown(to)} is unknown; use one of {', '.join(TARGETS)}")
    if "labels" in o and to != "label":
        fail("labels", f'only goes with to = "label", not {to!r}')
    if "digits" in o:
        d = o["digits"]
        if to == "label" or not isinstance(d, int) or isinstance(d, bool) or not 0 <= d <= 12:
            fail("digits", f'= {shown(d)} must be a whole number 0..12 and goes with to = "mean" or "midpoint"')


def fits(b: Any, t: Any, column: str, kind: str, here: str) -> None:
    needs_numbers(b, t, column, kind, 'use kind = "map" for categories', here)


def check(b: Any, t: Any) -> None:
    b.kind_ok(t, b.kinds[t.column])
    if "width" in dict(t.options):
        b.edges(t)  # refuses a width that cuts the column's range into too many bands


def step(b: Any, t: Any, x: str, kind: str, index: int) -> tuple[str, str, str]:
    edges = b.edges(t)
    to = t.opt("to", "label")
    labels = t.opt("labels") or [f"[{edge(a)}, {edge(c)})" for a, c in zip(edges, edges[1:])]
    below, above = f"< {edge(edges[0])}", f">= {edge(edges[-1])}"
    label_case = (
        f"case when {x} is null then null when {x} < {b.lit(edges[0])} then {b.lit(below)} "
        + " ".join(f"when {x} < {b.lit(c)} then {b.lit(lab)}" for c, lab in zip(edges[1:], labels))
        + f" else {b.lit(above)} end"
    )
    if to == "label":
        return label_case, "text", ""
    if to == "midpoint":
        mids = [(a + c) / 2 for a, c in zip(edges, edges[1:])]
        value = (
            f"case when {x} is null then null when {x} < {b.lit(edges[0])} then {b.lit(edges[0])} "
            + " ".join(f"when {x} < {b.lit(c)} then {b.lit(m)}" for c, m in zip(edges[1:], mids))
            + f" else {b.lit(edges[-1])} end"
        )
    else:  # mean of the values that fall in the band (Pastore's Y_avg)
        value = f"avg({b.as_float(x)}) over (partition by {label_case})"
    value = b.as_float(value)
    if "digits" in dict(t.options):
        scale = 10 ** t.opt("digits")
        # floor(v * 10^d + 0.5) / 10^d: round half up, the same on every engine (PostgreSQL
        # has no round(double precision, int)).
        value = b.as_float(f"floor({value} * {scale} + 0.5) / {scale}")
    return value, "float", ""


def edge(v: float) -> str:
    """A band edge as people write it: 1950, not 1950.0."""
    return str(int(v)) if float(v).is_integer() and abs(v) < 2**53 else f"{v:.12g}"


KIND = Kind("bands", frozenset({"width", "origin", "edges", "labels", "to", "digits"}), shape, step, fits, check)
