"""``pram``: the post-randomisation method — invariant PRAM (keep with probability ``retention``,
else draw from the column's own frequencies) or an explicit transition ``matrix``."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from qar_sql.engines.dialects import sql_comment
from qar_sql.errors import shown
from qar_sql.treat import prng
from qar_sql.treat.kinds.base import Fail, Kind, is_number
from qar_sql.treat.perturb import Context, LayeredStep, draw_chain, finish


def shape(fail: Fail, o: dict, has_column: bool) -> None:
    if ("retention" in o) == ("matrix" in o):
        fail(None, "needs exactly one of retention (invariant PRAM) or matrix (explicit transition probabilities)")
    if "retention" in o:
        r = o["retention"]
        if not is_number(r) or not 0 <= r <= 1:
            fail("retention", f"= {shown(r)} must be a probability between 0 and 1, e.g. 0.8")
        return
    m = o["matrix"]
    if not isinstance(m, dict) or not m:
        fail("matrix", "must be a table of rows, e.g. { M = { M = 0.9, F = 0.1 }, F = { M = 0.2, F = 0.8 } }")
    for src, row in m.items():
        if not isinstance(row, dict) or not row or not all(is_number(p) and 0 <= p <= 1 for p in row.values()):
            fail("matrix", f"row {src!r} must be a table of probabilities between 0 and 1, e.g. {{ M = 0.9, F = 0.1 }}")
        total: Fraction = sum((Fraction(p) for p in row.values()), Fraction(0))
        if abs(total - 1) > Fraction(1, 10**9):
            fail("matrix", f"row {src!r} sums to {float(total):.10g}, not 1; make each row's probabilities add up to 1")


def fits(b: Any, t: Any, column: str, kind: str, here: str) -> None:
    if kind not in ("integer", "text"):
        b.fail(
            t,
            "kind",
            f'= "pram" needs a categorical column, but {column!r} holds {kind} values{here}; '
            'band it first (kind = "bands") or add noise instead',
        )


def step(b: Any, t: Any, ctx: Context, stats: Any, local: Any, fail: Fail) -> LayeredStep:
    return layers(ctx, sql_comment(t.name), t.column, dict(t.options), stats.categories(t.column, fail), fail)


def layers(
    ctx: Context, name: str, column: str, opts: dict, categories: list[tuple[Any, int]], fail: Fail
) -> LayeredStep:
    """Invariant PRAM (keep with probability ``retention``, else draw from the column's own
    frequencies) or an explicit transition ``matrix``, on one integer draw D in [0, P²)."""
    a, q = ctx.arith, ctx.quote
    kind = ctx.kinds[column]
    x = f"t.{q(column)}"
    stream = prng.make_stream("p", opts.get("seed", ctx.seed), f"pram\x00{column}")
    chain = draw_chain(ctx, [stream])
    total = sum(n for _, n in categories)
    chain.add([("qar__d", prng.big_sql(f"t.{stream.left}", f"t.{stream.right}"))])
    if "retention" in opts:
        keep = prng.threshold(opts["retention"])
        chain.add([("qar__j", a.mod("t.qar__d", total))] if total else [("qar__j", "0")])
        arms, cum = [], 0
        for value, n in categories[:-1]:
            cum += n
            arms.append(f"when t.qar__j < {cum} then {ctx.literal(value)}")
        last = ctx.literal(categories[-1][0]) if categories else x
        pick = f"case {' '.join(arms)} else {last} end" if arms else last
        expr = f"case when {x} is null then {x} when t.qar__d < {keep} then {x} else {pick} end"
    else:
        matrix = transition_matrix(opts["matrix"], categories, kind, fail)
        rows = []
        for value, row in matrix:
            arms, cum_p = [], Fraction(0)
            targets = list(row)
            for target, prob in targets[:-1]:
                cum_p += prob
                arms.append(f"when t.qar__d < {prng.threshold(cum_p)} then {ctx.literal(target)}")
            last = ctx.literal(targets[-1][0])
            inner = f"case {' '.join(arms)} else {last} end" if arms else last
            rows.append(f"when {x} = {ctx.literal(value)} then {inner}")
        expr = f"case when {x} is null then {x} {' '.join(rows)} else {x} end"
    return finish(ctx, chain, name, [column], [expr], [kind], [kind])


def _category_value(text: str, kind: str, fail: Fail) -> Any:
    if kind == "integer":
        try:
            return int(text)
        except ValueError:
            fail("matrix", f"names {text!r}, which is not a value of this whole-number column; use its numbers as keys")
    return text


def transition_matrix(raw: dict, categories: list[tuple[Any, int]], kind: str, fail: Fail):
    """[(value, [(target, probability), …]), …] in the order of ``categories``; every category
    of the column must have a row."""
    rows = {_category_value(str(k), kind, fail): v for k, v in raw.items()}
    values = [v for v, _ in categories]
    missing = [v for v in values if v not in rows]
    if missing:
        shown = ", ".join(repr(str(v)) for v in missing[:5]) + (" …" if len(missing) > 5 else "")
        fail("matrix", f"has no row for {len(missing)} value(s) of the column ({shown}); give every value a row")
    extra = [v for v in rows if v not in values]
    if extra:
        fail(
            "matrix", f"has a row for {str(extra[0])!r}, which the column never holds; remove it or check the spelling"
        )
    out = []
    for v in values:
        targets = [(_category_value(str(t), kind, fail), Fraction(p)) for t, p in rows[v].items()]
        out.append((v, targets))
    return out


def posterior_odds(categories: list[tuple[Any, int]], opts: dict, kind: str, fail: Fail) -> dict[Any, float]:
    """P(X = b | Y = b) for every value b: π_b·p_bb / Σ_a π_a·p_ab (the design's probabilities)."""
    total = sum(n for _, n in categories)
    if not total:
        return {}
    pi = {v: Fraction(n, total) for v, n in categories}
    if "retention" in opts:
        r = Fraction(opts["retention"])
        trans = {a: {b: r * (a == b) + (1 - r) * pi[b] for b in pi} for a in pi}
    else:
        trans = {v: dict(t) for v, t in transition_matrix(opts["matrix"], categories, kind, fail)}
    out = {}
    for b in pi:
        into = sum(pi[a] * trans[a].get(b, 0) for a in pi)
        out[b] = float(pi[b] * trans[b].get(b, 0) / into) if into else 0.0
    return out


KIND = Kind("pram", frozenset({"retention", "matrix", "seed"}), shape, step, fits, perturbative=True, seeded=True)
