"""``noise``: noise addition — x + s·z per column, z standard normal or uniform; ``correlated``
noise follows the columns' covariance."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from qar_sql.engines.dialects import sql_comment
from qar_sql.errors import shown
from qar_sql.treat import prng
from qar_sql.treat.kinds.base import Fail, Kind, is_number, names, needs_numbers
from qar_sql.treat.perturb import Context, LayeredStep, cholesky, draw_chain, finish

DISTRIBUTIONS = ("normal", "uniform")


def shape(fail: Fail, o: dict, has_column: bool) -> None:
    if ("sd" in o) == ("sd_abs" in o):
        fail(None, "needs exactly one of sd (relative to the column's standard deviation) or sd_abs (absolute)")
    for key in ("sd", "sd_abs"):
        if key in o and (not is_number(o[key]) or o[key] < 0):
            fail(key, f"= {shown(o[key])} must be a number 0 or more, e.g. 0.1")
    dist = o.get("distribution", "normal")
    if dist not in DISTRIBUTIONS:
        fail("distribution", f"= {shown(dist)} is unknown; use one of {', '.join(DISTRIBUTIONS)}")
    for key in ("round", "correlated"):
        if key in o and not isinstance(o[key], bool):
            fail(key, f"= {shown(o[key])} must be true or false")
    if "columns" in o:
        if has_column:
            fail("columns", "cannot go with column; list every column under columns")
        names(fail, "columns", o["columns"])
    elif not has_column:
        fail("column", "is missing; name the column to add noise to (or several under columns)")
    if o.get("correlated"):
        if len(o.get("columns", ())) < 2:
            fail("correlated", 'needs two or more columns, e.g. columns = ["income", "expenses"]')
        if "sd_abs" in o:
            fail("sd_abs", "cannot go with correlated = true: the noise takes the columns' covariance, scaled by sd")


def fits(b: Any, t: Any, column: str, kind: str, here: str) -> None:
    needs_numbers(b, t, column, kind, 'use kind = "pram" for categories', here)


def step(b: Any, t: Any, ctx: Context, stats: Any, local: Any, fail: Fail) -> LayeredStep:
    opts = dict(t.options)
    sds, cov = stats.noise_params(t.columns, opts)
    return layers(ctx, sql_comment(t.name), t.columns, opts, sds, cov)


def layers(
    ctx: Context, name: str, columns: Sequence[str], opts: dict, sds: Sequence[float], cov: list[list[float]] | None
) -> LayeredStep:
    """x + s·z per column, z standard normal (AS241) or uniform with variance 1; with
    ``correlated`` the noise vector is C·z with C·Cᵀ = sd²·Σ (Σ the columns' covariance)."""
    a, q = ctx.arith, ctx.quote
    seed = opts.get("seed", ctx.seed)
    streams = [prng.make_stream(f"n{i}", seed, f"noise\x00{c}") for i, c in enumerate(columns)]
    chain = draw_chain(ctx, streams)
    zs = []
    if opts.get("distribution", "normal") == "normal":
        per = [prng.normal_layers(a, f"t.{s.right}", s.tag) for s in streams]
        for j in range(len(per[0][0])):
            chain.add([col for layers, _ in per for col in layers[j]])
        zs = [f"t.{z}" for _, z in per]
    else:
        root12 = a.f(math.sqrt(12.0))
        chain.add(
            [(f"qar__z_{s.tag}", f"({prng.uniform_sql(a, f't.{s.right}')} - {a.f(0.5)}) * {root12}") for s in streams]
        )
        zs = [f"t.qar__z_{s.tag}" for s in streams]
    exprs, outs, before = [], [], []
    rho = float(opts.get("sd", 0.0))
    lower = cholesky([[rho * rho * v for v in row] for row in cov]) if cov is not None else None
    for i, col in enumerate(columns):
        x = f"t.{q(col)}"
        if lower is not None:
            terms = [f"{a.f(lower[i][j])} * {zs[j]}" for j in range(i + 1) if lower[i][j] != 0.0]
            eps = " + ".join(terms) if terms else a.f(0.0)
        else:
            eps = f"{a.f(sds[i])} * {zs[i]}"
        value = f"{a.to_double(x)} + ({eps})"
        out = "float"
        if opts.get("round"):
            value, out = f"cast(floor({value} + {a.f(0.5)}) as {a.dialect.bigint})", "integer"
        exprs.append(f"case when {x} is null then null else {value} end")
        outs.append(out)
        before.append(ctx.kinds[col])
    return finish(ctx, chain, name, list(columns), exprs, outs, before)


KIND = Kind(
    "noise",
    frozenset({"sd", "sd_abs", "distribution", "round", "columns", "correlated", "seed"}),
    shape,
    step,
    fits,
    perturbative=True,
    seeded=True,
    several=True,
)
