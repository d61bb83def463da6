"""Errors and exit codes.

Every error qar-sql raises on purpose is a :class:`QarError`; its message is one sentence that
names the bad value and says how to fix it. The CLI prints the message and exits with the
error's ``exit_code``; it shows a traceback only with ``--debug``.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable


class ExitCode(enum.IntEnum):
    """Exit codes of the ``qar`` command.

    ====  ==============================================================
    code  meaning
    ====  ==============================================================
    0     ok: the command ran and no threshold was breached
    1     risk above threshold (``--fail-above``)
    2     usage error: bad option, file, table, column or parameter
    3     database or runtime error (connection lost, SQL failed, ...)
    130   interrupted (Ctrl-C, SIGINT: 128 + 2, as shells report it)
    ====  ==============================================================
    """

    OK = 0
    RISK_ABOVE_THRESHOLD = 1
    USAGE = 2
    RUNTIME = 3
    INTERRUPTED = 130


class QarError(Exception):
    """Root of every error qar-sql raises on purpose."""

    exit_code: ExitCode = ExitCode.RUNTIME


class UsageError(QarError):
    """The user asked for something that cannot be done as asked (bad input)."""

    exit_code = ExitCode.USAGE


class SourceNotFound(UsageError):
    """A file, database or table named by the user does not exist."""


class ColumnError(UsageError):
    """A column named by the user does not exist or cannot serve as asked."""


class ParameterError(UsageError):
    """A numeric parameter (p, alpha, pi_u, thresholds, ...) is out of range."""


class DataError(UsageError):
    """The data cannot support the estimate (empty table, one row, no tail, ...)."""


class NoTailError(DataError):
    """No θ exceeds the threshold u, so there is no tail to fit."""


class DatabaseError(QarError):
    """The database refused or failed a statement, or the connection was lost."""

    exit_code = ExitCode.RUNTIME


def require_whole(value: object, minimum: int, message: str) -> None:
    """Refuse ``value`` with ``message`` (a sentence naming the value and a fix) unless it is a
    whole number of at least ``minimum``: the one check behind --top, --step, --refine, --k, …
    (a numpy integer counts: it is what a DataFrame's columns hold)."""
    import numbers

    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ParameterError(message)


def shown(value: object, *, _depth: int = 0) -> str:
    """A value as an error message shows it: a numpy scalar as the Python number it holds
    (200, not np.int64(200)), a whole number of more than 15 digits in scientific notation
    (1e+400, not four hundred zeros), a date or time and a boolean as TOML and YAML write them
    (1979-05-27, not datetime.date(1979, 5, 27); true, not True), a list or table item by item
    (ten items, three levels at most), text quoted, anything else by its repr."""
    import datetime
    import functools

    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, list | tuple | dict):  # (each item so; a long or deep list cut short)
        if _depth >= 3:
            return "…"
        inner = functools.partial(shown, _depth=_depth + 1)
        pairs = list(value.items())[:10] if isinstance(value, dict) else None
        parts = [f"{inner(k)}: {inner(v)}" for k, v in pairs] if pairs is not None else [inner(x) for x in value[:10]]
        more = [f"… {len(value) - 10:,} more"] if len(value) > 10 else []
        ends = "{}" if isinstance(value, dict) else "()" if isinstance(value, tuple) else "[]"
        return ends[0] + ", ".join([*parts, *more]) + ends[1]
    item = getattr(value, "item", None)
    if callable(item) and type(value).__module__ == "numpy":
        try:
            value = item()
        except (TypeError, ValueError):
            pass
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**15:
        digits = str(abs(value))
        mantissa = (digits[0] + "." + digits[1:3]).rstrip("0").rstrip(".")
        return f"{'-' if value < 0 else ''}{mantissa}e+{len(digits) - 1}"
    return repr(value)


def one_of(word: object, allowed: Iterable[str]) -> str:
    """The advice clause after an unknown name, one clause of the sentence (no second sentence
    glued on): "did you mean 'qis' (one of: qis, seed, treatment)?", or "use one of: …"."""
    import difflib

    names = list(allowed)
    close = difflib.get_close_matches(str(word), names, n=1)
    if close:
        return f"did you mean {close[0]!r} (one of: {', '.join(names)})?"
    return f"use one of: {', '.join(names)}"
