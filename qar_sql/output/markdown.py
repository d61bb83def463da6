"""Markdown written from a result's own data (its ``to_dict()``), for every result whose Markdown
is not a designed document: the scalars as a ``field | value`` table, then each list of records
as a table (their keys the header, a list inside one cell), each list of values as a bulleted
list, each mapping as a two-column table, and each nested mapping as a ``###`` section of its own.
Cells show whole numbers as written (a key, a year) and other numbers as the reports do
(:func:`~qar_sql.output.readable_numbers.show`), and text as written: escaped for Markdown and
HTML, on one line, with bidirectional controls shown as their code points.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from qar_sql.output.bidi import neutral_bidi
from qar_sql.output.readable_numbers import show
from qar_sql.output.report_md import escape_md


def cell(value: Any) -> str:
    """One value as Markdown table-cell text (a list of values joined by commas)."""
    if isinstance(value, list | tuple):
        return ", ".join(cell(v) for v in value) if value else "none"
    # A whole number as written (it may be a key or a year); any other number as the reports show it.
    text = show(value) if value is None or isinstance(value, bool | float) else str(value)
    return escape_md(neutral_bidi(" ".join(text.split())))


def _scalar(value: Any) -> bool:
    return not isinstance(value, Mapping | list | tuple) or not value


def _flat(value: Any) -> bool:
    """A record a table row can show: its values scalars or lists of scalars (one cell each)."""
    return isinstance(value, Mapping) and all(
        _scalar(v) or (isinstance(v, list | tuple) and all(_scalar(x) for x in v)) for v in value.values()
    )


def _table(head: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[str]:
    return [
        "| " + " | ".join(cell(h) for h in head) + " |",
        "|" + "---|" * len(head),
        *("| " + " | ".join(cell(v) for v in row) + " |" for row in rows),
    ]


def sections(data: Mapping[str, Any], level: int = 3) -> list[str]:
    """``data`` as Markdown blocks (see the module's docstring), each block a string."""
    scalars = [(k, v) for k, v in data.items() if _scalar(v)]
    blocks = ["\n".join(_table(("field", "value"), scalars))] if scalars else []
    for key, value in data.items():
        if _scalar(value):
            continue
        heading = f"{'#' * level} {cell(key)}"
        if isinstance(value, Mapping) and all(_scalar(v) for v in value.values()):
            blocks.append("\n".join([heading, "", *_table(("field", "value"), list(value.items()))]))
        elif isinstance(value, Mapping):
            blocks += [heading, *sections(value, level + 1)]
        elif all(_flat(v) for v in value):
            head = list(dict.fromkeys(k for v in value for k in v))
            blocks.append("\n".join([heading, "", *_table(head, [[v.get(k) for k in head] for v in value])]))
        elif all(_scalar(v) for v in value):
            blocks.append("\n".join([heading, "", *(f"- {cell(v)}" for v in value)]))
        else:
            for i, v in enumerate(value, 1):
                blocks += [f"{heading} ({i})", *sections(v if isinstance(v, Mapping) else {"value": v}, level + 1)]
    return blocks


def to_markdown(data: Mapping[str, Any], title: str | None = None, notes: Sequence[str] = ()) -> str:
    """``data`` (a result's ``to_dict()``) as a Markdown document under a ``##`` ``title``,
    closed by ``notes``: what the numbers are, in the words the result's text uses."""
    blocks = [f"## {cell(title)}", *sections(data)] if title else sections(data)
    if notes:
        blocks.append("\n".join(["**Notes**", "", *(f"- {cell(n)}" for n in notes)]))
    return "\n\n".join(blocks) + "\n"
