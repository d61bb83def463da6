"""Ctrl-C stops the statements a server runs for qar, not only qar.

A driver's own answer to KeyboardInterrupt is not enough. psycopg sends one cancel request for
a statement of the thread that got the interrupt, and PostgreSQL drops a cancel that arrives
while it is still reading or planning a statement sent with parameters (between the messages of
the extended protocol): the statement then runs to its end, seconds later, after the client has
gone. Statements on worker connections (``--jobs``) get no KeyboardInterrupt at all.

So a database keeps the driver connections that are running a statement (:class:`Running`), and
while the main thread waits for one, Ctrl-C also starts a thread that asks the server to cancel
each of them, again every :data:`CANCEL_EVERY` seconds, until each has stopped (at most
:data:`CANCEL_FOR` seconds). From the interrupt until the main thread leaves the wait, a worker
thread starts no new statement: a worker that had just finished one and taken the next queued
one could otherwise start it after the cancelling thread found nothing running and stopped, and
the server ran it to its end. The interrupt itself is raised as before. SIGTERM does the same
(a KeyboardInterrupt) during the wait. Only Python's own SIGINT handler and the default SIGTERM
action are replaced, and only for the wait: a handler the program set is kept.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections.abc import Iterator
from typing import Any

#: Seconds between cancel requests to a statement that is still running.
CANCEL_EVERY = 0.1
#: Seconds after which qar stops asking (the connections are closed on the way out anyway).
CANCEL_FOR = 10.0


class Interrupted(Exception):
    """A worker's statement not started because Ctrl-C came (the main thread raises the
    KeyboardInterrupt; this only ends the worker's task)."""


def _cancel(driver_connection: Any) -> None:
    """Ask the server to cancel what ``driver_connection`` runs (a no-op for drivers without a
    cancel request, and for a connection that runs nothing)."""
    safe = getattr(driver_connection, "cancel_safe", None)  # psycopg >= 3.2: bounded, no lock
    with contextlib.suppress(Exception):  # a failed cancel leaves the statement to end by itself
        if safe is not None:
            safe(timeout=2.0)
        elif callable(getattr(driver_connection, "cancel", None)):
            driver_connection.cancel()


class Running:
    """The driver connections of one database that are running a statement now."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._busy: dict[int, Any] = {}
        self._interrupted = False  # set by Ctrl-C, until the main thread leaves interruptible()

    @contextlib.contextmanager
    def statement(self, driver_connection: Any) -> Iterator[None]:
        """While the block runs, ``driver_connection`` is running a statement; Ctrl-C in the main
        thread cancels it (and every other running one) on the server."""
        if not callable(getattr(driver_connection, "cancel", None)):
            yield  # nothing to ask the server (SQLite, MariaDB's pymysql)
            return
        with self._lock:  # the same lock as the cancelling thread's look: no statement slips between
            if self._interrupted and threading.current_thread() is not threading.main_thread():
                raise Interrupted("interrupted: a worker starts no new statement after Ctrl-C")
            self._busy[id(driver_connection)] = driver_connection
        try:
            with self.interruptible():
                yield
        finally:
            with self._lock:
                self._busy.pop(id(driver_connection), None)

    def _cancel_until_idle(self) -> None:
        """Ask the server to cancel every running statement until none runs."""
        deadline = time.monotonic() + CANCEL_FOR
        while time.monotonic() < deadline:
            with self._lock:
                busy = list(self._busy.values())
            if not busy:
                return
            for connection in busy:
                _cancel(connection)
            time.sleep(CANCEL_EVERY)

    @contextlib.contextmanager
    def interruptible(self) -> Iterator[None]:
        """While the main thread runs the block, SIGINT also cancels the running statements, and
        so does SIGTERM (what a cancelled CI job, ``timeout`` or ``docker stop`` sends), which
        then stops qar as Ctrl-C does: by default it ended the process at once and left the
        server running the statement. Elsewhere (another thread, a handler the program set, or
        already inside) it does nothing."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        own = {signal.SIGINT: signal.default_int_handler, signal.SIGTERM: signal.SIG_DFL}
        taken = {s: h for s, h in own.items() if signal.getsignal(s) is h}
        if not taken:
            yield
            return

        def on_signal(signum, frame):
            with self._lock:
                self._interrupted = True
            threading.Thread(target=self._cancel_until_idle, name="qar-cancel", daemon=True).start()
            raise KeyboardInterrupt

        for s in taken:
            signal.signal(s, on_signal)
        try:
            yield
        finally:
            for s, handler in taken.items():
                signal.signal(s, handler)
            with self._lock:
                self._interrupted = False
