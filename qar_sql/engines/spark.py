"""Apache Spark through Spark Connect: ``sc://host:port`` and ``--table``.

Spark has no SQLAlchemy dialect that runs the audit's SQL, so this is a native
:class:`~qar_sql.engines.source.Database`: every statement goes to the server as
``spark.sql(...)`` and only its (small) result comes back. The same URL form reaches a local
Connect server, a cluster's, or Databricks (``sc://<workspace>:443/;token=…;
x-databricks-cluster-id=…``; see docs/engines.md).

Each :class:`SparkDatabase` opens a session of its own (``builder.remote(url).create()``), so
closing it never ends another client's session on the same server (the tests' loader).
Spark has no read-only transaction: qar sends SELECTs only (the dialect has no temp tables),
so a user with SELECT privilege on the table suffices.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import re
import socket
import time
from typing import Any

from qar_sql.engines.database import Database, Relation, Timed, closed_on_error, first_line, pick_table
from qar_sql.engines.dialects import get_dialect
from qar_sql.engines.dialects.spark import ENGINE
from qar_sql.engines.secrets import mask_source, scrub, secret_values
from qar_sql.errors import DatabaseError, UsageError
from qar_sql.extras import install_hint

log = logging.getLogger(__name__)

INSTALL = install_hint(ENGINE.extra or "")
#: Seconds to wait for the server's port before saying it is unreachable: the Connect client
#: itself retries with back-off for minutes, which looks like a hang.
CONNECT_TIMEOUT = 10.0


def _host_port(url: str) -> tuple[str, int]:
    """``sc://host:port/;params`` → (host, port); Spark Connect's default port is 15002."""
    m = re.match(r"sc://(\[[^\]]+\]|[^:/;?]+)(?::(\d+))?", url, re.IGNORECASE)
    if not m:
        raise UsageError(f"cannot read the Spark Connect URL {mask_source(url)!r}; write it as sc://host:15002")
    return m.group(1).strip("[]"), int(m.group(2) or 15002)


class SparkDatabase(Database):
    """One Spark Connect session; statements run one after another (Spark spreads each over
    the cluster's cores itself)."""

    def __init__(self, url: str):
        self.masked_url = mask_source(url)
        self.secrets = secret_values(url)
        try:
            from pyspark.errors import PySparkException
            from pyspark.sql import SparkSession
        except ModuleNotFoundError as exc:
            raise UsageError(
                f"reading {self.masked_url} needs the Spark Connect client ({exc.name} is not installed); "
                f"install it with: {INSTALL}"
            ) from exc
        self._errors: tuple[type[BaseException], ...] = (PySparkException,)
        with contextlib.suppress(ModuleNotFoundError):  # (pyspark[connect] depends on grpcio)
            import grpc

            self._errors += (grpc.RpcError,)
        host, port = _host_port(url)
        try:
            socket.create_connection((host, port), timeout=CONNECT_TIMEOUT).close()
        except OSError as exc:
            raise DatabaseError(
                f"cannot connect to {self.masked_url}: nothing answers at {host}:{port} ({exc.strerror or exc}); "
                "start a Spark Connect server (sbin/start-connect-server.sh) or check the URL"
            ) from exc
        try:
            self.session = SparkSession.builder.remote(url).create()
            self.engine_version = str(self.session.version)
        except ModuleNotFoundError as exc:  # pyspark without its [connect] dependencies
            raise UsageError(
                f"reading {self.masked_url} needs the Spark Connect client ({exc.name} is not installed); "
                f"install it with: {INSTALL}"
            ) from exc
        except self._errors as exc:
            raise DatabaseError(f"cannot connect to {self.masked_url}: {self._reason(exc)}") from exc
        self.dialect = get_dialect("spark")
        self.engine_name = "spark"

    def _reason(self, exc: BaseException) -> str:
        return scrub(first_line(exc), self.secrets)

    def query(self, sql: str, params: dict | None = None) -> list[tuple]:
        if params:  # qar's statements inline their (quoted) literals; nothing binds here
            raise DatabaseError("the Spark engine takes no bound parameters")
        with Timed("spark", sql) as timed:
            try:
                started = time.perf_counter()
                frame = self.session.sql(sql)  # parsed and analysed by the server
                analysed = time.perf_counter()
                rows = [tuple(r) for r in frame.collect()]  # optimised, planned, run, fetched
            except self._errors as exc:
                raise DatabaseError(f"spark failed a statement: {self._reason(exc)}") from exc
            timed.rows = len(rows)
            if log.isEnabledFor(logging.DEBUG):
                log.debug(
                    "spark time: analyse %.3f s, run %.3f s; %s",
                    analysed - started,
                    time.perf_counter() - analysed,
                    metrics_summary(frame),
                )
            return rows

    def stream(self, sql: str, chunk: int):
        """Rows in chunks (Spark Connect sends results as Arrow batches; ``toLocalIterator``
        keeps only one partition's rows in memory at a time)."""
        log.debug("spark streaming: %s", sql.strip())
        try:
            rows = iter(self.session.sql(sql).toLocalIterator())
            while batch := [tuple(row) for row in itertools.islice(rows, chunk)]:
                yield batch
        except self._errors as exc:
            raise DatabaseError(f"spark failed a statement: {self._reason(exc)}") from exc

    def columns(self, relation_sql: str) -> tuple[str, ...]:
        try:
            return tuple(self.session.sql(f"select * from {relation_sql}").columns)
        except self._errors as exc:
            raise DatabaseError(f"spark cannot read {relation_sql}: {self._reason(exc)}") from exc

    def close(self) -> None:
        with contextlib.suppress(Exception):  # closing never hides the error that ended the work
            self.session.stop()  # releases this session only (created, not shared)


