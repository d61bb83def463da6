"""Files the user names. Read (a qar.toml, a treatments or hierarchy file, a dbt project's YAML,
a manifest, a secret): only a regular file, up to a size a file of that kind can have, and parsed
here, so that whatever the file holds is one sentence naming the file and a fix (exit 2), never a
parser's exception ("unexpected ...", exit 3). Written (an output): checked before any work that
the file can be made there (:func:`check_writable`).

``Path.read_text`` reads until the end: ``/dev/zero`` never ends (``qar config --check
/dev/zero`` hung, growing its memory), and opening a named pipe waits for a writer. The file's
kind is read with ``stat``, which opens nothing, before the file is opened.

Each reader takes ``what`` (how messages name the file: "scan config", "treatments file") and
``error``, the :class:`UsageError` subclass its callers catch.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from qar_sql import toml_text
from qar_sql.errors import SourceNotFound, UsageError

#: The most a qar file (TOML, YAML) may hold: real ones are a few kilobytes.
MAX_BYTES = 10 * 1024 * 1024

_WIDE = ("utf-32", "utf-16")  # (in this order: a UTF-32 LE byte-order mark starts as UTF-16's)


def read_text(
    path: str | Path,
    what: str,
    *,
    limit: int | None = MAX_BYTES,
    encoding: str = "utf-8-sig",
    error: type[UsageError] = UsageError,
    pipes: bool = False,
) -> str:
    """The text of ``path``; a missing, unreadable or non-UTF-8 file, a device, pipe or folder,
    or a file over ``limit`` bytes, is refused with one sentence (``error``; a missing file:
    SourceNotFound). UTF-8, a leading
    byte-order mark dropped (Windows editors write one; TOML and JSON parsers refuse it as
    "invalid statement at line 1, column 1"). ``pipes``: a named pipe is read too (a secret
    given as ``<(command)``), up to ``limit``."""
    shown = f"{what} {str(path)!r}"
    try:
        path = Path(path)
        mode = os.stat(path).st_mode
        if not stat.S_ISREG(mode) and not (pipes and stat.S_ISFIFO(mode)):
            kind = "a folder" if stat.S_ISDIR(mode) else "not a regular file (a device, pipe or socket)"
            raise error(f"{shown} is {kind}; give the path of a file")
        with path.open("rb") as f:
            data = f.read(limit + 1) if limit is not None else f.read()
    except FileNotFoundError:
        raise SourceNotFound(f"{shown} does not exist; check the path") from None
    except OSError as exc:  # permission denied, a symlink loop, a name too long, ...
        reason = exc.strerror or type(exc).__name__
        raise error(f"cannot read {shown} ({reason}); give the path of a file you can read") from None
    except ValueError:  # os.stat of a path holding a NUL character
        raise error(f"{shown} is not a valid path; give the path of a file") from None
    if limit is not None and len(data) > limit:
        raise error(
            f"{shown} is larger than {limit // (1024 * 1024)} MB, more than such a file "
            "holds; give the path of the right file"
        )
    if encoding.startswith("utf-8") and b"\x00" in data[:4096] and (wide := _wide_start(data)):
        raise error(f"{shown} is {wide} text; save it as UTF-8")
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        if other := _wide(data):
            raise error(f"{shown} is {other} text; save it as UTF-8") from None
        byte = exc.object[exc.start : exc.start + 1]
        raise error(f"{shown} is not UTF-8 text (byte {exc.start}: {byte!r}); save it as UTF-8") from None


def parse_toml(text: str, label: str, *, error: type[UsageError] = UsageError) -> dict[str, Any]:
    """TOML ``text`` of the file ``label`` names ("scan config 'qar.toml'"), or one sentence
    naming the line tomllib names, also for values nested too deeply."""
    import tomllib

    try:
        return toml_text.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = re.fullmatch(r"(.*) \(at (line \d+, column \d+)\)", str(exc), re.DOTALL)
        reason, at = (found[1], found[2]) if found else (str(exc), "")
        raise _invalid(error, label, "TOML", reason, at) from None
    except ValueError as exc:  # int() of a number of more than 4,300 digits
        raise _invalid(error, label, "TOML", _number(exc), "") from None


def read_toml(path: str | Path, what: str, *, error: type[UsageError] = UsageError) -> dict[str, Any]:
    """The TOML file ``path`` parsed (see :func:`read_text` and :func:`parse_toml`)."""
    return parse_toml(read_text(path, what, error=error), f"{what} {str(path)!r}", error=error)


def read_json(
    path: str | Path, what: str, *, error: type[UsageError] = UsageError, limit: int | None = MAX_BYTES, fix: str = ""
) -> Any:
    """The JSON file ``path`` parsed, or one sentence naming the line and column json names;
    ``fix``: what to do instead (else: fix the file there)."""
    import json

    label = f"{what} {str(path)!r}"
    text = read_text(path, what, error=error, limit=limit)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise _invalid(error, label, "JSON", exc.msg, f"line {exc.lineno}, column {exc.colno}", fix) from None
    except ValueError as exc:
        raise _invalid(error, label, "JSON", _number(exc), "", fix) from None
    except RecursionError:  # arrays or objects nested thousands deep
        raise _invalid(error, label, "JSON", "nested too deep to read", "", fix) from None


def read_yaml(path: str | Path, what: str, *, error: type[UsageError] = UsageError) -> Any:
    """The YAML file ``path`` parsed (safely: plain data, no tags), or one sentence naming the
    line and column PyYAML names."""
    import yaml

    label = f"{what} {str(path)!r}"
    text = read_text(path, what, error=error)
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        reason = getattr(exc, "problem", None) or str(exc).strip().splitlines()[0]
        at = f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise _invalid(error, label, "YAML", reason, at) from None
    except ValueError as exc:
        raise _invalid(error, label, "YAML", _number(exc), "") from None
    except RecursionError:  # flow collections nested thousands deep
        raise _invalid(error, label, "YAML", "nested too deep to read", "") from None


def read_csv(
    path: str | Path, what: str, *, delimiter: str, error: type[UsageError] = UsageError
) -> list[tuple[str, ...]]:
    """The rows of the small CSV file ``path`` (a hierarchy), rows without a field left out, or
    one sentence naming the line the csv module names."""
    import csv
    import io

    text = read_text(path, what, error=error, limit=None)
    # Lines end at \n, \r or \r\n only, as in every CSV reader (ARX, a spreadsheet): str.splitlines()
    # also broke a row at U+2028, U+0085 or a form feed inside a label, and read the two halves as
    # two values of the hierarchy.
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        return [tuple(r) for r in reader if r and any(f != "" for f in r)]
    except csv.Error as exc:
        raise _invalid(error, f"{what} {str(path)!r}", "CSV", str(exc), f"line {reader.line_num}") from None


def csv_fields(line: str, delimiter: str) -> list[str] | None:
    """The fields of one line of a CSV file (its header, to explain what DuckDB read), or None
    where the csv module refuses it (a field over its 128 KB limit): then there is nothing to
    explain by it."""
    import csv

    try:
        return next(csv.reader([line], delimiter=delimiter))
    except csv.Error:
        return None


def _invalid(error: type[UsageError], label: str, kind: str, reason: str, at: str, fix: str = "") -> UsageError:
    """The one sentence of a file its parser refused: where (``at``: "line 3, column 7", or
    nothing when the parser names no place), the parser's reason, and the fix."""
    where = f" at {at}" if at else ""
    return error(f"{label} is not valid {kind}{where}: {reason}; {fix or ('fix that line' if at else 'fix the file')}")


