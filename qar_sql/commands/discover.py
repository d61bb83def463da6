"""Find the quasi-identifiers (Pastore, Pellegrino & Scarano 2020; METHOD.md §5).

For every combination of 1 … s of the candidate columns: singletons S, %S = S / L, distinct
values DV = H and the smallest class. A combination with H = L (every row unique) is an
*identifier*; its supersets are identifiers too, so they are skipped, not scanned. The *best
QID* is the smallest combination among the non-identifiers with the most singletons.

The counting is the audit's pushed-down scan: columns coded once as small integers (a DuckDB
session temp table, or a CTE elsewhere), then batches of GROUP BYs returning only
(combination, class size, classes) rows, one level (size) at a time so pruning can apply.
"""

from __future__ import annotations

import functools
import itertools
import math
import os
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypedDict, Unpack

from qar_sql.engines.render import render
from qar_sql.engines.source import Database, Relation, SourceLike, open_source, select_columns, source_label
from qar_sql.errors import DatabaseError, DataError, ParameterError, shown
from qar_sql.measures.audit import provenance
from qar_sql.progress import with_progress
from qar_sql.pushdown.scan import Progress, default_batch_size
from qar_sql.results import SingletonShare, Tabular, attribute_columns, pick

_temp_counter = itertools.count(1)


@dataclass(frozen=True)
class Combination(SingletonShare):
    """Counts for one column combination."""

    columns: tuple[str, ...]
    rows: int  # rows counted: L, or the rows with no NULL in these columns with drop_null
    distinct: int  # DV = H, NULL a value of its own
    singletons: int  # S
    min_class_size: int  # 0 when no row is counted
    identifier: bool  # H = L: every counted row is unique


# A combination's numbers, in the order of its table row and its JSON object (after "columns").
_COMBINATION_FIELDS = ("rows", "distinct", "singletons", "singleton_share", "min_class_size", "identifier")


@dataclass(frozen=True, repr=False)
class DiscoverResult(Tabular):
    source: str
    table: str | None
    engine: str
    rows: int  # L, every row of the table
    columns: tuple[str, ...]
    max_size: int
    drop_null: bool
    combinations: tuple[Combination, ...]  # scanned ones, most singletons first
    best_qid: tuple[str, ...]  # empty when no non-identifier combination has a singleton
    identifiers: tuple[tuple[str, ...], ...]  # minimal identifiers found (their supersets skipped)
    skipped: int  # combinations not scanned because they contain an identifier
    statements: int
    seconds: float
    warnings: tuple[str, ...] = ()

    @property
    def best(self) -> Combination | None:
        for c in self.combinations:
            if c.columns == self.best_qid:
                return c
        return None

    def table_columns(self) -> dict[str, list]:
        """One row per scanned combination, most singletons first."""
        cs = self.combinations
        return {
            "columns": [", ".join(c.columns) for c in cs],
            "size": [len(c.columns) for c in cs],
            **attribute_columns(cs, _COMBINATION_FIELDS),
        }

    def summary_line(self) -> str:
        best = ", ".join(self.best_qid) or "none"
        return (
            f"{self.source}{f' table {self.table}' if self.table else ''}: {len(self.combinations):,} combinations "
            f"of up to {self.max_size} of {len(self.columns)} columns; best QID: {best}"
        )


@dataclass(frozen=True)
class _Combo:
    index: int
    codes: tuple[str, ...]


def sort_key(c: Combination, order: dict[tuple[str, ...], int]):
    """Most singletons first, then smaller combinations, then the columns' order."""
    return (-c.singletons, len(c.columns), order[c.columns])


def best_qid(combos: Sequence[Combination], order: dict[tuple[str, ...], int]) -> tuple[str, ...]:
    """The smallest non-identifier combination with the most singletons (ties: column order)."""
    candidates = [c for c in combos if not c.identifier and c.singletons > 0]
    if not candidates:
        return ()
    return min(candidates, key=lambda c: sort_key(c, order)).columns


