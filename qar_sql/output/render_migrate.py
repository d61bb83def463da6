"""Render ``qar migrate`` (:class:`~qar_sql.results.MigrateResult`) as text (its JSON is
:meth:`~qar_sql.results.MigrateResult.to_dict`). No database code here."""

from __future__ import annotations

from typing import Any

from qar_sql.output.registry import renders
from qar_sql.results import MigrateResult
from qar_sql.user_text import one_line


@renders(MigrateResult, "text")
def render_migrate(result: MigrateResult, fmt: str, *, params: Any = None) -> str:
    """``result`` as text: what was applied (unless ``params`` asked only the status), then each
    migration's state (its Markdown is written from its ``to_dict()``)."""
    lines = []
    if not getattr(params, "status", False):
        lines.append(
            f"Applied {len(result.applied)} migration(s) to {one_line(result.store)}: {', '.join(result.applied)}."
            if result.applied
            else f"{one_line(result.store)} is up to date."
        )
    for m in result.migrations:
        when = f"  {m.applied_at:%Y-%m-%d %H:%M:%S} UTC" if m.applied_at else ""
        lines.append(f"  {m.state:<8} {m.name:<24}{when}")
    return "".join(line + "\n" for line in lines)
