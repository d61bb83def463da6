"""``qar config``: the settings that apply here and where each came from."""

from __future__ import annotations

import json

import click

from qar_sql import config as qar_config


@click.command("config")
@click.option(
    "--format",
    "-f",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    help="Output format: text (one setting a line) or json.",
)
@click.pass_context
def config_cmd(ctx, fmt):
    """Print the resolved defaults and where each came from: a QAR_ variable, the qar.toml
    ([defaults], [store] url) or pyproject.toml ([tool.qar]) found in the working directory or a
    parent, or the built-in default. Secrets are masked."""
    found = ctx.obj.get("config") if ctx.obj else None
    settings = qar_config.resolve(found or qar_config.find())
    if fmt == "json":
        payload = {
            "config_file": str(found.path) if found and found.path else None,
            "settings": {s.name: {"value": s.shown, "origin": s.origin, "env": s.envvar} for s in settings},
        }
        click.echo(json.dumps(payload, indent=2))
        return
    click.echo(f"config file: {found.origin if found and found.path else '(none found)'}")
    width = max(len(s.name) for s in settings)
    for s in settings:
        shown = ", ".join(s.shown) if isinstance(s.shown, list | tuple) else s.shown
        value = "(unset)" if shown is None else shown
        click.echo(f"{s.name.ljust(width)}  {value}  ({s.origin}; env {s.envvar})")
