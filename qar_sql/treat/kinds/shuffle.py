"""``shuffle``: a random permutation of the column's values among its rows (within ``by`` groups)."""

from __future__ import annotations

from typing import Any

from qar_sql.engines.dialects import sql_comment
from qar_sql.treat import prng
from qar_sql.treat.kinds.base import Fail, Kind, names
from qar_sql.treat.perturb import Context, LayeredStep, draw_chain, finish, partition


def shape(fail: Fail, o: dict, has_column: bool) -> None:
    if "by" in o:
        names(fail, "by", o["by"])


def step(b: Any, t: Any, ctx: Context, stats: Any, local: Any, fail: Fail) -> LayeredStep:
    return layers(ctx, sql_comment(t.name), t.column, dict(t.options))


def layers(ctx: Context, name: str, column: str, opts: dict) -> LayeredStep:
    """A random permutation of the column's values among its rows (within ``by`` groups): the
    row at identity rank i takes the value of the row at random rank i."""
    q = ctx.quote
    x = f"t.{q(column)}"
    kind = ctx.kinds[column]
    stream = prng.make_stream("h", opts.get("seed", ctx.seed), f"shuffle\x00{column}")
    part = partition(ctx, opts.get("by", ()), x)
    chain = draw_chain(ctx, [stream])
    chain.add(
        [
            ("qar__d", prng.big_sql(f"t.{stream.left}", f"t.{stream.right}")),
            ("qar__g", f"dense_rank() over (order by {', '.join(part)})" if part else "1"),
        ]
    )
    chain.add(
        [
            ("qar__r1", "row_number() over (partition by t.qar__g order by t.qar__id)"),
            ("qar__r2", "row_number() over (partition by t.qar__g order by t.qar__d, t.qar__id)"),
        ]
    )
    ranked = chain.source
    join = (
        f"join (select s.qar__g, s.qar__r2, s.{q(column)} as qar__v from {ranked} as s) as qar_v"
        " on qar_v.qar__g = t.qar__g and qar_v.qar__r2 = t.qar__r1"
    )
    return finish(ctx, chain, name, [column], ["qar_v.qar__v"], [kind], [kind], join=join)


KIND = Kind("shuffle", frozenset({"by", "seed"}), shape, step, perturbative=True, seeded=True)
