"""The dbt options of ``qar scan``: ``--dbt-project`` with ``--profile``, ``--target`` and
``--profiles-dir`` (the warehouse from dbt's profile), and ``--select`` (dbt's node selection).
Kept apart from cli/compliance.py so the scan command only forwards them (compliance/dbt_project.py
does the work)."""

from __future__ import annotations

import functools
from typing import Any

import click

from qar_sql.errors import UsageError

dbt_project = click.option(
    "--dbt-project",
    type=click.Path(file_okay=False),
    help="Audit the tagged models of this dbt project (its target/manifest.json), reading the warehouse "
    "from its dbt profile (--url overrides it).",
)
profile = click.option(
    "--profile", help="With --dbt-project: the dbt profile (default: $DBT_PROFILE, then dbt_project.yml's)."
)
target = click.option(
    "--target", help="With --dbt-project: the profile's target (default: $DBT_TARGET, then the profile's)."
)
profiles_dir = click.option(
    "--profiles-dir",
    type=click.Path(file_okay=False),
    help="With --dbt-project: the folder of profiles.yml (default: $DBT_PROFILES_DIR, the current folder, "
    "the project, ~/.dbt).",
)
select = click.option(
    "--select",
    multiple=True,
    help="With --dbt-project or --dbt-manifest: only these models, as dbt selects them (names, tag:NAME, "
    "path:FOLDER; space-separated or repeated: any; comma: all).",
)

_OPTIONS = (dbt_project, profile, target, profiles_dir, select)
_KEYS = ("dbt_project", "profile", "target", "profiles_dir", "select")  # their parameter names


def dbt_options(f):
    """The five options, kept out of the command's arguments (``ctx.meta``, read back with
    :func:`dbt_given`), so the scan command's signature does not change."""

    @functools.wraps(f)
    def command(**kwargs):
        click.get_current_context().meta["qar.dbt"] = {key: kwargs.pop(key) for key in _KEYS}
        return f(**kwargs)

    for opt in reversed(_OPTIONS):
        command = opt(command)
    return command


def dbt_given() -> dict[str, Any]:
    """The values of the dbt options of the running command."""
    return click.get_current_context().meta["qar.dbt"]


def check(dbt: dict[str, Any], dbt_manifest: str | None) -> None:
    """Refuse the dbt options that would be ignored (a CI gate must not pass on a misplaced flag)."""
    if dbt["dbt_project"] and dbt_manifest:
        raise UsageError(
            "--dbt-project reads the project's own manifest; give --dbt-project or --dbt-manifest, not both"
        )
    if not dbt["dbt_project"]:
        for key in ("profile", "target", "profiles_dir"):
            if dbt[key]:
                raise UsageError(
                    f"--{key.replace('_', '-')} chooses the dbt profile of --dbt-project, and there is no --dbt-project"
                )
        if dbt["select"] and not dbt_manifest:
            raise UsageError("--select picks dbt models, and there is neither --dbt-project nor --dbt-manifest")


def project_scans(dbt: dict[str, Any], url: str | None) -> list:
    """The scans of ``--dbt-project`` (``url``: the warehouse when given with --url)."""
    from qar_sql.compliance.dbt_project import project_scans as scans

    specs, _ = scans(
        dbt["dbt_project"],
        url=url,
        profile=dbt["profile"],
        target=dbt["target"],
        profiles=dbt["profiles_dir"],
        select=dbt["select"],
    )
    if not specs:
        raise UsageError(
            f"no model of the dbt project {dbt['dbt_project']!r} has a column with meta {{qar: quasi_identifier}}; "
            "tag the quasi-identifier columns in the model's YAML"
        )
    return specs


def manifest_only(dbt: dict[str, Any], manifest: str) -> set[str] | None:
    """The unique ids ``--select`` picks in ``manifest`` (None: every model)."""
    if not dbt["select"]:
        return None
    from qar_sql.compliance.dbt import load_manifest
    from qar_sql.compliance.dbt_project import select_nodes

    return select_nodes(load_manifest(manifest), dbt["select"])
