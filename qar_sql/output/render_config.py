"""``qar config``'s output: each setting, its value and where it came from, as text (its JSON is
:meth:`qar_sql.results.Settings.to_dict`, and its CSV that JSON's)."""

from __future__ import annotations

from qar_sql.output.registry import renders
from qar_sql.results import Settings
from qar_sql.user_text import one_line


def config_text(r: Settings) -> str:
    """One setting a line, after the file they came from."""
    found = r.config
    # (the file's path and a QAR_ variable's value are the user's: each on its one line)
    lines = [f"config file: {one_line(str(found.origin)) if found and found.path else '(none found)'}"]
    width = max(len(s.name) for s in r.settings)
    for s in r.settings:
        shown = ", ".join(s.shown) if isinstance(s.shown, list | tuple) else s.shown
        value = "(unset)" if shown is None else shown
        lines.append(f"{s.name.ljust(width)}  {one_line(str(value))}  ({one_line(str(s.origin))}; env {s.envvar})")
    return "\n".join(lines) + "\n"


@renders(Settings, "text")
def render_config(r: Settings, fmt: str) -> str:
    """``r`` as text."""
    return config_text(r)
