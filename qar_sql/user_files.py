"""Reading a file the user names (a qar.toml, a treatments or hierarchy file, a dbt project's
YAML): only a regular file, and only up to a size a file of that kind can have.

``Path.read_text`` reads until the end: ``/dev/zero`` never ends (``qar config --check
/dev/zero`` hung, growing its memory), and opening a named pipe waits for a writer. The file's
kind is read with ``stat``, which opens nothing, before the file is opened.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from qar_sql.errors import UsageError

#: The most a qar file (TOML, YAML) may hold: real ones are a few kilobytes.
MAX_BYTES = 10 * 1024 * 1024


def read_text(path: str | Path, what: str, *, limit: int | None = MAX_BYTES, encoding: str = "utf-8") -> str:
    """The text of ``path`` (``what`` names it in messages, e.g. "scan config"); a device, pipe
    or folder, or a file over ``limit`` bytes, is refused with one sentence. A missing file
    raises FileNotFoundError, an unreadable one OSError, for the caller's own message."""
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
