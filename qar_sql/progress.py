"""``progress=`` of the Python API: a callable ``(done, total)`` as before, or ``True``
for a bar — tqdm's (``tqdm.auto``: the notebook widget in Jupyter, a text bar elsewhere) when the
``progress`` extra is installed, else qar's own text progress (the one the commands print on
stderr: a bar on a terminal, a stage line every 10 s otherwise). ``False`` or ``None``: nothing.

Each public function is wrapped by :func:`with_progress`, which turns ``True`` into a callable
before the function runs and closes the bar when it returns, so the functions themselves keep
taking a plain callable (or None) and pass it on as they always did.
"""

from __future__ import annotations

import functools
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, ParamSpec, TypeVar

import click

from qar_sql.errors import ParameterError, shown
from qar_sql.extras import installed
from qar_sql.user_text import one_line


class Progress:
    """A long command's progress on stderr. On a terminal, a click progress bar, created on the
    first tick. Off a terminal (a CI log), a stage line every :attr:`interval` seconds, as dbt
    logs — ``12:01:03  whatif: scenarios 40/120 (33%), 25 s`` — from a timer, so that a phase
    which does not tick still shows the command alive, and a last line when it ends if any was
    written. Nothing with --quiet.

    ``clock`` (seconds, monotonic) and ``stream`` are parameters so that a test can drive it."""

    #: Seconds between two stage lines off a terminal (eliminate and whatif ran a minute in silence).
    interval: float = 10.0

    def __init__(
        self,
        label: str,
        quiet: bool = False,
        *,
        interval: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        stream: Any = None,
    ):
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.enabled = not quiet and tty
        self.lines = not quiet and not tty
        self.interval = type(self).interval if interval is None else interval
        self.clock = clock
        self.bar: Any = None  # a click progress bar once the first tick says how long
        self.done = 0
        self.total: int | None = None
        ctx = click.get_current_context(silent=True)
        self.command = ctx.info_name if ctx is not None and ctx.info_name else "qar"
        self._lock = threading.Lock()
        self._started: float | None = None
        self._last = 0.0
        self._printed = False
        self._stop: threading.Event | None = None
        self._timer: threading.Thread | None = None

    def __call__(self, done: int, total: int) -> None:
        if self.lines:
            self._start()
            with self._lock:
                self.done, self.total = done, total
            self._line_if_due()
            return
        if not self.enabled:
            return
        if self.bar is None:
            self.bar = click.progressbar(length=total, label=one_line(self.label), file=self.stream, show_pos=True)
            self.bar.__enter__()
        self.bar.update(done - self.done)
        self.done = done

    def _start(self) -> None:
        with self._lock:
            if self._started is not None:
                return
            self._started = self._last = self.clock()
            self._stop = threading.Event()
            stop = self._stop
        # A daemon timer: it wakes every interval and writes the line if none was due on a tick.
        self._timer = threading.Thread(target=self._beat, args=(stop,), name="qar-progress", daemon=True)
        self._timer.start()

    def _beat(self, stop: threading.Event) -> None:
        while not stop.wait(max(self.interval, 0.01)):
            self._line_if_due()

    def _line_if_due(self, final: str | None = None) -> None:
        with self._lock:
            if self._started is None:
                return
            now = self.clock()
            if not final and now - self._last < self.interval:
                return
            if final and not self._printed:
                return
            self._last, self._printed = now, True
            label = f"{one_line(self.label)} " if self.label else ""  # (a scan's name: a dbt model's may hold anything)
            if final:
                what = final
            elif self.total:
                what = f"{self.done:,}/{self.total:,} ({100 * self.done // self.total}%)"
            else:
                what = "started"
            line = f"{time.strftime('%H:%M:%S')}  {self.command}: {label}{what}, {now - self._started:.0f} s"
            try:
                click.echo(line, file=self.stream)  # (flushes)
            except (OSError, ValueError):  # stderr gone (a closed pipe): progress is not worth an error
                pass

    def note(self, text: str) -> None:
        """Say where the work stands beside the bar (a pruned audit: QIs grouped, pruned, left)."""
        self.label = text
        if self.bar is not None:
            self.bar.label = one_line(text)
            self.bar.render_progress()

    def close(self, outcome: str = "done") -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)
            self.bar = None
        if self._stop is not None:
            self._stop.set()
            if self._timer is not None and self._timer is not threading.current_thread():
                self._timer.join()
            self._line_if_due(final=outcome)
        with self._lock:
            self._started, self._stop, self._timer, self._printed, self.total = None, None, None, False, None

    def __enter__(self):
        if self.lines:
            self._start()
        return self

    def __exit__(self, exc_type, *exc):
        self.close("done" if exc_type is None else "stopped")


P = ParamSpec("P")
R = TypeVar("R")


class TqdmBar:
    """A ``(done, total)`` callable drawing a ``tqdm.auto`` bar. A call whose total differs from
    the bar's (a second phase, such as compare's two audits) starts the bar again at that total."""

    def __init__(self, label: str):
        self.label = label
        self.bar: Any = None  # made at the first call, which says the total
        self._lock = threading.Lock()  # the scans tick from their worker threads

    def __call__(self, done: int, total: int) -> None:
        with self._lock:
            if self.bar is None:
                from tqdm.auto import tqdm

                self.bar = tqdm(total=total, desc=self.label, unit="step", leave=True)
            elif self.bar.total != total or done < self.bar.n:
                self.bar.reset(total=total)
            self.bar.update(done - self.bar.n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


@contextmanager
def reporter(progress: Any, label: str) -> Iterator[Callable[[int, int], None] | None]:
    """The callable ``progress`` stands for, for the length of the block (see the module)."""
    if progress is None or progress is False:
        yield None
    elif progress is True:
        bar: Any = TqdmBar(label) if installed("progress") else Progress(label)
        try:
            yield bar
        finally:
            bar.close()
    elif callable(progress):
        yield progress
    else:
        raise ParameterError(
            f"progress={shown(progress)} is not a progress; give True (a bar), False, or a callable "
            "taking (done, total)"
        )


def with_progress(label: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Decorate a public function whose keyword ``progress`` may be True (a bar named ``label``)."""

    def decorate(fn: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(fn)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            with reporter(kwargs.get("progress"), label) as callback:
                if "progress" in kwargs:
                    kwargs["progress"] = callback
                return fn(*args, **kwargs)

        return wrapper

    return decorate
