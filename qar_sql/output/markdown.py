"""Markdown written from a result's own data (its ``to_dict()``), the one Markdown every command
writes: the scalars as a ``field | value`` table, then each list of records as a table (their
keys the header, a list inside one cell, a nested mapping as ``outer.inner`` columns; a record
too wide for one row, or holding lists of records, as a section of its own), each list of values
as a bulleted list, each mapping as a two-column table (sibling mappings with the same keys as
one table), and each nested mapping as a ``###`` section of its own. A list of records longer
than ``top`` shows its first ``top`` and says how many more the JSON holds.
Cells show whole numbers as written (a key, a year) and other numbers as the reports do
(:func:`~qar_sql.output.readable_numbers.show`), and text as written: escaped for Markdown and
HTML, on one line, with bidirectional controls shown as their code points.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from qar_sql.output.readable_numbers import show
from qar_sql.user_text import markdown_inline

#: The most columns a table of records gets; wider records get a section each.
WIDEST = 14


#: What a run was, not what it found (the JSON keeps them): a wall-clock time, the versions, the
#: process that ran it.
RUN_FIELDS = frozenset({"qar_sql_version", "engine_version", "seconds", "age_seconds", "pid", "host", "heartbeat_at"})


def cell(value: Any) -> str:
    """One value as Markdown table-cell text (a list of values joined by commas, a list of lists
    as its lists in parentheses)."""
    if isinstance(value, list | tuple | Mapping):
        parts = (f"({cell(v)})" if isinstance(v, list | tuple) else cell(v) for v in value)
        return ", ".join(parts) if value else "none"
    # A whole number as written (it may be a key or a year); any other number as the reports show it.
    text = show(value) if value is None or isinstance(value, bool | float) else str(value)
    return markdown_inline(text)


def _cellular(value: Any) -> bool:
    """A value one cell shows: a scalar, a list of scalars or a list of those."""
    if isinstance(value, list | tuple):
        return all(not isinstance(x, Mapping) and (not isinstance(x, list | tuple) or _cellular(x)) for x in value)
    return not isinstance(value, Mapping) or not value


def _prose(value: Any) -> bool:
    """A list of sentences (warnings, notes): a bulleted list of its own."""
    return isinstance(value, list | tuple) and any(isinstance(x, str) and " " in x for x in value)


def _flatten(record: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """``record`` with each nested mapping's values as ``outer.inner`` keys (no :data:`RUN_FIELDS`)."""
    out: dict[str, Any] = {}
    for key, value in record.items():
        if key in RUN_FIELDS:
            continue
        if isinstance(value, Mapping) and value:
            out |= _flatten(value, f"{prefix}{key}.")
        else:
            out[f"{prefix}{key}"] = value
    return out


def _table(head: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[str]:
    return [
        "| " + " | ".join(cell(h) for h in head) + " |",
        "|" + "---|" * len(head),
        *("| " + " | ".join(cell(v) for v in row) + " |" for row in rows),
    ]


def _block(heading: str, lines: Sequence[str]) -> str:
    return "\n".join([heading, "", *lines])


def _records(heading: str, records: Sequence[Any], level: int, top: int | None) -> list[str]:
    """A list of records: one table, or a section each; the first ``top`` of them."""
    shown = records[:top] if top else records
    flat = [_flatten(r) if isinstance(r, Mapping) else {"value": r} for r in shown]
    head = list(dict.fromkeys(k for r in flat for k in r))
    if len(head) <= WIDEST and all(_cellular(v) for r in flat for v in r.values()):
        blocks = [_block(heading, _table(head, [[r.get(k) for k in head] for r in flat]))]
    else:
        blocks = [b for i, r in enumerate(flat, 1) for b in [f"{heading} ({i})", *sections(r, level + 1, top)]]
    if len(shown) < len(records):
        blocks.append(f"{len(records) - len(shown):,} more in the JSON output (--format json).")
    return blocks


def _kind(item: tuple[str, Any]) -> tuple[str, ...] | None:
    """The keys of a mapping of values (siblings with the same keys share one table), else None."""
    value = item[1]
    if isinstance(value, Mapping) and value and all(_cellular(v) for v in value.values()):
        return tuple(value)
    return None


def sections(data: Mapping[str, Any], level: int = 3, top: int | None = None) -> list[str]:
    """``data`` as Markdown blocks (see the module's docstring), each block a string."""
    data = {k: v for k, v in data.items() if k not in RUN_FIELDS}
    scalars = [(k, v) for k, v in data.items() if _cellular(v) and not _prose(v)]
    blocks = ["\n".join(_table(("field", "value"), scalars))] if scalars else []
    nested = [(k, v) for k, v in data.items() if not _cellular(v) or _prose(v)]
    for keys, group in itertools.groupby(nested, _kind):
        items = list(group)
        if keys is not None and len(items) > 1:
            heading = f"{'#' * level} {', '.join(cell(k) for k, _ in items)}"
            blocks.append(_block(heading, _table(("field", *keys), [(k, *v.values()) for k, v in items])))
            continue
        for key, value in items:
            heading = f"{'#' * level} {cell(key)}"
            if keys is not None:
                blocks.append(_block(heading, _table(("field", "value"), list(value.items()))))
            elif isinstance(value, Mapping):
                blocks += [heading, *sections(value, level + 1, top)]
            elif _prose(value):
                blocks.append(_block(heading, [f"- {cell(v)}" for v in value]))
            else:
                blocks += _records(heading, value, level, top)
    return blocks


def to_markdown(
    data: Mapping[str, Any], title: str | None = None, notes: Sequence[str] = (), *, top: int | None = None
) -> str:
    """``data`` (a result's ``to_dict()``) as a Markdown document under a ``##`` ``title``,
    its lists of records cut at ``top``, closed by ``notes``: what the numbers are, in the words
    the result's text uses."""
    blocks = [f"## {cell(title)}", *sections(data, top=top)] if title else sections(data, top=top)
    if notes:
        blocks.append(_block("**Notes**", [f"- {cell(n)}" for n in notes]))
    return "\n\n".join(blocks) + "\n"


def result_markdown(
    result: Any, data: Mapping[str, Any], notes: Sequence[str] | None = None, *, top: int | None = None
) -> str:
    """``result``'s Markdown: ``data`` (its ``to_dict()``) under its summary line, its table's
    rows in the result's ``table_order()`` (the first ``top``, 10 by default), closed by ``notes``
    (by default its own ``notes``, unless ``data`` holds them)."""
    if notes is None:
        notes = () if "notes" in data else getattr(result, "notes", ())
    at: Sequence[str] = getattr(result, "table_at", ())
    order = getattr(result, "table_order", lambda: None)()
    if order is not None and len(at) == 1:  # its table as its text orders it: the riskiest (10) first
        data, top = {**data, at[0]: [data[at[0]][i] for i in order]}, top or 10
    return to_markdown(data, getattr(result, "summary_line", lambda: None)(), notes, top=top)
