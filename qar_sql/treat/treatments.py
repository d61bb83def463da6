"""Treatments: a TOML file of recodings, read, checked and turned into SQL expressions.

A treatment replaces one column's values: numeric bands (label, band mean or midpoint), a
category map, a hierarchy level taken from another column or table, top or bottom coding, or
suppression (NULL). ``local`` restricts it to the rows that are singletons on a named
quasi-identifier *in the source* (Pastore et al.'s S_loc / M_loc rows), so several local
treatments touch the same rows whatever their order.

The treated release is one read-only query over the source: a chain of CTEs, one step per
treatment, each step also OR-ing a ``qar__modified`` flag (the paper's modified rows, MR).
Nothing is copied or written. The schema is documented in docs/treatments.md.
"""

from __future__ import annotations

import difflib
import functools
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qar_sql import toml_text, user_files
from qar_sql.engines.dialects import Dialect, refuse_unsafe_columns, sql_comment
from qar_sql.engines.render import render
from qar_sql.engines.source import Database, file_relation_sql, split_table
from qar_sql.errors import DatabaseError, UsageError, one_of, shown
from qar_sql.treat import perturb
from qar_sql.treat.kinds import KINDS as REGISTRY
from qar_sql.treat.kinds import pram
from qar_sql.treat.kinds.base import check_seed, names
from qar_sql.treat.prng import Arith
from qar_sql.user_text import unsafe_text

#: Every kind's name (the registry: :data:`qar_sql.treat.kinds.KINDS`, one module per kind).
KINDS = tuple(REGISTRY)
#: The kinds that perturb values with draws or groups rather than recode them.
PERTURBATIVE = tuple(name for name, kind in REGISTRY.items() if kind.perturbative)
#: Most bands a ``width`` may produce over the column's range (a typo such as width = 0.001
#: on years would otherwise build a CASE with millions of arms).
MAX_BANDS = 10_000
#: Internal column names; a source column with this prefix would be shadowed.
PREFIX = "qar__"

_COMMON = {"column", "kind", "local", "description"}
_TOP_KEYS = {"qid", "qis", "combinations", "release", "treatments", "seed", "key"}


class TreatmentError(UsageError):
    """A treatments file that cannot be read or does not fit the table."""


@dataclass(frozen=True)
class Treatment:
    """One ``[treatments.NAME]`` table, checked for shape (not yet against a table)."""

    name: str
    column: str
    kind: str
    options: tuple[tuple[str, Any], ...]
    local: tuple[str, ...] | None = None  # QI columns whose singleton rows are treated
    local_name: str | None = None

    def opt(self, key: str, default: Any = None) -> Any:
        return dict(self.options).get(key, default)

    @property
    def columns(self) -> tuple[str, ...]:
        """The columns it changes (noise may list several)."""
        return tuple(self.opt("columns") or (self.column,))

    @property
    def perturbative(self) -> bool:
        return REGISTRY[self.kind].perturbative


@dataclass(frozen=True)
class Plan:
    """A parsed treatments file."""

    treatments: tuple[Treatment, ...]
    qis: tuple[tuple[str, tuple[str, ...]], ...] = ()
    qid: tuple[str, ...] | None = None
    combinations: tuple[tuple[str, ...], ...] = ()
    release: tuple[str, ...] | None = None
    path: str = "<treatments>"
    text: str = field(default="", repr=False, compare=False)
    seed: int | None = None  # default seed of the perturbative treatments
    key: str | None = None  # the column that identifies rows (the draws' row identity)

    def get(self, name: str) -> Treatment:
        for t in self.treatments:
            if t.name == name:
                return t
        names = [t.name for t in self.treatments]
        raise TreatmentError(f"{self.path}: there is no treatment {name!r}; {one_of(name, names)}")

    def qi(self, name: str) -> tuple[str, ...] | None:
        return dict(self.qis).get(name)


# ------------------------------------------------------------------------------------------
# Reading and checking the file (no database)
# ------------------------------------------------------------------------------------------


