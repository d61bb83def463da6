"""Render ``qar migrate`` (:class:`~qar_sql.results.MigrateResult`): text and JSON.
No database code here."""

from __future__ import annotations

from typing import Any

from qar_sql.output.render import renders, to_json
from qar_sql.results import MigrateResult


def migrate_dict(result: MigrateResult) -> dict[str, Any]:
    """The JSON object of ``qar migrate`` (docs/compliance.md)."""
    return {
        "store": result.store,
        "dialect": result.dialect,
        "applied": list(result.applied),
        "migrations": [
            {
                "version": m.version,
                "name": m.name,
                "state": m.state,
                "checksum": m.checksum,
                "applied_at": m.applied_at.isoformat() if m.applied_at else None,
            }
            for m in result.migrations
        ],
    }


@renders(MigrateResult, "text", "json", "markdown")
def render_migrate(result: MigrateResult, fmt: str, *, status: bool = False) -> str:
    """``result`` as JSON, or as text (also for ``markdown``): what was applied (unless only the
    ``status`` was asked), then each migration's state."""
    if fmt == "json":
        return to_json(migrate_dict(result)) + "\n"
    lines = []
    if not status:
        lines.append(
            f"Applied {len(result.applied)} migration(s) to {result.store}: {', '.join(result.applied)}."
            if result.applied
            else f"{result.store} is up to date."
        )
    for m in result.migrations:
        when = f"  {m.applied_at:%Y-%m-%d %H:%M:%S} UTC" if m.applied_at else ""
        lines.append(f"  {m.state:<8} {m.name:<24}{when}")
    return "".join(line + "\n" for line in lines)
