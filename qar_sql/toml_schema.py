"""The JSON Schema of ``qar.toml``, built from the parameter definitions, and a
small validator for it (``qar config --check FILE``).

One source: the keys come from ``compliance/scans.py`` (``TOP_KEYS``, ``SCAN_KEYS``,
``DEFAULT_KEYS``) and ``config.KEYS`` (``null_tokens``, a command-line default), the defaults from
``scans.DEFAULTS``, the estimators from ``stats/evt.PWM_METHODS``; this module adds, per setting,
its JSON type, range and a sentence. ``scripts/schema.py`` writes ``qar_sql/schemas/qar.schema.json``
and ``tests/test_toml_schema.py`` checks that the file is current and that every key has its
fragment here, so a new setting cannot be left out. Editors (Taplo, VS Code's Even Better TOML)
read the file; docs/config-schema.md says how.

The validator covers the part of JSON Schema the file uses (type, enum, minimum and maximum,
exclusive bounds, minLength, minItems, items, properties, additionalProperties, required,
anyOf): the jsonschema package would be a dependency for forty lines. The checks the schema
cannot say (``alpha < pi_u``, ``warn_above ≤ fail_above``, a source a scan names being defined)
stay with the loader, ``qar scan``.
"""

from __future__ import annotations

import copy
import difflib
import json
from pathlib import Path
from typing import Any, NamedTuple

from qar_sql import config_file as config
from qar_sql import user_files
from qar_sql.compliance import scans
from qar_sql.errors import UsageError, shown
from qar_sql.parameters.tail import THETA_MEASURES
from qar_sql.stats.evt import PWM_METHODS

PATH = Path(__file__).resolve().parent / "schemas" / "qar.schema.json"
ID = "https://github.com/qar-sql/qar-sql/raw/main/qar_sql/schemas/qar.schema.json"
TOOL_PATH = PATH.with_name("tool-qar.schema.json")
TOOL_ID = "https://github.com/qar-sql/qar-sql/raw/main/qar_sql/schemas/tool-qar.schema.json"

_NAMES = {
    "anyOf": [
        {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1},
        {"type": "string", "minLength": 1, "description": "comma-separated"},
    ]
}
_RISK = {"type": "number", "minimum": 0, "maximum": 1}
_PROBABILITY = {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1}

#: Each setting of [defaults] and [[scan]]: its type, range and a sentence (the default is added
#: from scans.DEFAULTS).
SETTINGS: dict[str, dict[str, Any]] = {
    "columns": {**_NAMES, "description": "The quasi-identifier columns (default: all but exclude)."},
    "exclude": {**_NAMES, "description": "Columns left out of the quasi-identifiers (identifiers, keys)."},
    "p": {"type": "integer", "minimum": 1, "description": "Quasi-identifier size: the number of columns per QI."},
    "alpha": {**_PROBABILITY, "description": "Tail probability of the risk T̂(p, α); below pi_u."},
    "pi_u": {**_PROBABILITY, "description": "Share of QIs above the threshold u the tail is fitted to."},
    "pwm": {"type": "string", "enum": list(PWM_METHODS), "description": "Probability-weighted-moment estimator."},
    "theta": {
        "type": "string",
        "enum": list(THETA_MEASURES),
        "description": "The θ the tail is fitted to: distinct (H/L, the paper's) or unique (S/L, records "
        "unique on the QI); fail_above and warn_above judge T̂ of this one.",
    },
    "k": {"type": "integer", "minimum": 2, "description": "The k of the k-anonymity summary."},
    "fail_above": {**_RISK, "description": "qar scan fails (exit 1) when T̂ is above it."},
    "warn_above": {**_RISK, "description": "The summary marks WARN when T̂ is above it (exit 0)."},
    "min_exceedances": {
        "type": "integer",
        "minimum": 1,
        "description": "A T̂ fitted to fewer exceedances of u is an error (exit 2).",
    },
}
#: [defaults] keys the commands read that a scan does not (config.KEYS beyond the scan's).
COMMAND_SETTINGS: dict[str, dict[str, Any]] = {
    "null_tokens": {
        "anyOf": [
            {"type": "array", "items": {"type": "string", "minLength": 1}},
            {"type": "string", "minLength": 1},
        ],
        "description": "CSV cells read as NULL by the commands (--null-token); not a qar scan setting.",
    },
}
_URL = {"type": "string", "minLength": 1, "description": 'A database URL or file; secrets as "${ENV_VAR}".'}
_SCAN_OWN = {
    "name": {"type": "string", "minLength": 1, "description": "The scan's name (default: the table name)."},
    "source": {"type": "string", "minLength": 1, "description": "A [sources.NAME] (may be left out with one source)."},
    "table": {"type": "string", "minLength": 1, "description": "The table to audit."},
}


