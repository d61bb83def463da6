"""The pushed-down scan: for every quasi-identifier, the class-size histogram, computed by the
database in a handful of batched statements. Only (qi, class size, number of classes) rows come
back — never the table.

Plan: one statement per batch of QIs, each QI a ``GROUP BY`` whose group sizes are counted again
by size (NULL is a value of its own). DuckDB first codes every QI column as a small integer and
keeps the codes in a session temp table (in memory; the audited file or database is never
written); PostgreSQL codes them in a materialized CTE of each statement; the other engines
group the columns themselves (see :func:`render_statements`). Where the engine's dialect says
creating groups is cheap against reading rows (``cube_beta``), QIs whose columns have few
combinations are counted from cubes instead (:mod:`.lattice`).
"""

from __future__ import annotations

import itertools
import logging
import math
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypedDict, Unpack

from qar_sql.engines.dialects import Dialect
from qar_sql.engines.render import render
from qar_sql.engines.session import temp_name
from qar_sql.engines.source import Database
from qar_sql.errors import DatabaseError, ParameterError, require_whole, shown
from qar_sql.pushdown import lattice
from qar_sql.results import QIStats, ScanResult

Progress = Callable[[int, int], None]  # (batches done, batches total)

log = logging.getLogger(__name__)

#: From this many QIs on a scan says what it faces before it plans (a WARNING: shown on stderr
#: without any logging set up), and its progress counts the statements rendered as well as those
#: run: 300 columns at p = 3 (4,455,100 QIs) spent over a minute rendering SQL in silence.
LARGE_QIS = 100_000


def announce(n_columns: int, p: int, n_qi: int | None = None) -> bool:
    """Warn, before any planning, when ``n_qi`` (default: every p-subset) QIs is a large scan;
    True when it is."""
    if n_qi is None:
        n_qi = math.comb(n_columns, p) if 1 <= p <= n_columns else 0
    if n_qi < LARGE_QIS:
        return False
    smaller = f"a smaller p (p = {p - 1}: {math.comb(n_columns, p - 1):,} quasi-identifiers) or " if p > 1 else ""
    log.warning(
        "%s columns at p = %d: %s quasi-identifiers to scan, one GROUP BY over the table each; "
        "this is large and can take many minutes — consider %sfewer columns (--columns, --exclude)",
        f"{n_columns:,}",
        p,
        f"{n_qi:,}",
        smaller,
    )
    return True


class Ticker:
    """Counts finished statements and reports (done, total) to ``progress`` (if any) at each
    call: the ``on_done`` of ``query_many`` and of the steps around it."""

    def __init__(self, progress: Progress | None, total: int):
        self.progress, self.total, self.done = progress, total, 0

    def __call__(self) -> None:
        self.done += 1
        if self.progress:
            self.progress(self.done, self.total)


@dataclass(frozen=True)
class QIBatch:
    index: int
    codes: tuple[str, ...]
    cube: str | None = None  # counted from this cube (CTE or quoted temp table) instead of the codes
    residual: str | None = None  # counted from this residual (CTE or quoted temp table): prune.residual_plan

    # Record-level scans pack uniqueness flags into 62-bit words (62 keeps sums of distinct
    # powers of two inside a signed 64-bit integer on every engine).
    @property
    def word(self) -> int:
        return self.index // 62

    @property
    def bit(self) -> int:
        return 1 << (self.index % 62)


def combinations(n_columns: int, p: int) -> list[tuple[int, ...]]:
    """QIs as column-index tuples, in ``itertools.combinations`` order (the QI index)."""
    check_p(n_columns, p)
    return list(itertools.combinations(range(n_columns), p))


def check_p(n_columns: int, p: int) -> None:
    """p a whole number from 1 to ``n_columns``, without making the QIs."""
    require_whole(p, 1, f"p = {shown(p)} must be a whole number of at least 1; try -p 3")
    if p > n_columns:
        raise ParameterError(
            f"p = {shown(p)} is larger than the number of quasi-identifier columns ({n_columns}); "
            f"use -p {max(n_columns, 1)} or name more columns"
        )