#: Spark's plan metrics summed over a statement's nodes (all tasks): name → (metric, unit in s).
_METRICS = {
    "shuffle_write_s": ("shuffleWriteTime", 1e-9),
    "shuffle_fetch_wait_s": ("fetchWaitTime", 1e-3),
    "task_s": ("pipelineTime", 1e-3),
    "aggregate_s": ("aggTime", 1e-3),
    "shuffle_bytes": ("shuffleBytesWritten", 1),
}


def metrics_summary(frame: Any) -> dict[str, float]:
    """Where a collected statement's time went, from the metrics Spark Connect returns with the
    result: shuffle write and fetch-wait time, whole-stage pipeline (task) time, aggregation
    time, shuffle bytes — summed over all tasks, so on 2 cores the task seconds can exceed the
    wall time. Empty where the server sends none."""
    out = dict.fromkeys(_METRICS, 0.0)
    try:
        nodes = frame.executionInfo.metrics._metrics
    except Exception:  # an older client or server without execution metrics
        return {}
    for node in nodes:
        for m in node.metrics:
            for key, (name, unit) in _METRICS.items():
                if m.name == name:
                    out[key] += float(m.value) * unit
    return out


def open_spark(url: str, table: str | None, threads: int | None = None) -> tuple[SparkDatabase, Relation]:
    """Connect to the Spark Connect server at ``url`` and describe ``table`` (``name``,
    ``database.name`` or ``catalog.database.name``)."""
    db = SparkDatabase(url)
    with closed_on_error(db):
        default = str(db.query("select current_database()")[0][0])
        pairs: list[tuple[str, Any]] = [(default, r[1]) for r in db.query("show tables")]
        if table and "." in table and table.split(".", 1)[0] != default:
            schema = table.split(".", 1)[0]
            with contextlib.suppress(DatabaseError):  # no such database: pick_table says the table is not found
                pairs += [(schema, r[1]) for r in db.query(f"show tables in {db.dialect.quote(schema)}")]
        # Temporary views list with an empty database; they are read by their bare name.
        relation, (schema, name) = pick_table(
            db.dialect, db.masked_url, table, [(s if s else default, str(n)) for s, n in pairs], default
        )
        cols = db.columns(relation.sql)
    return db, Relation(relation.sql, relation.display, cols, "table")