def _line_of(text: str, table: Sequence[str], key: str | None = None) -> int | None:
    """Best-effort line of ``[a.b]`` (and ``key = `` inside it): tomllib gives no positions
    for values it parsed well, and a line number makes a message easy to act on."""
    lines = text.split("\n")  # (TOML's lines: splitlines() also ends one at a U+2028 inside a string)
    header = re.compile(r"^\s*\[\s*" + r"\s*\.\s*".join(re.escape(p) for p in table) + r"\s*\]\s*(#.*)?$")
    for i, line in enumerate(lines):
        if header.match(line) or (
            len(table) == 2 and re.match(r"^\s*" + re.escape(table[1]) + r"\s*=\s*\{", line) and i > 0
        ):
            if key is None:
                return i + 1
            for j in range(i, len(lines)):
                if j > i and lines[j].lstrip().startswith("["):
                    break
                if re.match(r"^\s*\{?.*\b" + re.escape(key) + r"\s*=", lines[j]):
                    return j + 1
            return i + 1
    if key is not None and not table:
        for i, line in enumerate(lines):
            if re.match(r"^\s*" + re.escape(key) + r"\s*=", line):
                return i + 1
    return None


class _Checker:
    def __init__(self, path: str, text: str):
        self.path = path
        self.text = text

    def fail(self, where: Sequence[str], key: str | None, message: str):
        dotted = ".".join(list(where) + ([key] if key else []))
        line = _line_of(self.text, where, key)
        at = f" (line {line})" if line else ""
        raise TreatmentError(f"{self.path}{at}: {dotted} {message}")