#: DuckDB codes a table of more than WIDE_COLUMNS columns in parts of PART_COLUMNS columns: the
#: time of one statement with a LEFT JOIN per column grows with joins × columns carried
#: (300 columns: 18 times 100 columns, even on 500 rows), that of the parts linearly.
WIDE_COLUMNS = 48
PART_COLUMNS = 16


#: From this many columns on, the scan keeps a wide table's codes in parts and each batch
#: statement joins the parts its QIs read (:func:`render_statements`).
PARTS_SCAN_COLUMNS = 256


#: Columns a slice of a wide table's copy is cut from (a multiple of PART_COLUMNS): the copy is
#: first cut into blocks of this many columns and each part's slice cut from its block, so that
#: no more than len(columns) / SLICE_BLOCK_COLUMNS statements read the copy of every column.
SLICE_BLOCK_COLUMNS = 256


#: Columns per profile statement, unless the dialect says fewer: one statement counting distinct
#: values of many columns costs DuckDB more than linearly in their number (300 columns: 20
#: times 100 columns), so wide tables are profiled in statements of this many columns.
PROFILE_COLUMNS = 32


def profile_statements(dialect: Dialect, relation_sql: str, columns: Sequence[str]) -> list[str]:
    """The profile (rows, then non-NULL and distinct counts per column) in statements of at
    most :data:`PROFILE_COLUMNS` (or ``dialect.profile_columns``) columns; each returns one row
    starting with the row count."""
    columns, n = list(columns), dialect.profile_columns or PROFILE_COLUMNS
    chunks = [columns[i : i + n] for i in range(0, len(columns), n)] or [[]]
    return [render("profile.sql", dialect, columns=chunk, relation=relation_sql) for chunk in chunks]


#: Columns per UNPIVOT profile statement (:func:`profile_row`): each statement binds the whole
#: table once, so a few statements of many columns, while one statement's time stays linear in
#: its columns (measured up to 4,000).
UNPIVOT_COLUMNS = 1024


def profile_row(db: Database, relation_sql: str, columns: Sequence[str]) -> list:
    """The profile as one row: the row count, then each column's non-NULL and distinct non-NULL
    counts. A table of more than :data:`WIDE_COLUMNS` columns on a dialect with ``unpivot`` is
    counted by a statement per column type (at most :data:`UNPIVOT_COLUMNS` columns each) that
    groups its (column, value) rows: DuckDB's statements of 32 COUNT(DISTINCT)s each cost time
    with the table's width, so the profile grew with columns x columns. Elsewhere
    :func:`profile_statements`."""
    d, columns = db.dialect, list(columns)
    if not (d.unpivot and len(columns) > WIDE_COLUMNS):
        row: list = []
        for sql in profile_statements(d, relation_sql, columns):
            got = db.query(sql)[0]
            row = row or [got[0]]
            row += got[1:]
        return row
    rows = db.query(render("profile.sql", d, columns=[], relation=relation_sql))[0][0]
    by_type: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for i, (column, type_name) in enumerate(zip(columns, db.column_types(relation_sql, columns))):
        by_type[type_name].append((i, column))
    counts = [0] * (2 * len(columns))  # a column of NULLs has no row: 0 and 0
    for same in by_type.values():
        for k in range(0, len(same), UNPIVOT_COLUMNS):
            chunk = same[k : k + UNPIVOT_COLUMNS]
            for name, nonnull, distinct in db.query(
                render("profile_unpivot.sql", d, columns=chunk, relation=relation_sql)
            ):
                i = int(str(name)[1:])
                counts[2 * i], counts[2 * i + 1] = int(nonnull), int(distinct)
    return [rows, *counts]


