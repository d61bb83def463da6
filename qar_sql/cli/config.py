"""``qar config``: the settings that apply here and where each came from."""

from __future__ import annotations

import click

from qar_sql.cli.emit import emit
from qar_sql.output.render import format_option


@click.command("config")
@format_option(own=("text", "json"), help="Output format: text (one setting a line), json or csv.")
@click.option(
    "--check",
    "check",
    metavar="FILE",
    help="Validate FILE (a qar.toml, or a pyproject.toml's [tool.qar]) as qar scan reads it instead: exit 0 if valid, else 2 naming every bad key or value.",
)
@click.pass_context
def config_cmd(ctx, fmt, check):
    """Print the resolved defaults and where each came from: a QAR_ variable, the qar.toml
    ([defaults], [store] url) or pyproject.toml ([tool.qar]) found in the working directory or a
    parent, or the built-in default. Secrets are masked. With --check FILE, validate a qar.toml
    against qar_sql/schemas/qar.schema.json, or a pyproject.toml's [tool.qar] against
    tool-qar.schema.json, then with qar scan's own checks (docs/config-schema.md)."""
    if check is not None:
        from qar_sql import toml_schema

        data = toml_schema.check_file(check)
        if str(check).endswith("pyproject.toml"):
            click.echo(f"{check}: valid ([tool.qar]; its JSON Schema and qar's checks)")
        else:
            n = len(data.get("scan", []))
            click.echo(
                f"{check}: valid ({n} scan{'s' if n != 1 else ''}; qar.toml's JSON Schema and qar scan's checks)"
            )
        return
    from qar_sql.commands.config import run

    result = run(ctx.obj.get("config") if ctx.obj else None)
    emit(result, fmt)