def _str_list(c: _Checker, where, key, value, noun: str = "column") -> tuple[str, ...]:
    """``value`` as names of ``noun`` ("column", or "treatment" in combinations and release)."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        example = '["age", "sex"]' if noun == "column" else '["age_10y", "postcode_local"]'
        c.fail(where, key, f"= {shown(value)} must be a list of {noun} names, e.g. {example}")
    if len(set(value)) != len(value):
        c.fail(where, key, f"= {shown(value)} lists a {noun} twice; list each once")
    return tuple(value)


def parse(text: str, path: str = "<treatments>") -> Plan:
    """Read a treatments file's text into a :class:`Plan`, checking everything that does not
    need the table. Every problem is one :class:`TreatmentError` naming the key."""
    return _plan(user_files.parse_toml(text, path, error=TreatmentError), path, text)


def _plan(doc: dict[str, Any], path: str, text: str = "") -> Plan:
    """The :class:`Plan` of a parsed treatments file (``text``: its text, for line numbers)."""
    c = _Checker(path, text)
    for key in doc:
        if key not in _TOP_KEYS:
            c.fail((), key, f"is not a known top-level key; {one_of(key, sorted(_TOP_KEYS))}")

    qis: dict[str, tuple[str, ...]] = {}
    raw_qis = doc.get("qis", {})
    if not isinstance(raw_qis, dict):
        c.fail((), "qis", 'must be a table of named column lists, e.g. [qis] best = ["a", "b"]')
    for name, cols in raw_qis.items():
        qis[name] = _str_list(c, ("qis",), name, cols)

    seed = doc.get("seed")
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
        c.fail((), "seed", f"= {shown(seed)} must be a whole number, e.g. seed = 20240601")
    row_key = doc.get("key")
    if row_key is not None and (not isinstance(row_key, str) or not row_key):
        c.fail((), "key", f'= {shown(row_key)} must name the column that identifies rows, e.g. key = "id"')
    treatments: list[Treatment] = []
    raw = doc.get("treatments")
    if not isinstance(raw, dict) or not raw:
        c.fail((), "treatments", "is missing or empty; define at least one [treatments.NAME] table")
    assert isinstance(raw, dict)  # c.fail raised otherwise
    for name, spec in raw.items():
        treatments.append(_parse_treatment(c, name, spec, qis, seed))
    names = [t.name for t in treatments]

    def check_names(key, value) -> tuple[str, ...]:
        items = _str_list(c, (), key, value, noun="treatment")
        for n in items:
            if n not in names:
                close = difflib.get_close_matches(n, names, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                c.fail((), key, f"names the treatment {n!r}, which is not defined{hint}")
        return items

    qid = None
    if "qid" in doc:
        q = doc["qid"]
        qid = qis[q] if isinstance(q, str) and q in qis else _str_list(c, (), "qid", q)
    combos = []
    raw_combos = doc.get("combinations", [])
    if not isinstance(raw_combos, list):
        c.fail((), "combinations", 'must be a list of lists of treatment names, e.g. [["S", "M"]]')
    for combo in raw_combos:
        if not isinstance(combo, list) or len(combo) < 2:
            c.fail((), "combinations", f"entry {combo!r} must list two or more treatment names")
        combos.append(check_names("combinations", combo))
    release = check_names("release", doc["release"]) if "release" in doc else None
    return Plan(tuple(treatments), tuple(qis.items()), qid, tuple(combos), release, path, text, seed, row_key)


def _parse_treatment(c: _Checker, name: str, spec: Any, qis, seed: int | None = None) -> Treatment:
    where = ("treatments", name)
    if not isinstance(spec, dict):
        c.fail(("treatments",), name, "must be a table, e.g. [treatments.NAME] with column and kind")
    kind = spec.get("kind")
    if kind is None:
        c.fail(where, "kind", f"is missing; set kind to one of {', '.join(KINDS)}")
    if kind not in KINDS:
        c.fail(where, "kind", f"= {shown(kind)} is not a known treatment kind; {one_of(kind, KINDS)}")
    column = spec.get("column")
    if REGISTRY[kind].several and column is None and "columns" in spec:
        column = spec["columns"][0] if isinstance(spec["columns"], list) and spec["columns"] else spec["columns"]
        if not isinstance(column, str) or not column:
            c.fail(where, "columns", f'= {shown(spec["columns"])} must be a list of column names, e.g. ["income"]')
    elif column is None:
        c.fail(where, "column", "is missing; name the column this treatment changes")
    elif not isinstance(column, str) or not column:  # (a list or a number was read as "missing")
        c.fail(where, "column", f'= {shown(column)} must be the name of one column, e.g. "age"')
    allowed = _COMMON | REGISTRY[kind].keys
    for key in spec:
        if key not in allowed:
            c.fail(where, key, f"is not a key of a {kind!r} treatment; {one_of(key, sorted(allowed))}")
    local = local_name = None
    if "local" in spec:
        value = spec["local"]
        if isinstance(value, str):
            if value not in qis:
                known = ", ".join(qis) or "none"
                c.fail(
                    where,
                    "local",
                    f"= {shown(value)} names no quasi-identifier; define it under [qis] (defined: {known}) or give the columns as a list",
                )
            local, local_name = qis[value], value
        else:
            local = _str_list(c, where, "local", value)
    opts = {k: v for k, v in spec.items() if k not in _COMMON}
    k = REGISTRY[kind]
    fail = functools.partial(c.fail, where)
    if k.perturbative:
        check_seed(fail, k, opts, seed)
    k.shape(fail, opts, "column" in spec)
    for key, value in opts.items():
        # A value of the file goes into the release's SQL as a literal, which cannot hold a control
        # character or a bidi override: refused here, naming the key, before a query reads a row
        # (it was refused once the SQL was built, as a 'text value' of no file).
        if key != "columns" and (bad := unsafe_text(value)) is not None:
            fail(
                key, f"holds {bad[0]!r}, with the character U+{ord(bad[1]):04X}, which qar cannot put in SQL; remove it"
            )
    if k.perturbative:
        if "columns" in opts:
            opts["columns"] = list(names(fail, "columns", opts["columns"]))
        if k.seeded and "seed" not in opts:
            opts["seed"] = seed
    return Treatment(name, column, kind, tuple(opts.items()), local, local_name)


def load(treatments: str | Path | Plan | Mapping) -> Plan:
    """A :class:`Plan` from a path, TOML text in a ``str`` containing a newline, a dict (as
    ``tomllib`` would return) or a Plan."""
    if isinstance(treatments, Plan):
        return treatments
    if isinstance(treatments, Mapping):  # as tomllib would give it: lists, no value TOML lacks
        try:
            doc = json.loads(json.dumps(treatments))
            toml_text.check(doc)
        except (TypeError, ValueError) as exc:
            raise TreatmentError(f"treatments: {exc}; give strings, numbers, booleans, lists and tables") from None
        return _plan(doc, "<treatments>")
    if isinstance(treatments, str) and "\n" in treatments:
        return parse(treatments)
    if not isinstance(treatments, (str, Path)):
        raise TreatmentError(
            f"treatments = {treatments!r} is not a treatments file; pass its path, its TOML text, a dict "
            "or a Plan (schema: docs/treatments.md)"
        )
    text = user_files.read_text(treatments, "treatments file", error=TreatmentError)  # (a missing one too)
    return parse(text, str(treatments))


# ------------------------------------------------------------------------------------------
# Fitting a plan to a table: column types, data-dependent edges, lookup checks
# ------------------------------------------------------------------------------------------

_INT = re.compile(r"^(u?(tiny|small|big|huge)?int(eger)?\d*|u?(tiny|small|big|huge)int|(small|big)?serial|int[248])$")
_FLOAT = re.compile(r"^(double( precision)?|real|float\d*|decimal.*|numeric.*|number.*)$")
_TEXT = re.compile(r"^(varchar.*|text|string|char.*|character.*|bpchar.*|name)$")


def type_kind(type_name: str) -> str:
    """integer, float, text or other (dates, booleans, ...) from an engine's type name."""
    t = type_name.strip().lower()
    if _INT.match(t):
        return "integer"
    if t.startswith("decimal") or t.startswith("numeric"):
        # DECIMAL(p, 0) holds whole numbers, but its text form is engine-specific; treat it
        # as a float so maps and labels never depend on how an engine prints it.
        return "float"
    if _FLOAT.match(t):
        return "float"
    if _TEXT.match(t):
        return "text"
    return "other"


