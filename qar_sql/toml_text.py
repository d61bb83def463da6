"""The one TOML parser of qar's own files (qar.toml, pyproject.toml's [tool.qar], treatments).

``tomllib`` parses nesting by recursion: a value a few thousand brackets deep raised
RecursionError, which reached the user as "unexpected RecursionError" (exit 3). A qar file nests
a few levels; anything deeper than :data:`MAX_DEPTH` is refused as a TOML error (so are numbers
no qar file holds), so :func:`qar_sql.user_files.parse_toml`'s "not valid TOML" sentence covers
it, and the validators that walk the parsed value recursively never meet a deeper one.
"""

from __future__ import annotations

import json
import math
import tomllib
from collections.abc import Mapping
from typing import Any

from qar_sql.errors import shown

#: Deeper than any qar file needs ([[scan]] → table → list → value is four), far below Python's
#: recursion limit.
MAX_DEPTH = 32


def loads(text: str) -> dict[str, Any]:
    """``tomllib.loads``, raising ``tomllib.TOMLDecodeError`` for values nested too deeply and for
    a number no qar file holds: an integer beyond TOML's 64 bits (tomllib reads any, and
    ``float()`` of one with 400 digits raised OverflowError) or a float that is not finite
    (``1e999`` is read as infinity)."""
    try:
        data = tomllib.loads(text)
    except RecursionError:
        raise tomllib.TOMLDecodeError(
            f"values are nested too deeply (qar's files nest at most {MAX_DEPTH} levels)"
        ) from None
    check(data)
    return data


def check(value: Any) -> None:
    """Walk the tables and lists without recursion, refusing what :func:`loads` refuses, and a
    None (TOML has no null: a value given as a dict, as the API takes treatments)."""
    stack: list[tuple[Any, int, str]] = [(value, 1, "")]
    while stack:
        node, depth, key = stack.pop()
        if isinstance(node, bool):
            continue
        if node is None:
            raise tomllib.TOMLDecodeError(f"{key} is None, which a TOML file cannot hold")
        if isinstance(node, int) and not -(2**63) <= node < 2**63:
            raise tomllib.TOMLDecodeError(f"{key} = {shown(node)} is beyond TOML's 64-bit integers")
        if isinstance(node, float) and not math.isfinite(node):
            raise tomllib.TOMLDecodeError(f"{key} = {node} is not a finite number")
        if isinstance(node, dict | list) and depth > MAX_DEPTH:
            raise tomllib.TOMLDecodeError(f"values are nested more than {MAX_DEPTH} levels deep")
        if isinstance(node, dict):
            stack.extend((v, depth + 1, f"{key}.{k}" if key else str(k)) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((v, depth + 1, f"{key}[{i}]") for i, v in enumerate(node))


def toml_value(v: Any) -> str:
    """``v`` written as a TOML value: a string, number, boolean, list or inline table of them
    (what a treatments file holds); a ValueError for anything else."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list | tuple):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, Mapping):
        return (
            "{ " + ", ".join(f"{json.dumps(str(k), ensure_ascii=False)} = {toml_value(x)}" for k, x in v.items()) + " }"
        )
    raise ValueError(f"{v!r} cannot be written as TOML")