def _setting(key: str) -> dict[str, Any]:
    fragment = dict(SETTINGS[key])
    if scans.DEFAULTS.get(key) is not None:
        fragment["default"] = scans.DEFAULTS[key]
    return fragment


def schema() -> dict[str, Any]:
    """The JSON Schema (draft-07, which Taplo reads) of a ``qar.toml``."""
    defaults = {key: _setting(key) for key in scans.DEFAULT_KEYS}
    extra = {key: COMMAND_SETTINGS[key] for key in config.KEYS if key not in defaults and key in COMMAND_SETTINGS}
    scan_props = {key: _SCAN_OWN[key] if key in _SCAN_OWN else _setting(key) for key in scans.SCAN_KEYS}
    top = {
        "store": {
            "description": "Where qar scan records its runs.",
            "anyOf": [
                _URL,
                {"type": "object", "properties": {"url": _URL}, "required": ["url"], "additionalProperties": False},
            ],
        },
        "defaults": {
            "type": "object",
            "description": "Settings for every scan (a scan's own win) and defaults of the commands.",
            "properties": {**defaults, **extra},
            "additionalProperties": False,
        },
        "sources": {
            "type": "object",
            "description": "[sources.NAME]: the databases the scans read.",
            "additionalProperties": {
                "type": "object",
                "properties": {"url": _URL},
                "required": ["url"],
                "additionalProperties": False,
            },
        },
        "scan": {
            "type": "array",
            "description": "[[scan]]: one table to audit, with its settings.",
            "minItems": 1,
            "items": {"type": "object", "properties": scan_props, "additionalProperties": False},
        },
    }
    description = "qar-sql's configuration: qar scan's tables and thresholds, and the commands' defaults."
    return _document(ID, "qar.toml", description, {key: top[key] for key in scans.TOP_KEYS})


def _document(id: str, title: str, description: str, properties: dict[str, Any]) -> dict[str, Any]:
    """A whole schema (draft-07, which Taplo reads): an object of ``properties`` and no other key."""
    return {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "$id": id,
        "title": title,
        "description": description,
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
    }


def render(document: dict[str, Any] | None = None) -> str:
    """A schema file's text: ``document``'s (None: :func:`schema`'s)."""
    return json.dumps(schema() if document is None else document, indent=2, ensure_ascii=False) + "\n"


# --------------------------------------------------------------------------------------------
# The validator

#: Each JSON type: the Python types of its values, and its name in an error message.
_TYPES: dict[str, tuple[Any, str]] = {
    "object": (dict, "a table"),
    "array": (list, "a list"),
    "string": (str, "text"),
    "integer": (int, "a whole number"),
    "number": ((int, float), "a number"),
    "boolean": (bool, "true or false"),
}


def _is(value: Any, kind: str) -> bool:
    if isinstance(value, bool) and kind != "boolean":
        return False
    return isinstance(value, _TYPES[kind][0])


