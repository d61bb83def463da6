"""The JSON Schema of ``qar.toml``, built from the parameter definitions, for editors.

One source: the keys come from ``compliance/scans.py`` (``TOP_KEYS``, ``SCAN_KEYS``,
``DEFAULT_KEYS``) and ``config.KEYS`` (``null_tokens``, a command-line default), the defaults from
``scans.DEFAULTS``, the estimators from ``stats/evt.PWM_METHODS``; this module adds, per setting,
its JSON type, range and a sentence. ``scripts/schema.py`` writes ``qar_sql/schemas/qar.schema.json``
and ``tests/test_toml_schema.py`` checks that the file is current and that every key has its
fragment here, so a new setting cannot be left out. Editors (Taplo, VS Code's Even Better TOML)
read the file; docs/config-schema.md says how.

``qar config --check`` reads a file with qar scan's own loader (:func:`qar_sql.config_file.check_file`),
which checks what the schema says and what it cannot (``alpha < pi_u``, ``warn_above ≤ fail_above``,
a source a scan names being defined); the tests check that the jsonschema package and that loader
agree on which files are valid.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from qar_sql import config_file as config
from qar_sql.compliance import scans
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


def tool_schema() -> dict[str, Any]:
    """The JSON Schema of pyproject.toml's ``[tool.qar]`` table: the commands' defaults of
    qar.toml's ``[defaults]`` and ``store`` (a URL or file), in one table."""
    description = "qar-sql's command defaults in pyproject.toml (qar.toml's [defaults] and store)."
    return _document(
        TOOL_ID, "[tool.qar]", description, {**schema()["properties"]["defaults"]["properties"], "store": _URL}
    )
