"""``qar config``: the settings that apply here and where each came from, or (``--check FILE``)
whether a qar.toml is valid.

No SOURCE, no API function: ``parse`` hands ``run`` the config the ``qar`` group found.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from qar_sql.command import Command
from qar_sql.output.render import format_option
from qar_sql.parameters.store import ConfigParams

if TYPE_CHECKING:  # numpy-backed: loaded when the command runs, not when `qar --help` loads
    from qar_sql.results import Settings

NAME = "config"
Params = ConfigParams


def run(session: None, params: ConfigParams, progress: object = None) -> Settings:
    """Each setting's value and origin (a ``QAR_`` variable, the file, or the built-in default),
    from ``params.config`` (default: the one found in the working directory or a parent)."""
    from qar_sql import config_file, results

    return results.Settings(tuple(config_file.resolve(params.config or config_file.find())), params.config)


def _found(values: dict[str, Any], where: dict[str, Any], out: dict[str, Any]) -> dict[str, Any]:
    """The config file the ``qar`` group found or was given; its error, unless --check names
    the file to check instead."""
    obj = click.get_current_context().find_root().obj or {}
    if obj.get("config_error") is not None and values.get("check") is None:
        raise obj["config_error"]
    return {**values, "config": obj.get("config")}


def _check(where: dict[str, Any], params: ConfigParams, out: dict[str, Any]) -> str | None:
    """``--check FILE``: the sentence that FILE is valid (else every error, exit 2), instead of the settings."""
    if params.check is None:
        return None
    from qar_sql import config_file

    data = config_file.check_file(params.check)
    if str(params.check).endswith("pyproject.toml"):
        return f"{params.check}: valid ([tool.qar]; qar's checks)\n"
    n = len(data.get("scan", []))
    if not n:  # the commands read its [defaults]; qar scan has nothing to run
        return (
            f"{params.check}: valid defaults (qar scan's checks); it has no [[scan]], "
            "so qar scan would refuse it: add one to scan with it\n"
        )
    return f"{params.check}: valid ({n} scan{'s' if n != 1 else ''}; qar scan's checks)\n"


COMMAND: Command[ConfigParams, Settings] = Command(
    name=NAME,
    Params=ConfigParams,
    run=run,
    help="""Print the resolved defaults and where each came from: a QAR_ variable, the qar.toml
    ([defaults], [store] url) or pyproject.toml ([tool.qar]) found in the working directory or a
    parent, or the built-in default. Secrets are masked. With --check FILE, read a qar.toml as qar
    scan does, or a pyproject.toml's [tool.qar] as the commands do, and list every error
    (docs/config-schema.md).""",
    source=(),
    arguments=(),
    outputs={"fmt": format_option(own=("text", "json"), help="Output format: text (one setting a line), json or csv.")},
    order=("fmt", "check"),
    parse=_found,
    preview=_check,
)
