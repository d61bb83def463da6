"""The SQL an audit runs, rendered without connecting (``qar sql``, ``qar audit --show-sql``)."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Sequence

from qar_sql.engines.database import check_url
from qar_sql.engines.dialects import Dialect, engine_of, get_dialect
from qar_sql.engines.secrets import mask_source
from qar_sql.engines.source import check_csv_options, file_kind, file_relation_sql, is_url, listed_once, resolve_source
from qar_sql.errors import UsageError
from qar_sql.parameters.tail import DEFAULTS as AUDIT
from qar_sql.pushdown import prune as pruning
from qar_sql.pushdown.insql import risk_sql
from qar_sql.pushdown.scan import batches_follow_jobs, profile_statements, render_statements


def _dialect_of(source: str | None) -> str:
    if source is None:
        raise UsageError("name a SOURCE or a --dialect; nothing is read, so one of them is needed")
    if is_url(source):
        engine = engine_of(source)
        if engine is not None and engine.opener:  # a native adapter: no SQLAlchemy dialect reads its URL
            return engine.name
        from sqlalchemy.engine import make_url

        check_url(source, f"database URL {mask_source(source)}")
        try:
            return make_url(source).get_backend_name()
        except Exception as exc:  # noqa: BLE001 - SQLAlchemy's ArgumentError: no URL at all
            raise UsageError(
                f"cannot parse the database URL {mask_source(source)}; write it as dialect+driver://host/database"
            ) from exc
    return "duckdb"


def _target(source: str | None, dialect: str | None) -> tuple[Dialect, str | None, str]:
    """(the dialect to render in, the source — $QAR_DATABASE_URL when neither it nor a dialect is
    named —, the kind of a file source: csv, parquet, else "")."""
    if source is None and dialect is None:
        with contextlib.suppress(UsageError):
            source = resolve_source(None)
    d = get_dialect(dialect or _dialect_of(source), strict=True)
    return d, source, (file_kind(source) or "") if source and not is_url(source) else ""


_PART = re.compile(r'"((?:[^"]|"")*)"(?=\.|$)|([^.]+)')


def table_path(table: str) -> tuple[str, ...]:
    """``--table`` as the parts of its path: ``catalog.schema.table`` is three parts, split at
    every dot, since nothing is read to look the name up; a part holding a dot is written in
    double quotes (``s."my.table"``, a quote inside doubled)."""
    parts: list[str] = []
    pos = 0
    while m := _PART.match(table, pos):
        parts.append(m.group(1).replace('""', '"') if m.group(1) is not None else m.group(2))
        pos = m.end()
        if pos == len(table):
            return tuple(parts)
        pos += 1  # the dot the lookahead or [^.] stopped at
    raise UsageError(
        f"--table {table!r} is not a name or a dotted path (catalog.schema.table); "
        'an empty part is not a name, and a part holding a dot is written in double quotes, as s."my.table"'
    )


def _table(d: Dialect, source: str | None, table: str | None, kind: str) -> str | None:
    """``--table`` quoted for ``d``; None for a CSV/Parquet source (each statement places its
    reader); else the sentence asking for a table."""
    if table:
        return d.quote_path(table_path(table))
    if kind in ("csv", "parquet"):
        if d.name != "duckdb":
            raise UsageError(f"files are read by DuckDB; use --dialect duckdb for {source!r}")
        return None
    raise UsageError("name the table with --table (or a CSV/Parquet SOURCE)")


def jobs_unused(source: str | None, dialect: str | None) -> str | None:
    """Why ``--jobs`` leaves the SQL :func:`show_sql` prints unchanged (the words after "has no
    effect on"), or None where it sets the batches (:func:`~qar_sql.pushdown.scan.batches_follow_jobs`)."""
    d = _target(source, dialect)[0]
    if batches_follow_jobs(d):
        return None
    return f"the SQL of {d.name}: its batches of QIs are the same for any number of connections"


def show_sql(
    source: str | None,
    *,
    table: str | None = None,
    columns: Sequence[str] | None = None,
    p: int = AUDIT["p"],
    delimiter: str | None = None,
    dialect: str | None = None,
    batch_size: int | None = None,
    jobs: int = AUDIT["jobs"],  # as the audit's, so the batches shown are the batches run
    null_tokens: Sequence[str] = (),
) -> str:
    """Every statement of the audit, separated by ``;``, exactly as it would run."""
    if not columns:
        raise UsageError("--columns is required to show the SQL, since nothing is read")
    listed_once(columns, "--columns")  # as the audit itself refuses them
    d, source, kind = _target(source, dialect)
    if source:
        check_csv_options(source, delimiter=delimiter, null_tokens=null_tokens)
    setup: list[str] = []
    relation = _table(d, source, table, kind)
    if relation is None:  # a file: read into a temp table once, as the audit does
        reader = file_relation_sql(d, source or "", kind, delimiter, null_tokens=null_tokens)
        relation = d.quote("qar_source")
        setup.append(f"create temp table {relation} as select * from {reader}\n")
    profile = profile_statements(d, relation, list(columns))
    pre, batches, _, _ = render_statements(d, relation, list(columns), p, batch_size=batch_size, jobs=jobs)
    header = (
        f"-- qar-sql audit, dialect {d.name}: {len(batches)} scan statement(s), p = {p} over {len(columns)} columns\n"
    )
    if d.cube_beta is not None:
        header += (
            "-- At run time some QIs may be counted from cubes (GROUP BYs over supersets of their\n"
            "-- columns, planned from the data's value frequencies); this is the scan without them.\n"
        )
    if pruning.resolve(None, p) == "auto":
        header += (
            f"-- At p = {p} the audit prunes by default (--prune auto): it groups the QIs of size {p - 1}\n"
            f"-- first, then only the QIs of size {p} whose upper bound can reach the tail, chosen at run\n"
            "-- time from those counts (docs/method.md). This is the scan of every QI (--prune off).\n"
        )
    parts = setup + profile + pre + batches
    return header + ";\n\n".join(s.rstrip() for s in parts) + ";\n"


def show_one_statement(
    source: str | None,
    *,
    table: str | None = None,
    columns: Sequence[str] | None = None,
    p: int = AUDIT["p"],
    alpha: float = AUDIT["alpha"],
    pi_u: float = AUDIT["pi_u"],
    dialect: str | None = None,
    delimiter: str | None = None,
) -> str:
    """The whole audit as one SELECT (pushdown/insql.py): what a warehouse qar cannot reach
    runs by itself, the SQL of the dbt package's ``qar.risk``."""
    if not columns:
        raise UsageError("--columns is required to show the SQL, since nothing is read")
    d, source, kind = _target(source, dialect)
    if source:
        check_csv_options(source, delimiter=delimiter)
    relation = _table(d, source, table, kind)
    if relation is None:  # a file: read where the statement reads it
        relation = file_relation_sql(d, source or "", kind, delimiter)
    header = f"-- qar-sql: the whole audit as one statement, dialect {d.name}, p = {p} over {len(columns)} columns\n"
    return header + risk_sql(d, relation, list(columns), p, alpha=alpha, pi_u=pi_u).rstrip() + ";\n"
