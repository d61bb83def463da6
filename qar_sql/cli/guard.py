"""The CLI's side of :func:`qar_sql.guard.check_not_input`: the files a command reads
always include the qar.toml or pyproject.toml whose defaults apply (found or named by --config)."""

from __future__ import annotations

from typing import Any

import click

from qar_sql.guard import check_not_input


def guard_outputs(writes: list[tuple[str, Any]], reads: list[tuple[str, Any]]) -> None:
    """Refuse, before any work, an output that is a file this command reads (exit 2)."""
    ctx = click.get_current_context(silent=True)
    root = ctx.find_root().obj if ctx is not None else None
    config = root.get("config") if isinstance(root, dict) else None
    if config is not None and getattr(config, "path", None):
        reads = [*reads, ("the config file", str(config.path))]
    check_not_input(writes, reads)
