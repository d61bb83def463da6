"""The output formats of every command, one registry: ``--format``'s choices and, per result
type, how it is written — ``render(result, fmt, **options)``.

JSON is every result's own data: :func:`to_json` of its ``to_dict()`` (given those of
``options`` it takes, such as ``histograms``). CSV and the other generic formats are written
from the table derived from that JSON (:meth:`qar_sql.results.Tabular.table_columns`), one entry in
:data:`FORMATS` that every command with ``--format`` offers (docs/commands.md). Text
is the one format written by hand: each ``output/render_<command>.py`` registers its result
types' text renderers with :func:`renders`, looked up along the result's class hierarchy (a
subclass renders as its base unless it registers its own). Markdown is written from the
``to_dict()`` too (:mod:`qar_sql.output.markdown`), its table in the result's ``table_order()``
(the riskiest QIs first); only the audit registers a Markdown renderer, to close it with how to
read T̂. html is
the command's report (docs/report.md), built by the command from its run (``html=``), or a
renderer registered for it.

A new result type is its ``to_dict()`` and ``table_at``, its text renderer, one line in
:data:`RENDERED_IN` and one case in :func:`_load`; none touches cli/.
"""

from __future__ import annotations

import csv
import inspect
import io
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import click

from qar_sql.errors import UsageError
from qar_sql.output.markdown import result_markdown
from qar_sql.output.registry import RENDERERS, Renderer, type_name
from qar_sql.user_text import csv_cell


def _cell(value: Any) -> str:
    """One CSV cell of a JSON value: text guarded (:func:`~qar_sql.user_text.csv_cell`), floats at
    full precision (their repr, as the JSON writes them; a number, even -0.5, as it is), null as
    the empty cell, booleans as the JSON writes them."""
    if isinstance(value, str):
        return csv_cell(value)
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):  # (float(): a numpy float's repr names its type)
        return repr(float(value)) if math.isfinite(value) else ""
    return str(value)


