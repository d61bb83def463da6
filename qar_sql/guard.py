"""Outputs never overwrite inputs: :func:`check_not_input`, the one guard every command (and
:func:`qar_sql.report`, ``risk(per_record=…)``) calls before any work, compares each file it will
write with each file it reads. Beside errors.py, above the engines (each says which local file
its URLs name), so that the measures, the reporting and the CLI all use the same function."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

import click

from qar_sql.engines.dialects import engine_of
from qar_sql.engines.secrets import mask_source
from qar_sql.errors import UsageError


def local_file(source: Any) -> str | None:
    """The local file a source, store or input names (a path, or a URL whose engine names one:
    ``duckdb:///path``, ``sqlite:///path``), or None (a server URL, a frame, nothing)."""
    if not isinstance(source, str | os.PathLike):
        return None
    text = os.fspath(source)
    if not text:
        return None
    if "://" not in text:
        return text
    engine = engine_of(text)
    return engine.local_file(text) if engine is not None and engine.local_file is not None else None


def same_file(a: str, b: str) -> bool:
    """The same file by its resolved real path (symlinks, ``..``, relative or absolute) or, when
    both exist, by device and inode (hard links, a case-insensitive file system)."""
    try:
        if os.path.exists(a) and os.path.exists(b):
            return os.path.samefile(a, b)
    except OSError:
        pass
    return os.path.normcase(os.path.realpath(a)) == os.path.normcase(os.path.realpath(b))


def check_not_input(writes: Iterable[tuple[str, Any]], reads: Iterable[tuple[str, Any]]) -> None:
    """The guard of every command, called before any work: refuse (exit 2) an output file that
    is one of the files the command reads, which writing it would destroy.

    ``writes``: (option, path) of every file the command will write (``-o``, ``--plot``,
    ``--junit``, a ``--report-dir`` page …; None when not given). ``reads``: (what, source) of
    every file it reads (the source, a treatments or config file, a scan's sources, the store …;
    URLs of servers and frames are skipped)."""
    inputs = [(what, path, os.fspath(source)) for what, source in reads if (path := local_file(source))]
    written: list[tuple[str, str]] = []
    for option, out in writes:
        if out is None or not os.fspath(out):
            continue
        out = os.fspath(out)
        same = next((first for first, path in written if out != "-" and same_file(out, path)), None)
        if same is not None:  # the second would replace the first (a JUnit file holding Markdown)
            raise UsageError(f"{same} and {option} both name {out!r}; give each its own file")
        written.append((option, out))
        if out == "-":  # ("-" is stdout everywhere; only qar report -o writes there, and it never comes here)
            raise UsageError(
                f"{option} '-' would write a file named '-': {option} writes a file, not stdout; give it a file name"
            )
        for what, path, given in inputs:
            if same_file(out, path):
                shown = "" if given == out else f" ({mask_source(given)!r})"
                raise UsageError(
                    f"{option} {out!r} is {what}{shown}, which this command reads and writing would destroy; "
                    f"give {option} another file name"
                )


def guard_outputs(writes: list[tuple[str, Any]], reads: list[tuple[str, Any]]) -> None:
    """:func:`check_not_input` on the command line: the files a command reads always include the
    qar.toml or pyproject.toml whose defaults apply (found or named by --config)."""
    ctx = click.get_current_context(silent=True)
    root = ctx.find_root().obj if ctx is not None else None
    config = root.get("config") if isinstance(root, dict) else None
    if config is not None and getattr(config, "path", None):
        reads = [*reads, ("the config file", str(config.path))]
    check_not_input(writes, reads)


def guard_files(
    writes: list[tuple[str, Any]], where: dict, store_file: str | None = None, hash_secret_file: str | None = None
) -> None:
    """No output over a file the command reads: the source, the results store (``store_file``,
    resolved), the hash secret, the config."""
    reads = [("the source file itself", where.get("source")), ("the hash secret file", hash_secret_file)]
    if store_file is not None:
        reads.append(("the results store", store_file))
    guard_outputs(writes, reads)
