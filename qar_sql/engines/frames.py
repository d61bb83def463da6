"""In-memory tables as sources: a pandas or polars DataFrame, a pyarrow Table, RecordBatch or
Dataset, or a DuckDB relation.

Each is registered under one name in an in-process DuckDB (``register``), which scans the
frame's own buffers in place — no copy into DuckDB — so the audit's statements are pushed down
exactly as for a file. A DuckDB relation belongs to its own connection, which another connection
cannot read; its own connection writes it once to a Parquet file in a temporary folder (DuckDB's
own writer: no Arrow needed, every column type kept), which the audit reads and deletes at close.

Nothing here imports pandas, polars or pyarrow: a frame is recognised by its type's module, so
the libraries stay optional.
"""

from __future__ import annotations

from typing import Any

from qar_sql.errors import UsageError

#: (module prefix, class name) → the label used as the result's ``source``.
_KINDS = {
    ("pandas", "DataFrame"): "<pandas.DataFrame>",
    ("polars", "DataFrame"): "<polars.DataFrame>",
    ("polars", "LazyFrame"): "<polars.LazyFrame>",
    ("pyarrow", "Table"): "<pyarrow.Table>",
    ("pyarrow", "RecordBatch"): "<pyarrow.RecordBatch>",
    ("pyarrow", "FileSystemDataset"): "<pyarrow.dataset.Dataset>",
    ("pyarrow", "InMemoryDataset"): "<pyarrow.dataset.Dataset>",
    ("pyarrow", "UnionDataset"): "<pyarrow.dataset.Dataset>",
    ("duckdb", "DuckDBPyRelation"): "<duckdb.DuckDBPyRelation>",
}

#: The name the frame is registered under in the audit's own DuckDB.
FRAME_NAME = "qar_frame"


def _kind(obj: Any) -> tuple[str, str] | None:
    t = type(obj)
    root = (t.__module__ or "").split(".", 1)[0].lstrip("_")
    for (module, name), _label in _KINDS.items():
        if root == module and t.__name__ == name:
            return module, name
    return None


def is_frame(obj: Any) -> bool:
    """True for the in-memory tables this module reads (not for strings, paths or None)."""
    return _kind(obj) is not None


def frame_label(obj: Any) -> str:
    """What a result's ``source`` says for a frame, e.g. ``<pandas.DataFrame>``."""
    kind = _kind(obj)
    if kind is None:
        raise UsageError(
            f"cannot audit an object of type {type(obj).__name__}; pass a file path, a database URL, "
            "a pandas or polars DataFrame, a pyarrow Table or Dataset, or a DuckDB relation"
        )
    return _KINDS[kind]


def is_duckdb_relation(obj: Any) -> bool:
    """True for a DuckDB relation, which is spooled to Parquet rather than registered."""
    return _kind(obj) == ("duckdb", "DuckDBPyRelation")


def registrable(obj: Any) -> Any:
    """The object DuckDB's ``register`` accepts for ``obj`` (the object itself but for a polars
    LazyFrame, which is collected). A DuckDB relation is not registrable: see the module's note."""
    kind = _kind(obj)
    if kind == ("polars", "LazyFrame"):
        return obj.collect()
    return obj
