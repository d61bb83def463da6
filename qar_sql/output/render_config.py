"""``qar config``'s output: each setting, its value and where it came from, as text or JSON
(``--format csv`` is generic, from :meth:`qar_sql.results.Settings.table_columns`)."""

from __future__ import annotations

from qar_sql.output.render import renders, to_json
from qar_sql.results import Settings


def config_dict(r: Settings) -> dict:
    """The JSON of ``qar config`` (a contract: the file, then name → value, origin, variable)."""
    found = r.config
    return {
        "config_file": str(found.path) if found and found.path else None,
        "settings": {s.name: {"value": s.shown, "origin": s.origin, "env": s.envvar} for s in r.settings},
    }


def config_text(r: Settings) -> str:
    """One setting a line, after the file they came from."""
    found = r.config
    lines = [f"config file: {found.origin if found and found.path else '(none found)'}"]
    width = max(len(s.name) for s in r.settings)
    for s in r.settings:
        shown = ", ".join(s.shown) if isinstance(s.shown, list | tuple) else s.shown
        value = "(unset)" if shown is None else shown
        lines.append(f"{s.name.ljust(width)}  {value}  ({s.origin}; env {s.envvar})")
    return "\n".join(lines) + "\n"


@renders(Settings, "text", "json")
def render_config(r: Settings, fmt: str) -> str:
    """``r`` as text or JSON."""
    return to_json(config_dict(r), ascii_only=True) + "\n" if fmt == "json" else config_text(r)
