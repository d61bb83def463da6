"""Scans from a dbt manifest: audit the models whose columns are tagged as quasi-identifiers.

Convention (docs/compliance.md, "dbt"): in a model's YAML, a column with
``meta: {qar: quasi_identifier}`` is a QI column; the model's own
``meta: {qar: {p: 2, alpha: 0.01, pi_u: 0.05, fail_above: 0.5, warn_above: 0.3}}`` sets its
parameters and thresholds. dbt ≥ 1.10 may put meta under ``config.meta``; both are read.
Only ``target/manifest.json`` is read — dbt itself is not imported.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from qar_sql import user_files
from qar_sql.compliance.scans import PARAM_KEYS, ScanSpec, check_unique, make_spec, own_settings
from qar_sql.engines.secrets import mask_source
from qar_sql.engines.source import is_url
from qar_sql.errors import UsageError, shown

TAG = "quasi_identifier"

#: What a column's ``meta: {qar: ...}`` may say (the dbt package's ``qar.meta_values`` says the
#: same): a quasi-identifier is audited; a direct identifier, a sensitive attribute or an ignored
#: column is left out, saying why. Anything else is a mistake (a misspelt tag would otherwise drop
#: the column silently), named in an error.
META_VALUES = (TAG, "identifier", "sensitive", "ignore")

#: The nodes that are tables in the warehouse, so scanned when their columns are tagged (the dbt
#: package's qar.risk_below accepts the same on seeds and snapshots).
RESOURCE_TYPES = ("model", "seed", "snapshot")


def _meta(node: Mapping[str, Any]) -> dict:
    meta = dict(node.get("meta") or {})
    meta.update((node.get("config") or {}).get("meta") or {})
    return meta


def _column_name(name: str) -> str:
    """dbt keeps a column's name as written in YAML; ``"zip code"`` with its quotes is the
    identifier zip code."""
    if len(name) >= 2 and name[0] == name[-1] == '"':
        return name[1:-1].replace('""', '"')
    return name


def tagged_columns(node: Mapping[str, Any]) -> tuple[str, ...]:
    """The model's QI columns, in the YAML's order."""
    out = []
    for name, col in (node.get("columns") or {}).items():
        tag = _meta(col).get("qar")
        tags = [] if tag is None else tag if isinstance(tag, list) else [tag]
        for t in tags:
            if not isinstance(t, str) or t not in META_VALUES:
                raise UsageError(
                    f"dbt {node.get('resource_type') or 'model'} {node.get('name')!r}: column "
                    f"{col.get('name') or name!r} has meta qar: {shown(t)}, "
                    f"which qar does not know; use one of {', '.join(META_VALUES)}"
                )
        if TAG in tags:
            out.append(_column_name(col.get("name") or name))
    return tuple(out)


def load_manifest(path: str | Path) -> dict:
    p = Path(path)
    if not p.is_file():
        raise UsageError(
            f"dbt manifest {str(path)!r} does not exist; run dbt parse (or dbt build) to write target/manifest.json"
        )
    data = user_files.read_json(p, "dbt manifest", limit=None, fix="point to dbt's target/manifest.json")
    check_manifest(data, p.name)
    return data


#: What qar reads of a node and of a column, and the type dbt writes there (None is always
#: allowed); ``config.meta`` is ``meta`` of ``config``, read once ``config`` is known a mapping.
_NODE_FIELDS: dict[str, type | tuple[type, ...]] = {
    **dict.fromkeys(("resource_type", "name", "schema", "alias", "original_file_path"), str),
    **dict.fromkeys(("columns", "meta", "config"), dict),
    "tags": (list, str),
    "config.meta": dict,
    "config.tags": (list, str),
}
_COLUMN_FIELDS: dict[str, type | tuple[type, ...]] = {"name": str, "meta": dict, "config": dict, "config.meta": Mapping}


def check_manifest(data: Mapping[str, Any], name: str = "the dbt manifest") -> None:
    """A UsageError naming the first node (and field) that is not what dbt writes, so a damaged
    or hand-edited manifest is one sentence, not an AttributeError deep in the scan."""

    def bad(where: str, key: str, value: Any) -> UsageError:
        return UsageError(
            f"{name}: {where} has {key} of type {type(value).__name__}, which dbt never writes there; "
            "run dbt parse to write target/manifest.json again"
        )

    if not isinstance(data, Mapping) or not isinstance(data.get("nodes"), Mapping):
        raise UsageError(f"{name} has no 'nodes' mapping; point to dbt's target/manifest.json")

    def check(where: str, entry: Any, kinds: Mapping[str, type | tuple[type, ...]]) -> None:
        if not isinstance(entry, Mapping):
            raise bad(where, "its entry", entry)
        for key, kind in kinds.items():
            outer, _, inner = key.partition(".")
            value = (entry.get(outer) or {}).get(inner) if inner else entry.get(key)
            if value is not None and not isinstance(value, kind):
                raise bad(where, key, value)

    if not isinstance(data.get("metadata") or {}, Mapping):
        raise bad("the manifest", "metadata", data["metadata"])
    for uid, node in data["nodes"].items():
        check(f"node {uid!r}", node, _NODE_FIELDS)
        for cname, col in (node.get("columns") or {}).items():
            check(f"column {cname!r} of node {uid!r}", col, _COLUMN_FIELDS)


def manifest_scans(
    manifest: str | Path | Mapping[str, Any],
    url: str,
    *,
    defaults: Mapping[str, Any] | None = None,
    source_name: str = "dbt",
    only: Collection[str] | None = None,
) -> list[ScanSpec]:
    """One :class:`ScanSpec` per model, seed or snapshot with tagged columns, reading ``schema.alias`` through
    ``url`` (the warehouse dbt built); with ``only``, just the models of those unique ids
    (``qar scan --select``, compliance/dbt_project.py)."""
    data = manifest if isinstance(manifest, Mapping) else load_manifest(manifest)
    if isinstance(manifest, Mapping):
        check_manifest(data)
    where = "dbt manifest"
    if not url:
        raise UsageError("--dbt-manifest needs the warehouse: pass --url (or set QAR_DATABASE_URL)")
    if not is_url(url) and not Path(url).exists():
        raise UsageError(f"warehouse {url!r} does not exist; pass the database dbt built with --url")
    display = mask_source(url)
    specs = []
    names: dict[str, list[str]] = {}  # model name -> the unique ids of the models so named
    for uid, node in sorted(data["nodes"].items()):
        kind = node.get("resource_type")
        if kind not in RESOURCE_TYPES or (only is not None and uid not in only):
            continue
        columns = tagged_columns(node)
        if not columns:
            continue
        if (node.get("config") or {}).get("materialized") == "ephemeral":
            raise UsageError(
                f"dbt model {node.get('name')!r} has quasi-identifier columns but is ephemeral, so "
                "there is no table to audit; materialise it as a table or view"
            )
        model_meta = _meta(node).get("qar") or {}
        if not isinstance(model_meta, Mapping):
            raise UsageError(
                f"dbt {kind} {node.get('name')!r}: meta.qar must be a mapping such as {{p: 3, fail_above: 0.5}}"
            )
        unknown = [k for k in model_meta if k not in PARAM_KEYS]
        if unknown:
            raise UsageError(
                f"dbt {kind} {node.get('name')!r}: meta.qar has an unknown key {unknown[0]!r}; "
                f"allowed: {', '.join(PARAM_KEYS)}"
            )
        name = node.get("name") or uid
        names.setdefault(name, []).append(uid)
        table = f"{node.get('schema')}.{node.get('alias') or node.get('name')}"
        # The model's meta.qar is the scan's own setting (qar_sql.precedence), over ``defaults``.
        chosen = own_settings({**model_meta, "columns": list(columns)}, defaults or {}, own_origin="meta.qar")
        specs.append((uid, name, table, chosen))
    out = []
    for uid, name, table, chosen in specs:
        scan_name = uid if len(names[name]) > 1 else name
        settings = {k: c.value for k, c in chosen.items() if c.level != "built-in"}
        source = (url, display, source_name)
        out.append(make_spec(scan_name, table, settings, source=source, where=where, origins=chosen))
    check_unique(out, where)
    return out
