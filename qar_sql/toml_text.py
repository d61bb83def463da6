"""The one TOML parser of qar's own files (qar.toml, pyproject.toml's [tool.qar], treatments).

``tomllib`` parses nesting by recursion: a value a few thousand brackets deep raised
RecursionError, which reached the user as "unexpected RecursionError" (exit 3). A qar file nests
a few levels; anything deeper than :data:`MAX_DEPTH` is refused as a TOML error, so each
reader's "not valid TOML" message, with its exit code, covers it, and the validators that walk
the parsed value recursively never meet a deeper one.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from typing import Any

#: Deeper than any qar file needs ([[scan]] → table → list → value is four), far below Python's
#: recursion limit.
MAX_DEPTH = 32


def loads(text: str) -> dict[str, Any]:
    """``tomllib.loads``, raising ``tomllib.TOMLDecodeError`` for values nested too deeply."""
    try:
        data = tomllib.loads(text)
    except RecursionError:
        raise tomllib.TOMLDecodeError(
            f"values are nested too deeply (qar's files nest at most {MAX_DEPTH} levels)"
        ) from None
    if _depth(data) > MAX_DEPTH:
        raise tomllib.TOMLDecodeError(f"values are nested more than {MAX_DEPTH} levels deep")
    return data


def _depth(value: Any) -> int:
    """The nesting depth of tables and lists, walked without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        if depth > MAX_DEPTH:
            break
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return deepest


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
