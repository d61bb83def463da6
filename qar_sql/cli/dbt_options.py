"""The dbt options of ``qar scan``: ``--dbt-project`` with ``--profile``, ``--target`` and
``--profiles-dir`` (the warehouse from dbt's profile), and ``--select`` (dbt's node selection).
Kept apart from cli/compliance.py so the scan command only forwards them (to
:class:`~qar_sql.parameters.store.ScanParams`, which holds the rules between them; commands/scan.py and
compliance/dbt_project.py do the work)."""

from __future__ import annotations

import functools
from typing import Any

import click

#: The five options, flag → help; each sets the parameter of its name (--dbt-project → dbt_project).
_HELP = {
    "--dbt-project": "Audit the tagged models of this dbt project (its target/manifest.json), reading the "
    "warehouse from its dbt profile (--url overrides it).",
    "--profile": "With --dbt-project: the dbt profile (default: $DBT_PROFILE, then dbt_project.yml's).",
    "--target": "With --dbt-project: the profile's target (default: $DBT_TARGET, then the profile's).",
    "--profiles-dir": "With --dbt-project: the folder of profiles.yml (default, as dbt: $DBT_PROFILES_DIR, the "
    "current folder, ~/.dbt).",
    "--select": "With --dbt-project or --dbt-manifest: only these models, as dbt selects them (names, tag:NAME, "
    "path:FOLDER; space-separated or repeated: any; comma: all).",
}
_FOLDERS = ("--dbt-project", "--profiles-dir")  # the options that name a folder
_REPEATED = ("--select",)
_KEYS = tuple(flag[2:].replace("-", "_") for flag in _HELP)


def dbt_options(f):
    """The five options, kept out of the command's arguments (``ctx.meta``, read back with
    :func:`dbt_given`), so the scan command's signature does not change."""

    @functools.wraps(f)
    def command(**kwargs):
        click.get_current_context().meta["qar.dbt"] = {key: kwargs.pop(key) for key in _KEYS}
        return f(**kwargs)

    for flag, help in reversed(_HELP.items()):
        kind = click.Path(file_okay=False) if flag in _FOLDERS else None
        command = click.option(flag, type=kind, multiple=flag in _REPEATED, help=help)(command)
    return command


def dbt_given() -> dict[str, Any]:
    """The values of the dbt options of the running command."""
    return click.get_current_context().meta["qar.dbt"]
