"""The JSON Schema of ``qar.toml``, built from the parameter definitions, for editors.

One source: the keys come from ``compliance/scans.py`` (``TOP_KEYS``, ``SCAN_KEYS``,
``DEFAULT_KEYS``) and ``config.KEYS`` (``null_tokens``, a command-line default); each setting's
type, choices, default and sentence from its field's metadata (``ScanSpec``, the audit's
parameters and ``warn_above``); this module adds the ranges the rules check in code. ``scripts/schema.py`` writes ``qar_sql/schemas/qar.schema.json``
and ``tests/test_toml_schema.py`` checks that the file is current and that every key has its
fragment here, so a new setting cannot be left out. Editors (Taplo, VS Code's Even Better TOML)
read the file; docs/config-schema.md says how.

``qar config --check`` reads a file with qar scan's own loader (:func:`qar_sql.config_file.check_file`),
which checks what the schema says and what it cannot (``alpha < pi_u``, ``warn_above ≤ fail_above``,
a source a scan names being defined); the tests check that the jsonschema package and that loader
agree on which files are valid.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from qar_sql import config_file as config
from qar_sql.compliance import scans
from qar_sql.parameters.fields import meta_of

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
#: The ranges the rules check in code (rules.check_tail, check_risk, check_min_exceedances), which
#: no field's metadata states; the rest of each setting comes from its field's.
_RANGES: dict[str, dict[str, Any]] = {
    "p": {"minimum": 1},
    **dict.fromkeys(("alpha", "pi_u"), {"exclusiveMinimum": 0, "exclusiveMaximum": 1}),
    **dict.fromkeys(("fail_above", "warn_above"), {"minimum": 0, "maximum": 1}),
    "min_exceedances": {"minimum": 1},
}
_TYPES = {"int": "integer", "float": "number", "choice": "string"}
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
    """The fragment of the scan setting ``key``: from its field's metadata (ScanSpec's)."""
    f = next(f for f in dataclasses.fields(scans.ScanSpec) if f.name == key)
    meta = meta_of(f)
    assert meta is not None, key  # (every setting is an option field: the test checks it)
    fragment: dict[str, Any] = dict(_NAMES) if meta.kind == "names" else {"type": _TYPES[meta.kind]}
    fragment |= {"enum": list(meta.choices)} if meta.choices else {}
    fragment |= {"minimum": meta.minimum} if meta.minimum is not None else {}
    fragment |= _RANGES.get(key, {}) | {"description": meta.help}
    return fragment | ({"default": f.default} if f.default is not None else {})


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


def tool_schema() -> dict[str, Any]:
    """The JSON Schema of pyproject.toml's ``[tool.qar]`` table: the commands' defaults of
    qar.toml's ``[defaults]`` and ``store`` (a URL or file), in one table."""
    description = "qar-sql's command defaults in pyproject.toml (qar.toml's [defaults] and store)."
    return _document(
        TOOL_ID, "[tool.qar]", description, {**schema()["properties"]["defaults"]["properties"], "store": _URL}
    )
