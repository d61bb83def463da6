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
import time
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from qar_sql.engines.render import render
from qar_sql.engines.session import Session
from qar_sql.engines.source import select_columns
from qar_sql.errors import DatabaseError, DataError, ParameterError
from qar_sql.measures.audit import check_groupable, provenance
from qar_sql.parameters.measures import DiscoverParams
from qar_sql.pushdown.scan import WIDE_COLUMNS, Progress, default_batch_size, materialize_statements
from qar_sql.results import SingletonShare, Tabular, pick


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
COMBINATION_FIELDS = ("rows", "distinct", "singletons", "singleton_share", "min_class_size", "identifier")


@dataclass(frozen=True, repr=False)
class DiscoverResult(Tabular):
    table_at = ("combinations",)
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
        return next((c for c in self.combinations if c.columns == self.best_qid), None)

    def to_dict(self) -> dict[str, Any]:
        """The documented JSON object of ``qar discover`` (docs/treatments.md)."""
        return {
            **pick(self, ("source", "table", "engine", "rows")),
            "columns": list(self.columns),
            **pick(self, ("max_size", "drop_null")),
            "best_qid": list(self.best_qid),
            "identifiers": [list(i) for i in self.identifiers],
            **pick(self, ("skipped", "seconds")),
            "warnings": list(self.warnings),
            "combinations": [{"columns": list(c.columns), **pick(c, COMBINATION_FIELDS)} for c in self.combinations],
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


def discover_relation(
    session: Session, params: DiscoverParams, progress: Progress | None = None, *, started: float | None = None
) -> DiscoverResult:
    """Singletons, %S, distinct values and smallest class of every combination of 1 …
    ``params.max_size`` columns of the session's relation, identifiers pruned with their
    supersets, and the best QID."""
    started = started if started is not None else time.perf_counter()
    db, relation = session.db, session.relation
    columns, exclude, max_size, drop_null = params.columns, params.exclude, params.max_size, params.drop_null
    batch_size, jobs = params.batch_size, params.jobs
    cols = select_columns(relation.columns, columns, exclude)
    if not cols:
        raise ParameterError("no columns are left to combine; name them with --columns")
    warnings = relation.token_notes(cols)
    if max_size > len(cols):
        warnings.append(f"--max-size {max_size} is more than the {len(cols)} columns; combinations stop at {len(cols)}")
        max_size = len(cols)
    check_groupable(db, relation, cols)
    rows = int(db.query(f"select count(*) from {relation.sql} as t")[0][0])
    if rows == 0:
        raise DataError(f"table {relation.display!r} is empty; there is nothing to discover")

    dialect = db.dialect
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

    # The columns coded once (a session temp table where the dialect has them, else a CTE).
    # A wide table's codes in parts: one statement joining a dictionary per column exceeds
    # DuckDB's expression depth at 500 columns.
    wide = (
        (lambda name: materialize_statements(dialect, relation.sql, cols, name)) if len(cols) > WIDE_COLUMNS else None
    )
    with session.coded(cols, order_by=(), what="discover", statements=wide) as coded:  # (): no record order
        encoded, cte = coded.encoded, coded.encode_sql
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
    # Most singletons first, then smaller combinations, then the columns' order; the best QID is
    # the first non-identifier there (the smallest with the most singletons, ties: column order).
    found.sort(key=lambda c: (-c.singletons, len(c.columns), order[c.columns]))
    best = next((c.columns for c in found if not c.identifier and c.singletons > 0), ())
    return DiscoverResult(
        **provenance(db, relation, session.label), rows=rows, columns=cols, max_size=max_size, drop_null=drop_null,
        combinations=tuple(found), best_qid=best, identifiers=tuple(identifier_cols), skipped=skipped,
        statements=statements, seconds=time.perf_counter() - started, warnings=tuple(warnings),
    )  # fmt: skip


def _advance_by_next(advance, sizes) -> None:
    """Progress callback: advance by the size of the next finished batch."""
    advance(next(sizes, 0))
