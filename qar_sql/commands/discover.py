"""``qar discover``: find the quasi-identifiers of a source (Pastore, Pellegrino & Scarano 2020;
METHOD.md §5); the algorithm is :mod:`qar_sql.measures.discovery`.

The shape every command has (``qar_sql/commands/__init__.py``): its parameters
(:class:`~qar_sql.parameters.measures.DiscoverParams`), ``run(session, params, progress) →
result``, and the Python API's function, which opens the session and calls ``run``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TypedDict, Unpack

from qar_sql.engines.session import Session
from qar_sql.engines.source import SourceLike, session_of
from qar_sql.measures.discovery import DiscoverResult, discover_relation
from qar_sql.parameters.measures import DiscoverParams
from qar_sql.progress import with_progress
from qar_sql.pushdown.scan import Progress

NAME = "discover"
Params = DiscoverParams


def run(session: Session, params: DiscoverParams, progress: Progress | None = None) -> DiscoverResult:
    """Every combination of 1 … ``params.max_size`` columns of the session's relation."""
    return discover_relation(session, params, progress)


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
    params = DiscoverParams(
        columns=columns, exclude=exclude, max_size=max_size, drop_null=drop_null,
        batch_size=options.get("batch_size"), jobs=options.get("jobs", 2),
    )  # fmt: skip
    table, delimiter, threads = options.get("table"), options.get("delimiter"), options.get("threads")
    null_tokens = options.get("null_tokens", ())
    with session_of(source, table=table, delimiter=delimiter, threads=threads, null_tokens=null_tokens) as session:
        return discover_relation(session, params, options.get("progress"), started=started)