def column_kinds(db: Database, relation_sql: str, columns: Sequence[str]) -> dict[str, str]:
    """{column: kind}, from the declared types the engine reports (one tiny query)."""
    return {c: type_kind(t) for c, t in zip(columns, db.column_types(relation_sql, columns))}


@dataclass(frozen=True)
class Step:
    """One treatment, ready for SQL: ``expr`` is the new value of ``column`` computed from the
    row alias ``t``; ``join`` an optional LEFT JOIN it needs; ``out`` the kind it produces.
    Perturbative treatments come as CTEs instead (``ctes``, ending in ``qar_new<i>``) that may
    change several ``columns``, whose new values are the columns ``news`` there."""

    name: str
    column: str
    expr: str
    changed: str
    out: str
    join: str = ""
    ctes: str = ""
    columns: tuple[str, ...] = ()
    news: tuple[str, ...] = ("qar__new",)
    outs: tuple[str, ...] = ()
    #: The condition of the rows the step keeps (empty: all): ``suppress_records``.
    keep: str = ""

    @property
    def changes(self) -> tuple[tuple[str, str, str], ...]:
        """(column, new-value column, kind after) of every column the step changes."""
        return tuple(zip(self.columns or (self.column,), self.news, self.outs or (self.out,)))


def check_column(c: _Checker, t: Treatment, name: str, key: str, columns: Sequence[str], display: str) -> None:
    if name not in columns:
        c.fail(("treatments", t.name), key, f"= {shown(name)} is not a column of {display}{_close(name, columns)}")


def check_columns(c: _Checker, t: Treatment, columns: Sequence[str], display: str) -> None:
    """The column(s) ``t`` treats are among ``columns``: a check of names alone, before any query."""
    key = "columns" if t.perturbative and t.opt("columns") else "column"
    for col in t.columns if t.perturbative else (t.column,):
        check_column(c, t, col, key, columns, display)


