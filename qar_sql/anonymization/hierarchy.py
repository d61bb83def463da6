"""Generalization hierarchies: for one quasi-identifier column, what each value becomes at each
level of generalization (level 0 is the value itself, the last level usually ``*``).

Two kinds, one interface (:class:`Hierarchy`):

* **ARX's hierarchy CSV** (:func:`read_hierarchy`, :func:`read_hierarchy_dir`): one row per
  original value, column ``i`` of a row is the value at level ``i`` (column 0 the value itself),
  ``;`` between fields by default. ARX names the file of a column ``<name>_hierarchy_<column>.csv``
  (``adult_hierarchy_age.csv``), which :func:`read_hierarchy_dir` reads for every column.
* **Intervals for numbers without a file** (:class:`IntervalHierarchy`,
  :func:`read_interval_toml`): level ``i`` (1 ≤ i ≤ len(widths)) puts a number in the band of
  ``widths[i-1]`` that holds it (``30-39`` for integers, ``[30, 40)`` otherwise); the last level is
  ``*``. Optional bottom/top coding: at every level above 0, values below ``bottom`` become
  ``<bottom`` and values at or above ``top`` become ``>=top``. A TOML table defines them::

      [hierarchies.age]
      widths = [5, 10, 20]      # then "*"
      bottom = 18               # optional: "<18"
      top = 90                  # optional: ">=90"

Interface of every :class:`Hierarchy` ``h``:

* ``h.column``, ``h.height`` (number of levels, level 0 included: ARX's age hierarchy has 5),
  ``h.labels`` (one label per level, e.g. ``"level 2: 10-year bands"`` or ``"level 1 of
  adult_hierarchy_age.csv"``) and ``h.label(level)``;
* ``h.generalize(value, level) -> str``: one value (as the database shows it as text) at a level;
* ``h.mapping(level, values) -> dict[str, str]``: value → generalized value for the given values
  (those of the table; one small ``SELECT DISTINCT``): what a VALUES list or temp join table holds;
* ``h.sql(level, expression, dialect) -> str``: the same as an SQL expression of the column's text
  (a CASE for a CSV hierarchy, arithmetic for intervals), every literal through the dialect;
* ``h.check(counts)``: ``counts`` maps each value of the column (text, None for NULL) to its
  number of rows; raises :class:`HierarchyError` — one sentence naming the first value missing from
  the hierarchy, the column, how many rows hold it and the fix — when any is missing.

Values are compared as text (the database casts the column to text), so a CSV hierarchy of an
integer column lists ``39``, not ``39.0``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qar_sql import user_files
from qar_sql.errors import SourceNotFound, UsageError, shown
from qar_sql.user_text import unsafe_text

#: The label of the root level of every hierarchy (ARX's convention).
ROOT = "*"


class HierarchyError(UsageError):
    """A hierarchy file or definition is malformed, or does not cover a value of its column."""


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


class Hierarchy:
    """What a column's values become at each level (see the module docstring for the interface)."""

    column: str
    #: Where it was defined (a file name, or "intervals"), for labels and messages.
    source: str

    @property
    def height(self) -> int:  # pragma: no cover - interface
        raise NotImplementedError

    @property
    def labels(self) -> tuple[str, ...]:  # pragma: no cover - interface
        raise NotImplementedError

    def label(self, level: int) -> str:
        """The label of one level (``"level 2: 10-year bands"``)."""
        self._level(level)
        return self.labels[level]

    def generalize(self, value: str | None, level: int) -> str | None:  # pragma: no cover - interface
        raise NotImplementedError

    def covers(self, value: str | None) -> bool:  # pragma: no cover - interface
        raise NotImplementedError

    def how_to_fix(self) -> str:  # pragma: no cover - interface
        raise NotImplementedError

    def mapping(self, level: int, values: Iterable[str | None]) -> dict[str | None, str | None]:
        """value → generalized value at ``level``, for the given values (those of the table)."""
        self._level(level)
        return {v: self.generalize(v, level) for v in values}

    def sql(self, level: int, expression: str, dialect: Any) -> str:  # pragma: no cover - interface
        raise NotImplementedError

    def check(self, counts: Mapping[str | None, int]) -> None:
        """Raise :class:`HierarchyError` naming the first value of ``counts`` (value → rows; the
        values as text, None for NULL) that the hierarchy does not cover."""
        missing = [(v, n) for v, n in counts.items() if not self.covers(v)]
        if not missing:
            return
        missing.sort(key=lambda vn: (-vn[1], "" if vn[0] is None else vn[0]))
        value, rows = missing[0]
        shown = "NULL" if value is None else repr(value)
        others = ""
        if len(missing) > 1:
            more = sum(n for _, n in missing[1:])
            others = f" (and {_plural(len(missing) - 1, 'other value')} in {_plural(more, 'row')})"
        raise HierarchyError(
            f"value {shown} of column {self.column!r} ({_plural(rows, 'row')}) is missing from its "
            f"hierarchy {self.source}{others}; {self.how_to_fix()}"
        )

    def _level(self, level: int) -> None:
        if not isinstance(level, int) or isinstance(level, bool) or not 0 <= level < self.height:
            raise HierarchyError(
                f"level {level!r} of column {self.column!r} does not exist; its hierarchy has levels 0 to {self.height - 1}"
            )


