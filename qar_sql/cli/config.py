"""``qar config``: the settings that apply here and where each came from."""

from __future__ import annotations

import click

from qar_sql.output.render import format_option


@click.command("config")
@format_option(own=("text", "json"), help="Output format: text (one setting a line), json or csv.")
@click.pass_context
def config_cmd(ctx, fmt):
    """Print the resolved defaults and where each came from: a QAR_ variable, the qar.toml
    ([defaults], [store] url) or pyproject.toml ([tool.qar]) found in the working directory or a
    parent, or the built-in default. Secrets are masked."""
    from qar_sql.cli.emit import emit
    from qar_sql.commands.config import run
    from qar_sql.output.render_config import render_config

    result = run(ctx.obj.get("config") if ctx.obj else None)
    emit(result, fmt, lambda f: render_config(result, f))