def _where(path: list[str | int]) -> str:
    """Where a value is, as the file reads: ``[defaults] p``, ``[[scan]] number 2: pwm``,
    ``[sources.warehouse] url``, ``store``."""
    if not path:
        return "the file"
    head, rest = path[0], path[1:]
    if head == "scan" and rest and isinstance(rest[0], int):
        table, rest, sep = f"[[scan]] number {rest[0] + 1}", rest[1:], ": "
    elif head == "sources" and rest:
        table, rest, sep = f"[sources.{rest[0]}]", rest[1:], " "
    elif rest or head in ("defaults", "tool.qar"):
        table, sep = f"[{head}]", " "
    else:
        return str(head)
    tail = "".join(f"[{p}]" if isinstance(p, int) else (f".{p}" if i else str(p)) for i, p in enumerate(rest))
    return f"{table}{sep}{tail}" if tail else table


def _shown(value: Any) -> str:
    """A value as TOML writes it (true, "text", 3)."""
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value, ensure_ascii=False) if isinstance(value, str) else shown(value)


def errors(
    value: Any, node: dict[str, Any], path: list[str | int] | None = None, flagged: list[Flag] | None = None
) -> list[str]:
    """Every way ``value`` breaks ``node``, one sentence each (empty: valid). ``flagged`` gets
    the path of each: the bad value's own (``drop``: the rules must not read it) or, for a
    missing key, its table's."""
    path, flagged = path or [], [] if flagged is None else flagged
    where = _where(path)
    if "anyOf" in node:
        options = [errors(value, option, path) for option in node["anyOf"]]
        if all(options):
            # The option of the value's type says the most; else the first.
            typed = [o for o, opt in zip(options, node["anyOf"]) if _is(value, opt.get("type", "object"))]
            found = (typed or options)[0]
            flagged.append(Flag(tuple(path), True))
            return found
        return []
    kind = node.get("type")
    if kind and not _is(value, kind):
        flagged.append(Flag(tuple(path), True))
        if isinstance(value, dict) and kind == "array" and path and node.get("items", {}).get("type") == "object":
            # "[scan]" where "[[scan]]" was meant: TOML's two table syntaxes differ by a bracket
            return [f"{where} is a table but must be a list of tables; write [[{path[-1]}]], not [{path[-1]}]"]
        return [f"{where} = {_shown(value)} must be {_TYPES[kind][1]}"]
    out: list[str] = []
    if "enum" in node and value not in node["enum"]:
        out.append(f"{where} = {_shown(value)} must be one of {', '.join(map(_shown, node['enum']))}")
    if kind in ("integer", "number"):
        if "minimum" in node and value < node["minimum"]:
            out.append(f"{where} = {_shown(value)} is below its minimum, {node['minimum']}")
        if "maximum" in node and value > node["maximum"]:
            out.append(f"{where} = {_shown(value)} is above its maximum, {node['maximum']}")
        if "exclusiveMinimum" in node and value <= node["exclusiveMinimum"]:
            out.append(f"{where} = {_shown(value)} must be above {node['exclusiveMinimum']}")
        if "exclusiveMaximum" in node and value >= node["exclusiveMaximum"]:
            out.append(f"{where} = {_shown(value)} must be below {node['exclusiveMaximum']}")
    if kind == "string" and len(value) < node.get("minLength", 0):
        out.append(f"{where} is empty; write a value")
    if kind == "array" and len(value) < node.get("minItems", 0):
        out.append(f"{where} is empty; give at least {node['minItems']}")
    if out:
        flagged.append(Flag(tuple(path), True))
    if kind == "array":
        for i, item in enumerate(value):
            out += errors(item, node.get("items", {}), [*path, i], flagged)
    if kind == "object":
        props = node.get("properties", {})
        for key in node.get("required", []):
            if key not in value:
                out.append(f"{where} needs {key}")
                flagged.append(Flag(tuple(path), False))
        for key, item in value.items():
            if key in props:
                out += errors(item, props[key], [*path, key], flagged)
            elif isinstance(node.get("additionalProperties"), dict):
                out += errors(item, node["additionalProperties"], [*path, key], flagged)
            elif node.get("additionalProperties") is False:
                close = difflib.get_close_matches(key, list(props), n=1)
                hint = f"did you mean {close[0]!r}?" if close else f"allowed: {', '.join(props)}"
                out.append(f"{where + ': ' if path else 'the file: '}unknown key {key!r}; {hint}")
                flagged.append(Flag((*path, key), True))
    return out