@dataclass(frozen=True, eq=False)
class CsvHierarchy(Hierarchy):
    """ARX's hierarchy table: ``rows[i][j]`` is value ``i`` at level ``j`` (``rows[i][0]`` the value)."""

    column: str
    rows: tuple[tuple[str, ...], ...]
    source: str = "table"
    _index: dict[str, tuple[str, ...]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.rows:
            raise HierarchyError(
                f"the hierarchy {self.source} of column {self.column!r} has no rows; give one row per value"
            )
        width = len(self.rows[0])
        index: dict[str, tuple[str, ...]] = {}
        for i, row in enumerate(self.rows, 1):
            if len(row) != width:
                raise HierarchyError(
                    f"row {i} of the hierarchy {self.source} of column {self.column!r} has {len(row)} levels where "
                    f"row 1 has {width}; give every value the same number of levels"
                )
            if row[0] in index:
                raise HierarchyError(
                    f"value {row[0]!r} appears twice in the hierarchy {self.source} of column {self.column!r} "
                    f"(row {i}); keep one row per value"
                )
            index[row[0]] = row
        self._check_monotone()
        object.__setattr__(self, "_index", index)

    def _check_monotone(self) -> None:
        # A group split at a higher level makes the lattice non-monotone: a node passing k would
        # not imply its successors pass, and the search's predictive tagging would be wrong.
        for level in range(1, len(self.rows[0]) - 1):
            parent: dict[str, str] = {}
            for i, row in enumerate(self.rows, 1):
                seen = parent.setdefault(row[level], row[level + 1])
                if seen != row[level + 1]:
                    raise HierarchyError(
                        f"group {row[level]!r} at level {level} of the hierarchy {self.source} of column "
                        f"{self.column!r} becomes both {seen!r} and {row[level + 1]!r} at level {level + 1} "
                        f"(row {i}); give each group one parent, as a hierarchy needs"
                    )

    @property
    def height(self) -> int:
        return len(self.rows[0])

    @property
    def labels(self) -> tuple[str, ...]:
        last = self.height - 1
        out = []
        for level in range(self.height):
            what = "original values" if level == 0 else "suppressed (*)" if level == last and self._root() else ""
            distinct = len({row[level] for row in self.rows})
            tail = f": {what}" if what else f": {_plural(distinct, 'group')}"
            out.append(f"level {level}{tail}")
        return tuple(out)

    def _root(self) -> bool:
        return all(row[-1] == ROOT for row in self.rows)

    @property
    def values(self) -> tuple[str, ...]:
        """The original values (level 0), in file order."""
        return tuple(row[0] for row in self.rows)

    def covers(self, value: str | None) -> bool:
        return value is not None and value in self._index

    def generalize(self, value: str | None, level: int) -> str | None:
        self._level(level)
        if value is None or value not in self._index:
            self.check({value: 1})
        return self._index[value][level]  # type: ignore[index]

    def how_to_fix(self) -> str:
        return (
            "add a row for it to the hierarchy (the value, then what it becomes at each level), "
            "or leave its rows out of the table"
        )

    def sql(self, level: int, expression: str, dialect: Any) -> str:
        """A CASE over the text ``expression`` giving the level's value (NULL for a value the
        hierarchy lacks, which :meth:`check` refuses first)."""
        self._level(level)
        if level == 0:
            return expression
        whens = " ".join(f"when {dialect.literal(row[0])} then {dialect.literal(row[level])}" for row in self.rows)
        return f"case {expression} {whens} end"


def _number(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        x = float(text)
    except ValueError:
        return None
    return x if math.isfinite(x) else None


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


@dataclass(frozen=True, eq=False)
class IntervalHierarchy(Hierarchy):
    """Numbers in bands of growing width: level ``i`` (1 ≤ i ≤ len(widths)) is the band of width
    ``widths[i-1]`` starting at a multiple of it (offset by ``origin``, by default ``bottom``), the
    last level ``*``.
    Below ``bottom`` a value becomes ``<bottom``, at or above ``top`` ``>=top`` (levels ≥ 1).
    Integer values and integer widths give inclusive labels (``30-39``), else ``[30, 40)``."""

    column: str
    widths: tuple[float, ...]
    bottom: float | None = None
    top: float | None = None
    #: Where bands start (a band begins at origin + a multiple of its width); None: at
    #: ``bottom`` when given (so the first band above the bottom code is whole), else 0.
    origin: float | None = None
    source: str = "intervals"

    def __post_init__(self) -> None:
        if self.origin is None:
            object.__setattr__(self, "origin", self.bottom if self.bottom is not None else 0)
        widths = tuple(self.widths)
        object.__setattr__(self, "widths", widths)
        if not widths or not all(isinstance(w, int | float) and not isinstance(w, bool) and w > 0 for w in widths):
            raise HierarchyError(
                f"the interval widths {shown(list(widths))} of column {self.column!r} must be positive numbers, e.g. [5, 10, 20]"
            )
        if any(b < a for a, b in zip(widths, widths[1:])):
            raise HierarchyError(
                f"the interval widths {shown(list(widths))} of column {self.column!r} must not shrink from level to level "
                "(each level generalizes the one below); sort them, e.g. [5, 10, 20]"
            )
        for a, b in zip(widths, widths[1:]):
            if abs(b / a - round(b / a)) > 1e-9:
                raise HierarchyError(
                    f"the interval widths {shown(list(widths))} of column {self.column!r} must each be a multiple of the "
                    f"one before ({b!r} is not a multiple of {a!r}), so that each band lies in one band of the next "
                    "level; e.g. [5, 10, 20]"
                )
        if self.bottom is not None and self.top is not None and self.bottom >= self.top:
            raise HierarchyError(f"bottom = {self.bottom!r} of column {self.column!r} must be below top = {self.top!r}")

    @property
    def _o(self) -> float:
        return self.origin or 0

    @property
    def height(self) -> int:
        return len(self.widths) + 2

    @property
    def labels(self) -> tuple[str, ...]:
        out = ["level 0: original values"]
        for i, w in enumerate(self.widths, 1):
            coding = []
            if self.bottom is not None:
                coding.append(f"<{_fmt(self.bottom)}")
            if self.top is not None:
                coding.append(f">={_fmt(self.top)}")
            extra = f" ({', '.join(coding)} coded)" if coding else ""
            out.append(f"level {i}: {_fmt(w)}-wide bands{extra}")
        out.append(f"level {len(self.widths) + 1}: suppressed (*)")
        return tuple(out)

    def covers(self, value: str | None) -> bool:
        return _number(value) is not None

    def how_to_fix(self) -> str:
        return "interval levels need numbers; give the column an ARX hierarchy file instead, or clean the value"

    def _band(self, x: float, width: float) -> str:
        if self.bottom is not None and x < self.bottom:
            return f"<{_fmt(self.bottom)}"
        if self.top is not None and x >= self.top:
            return f">={_fmt(self.top)}"
        lo = math.floor((x - self._o) / width) * width + self._o
        hi = lo + width
        if float(width).is_integer() and float(self._o).is_integer() and float(x).is_integer():
            # integer values: the band [lo, hi) holds lo .. hi-1, written ARX's way
            return f"{_fmt(lo)}-{_fmt(hi - 1)}"
        return f"[{_fmt(lo)}, {_fmt(hi)})"

    def generalize(self, value: str | None, level: int) -> str | None:
        self._level(level)
        x = _number(value)
        if x is None:
            self.check({value: 1})
        if level == 0:
            return value
        if level == self.height - 1:
            return ROOT
        return self._band(x, self.widths[level - 1])  # type: ignore[arg-type]

    def sql(self, level: int, expression: str, dialect: Any) -> str:
        """The level's label from the text ``expression`` as arithmetic (integer values; the
        labels equal :meth:`generalize`'s for whole numbers and whole widths)."""
        self._level(level)
        if level == 0:
            return expression
        if level == self.height - 1:
            return dialect.literal(ROOT)
        w = self.widths[level - 1]
        x = f"cast({expression} as {dialect.double})"
        lo = f"(floor(({x} - {_fmt(self._o)}) / {_fmt(w)}) * {_fmt(w)} + {_fmt(self._o)})"
        band = (
            f"cast(cast({lo} as {dialect.bigint}) as {dialect.text}) || '-' || "
            f"cast(cast({lo} + {_fmt(w)} - 1 as {dialect.bigint}) as {dialect.text})"
        )
        whens = ""
        if self.bottom is not None:
            whens += f" when {x} < {_fmt(self.bottom)} then {dialect.literal('<' + _fmt(self.bottom))}"
        if self.top is not None:
            whens += f" when {x} >= {_fmt(self.top)} then {dialect.literal('>=' + _fmt(self.top))}"
        return f"case{whens} when {x} is null then null else {band} end"


_INTERVAL_KEYS = frozenset({"widths", "bottom", "top", "origin"})


def intervals_from_toml(table: Mapping[str, Any], where: str = "the TOML") -> dict[str, IntervalHierarchy]:
    """Interval hierarchies from a parsed TOML table ``{column: {widths, bottom?, top?, origin?}}``
    (the ``[hierarchies]`` table of a file: :func:`read_interval_toml`)."""
    out: dict[str, IntervalHierarchy] = {}
    for column, spec in table.items():
        if not isinstance(spec, Mapping):
            raise HierarchyError(
                f"hierarchies.{column} in {where} must be a table with widths = [...], e.g. widths = [5, 10, 20]"
            )
        unknown = sorted(set(spec) - _INTERVAL_KEYS)
        if unknown:
            raise HierarchyError(
                f"hierarchies.{column}.{unknown[0]} in {where} is unknown; use {', '.join(sorted(_INTERVAL_KEYS))}"
            )
        widths = spec.get("widths")
        if not isinstance(widths, list):
            raise HierarchyError(f"hierarchies.{column} in {where} needs widths = [...], e.g. widths = [5, 10, 20]")
        for key in ("bottom", "top", "origin"):
            v = spec.get(key)
            if v is not None and (isinstance(v, bool) or not isinstance(v, int | float)):
                raise HierarchyError(f"hierarchies.{column}.{key} = {shown(v)} in {where} must be a number")
        out[column] = IntervalHierarchy(column, tuple(widths), spec.get("bottom"), spec.get("top"), spec.get("origin"))
    return out


def read_interval_toml(path: str | Path) -> dict[str, IntervalHierarchy]:
    """Interval hierarchies from the ``[hierarchies.<column>]`` tables of a TOML file."""
    p = Path(path)
    doc = user_files.read_toml(p, "hierarchy file", error=HierarchyError)
    table = doc.get("hierarchies")
    if not isinstance(table, dict) or not table:
        raise HierarchyError(
            f"{p.name} has no [hierarchies.<column>] table; add one, e.g. [hierarchies.age] widths = [5, 10]"
        )
    return intervals_from_toml(table, p.name)


def read_hierarchy(path: str | Path, column: str, delimiter: str = ";") -> CsvHierarchy:
    """ARX's hierarchy CSV of ``column``: one row per original value, level ``i`` in field ``i``."""
    p = Path(path)
    rows = user_files.read_csv(p, "hierarchy file", delimiter=delimiter, error=HierarchyError)
    if rows and len(rows[0]) < 2:
        raise HierarchyError(
            f"hierarchy file {p.name} of column {column!r} has one field per row; it needs the value and at least one "
            f"level, separated by {delimiter!r} as ARX writes them; write the file with {delimiter!r} between fields"
        )
    for i, row in enumerate(rows, 1):
        # Each value and label goes into the release's SQL as a literal, which cannot hold a control
        # character or a bidi override: refused here, naming the file, before the search reads a
        # row (it was refused once the search had run, as a 'text value' of no file).
        if (found := unsafe_text(list(row))) is not None:
            field, bad = found
            raise HierarchyError(
                f"row {i} of the hierarchy {p.name} of column {column!r} holds {field!r}, with the character "
                f"U+{ord(bad):04X}, which qar cannot put in SQL; remove it from the file"
            )
    return CsvHierarchy(column, tuple(rows), p.name)


def read_hierarchy_dir(
    directory: str | Path, columns: Iterable[str] | None = None, delimiter: str = ";"
) -> dict[str, Hierarchy]:
    """Every ``<name>_hierarchy_<column>.csv`` of a directory (ARX's naming), by column; with
    ``columns``, only those, each required to have a file."""
    d = Path(directory)
    if not d.is_dir():
        raise SourceNotFound(f"hierarchy directory {str(d)!r} not found; check the path")
    found: dict[str, Path] = {}
    for f in sorted(d.glob("*_hierarchy_*.csv")):
        column = f.name[: -len(".csv")].split("_hierarchy_", 1)[1]
        if column in found:
            raise HierarchyError(
                f"column {column!r} has two hierarchy files in {d}: {found[column].name} and {f.name}; keep one"
            )
        found[column] = f
    if columns is not None:
        wanted = list(columns)
        missing = [c for c in wanted if c not in found]
        if missing:
            raise HierarchyError(
                f"no hierarchy file for column {missing[0]!r} in {d} (expected <name>_hierarchy_{missing[0]}.csv); "
                "add one or leave the column out"
            )
        found = {c: found[c] for c in wanted}
    if not found:
        raise HierarchyError(
            f"{d} holds no <name>_hierarchy_<column>.csv files; ARX names a column's hierarchy that way"
        )
    return {c: read_hierarchy(f, c, delimiter) for c, f in found.items()}