class DiscoverKeywords(TypedDict, total=False):
    """Where :func:`discover` reads the table and how its statements run, declared once (the
    keywords it shares with :func:`qar_sql.audit`); defaults as :func:`qar_sql.audit`."""

    table: str | None
    delimiter: str | None
    null_tokens: Sequence[str]
    threads: int | None
    batch_size: int | None
    jobs: int
    progress: Progress | None


@with_progress("discover")
def discover(
    source: SourceLike = None,
    *,
    columns: Sequence[str] | None = None,
    exclude: Sequence[str] | None = None,
    max_size: int = 3,
    drop_null: bool = False,
    **options: Unpack[DiscoverKeywords],
) -> DiscoverResult:
    """Singletons, %S, distinct values and smallest class of every combination of 1 …
    ``max_size`` columns, identifiers pruned with their supersets, and the best QID.

    ``drop_null``: leave out of each combination the rows with NULL in one of its columns (how
    Pastore et al. count); otherwise NULL is a value of its own. ``options``: ``table``,
    ``delimiter``, ``threads``, ``batch_size``, ``jobs``, ``progress`` (:class:`DiscoverKeywords`).
    """
    unknown = sorted(set(options) - set(DiscoverKeywords.__annotations__))
    if unknown:  # as a spelled-out signature would
        raise TypeError(f"discover() got an unexpected keyword argument {unknown[0]!r}")
    started = time.perf_counter()
    batching = (options.get("batch_size"), options.get("jobs", 2), options.get("progress"))
    opts = DiscoverOptions(columns, exclude, max_size, drop_null, *batching)
    table, delimiter, threads = options.get("table"), options.get("delimiter"), options.get("threads")
    null_tokens = options.get("null_tokens", ())
    db, relation = open_source(source, table=table, delimiter=delimiter, threads=threads, null_tokens=null_tokens)
    with db:
        return discover_relation(db, relation, opts, started=started, source=source_label(source))


@dataclass(frozen=True)
class DiscoverOptions:
    """What :func:`discover` passes down to :func:`discover_relation`. Defaults as :func:`discover`."""

    columns: Sequence[str] | None = None
    exclude: Sequence[str] | None = None
    max_size: int = 3
    drop_null: bool = False
    batch_size: int | None = None
    jobs: int = 2
    progress: Progress | None = None