def check_names(plan: Plan, columns: Sequence[str], display: str) -> None:
    """Each treatment's column(s) and the file's key among ``columns`` (``qar report`` checks this
    before its audit; the binder checks it again with the types)."""
    c = _Checker(plan.path, plan.text)
    for t in plan.treatments:
        check_columns(c, t, columns, display)
    if plan.key is not None:
        check_key_name(c, plan.key, columns, display)


def check_key_name(c: _Checker, key: str, columns: Sequence[str], display: str) -> None:
    if key not in columns:
        c.fail((), "key", f"names {key!r}, which is not a column of {display}{_close(key, columns)}")


def _close(name: str, columns: Sequence[str]) -> str:
    """ "; did you mean 'x'?" after a name that is no column, where one is close, else ""."""
    close = difflib.get_close_matches(name, columns, n=1, cutoff=0.5)
    return f"; did you mean {close[0]!r}?" if close else ""


class Binder:
    """Checks a plan against one table and turns treatments into :class:`Step` s.

    ``relation_for`` is how the lookup tables and the source are named in the SQL being
    written (the executing engine, or another dialect for ``--emit-sql``)."""

    def __init__(
        self,
        db: Database,
        relation_sql: str,
        columns: Sequence[str],
        plan: Plan,
        *,
        dialect: Dialect | None = None,
        display: str = "the table",
        source_kind: str = "table",
        key: str | None = None,
        not_null: Sequence[str] = (),
    ):
        refuse_unsafe_columns(columns, "a release of treatments")  # before any query
        self.db = db
        self.relation_sql = relation_sql
        self.columns = tuple(columns)
        self.plan = plan
        self.dialect = dialect or db.dialect
        self.display = display
        self.source_kind = source_kind
        clash = [col for col in self.columns if col.startswith(PREFIX)]
        if clash:
            raise TreatmentError(
                f"column {clash[0]!r} starts with {PREFIX!r}, which qar whatif uses for its own "
                "columns; rename it in a view first"
            )
        self.kinds = column_kinds(db, relation_sql, self.columns)
        self._edges: dict[str, list[float]] = {}
        self._checked_lookups: set[str] = set()
        self.c = _Checker(plan.path, plan.text)
        self.key = key or plan.key
        self._key_checked = False
        src = db.dialect
        self.not_null = tuple(not_null)
        self.perturb = perturb.PerturbBinder(db.query, relation_sql, Arith(src), src.quote, self.kinds, not_null)
        # Statistics of a column as earlier treatments left it, per prefix of a chain (see stage()).
        self._stages: dict[tuple, tuple[perturb.PerturbBinder, dict[str, str]]] = {}

    # -- helpers ------------------------------------------------------------------------------

    def as_text(self, expr: str, kind: str) -> str:
        """``expr`` (of ``kind``) as text in the SQL being written."""
        return Arith(self.dialect).as_text(expr, kind)

    def as_float(self, expr: str) -> str:
        return Arith(self.dialect).to_double(expr)

    def fail(self, t: Treatment, key: str | None, message: str):
        """Raise the file's error naming ``treatments.<t>.key``."""
        self.c.fail(("treatments", t.name), key, message)

    def lit(self, v: Any) -> str:
        """A value of the file as a SQL literal (text quoted by the dialect, whole numbers without .0)."""
        if isinstance(v, str):
            return self.dialect.literal(v)
        return repr(int(v)) if float(v).is_integer() and abs(v) < 2**53 else repr(float(v))

    def check_column(self, t: Treatment, name: str, key: str) -> None:
        check_column(self.c, t, name, key, self.columns, self.display)

    def check(self, t: Treatment) -> None:
        """Everything about ``t`` that needs the table (columns, types, lookups; the key of the
        perturbative kinds' draws)."""
        check_columns(self.c, t, self.columns, self.display)
        for col in t.local or ():
            self.check_column(t, col, "local")
        if t.perturbative:
            for col in t.opt("by") or ():
                self.check_column(t, col, "by")
            self.check_key()
        elif (check := REGISTRY[t.kind].check) is not None:
            check(self, t)

    def kind_ok(self, t: Treatment, kind: str) -> None:
        """A recoding ``t`` can run on its column, of ``kind`` where it runs."""
        fits = REGISTRY[t.kind].fits
        if fits is not None:
            fits(self, t, t.column, kind, " here")

    def edges(self, t: Treatment) -> list[float]:
        if "edges" in dict(t.options):
            return list(t.opt("edges"))
        if t.name in self._edges:
            return self._edges[t.name]
        w, origin = t.opt("width"), t.opt("origin", 0)
        col = self.db.dialect.quote(t.column)
        lo, hi = self.db.query(f"select min({col}), max({col}) from {self.relation_sql} as t")[0]
        if lo is None:
            lo = hi = origin
        lo, hi = float(lo), float(hi)
        first = math.floor((lo - origin) / w)
        n = math.floor((hi - origin) / w) - first + 1
        if n > MAX_BANDS:
            self.c.fail(
                ("treatments", t.name),
                "width",
                f"= {shown(w)} cuts {t.column!r} ({lo:g} to {hi:g}) into {n:,} bands, more than {MAX_BANDS:,}; use a wider band",
            )
        edges = [float(f"{origin + (first + i) * w:.12g}") for i in range(n + 1)]
        self._edges[t.name] = edges
        return edges

    def check_lookup(self, t: Treatment) -> None:
        """A hierarchy's lookup table or file can be read and gives each value one parent."""
        if t.name in self._checked_lookups:
            return
        d = self.db.dialect
        rel = self._lookup_relation(t, d)
        key, parent = d.quote(t.opt("key")), d.quote(t.opt("parent"))
        text = d.text
        where = ("treatments", t.name)
        try:
            n = self.db.query(
                f"select count(*) from (select cast({key} as {text}) as k from {rel} as qar_l "
                f"where {key} is not null group by cast({key} as {text}) "
                f"having count(distinct {parent}) > 1) as d"
            )[0][0]
        except DatabaseError as exc:
            key = "table" if "table" in dict(t.options) else "file"
            self.c.fail(
                where,
                key,
                f"= {shown(t.opt(key))} cannot be read with key = {t.opt('key')!r} and parent = {t.opt('parent')!r} ({exc}); check the names",
            )
        if int(n):
            self.c.fail(
                where,
                "key",
                f"= {shown(t.opt('key'))} maps {int(n)} value(s) to more than one parent; a hierarchy needs one parent per value",
            )
        self._checked_lookups.add(t.name)

    def _lookup_relation(self, t: Treatment, d: Dialect) -> str:
        if "file" in dict(t.options):
            if d.name != "duckdb":
                self.c.fail(
                    ("treatments", t.name),
                    "file",
                    'needs DuckDB (it reads the file); use table = "schema.table" on other engines',
                )
            path = t.opt("file")
            kind = "parquet" if path.lower().endswith((".parquet", ".pq")) else "csv"
            return file_relation_sql(d, path, kind, None)
        return d.quote_path(split_table(t.opt("table")))

    def lookup_sql(self, t: Treatment, d: Dialect) -> str:
        """One row per key (its smallest parent; :meth:`check_lookup` refuses keys with two), so the
        LEFT JOIN can never multiply rows."""
        rel = self._lookup_relation(t, d)
        key, parent = d.quote(t.opt("key")), d.quote(t.opt("parent"))
        text = d.text
        return (
            f"select cast({key} as {text}) as qar__key, min(cast({parent} as {text})) as qar__parent "
            f"from {rel} as qar_l where {key} is not null group by cast({key} as {text})"
        )

    # -- SQL ----------------------------------------------------------------------------------

    def step(self, t: Treatment, kind: str, local_flag: str | None, index: int) -> Step:
        """The SQL step of ``t`` applied to a column currently of ``kind``."""
        self.kind_ok(t, kind)
        x = f"t.{self.dialect.quote(t.column)}"
        expr, out, join = REGISTRY[t.kind].step(self, t, x, kind, index)
        if local_flag:
            keep = (
                x
                if out == kind or (out in ("integer", "float") and kind in ("integer", "float"))
                else self.as_text(x, kind)
            )
            if out == "float" and kind == "integer":
                keep = self.as_float(x)
            expr = f"case when t.{local_flag} then {expr} else {keep} end"
        changed = self.dialect.differs(*Arith(self.dialect).comparable("t.qar__new_0", out, x, kind))
        keep_rows = REGISTRY[t.kind].keep
        # The name goes into a SQL comment (sql_comment: nothing in it can end the line).
        return Step(
            sql_comment(t.name), t.column, expr, changed, out, join, news=("qar__new_0",),
            keep=keep_rows(self, t) if keep_rows else "",
        )  # fmt: skip

    # -- perturbative kinds ---------------------------------------------------------------

    def check_key(self) -> None:
        """The declared key exists, has no NULL and no duplicate (one query, once)."""
        if self.key is None or self._key_checked:
            return
        check_key_name(self.c, self.key, self.columns, self.display)
        k = f"t.{self.db.dialect.quote(self.key)}"
        n, present, distinct = self.db.query(
            f"select count(*), count({k}), count(distinct {k}) from {self.relation_sql} as t"
        )[0]
        if int(present) != int(n) or int(distinct) != int(n):
            self.c.fail(
                (),
                "key",
                f"names the column {self.key!r}, which does not identify rows ({int(n) - int(present):,} NULL, "
                f"{int(present) - int(distinct):,} repeated); name a unique column or leave key out",
            )
        self._key_checked = True

    def identity(self) -> str:
        a = Arith(self.dialect)
        return perturb.identity_sql(
            a, self.dialect.quote, self.key, self.kinds.get(self.key) if self.key else None, self.columns, self.kinds
        )

    def _reads(self, t: Treatment) -> set[str]:
        """The columns whose values ``t``'s statistics come from (MDAV also groups by ``by``)."""
        reads = REGISTRY[t.kind].reads
        return set(t.columns) if reads is None else reads(t)

    def stage(
        self, before: Sequence[str], t: Treatment
    ) -> tuple[perturb.PerturbBinder, dict[str, str], tuple[str, ...] | None]:
        """Where ``t`` reads its statistics (PRAM's categories and frequencies, noise's sd and
        covariance, microaggregation's scale and MDAV's groups) when the treatments ``before``
        it in the chain ran first: the source when none of them changed a column it reads,
        else the release of ``before`` up to the last one that did, so ``t`` composes with
        them (PRAM after suppress never brings a suppressed value back; noise after top coding
        takes the coded column's sd). Returns (statistics, kinds there, the columns marking
        ``local`` rows there)."""
        reads = self._reads(t)
        last = max((i for i, n in enumerate(before) if reads & set(self.plan.get(n).columns)), default=None)
        if last is None:
            return self.perturb, dict(self.kinds), t.local
        prefix = tuple(before[: last + 1])
        key = (prefix, t.local)
        if key not in self._stages:
            import copy

            src = self.db.dialect
            reader = self
            if self.dialect is not src:  # the statistics run on the source's engine
                reader = copy.copy(self)
                reader.dialect = src
            kinds: dict[str, str] = {}
            # The local rows are singletons on the *source* values (as in the chain), so the
            # release carries the original local columns beside the treated ones.
            sql = treated_sql(
                reader, self.relation_sql, prefix, not_null=self.not_null, modified=False, originals=t.local or (),
                kinds_out=kinds, keep_id=True,
            )  # fmt: skip
            stats = perturb.PerturbBinder(self.db.query, f"(\n{sql}\n)", Arith(src), src.quote, kinds, ())
            self._stages[key] = (stats, kinds)
        stats, kinds = self._stages[key]
        local = tuple(f"qar__o_{i}" for i in range(len(t.local))) if t.local else None
        return stats, kinds, local

    def perturb_step(
        self,
        t: Treatment,
        kinds: dict[str, str],
        local_flag: str | None,
        index: int,
        base: Sequence[str],
        before: Sequence[str] = (),
    ) -> Step:
        fail = functools.partial(self.c.fail, ("treatments", t.name))
        if (fits := REGISTRY[t.kind].fits) is not None:  # the kinds where t runs, after the chain before it
            for col in t.columns:
                fits(self, t, col, kinds[col], " here" if kinds[col] != self.kinds[col] else "")
        stats, _, local = self.stage(before, t)
        a = Arith(self.dialect)
        quote, seed = self.dialect.quote, t.opt("seed") or 0
        ctx = perturb.Context(a, quote, self.lit, kinds, index, f"qar_step{index - 1}", tuple(base), local_flag, seed)
        ls = REGISTRY[t.kind].step(self, t, ctx, stats, local, fail)
        return Step(ls.name, ls.columns[0], "", ls.changed, ls.outs[0], "", ls.ctes, ls.columns, ls.news, ls.outs)

    def posterior_odds(self, t: Treatment, before: Sequence[str] = ()) -> dict[Any, float]:
        """PRAM's P(X = b | Y = b) per value b (the design's probabilities and the column's
        frequencies as the treatments ``before`` it left them)."""
        fail = functools.partial(self.c.fail, ("treatments", t.name))
        stats, kinds, _ = self.stage(before, t)
        return pram.posterior_odds(stats.categories(t.column, fail), dict(t.options), kinds[t.column], fail)


