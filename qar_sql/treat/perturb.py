"""What the perturbative treatments share (PRAM, noise, microaggregation, rank swapping and
shuffling: the perturbative half of the lecture's table of methods; sdcMicro's ``pram``,
``addNoise``, ``microaggregation``, ``rankSwap``). Each kind's checks and SQL are its own module
of :mod:`qar_sql.treat.kinds`; here are the layers they are written in, the exact statistics they
read from the data and the row identity their draws are a function of.

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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from qar_sql.engines.render import render
from qar_sql.errors import shown
from qar_sql.stats.mdav import mdav, standardise
from qar_sql.treat import prng
from qar_sql.treat.prng import Arith

#: Most rows one MDAV run groups: MDAV costs O(n²·p / k) and its grouping enters the SQL as a
#: literal list of (row identity, group) pairs, so larger tables are refused with a hint.
MDAV_MAX_ROWS = 20_000
#: Most categories PRAM writes into one CASE (a column with more is not categorical).
MAX_CATEGORIES = 1000
#: Float columns are summed as integers x·10^d with |x|·10^d at most this, so sums are exact
#: (and the same on every engine) and sums of squares fit DECIMAL(38, 0).
SCALE_LIMIT = 10**12

#: ``fail(key, message)`` raises the treatments file's error naming ``treatments.NAME.key``.
Fail = Callable[[str | None, str], Any]


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


class Chain:
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
    kinds: dict[str, str]
    index: int
    source: str
    base: tuple[str, ...]
    local_flag: str | None
    seed: int


def partition(ctx: Context, by: Sequence[str], x: str | None) -> list[str]:
    q = ctx.quote
    out = [f"t.{ctx.local_flag}"] if ctx.local_flag else []
    out += [f"t.{q(c)}" for c in by]
    if x is not None:
        out.append(f"case when {x} is null then 1 else 0 end")
    return out


def over(part: Sequence[str], order: str | None = None) -> str:
    inner = f"partition by {', '.join(part)}" if part else ""
    if order:
        inner = f"{inner} order by {order}".strip()
    return f"over ({inner})"


def finish(
    ctx: Context,
    chain: Chain,
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
        changed.append(a.dialect.differs(*a.comparable(f"t.{new}", out, x, before)))
    final = f"qar_new{ctx.index}"
    chain.add(final_cols, join=join, name=final)
    ctes = render("perturb_layers.sql", a.dialect, layers=chain.layers, fence=a.fence)
    return LayeredStep(name, tuple(cols), tuple(outs), ctes, final, tuple(news), " or ".join(f"({c})" for c in changed))


def draw_chain(ctx: Context, streams: Sequence[prng.Stream]) -> Chain:
    chain = Chain(f"qar_s{ctx.index}", ctx.source, ctx.base)
    lane_a, lane_b = prng.lane_exprs(ctx.arith, "t.qar__id")
    for cols in prng.round_layers(ctx.arith, streams, lane_a, lane_b):
        chain.add(cols)
    return chain


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
                    f"= {shown(column)} has {len(rows):,} distinct values, more than PRAM's {MAX_CATEGORIES:,}; "
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
