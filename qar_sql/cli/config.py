"""``qar config``: the settings that apply here and where each came from."""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

import click

from qar_sql.output.render import format_option, render

if TYPE_CHECKING:  # imported when the command runs: qar --help does not load the scan code
    from qar_sql import config as qar_config


@functools.cache
def _settings_type() -> type:
    """The resolved settings as a table (a result type, made on first use: the results module
    loads numpy, which qar --help does not need)."""
    from qar_sql.results import Tabular

    @dataclass(frozen=True, repr=False)
    class Settings(Tabular):
        """The resolved settings as a table (``--format csv``): one row per setting, as in the JSON."""

        settings: tuple[qar_config.Setting, ...]

        def table_columns(self) -> dict[str, list]:
            s = self.settings
            return {
                "name": [x.name for x in s],
                "value": [x.shown for x in s],
                "origin": [x.origin for x in s],
                "env": [x.envvar for x in s],
            }

        def summary_line(self) -> str:
            return f"{len(self.settings)} settings"

    return Settings


@click.command("config")
@format_option(own=("text", "json"), help="Output format: text (one setting a line), json or csv.")
@click.option(
    "--check",
    "check",
    metavar="FILE",
    help="Validate FILE (a qar.toml) against its JSON Schema instead: exit 0 if valid, else 2 naming the bad key or value.",
)
@click.pass_context
def config_cmd(ctx, fmt, check):
    """Print the resolved defaults and where each came from: a QAR_ variable, the qar.toml
    ([defaults], [store] url) or pyproject.toml ([tool.qar]) found in the working directory or a
    parent, or the built-in default. Secrets are masked. With --check FILE, validate a qar.toml
    against qar_sql/schemas/qar.schema.json (docs/config-schema.md)."""
    if check is not None:
        from qar_sql import toml_schema

        data = toml_schema.check_file(check)
        n = len(data.get("scan", []))
        click.echo(f"{check}: valid ({n} scan{'s' if n != 1 else ''}; qar.toml's JSON Schema)")
        return
    from qar_sql import config as qar_config

    found = ctx.obj.get("config") if ctx.obj else None
    settings = qar_config.resolve(found or qar_config.find())

    def own(fmt: str) -> str:
        if fmt == "json":
            payload = {
                "config_file": str(found.path) if found and found.path else None,
                "settings": {s.name: {"value": s.shown, "origin": s.origin, "env": s.envvar} for s in settings},
            }
            return json.dumps(payload, indent=2) + "\n"
        lines = [f"config file: {found.origin if found and found.path else '(none found)'}"]
        width = max(len(s.name) for s in settings)
        for s in settings:
            shown = ", ".join(s.shown) if isinstance(s.shown, list | tuple) else s.shown
            value = "(unset)" if shown is None else shown
            lines.append(f"{s.name.ljust(width)}  {value}  ({s.origin}; env {s.envvar})")
        return "\n".join(lines) + "\n"

    click.echo(render(_settings_type()(tuple(settings)), fmt, own), nl=False)
