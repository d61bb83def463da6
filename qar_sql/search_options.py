"""The options of ``qar anonymize``'s search (hierarchies, models, metric), which ``qar report
--anonymize`` takes too, and the hierarchy files they name (inputs of the output guard)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import click

from qar_sql import params
from qar_sql.parameters.treat import L_KINDS, METRICS, T_KINDS, AnonymizeParams

F = TypeVar("F", bound=Callable)


def _pairs(ctx, param, value):
    """``--hierarchy age=age.csv`` (repeatable) → (("age", "age.csv"), …); a TOML file alone
    (``--hierarchy levels.toml``) gives every column it defines: ("", path)."""
    out = []
    for item in value or ():
        column, sep, path = item.partition("=")
        if not sep:
            if item.lower().endswith(".toml"):
                out.append(("", item))
                continue
            raise click.BadParameter(
                f"{item!r} names no column; write --hierarchy COLUMN=FILE (e.g. age=age.csv), or give a TOML file "
                "of [hierarchies.<column>] tables",
                ctx=ctx,
                param=param,
            )
        if not column.strip() or not path.strip():
            raise click.BadParameter(f"{item!r} must be COLUMN=FILE, e.g. age=age_hierarchy.csv", ctx=ctx, param=param)
        out.append((column.strip(), path.strip()))
    return tuple(out)


def hierarchy_files(directory: str | None) -> list[tuple[str, Path]]:
    """The files of ``--hierarchies DIR`` the search reads (ARX's ``<name>_hierarchy_<column>.csv``),
    as (what, path) inputs of the output guard."""
    if not directory or not Path(directory).is_dir():
        return []
    return [(f"the hierarchy file {f.name}", f) for f in sorted(Path(directory).glob("*_hierarchy_*.csv"))]


def search_options(*, own: bool = True) -> Callable[[F], F]:
    """The options of the search: hierarchies, models, metric. ``own=False`` (``qar report
    --anonymize``) leaves out --k and --sensitive, which the report has already (its k and its
    classic measures' sensitive column serve the search too)."""
    stack: list[Callable] = [
        click.option(
            "--hierarchy",
            "hierarchy",
            multiple=True,
            callback=_pairs,
            help="COLUMN=FILE: the column's ARX hierarchy CSV (';'-separated, one row per value, level i in field i), "
            "or a TOML file of interval levels ([hierarchies.COLUMN] widths = [5, 10, 20]); repeatable.",
        ),
        click.option(
            "--hierarchies",
            type=click.Path(file_okay=False),
            help="Directory of ARX's <name>_hierarchy_<column>.csv files, one per QI column.",
        ),
        params.names_option("--qid", help="The QI columns, in order (default: every column given a hierarchy)."),
    ]
    if own:
        stack.append(
            params.option(
                "--k", of=AnonymizeParams, type=int, help="k-anonymity: every class of the release has k records."
            )
        )
    stack += [
        params.option("--l", "l", of=AnonymizeParams, type=int, help="l-diversity of --sensitive in every class."),
        params.option("--l-kind", of=AnonymizeParams, type=click.Choice(L_KINDS), help="Which l-diversity."),
        params.option("--c", "c", of=AnonymizeParams, type=float, help="c of recursive (c, l)-diversity."),
        params.option("--t", "t", of=AnonymizeParams, type=float, help="t-closeness of --sensitive in every class."),
        params.option("--t-kind", of=AnonymizeParams, type=click.Choice(T_KINDS), help="Distance of t-closeness."),
    ]
    if own:
        stack.append(
            params.option(
                "--sensitive", of=AnonymizeParams, help="The sensitive column of --l and --t (never a QI column)."
            )
        )
    stack += [
        params.option(
            "--risk-below",
            of=AnonymizeParams,
            type=float,
            help="The QaR target: T̂(p, α) of the release at most this, over the audit columns (--columns/--exclude, "
            "generalized where they have a hierarchy).",
        ),
        params.option(
            "--no-singletons", of=AnonymizeParams, is_flag=True, help="Pastore's target: no record unique on the QID."
        ),
        params.option(
            "--suppression-limit",
            of=AnonymizeParams,
            type=float,
            help="Share of records that may be suppressed (removed) to meet the models, e.g. 0.04.",
        ),
        params.option("--metric", of=AnonymizeParams, type=click.Choice(METRICS), help="The loss minimised (ARX's)."),
        params.option(
            "--gs-factor",
            of=AnonymizeParams,
            type=float,
            help="ARX's generalization/suppression factor: 0.5 weighs both the same, 0 only suppression, 1 only "
            "generalization.",
        ),
        params.option(
            "--monotonic/--no-monotonic",
            "monotonic",
            of=AnonymizeParams,
            help="The monotonic variant of the entropy metric (ARX's: suppressed records add no loss).",
        ),
        params.option(
            "--local",
            of=AnonymizeParams,
            is_flag=True,
            help="Also Pastore's local recoding: the chosen levels applied only to the records unique on the QID, "
            "compared with the global release.",
        ),
        params.option(
            "--drop-null",
            of=AnonymizeParams,
            is_flag=True,
            help="Leave out the rows with NULL in a QI column first (how Pastore et al. count).",
        ),
    ]

    def decorate(f: F) -> F:
        for option in reversed(stack):
            f = option(f)
        return f

    return decorate