def discover_relation(
    db: Database, relation: Relation, opts: DiscoverOptions, *, started: float | None = None, source: str | None = None
) -> DiscoverResult:
    """:func:`discover` on an open connection."""
    started = started if started is not None else time.perf_counter()
    columns, exclude, max_size, drop_null = opts.columns, opts.exclude, opts.max_size, opts.drop_null
    batch_size, jobs, progress = opts.batch_size, opts.jobs, opts.progress
    if not isinstance(max_size, int) or isinstance(max_size, bool) or max_size < 1:
        raise ParameterError(f"--max-size {shown(max_size)} must be a whole number of at least 1, e.g. 3")
    if batch_size is not None and batch_size < 1:
        raise ParameterError(f"--batch-size {batch_size} must be at least 1")
    cols = select_columns(relation.columns, columns, exclude)
    if not cols:
        raise ParameterError("no columns are left to combine; name them with --columns")
    warnings = relation.token_notes(cols)
    if max_size > len(cols):
        warnings.append(f"--max-size {max_size} is more than the {len(cols)} columns; combinations stop at {len(cols)}")
        max_size = len(cols)
    rows = int(db.query(f"select count(*) from {relation.sql} as t")[0][0])
    if rows == 0:
        raise DataError(f"table {relation.display!r} is empty; there is nothing to discover")

    dialect = db.dialect
    encode_sql = render("encode.sql", dialect, columns=list(cols), relation=relation.sql, order_by=None)
    temp_name = f"qar_discover_{os.getpid()}_{next(_temp_counter)}"
    if dialect.temp_tables:
        db.query(render("materialize.sql", dialect, name=temp_name, encode_sql=encode_sql))
        encoded, cte = dialect.quote(temp_name), None
    else:
        encoded, cte = "encoded", encode_sql

    total = sum(math.comb(len(cols), s) for s in range(1, max_size + 1))
    done = 0
    order: dict[tuple[str, ...], int] = {}
    found: list[Combination] = []
    identifiers: list[frozenset[int]] = []
    identifier_cols: list[tuple[str, ...]] = []
    skipped = statements = 0

    def advance(n: int) -> None:
        nonlocal done
        done = min(total, done + n)
        if progress:
            progress(done, total)

    try:
        for size in range(1, max_size + 1):
            level = []
            for combo in itertools.combinations(range(len(cols)), size):
                order[tuple(cols[i] for i in combo)] = len(order)
                if any(ident <= set(combo) for ident in identifiers):
                    skipped += 1
                else:
                    level.append(combo)
            advance(math.comb(len(cols), size) - len(level))
            if not level:
                continue
            bsize = batch_size or default_batch_size(dialect, len(level), jobs)
            batches = [level[i : i + bsize] for i in range(0, len(level), bsize)]
            sqls, start = [], 0
            for batch in batches:
                items = [_Combo(start + k, tuple(f"c{i}" for i in c)) for k, c in enumerate(batch)]
                start += len(batch)
                sqls.append(
                    render("discover.sql", dialect, combos=items, encoded=encoded, encode_sql=cte, drop_null=drop_null)
                )
            sizes = iter([len(b) for b in batches])
            results = db.query_many(sqls, jobs=jobs, on_done=functools.partial(_advance_by_next, advance, sizes))
            statements += len(sqls)
            hist: dict[int, list[tuple[int, int]]] = defaultdict(list)
            for result in results:
                for qi, csize, classes in result:
                    hist[int(qi)].append((int(csize), int(classes)))
            for j, combo in enumerate(level):
                h = sorted(hist.get(j, ()))
                counted = sum(s * n for s, n in h)
                distinct = sum(n for _, n in h)
                names = tuple(cols[i] for i in combo)
                if not drop_null and counted != rows:
                    raise DatabaseError(
                        f"combination {names} counts {counted} rows, not {rows} (the table changed "
                        "during the scan?); run it again on a table that is not being written"
                    )
                ident = counted > 0 and distinct == counted
                if ident:
                    identifiers.append(frozenset(combo))
                    identifier_cols.append(names)
                found.append(
                    Combination(
                        columns=names,
                        rows=counted,
                        distinct=distinct,
                        singletons=sum(n for s, n in h if s == 1),
                        min_class_size=h[0][0] if h else 0,
                        identifier=ident,
                    )
                )
    finally:
        if dialect.temp_tables:
            db.drop_temp_tables((temp_name,))
    found.sort(key=lambda c: sort_key(c, order))
    return DiscoverResult(
        **provenance(db, relation, source),
        rows=rows,
        columns=cols,
        max_size=max_size,
        drop_null=drop_null,
        combinations=tuple(found),
        best_qid=best_qid(found, order),
        identifiers=tuple(identifier_cols),
        skipped=skipped,
        statements=statements,
        seconds=time.perf_counter() - started,
        warnings=tuple(warnings),
    )


# ------------------------------------------------------------------------------------------
# Output
# ------------------------------------------------------------------------------------------


def combination_dict(c: Combination) -> dict[str, Any]:
    return {"columns": list(c.columns), **pick(c, _COMBINATION_FIELDS)}


def discover_dict(r: DiscoverResult) -> dict[str, Any]:
    """The documented JSON object of ``qar discover`` (docs/treatments.md)."""
    return {
        **pick(r, ("source", "table", "engine", "rows")),
        "columns": list(r.columns),
        **pick(r, ("max_size", "drop_null")),
        "best_qid": list(r.best_qid),
        "identifiers": [list(i) for i in r.identifiers],
        **pick(r, ("skipped", "seconds")),
        "warnings": list(r.warnings),
        "combinations": [combination_dict(c) for c in r.combinations],
    }


