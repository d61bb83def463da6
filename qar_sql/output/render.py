"""The output formats of every command, one registry: ``--format``'s choices and the renderer of each.

A format is either the result's own (text, JSON, Markdown: each command's ``render_*``; html:
the command's report, docs/report.md) or generic, written from the result's table
(:meth:`qar_sql.results.Tabular.table_columns`, which every result has). A new generic format is
one entry in :data:`FORMATS`; every command with ``--format`` offers it (docs/commands.md).
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

import click

from qar_sql.errors import UsageError

if TYPE_CHECKING:  # annotations only: qar --help loads neither the results nor numpy
    from qar_sql.results import Tabular


def _cell(value: Any) -> str:
    """One CSV cell: floats at full precision (their repr, as the JSON writes them), NULL and
    NaN as the empty cell (the JSON's null), booleans and times as the JSON writes them, a list
    of names joined as the text shows them."""
    import numpy as np

    if value is None:
        return ""
    if isinstance(value, bool | np.bool_):
        return "true" if value else "false"  # as the JSON writes them
    if isinstance(value, float | np.floating):
        x = float(value)
        return repr(x) if math.isfinite(x) else ""
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, tuple | list):
        return ", ".join(_cell(v) for v in value)
    if isinstance(value, datetime):  # as the JSON writes a run's time (qar history)
        return value.isoformat(sep=" ", timespec="seconds")
    return str(value)


def table_csv(columns: dict[str, list]) -> str:
    """``columns`` (name → values, as ``table_columns()`` gives them) as CSV: a header row, then
    one row per table row (RFC 4180 quoting, ``\\n`` line ends)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    names = list(columns)
    writer.writerow(names)
    n = len(columns[names[0]]) if names else 0
    for i in range(n):
        writer.writerow([_cell(columns[name][i]) for name in names])
    return out.getvalue()


@dataclass(frozen=True)
class Format:
    """One ``--format`` value. ``from_table``: a generic format written from the result's table;
    None: the result's own renderer (the command's, or its HTML report)."""

    name: str
    from_table: Callable[[Tabular], str] | None = None


#: Every output format, in the order ``--help`` lists them. ``html`` is offered only by the
#: commands that have a report (``format_option(html=True)``).
FORMATS: dict[str, Format] = {
    f.name: f
    for f in (
        Format("text"),
        Format("json"),
        Format("markdown"),
        Format("html"),
        Format("csv", lambda result: table_csv(result.table_columns())),
    )
}

#: The formats each result renders itself (every command's ``render_*``).
OWN = ("text", "json", "markdown")


def choices(*, html: bool = False, own: Sequence[str] = OWN, generic: bool = True) -> tuple[str, ...]:
    """The ``--format`` choices of a command: the own formats it has (``own``), html when it has
    a report, and every generic format unless it has no result table (``generic=False``)."""
    return tuple(
        name
        for name, f in FORMATS.items()
        if (f.from_table is not None and generic) or name in own or (html and name == "html")
    )


def format_option(
    *, html: bool = False, own: Sequence[str] = OWN, generic: bool = True, help: str = "Output format."
) -> Callable:
    """The ``--format``/``-f`` option of a command, its choices from :func:`choices`."""
    kinds = choices(html=html, own=own, generic=generic)
    return click.option("--format", "-f", "fmt", type=click.Choice(kinds), default="text", help=help)


def render(
    result: Tabular,
    fmt: str,
    own: Callable[[str], str],
    html: Callable[[], str] | None = None,
) -> str:
    """``result`` in ``fmt``: a generic format from its table, html from ``html()`` (the
    command's report), else the command's own renderer ``own(fmt)``."""
    spec = FORMATS[fmt]
    if spec.from_table is not None:
        return spec.from_table(result)
    if fmt == "html":
        if html is None:
            raise UsageError("--format html is not offered by this command; use text, json, markdown or csv")
        return html()
    return own(fmt)


def whole_table(fmt: str) -> bool:
    """Whether ``fmt`` writes the result's whole table (a command that fetches the keys of its
    top records only fetches every record's for it, as for ``--all``)."""
    return FORMATS[fmt].from_table is not None
