"""``microaggregation``: each value replaced by its group's mean (or median) — groups of k
consecutive sorted values of one column, or MDAV groups over several columns."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from qar_sql.engines.dialects import sql_comment
from qar_sql.engines.render import render
from qar_sql.errors import shown
from qar_sql.treat.kinds.base import Fail, Kind, is_int, names, needs_numbers
from qar_sql.treat.perturb import Chain, Context, LayeredStep, finish, identity_sql, over, partition, scaled_sql
from qar_sql.treat.prng import Arith

TO = ("mean", "median")
#: "sorted": one column, groups of consecutive sorted values; "mdav": several columns, MDAV.
METHODS = ("sorted", "mdav")


def shape(fail: Fail, o: dict, has_column: bool) -> None:
    k: Any = o.get("k")
    if not is_int(k) or k < 2:
        fail("k", f"= {shown(k)} must be a whole number 2 or more (the smallest group)")
    to = o.get("to", "mean")
    if to not in TO:
        fail("to", f"= {shown(to)} is unknown; use one of {', '.join(TO)}")
    if "by" in o:
        names(fail, "by", o["by"])
    if "digits" in o and (not is_int(o["digits"]) or not 0 <= o["digits"] <= 12):
        fail("digits", f"= {shown(o['digits'])} must be a whole number 0..12")
    method = o.get("method", "mdav" if "columns" in o else "sorted")
    if method not in METHODS:
        fail("method", f"= {shown(method)} is unknown; use one of {', '.join(METHODS)}")
    if "columns" in o:
        if has_column:
            fail("columns", "cannot go with column; list every column under columns")
        names(fail, "columns", o["columns"])
        if method == "sorted" and len(o["columns"]) > 1:
            fail("method", '= "sorted" groups one column; use method = "mdav" for several columns')
    if method == "mdav" and to != "mean":
        fail("to", f'= {shown(to)} does not go with method = "mdav", which gives each group its mean vector')


def fits(b: Any, t: Any, column: str, kind: str, here: str) -> None:
    needs_numbers(b, t, column, kind, 'use kind = "pram" for categories', here)


def is_mdav(t: Any) -> bool:
    return t.opt("method", "mdav" if t.opt("columns") else "sorted") == "mdav"


def reads(t: Any) -> set[str]:
    """MDAV also groups by ``by``: its statistics read those columns too."""
    return set(t.columns) | (set(t.opt("by") or ()) if is_mdav(t) else set())


def step(b: Any, t: Any, ctx: Context, stats: Any, local: Any, fail: Fail) -> LayeredStep:
    opts = dict(t.options)
    if is_mdav(t):
        k = int(opts["k"])
        src = b.db.dialect
        if stats is b.perturb:
            identity = identity_sql(
                Arith(src), src.quote, b.key, b.kinds.get(b.key) if b.key else None, b.columns, b.kinds
            )
        else:  # the earlier treatments' release carries the chain's row identity
            identity = "t.qar__id"
        groups = stats.mdav_groups(identity, t.columns, opts.get("by", ()), local, k, fail)
        scales = stats.scales(t.columns, 2 * k - 1)
        return mdav_layers(ctx, sql_comment(t.name), t.columns, opts, groups, scales)
    scale = stats.scales([t.column], 2 * int(opts["k"]) - 1)[0] if opts.get("to", "mean") == "mean" else 0
    return sorted_layers(ctx, sql_comment(t.name), t.column, opts, scale)


def sorted_layers(ctx: Context, name: str, column: str, opts: dict, scale: int) -> LayeredStep:
    """Univariate microaggregation: sorted values cut into groups of k consecutive ranks, the
    last group taking the remainder (k to 2k − 1 members), each value replaced by its group's
    mean (from exact integer sums) or median."""
    a, q = ctx.arith, ctx.quote
    x = f"t.{q(column)}"
    k = int(opts["k"])
    part = partition(ctx, opts.get("by", ()), x)
    chain = Chain(f"qar_s{ctx.index}", ctx.source, ctx.base)
    chain.add([("qar__r", f"row_number() {over(part, f'{x}, t.qar__id')}"), ("qar__cnt", f"count(*) {over(part)}")])
    start = f"(t.qar__r - 1 - {a.mod('t.qar__r - 1', k)})"
    last = f"(t.qar__cnt - {a.mod('t.qar__cnt', k)} - {k})"
    chain.add([("qar__g", f"case when t.qar__cnt < {k} then 0 when {start} > {last} then {last} else {start} end")])
    group = over(part + ["t.qar__g"])
    if opts.get("to", "mean") == "mean":
        chain.add(
            [
                ("qar__gsum", f"cast(sum({scaled_sql(a, x, scale)}) {group} as {a.dialect.bigint})"),
                ("qar__gn", f"count(*) {group}"),
            ]
        )
        value = f"{a.to_double('t.qar__gsum')} / {a.to_double('t.qar__gn')}"
        if scale:
            value = f"{value} / {a.f(10.0**scale)}"
    else:
        chain.add([("qar__gn", f"count(*) {group}"), ("qar__j", "t.qar__r - 1 - t.qar__g")])
        middle = "abs(2 * t.qar__j - (t.qar__gn - 1)) <= 1"
        xd = a.to_double(x)
        value = (
            f"(min(case when {middle} then {xd} end) {group} + max(case when {middle} then {xd} end) {group})"
            f" / {a.f(2.0)}"
        )
        chain.add([("qar__med", value)])
        value = "t.qar__med"
    expr = f"case when {x} is null then null else {rounded(a, value, opts)} end"
    return finish(ctx, chain, name, [column], [expr], ["float"], [ctx.kinds[column]])


def rounded(a: Arith, value: str, opts: dict) -> str:
    """A group's value rounded half up to ``digits`` places (as given; none: as it is)."""
    if "digits" not in opts:
        return value
    s = a.f(10.0 ** opts["digits"])
    return f"floor({value} * {s} + {a.f(0.5)}) / {s}"