def _pct(c: Combination) -> str:
    return f"{100 * c.singleton_share:.2f}%"


def render_discover(r: DiscoverResult, fmt: str, top: int | None = 20) -> str:
    from qar_sql.output.formats import render_result  # report imports the package version: not at import time

    shown = r.combinations if top is None else r.combinations[:top]
    return render_result(
        fmt,
        lambda: discover_dict(r),
        lambda: _discover_markdown(r, shown),
        lambda: _discover_text(r, shown),
        r.warnings,
    )


def _discover_markdown(r: DiscoverResult, shown: Sequence[Combination]) -> list[str]:
    from qar_sql.output.formats import _md_escape

    best = r.best
    lines = [
        f"## Quasi-identifiers of `{_md_escape(r.table or r.source)}`",
        "",
        f"{r.rows:,} rows; combinations of 1–{r.max_size} of {len(r.columns)} columns"
        + (", rows with NULL in a combination left out of it" if r.drop_null else "")
        + ".",
        "",
        f"**Best QID:** {', '.join(f'`{_md_escape(c)}`' for c in r.best_qid) or 'none (no combination has a singleton)'}"
        + (f" — {best.singletons:,} singletons ({_pct(best)})" if best else ""),
        "",
        f"**Identifiers (H = L):** {'; '.join(', '.join(f'`{_md_escape(c)}`' for c in i) for i in r.identifiers) or 'none'}"
        + f" ({r.skipped:,} supersets skipped)",
        "",
        "| columns | rows | distinct | singletons | %S | min class | identifier |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for c in shown:
        cols = ", ".join(f"`{_md_escape(x)}`" for x in c.columns)
        lines.append(
            f"| {cols} | {c.rows:,} | {c.distinct:,} | {c.singletons:,} | {_pct(c)} | {c.min_class_size:,} | {'yes' if c.identifier else ''} |"
        )
    if len(shown) < len(r.combinations):
        lines += ["", f"{len(r.combinations) - len(shown):,} more combinations in the JSON output."]
    return lines


def _discover_text(r: DiscoverResult, shown: Sequence[Combination]) -> list[str]:
    best = r.best
    lines = [
        f"Quasi-identifiers of {r.table or r.source} ({r.engine}, {r.seconds:.2f} s)",
        "",
        f"  rows                {r.rows:,}",
        f"  columns             {len(r.columns)}: {', '.join(r.columns)}",
        f"  combinations        {len(r.combinations):,} scanned of sizes 1..{r.max_size}, {r.skipped:,} skipped (supersets of identifiers)",
        f"  NULLs               {'rows with NULL in a combination left out of it' if r.drop_null else 'a value of their own'}",
        f"  best QID            {', '.join(r.best_qid) or 'none (no combination has a singleton)'}"
        + (f" ({best.singletons:,} singletons, {_pct(best)}, {best.distinct:,} distinct)" if best else ""),
        f"  identifiers         {'; '.join(', '.join(i) for i in r.identifiers) or 'none'}",
        "",
        f"  {'singletons':>10}  {'%S':>7}  {'distinct':>9}  {'rows':>9}  {'min class':>9}  columns",
    ]
    for c in shown:
        flag = "  (identifier)" if c.identifier else ""
        lines.append(
            f"  {c.singletons:>10,}  {_pct(c):>7}  {c.distinct:>9,}  {c.rows:>9,}  {c.min_class_size:>9,}  {', '.join(c.columns)}{flag}"
        )
    if len(shown) < len(r.combinations):
        lines.append(f"  … {len(r.combinations) - len(shown):,} more (use --top or --format json)")
    return lines


def _advance_by_next(advance, sizes) -> None:
    """Progress callback: advance by the size of the next finished batch."""
    advance(next(sizes, 0))
