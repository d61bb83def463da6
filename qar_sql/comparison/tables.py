"""The two tables of ``qar compare``: where each is read from, which columns are compared and
of what kind, how their records are linked (a key, the stored row order, or the treated release
read beside the original in one SELECT), and the --null-token values each side takes.

Every read is a SELECT of the engines (never a write): :class:`Side` streams a table's needed
columns as Arrow batches (:mod:`qar_sql.comparison.read`).
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from qar_sql.comparison.read import arrow_batches, numeric_array, value_array
from qar_sql.engines.secrets import mask_source
from qar_sql.engines.source import (
    DUCKDB_SUFFIXES,
    Database,
    Relation,
    column_names,
    file_kind,
    is_url,
    listed_once,
    select_columns,
)
from qar_sql.errors import ColumnError, ParameterError, UsageError
from qar_sql.treat.treatments import Binder, column_kinds, treated_sql
from qar_sql.treat.whatif import WithRelation


class Side:
    """One table to read: its connection, the SELECT of the needed columns, and how its output
    columns map back to the compared names."""

    def __init__(self, db: Database, sql: str, names: dict[str, str], display: str):
        self.db = db
        self.sql = sql
        # output column → compared name ("key:" for the link key; "o:NAME" for an original value
        # read beside its treated value)
        self.names = names
        self.display = display

    def batches(self, numeric: set[str], batch_rows: int) -> Iterator[dict[str, np.ndarray]]:
        outputs = list(self.names)
        for batch in arrow_batches(self.db, self.sql, outputs, batch_rows):
            out: dict[str, np.ndarray] = {}
            for out_name, column in zip(outputs, batch.columns):
                name = self.names[out_name]
                compared = name.removeprefix("o:")
                out[name] = numeric_array(column, compared) if compared in numeric else value_array(column)
            yield out


def takes_table(source: Any) -> bool:
    """Whether the original's ``table`` also names the treated table in ``source``: a
    database, not a file or a DataFrame (which holds one table)."""
    if isinstance(source, Path):
        source = str(source)
    return isinstance(source, str) and (is_url(source) or source.lower().endswith(DUCKDB_SUFFIXES))


def display(source: str | None, relation: Relation) -> str:
    if source is None:
        source = os.environ.get("QAR_DATABASE_URL", "")
    if relation.kind == "table":
        return f"{mask_source(source)} {relation.display}"
    return relation.display


def check_link(
    columns: Sequence[str], link: str | None, side: str = "original", fix: str = "name its key column"
) -> None:
    """The --link column is one of ``columns`` (the ``side``'s)."""
    if link is not None and link not in columns:
        raise ColumnError(f"link column {link!r} is not in the {side} ({listing(columns)}); {fix}")


def compared_columns(rel_o, rel_t, columns, exclude, link, from_treatments) -> tuple[str, ...]:
    check_link(rel_o.columns, link)
    check_link(rel_t.columns, link, "treated table", "name a key both tables have")
    if columns and link in columns:
        raise ColumnError(f"the link column {link!r} cannot also be compared; leave it out of --columns")
    skip = list(exclude or ()) + ([link] if link and not columns else [])
    cols = select_columns(rel_o.columns, columns, skip)
    if not cols:
        raise ParameterError("no columns are left to compare; name them with --columns")
    if from_treatments:
        return cols
    dropped = set(exclude or ()) | ({link} if link else set())
    lacking = [("the original", c, "the treated table") for c in cols if c not in rel_t.columns]
    if not columns:  # then the treated table's other columns are compared too
        lacking += [("the treated table", c, "the original") for c in rel_t.columns if c not in {*cols, *dropped}]
    if lacking:
        has, c, lacks = lacking[0]
        raise ColumnError(
            f"{has} has column {c!r}, which {lacks} lacks; compare the common columns "
            f"with --columns, or leave it out with --exclude {c!r}"
        )
    return cols


def listing(columns: Sequence[str]) -> str:
    return ", ".join(columns[:12]) + (" ..." if len(columns) > 12 else "")


def subset(names: Sequence[str] | str | None, cols: Sequence[str], option: str) -> tuple[str, ...]:
    names = column_names(names, option) or ()
    for n in names:
        if n not in cols:
            raise ColumnError(f"{option} names {n!r}, which is not among the compared columns ({listing(cols)})")
    listed_once(names, option)
    return names


def kinds(db_o, rel_o, db_t, rel_t, cols, categorical, from_treatments) -> tuple[list[str], list[str]]:
    """(numeric, categorical) compared columns: the original's numeric types are continuous,
    every other type categorical; ``categorical`` forces columns to be categorical."""
    forced = subset(categorical, cols, "--categorical")
    kinds = column_kinds(db_o, rel_o.sql, cols)
    numeric = [c for c in cols if kinds[c] in ("integer", "float") and c not in forced]
    if not from_treatments:
        treated_kinds = column_kinds(db_t, rel_t.sql, cols)
        for c in numeric:
            if treated_kinds[c] not in ("integer", "float"):
                # A missing-value token ('NA') made the treated column text: say so, not "its type"
                tokens = dict(rel_t.numeric_except).get(c)
                if tokens:
                    found = " and ".join(f"{t!r} in {n:,} row{'s' if n != 1 else ''}" for t, n in tokens)
                    options = " ".join(f"--null-token {shlex.quote(t)}" for t, _ in tokens)
                    raise ColumnError(
                        f"column {c!r} is numeric in the original, but in the treated table it holds {found}, "
                        f"so it is read as text there; read those as NULL with {options} (or compare its "
                        f"values as categories with --categorical {c!r})"
                    )
                raise ColumnError(
                    f"column {c!r} is numeric in the original but {treated_kinds[c]} in the treated table; "
                    f"compare its values as categories with --categorical {c!r}"
                )
    return numeric, [c for c in cols if c not in numeric]


def check_key(db: Database, rel: Relation, key: str, side: str) -> None:
    q = db.dialect.quote
    rows, present, distinct = db.query(
        f"select count(*), count(t.{q(key)}), count(distinct t.{q(key)}) from {rel.sql} as t"
    )[0]
    if int(present) < int(rows):
        raise ColumnError(
            f"link column {key!r} has {int(rows) - int(present)} NULL value(s) in the {side}; "
            "link on a key every record has"
        )
    if int(distinct) < int(rows):
        raise ColumnError(
            f"link column {key!r} is not unique in the {side} ({int(rows)} rows, {int(distinct)} distinct "
            "values); link on a unique key"
        )


def row_order(db: Database, rel: Relation, side: str) -> str:
    """The SQL ordering rows as stored: a file's row order, a DuckDB table's rowid."""
    order = rel.row_order or db.stored_row_order(rel.sql)
    if order:
        return f"t.{order}"
    what = "a DataFrame, scanned in no set order" if rel.kind == "frame" else "a database table or a view"
    raise UsageError(
        f"--aligned needs rows in a stored order, which the {side} {rel.display!r} does not have "
        f"({what}); link the tables on a key with --link"
    )


def copy_names(columns: Sequence[str], taken: Sequence[str]) -> list[str]:
    prefix = "qarcompare_o"
    while any(c.startswith(prefix) for c in taken):
        prefix = "_" + prefix
    return [f"{prefix}{i}" for i in range(len(columns))]


def release_sql(db: Database, rel: Relation, plan: Any, carried: Sequence[tuple[str, str]] = ()) -> tuple[Any, str]:
    """(runner, SQL) of the plan's release over ``rel``; ``carried`` are extra columns of the
    base relation (``base`` CTE) that every step keeps unchanged."""
    names = plan.release or tuple(t.name for t in plan.treatments)
    if not carried:
        binder = Binder(db, rel.sql, rel.columns, plan, display=rel.display)
        return db, treated_sql(binder, rel.sql, names, modified=False)
    q = db.dialect.quote
    copies = ", ".join(f"t.{q(c)} as {q(a)}" for c, a in carried)
    base = f"select t.*, {copies} from {rel.sql} as t"
    runner: Database
    if db.dialect.outer_cte_scope:
        runner, base_name = WithRelation(db, "qarcompare_base", base), q("qarcompare_base")
    else:  # the release's own WITH would not see a CTE put in front: the base is a derived table
        runner, base_name = db, f"(\n{base}\n)"
    binder = Binder(runner, base_name, (*rel.columns, *[a for _, a in carried]), plan, display=rel.display)
    return runner, treated_sql(binder, base_name, names, modified=False)


def treatment_side(db, rel, plan, cols, display) -> Side:
    """One SELECT returning each record's treated values beside its original values (renamed
    copies that the treatments carry through untouched): the link is the row itself, so both
    are read in the same statement, never in two whose row orders could differ."""
    copies = copy_names(cols, rel.columns)
    runner, release = release_sql(db, rel, plan, carried=list(zip(cols, copies)))
    q = db.dialect.quote
    items = ",\n  ".join([f"r.{q(c)}" for c in cols] + [f"r.{q(a)}" for a in copies])
    sql = f"select\n  {items}\nfrom (\n{release}\n) as r"
    sql = runner.wrap(sql) if runner is not db else sql
    return Side(db, sql, {c: c for c in cols} | {a: f"o:{c}" for c, a in zip(cols, copies)}, display)


def null_tokens_for(original, treated, tokens: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The --null-token values for each side: they apply to the CSV files among them (a
    database table has NULLs of its own); refused when neither side is a CSV file."""
    if not tokens:
        return (), ()
    sides = [csv_file(original), treated is not None and csv_file(treated)]
    if not any(sides):
        raise UsageError(
            "--null-token applies to CSV files, whose missing values are written as text; neither table is one "
            "(map the token to NULL in a view: nullif(column, 'NA'))"
        )
    return (tokens if sides[0] else ()), (tokens if sides[1] else ())


def csv_file(source) -> bool:
    return isinstance(source, str | os.PathLike) and not is_url(str(source)) and file_kind(str(source)) == "csv"