def mdav_layers(
    ctx: Context,
    name: str,
    columns: Sequence[str],
    opts: dict,
    groups: Sequence[tuple[int, int]],
    scales: Sequence[int],
) -> LayeredStep:
    """Multivariate microaggregation: every row joins its MDAV group (``groups``: (row identity,
    group) pairs that :meth:`~qar_sql.treat.perturb.PerturbBinder.mdav_groups` computed) and each column takes its
    group's mean, from exact integer sums as in :func:`sorted_layers`. A row the grouping does not
    know (the table gained it since) gets NULL rather than its own value."""
    a, q = ctx.arith, ctx.quote
    chain = Chain(f"qar_s{ctx.index}", ctx.source, ctx.base)
    if groups:
        join = render("mdav_groups.sql", a.dialect, groups=groups).strip()
        chain.add([("qar__g", "qar_m.qar__mg")], join=f"left join {join} on qar_m.qar__mid = t.qar__id")
    else:
        chain.add([("qar__g", "null")])
    group = over(["t.qar__g"])
    sums = []
    for i, (col, d) in enumerate(zip(columns, scales)):
        x = f"case when t.qar__g is null then null else {scaled_sql(a, f't.{q(col)}', d)} end"
        # No cast: a group's sum stays below 2^53 (scale_for), so any engine's sum type turns
        # into the same double.
        sums += [(f"qar__gs{i}", f"sum({x}) {group}"), (f"qar__gn{i}", f"count({x}) {group}")]
    chain.add(sums)
    exprs = []
    for i, (col, d) in enumerate(zip(columns, scales)):
        value = f"{a.to_double(f't.qar__gs{i}')} / {a.to_double(f't.qar__gn{i}')}"
        if d:
            value = f"{value} / {a.f(10.0**d)}"
        exprs.append(f"case when t.{q(col)} is null or t.qar__g is null then null else {rounded(a, value, opts)} end")
    kinds = [ctx.kinds[c] for c in columns]
    return finish(ctx, chain, name, list(columns), exprs, ["float"] * len(columns), kinds)


KIND = Kind(
    "microaggregation",
    frozenset({"k", "to", "by", "digits", "columns", "method"}),
    shape,
    step,
    fits,
    reads=reads,
    perturbative=True,
    several=True,
)
