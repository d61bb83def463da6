"""``swap``: rank swapping — values swapped in random pairs no more than p % of the ranks apart."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from qar_sql.engines.dialects import sql_comment
from qar_sql.errors import shown
from qar_sql.treat import prng
from qar_sql.treat.kinds.base import Fail, Kind, is_number, names
from qar_sql.treat.perturb import Context, LayeredStep, draw_chain, finish, over, partition


def shape(fail: Fail, o: dict, has_column: bool) -> None:
    p: Any = o.get("p")
    if not is_number(p) or not 0 < p <= 100:
        fail("p", f"= {shown(p)} must be a percentage above 0 and at most 100 (how far in rank a value may move)")
    if "by" in o:
        names(fail, "by", o["by"])


def step(b: Any, t: Any, ctx: Context, stats: Any, local: Any, fail: Fail) -> LayeredStep:
    return layers(ctx, sql_comment(t.name), t.column, dict(t.options))


def rank_order(ctx: Context, x: str, kind: str) -> str:
    return ctx.arith.byte_order(x) if kind == "text" else x


def layers(ctx: Context, name: str, column: str, opts: dict) -> LayeredStep:
    """Rank swapping: ranks cut into blocks of w = max(2, ⌊p·n/100⌋) consecutive ranks (from a
    seeded offset), rows paired at random inside a block and each pair's values swapped, so
    no value moves more than w − 1 ranks and the column keeps its values."""
    a, q = ctx.arith, ctx.quote
    x = f"t.{q(column)}"
    kind = ctx.kinds[column]
    seed = opts.get("seed", ctx.seed)
    stream = prng.make_stream("w", seed, f"swap\x00{column}")
    offset_key = prng.stream_keys(seed, f"swap-offset\x00{column}", 1)[0]
    part = partition(ctx, opts.get("by", ()), x)
    p = Fraction(opts["p"]).limit_denominator(10**6)
    chain = draw_chain(ctx, [stream])
    chain.add(
        [
            ("qar__d", prng.big_sql(f"t.{stream.left}", f"t.{stream.right}")),
            ("qar__r", f"row_number() {over(part, f'{rank_order(ctx, x, kind)}, t.qar__id')}"),
            ("qar__cnt", f"count(*) {over(part)}"),
        ]
    )
    width = f"cast(floor({a.to_double(f't.qar__cnt * {p.numerator}')} / {a.to_double(str(100 * p.denominator))}) as {a.dialect.bigint})"
    chain.add([("qar__w", f"case when {width} < 2 then 2 else {width} end")])
    shifted = f"(t.qar__r - 1 + {a.mod(str(offset_key), 't.qar__w')})"
    chain.add([("qar__blk", f"{shifted} - {a.mod(shifted, 't.qar__w')}")])
    block = part + ["t.qar__blk"]
    chain.add([("qar__s", f"row_number() {over(block, 't.qar__d, t.qar__id')} - 1")])
    chain.add([("qar__pair", f"t.qar__s - {a.mod('t.qar__s', 2)}"), ("qar__odd", a.mod("t.qar__s", 2))])
    w = over(block + ["t.qar__pair"])
    partner = (
        f"case when t.qar__odd = 0 then max(case when t.qar__odd = 1 then {x} end) {w} "
        f"else max(case when t.qar__odd = 0 then {x} end) {w} end"
    )
    chain.add([("qar__partner", partner)])
    expr = f"coalesce(t.qar__partner, {x})"
    return finish(ctx, chain, name, [column], [expr], [kind], [kind])


KIND = Kind("swap", frozenset({"p", "by", "seed"}), shape, step, perturbative=True, seeded=True)