# ------------------------------------------------------------------------------------------
# The treated release as SQL
# ------------------------------------------------------------------------------------------


def treated_sql(
    binder: Binder,
    relation_sql: str,
    names: Sequence[str],
    *,
    not_null: Sequence[str] = (),
    modified: bool = True,
    originals: Sequence[str] = (),
    kinds_out: dict[str, str] | None = None,
    keep_id: bool = False,
) -> str:
    """One SELECT returning the source's columns with the named treatments applied in order
    (plus ``qar__modified`` when ``modified``, the original value of each column in
    ``originals`` as ``qar__o_<n>``, and the row identity ``qar__id`` when ``keep_id``), over
    ``relation_sql`` in the binder's dialect. A perturbative treatment reads its statistics
    from the column as the treatments before it left it (:meth:`Binder.stage`)."""
    plan = binder.plan
    ts = [plan.get(n) for n in names]
    if len(set(names)) != len(names):
        raise TreatmentError(f"treatment list {', '.join(names)} names a treatment twice; list each once")
    local_qis: list[tuple[str, ...]] = []
    for t in ts:
        binder.check(t)
        if t.local and t.local not in local_qis:
            local_qis.append(t.local)
    identity = binder.identity() if keep_id or any(t.perturbative for t in ts) else None
    internal = (["qar__id"] if identity else []) + [f"qar__single_{i}" for i in range(len(local_qis))]
    internal += [f"qar__o_{i}" for i in range(len(originals))]
    base = [binder.dialect.quote(c) for c in binder.columns] + internal + ["qar__modified"]
    kinds = dict(binder.kinds)
    steps = []
    for i, t in enumerate(ts, start=1):
        flag = f"qar__single_{local_qis.index(t.local)}" if t.local else None
        if t.perturbative:
            s = binder.perturb_step(t, kinds, flag, i, base, names[: i - 1])
        else:
            s = binder.step(t, kinds[t.column], flag, i)
        for column, _, out in s.changes:
            kinds[column] = out
        steps.append(s)
    if kinds_out is not None:
        kinds_out.update(kinds)
    return render(
        "treat.sql", binder.dialect, relation=relation_sql, columns=list(binder.columns), local_qis=local_qis,
        not_null=list(not_null), steps=steps, modified=modified, identity=identity, internal=internal,
        originals=list(originals), keep_id=keep_id,
    )  # fmt: skip
