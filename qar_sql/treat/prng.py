"""A pseudo-random function that every SQL engine computes to the same bit.

Perturbative treatments (PRAM, noise, swapping, shuffling) need random draws, and the same seed
on the same table must give the same release on DuckDB, PostgreSQL and any later engine. The
engines' own ``random()`` differ and cannot be seeded per row, so the draws are a *function* of
(row identity, seed, stream), written in SQL with integer ``+``, ``*`` and ``%`` only, on values
that stay below 2^62 (no engine overflows a signed 64-bit integer), and with IEEE-754 double
``+ - * /`` and ``sqrt`` (correctly rounded everywhere) for the normal deviates — never ``ln``,
``exp`` or ``cos``, whose last bit differs between maths libraries.

Definition (docs/perturbative.md repeats it):

* P = 2^31 − 1 and Q = 2^31 − 19 are primes. A row's integer identity ``id`` gives two lanes
  a = id mod P and b = id mod Q (non-negative remainders), distinct for ids less than P·Q ≈ 4.6e18
  apart.
* A stream (a treatment's kind, column and purpose) and the seed give 2 + 2·ROUNDS keys k_i in
  [0, P): the first 8 bytes, big-endian, of SHA-256("qar-prng-1\\0{seed}\\0{stream}\\0{i}"),
  modulo P. They are computed here and written into the SQL as literals.
* L = (a + k_0) mod P, R = (b + k_1) mod P, then ROUNDS = 6 Feistel rounds over Z_P:
  t = (R + k_{2j}) mod P; (L, R) ← (R, (L + (t·t + k_{2j+1}) mod P) mod P).
  Every product is of two numbers below 2^31.
* A uniform in (0, 1) is u = (2R + 1) / (2P), one exact-operand IEEE division; a uniform
  integer in [0, 2^62) is D = L·P + R (draws against thresholds are done on D in integers).
* A standard normal deviate is Φ⁻¹(u) by Wichura's AS241 (PPND16). Its tails need ln; here ln is
  computed from the integer m = min(2R + 1, 2P − 2R − 1) as e·ln 2 + 2·atanh(s), s = (f − 1)/(f + 1),
  f = m / 2^e ∈ [1/√2, √2), e chosen by integer comparisons, atanh by its odd series to s^23.

Portability: no intermediate value reaches 2^62 ((P − 1)² + 2P < 2^62; L·P + R < P²), so the
integer part never relies on 64-bit wraparound — an engine that raises on overflow (MariaDB),
turns it into a float (SQLite) or widens the type by its own rules (ClickHouse: UInt32 · UInt32
is UInt64) computes the same numbers; ``%`` only ever sees non-negative operands after the
first lane step (whose sign convention is then undone by + P). tests/treat/test_prng.py holds
DuckDB, PostgreSQL, SQLite, ClickHouse (chdb) and MariaDB to the reference bit for bit
(Spark 4, casting to double, was checked by hand the same way).

Four rounds already pass the difference and serial tests in tests/treat/test_prng.py; six leave a
margin. The draws are not cryptographic: whoever knows the seed (or reads the round keys in the
emitted SQL) can recompute the noise, so keep the seed and the view definition private.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from qar_sql.engines.dialects import Dialect

P = 2_147_483_647  # 2^31 - 1
Q = 2_147_483_629  # 2^31 - 19
ROUNDS = 6


def stream_keys(seed: int, stream: str, n: int = 2 + 2 * ROUNDS) -> list[int]:
    """The ``n`` round keys of ``stream`` under ``seed``."""
    out = []
    for i in range(n):
        digest = hashlib.sha256(f"qar-prng-1\x00{int(seed)}\x00{stream}\x00{i}".encode()).digest()
        out.append(int.from_bytes(digest[:8], "big") % P)
    return out


# ------------------------------------------------------------------------------------------
# Reference implementation (numpy int64 / float64): the tests hold the SQL to it bit for bit.
# ------------------------------------------------------------------------------------------


def lanes(ids) -> tuple[np.ndarray, np.ndarray]:
    ids = np.asarray(ids, dtype=np.int64)
    return (ids % P + P) % P, (ids % Q + Q) % Q


def draw(ids, seed: int, stream: str) -> tuple[np.ndarray, np.ndarray]:
    """(L, R) of every id: two integers in [0, P)."""
    a, b = lanes(ids)
    k = stream_keys(seed, stream)
    left, right = (a + k[0]) % P, (b + k[1]) % P
    for j in range(1, ROUNDS + 1):
        t = (right + k[2 * j]) % P
        left, right = right, (left + (t * t + k[2 * j + 1]) % P) % P
    return left, right


def uniform(right: np.ndarray) -> np.ndarray:
    return (2 * np.asarray(right, dtype=np.int64) + 1).astype(np.float64) / float(2 * P)


def big(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """D = L·P + R, uniform on [0, P²)."""
    return np.asarray(left, dtype=np.int64) * P + np.asarray(right, dtype=np.int64)


def threshold(probability: float | Fraction) -> int:
    """The integer t with P(D < t) = probability, rounded down (exact rational arithmetic)."""
    return math.floor(Fraction(probability) * P * P)


# AS241 (Wichura 1988, PPND16) coefficients, as published.
_A = (
    3.387132872796366608, 133.14166789178437745, 1971.5909503065514427, 13731.693765509461125, 45921.953931549871457,
    67265.770927008700853, 33430.575583588128105, 2509.0809287301226727,
)  # fmt: skip
_B = (
    1.0, 42.313330701600911252, 687.1870074920579083, 5394.1960214247511077, 21213.794301586595867,
    39307.89580009271061, 28729.085735721942674, 5226.4952788528545610,
)  # fmt: skip
_C = (
    1.42343711074968357734, 4.6303378461565452959, 5.7694972214606914055, 3.64784832476320460504,
    1.27045825245236838258, 0.24178072517745061177, 0.0227238449892691845833, 7.7454501427834140764e-4,
)  # fmt: skip
_D = (
    1.0, 2.05319162663775882187, 1.6763848301838038494, 0.68976733498510000455, 0.14810397642748007459,
    0.0151986665636164571966, 5.475938084995344946e-4, 1.05075007164441684324e-9,
)  # fmt: skip
_E = (
    6.6579046435011037772, 5.4637849111641143699, 1.7848265399172913358, 0.29656057182850489123,
    0.026532189526576123093, 0.0012426609473880784386, 2.71155556874348757815e-5, 2.01033439929228813265e-7,
)  # fmt: skip
_F = (
    1.0, 0.59983220655588793769, 0.13692988092273580531, 0.0148753612908506148525, 7.868691311456132591e-4,
    1.8463183175100546818e-5, 1.4215117583164458887e-7, 2.04426310338993978564e-15,
)  # fmt: skip
LN2 = math.log(2.0)
LN_2P = math.log(2.0 * P)
#: 1/(2k+1) for the atanh series, k = 1 .. 11.
_ATANH = tuple(1.0 / (2 * k + 1) for k in range(1, 12))
#: e for m >= _E_THRESHOLD[e]: the smallest m with m·√2 >= 2^e, i.e. 2·m² >= 4^e.
_E_MAX = 33
_E_THRESHOLD = tuple(math.isqrt((4**e + 1) // 2 - 1) + 1 if e else 1 for e in range(_E_MAX))


def _check_thresholds() -> None:
    for e, c in enumerate(_E_THRESHOLD):
        assert e == 0 or (2 * c * c >= 4**e and 2 * (c - 1) ** 2 < 4**e)


_check_thresholds()


def _poly(coefs: Sequence[float], x):
    """c0 + c1·x + … by Horner, highest power first — the SQL nests the same way."""
    acc = coefs[-1]
    for c in reversed(coefs[:-1]):
        acc = acc * x + c
    return acc


def normal(right: np.ndarray) -> np.ndarray:
    """Φ⁻¹(u) of every draw, in the exact operation order of the SQL."""
    r = np.asarray(right, dtype=np.int64)
    u = uniform(r)
    q = u - 0.5
    m = np.minimum(2 * r + 1, 2 * P - 2 * r - 1)
    e = np.zeros(len(m), dtype=np.int64)
    for k in range(1, _E_MAX):
        e = np.where(m >= _E_THRESHOLD[k], k, e)
    f = m.astype(np.float64) * np.array([2.0**-k for k in range(_E_MAX)])[e]
    s = (f - 1.0) / (f + 1.0)
    s2 = s * s
    series = _poly((1.0,) + _ATANH, s2)
    lnm = e.astype(np.float64) * LN2 + 2.0 * s * series
    rr = np.sqrt(LN_2P - lnm)
    qq = 0.180625 - q * q
    central = q * _poly(_A, qq) / _poly(_B, qq)
    t1 = rr - 1.6
    t2 = rr - 5.0
    tail = np.where(rr <= 5.0, _poly(_C, t1) / _poly(_D, t1), _poly(_E, t2) / _poly(_F, t2))
    tail = np.where(q < 0.0, -tail, tail)
    return np.where(np.abs(q) <= 0.425, central, tail)


# ------------------------------------------------------------------------------------------
# SQL
# ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Arith:
    """SQL spellings for one dialect: the float type, exact float literals, the fence."""

    dialect: Dialect

    @property
    def double(self) -> str:
        return self.dialect.double

    @property
    def fence(self) -> str:
        return self.dialect.fence

    def byte_order(self, expr: str) -> str:
        return expr + self.dialect.byte_order

    def mod(self, a: str, b: str | int) -> str:
        # BigQuery has no % operator; everywhere else % on integers truncates toward zero
        # like MOD, and every operand here is non-negative.
        if self.dialect.name == "bigquery":
            return f"mod({a}, {b})"
        return f"(({a}) % {b})"

    def f(self, x: float) -> str:
        """A double literal parsed from its shortest round-trip text: every engine parses
        decimal text to the nearest double, so all get the same bits (a bare 0.1 would be a
        DECIMAL on some engines)."""
        return f"cast('{float(x)!r}' as {self.double})"

    def to_double(self, expr: str) -> str:
        return f"cast({expr} as {self.double})"

    def as_text(self, expr: str, kind: str) -> str:
        return expr if kind == "text" else f"cast({expr} as {self.dialect.text})"

    def comparable(self, a: str, a_kind: str, b: str, b_kind: str) -> tuple[str, str]:
        """``a`` and ``b``, a column's values before and after a treatment (of kinds integer, float,
        text or other), as SQL that compares them: as doubles when both are numbers, as they are
        when of one kind, else as text."""
        if a_kind in ("integer", "float") and b_kind in ("integer", "float"):
            return self.to_double(a), self.to_double(b)
        if a_kind == b_kind:
            return a, b
        return self.as_text(a, a_kind), self.as_text(b, b_kind)

    def poly(self, coefs: Sequence[float], x: str) -> str:
        acc = self.f(coefs[-1])
        for c in reversed(coefs[:-1]):
            acc = f"({acc} * {x} + {self.f(c)})"
        return acc


def lane_exprs(a: Arith, ident: str) -> tuple[str, str]:
    """SQL for lanes a and b of a bigint identity expression."""
    return (a.mod(f"{a.mod(ident, P)} + {P}", P), a.mod(f"{a.mod(ident, Q)} + {Q}", Q))


@dataclass(frozen=True)
class Stream:
    """One named stream of draws: its columns are ``qar__l_<tag>`` and ``qar__r_<tag>``."""

    tag: str
    keys: tuple[int, ...]

    @property
    def left(self) -> str:
        return f"qar__l_{self.tag}"

    @property
    def right(self) -> str:
        return f"qar__r_{self.tag}"


def make_stream(tag: str, seed: int, label: str) -> Stream:
    return Stream(tag, tuple(stream_keys(seed, label)))


def round_layers(a: Arith, streams: Sequence[Stream], lane_a: str = "t.qar__a", lane_b: str = "t.qar__b"):
    """ROUNDS layers of (alias, expression) lists computing every stream's (L, R). Layer j
    reads the previous layer's columns through the row alias ``t``."""
    layers = []
    for j in range(1, ROUNDS + 1):
        cols = []
        for s in streams:
            k = s.keys
            if j == 1:
                left = a.mod(f"{lane_a} + {k[0]}", P)
                right = a.mod(f"{lane_b} + {k[1]}", P)
            else:
                left, right = f"t.{s.left}", f"t.{s.right}"
            t = a.mod(f"{right} + {k[2 * j]}", P)
            cols.append((s.left, right if j > 1 else f"({right})"))
            cols.append((s.right, a.mod(f"{left} + {a.mod(f'{t} * {t} + {k[2 * j + 1]}', P)}", P)))
        layers.append(cols)
    return layers


