"""Perturbative treatments as SQL over the source: PRAM, noise, microaggregation, rank swapping
and shuffling (the perturbative half of the lecture's table of methods; sdcMicro's ``pram``,
``addNoise``, ``microaggregation``, ``rankSwap``).

Each treatment becomes a few CTEs ("layers") in the treated release's chain: the draws of
:mod:`qar_sql.treat.prng` (a function of the row identity, the seed and the treatment's column,
so the release is the same on every engine), then window functions for ranks and groups, then
the new values. Every number the SQL needs from the data (category frequencies, the standard
deviation, the covariance, a scale for exact sums) is computed here from exact integer
aggregates, so it is the same literal whichever engine computed it. docs/perturbative.md has
the definitions.
"""

from __future__ import annotations

import math
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from qar_sql.engines.render import render
from qar_sql.stats.mdav import mdav, standardise
from qar_sql.treat import prng
from qar_sql.treat.prng import Arith

KINDS = ("pram", "noise", "microaggregation", "swap", "shuffle")
KEYS = {
    "pram": {"retention", "matrix", "seed"},
    "noise": {"sd", "sd_abs", "distribution", "round", "columns", "correlated", "seed"},
    "microaggregation": {"k", "to", "by", "digits", "columns", "method"},
    "swap": {"p", "by", "seed"},
    "shuffle": {"by", "seed"},
}
#: Kinds that draw random numbers and so need a seed.
SEEDED = ("pram", "noise", "swap", "shuffle")
MICRO_TO = ("mean", "median")
#: "sorted": one column, groups of consecutive sorted values; "mdav": several columns, MDAV.
MICRO_METHODS = ("sorted", "mdav")
#: Most rows one MDAV run groups: MDAV costs O(n²·p / k) and its grouping enters the SQL as a
#: literal list of (row identity, group) pairs, so larger tables are refused with a hint.
MDAV_MAX_ROWS = 20_000
DISTRIBUTIONS = ("normal", "uniform")
#: Most categories PRAM writes into one CASE (a column with more is not categorical).
MAX_CATEGORIES = 1000
#: Float columns are summed as integers x·10^d with |x|·10^d at most this, so sums are exact
#: (and the same on every engine) and sums of squares fit DECIMAL(38, 0).
SCALE_LIMIT = 10**12

