"""Record identity and uniqueness flags for the record-level commands (``qar records``,
``qar eliminate``, ``qar risk --per-record``): the order that numbers the records (key order,
or file order), the key values of chosen records, and the distinct uniqueness patterns from the
(record, word, bits) rows the database returns.

``r`` is a record's position in that order (0, 1, …); every ranking breaks ties by it.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

import numpy as np

from qar_sql.engines.render import render
from qar_sql.engines.source import Database, Relation
from qar_sql.errors import ColumnError, DataError, UsageError
from qar_sql.stats import contributions as C

ROW_KEY = "row"  # the key name shown for files without --key (1-based row number)


def check_key_names(relation: Relation, key: Sequence[str]) -> None:
    """Every key column is a column of ``relation`` (no query)."""
    missing = [k for k in key if k not in relation.columns]
    if missing:
        close = difflib.get_close_matches(missing[0], relation.columns, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ColumnError(f"key column {missing[0]!r} (in --key) not found{hint}")


def record_order(
    db: Database, relation: Relation, key: Sequence[str] | None, qi_columns
) -> tuple[list[str], tuple[str, ...]]:
    """SQL ORDER BY items for key order, and the key's display names. Checks the key."""
    check_record_key(relation, key)
    if key:
        row = db.query(render("key_check.sql", db.dialect, relation=relation.sql, key=list(key)))[0]
        nulls, dups = int(row[0]), int(row[1])
        if nulls:
            raise DataError(
                f"the key ({', '.join(key)}) is NULL in {nulls} record(s); a record key must "
                "identify every record: pick non-NULL key columns with --key"
            )
        if dups:
            raise DataError(
                f"the key ({', '.join(key)}) is not unique: {dups} record(s) repeat a key value; "
                "add columns to --key until it identifies each record"
            )
        return [f"t.{db.dialect.quote(k)}" for k in key], tuple(key)
    return [f"t.{relation.row_order}"], (ROW_KEY,)


def check_record_key(relation: Relation, key: Sequence[str] | None) -> None:
    """The key's columns among the relation's, or a relation with a row order where no key is
    given: what needs its columns only (its NULLs and duplicates need the rows)."""
    if key:
        check_key_names(relation, key)
    elif not relation.row_order:
        raise UsageError(
            f"record-level results need a record key for table {relation.display!r}; "
            "name its key column(s) with --key (e.g. --key person_id)"
        )


def key_warnings(key: Sequence[str] | None, qi_columns: Sequence[str]) -> list[str]:
    both = [k for k in (key or ()) if k in qi_columns]
    return [
        f"key column {k!r} is also a quasi-identifier column: every QI containing it is a key "
        f"(every record unique); leave it out with --exclude {k!r}"
        for k in both
    ]


def patterns_from_words(n_records: int, r, w, bits) -> C.PatternSet:
    """Distinct patterns from (record, word, bits) rows — rows of one (r, w) may repeat across
    batches; their bits are distinct, so adding them is the bitwise or."""
    r, w, bits = (np.asarray(x, dtype=np.int64) for x in (r, w, bits))
    if r.size == 0:
        return C.PatternSet.from_rows(n_records, {}, [])
    recs, at = np.unique(r, return_inverse=True)
    words = np.zeros((recs.size, int(w.max()) + 1), dtype=np.int64)
    np.add.at(words, (at.ravel(), w), bits)
    distinct, inverse, counts = np.unique(words, axis=0, return_inverse=True, return_counts=True)
    flags = np.unpackbits(distinct.astype("<i8").view(np.uint8), axis=1, bitorder="little")
    flags = flags.reshape(distinct.shape[0], distinct.shape[1], 64)[:, :, :62].reshape(distinct.shape[0], -1)
    qis = (np.zeros(0, dtype=np.int64),) + tuple(np.flatnonzero(row) for row in flags)
    of_record = np.zeros(n_records, dtype=np.int64)
    of_record[recs] = inverse.ravel() + 1
    all_counts = np.concatenate([[n_records - recs.size], counts]).astype(np.int64)
    return C.PatternSet(qis, all_counts, of_record)


def fetch_keys(db: Database, relation: Relation, key: Sequence[str], wanted: Sequence[int] | None) -> dict[int, tuple]:
    """Key values of records at positions ``wanted`` (all with None)."""
    if wanted is not None and len(wanted) == 0:
        return {}
    sql = render(
        "record_keys.sql",
        db.dialect,
        relation=relation.sql,
        key=list(key),
        wanted=None if wanted is None else [int(w) for w in sorted(set(wanted))],
    )
    return {int(row[0]): tuple(row[1:]) for row in db.query(sql)}