class Flag(NamedTuple):
    """Where the schema found an error: the path of a key, and whether its value is dropped
    before qar's own checks read the file (they would only say the same again)."""

    path: tuple[str | int, ...]
    drop: bool


def _without(data: Any, flags: list[Flag]) -> Any:
    """``data`` without the values the schema refused (a copy; ``data`` is left as it is)."""
    data = copy.deepcopy(data)
    # Deepest first, and list items from the last, so a removal moves no other flagged path.
    # A refused [sources.NAME] stays, so the scans naming it are not told it is undefined; qar's
    # own check refuses it again, under the path the schema flagged (so not reported twice).
    paths = {f.path for f in flags if f.drop and f.path and not (len(f.path) == 2 and f.path[0] == "sources")}
    for at in sorted(paths, key=lambda p: (len(p), p[-1] if isinstance(p[-1], int) else -1), reverse=True):
        parent = data
        try:
            for step in at[:-1]:
                parent = parent[step]
            del parent[at[-1]]
        except (KeyError, IndexError, TypeError):
            continue
    return data


def tool_schema() -> dict[str, Any]:
    """The JSON Schema of pyproject.toml's ``[tool.qar]`` table: the commands' defaults of
    qar.toml's ``[defaults]`` and ``store`` (a URL or file), in one table."""
    description = "qar-sql's command defaults in pyproject.toml (qar.toml's [defaults] and store)."
    return _document(
        TOOL_ID, "[tool.qar]", description, {**schema()["properties"]["defaults"]["properties"], "store": _URL}
    )


def check_file(path: str | Path) -> dict[str, Any]:
    """Validate one qar.toml, or the ``[tool.qar]`` table of a pyproject.toml, as qar reads it:
    its parsed content, or UsageError (exit 2) listing every place the file breaks the schema;
    then the checks the schema cannot say, by the code ``qar scan`` and the config loader run
    (α below π_u, warn_above ≤ fail_above, no literal password, every ``${VAR}`` set, a scan's
    source defined), so a file passes here exactly when qar accepts it."""
    path = Path(path)
    data = user_files.read_toml(path, "--check")
    pyproject = path.name == "pyproject.toml"
    flags: list[Flag] = []
    if pyproject:
        tool = data.get("tool")
        if not isinstance(tool, dict) or "qar" not in tool:
            raise UsageError(
                f"{path.name} has no [tool.qar] table; add one (e.g. [tool.qar] then p = 3) or check a qar.toml"
            )
        found = errors(tool["qar"], tool_schema(), ["tool.qar"], flags)
        kept = {"tool": {"qar": _without({"tool.qar": tool["qar"]}, flags).get("tool.qar", {})}}
    else:
        found = errors(data, schema(), None, flags)
        kept = _without(data, flags)
    # Then qar's own checks, over what the schema accepted: each of their errors the schema did
    # not already report (a key whose value it refused is gone; an error about a key in or
    # around one it flagged is said: [sources.b] needs a url after its url = 5).
    problems = scans.Problems()
    if pyproject or "scan" not in kept:
        config.from_data(kept, path, problems=problems)  # the commands' defaults, checked as a scan's
    else:
        scans.parse_config(kept, path=str(path), problems=problems)
    said = [f.path for f in flags]
    mine = [
        message.removeprefix(f"{path.name}: ")
        for at, message in problems.found
        if not any(at[: len(p)] == p or (len(at) > 1 and p[: len(at)] == at) for p in said)
    ]
    if len(found) + len(mine) == 1:
        raise UsageError(f"{path.name}: {(found + mine)[0]}")
    if found or mine:
        listed = "".join(f"\n  {error}" for error in found + mine)
        if mine:
            raise UsageError(f"{path.name} has {len(found) + len(mine)} errors:{listed}")
        raise UsageError(f"{path.name} breaks its schema in {len(found)} places:{listed}")
    return data
