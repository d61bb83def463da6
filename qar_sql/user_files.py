"""Files the user names. Read (a qar.toml, a treatments or hierarchy file, a dbt project's YAML):
only a regular file, and only up to a size a file of that kind can have. Written (an output):
checked before any work that the file can be made there (:func:`check_writable`).

``Path.read_text`` reads until the end: ``/dev/zero`` never ends (``qar config --check
/dev/zero`` hung, growing its memory), and opening a named pipe waits for a writer. The file's
kind is read with ``stat``, which opens nothing, before the file is opened.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path

from qar_sql.errors import UsageError

#: The most a qar file (TOML, YAML) may hold: real ones are a few kilobytes.
MAX_BYTES = 10 * 1024 * 1024


def read_text(path: str | Path, what: str, *, limit: int | None = MAX_BYTES, encoding: str = "utf-8-sig") -> str:
    """The text of ``path`` (``what`` names it in messages, e.g. "scan config"); a device, pipe
    or folder, or a file over ``limit`` bytes, is refused with one sentence. A missing file
    raises FileNotFoundError, an unreadable one OSError, for the caller's own message. UTF-8, a
    leading byte-order mark dropped (Windows editors write one; TOML and JSON parsers refuse it
    as "invalid statement at line 1, column 1")."""
    path = Path(path)
    mode = os.stat(path).st_mode
    if not stat.S_ISREG(mode):
        kind = "a folder" if stat.S_ISDIR(mode) else "not a regular file (a device, pipe or socket)"
        raise UsageError(f"{what} {str(path)!r} is {kind}; give the path of a file")
    with path.open("rb") as f:
        data = f.read(limit + 1) if limit is not None else f.read()
    if limit is not None and len(data) > limit:
        raise UsageError(
            f"{what} {str(path)!r} is larger than {limit // (1024 * 1024)} MB, more than such a file "
            "holds; give the path of the right file"
        )
    return data.decode(encoding)


def check_writable(path: str, option: str, suffixes: Sequence[str] = ()) -> None:
    """Refuse an output ``path`` that could not be written (missing folder, a folder, no
    permission, a folder no file can be created in) or has the wrong suffix. Nothing is left
    behind."""
    if suffixes and not path.lower().endswith(tuple(suffixes)):
        raise UsageError(f"{option} {path!r} must end in {' or '.join(suffixes)}")
    if path.endswith(("/", os.sep)):  # (Path drops the slash: "out/" read as a file "out", failing after the work)
        raise UsageError(f"{option} {path!r} ends in {path[-1]!r}, so it names a folder; name a file in it")
    p = Path(path)
    folder = p.parent if str(p.parent) else Path(".")
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"{option} {path!r}: {str(folder)!r} is a file, not a folder; write elsewhere")
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
