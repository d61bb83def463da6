"""Whether a ``running`` run is still running, and results that must not be lost.

A run records the process id and host that run it and refreshes a heartbeat while it works
(migration 0003). The next run on the store marks ``interrupted`` every ``running`` run whose
process is gone: on this host, its process id no longer exists; on another host (where the
process cannot be seen), its heartbeat is older than :data:`STALE_AFTER`.

When the results cannot be written at the end (the store locked by another process, or
unreachable), writing is retried with back-off (:data:`RECORD_RETRY_DELAYS`); if it still fails
the results go to a JSON side file next to the store, and the error says where.

Nothing here imports :mod:`qar_sql.compliance.store` (which uses this module): a store is any
object with a ``transaction()`` context manager.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import tempfile
import threading
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from qar_sql.output.render_history import age

#: Seconds between heartbeats of a working run.
HEARTBEAT_EVERY = 30.0
#: A run on another host whose heartbeat is older than this many seconds is taken as gone
#: (ten missed heartbeats: a busy store or a slow network is not mistaken for a dead process).
STALE_AFTER = 300.0
#: Seconds to wait before each new attempt to write a run's results (after the first failed);
#: with each attempt's wait for a DuckDB file lock (``store.FINAL_LOCK_WAIT``), about 12 s in all.
RECORD_RETRY_DELAYS = (1.0, 3.0)


def now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def host() -> str:
    return socket.gethostname()


def pid_alive(pid: int) -> bool | None:
    """Whether process ``pid`` exists on this machine; None where that cannot be told."""
    if os.name != "posix":
        return None  # os.kill(pid, 0) would send a Ctrl-C event on Windows
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    except OSError:
        return None
    return True


def gone_reason(pid: int | None, run_host: str | None, last_sign: datetime, at: datetime) -> str | None:
    """Why a ``running`` run is no longer running, or None if it may still be."""
    if run_host == host() and pid is not None and pid != os.getpid():
        alive = pid_alive(pid)
        if alive is False:
            return f"interrupted: process {pid} on {run_host} ended without finishing the run (killed?)"
        if alive is True:
            return None
    silent = (at - last_sign).total_seconds()
    if silent > STALE_AFTER:
        return f"interrupted: no sign of life for {age(silent)} (the process was stopped or lost)"
    return None


def mark_interrupted(store: Any) -> list[str]:
    """Mark ``interrupted`` every ``running`` run of ``store`` whose process is gone; return
    their run ids. A run whose results were saved in a side file next to a DuckDB store (the
    store was locked at its end) is marked ``failed``, naming the file: it was not interrupted."""
    at = now()
    marked = []
    with store.transaction() as tx:
        rows = tx.execute(
            "select run_id, pid, host, coalesce(heartbeat_at, started_at) from qar_runs where status = 'running'"
        )
        for run_id, pid, run_host, last_sign in rows:
            reason = gone_reason(None if pid is None else int(pid), run_host, last_sign, at)
            if reason is None:
                continue
            status = "interrupted"
            side = side_file_path(getattr(store, "path", None), run_id)
            if getattr(store, "path", None) and side.exists():  # it finished; the store was locked
                status, reason = "failed", f"not recorded (the store could not be written); results saved in {side}"
            tx.execute(
                "update qar_runs set status = :status, finished_at = :at, error = :error "
                "where run_id = :id and status = 'running'",
                {"status": status, "at": at, "error": reason, "id": run_id},
            )
            marked.append(run_id)
    return marked


class Heartbeat:
    """Refreshes ``heartbeat_at`` of one run every :data:`HEARTBEAT_EVERY` seconds, in a
    daemon thread, through its own store connection (``open_store()``), opened only for each
    beat. A missed beat is no error: a run is taken as gone only after many."""

    def __init__(self, open_store: Callable[[], Any], run_id: str, every: float | None = None):
        self.open_store = open_store
        self.run_id = run_id
        self.every = HEARTBEAT_EVERY if every is None else every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="qar-heartbeat", daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        store = None
        try:
            while not self._stop.wait(self.every):
                with contextlib.suppress(Exception):  # the audit goes on; a later beat may succeed
                    store = store or self.open_store()
                    with store.transaction() as tx:
                        tx.execute(
                            "update qar_runs set heartbeat_at = :at where run_id = :id and status = 'running'",
                            {"at": now(), "id": self.run_id},
                        )
                    store.release()
        finally:
            if store is not None:
                with contextlib.suppress(Exception):
                    store.close()


def side_file_path(store_path: str | None, run_id: str) -> Path:
    """Next to a DuckDB store file, else in the working directory."""
    folder = Path(store_path).resolve().parent if store_path else Path.cwd()
    return folder / f"qar_run_{run_id}.json"


def write_side_file(
    path: Path,
    *,
    run_id: str,
    store: str,
    reason: str,
    audit: dict,
    top_records: Sequence[tuple[Any, float]] | None = None,
) -> Path:
    """The run's results as JSON (the ``qar audit --format json`` object under ``audit``).
    Falls back to the temp folder when ``path``'s folder cannot be written."""
    obj = {
        "run_id": run_id,
        "store": store,
        "not_recorded_because": reason,
        "written_at": now().isoformat(),
        "audit": audit,
        "top_records": [
            {"rank": i + 1, "key": str(k), "contribution": c} for i, (k, c) in enumerate(top_records or ())
        ],
    }
    text = json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=False)
    for candidate in (path, Path(tempfile.gettempdir()) / path.name):
        try:
            candidate.write_text(text + "\n", encoding="utf-8")
            return candidate
        except OSError:
            continue
    raise OSError(f"cannot write {path} nor a copy in {tempfile.gettempdir()}")