def _wide(data: bytes) -> str | None:
    """ "UTF-16" or "UTF-32" when ``data`` is text in that encoding with its byte-order mark."""
    for codec in _WIDE:
        try:
            text = data.decode(codec)
        except UnicodeDecodeError:
            continue
        if data[:2] in (b"\xff\xfe", b"\xfe\xff") and all(c.isprintable() or c.isspace() for c in text):
            return codec.upper()
    return None


def wide_encoding(path: str | Path) -> str | None:
    """ "UTF-16" or "UTF-32" when the file ``path`` is text in that encoding (:func:`_wide_start`)."""
    try:
        with open(path, "rb") as fh:
            return _wide_start(fh.read(4096))
    except OSError:
        return None


def _wide_start(head: bytes) -> str | None:
    """ "UTF-32" or "UTF-16" when ``head`` (a file's first bytes) starts with that encoding's
    byte-order mark, or is ASCII text in UTF-16 without one (a NUL beside each character), which
    is valid UTF-8 (NULs) and was reported as the syntax error at line 1, column 2."""
    if head.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        return "UTF-32"
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "UTF-16"
    pairs = head[: min(len(head), 4096) // 2 * 2]
    half = len(pairs) // 2
    if half >= 2 and half in (pairs[1::2].count(0), pairs[0::2].count(0)):
        return "UTF-16"
    return None


def _number(exc: ValueError) -> str:
    """A parser's ValueError other than its syntax error: Python's limit of 4,300 digits on
    ``int()`` of a text (its message suggests a Python call, no fix a user can make)."""
    text = str(exc)
    return "it holds a number of more than 4,300 digits" if "digits" in text else text.splitlines()[0]


def check_writable(path: str, option: str, suffixes: Sequence[str] = ()) -> None:
    """Refuse an output ``path`` that could not be written (missing folder, a folder, no
    permission, a folder no file can be created in) or has the wrong suffix. Nothing is left
    behind."""
    if not path.strip():  # (Path("") is the current folder: it was said to be "a folder")
        raise UsageError(f"{option} is empty; name a file to write")
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
    try:
        os.stat(p)
    except FileNotFoundError:
        pass  # (a new file, or a link to one that is made when written)
    except OSError as exc:  # a symlink loop, a name too long: the write would fail after the work
        raise UsageError(f"{option} {path!r} cannot be written ({exc.strerror}); choose another path") from None
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


def check_folder(path: str, option: str) -> None:
    """Refuse, before any work, an output folder (``--report-dir``) that cannot be made or
    written: a file, a symlink loop, a name too long, under a file, or in a folder without
    permission. A missing folder is made later, with its parents."""
    if not path.strip():
        raise UsageError(f"{option} is empty; name a folder to write")
    if path == "-":  # ("-" is stdout everywhere: a folder of pages cannot go there)
        raise UsageError(
            f"{option} '-' would make a folder named '-': {option} writes a folder of pages, not stdout; name a folder"
        )
    p = Path(path)
    try:
        if os.stat(p) and not p.is_dir():
            raise UsageError(f"{option} {path!r} is a file, not a folder; name a folder")
    except FileNotFoundError:
        pass
    except OSError as exc:  # a symlink loop, a name too long, a file on the way
        raise UsageError(f"{option} {path!r} cannot be used ({exc.strerror}); choose another folder") from None
    else:
        if not os.access(p, os.W_OK | os.X_OK):
            raise UsageError(f"{option} {path!r} cannot be written (permission denied); choose another folder")
        return
    parent = p.absolute().parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
        reason = "it is under a file" if not parent.is_dir() else "permission denied"
        raise UsageError(f"{option} {path!r} cannot be made ({reason}); choose another folder")


def is_duckdb_file(path: str) -> bool:
    """Whether ``path`` is a file that starts as DuckDB's do (the magic ``DUCK`` after an 8-byte
    checksum); an unreadable file counts as DuckDB, so that the error is DuckDB's own."""
    try:
        with open(path, "rb") as fh:
            return fh.read(12)[8:12] == b"DUCK"
    except OSError:
        return True


def foreign_file(path: str) -> bool:
    """Whether ``path`` is a file with content that is not DuckDB's: refused before DuckDB opens
    it, which opens a SQLite file by fetching its sqlite extension from the network (and would
    then write into it)."""
    return os.path.isfile(path) and os.path.getsize(path) > 0 and not is_duckdb_file(path)