def uniform_sql(a: Arith, right: str) -> str:
    return f"{a.to_double(f'2 * {right} + 1')} / {a.to_double(str(2 * P))}"


def big_sql(left: str, right: str) -> str:
    return f"({left} * {P} + {right})"


def normal_layers(a: Arith, right: str, tag: str) -> tuple[list[list[tuple[str, str]]], str]:
    """Layers computing Φ⁻¹(u) of the draw column ``right`` (a column of the first layer's
    input), and the name of the resulting column. AS241 references its intermediate values
    many times, so each is computed in a layer of its own (see ``Dialect.fence``)."""
    q, m, e, fcol, s, s2, rr, qq, z = (f"qar__{x}_{tag}" for x in ("q", "m", "e", "f", "s", "s2", "rr", "qq", "z"))
    layer1 = [
        (q, f"{uniform_sql(a, right)} - {a.f(0.5)}"),
        (m, f"case when 2 * {right} + 1 < {P} then 2 * {right} + 1 else {2 * P} - 2 * {right} - 1 end"),
    ]
    e_case = " ".join(f"when t.{m} >= {_E_THRESHOLD[k]} then {k}" for k in range(_E_MAX - 1, 0, -1))
    f_case = " ".join(
        f"when t.{m} >= {_E_THRESHOLD[k]} then {a.to_double(f't.{m}')} * {a.f(2.0**-k)}"
        for k in range(_E_MAX - 1, 0, -1)
    )
    layer2 = [(e, f"case {e_case} else 0 end"), (fcol, f"case {f_case} else {a.to_double(f't.{m}')} end")]
    s_expr = f"((t.{fcol} - {a.f(1.0)}) / (t.{fcol} + {a.f(1.0)}))"
    layer3 = [(s, s_expr), (s2, f"{s_expr} * {s_expr}")]
    series = a.poly((1.0,) + _ATANH, f"t.{s2}")
    lnm = f"({a.to_double(f't.{e}')} * {a.f(LN2)} + {a.f(2.0)} * t.{s} * {series})"
    layer4 = [(rr, f"sqrt({a.f(LN_2P)} - {lnm})"), (qq, f"{a.f(0.180625)} - t.{q} * t.{q}")]
    t1, t2 = f"(t.{rr} - {a.f(1.6)})", f"(t.{rr} - {a.f(5.0)})"
    tail = (
        f"(case when t.{rr} <= {a.f(5.0)} then {a.poly(_C, t1)} / {a.poly(_D, t1)} "
        f"else {a.poly(_E, t2)} / {a.poly(_F, t2)} end)"
    )
    central = f"t.{q} * {a.poly(_A, f't.{qq}')} / {a.poly(_B, f't.{qq}')}"
    layer5 = [
        (z, f"case when abs(t.{q}) <= {a.f(0.425)} then {central} when t.{q} < {a.f(0.0)} then -{tail} else {tail} end")
    ]
    return [layer1, layer2, layer3, layer4, layer5], z
