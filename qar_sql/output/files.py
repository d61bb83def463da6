"""Checks made before any computation, so that a long run never ends in a failure it could have
reported at once: an output file that cannot be written, an optional library not installed.
(An output that is one of the command's inputs is refused by :func:`qar_sql.guard.check_not_input`.)"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from qar_sql.errors import UsageError
from qar_sql.extras import require

#: The files a plot can be drawn to (matplotlib's raster and vector formats every command offers).
PLOT_SUFFIXES = (".png", ".svg")


def check_writable(path: str, option: str, suffixes: Sequence[str] = ()) -> None:
    """Refuse an output ``path`` that could not be written (missing folder, a folder, no
    permission, a folder no file can be created in) or has the wrong suffix. Nothing is left
    behind."""
    if suffixes and not path.lower().endswith(tuple(suffixes)):
        raise UsageError(f"{option} {path!r} must end in {' or '.join(suffixes)}")
    p = Path(path)
    folder = p.parent if str(p.parent) else Path(".")
    if not folder.is_dir():
        raise UsageError(f"{option} {path!r}: the folder {str(folder)!r} does not exist; create it or write elsewhere")
    if p.is_dir():
        raise UsageError(f"{option} {path!r} is a folder; name a file in it")
    if not os.access(folder, os.W_OK | os.X_OK) or (p.exists() and not os.access(p, os.W_OK)):
        raise UsageError(f"{option} {path!r} cannot be written (permission denied); choose another path")
    if not p.exists():
        # os.access says yes to root everywhere, also in /proc or a read-only mount: create (and
        # at once delete) an unnamed file there to be sure the output can be made.
        import tempfile

        try:
            tempfile.TemporaryFile(dir=folder).close()
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
            raise UsageError(f"{option} {path!r} cannot be written ({reason}); choose another path") from None


def check_plot(path: str, option: str = "--plot") -> None:
    """Refuse a plot path before any work: a suffix other than .png or .svg, a folder that does
    not exist (nothing is created), no permission, or matplotlib missing. One check for every
    command that draws (eliminate, uniqueness, compare, history)."""
    check_writable(path, option, PLOT_SUFFIXES)
    require_matplotlib(option)


def require_matplotlib(option: str) -> None:
    """Refuse ``option`` (a plot) when matplotlib, the optional extra ``qar-sql[plot]``, is missing."""
    require("plot", option, alternative=f" (or leave {option} out)")


def written(path: str, option: str):
    """A context manager turning an OSError while writing ``path`` into one sentence."""
    return _Written(path, option)


class _Written:
    def __init__(self, path: str, option: str):
        self.path, self.option = path, option

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, tb):
        if isinstance(exc, OSError):
            reason = exc.strerror or str(exc)
            raise UsageError(f"cannot write {self.option} {self.path!r}: {reason}") from exc
        return False
