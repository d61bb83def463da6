"""Reading the columns a comparison needs, as Arrow record batches streamed from the engine.

DuckDB hands out Arrow batches natively (``fetch_record_batch``). Other engines go through
SQLAlchemy with a server-side cursor (``stream_results``): each chunk of rows becomes one Arrow
batch. Either way only the named columns are selected, one batch is in memory at a time, and
the statement is a plain SELECT in the connection's read-only transaction.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from qar_sql.engines.source import Database, DuckDBDatabase
from qar_sql.errors import ColumnError, DatabaseError

#: Rows per batch: 64 Ki rows × 20 columns is a few MB, and numpy's per-call overhead is small.
BATCH_ROWS = 65_536


def select_sql(
    db: Database,
    relation_sql: str,
    columns: Sequence[str],
    aliases: Sequence[str] | None = None,
    order_by: str | None = None,
) -> str:
    """SELECT of exactly ``columns`` (quoted), optionally renamed and ordered."""
    q = db.dialect.quote
    names = aliases or columns
    items = ",\n  ".join(f"t.{q(c)} as {q(a)}" for c, a in zip(columns, names))
    order = f"\norder by {order_by}" if order_by else ""
    return f"select\n  {items}\nfrom {relation_sql} as t{order}"


def arrow_batches(
    db: Database, sql: str, names: Sequence[str], batch_rows: int = BATCH_ROWS
) -> Iterator[pa.RecordBatch]:
    """The result of ``sql`` (whose output columns are ``names``) as Arrow record batches of at
    most ``batch_rows`` rows."""
    if isinstance(db, DuckDBDatabase):
        import duckdb

        # The connection is not shared while the batches are read: hold its lock throughout.
        with db._lock:
            try:
                relation = db.con.sql(sql)
                # A relation streams its batches without the extra copy a DB-API result makes;
                # DuckDB 2 names the call to_arrow_reader, DuckDB 1 fetch_arrow_reader.
                reader_of = getattr(relation, "to_arrow_reader", None) or relation.fetch_arrow_reader
                reader = reader_of(batch_rows)
                yield from reader
            except duckdb.Error as exc:
                raise DatabaseError(f"DuckDB failed: {str(exc).splitlines()[0]}") from exc
        return
    for rows in db.stream(sql, batch_rows):  # type: ignore[attr-defined]
        columns = list(zip(*rows))
        yield pa.RecordBatch.from_arrays([pa.array(list(c)) for c in columns], names=list(names))


def numeric_array(column: pa.Array, name: str) -> np.ndarray:
    """A numeric column as float64, NULL as NaN."""
    try:
        return pc.cast(column, pa.float64()).to_numpy(zero_copy_only=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise ColumnError(
            f"column {name!r} holds values that are not numbers ({column.type}); list it with --categorical"
        ) from exc


def value_array(column: pa.Array) -> np.ndarray:
    """A categorical column as numpy values (NULL as None or NaN), for canonical tokens.

    A text column becomes one Python string per *distinct* value, shared by its rows (Arrow's
    dictionary encoding, then a take): far fewer objects to make than one per row, and the
    factorisation that follows hashes each string once (Python caches a string's hash).
    """
    if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
        encoded = pc.dictionary_encode(column)
        distinct = encoded.dictionary.to_numpy(zero_copy_only=False)
        values = np.empty(len(distinct) + 1, dtype=object)
        values[:-1] = distinct
        values[-1] = None  # NULL: the last entry
        return values[encoded.indices.fill_null(len(distinct)).to_numpy()]
    if pa.types.is_dictionary(column.type):
        column = column.dictionary_decode()
    return column.to_numpy(zero_copy_only=False)
