"""Checks made before any computation, so that a long run never ends in a failure it could have
reported at once: an output file that cannot be written, an optional library not installed.
(An output that is one of the command's inputs is refused by :func:`qar_sql.guard.check_not_input`.)"""

from __future__ import annotations

from pathlib import Path

from qar_sql.errors import UsageError
from qar_sql.extras import require
from qar_sql.user_files import check_writable

#: The files a plot can be drawn to (matplotlib's raster and vector formats every command offers).
PLOT_SUFFIXES = (".png", ".svg")


def check_plot(path: str, option: str = "--plot") -> None:
    """Refuse a plot path before any work: a suffix other than .png or .svg, a folder that does
    not exist (nothing is created), no permission, or matplotlib missing. One check for every
    command that draws (eliminate, uniqueness, compare, history)."""
    check_writable(path, option, PLOT_SUFFIXES)
    require_matplotlib(option)


def require_matplotlib(option: str) -> None:
    """Refuse ``option`` (a plot) when matplotlib, the optional extra ``qar-sql[plot]``, is missing."""
    require("plot", option, alternative=f" (or leave {option} out)")


def save_figure(fig, path, option: str = "--plot", **savefig) -> Path:
    """Write ``fig`` to ``path``, a .png or .svg file (:func:`check_plot`'s rule, for the API
    callers the command line's check did not reach); a failed write is one sentence."""
    check_writable(str(path), option, PLOT_SUFFIXES)
    with written(str(path), option):
        fig.savefig(path, **savefig)
    return Path(path)


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