Fail = Callable[[str | None, str], Any]


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _names(fail: Fail, key: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        fail(key, f'= {value!r} must be a list of column names, e.g. ["sex"]')
    if len(set(value)) != len(value):
        fail(key, f"= {value!r} lists a column twice; list each once")
    return tuple(value)


def check_shape(fail: Fail, kind: str, o: dict[str, Any], has_column: bool, seed: int | None) -> None:
    """Types and ranges of a perturbative treatment's options (no table needed). ``fail(key,
    message)`` raises the file's error naming ``treatments.NAME.key``."""
    if "seed" in o and not _is_int(o["seed"]):
        fail("seed", f"= {o['seed']!r} must be a whole number, e.g. seed = 20240601")
    if kind in SEEDED and "seed" not in o and seed is None:
        fail(
            "seed",
            f"is missing: {kind} draws random numbers, and the same seed gives the same release; add "
            f"seed = {secrets.randbelow(10**9)} at the top of the file (or in this table) and keep it private",
        )
    getattr(_Shapes, kind)(fail, o, has_column)


class _Shapes:
    @staticmethod
    def pram(fail: Fail, o: dict, has_column: bool) -> None:
        if ("retention" in o) == ("matrix" in o):
            fail(None, "needs exactly one of retention (invariant PRAM) or matrix (explicit transition probabilities)")
        if "retention" in o:
            r = o["retention"]
            if not _is_number(r) or not 0 <= r <= 1:
                fail("retention", f"= {r!r} must be a probability between 0 and 1, e.g. 0.8")
            return
        m = o["matrix"]
        if not isinstance(m, dict) or not m:
            fail("matrix", "must be a table of rows, e.g. { M = { M = 0.9, F = 0.1 }, F = { M = 0.2, F = 0.8 } }")
        for src, row in m.items():
            if not isinstance(row, dict) or not row or not all(_is_number(p) and 0 <= p <= 1 for p in row.values()):
                fail(
                    "matrix",
                    f"row {src!r} must be a table of probabilities between 0 and 1, e.g. {{ M = 0.9, F = 0.1 }}",
                )
            total: Fraction = sum((Fraction(p) for p in row.values()), Fraction(0))
            if abs(total - 1) > Fraction(1, 10**9):
                fail(
                    "matrix",
                    f"row {src!r} sums to {float(total):.10g}, not 1; make each row's probabilities add up to 1",
                )

    @staticmethod
    def noise(fail: Fail, o: dict, has_column: bool) -> None:
        if ("sd" in o) == ("sd_abs" in o):
            fail(None, "needs exactly one of sd (relative to the column's standard deviation) or sd_abs (absolute)")
        for key in ("sd", "sd_abs"):
            if key in o and (not _is_number(o[key]) or o[key] < 0):
                fail(key, f"= {o[key]!r} must be a number 0 or more, e.g. 0.1")
        dist = o.get("distribution", "normal")
        if dist not in DISTRIBUTIONS:
            fail("distribution", f"= {dist!r} is unknown; use one of {', '.join(DISTRIBUTIONS)}")
        for key in ("round", "correlated"):
            if key in o and not isinstance(o[key], bool):
                fail(key, f"= {o[key]!r} must be true or false")
        if "columns" in o:
            if has_column:
                fail("columns", "cannot go with column; list every column under columns")
            _names(fail, "columns", o["columns"])
        elif not has_column:
            fail("column", "is missing; name the column to add noise to (or several under columns)")
        if o.get("correlated"):
            if len(o.get("columns", ())) < 2:
                fail("correlated", 'needs two or more columns, e.g. columns = ["income", "expenses"]')
            if "sd_abs" in o:
                fail(
                    "sd_abs", "cannot go with correlated = true: the noise takes the columns' covariance, scaled by sd"
                )

    @staticmethod
    def microaggregation(fail: Fail, o: dict, has_column: bool) -> None:
        k: Any = o.get("k")
        if not _is_int(k) or k < 2:
            fail("k", f"= {k!r} must be a whole number 2 or more (the smallest group)")
        to = o.get("to", "mean")
        if to not in MICRO_TO:
            fail("to", f"= {to!r} is unknown; use one of {', '.join(MICRO_TO)}")
        if "by" in o:
            _names(fail, "by", o["by"])
        if "digits" in o and (not _is_int(o["digits"]) or not 0 <= o["digits"] <= 12):
            fail("digits", f"= {o['digits']!r} must be a whole number 0..12")
        method = o.get("method", "mdav" if "columns" in o else "sorted")
        if method not in MICRO_METHODS:
            fail("method", f"= {method!r} is unknown; use one of {', '.join(MICRO_METHODS)}")
        if "columns" in o:
            if has_column:
                fail("columns", "cannot go with column; list every column under columns")
            _names(fail, "columns", o["columns"])
            if method == "sorted" and len(o["columns"]) > 1:
                fail("method", '= "sorted" groups one column; use method = "mdav" for several columns')
        if method == "mdav" and to != "mean":
            fail("to", f'= {to!r} does not go with method = "mdav", which gives each group its mean vector')

    @staticmethod
    def swap(fail: Fail, o: dict, has_column: bool) -> None:
        p: Any = o.get("p")
        if not _is_number(p) or not 0 < p <= 100:
            fail("p", f"= {p!r} must be a percentage above 0 and at most 100 (how far in rank a value may move)")
        if "by" in o:
            _names(fail, "by", o["by"])

    @staticmethod
    def shuffle(fail: Fail, o: dict, has_column: bool) -> None:
        if "by" in o:
            _names(fail, "by", o["by"])


# ------------------------------------------------------------------------------------------
# Layers
# ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Layer:
    name: str
    source: str
    carry: tuple[str, ...]
    cols: tuple[tuple[str, str], ...]
    join: str = ""


class _Chain:
    """CTEs of one step: each layer reads the one before and carries the base columns plus every
    column an earlier layer made (a layer's new column replaces a carried one of that name)."""

    def __init__(self, prefix: str, source: str, base: Sequence[str]):
        self.prefix = prefix
        self.source = source
        self.base = tuple(base)
        self.extra: list[str] = []
        self.layers: list[Layer] = []

    def add(self, cols: Sequence[tuple[str, str]], *, join: str = "", name: str | None = None) -> None:
        new = [c for c, _ in cols]
        carry = self.base + tuple(c for c in self.extra if c not in new)
        name = name or f"{self.prefix}_{len(self.layers) + 1}"
        self.layers.append(Layer(name, self.source, carry, tuple(cols), join))
        self.extra = [c for c in self.extra if c not in new] + new
        self.source = name


@dataclass(frozen=True)
class LayeredStep:
    """A treatment as CTEs: ``ctes`` (a WITH-list fragment reading the previous step) ends in
    ``final``, whose columns ``news`` hold the new values of ``columns``."""

    name: str
    columns: tuple[str, ...]
    outs: tuple[str, ...]
    ctes: str
    final: str
    news: tuple[str, ...]
    changed: str


# ------------------------------------------------------------------------------------------
# Statistics from the data, exact
# ------------------------------------------------------------------------------------------


def scale_for(max_abs: float | None, kind: str, group: int = 1) -> int:
    """Decimal places d such that integers round(x·10^d) of the column (and sums of ``group`` of
    them) are exact: 0 for whole-number columns; otherwise the most places up to 18 keeping
    |x|·10^d <= SCALE_LIMIT / group."""
    if kind == "integer" or not max_abs:
        return 0
    d = 0
    while d < 18 and max_abs * 10 ** (d + 1) * group <= SCALE_LIMIT:
        d += 1
    return d


def scaled_sql(a: Arith, x: str, d: int) -> str:
    """round(x·10^d) as a bigint, computed with IEEE operations every engine rounds alike."""
    if d == 0:
        return f"cast({x} as {a.dialect.bigint})"
    return f"cast(floor({x} * {a.f(10.0**d)} + {a.f(0.5)}) as {a.dialect.bigint})"


def exact_sd(n: int, s1: int, s2: int, d: int) -> float | None:
    """Sample standard deviation from exact sums of the scaled integers."""
    if n < 2:
        return None
    var = (Fraction(s2) - Fraction(s1) * s1 / n) / (n - 1) / Fraction(10) ** (2 * d)
    return math.sqrt(float(var)) if var > 0 else 0.0


def cholesky(cov: list[list[float]]) -> list[list[float]]:
    """Lower-triangular L with L·Lᵀ = cov, in plain Python (the same bits on every machine); a
    column whose pivot is not positive (a column that is a combination of the others) is 0."""
    n = len(cov)
    lower = [[0.0] * n for _ in range(n)]
    for j in range(n):
        d = cov[j][j] - sum(lower[j][k] ** 2 for k in range(j))
        if d <= 1e-12 * max(cov[j][j], 1e-300):
            continue
        lower[j][j] = math.sqrt(d)
        for i in range(j + 1, n):
            lower[i][j] = (cov[i][j] - sum(lower[i][k] * lower[j][k] for k in range(j))) / lower[j][j]
    return lower


# ------------------------------------------------------------------------------------------
# SQL of each kind
# ------------------------------------------------------------------------------------------


@dataclass
class Context:
    """What a step needs from the binder: the dialect, how to quote and write literals, the
    column kinds at this point, the data statistics, and the step's place in the chain."""

    arith: Arith
    quote: Callable[[str], str]
    literal: Callable[[Any], str]
    as_text: Callable[[str, str], str]
    kinds: dict[str, str]
    index: int
    source: str
    base: tuple[str, ...]
    local_flag: str | None
    seed: int
    identity_ok: bool = True


def _part(ctx: Context, by: Sequence[str], x: str | None) -> list[str]:
    q = ctx.quote
    out = [f"t.{ctx.local_flag}"] if ctx.local_flag else []
    out += [f"t.{q(c)}" for c in by]
    if x is not None:
        out.append(f"case when {x} is null then 1 else 0 end")
    return out


def _over(part: Sequence[str], order: str | None = None) -> str:
    inner = f"partition by {', '.join(part)}" if part else ""
    if order:
        inner = f"{inner} order by {order}".strip()
    return f"over ({inner})"


def _finish(
    ctx: Context,
    chain: _Chain,
    name: str,
    cols: Sequence[str],
    exprs: Sequence[str],
    outs: Sequence[str],
    kinds_before: Sequence[str],
    join: str = "",
) -> LayeredStep:
    """The last layer: new values (kept as they were outside ``local`` rows) and the changed flag."""
    q, a = ctx.quote, ctx.arith
    news, final_cols, changed = [], [], []
    outs = list(outs)
    for i, (col, expr, before) in enumerate(zip(cols, exprs, kinds_before)):
        x = f"t.{q(col)}"
        if ctx.local_flag:
            keep = x
            if {outs[i], before} == {"integer", "float"}:
                # Rows outside ``local`` keep their value, so the column becomes a float one.
                outs[i], expr, keep = "float", a.to_double(expr), a.to_double(x)
            expr = f"case when t.{ctx.local_flag} then {expr} else {keep} end"
        out = outs[i]
        new = f"qar__new_{i}"
        news.append(new)
        final_cols.append((new, expr))
        if out in ("integer", "float") and before in ("integer", "float"):
            changed.append(a.dialect.differs(a.to_double(f"t.{new}"), a.to_double(x)))
        elif out == before:
            changed.append(a.dialect.differs(f"t.{new}", x))
        else:
            changed.append(a.dialect.differs(f"t.{new}", ctx.as_text(x, before)))
    final = f"qar_new{ctx.index}"
    chain.add(final_cols, join=join, name=final)
    ctes = render("perturb_layers.sql", a.dialect, layers=chain.layers, fence=a.fence)
    return LayeredStep(name, tuple(cols), tuple(outs), ctes, final, tuple(news), " or ".join(f"({c})" for c in changed))


def _draw_chain(ctx: Context, streams: Sequence[prng.Stream]) -> _Chain:
    chain = _Chain(f"qar_s{ctx.index}", ctx.source, ctx.base)
    lane_a, lane_b = prng.lane_exprs(ctx.arith, "t.qar__id")
    for cols in prng.round_layers(ctx.arith, streams, lane_a, lane_b):
        chain.add(cols)
    return chain


def pram_step(
    ctx: Context, name: str, column: str, opts: dict, categories: list[tuple[Any, int]], fail: Fail
) -> LayeredStep:
    """Invariant PRAM (keep with probability ``retention``, else draw from the column's own
    frequencies) or an explicit transition ``matrix``, on one integer draw D in [0, P²)."""
    a, q = ctx.arith, ctx.quote
    kind = ctx.kinds[column]
    x = f"t.{q(column)}"
    stream = prng.make_stream("p", opts.get("seed", ctx.seed), f"pram\x00{column}")
    chain = _draw_chain(ctx, [stream])
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
    return _finish(ctx, chain, name, [column], [expr], [kind], [kind])


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


def noise_step(
    ctx: Context, name: str, columns: Sequence[str], opts: dict, sds: Sequence[float], cov: list[list[float]] | None
) -> LayeredStep:
    """x + s·z per column, z standard normal (AS241) or uniform with variance 1; with
    ``correlated`` the noise vector is C·z with C·Cᵀ = sd²·Σ (Σ the columns' covariance)."""
    a, q = ctx.arith, ctx.quote
    seed = opts.get("seed", ctx.seed)
    streams = [prng.make_stream(f"n{i}", seed, f"noise\x00{c}") for i, c in enumerate(columns)]
    chain = _draw_chain(ctx, streams)
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
    return _finish(ctx, chain, name, list(columns), exprs, outs, before)


def micro_step(ctx: Context, name: str, column: str, opts: dict, scale: int) -> LayeredStep:
    """Univariate microaggregation: sorted values cut into groups of k consecutive ranks, the
    last group taking the remainder (k to 2k − 1 members), each value replaced by its group's
    mean (from exact integer sums) or median."""
    a, q = ctx.arith, ctx.quote
    x = f"t.{q(column)}"
    k = int(opts["k"])
    part = _part(ctx, opts.get("by", ()), x)
    chain = _Chain(f"qar_s{ctx.index}", ctx.source, ctx.base)
    chain.add(
        [
            ("qar__r", f"row_number() {_over(part, f'{x}, t.qar__id')}"),
            ("qar__cnt", f"count(*) {_over(part)}"),
        ]
    )
    start = f"(t.qar__r - 1 - {a.mod('t.qar__r - 1', k)})"
    last = f"(t.qar__cnt - {a.mod('t.qar__cnt', k)} - {k})"
    chain.add([("qar__g", f"case when t.qar__cnt < {k} then 0 when {start} > {last} then {last} else {start} end")])
    group = _over(part + ["t.qar__g"])
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
    if "digits" in opts:
        s = a.f(10.0 ** opts["digits"])
        value = f"floor({value} * {s} + {a.f(0.5)}) / {s}"
    expr = f"case when {x} is null then null else {value} end"
    return _finish(ctx, chain, name, [column], [expr], ["float"], [ctx.kinds[column]])


def mdav_step(
    ctx: Context,
    name: str,
    columns: Sequence[str],
    opts: dict,
    groups: Sequence[tuple[int, int]],
    scales: Sequence[int],
) -> LayeredStep:
    """Multivariate microaggregation: every row joins its MDAV group (``groups``: (row identity,
    group) pairs that :meth:`PerturbBinder.mdav_groups` computed) and each column takes its
    group's mean, from exact integer sums as in :func:`micro_step`. A row the grouping does not
    know (the table gained it since) gets NULL rather than its own value."""
    a, q = ctx.arith, ctx.quote
    chain = _Chain(f"qar_s{ctx.index}", ctx.source, ctx.base)
    if groups:
        join = render("mdav_groups.sql", a.dialect, groups=groups).strip()
        chain.add([("qar__g", "qar_m.qar__mg")], join=f"left join {join} on qar_m.qar__mid = t.qar__id")
    else:
        chain.add([("qar__g", "null")])
    group = _over(["t.qar__g"])
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
        if "digits" in opts:
            s = a.f(10.0 ** opts["digits"])
            value = f"floor({value} * {s} + {a.f(0.5)}) / {s}"
        exprs.append(f"case when t.{q(col)} is null or t.qar__g is null then null else {value} end")
    kinds = [ctx.kinds[c] for c in columns]
    return _finish(ctx, chain, name, list(columns), exprs, ["float"] * len(columns), kinds)


def _order(ctx: Context, x: str, kind: str) -> str:
    return ctx.arith.byte_order(x) if kind == "text" else x


def swap_step(ctx: Context, name: str, column: str, opts: dict) -> LayeredStep:
    """Rank swapping: ranks cut into blocks of w = max(2, ⌊p·n/100⌋) consecutive ranks (from a
    seeded offset), rows paired at random inside a block and each pair's values swapped, so
    no value moves more than w − 1 ranks and the column keeps its values."""
    a, q = ctx.arith, ctx.quote
    x = f"t.{q(column)}"
    kind = ctx.kinds[column]
    seed = opts.get("seed", ctx.seed)
    stream = prng.make_stream("w", seed, f"swap\x00{column}")
    offset_key = prng.stream_keys(seed, f"swap-offset\x00{column}", 1)[0]
    part = _part(ctx, opts.get("by", ()), x)
    p = Fraction(opts["p"]).limit_denominator(10**6)
    chain = _draw_chain(ctx, [stream])
    chain.add(
        [
            ("qar__d", prng.big_sql(f"t.{stream.left}", f"t.{stream.right}")),
            ("qar__r", f"row_number() {_over(part, f'{_order(ctx, x, kind)}, t.qar__id')}"),
            ("qar__cnt", f"count(*) {_over(part)}"),
        ]
    )
    width = f"cast(floor({a.to_double(f't.qar__cnt * {p.numerator}')} / {a.to_double(str(100 * p.denominator))}) as {a.dialect.bigint})"
    chain.add([("qar__w", f"case when {width} < 2 then 2 else {width} end")])
    shifted = f"(t.qar__r - 1 + {a.mod(str(offset_key), 't.qar__w')})"
    chain.add([("qar__blk", f"{shifted} - {a.mod(shifted, 't.qar__w')}")])
    block = part + ["t.qar__blk"]
    chain.add([("qar__s", f"row_number() {_over(block, 't.qar__d, t.qar__id')} - 1")])
    chain.add([("qar__pair", f"t.qar__s - {a.mod('t.qar__s', 2)}"), ("qar__odd", a.mod("t.qar__s", 2))])
    w = _over(block + ["t.qar__pair"])
    partner = (
        f"case when t.qar__odd = 0 then max(case when t.qar__odd = 1 then {x} end) {w} "
        f"else max(case when t.qar__odd = 0 then {x} end) {w} end"
    )
    chain.add([("qar__partner", partner)])
    expr = f"coalesce(t.qar__partner, {x})"
    return _finish(ctx, chain, name, [column], [expr], [kind], [kind])


def shuffle_step(ctx: Context, name: str, column: str, opts: dict) -> LayeredStep:
    """A random permutation of the column's values among its rows (within ``by`` groups): the
    row at identity rank i takes the value of the row at random rank i."""
    q = ctx.quote
    x = f"t.{q(column)}"
    kind = ctx.kinds[column]
    stream = prng.make_stream("h", opts.get("seed", ctx.seed), f"shuffle\x00{column}")
    part = _part(ctx, opts.get("by", ()), x)
    chain = _draw_chain(ctx, [stream])
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
    return _finish(ctx, chain, name, [column], ["qar_v.qar__v"], [kind], [kind], join=join)


def _sortable(v: Any) -> tuple:
    """A sort key for a ``by`` value of any type, NULL first (partitions only need an order)."""
    return (v is not None, str(type(v).__name__) if v is not None else "", v if v is not None else 0)


# ------------------------------------------------------------------------------------------
# Row identity
# ------------------------------------------------------------------------------------------


def identity_sql(
    a: Arith,
    quote: Callable[[str], str],
    key: str | None,
    key_kind: str | None,
    columns: Sequence[str],
    kinds: dict[str, str],
) -> str:
    """A bigint identity per row: the key itself (whole-number key), the key's rank in byte
    order (other keys), or without a key the row's rank over all columns in order, NULLs first,
    text by its bytes — identical rows tie, and any order among them gives the same release."""
    if key is not None:
        k = f"t.{quote(key)}"
        if key_kind == "integer":
            return f"cast({k} as {a.dialect.bigint})"
        return f"row_number() over (order by {a.byte_order(k) if key_kind == 'text' else k})"
    order = ", ".join(
        f"{a.byte_order(f't.{quote(c)}') if kinds[c] == 'text' else f't.{quote(c)}'} nulls first" for c in columns
    )
    return f"row_number() over (order by {order})"


# ------------------------------------------------------------------------------------------
# Binding a perturbative treatment to a table
# ------------------------------------------------------------------------------------------


class PerturbBinder:
    """Checks perturbative treatments against the table and builds their steps. ``query`` runs
    SQL on the executing engine; statistics are read from ``relation_sql`` (the source, less
    the rows ``not_null`` drops) and cached per treatment."""

    def __init__(
        self,
        query: Callable[[str], list[tuple]],
        relation_sql: str,
        source_arith: Arith,
        source_quote: Callable[[str], str],
        kinds: dict[str, str],
        not_null: Sequence[str] = (),
    ):
        self.query = query
        self.relation_sql = relation_sql
        self.src = source_arith
        self.sq = source_quote
        self.kinds = kinds
        self.not_null = tuple(not_null)
        self._cache: dict[tuple, Any] = {}

    def _where(self, extra: Sequence[str]) -> str:
        conds = [f"t.{self.sq(c)} is not null" for c in (*self.not_null, *extra)]
        return f" where {' and '.join(conds)}" if conds else ""

    def categories(self, column: str, fail: Fail) -> list[tuple[Any, int]]:
        key = ("cat", column, self.not_null)
        if key not in self._cache:
            x = f"t.{self.sq(column)}"
            rows = self.query(f"select {x}, count(*) from {self.relation_sql} as t{self._where([column])} group by {x}")
            if len(rows) > MAX_CATEGORIES:
                fail(
                    "column",
                    f"= {column!r} has {len(rows):,} distinct values, more than PRAM's {MAX_CATEGORIES:,}; "
                    'group them first (kind = "map" or "bands") or add noise instead',
                )
            self._cache[key] = sorted(((v, int(n)) for v, n in rows), key=lambda r: r[0])
        return self._cache[key]

    def max_abs(self, columns: Sequence[str]) -> dict[str, float | None]:
        need = [c for c in columns if ("max", c, self.not_null) not in self._cache]
        if need:
            a = self.src
            cols = ", ".join(f"max(abs({a.to_double(f't.{self.sq(c)}')}))" for c in need)
            row = self.query(f"select {cols} from {self.relation_sql} as t{self._where([])}")[0]
            for c, v in zip(need, row):
                self._cache[("max", c, self.not_null)] = None if v is None else float(v)
        return {c: self._cache[("max", c, self.not_null)] for c in columns}

    def scales(self, columns: Sequence[str], group: int = 1) -> list[int]:
        m = self.max_abs(columns)
        return [scale_for(m[c], self.kinds[c], group) for c in columns]

    def moments(self, columns: Sequence[str], complete: bool) -> Any:
        """(n, ΣX_i, ΣX_iX_j, scales) of the scaled integers X over rows where every column is
        present (``complete``) — or, with ``complete`` false, per column over its own rows
        (then n and the cross sums are per column: n is a list)."""
        key = ("mom", tuple(columns), complete, self.not_null)
        if key in self._cache:
            return self._cache[key]
        a, sq = self.src, self.sq
        scales = self.scales(columns)
        xs = [scaled_sql(a, f"t.{sq(c)}", d) for c, d in zip(columns, scales)]
        d_ = a.dialect
        if complete:
            parts = ["count(*)"] + [d_.exact_sum(x) for x in xs]
            parts += [d_.exact_sum(xs[i], xs[j]) for i in range(len(xs)) for j in range(i, len(xs))]
            row = self.query(f"select {', '.join(parts)} from {self.relation_sql} as t{self._where(columns)}")[0]
            n = int(row[0])
            s1 = [int(v or 0) for v in row[1 : 1 + len(xs)]]
            flat = iter(int(v or 0) for v in row[1 + len(xs) :])
            s2 = [[0] * len(xs) for _ in xs]
            for i in range(len(xs)):
                for j in range(i, len(xs)):
                    s2[i][j] = s2[j][i] = next(flat)
            out: Any = (n, s1, s2, scales)
        else:
            parts = []
            for c, x in zip(columns, xs):
                parts += [f"count(t.{sq(c)})", d_.exact_sum(x), d_.exact_sum(x, x)]
            row = self.query(f"select {', '.join(parts)} from {self.relation_sql} as t{self._where([])}")[0]
            vals = [int(v or 0) for v in row]
            out = (
                [vals[3 * i] for i in range(len(xs))],
                [vals[3 * i + 1] for i in range(len(xs))],
                [[vals[3 * i + 2]] for i in range(len(xs))],
                scales,
            )
        self._cache[key] = out
        return out

    def mdav_groups(
        self, identity: str, columns: Sequence[str], by: Sequence[str], local: Sequence[str] | None, k: int, fail: Fail
    ) -> list[tuple[int, int]]:
        """(row identity, group) of every row MDAV groups: the rows of each ``by`` group (and
        NULL pattern of ``columns``; only the singletons on ``local`` when given) are grouped
        on their present columns, standardised, with ties in identity order."""
        key = ("mdav", identity, tuple(columns), tuple(by), tuple(local or ()), k, self.not_null)
        if key in self._cache:
            return self._cache[key]
        sq = self.sq
        flag = "1"
        if local:
            flag = (
                f"case when count(*) over (partition by {', '.join(f't.{sq(c)}' for c in local)}) = 1 then 1 else 0 end"
            )
        picked = ", ".join(f"t.{sq(c)}" for c in (*columns, *by))
        inner = (
            f"select {identity} as qar__id, {flag} as qar__in, {picked} from {self.relation_sql} as t{self._where([])}"
        )
        n = int(self.query(f"select count(*) from ({inner}) as t where t.qar__in = 1")[0][0])
        if n > MDAV_MAX_ROWS:
            fail(
                "method",
                f'= "mdav" would group {n:,} rows, more than its {MDAV_MAX_ROWS:,} (MDAV compares every row with '
                "every other); microaggregate one column at a time (leave out method) or split the table with by",
            )
        rows = self.query(f"select * from ({inner}) as t where t.qar__in = 1 order by t.qar__id")
        width = len(columns)
        parts: dict[tuple, list[tuple]] = {}
        for r in rows:
            values = r[2 : 2 + width]
            pattern = tuple(v is None for v in values)
            parts.setdefault((tuple(_sortable(v) for v in r[2 + width :]), pattern), []).append(r)
        out: list[tuple[int, int]] = []
        base = 0
        for (_, pattern), members in sorted(parts.items()):
            present = [i for i, missing in enumerate(pattern) if not missing]
            ids = [int(r[0]) for r in members]
            if present:
                x = np.array([[float(r[2 + i]) for i in present] for r in members], dtype=np.float64)
                groups = mdav(standardise(x), k)
            else:
                groups = np.zeros(len(members), dtype=np.int64)  # nothing to average: kept NULL
            out += [(i, base + int(g)) for i, g in zip(ids, groups)]
            base += int(groups.max()) + 1 if len(groups) else 0
        self._cache[key] = out
        return out

    def noise_params(self, columns: Sequence[str], opts: dict) -> tuple[list[float], list[list[float]] | None]:
        """Per-column noise sd (literal) and, for correlated noise, the covariance Σ."""
        if opts.get("correlated"):
            n, s1, s2, scales = self.moments(columns, complete=True)
            cov = [[0.0] * len(columns) for _ in columns]
            if n >= 2:
                for i in range(len(columns)):
                    for j in range(len(columns)):
                        c = (Fraction(s2[i][j]) - Fraction(s1[i]) * s1[j] / n) / (n - 1)
                        cov[i][j] = float(c / Fraction(10) ** (scales[i] + scales[j]))
            return [], cov
        if "sd_abs" in opts:
            return [float(opts["sd_abs"])] * len(columns), None
        ns, s1, s2, scales = self.moments(columns, complete=False)
        sds = []
        for i in range(len(columns)):
            sd = exact_sd(ns[i], s1[i], s2[i][0], scales[i])
            sds.append(float(opts["sd"]) * (sd or 0.0))
        return sds, None
