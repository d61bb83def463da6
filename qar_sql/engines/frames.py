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

import warnings
from collections.abc import Iterable
from typing import Any

from qar_sql.errors import DataError, UsageError
from qar_sql.user_text import one_line

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
    kind = ((t.__module__ or "").split(".", 1)[0].lstrip("_"), t.__name__)
    return kind if kind in _KINDS else None


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
    return obj.collect() if _kind(obj) == ("polars", "LazyFrame") else obj


def _family(value: Any) -> str:
    """The kind of value a database column holds for ``value``: every number is one kind (DuckDB
    reads ints, floats and decimals as one numeric column), text, bytes, a truth value, a date or
    time, else the value's own type."""
    import datetime
    import numbers

    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return "bool"
    if isinstance(value, numbers.Number) or type(value).__name__ == "Decimal":
        return "number"
    if isinstance(value, str):
        return "str"
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "bytes"
    if isinstance(value, (datetime.date, datetime.time, datetime.timedelta)):
        return "date/time"
    return type(value).__name__


def check_pandas_frame(obj: Any) -> None:
    """What a pandas DataFrame holds that the database would read otherwise than its caller: a
    named index, which it does not read at all (a warning), and a column of dtype object holding
    values of several kinds (1, "x", b"y"), refused: DuckDB types the column from a sample, then
    either fails on a later value or silently casts (1 and "1" become one value, so the counts
    are wrong)."""
    if _kind(obj) != ("pandas", "DataFrame"):
        return
    from pandas.api.types import infer_dtype

    index = [n for n in obj.index.names if n is not None]
    if index:  # (the database reads the columns only: a column moved into the index is not audited)
        warnings.warn(
            f"the DataFrame's index ({one_line(', '.join(map(str, index)))}) is not read as a column; "
            "pass df.reset_index() to measure it too",
            UserWarning,
            stacklevel=2,
        )
    for i, name in enumerate(obj.columns):
        column = obj.iloc[:, i]  # by position: obj[name] is a frame when two columns share the name
        if column.dtype != object or not infer_dtype(column, skipna=True).startswith("mixed"):
            continue
        kinds = sorted({_family(v) for v in column.dropna()})
        if len(kinds) > 1:
            raise DataError(
                f"column {name!r} of the pandas DataFrame holds values of several types "
                f"({', '.join(kinds)}), which the database cannot read as one column; "
                f"cast it to one type first, e.g. df[{name!r}] = df[{name!r}].astype(str)"
            )


def check_names(obj: Any) -> None:
    """Refuse a frame two of whose column names differ only in case (``Age``, ``age``) or not at
    all: DuckDB's names ignore case, so it reads the second as ``age_1``, a name the caller never
    wrote, and ``columns=["age"]`` then finds no such column."""
    kind = _kind(obj)
    if kind is None:
        return
    if kind == ("polars", "LazyFrame"):
        names = list(obj.collect_schema().names())
    elif kind[0] == "pyarrow":
        names = list(obj.schema.names)
    else:
        names = [str(c) for c in obj.columns]
    clash = same_name(names)
    if clash is not None:
        first, name = clash
        both = f"two columns named {name!r}" if first == name else f"columns {first!r} and {name!r}, one name"
        raise DataError(
            f"the {_KINDS[kind]} has {both} to the database (its names ignore case); rename one first, "
            f"e.g. to {name + '_2'!r}"
        )


def same_name(names: Iterable[str]) -> tuple[str, str] | None:
    """The first two of ``names`` that are one name to the database (equal but for case, or
    equal), or None: the one test behind a frame's and a CSV header's refusal."""
    seen: dict[str, str] = {}
    for name in names:
        if name.lower() in seen:
            return seen[name.lower()], name
        seen[name.lower()] = name
    return None