def table_csv(columns: dict[str, list]) -> str:
    """``columns`` (name → values, as ``table_columns()`` gives them) as CSV: a header row, then
    one row per table row (RFC 4180 quoting, ``\\n`` line ends); a text cell a spreadsheet would
    run as a formula starts with ``'`` (:func:`qar_sql.user_text.csv_cell`)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    names = list(columns)
    writer.writerow([csv_cell(name) for name in names])
    n = len(columns[names[0]]) if names else 0
    for i in range(n):
        writer.writerow([_cell(columns[name][i]) for name in names])
    return out.getvalue()


@dataclass(frozen=True)
class Format:
    """One ``--format`` value. ``from_table``: a generic format written from the result's table;
    None: the result's own renderer (the command's, or its HTML report)."""

    name: str
    from_table: Callable[[dict[str, list]], str] | None = None


#: Every output format, in the order ``--help`` lists them. ``html`` is offered only by the
#: commands that have a report (``format_option(html=True)``).
FORMATS: dict[str, Format] = {
    f.name: f
    for f in (
        Format("text"),
        Format("json"),
        Format("markdown"),
        Format("html"),
        Format("csv", table_csv),
        Format("sql"),  # the release as one SELECT: the commands that make one (anonymize)
    )
}

#: The formats a command offers besides the generic ones: JSON (every result's ``to_dict()``) and
#: the text and Markdown of its ``render_*``.
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


def to_json(obj: dict[str, Any], *, ascii_only: bool = False) -> str:
    """``obj`` as the JSON every command writes (indented, no NaN). ``ascii_only``: non-ASCII
    characters as \\u escapes, as ``qar eliminate`` and ``qar config`` have always written them."""
    return json.dumps(obj, indent=2, ensure_ascii=ascii_only, allow_nan=False)


#: A renderer: ``renderer(result, fmt, **options) -> str``, the options those its command passes
#: to :func:`render` (such as ``top``).

#: The module of ``qar_sql.output`` that registers each result type's renderers, imported when
#: such a result is first rendered: importing them all here would load numpy and the measures
#: they name with every ``qar --help`` and ``qar config`` (+0.44 s of imports on ``qar config
#: --help``, numpy 0.2 s of it, measured with ``python -X importtime`` on a loaded machine).
RENDERED_IN: dict[str, str] = {
    "qar_sql.results.AuditResult": "render_audit",
    "qar_sql.results.DemoResult": "render_demo",
    "qar_sql.results.CompareResult": "render_compare",
    "qar_sql.results.Settings": "render_config",
    "qar_sql.measures.discovery.DiscoverResult": "render_discover",
    "qar_sql.results.History": "render_history",
    "qar_sql.results.MigrateResult": "render_migrate",
    "qar_sql.ranking.records.Contributions": "render_records",
    "qar_sql.ranking.influence.Influence": "render_records",
    "qar_sql.measures.classic.SudaRecords": "render_records",
    "qar_sql.ranking.eliminate.Elimination": "render_records",
    "qar_sql.measures.classic.RiskResult": "render_risk",
    "qar_sql.results.ScanReport": "render_scan",
    "qar_sql.results.UniquenessResult": "render_uniqueness",
    "qar_sql.treat.whatif.WhatIfResult": "render_whatif",
    "qar_sql.anonymization.outcome.AnonymizeResult": "render_anonymize",
}


def renderer(result_type: type, fmt: str) -> Renderer | None:
    """``result_type``'s own renderer in ``fmt``, its nearest base's along the class hierarchy,
    or None."""
    for cls in result_type.__mro__:
        name = type_name(cls)
        if name in RENDERED_IN:
            _load(RENDERED_IN[name])
        if (name, fmt) in RENDERERS:
            return RENDERERS[name, fmt]
    return None


def _load(module: str) -> None:
    """Import the renderer module ``module`` (it registers its renderers), one import statement
    each so that the layering test sees every edge; only the module asked for is loaded."""
    match module:
        case "render_anonymize":
            from qar_sql.output import render_anonymize  # noqa: F401
        case "render_audit":
            from qar_sql.output import render_audit  # noqa: F401
        case "render_compare":
            from qar_sql.output import render_compare  # noqa: F401
        case "render_config":
            from qar_sql.output import render_config  # noqa: F401
        case "render_demo":
            from qar_sql.output import render_demo  # noqa: F401
        case "render_discover":
            from qar_sql.output import render_discover  # noqa: F401
        case "render_history":
            from qar_sql.output import render_history  # noqa: F401
        case "render_migrate":
            from qar_sql.output import render_migrate  # noqa: F401
        case "render_records":
            from qar_sql.output import render_records  # noqa: F401
        case "render_risk":
            from qar_sql.output import render_risk  # noqa: F401
        case "render_scan":
            from qar_sql.output import render_scan  # noqa: F401
        case "render_uniqueness":
            from qar_sql.output import render_uniqueness  # noqa: F401
        case "render_whatif":
            from qar_sql.output import render_whatif  # noqa: F401
        case _:
            raise KeyError(f"no renderer module {module!r}")


def taken(fn: Callable, options: dict[str, Any]) -> dict[str, Any]:
    """Those of ``options`` that ``fn`` takes: a command passes every option its formats need
    (``histograms`` for the JSON, ``top`` for the text) to whichever writes the chosen one."""
    takes = inspect.signature(fn).parameters
    return {k: v for k, v in options.items() if k in takes}


def as_dict(result: Any, **options: Any) -> dict[str, Any]:
    """``result.to_dict()``, given those of ``options`` it takes (such as ``histograms``)."""
    return result.to_dict(**taken(result.to_dict, options))


def render(result: Any, fmt: str, html: Callable[[], str] | None = None, **options: Any) -> str:
    """``result`` in ``fmt``: JSON from its ``to_dict()``, a generic format from its table, else
    the renderer its type registered (given ``options``), else Markdown from its ``to_dict()``,
    else html from ``html()`` (the command's report)."""
    if fmt == "json" and hasattr(result, "to_dict"):
        return to_json(as_dict(result, **options), ascii_only=getattr(result, "ascii_json", False)) + "\n"
    spec = FORMATS[fmt]
    if spec.from_table is not None:
        return spec.from_table(result.table_columns(as_dict(result, **options) if hasattr(result, "to_dict") else None))
    own = renderer(type(result), fmt)
    if own is not None:
        return own(result, fmt, **taken(own, options))
    if fmt == "markdown" and hasattr(result, "to_dict"):
        return result_markdown(result, as_dict(result, **options), top=options.get("top"))
    if fmt == "html" and html is not None:
        return html()
    raise UsageError(f"--format {fmt} is not offered by this command; use text, json, markdown or csv")
