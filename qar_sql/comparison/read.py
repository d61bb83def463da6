"""Reading the columns a comparison needs, as Arrow record batches streamed from the engine.

The engine hands them out (:meth:`~qar_sql.engines.database.Database.arrow_batches`): DuckDB
natively, other engines a chunk of rows from a server-side cursor (``stream_results``) per
batch. Either way only the named columns are selected, one batch is in memory at a time, and
the statement is a plain SELECT in the connection's read-only transaction.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

import numpy as np

from qar_sql.engines.source import Database
from qar_sql.errors import ColumnError
from qar_sql.parameters.release import BATCH_ROWS

# pyarrow (the [compare] extra) is imported where a column is converted, not here: importing this
# module costs neither its load time nor, without the extra, an ImportError (qar_sql.compare() and
# the CLI check the extra first thing: one sentence naming it, exit 2).
if TYPE_CHECKING:
    import pyarrow as pa


def select_sql(db: Database, relation_sql: str, columns: Sequence[str], order_by: str | None = None) -> str:
    """SELECT of exactly ``columns`` (quoted, each under its own name), optionally ordered."""
    q = db.dialect.quote
    items = ",\n  ".join(f"t.{q(c)} as {q(c)}" for c in columns)
    order = f"\norder by {order_by}" if order_by else ""
    return f"select\n  {items}\nfrom {relation_sql} as t{order}"


def arrow_batches(
    db: Database, sql: str, names: Sequence[str], batch_rows: int = BATCH_ROWS
) -> Iterator[pa.RecordBatch]:
    """The result of ``sql`` (whose output columns are ``names``) as Arrow record batches of at
    most ``batch_rows`` rows."""
    yield from db.arrow_batches(sql, names, batch_rows)


def numeric_array(column: pa.Array, name: str) -> np.ndarray:
    """A numeric column as float64, NULL as NaN."""
    import pyarrow as pa
    import pyarrow.compute as pc

    try:
        values = pc.cast(column, pa.float64()).to_numpy(zero_copy_only=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise ColumnError(
            f"column {name!r} holds values that are not numbers ({column.type}); list it with --categorical"
        ) from exc
    if np.isinf(values).any():  # (a distance to infinity is no distance: scipy's KD-tree refused it)
        raise ColumnError(
            f"column {name!r} holds an infinite number (a CSV's 1e999 is read as one); "
            "remove it from the file, or list the column with --categorical"
        )
    return values


def value_array(column: pa.Array) -> np.ndarray:
    """A categorical column as numpy values (NULL as None or NaN), for canonical tokens.

    A text column becomes one Python string per *distinct* value, shared by its rows (Arrow's
    dictionary encoding, then a take): far fewer objects to make than one per row, and the
    factorisation that follows hashes each string once (Python caches a string's hash).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

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
