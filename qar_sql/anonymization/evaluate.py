"""Node evaluation in the database: only counts cross the wire.

:func:`evaluator` prepares a search over an open session (:class:`qar_sql.engines.session.Session`):

1. **one small query** per run: each QI's (and the sensitive column's) value counts, cast to
   text — what the hierarchies are checked against (a value missing from its hierarchy is one
   :class:`~qar_sql.anonymization.hierarchy.HierarchyError`) and what the metrics' per-column
   frequencies are derived from (:class:`~qar_sql.anonymization.metrics.Domain`);
2. **the frequency table**: the table grouped by every QI (and the sensitive column), each value
   replaced by its integer code at every level (``c<j>_<L>``, ``s_<L>``) through a join to a
   small mapping per column, with the count ``n``. Where the dialect holds session temp tables
   on a read-only connection (DuckDB, in memory) it is materialised once, named by
   :func:`~qar_sql.engines.session.temp_name` and dropped on exit, also after an error;
   elsewhere it is a CTE (``materialized`` where the engine knows it) of every statement, so
   nothing is ever written to the audited database;
3. **nodes in batches** (:meth:`Evaluator.evaluate`): each node is a GROUP BY of the frequency
   table on its level columns, one CTE per node, the batch's results in one UNION ALL (portable
   to every engine; GROUPING SETS would not help here, as each node groups different columns of
   the same rows). Per node the statement returns the histogram (class size, violates any
   model) → classes and, when asked, the records of violating classes per generalized value of
   each QI (the loss and non-monotonic entropy metrics read them).

The privacy models' class conditions (:mod:`.models`) are evaluated in SQL over the class
aggregates: size, distinct sensitive values, Σ f ln f, the largest count, the tail sums of
recursive l-diversity and the t-closeness terms.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from qar_sql.anonymization import metrics
from qar_sql.anonymization.hierarchy import CsvHierarchy, Hierarchy, HierarchyError
from qar_sql.anonymization.models import KAnonymity, Model, TCloseness, sensitive_of
from qar_sql.engines.session import temp_name
from qar_sql.errors import ColumnError, DataError

#: Nodes per statement (one round trip): measured on adult, larger batches gain little.
BATCH = 32

#: Frequency tables of at most this many cells are read once and grouped in memory for the
#: size-only models (k-anonymity): measured on adult (19,502 cells) a node then costs about a
#: millisecond against 10 to 20 ms as a GROUP BY in DuckDB. Only the level-0 codes and the
#: count cross the wire (8 bytes each per cell in memory, 8 bytes per level column once mapped).
LOCAL_CELLS = 1_000_000


@dataclass(frozen=True)
class NodeEval:
    """One evaluated node: its classes (``classes.suppressed`` marks the violating ones) and
    the records in violating classes, which are suppressed when the node is anonymous."""

    levels: tuple[int, ...]
    classes: metrics.Classes
    violating: int

    def anonymous(self, max_suppressed: float) -> bool:
        """Anonymous with at most ``max_suppressed`` records suppressed (limit × rows)."""
        return self.violating <= max_suppressed

    @property
    def k(self) -> int:
        """The smallest kept class (0 when every record is suppressed)."""
        kept = self.classes.sizes[~self.classes.suppressed]
        return int(kept.min()) if len(kept) else 0


@dataclass(frozen=True)
class Coding:
    """One column's value → code at every level, and the codes' labels per level."""

    column: str
    values: tuple[str, ...]  # level-0 values present in the table, code = position
    counts: np.ndarray
    codes: tuple[np.ndarray, ...]  # codes[L][i]: code of values[i] at level L
    labels: tuple[tuple[str, ...], ...]  # labels[L][code]


def _coding(h: Hierarchy, counts: Mapping[str | None, int]) -> tuple[Coding, metrics.ColumnDomain]:
    """The column's values (those of the table) coded at every level. Values are ordered along
    their generalization paths (top level first), and each level's codes numbered in that order,
    so that in a tree-shaped hierarchy every generalized code covers a contiguous range of
    level-0 codes (:func:`_level_sql` then needs one comparison per group)."""
    h.check(counts)
    present = [v for v in counts if v is not None]  # check refused None
    paths = {v: tuple(str(h.generalize(v, L)) for L in range(h.height)) for v in present}
    values = tuple(sorted(present, key=lambda v: paths[v][::-1]))
    domain_rows: list[str]
    if isinstance(h, CsvHierarchy):
        domain_rows = [r[0] for r in h.rows]
    else:
        domain_rows = list(values)
    codes, labels, shares = [], [], []
    for level in range(h.height):
        names = tuple(dict.fromkeys(paths[v][level] for v in values))
        index = {g: i for i, g in enumerate(names)}
        share = np.zeros(len(names))
        for v in domain_rows:
            g = str(h.generalize(v, level))
            if g in index:  # a group with no value in the table has no code (and no records)
                share[index[g]] += 1
        codes.append(np.array([index[paths[v][level]] for v in values], dtype=np.int64))
        labels.append(names)
        shares.append(share / len(domain_rows))
    cnt = np.array([counts[v] for v in values], dtype=np.int64)
    coding = Coding(h.column, values, cnt, tuple(codes), tuple(labels))
    return coding, metrics.ColumnDomain(h.column, cnt, tuple(codes), tuple(shares), len(domain_rows))


def _level_sql(code0: str, codes: np.ndarray) -> str:
    """The level's code as SQL of the level-0 code ``code0``: a CASE of ranges where each code
    covers a contiguous range of level-0 codes, else a CASE listing every level-0 code."""
    if len(codes) and np.all(np.diff(codes) >= 0):
        starts = np.flatnonzero(np.diff(codes)) + 1  # where the next code begins
        if len(starts) == 0:
            return f"{int(codes[0])} + 0 * {code0}"
        whens = " ".join(f"when {code0} < {int(b)} then {int(codes[b - 1])}" for b in starts)
        return f"case {whens} else {int(codes[-1])} end"
    whens = " ".join(f"when {i} then {int(c)}" for i, c in enumerate(codes))
    return f"case {code0} {whens} end"


def code0_sql(expression: str, coding: Coding, dialect: Any) -> str:
    """The level-0 code of the text ``expression`` (a CASE over the table's values)."""
    whens = " ".join(f"when {dialect.literal(v)} then {i}" for i, v in enumerate(coding.values))
    return f"case {expression} {whens} end"


class Evaluator:
    """Evaluates nodes of one search (made by :func:`evaluator`; see the module docstring)."""

    def __init__(
        self,
        session: Any,
        qi: Sequence[str],
        codings: Sequence[Coding],
        domain: metrics.Domain,
        models: Sequence[Model],
        sensitive: Coding | None,
        freq_name: str | None,
        freq_sql: str,
    ):
        self.session = session
        self.dialect = session.dialect
        self.qi = tuple(qi)
        self.codings = tuple(codings)
        self.domain = domain
        self.models = tuple(models)
        self.sensitive = sensitive
        self._freq_name = freq_name
        self._freq_sql = freq_sql
        self._cells: _Cells | None = None
        #: Statements run and nodes evaluated so far, and the seconds in the database.
        self.statements = 0
        self.nodes = 0
        self.seconds = 0.0

    @property
    def batch(self) -> int:
        """Nodes worth evaluating together: a statement's worth in SQL (round trips cost), one
        in memory (each result tags the lattice before the next node is chosen, so fewer nodes
        are evaluated)."""
        return 1 if self._cells is not None else BATCH

    @property
    def rows(self) -> int:
        return self.domain.rows

    @property
    def heights(self) -> tuple[int, ...]:
        """Levels per QI (a level vector's entries run from 0 to height − 1)."""
        return tuple(len(c.codes) for c in self.codings)

    def label(self, column: int, level: int, code: int) -> str:
        return self.codings[column].labels[level][code]

    def fetch_cells(self, limit: int = LOCAL_CELLS) -> bool:
        """Read the frequency table once when every model judges a class by its size alone
        (k-anonymity, no singletons) and it has at most ``limit`` cells; later nodes are then
        grouped from those cells in memory (:class:`_Cells`). True when it did."""
        if self.sensitive is not None or not all(isinstance(m, KAnonymity) for m in self.models) or limit <= 0:
            return False
        first, freq = self._from()
        with_ = f"with {first}\n" if first else ""
        t0 = time.perf_counter()
        (count,) = self.session.db.query(f"{with_}select count(*) from {freq}")[0]
        self.statements += 1
        if int(count) > limit:
            self.seconds += time.perf_counter() - t0
            return False
        # the level-0 codes only: the higher levels are the codings' maps of them
        names = [f"c{j}_0" for j in range(len(self.codings))]
        rows = self.session.db.query(f"{with_}select {', '.join(names)}, n from {freq}")
        self.statements += 1
        self.seconds += time.perf_counter() - t0
        table = np.array(rows, dtype=np.int64).reshape(-1, len(names) + 1)
        del rows
        codes = [tuple(level[table[:, j]] for level in c.codes) for j, c in enumerate(self.codings)]
        sizes = tuple(tuple(len(lab) for lab in c.labels) for c in self.codings)
        self._cells = _Cells(tuple(codes), table[:, -1], sizes, max((m.k for m in self.models), default=0))  # type: ignore[attr-defined]
        return True

    def _from(self) -> tuple[str, str]:
        """(WITH items to put first, the frequency table's name for FROM)."""
        if self._freq_name is not None:
            return "", self.dialect.quote(self._freq_name)
        mat = "materialized " if self.dialect.cte_materialized else ""
        return f"qar_freq as {mat}(\n{self._freq_sql}\n)", "qar_freq"

    def _class_sql(self, levels: Sequence[int], freq: str) -> str:
        d = self.dialect
        cols = [f"c{j}_{lv}" for j, lv in enumerate(levels)]
        g_alias = ", ".join(f"{c} as g{j}" for j, c in enumerate(cols))
        g_list = ", ".join(f"g{j}" for j in range(len(cols)))
        c_list = ", ".join(cols)
        viol = " or ".join(f"({m.violates_sql()})" for m in self.models) or "1 = 0"
        if self.sensitive is None:
            # "+ 0 * count(*)": DuckDB otherwise derives the sum's range from the column's
            # statistics and groups the sizes with a perfect hash table sized by that range,
            # measured 5 to 10 times slower on adult; the value is the same on every engine.
            inner = f"select {g_alias}, sum(n) + 0 * count(*) as size from {freq} group by {c_list}"
            return f"select {g_list}, size, case when {viol} then 1 else 0 end as bad from ({inner}) as x"
        tails = sorted({m.tail for m in self.models if m.tail is not None})
        t_levels = sorted({L for m in self.models if isinstance(m, TCloseness) for L in m.levels()})
        parts = []
        for L in sorted({0, *t_levels}):
            p = self._p_expr(L, f"s_{L}")
            share = f"cast(sum(n) as {d.double}) / sum(sum(n)) over (partition by {c_list})"
            tt = f"abs({p} - {share}) - {p}" if L in t_levels else "0"
            rk = f"row_number() over (partition by {c_list} order by sum(n) desc)" if L == 0 and tails else "0"
            parts.append(
                f"select {g_alias}, {L} as part, sum(n) as n, {rk} as rk, {tt} as tt "
                f"from {freq} group by {c_list}, s_{L}"
            )
        aggs = [
            "sum(case when part = 0 then n else 0 end) as size",
            "sum(case when part = 0 then 1 else 0 end) as ds",
            f"sum(case when part = 0 then n * ln(cast(n as {d.double})) else 0 end) as nln",
            "max(case when part = 0 then n else 0 end) as r1",
        ]
        aggs += [f"sum(case when part = 0 and rk >= {t} then n else 0 end) as tail_{t}" for t in tails]
        aggs += [f"sum(case when part = {L} then tt else 0 end) as t_{L}" for L in t_levels]
        union = "\nunion all\n".join(parts)
        inner = f"select {g_list}, {', '.join(aggs)} from (\n{union}\n) as y group by {g_list}"
        return f"select {g_list}, size, case when {viol} then 1 else 0 end as bad from ({inner}) as x"

    def _p_expr(self, level: int, column: str) -> str:
        """The share of all records with each sensitive code at ``level``, as a CASE."""
        s = self.sensitive
        assert s is not None
        totals = np.bincount(s.codes[level], weights=s.counts, minlength=len(s.labels[level]))
        whens = " ".join(f"when {i} then {float(t) / self.rows!r}" for i, t in enumerate(totals))
        return f"(case {column} {whens} end)"

    def sql(self, nodes: Sequence[Sequence[int]], values: bool = False) -> str:
        """The one statement evaluating ``nodes`` (rows: node, kind, a, b, count)."""
        first, freq = self._from()
        ctes = [first] if first else []
        selects = []
        for i, levels in enumerate(nodes):
            ctes.append(f"cls_{i} as (\n{self._class_sql(levels, freq)}\n)")
            selects.append(
                f"select {i} as node, 0 as kind, size as a, bad as b, count(*) as cnt from cls_{i} group by size, bad"
            )
            if values:
                for j in range(len(levels)):
                    selects.append(
                        f"select {i} as node, {j + 1} as kind, g{j} as a, 0 as b, sum(size) as cnt "
                        f"from cls_{i} where bad = 1 group by g{j}"
                    )
        return "with " + ",\n".join(ctes) + "\n" + "\nunion all\n".join(selects)

    def evaluate(self, nodes: Sequence[Sequence[int]], values: bool = False, batch: int = BATCH) -> list[NodeEval]:
        """Evaluate ``nodes`` (level vectors), ``batch`` per statement; ``values``: also the
        violating records per generalized value of each QI (:attr:`metrics.Classes.suppressed_values`)."""
        out: list[NodeEval] = []
        for start in range(0, len(nodes), batch):
            chunk = [tuple(int(x) for x in n) for n in nodes[start : start + batch]]
            for n in chunk:
                if len(n) != len(self.codings) or any(not 0 <= x < h for x, h in zip(n, self.heights)):
                    raise ValueError(f"node {n} is outside the lattice of heights {self.heights}")
            if self._cells is not None:
                t0 = time.perf_counter()
                out.extend(self._cells.evaluate(n, values) for n in chunk)
                self.seconds += time.perf_counter() - t0
                self.nodes += len(chunk)
                continue
            t0 = time.perf_counter()
            rows = self.session.db.query(self.sql(chunk, values))
            self.seconds += time.perf_counter() - t0
            self.statements += 1
            self.nodes += len(chunk)
            out.extend(self._parse(chunk, rows, values))
        return out

    def _parse(self, chunk: Sequence[tuple[int, ...]], rows: Sequence[tuple], values: bool) -> list[NodeEval]:
        hist: list[list[tuple[int, int, int]]] = [[] for _ in chunk]
        vals: list[list[dict[int, int]]] = [[{} for _ in self.codings] for _ in chunk]
        for node, kind, a, b, cnt in rows:
            node, kind = int(node), int(kind)
            if kind == 0:
                hist[node].append((int(a), int(b), int(cnt)))
            else:
                vals[node][kind - 1][int(a)] = int(cnt)
        out = []
        for i, levels in enumerate(chunk):
            h = sorted(hist[i])
            sizes = np.array([x[0] for x in h], dtype=np.int64)
            bad = np.array([x[1] == 1 for x in h], dtype=bool)
            classes = np.array([x[2] for x in h], dtype=np.int64)
            sv = tuple(vals[i]) if values else None
            c = metrics.Classes(sizes, classes, bad, sv)
            out.append(NodeEval(levels, c, c.suppressed_records))
        return out


class _Cells:
    """The frequency table in memory: a node's classes are its cells grouped on the node's
    codes (the same GROUP BY as the SQL's, on the same cells, so the same counts). Used for
    size-only models (a class violates when it holds fewer than ``smallest`` records)."""

    def __init__(
        self,
        codes: tuple[tuple[np.ndarray, ...], ...],
        n: np.ndarray,
        sizes: tuple[tuple[int, ...], ...],
        smallest: int,
    ):
        self.codes, self.n, self.sizes, self.smallest = codes, n, sizes, smallest

    def _classes(self, levels: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
        return classes(
            [self.codes[j][L] for j, L in enumerate(levels)], [self.sizes[j][L] for j, L in enumerate(levels)], self.n
        )

    def evaluate(self, levels: tuple[int, ...], values: bool) -> NodeEval:
        inverse, size = self._classes(levels)
        distinct, count = np.unique(size, return_counts=True)
        bad = distinct < self.smallest
        sv = None
        if values:
            cell_bad = (size < self.smallest)[inverse]
            kept_n = self.n[cell_bad]
            sv = []
            for j, L in enumerate(levels):
                per = np.bincount(self.codes[j][L][cell_bad], weights=kept_n, minlength=self.sizes[j][L])
                sv.append({int(g): int(per[g]) for g in np.flatnonzero(per)})
        c = metrics.Classes(distinct.astype(np.int64), count.astype(np.int64), bad, None if sv is None else tuple(sv))
        return NodeEval(levels, c, c.suppressed_records)


def classes(codes: Sequence[np.ndarray], radices: Sequence[int], n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(each cell's class number, each class's records): cells grouped on their ``codes`` (one
    array per column, codes below that column's radix), ``n`` records each. The class key is the
    mixed-radix number of the cell's codes (compacted whenever the next radix could overflow 63
    bits); a key range up to a few times the cells is counted directly (no sort)."""
    key = np.zeros(len(n), dtype=np.int64)
    span = 1
    for code, radix in zip(codes, radices):
        if span * radix >= 1 << 62:
            _, key = np.unique(key, return_inverse=True)
            key = key.astype(np.int64).reshape(-1)
            span = int(key.max()) + 1 if len(key) else 1
        key = key * radix + code
        span *= radix
    if span <= max(1 << 16, 4 * len(key)):
        per_key = np.bincount(key, weights=n, minlength=span)
        present = per_key > 0
        rank = np.cumsum(present) - 1
        return rank[key], per_key[present].astype(np.int64)
    _, inverse = np.unique(key, return_inverse=True)
    inverse = inverse.reshape(-1)
    return inverse, np.bincount(inverse, weights=n).astype(np.int64)


def _value_counts(session: Any, columns: Sequence[str]) -> list[dict[str | None, int]]:
    d = session.dialect
    rel = session.relation.sql
    parts = []
    for j, c in enumerate(columns):
        x = f"cast(t.{d.quote(c)} as {d.text})"
        parts.append(f"select {j} as j, {x} as v, count(*) as n from {rel} as t group by {x}")
    rows = session.db.query("\nunion all\n".join(parts))
    out: list[dict[str | None, int]] = [{} for _ in columns]
    for j, v, n in rows:
        out[int(j)][None if v is None else str(v)] = int(n)
    return out


def frequency_sql(
    d: Any,
    relation_sql: str,
    qi: Sequence[str],
    codings: Sequence[Coding],
    sensitive: str | None,
    s_coding: Coding | None,
) -> str:
    """The frequency table's SELECT: columns ``c<j>_<L>`` (QI ``j``'s code at level ``L``),
    ``s_<L>`` (the sensitive column's) and ``n`` (records)."""
    # the frequency table: the table grouped by its raw QI (and sensitive) values, each
    # distinct combination coded by CASEs (no join, whose row estimates on an unanalysed table
    # led PostgreSQL into nested loops of seconds), the higher levels from the level-0 codes
    raw = [(f"v{j}", f"cast(t.{d.quote(c)} as {d.text})") for j, c in enumerate(qi)]
    if s_coding is not None:
        raw.append(("vs", f"coalesce(cast(t.{d.quote(str(sensitive))} as {d.text}), '')"))
    grouped = (
        f"select {', '.join(f'{x} as {a}' for a, x in raw)}, count(*) as n\n"
        f"from {relation_sql} as t\ngroup by {', '.join(x for _, x in raw)}"
    )
    coded = [f"{code0_sql(f'v{j}', c, d)} as c{j}_0" for j, c in enumerate(codings)]
    if s_coding is not None:
        coded.append(f"{code0_sql('vs', s_coding, d)} as s_0")
    middle = f"select {', '.join(coded)}, n from (\n{grouped}\n) as r {d.fence}"
    outer = []
    for j, cd in enumerate(codings):
        outer += [f"c{j}_0"] + [f"{_level_sql(f'c{j}_0', cd.codes[L])} as c{j}_{L}" for L in range(1, len(cd.codes))]
    if s_coding is not None:
        outer += ["s_0"] + [f"{_level_sql('s_0', s_coding.codes[L])} as s_{L}" for L in range(1, len(s_coding.codes))]
    return f"select {', '.join(outer)}, n from (\n{middle}\n) as m"


def checked_qi(
    columns: Sequence[str], hierarchies: Mapping[str, Hierarchy], models: Sequence[Model], qi: Sequence[str] | None
) -> list[str]:
    """The QI columns (``qi``, default the hierarchies' columns in table order), checked against
    the table's ``columns`` alone (no row read): each QI and hierarchy column in the table, each QI
    with a hierarchy, the models' sensitive column in the table and no QI."""
    qi = list(qi) if qi is not None else [c for c in columns if c in hierarchies]
    for c in list(qi) + [c for c in hierarchies if c not in qi]:
        if c not in columns:
            import difflib

            close = difflib.get_close_matches(c, columns, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ColumnError(f"column {c!r} (of a hierarchy) is not in the table{hint}")
    if not qi:
        raise ColumnError("no quasi-identifier has a hierarchy; give one per QI column (--hierarchy COLUMN=FILE)")
    missing = [c for c in qi if c not in hierarchies]
    if missing:
        raise HierarchyError(
            f"quasi-identifier {missing[0]!r} has no hierarchy; give it one (--hierarchy {missing[0]}=FILE)"
        )
    sensitive = sensitive_of(models)
    if sensitive is not None:
        if sensitive not in columns:
            raise ColumnError(f"sensitive column {sensitive!r} is not in the table")
        if sensitive in qi:
            raise ColumnError(
                f"sensitive column {sensitive!r} is also a quasi-identifier; a column is one or the other"
            )
    return qi


@contextmanager
def evaluator(
    session: Any,
    hierarchies: Mapping[str, Hierarchy],
    models: Sequence[Model],
    *,
    qi: Sequence[str] | None = None,
    gs_factor: float = 0.5,
    cells: int = LOCAL_CELLS,
) -> Iterator[Evaluator]:
    """An :class:`Evaluator` over ``session``'s relation: the QI columns are ``qi`` (default: the
    hierarchies' columns, in the relation's column order), each generalized by its hierarchy;
    the models' sensitive column (one at most) is read as it is, or through the hierarchy of a
    hierarchical t-closeness. The frequency table is dropped on exit. With size-only models and
    a frequency table of at most ``cells`` cells, nodes are grouped from its cells in memory
    (:meth:`Evaluator.fetch_cells`; 0: always in SQL)."""
    d = session.dialect
    columns = list(session.columns)
    qi = checked_qi(columns, hierarchies, models, qi)
    sensitive = sensitive_of(models)
    read = qi + ([sensitive] if sensitive is not None else [])
    counts = _value_counts(session, read)
    rows = sum(counts[0].values())
    if rows == 0:
        raise DataError("the table is empty; there is nothing to anonymize")
    codings, domains = [], []
    for c, cnt in zip(qi, counts):
        coding, dom = _coding(hierarchies[c], cnt)
        codings.append(coding)
        domains.append(dom)
    s_coding = None
    if sensitive is not None:
        sh = next((m.hierarchy for m in models if isinstance(m, TCloseness) and m.hierarchy is not None), None)
        s_counts = counts[-1]
        if sh is None:
            # No hierarchy given: the column's own values, NULL read as '' as frequency_sql reads
            # it (so it is a value of the hierarchy, and a '' and a NULL count together).
            merged: dict[str | None, int] = {}
            for v, n in s_counts.items():
                merged["" if v is None else v] = merged.get("" if v is None else v, 0) + n
            s_counts = merged
            sh = CsvHierarchy(sensitive, tuple((str(v), "*") for v in s_counts), "of its values")
        s_coding, _ = _coding(sh, s_counts)
    domain = metrics.Domain(rows, tuple(domains), gs_factor)

    freq_sql = frequency_sql(d, session.relation.sql, qi, codings, sensitive, s_coding)
    name = None
    if d.temp_tables:
        name = temp_name("anonymize")
    try:
        if name is not None:
            session.db.query(f"create temp table {d.quote(name)} as\n{freq_sql}")
        ev = Evaluator(session, qi, codings, domain, models, s_coding, name, freq_sql)
        ev.fetch_cells(cells)
        yield ev
    finally:
        if name is not None:
            session.db.drop_temp_tables([name])
