"""Which value of a setting applies, and why: one rule for the command line and every scan.

Highest first:

1. ``command line`` — an option typed on the command line (or given at this level to
   :func:`qar_sql.compliance.scans.apply_settings`);
2. ``scan`` — the scan's own setting: its ``[[scan]]`` table, a dbt model's ``meta.qar``;
3. ``defaults`` — the ``[defaults]`` of the scan's file;
4. ``config`` — a ``QAR_<OPTION>`` variable, or the ``qar.toml`` / ``[tool.qar]`` found from the
   working folder (the variable above the file);
5. ``built-in`` — qar's default.

So a scan's verdict does not depend on the folder qar runs in nor on a variable left in the
environment: only what is typed on the command line replaces a scan's own threshold, and the
summary says so. For a command with no scan (``qar audit``) levels 2 and 3 are empty, and the
rule is click's: command line, variable, config file, default.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # click only for the command line's helper: the scans import this module too
    import click

LEVELS = ("command line", "scan", "defaults", "config", "built-in")


@dataclass(frozen=True)
class Chosen:
    """A setting's value at one ``level`` of :data:`LEVELS`; ``origin`` says where, as shown
    ("--fail-above", "[[scan]]", "$QAR_FAIL_ABOVE", "/x/qar.toml [defaults]", ...)."""

    value: Any
    level: str
    origin: str

    def __post_init__(self) -> None:
        if self.level not in LEVELS:
            raise ValueError(f"unknown level {self.level!r}; one of {', '.join(LEVELS)}")

    @property
    def described(self) -> str:
        """Where the value came from, as the report names it: ``--fail-above (command line)``."""
        return f"{self.origin} ({self.level})"


def choose(*candidates: Chosen | None) -> Chosen:
    """The candidate of the highest level (``None``: not given at that level); of two at the same
    level, the first. No candidate: the built-in ``None``."""
    given = [c for c in candidates if c is not None]
    if not given:
        return Chosen(None, "built-in", "built-in default")
    return min(given, key=lambda c: LEVELS.index(c.level))


def from_click(ctx: click.Context, name: str, value: Any) -> Chosen | None:
    """Where click found parameter ``name`` (its ``value``), as a :class:`Chosen`: typed →
    ``command line``; its variable or the discovered config (``default_map``) → ``config``;
    click's own default → None (the built-in is the caller's)."""
    import click

    source = ctx.get_parameter_source(name)
    param = next((p for p in ctx.command.params if p.name == name), None)
    flag = next((o for o in getattr(param, "opts", ()) if o.startswith("--")), f"--{name}")
    if value is None or source in (None, click.core.ParameterSource.DEFAULT):
        return None
    if source is click.core.ParameterSource.COMMANDLINE:
        return Chosen(value, "command line", flag)
    if source is click.core.ParameterSource.ENVIRONMENT:
        envvar = param.envvar if param is not None and isinstance(param.envvar, str) else "a QAR_ variable"
        return Chosen(value, "config", f"${envvar}")
    config = (ctx.find_root().obj or {}).get("config")
    return Chosen(value, "config", config.origin if config is not None and config.path else "the config file")
