"""Ctrl-C and the statements of worker threads (engines/cancel.py), on a real PostgreSQL.

The end-to-end cases (a report interrupted on the server) are in tests/cli/test_interrupts.py;
this is the race they hit about once in five runs on a loaded machine: a worker that had just
finished a statement took the next queued one and started it after the cancelling thread had
found nothing running and stopped, so the server ran it to its end."""

from __future__ import annotations

import signal
import threading

from qar_sql.engines.cancel import Interrupted, Running


def _worker_statement(running: Running, connection) -> str:
    """What a worker thread's statement does while the main thread is where it is now."""
    outcome: list[str] = []

    def work():
        try:
            with running.statement(connection):
                connection.execute("select 1").fetchall()
            outcome.append("ran")
        except Interrupted:
            outcome.append("refused")

    thread = threading.Thread(target=work)
    thread.start()
    thread.join(timeout=30)
    (what,) = outcome
    return what


def test_after_ctrl_c_a_worker_starts_no_statement_until_the_wait_is_left(pg):
    running = Running()
    pooled = pg.raw_connection()  # kept: the driver connection is closed when the proxy goes
    connection = pooled.driver_connection  # a psycopg connection: it has cancel()
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # xdist workers ignore SIGINT
    try:
        with running.interruptible():
            assert _worker_statement(running, connection) == "ran"
            try:
                signal.raise_signal(signal.SIGINT)  # Ctrl-C while the main thread waits
            except KeyboardInterrupt:
                pass
            # the main thread is unwinding (waiting for the pool's workers): nothing new starts
            assert _worker_statement(running, connection) == "refused"
        assert _worker_statement(running, connection) == "ran"  # the next wait starts afresh
    finally:
        signal.signal(signal.SIGINT, previous)
        pooled.close()