def slice_statements(
    dialect: Dialect, rows: str, n_columns: int, name: str, row_id: str, code_types: Sequence[str] | None = None
) -> tuple[list[str], list[str]]:
    """(statements, the parts' names): the codes of the columns v0, v1, ... of the copy ``rows``
    (with its row number ``row_id``) in parts ``name_part<k>`` of :data:`PART_COLUMNS` columns,
    each coded from a slice of its own columns. From :data:`SLICE_BLOCK_COLUMNS` columns on, the
    slices are cut from blocks of that many columns cut from the copy, not from the copy itself:
    each statement reading the copy costs time with its width (4,000 columns: 36 ms a slice,
    against 4 ms at 500), which made the codes quadratic in columns."""
    out: list[str] = []
    names: list[str] = []

    def cut(table: str, indices, source: str) -> list[str]:
        """The temp table ``table`` of the columns v<i> of ``source`` (with the row number)."""
        values = [f"v{i}" for i in indices]
        out.append(
            render(
                "materialize_slice.sql",
                dialect,
                name=table,
                columns=values,
                relation=dialect.quote(source),
                row_id=row_id,
            )
        )
        return values

    for first in range(0, n_columns, SLICE_BLOCK_COLUMNS):
        block = range(first, min(first + SLICE_BLOCK_COLUMNS, n_columns))
        source = rows
        if n_columns > SLICE_BLOCK_COLUMNS:
            source = f"{name}_block{first // SLICE_BLOCK_COLUMNS}"
            cut(source, block, rows)
        for start in range(block.start, block.stop, PART_COLUMNS):
            indices = list(range(start, min(start + PART_COLUMNS, n_columns)))
            part, piece = f"{name}_part{start // PART_COLUMNS}", f"{name}_slice{start // PART_COLUMNS}"
            values = cut(piece, indices, source)
            encode_sql = render(
                "encode.sql",
                dialect,
                columns=values,
                relation=dialect.quote(piece),
                order_by=None,
                row_id=f"t.{row_id}",
            )
            types = [code_types[i] for i in indices] if code_types else None
            out.append(render("materialize.sql", dialect, name=part, encode_sql=encode_sql, code_types=types))
            out.append(f"drop table {dialect.quote(piece)}")
            names.append(part)
        if source != rows:
            out.append(f"drop table {dialect.quote(source)}")
    return out, names


