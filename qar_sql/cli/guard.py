"""The CLI's side of :func:`qar_sql.guard.check_not_input`: the files a command reads
always include the qar.toml or pyproject.toml whose defaults apply (found or named by --config);
:func:`qar_sql.guard.guard_outputs`, where the generated commands (``qar_sql/command.py``) reach it."""

from __future__ import annotations

from qar_sql.guard import guard_outputs

__all__ = ["guard_outputs"]