@dataclass(frozen=True)
class Parts:
    """A wide table's codes in parts (DuckDB): ``names[k]`` is the temp table of the codes of
    columns ``k * PART_COLUMNS`` on, as its c0, c1, ..., with the row number r."""

    names: tuple[str, ...]

    def columns(self, indices) -> list[dict]:
        """materialize_parts.sql's ``parts`` for the codes of these columns (indices among all
        QI columns): only the parts that hold one, each with (its code, the column's index)."""
        by_part: dict[int, list[tuple[int, int]]] = defaultdict(list)
        for i in sorted(set(indices)):
            by_part[i // PART_COLUMNS].append((i % PART_COLUMNS, i))
        return [{"name": self.names[k], "columns": cols} for k, cols in sorted(by_part.items())]


def part_statements(
    dialect: Dialect,
    relation_sql: str,
    columns: Sequence[str],
    name: str,
    code_types: Sequence[str] | None = None,
) -> tuple[list[str], Parts]:
    """DuckDB, a wide table: statements that leave the codes of ``columns`` in parts of
    :data:`PART_COLUMNS` columns (:class:`Parts`, temp tables the caller drops). The QI columns
    are copied once (with a row number), each part coded from a slice of the copy
    (:func:`slice_statements`), and the copy and slices dropped: every statement names a table
    of at most :data:`SLICE_BLOCK_COLUMNS` columns but the one copy and the cutting of its
    blocks, so the work grows linearly with columns (a statement over a table of thousands of
    columns costs DuckDB time with its width, once per reference)."""
    rows = f"{name}_rows"
    out = [render("materialize_rows.sql", dialect, name=rows, columns=list(columns), relation=relation_sql)]
    coded, names = slice_statements(dialect, rows, len(columns), name, "r", code_types)
    out += coded
    out.append(f"drop table {dialect.quote(rows)}")
    return out, Parts(tuple(names))


#: Most parts one statement joins: DuckDB's time for a join of k tables grows faster than k (the
#: 125 parts of 2,000 columns took 8.1 s in one statement, the 63 of 1,000 1.2 s), so more are
#: joined in a tree of statements of at most this many (:func:`join_parts_statements`).
JOIN_PARTS = 8


def join_parts_statements(dialect: Dialect, name: str, parts: Sequence[dict], rows: str | None = None) -> list[str]:
    """Statements that leave in the temp table ``name`` the codes of ``parts`` (as
    :meth:`Parts.columns` gives them) joined on the row number (with ``rows``, each row's weight
    and position from risk_rows.sql's table, as materialize_parts.sql). More than
    :data:`JOIN_PARTS` parts are joined in levels: each level joins groups of at most
    :data:`JOIN_PARTS` tables into tables that keep the row number, and drops the level before,
    so every statement joins a bounded number of tables and the work grows linearly with parts."""
    parts, level = list(parts), 0
    out: list[str] = []
    made: list[str] = []  # the tables of the level before, dropped once joined
    while len(parts) > JOIN_PARTS:
        joined, names = [], []
        for k in range(0, len(parts), JOIN_PARTS):
            group, inner = parts[k : k + JOIN_PARTS], f"{name}_join{level}_{k // JOIN_PARTS}"
            out.append(render("materialize_parts.sql", dialect, name=inner, parts=group, keep_r=True))
            joined.append({"name": inner, "columns": [(i, i) for part in group for _, i in part["columns"]]})
            names.append(inner)
        out += [f"drop table {dialect.quote(t)}" for t in made]
        parts, made, level = joined, names, level + 1
    out.append(render("materialize_parts.sql", dialect, name=name, parts=parts, rows=rows))
    out += [f"drop table {dialect.quote(t)}" for t in made]
    return out


def materialize_statements(
    dialect: Dialect,
    relation_sql: str,
    columns: Sequence[str],
    name: str,
    code_types: Sequence[str] | None = None,
) -> list[str]:
    """DuckDB: statements that leave the codes of ``columns`` in the temp table ``name``. A wide
    table is coded in parts (:func:`part_statements`) and the parts joined on the row number.
    The scan itself keeps the parts instead (:func:`render_statements`)."""
    columns = list(columns)
    if len(columns) <= WIDE_COLUMNS:
        encode_sql = render("encode.sql", dialect, columns=columns, relation=relation_sql, order_by=None)
        return [render("materialize.sql", dialect, name=name, encode_sql=encode_sql, code_types=code_types)]
    out, parts = part_statements(dialect, relation_sql, columns, name, code_types)
    out += join_parts_statements(dialect, name, parts.columns(range(len(columns))))
    out += [f"drop table {dialect.quote(t)}" for t in parts.names]
    return out


#: Most QIs in one PostgreSQL statement with cubes (one statement per connection up to this):
#: 816 QIs at p = 3 stay two statements of 408, as measured in docs/speed.md.
CUBE_BATCH = 512

#: QIs per statement where each QI groups the table's own columns: a statement then costs about
#: its QIs' passes over the table, so short statements keep the connections evenly busy and
#: progress moving, and ClickHouse's concurrent branches within its memory.
RAW_BATCH = 32


def batches_follow_jobs(dialect: Dialect) -> bool:
    """Whether the QIs of a scan on ``dialect`` are split into statements by ``--jobs`` (one
    batch per connection, :func:`default_batch_size`): only where the codes are a CTE of each
    statement (PostgreSQL); DuckDB's temp table and the engines that group the columns
    themselves (:func:`render_statements`) batch the same for any number of connections."""
    return not dialect.temp_tables and dialect.cte_materialized


def default_batch_size(dialect: Dialect, n_qi: int, jobs: int) -> int:
    if dialect.temp_tables:
        return 128
    # Each statement re-derives the codes, so use as few statements as keep every connection
    # busy (one per connection, at most 256 QIs each).
    return max(1, min(256, math.ceil(n_qi / max(jobs, 1))))


def code_type(distinct: int) -> str:
    """The narrowest integer type for codes -1 .. distinct - 1 (narrow codes scan faster)."""
    for name, top in (("tinyint", 2**7), ("smallint", 2**15), ("integer", 2**31)):
        if distinct < top:
            return name
    return "bigint"


def render_statements(
    dialect: Dialect,
    relation_sql: str,
    columns: Sequence[str],
    p: int,
    *,
    batch_size: int | None = None,
    jobs: int = 1,
    temp_name: str = "qar_codes",
    codes_table: str | None = None,
    cardinalities: Sequence[int] | None = None,
    plan: lattice.Plan | None = None,
    only: Sequence[int] | None = None,
    residuals: Residuals | None = None,
    on_render: Progress | None = None,
) -> tuple[list[str], list[str], list[list[tuple[int, ...]]], list[str]]:
    """(setup statements, batch statements, QIs of each batch, temp tables the batches make
    besides the codes) for this scan. With
    ``codes_table`` (DuckDB), the codes are read from that existing temp table; with ``plan``,
    some QIs are counted from cubes; with ``only``, just those QIs (by index) are counted, and
    with ``residuals`` (:func:`residuals_apply`), some of them from the residual of a subset.
    ``on_render(done, work)`` follows each batch statement rendered, ``work`` being the
    statements to render, the setup and the statements to run."""
    combos = combinations(len(columns), p)
    setup: list[str] = []
    keys = [f"c{i}" for i in range(len(columns))]  # what each column is grouped by
    parts: Parts | None = None  # a wide table's codes in parts: each batch joins those it reads
    temps: list[str] = []
    if codes_table:
        encoded, cte = dialect.quote(codes_table), None
    elif dialect.temp_tables:
        types = [code_type(k) for k in cardinalities] if cardinalities else None
        if len(columns) > PARTS_SCAN_COLUMNS:
            # Not one codes table of every column: each batch statement would name it once per
            # QI, and DuckDB's time for a reference grows with the table's width (2,000 columns:
            # three times that of 128), making p = 1 quadratic in columns. Below, the batch's
            # own join of its parts costs more than it saves (p = 2 on 100 columns).
            part_sql, parts = part_statements(dialect, relation_sql, columns, temp_name, types)
            setup += part_sql
            temps += parts.names
        else:
            setup += materialize_statements(dialect, relation_sql, columns, temp_name, types)
        encoded, cte = dialect.quote(temp_name), None
    elif dialect.cte_materialized:
        # PostgreSQL: the codes once per statement, in a materialized CTE. With cubes the
        # statements are short enough for one per connection, balanced by estimated work.
        # (Grouping the columns themselves, as below, took 188 s for its 130 s at 1,000,000 x 18.)
        encode_sql = render("encode.sql", dialect, columns=list(columns), relation=relation_sql, order_by=None)
        encoded, cte = "encoded", encode_sql
        if batch_size is None and plan is not None and plan.cubes:
            # at most CUBE_BATCH QIs a statement: one statement of 6,325 QIs (12,650 QIs at
            # p = 4 over two connections) made a PostgreSQL backend grow past 11 GB, OOM-killed
            batch_size = min(CUBE_BATCH, math.ceil(len(combos) / max(jobs, 1)))
    else:
        # An engine that derives a CTE again at each reference (SQLite, MariaDB, ClickHouse,
        # Spark) would code the whole table once per QI (a join per column). Grouping the
        # columns themselves is one pass per QI and gives the same classes: a code numbers the
        # values by the engine's own equality, the one GROUP BY uses.
        encoded, cte = f"{relation_sql} as t", None
        keys = [f"t.{dialect.quote(c)}" for c in columns]
        batch_size, plan = batch_size or RAW_BATCH, None  # no dialect here plans cubes
    if not residuals_apply(dialect, codes_table):
        residuals = None
    size = batch_size or default_batch_size(dialect, len(combos) if only is None else len(only), jobs)
    if size < 1:
        raise ParameterError(f"--batch-size {size} must be at least 1")
    statements, batches = [], []
    # DuckDB: cubes and residuals are session temp tables made at the head of the batch's
    # statement; elsewhere (PostgreSQL) materialized CTEs of the statement.
    in_temp = dialect.temp_tables
    ref = dialect.quote if in_temp else str  # how a batch's statement names its cube or residual
    planned = (
        _residual_batches(residuals, len(combos), only, size) if residuals else _batches(plan, len(combos), size, only)
    )
    previous: list[str] = []  # the last batch's residual tables, dropped by the next one
    for b, (cubes, qi_indices) in enumerate(planned):
        names = [f"{temp_name}_cube{b}_{k}" if in_temp else f"cube{k}" for k in range(len(cubes))]
        sources: dict = {}
        for name, cube in zip(names, cubes):
            sources.update((j, ref(name)) for j in cube.qis)
        groups: dict[tuple[int, ...], list[int]] = defaultdict(list)  # a residual's subset -> its QIs
        for j in qi_indices:
            if residuals and j in residuals:
                groups[residuals[j][0]].append(j)
        rnames = [f"{temp_name}_res{b}_{k}" if in_temp else f"residual{k}" for k in range(len(groups))]
        counted_from: dict[int, str] = {}
        residual_sql = []
        for name, (subset, members) in zip(rnames, sorted(groups.items())):
            counted_from.update((j, ref(name)) for j in members)
            # the columns its QIs read: the subset's and each QI's added column
            keep = sorted({i for j in members for i in combos[j]})
            residual_sql.append({"name": name, "codes": [keys[i] for i in subset], "keep": [keys[i] for i in keep]})
        qis = [QIBatch(j, tuple(keys[i] for i in combos[j]), sources.get(j), counted_from.get(j)) for j in qi_indices]
        cube_sql = [{"name": name, "codes": [keys[i] for i in cube.columns]} for name, cube in zip(names, cubes)]
        temps.extend((names + rnames) if in_temp else [])
        head = ""
        if in_temp:
            head += "".join(f"drop table if exists {dialect.quote(n)};\n" for n in previous)
            previous = []
        if parts is not None:
            # this batch's codes: the columns its QIs, cubes and residuals read, from their parts
            batch_codes = f"{temp_name}_batch{b}"
            read = [i for j in qi_indices for i in combos[j]] + [i for cube in cubes for i in cube.columns]
            head += _script(join_parts_statements(dialect, batch_codes, parts.columns(read)))
            encoded = dialect.quote(batch_codes)
            temps.append(batch_codes)
            previous = [batch_codes]
        if in_temp:
            head += _script(render("cube.sql", dialect, encoded=encoded, **c) for c in cube_sql)
            head += _script(render("residual.sql", dialect, encoded=encoded, **r) for r in residual_sql)
            previous += rnames
        statements.append(
            head
            + render(
                "class_sizes.sql",
                dialect,
                qis=qis,
                encoded=encoded,
                encode_sql=cte,
                cubes=[] if in_temp else cube_sql,
                residuals=[] if in_temp else residual_sql,
            )
        )
        batches.append([combos[j] for j in qi_indices])
        if on_render:
            on_render(b + 1, 2 * len(planned) + len(setup))
    return setup, statements, batches, temps


def _script(statements) -> str:
    """Statements as the head of a batch's statement: each ended by ``;`` and a line break."""
    return "".join(sql.rstrip() + ";\n" for sql in statements)


#: {QI index: (the columns of the (p − 1)-subset whose residual it is counted from, S of that
#: subset)}: :func:`qar_sql.pushdown.prune.residual_plan`.
Residuals = Mapping[int, tuple[tuple[int, ...], int]]


def residuals_apply(dialect: Dialect, codes_table: str | None = None) -> bool:
    """Whether a scan on this dialect counts QIs from residuals when asked: where the codes are
    kept (DuckDB's temp table, PostgreSQL's materialized CTE), a residual is made once per
    statement; an engine that derives a CTE again at each reference would make it per QI."""
    return bool(codes_table) or dialect.temp_tables or dialect.cte_materialized


def _residual_batches(residuals: Residuals, n_qi: int, only: Sequence[int] | None, size: int):
    """[((), QI indices)] per statement for the QIs (``only``, else all ``n_qi``), some of which
    are counted from residuals: the QIs of one residual stay in one statement (it is made once
    there), whole groups packed into statements of about ``size`` QIs, then the other QIs in runs."""
    wanted = sorted(only) if only is not None else range(n_qi)
    groups: dict[tuple[int, ...], list[int]] = defaultdict(list)
    plain = []
    for j in wanted:
        if j in residuals:
            groups[residuals[j][0]].append(j)
        else:
            plain.append(j)
    out: list[tuple[tuple, list[int]]] = []
    current: list[int] = []
    for subset in sorted(groups):
        if current and len(current) + len(groups[subset]) > size:
            out.append(((), sorted(current)))
            current = []
        current += groups[subset]
    if current:
        out.append(((), sorted(current)))
    out += [((), plain[i : i + size]) for i in range(0, len(plain), size)]
    return out


def _batches(plan: lattice.Plan | None, n_qi: int, size: int, only: Sequence[int] | None = None):
    """[(cubes, QI indices)] per statement. Without cubes: runs of ``size`` QIs in order. With
    cubes: ``ceil(n_qi / size)`` statements, each unit of work (a cube with its QIs, or one QI
    counted directly) given to the statement with the least estimated work so far among those
    with room for its QIs, heaviest units first, so that parallel connections finish together."""
    if only is not None or plan is None or not plan.cubes:  # (a subset: no cubes)
        wanted = sorted(only) if only is not None else list(range(n_qi))
        return [((), wanted[i : i + size]) for i in range(0, len(wanted), size)]
    n_batches = math.ceil(n_qi / size)
    units = sorted(plan.unit_costs(), key=lambda u: (-u[0], u[2][0]))
    work = [0.0] * n_batches
    out: list[tuple[list, list[int]]] = [([], []) for _ in range(n_batches)]
    for cost, cube, qis in units:
        # the least loaded statement that has room for the unit's QIs (``size`` bounds what
        # one statement holds: PostgreSQL's memory), else the least loaded
        room = [i for i in range(n_batches) if len(out[i][1]) + len(qis) <= size] or range(n_batches)
        b = min(room, key=lambda i: (work[i], i))
        work[b] += cost
        if cube is not None:
            out[b][0].append(cube)
        out[b][1].extend(qis)
    return [(tuple(c), sorted(q)) for c, q in out if q]


def plan_cubes(
    db: Database, relation_sql: str, columns: Sequence[str], p: int, rows: int | None = None
) -> lattice.Plan | None:
    """The cube plan for this scan, or None where the engine gains nothing from cubes."""
    beta = db.dialect.cube_beta
    if beta is None or len(columns) <= p:
        return None
    combos = combinations(len(columns), p)
    if len(combos) > lattice.MAX_PLANNED_QIS:
        return None
    freqs = value_frequencies(db, relation_sql, columns)
    total = rows if rows is not None else sum(n * c for n, c in freqs[0].items())
    return lattice.plan(freqs, total, combos, beta=beta)


def value_frequencies(db: Database, relation_sql: str, columns: Sequence[str]) -> list[dict[int, int]]:
    """For each column, {n: how many of its values (NULL one of them) occur in n records}."""
    freqs: list[dict[int, int]] = [dict() for _ in columns]
    for j, n, count in db.query(
        render("value_frequencies.sql", db.dialect, columns=list(columns), relation=relation_sql)
    ):
        freqs[int(j)][int(n)] = int(count)
    return freqs


def scan(db: Database, relation_sql: str, columns: Sequence[str], p: int, **options) -> ScanResult:
    """Run the scan and assemble per-QI counts; ``options`` are those of :func:`histograms`
    (e.g. ``codes_table``: a DuckDB temp table of codes the caller made and will drop)."""
    hist = histograms(db, relation_sql, columns, p, **options)
    return assemble(columns, p, combinations(len(columns), p), hist)


class StatementOptions(TypedDict, total=False):
    """The keywords of :func:`render_statements` that :func:`histograms` (and :func:`scan`) pass
    on unchanged, declared once. Defaults as :func:`render_statements`."""

    batch_size: int | None
    jobs: int
    codes_table: str | None
    cardinalities: Sequence[int] | None
    only: Sequence[int] | None
    residuals: Residuals | None


def histograms(
    db: Database,
    relation_sql: str,
    columns: Sequence[str],
    p: int,
    *,
    progress: Progress | None = None,
    rows: int | None = None,
    ticks_after: int = 0,
    **options: Unpack[StatementOptions],
) -> dict[int, list[tuple[int, int]]]:
    """{QI index: [(class size, classes)]} for every QI (or those in ``options["only"]``). Progress
    counts ``ticks_after`` more steps that the caller runs afterwards, and on a large scan
    (:data:`LARGE_QIS`) the statements rendered first."""
    codes_temp = temp_name("codes")
    only = options.get("only")
    large = announce(len(columns), p, None if only is None else len(only))
    plan = None if only is not None else plan_cubes(db, relation_sql, columns, p, rows)

    def rendered(done: int, work: int) -> None:
        if progress:
            progress(done, work + ticks_after)

    setup, statements, batches, temps = render_statements(
        db.dialect,
        relation_sql,
        columns,
        p,
        temp_name=codes_temp,
        plan=plan,
        on_render=rendered if large else None,
        **options,
    )
    tick = Ticker(progress, len(statements) + len(setup) + ticks_after)
    if large:  # the rendering counted as the first half of the statements' steps
        tick.total += len(statements)
        tick.done = len(statements)

    try:
        for sql in setup:
            db.query(sql)
            tick()
        results = db.query_many(statements, jobs=options.get("jobs", 1), on_done=tick)
    finally:
        if db.dialect.temp_tables:
            db.drop_temp_tables(([codes_temp] if setup else []) + temps)
    hist: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for rows_ in results:
        for qi, size, classes in rows_:
            hist[int(qi)].append((int(size), int(classes)))
    residuals = options.get("residuals")
    if residuals and residuals_apply(db.dialect, options.get("codes_table")):
        for j, (_, spared) in residuals.items():  # the subset's singletons, singletons of the QI
            if spared:
                h = dict(hist[j])
                h[1] = h.get(1, 0) + spared
                hist[j] = sorted(h.items())
    return hist


def assemble(columns, p, combos, hist) -> ScanResult:
    """Per-QI stats from histograms {qi index: [(size, classes), ...]}."""
    totals = {sum(s * n for s, n in h) for h in hist.values()}
    if len(totals) > 1:
        raise DatabaseError(
            "the QIs disagree on the number of rows (the table changed during the scan?); "
            "run the audit again on a table that is not being written"
        )
    rows = totals.pop() if totals else 0
    qis = (qi_stats(j, tuple(columns[i] for i in combo), hist.get(j, ()), rows) for j, combo in enumerate(combos))
    return ScanResult(rows=rows, columns=tuple(columns), p=p, qis=tuple(qis))


def qi_stats(index: int, columns: tuple[str, ...], hist, rows: int) -> QIStats:
    """The stats of one QI counted exactly, from its class-size histogram [(size, classes), ...]."""
    h = tuple(sorted(hist))
    return QIStats(
        index=index,
        columns=columns,
        distinct=sum(n for _, n in h),
        singletons=sum(n for s, n in h if s == 1),
        min_class_size=h[0][0] if h else 0,
        class_sizes=h,
        rows=rows,
    )
