"""``qar scan --dbt-project DIR``: the warehouse from dbt's own profile, and dbt's node selection.

The connection is read from ``profiles.yml`` as dbt resolves it, so the URL is not typed twice:

* the folder: ``--profiles-dir``, else ``$DBT_PROFILES_DIR``, else the current folder when it
  holds a profiles.yml, else ``~/.dbt`` (dbt's order; like dbt, not the project folder);
* the profile: ``--profile``, else ``$DBT_PROFILE``, else ``profile:`` of dbt_project.yml;
* the target: ``--target``, else ``$DBT_TARGET``, else the profile's ``target:``.

String values are rendered as dbt renders them, in a Jinja sandbox with dbt's profile context
only (``env_var('X', 'default')`` and the ``as_number``/``as_text``/``as_bool``/``as_native``
filters; compliance/dbt_jinja.py). A duckdb target becomes its file
(relative paths from the project folder), postgres and redshift targets a
``postgresql+psycopg://`` URL, snowflake a ``snowflake://`` URL; secrets never reach output
(``secrets.mask_source``). The models are those of ``target/manifest.json`` (``dbt parse``
writes it), narrowed by ``--select`` with dbt's methods for names, ``tag:`` and ``path:``.
"""

from __future__ import annotations

import fnmatch
import ntpath
import os
import posixpath
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from qar_sql import user_files
from qar_sql.compliance.dbt import RESOURCE_TYPES, load_manifest, manifest_scans
from qar_sql.compliance.dbt_jinja import render_value
from qar_sql.engines.secrets import mask_source
from qar_sql.errors import UsageError

__all__ = [
    "DbtTarget",
    "check_named_tagged",
    "manifest_path",
    "profiles_dir",
    "project_scans",
    "read_target",
    "select_nodes",
]

#: The node selection methods ``--select`` understands (besides a plain name).
SELECT_METHODS = ("tag", "path")

#: The settings of a postgres or redshift target that qar passes on to libpq, as dbt does.
LIBPQ_KEYS = ("sslmode", "sslrootcert", "sslcert", "sslkey", "connect_timeout")


def _yaml(path: Path, what: str) -> dict:
    data = user_files.read_yaml(path, what)
    if not isinstance(data, dict):
        raise UsageError(f"{what} {str(path)!r} holds no mapping; it should be dbt's {path.name}")
    return data


def project_file(project_dir: str | Path) -> tuple[Path, dict]:
    """(the project folder, its dbt_project.yml)."""
    folder = Path(project_dir)
    path = folder / "dbt_project.yml"
    if not path.is_file():
        raise UsageError(f"{str(folder)!r} is not a dbt project (no dbt_project.yml); pass the folder that holds it")
    return folder, _yaml(path, "dbt project file")


def profiles_dir(project_dir: str | Path, given: str | Path | None = None) -> Path:
    """The folder of profiles.yml, as dbt finds it (see the module docstring)."""
    if given:
        folder = Path(given)
        if not (folder / "profiles.yml").is_file():
            raise UsageError(f"--profiles-dir {str(given)!r} holds no profiles.yml; name the folder that has it")
        return folder
    env = os.environ.get("DBT_PROFILES_DIR")
    if env:
        if not (Path(env) / "profiles.yml").is_file():
            raise UsageError(f"$DBT_PROFILES_DIR = {env!r} holds no profiles.yml; fix it or unset it")
        return Path(env)
    for folder in (Path.cwd(), Path.home() / ".dbt"):
        if (folder / "profiles.yml").is_file():
            return folder
    hint = ""
    if (Path(project_dir) / "profiles.yml").is_file():
        # dbt does not look there either: say so rather than read a file dbt would not.
        hint = f" ({str(project_dir)!r} has one, which dbt reads only with --profiles-dir too)"
    raise UsageError(
        f"no profiles.yml in the current folder or in ~/.dbt{hint}; "
        "pass --profiles-dir (or set DBT_PROFILES_DIR), or give the warehouse with --url"
    )


@dataclass(frozen=True)
class DbtTarget:
    """The warehouse of one profile target."""

    profile: str
    target: str
    type: str
    url: str
    profiles_yml: Path

    @property
    def display(self) -> str:
        return mask_source(self.url)


def read_target(
    project_dir: str | Path,
    *,
    profile: str | None = None,
    target: str | None = None,
    profiles: str | Path | None = None,
) -> DbtTarget:
    """The target dbt would connect to for this project (see the module docstring)."""
    folder, project = project_file(project_dir)
    path = profiles_dir(folder, profiles) / "profiles.yml"
    data = _yaml(path, "dbt profiles file")
    name = profile or os.environ.get("DBT_PROFILE") or project.get("profile")
    if not name:
        raise UsageError(f"{folder / 'dbt_project.yml'} names no profile; pass --profile NAME")
    if isinstance(name, list | dict):
        raise UsageError(
            f"{folder / 'dbt_project.yml'}: profile is a {type(name).__name__}, not a name; write profile: NAME"
        )
    if name in data and not isinstance(data[name], dict):
        raise UsageError(f"profile {name!r} in {path} is not a mapping (target:, outputs:); write it as dbt documents")
    if name not in data:
        known = ", ".join(sorted(k for k in data if k != "config")) or "none"
        came = "" if profile else " (from $DBT_PROFILE)" if os.environ.get("DBT_PROFILE") else " (dbt_project.yml's)"
        raise UsageError(
            f"profile {name!r}{came} is not in {path} (profiles: {known}); pass --profile with one of them"
        )
    prof = data[name]
    outputs = prof.get("outputs") or {}
    if not isinstance(outputs, dict):
        raise UsageError(f"profile {name!r} in {path}: outputs is not a mapping of targets; write it as dbt documents")
    where = f"{path} (profile {name!r})"
    chosen = target or os.environ.get("DBT_TARGET") or render_value(prof.get("target"), "target", where)
    if isinstance(chosen, list | dict):  # (before the test of an empty one: [] is a list, not no target)
        raise UsageError(
            f"profile {name!r} in {path}: target is a {type(chosen).__name__}, not a name; write target: NAME"
        )
    if not chosen:
        raise UsageError(f"profile {name!r} in {path} names no target; pass --target NAME")
    if chosen not in outputs:
        raise UsageError(
            f"target {chosen!r}{'' if target else ' (from $DBT_TARGET)' if os.environ.get('DBT_TARGET') else ''} "
            f"is not an output of profile {name!r} in {path} "
            f"(outputs: {', '.join(outputs) or 'none'}); pass --target with one of them"
        )
    output = render_value(outputs[chosen], f"outputs.{chosen}", where)
    where = f"{path}: {name}.outputs.{chosen}"
    if not isinstance(output, dict):
        raise UsageError(f"{where} is not a mapping of settings (type:, host:, ...); write it as dbt documents")
    kind = str(output.get("type", ""))
    return DbtTarget(name, str(chosen), kind, target_url(output, folder, where), path)


def target_url(output: Mapping[str, Any], project_dir: Path, where: str) -> str:
    """The source qar opens for a rendered profile output (a DuckDB file or a URL)."""
    kind = output.get("type")

    def need(key: str) -> str:
        value = output.get(key)
        if value in (None, ""):
            raise UsageError(f"{where} has no {key}; dbt needs it too")
        return text(key)

    def text(key: str) -> str:
        """A setting's value as text: a list, a mapping or true/false there is no host, path or
        name (True was opened as the file 'True')."""
        value = output.get(key)
        if isinstance(value, list | dict | bool):
            shown = "true or false" if isinstance(value, bool) else f"a {type(value).__name__}"
            raise UsageError(f"{where}: {key} is {shown}, not a value; write {key}: as dbt documents")
        return "" if value is None else str(value)

    def auth(password: Any) -> str:
        return quote(need("user"), safe="") + (":" + quote(str(password), safe="") if password else "")

    if kind == "duckdb":
        path = text("path")
        if path in ("", ":memory:") or path.startswith("md:") or path.startswith("motherduck:"):
            raise UsageError(
                f"{where} is a duckdb target at {path or ':memory:'!r}, which qar cannot open from here; "
                "give the warehouse file with --url"
            )
        p = Path(path).expanduser()
        return str(p if p.is_absolute() else project_dir / p)
    if kind in ("postgres", "redshift"):
        login = auth(output.get("password") or output.get("pass"))
        port = text("port") or (5439 if kind == "redshift" else 5432)
        dbname = quote(str(output.get("dbname") or output.get("database") or need("dbname")), safe="")
        # The profile's TLS settings go to libpq as dbt passes them: dropped, `sslmode: require`
        # or `verify-full` would become libpq's `prefer`, which sends the password to a server
        # that offers no TLS or whose certificate is not checked.
        query = "&".join(f"{k}={quote(str(output[k]), safe='')}" for k in LIBPQ_KEYS if output.get(k) not in (None, ""))
        return f"postgresql+psycopg://{login}@{need('host')}:{port}/{dbname}" + (f"?{query}" if query else "")
    if kind == "snowflake":
        query = "&".join(f"{k}={quote(str(output[k]), safe='')}" for k in ("warehouse", "role") if output.get(k))
        url = f"snowflake://{auth(output.get('password'))}@{need('account')}/{quote(need('database'), safe='')}"
        return url + (f"?{query}" if query else "")
    raise UsageError(
        f"{where} is a {kind!r} target, which qar cannot turn into a connection; "
        "give the warehouse with --url (or use the dbt package's qar.risk there: docs/dbt.md)"
    )


def manifest_path(project_dir: str | Path) -> Path:
    """target/manifest.json of the project, or of its target path as dbt picks it:
    ``$DBT_TARGET_PATH``, else ``target-path`` of dbt_project.yml (either may be absolute)."""
    folder, project = project_file(project_dir)
    target = os.environ.get("DBT_TARGET_PATH") or project.get("target-path") or "target"
    path = folder / str(target) / "manifest.json"
    if not path.is_file():
        shown = path.relative_to(folder) if path.is_relative_to(folder) else path
        raise UsageError(f"{str(folder)!r} has no {shown}; run dbt parse (or dbt build) in it first")
    return path


def select_nodes(manifest: Mapping[str, Any], selectors: Sequence[str]) -> set[str]:
    """The unique ids of the models, seeds and snapshots ``selectors`` select, as dbt's
    ``--select``: each value is space-separated selectors (their union); a comma joins selectors
    that must all match (intersection). A selector is a name (``*`` and ``?`` wildcards),
    ``tag:NAME`` or ``path:FOLDER_OR_FILE`` (relative to the project folder, ``..`` resolved
    inside it). Graph operators (``+``, ``2+``, ``@``), an empty value, an empty part around a
    comma, an empty or absolute path and a path leaving the project are refused, each with its
    sentence: none of them may quietly select nothing or everything."""
    nodes = {uid: n for uid, n in manifest["nodes"].items() if n.get("resource_type") in RESOURCE_TYPES}
    out: set[str] = set()
    for value in selectors:
        if not value.strip():
            raise UsageError(
                f"--select {value!r} names no model; give a name, tag:NAME or path:FOLDER "
                "(or leave --select out to scan every tagged model)"
            )
        for union in value.split():
            parts = union.split(",")
            if "" in parts:
                raise UsageError(
                    f"--select {union!r} has an empty selector beside a comma; a comma joins selectors that "
                    "must all match, as in tag:pii,path:models"
                )
            chosen = set(nodes)
            for part in parts:
                match = _matcher(part)
                chosen &= {uid for uid, n in nodes.items() if match(n)}
            if not chosen:
                raise UsageError(
                    f"--select {union!r} matches no model of the manifest; check the name, tag or path "
                    "(or run dbt parse after changing the project)"
                )
            out |= chosen
    return out


_GRAPH = re.compile(r"^(\d*\+|@)|\+\d*$")


def _matcher(selector: str):
    """A test of one node for one selector (checked once, before any node is looked at)."""
    if _GRAPH.search(selector):
        raise UsageError(
            f"--select {selector!r} uses a graph operator (+, N+ or @), which qar does not follow; "
            "name the models themselves, by name, tag: or path:"
        )
    method, sep, arg = selector.partition(":")
    if not sep:
        return _default_matcher(selector)
    if method == "tag":
        if not arg:
            raise UsageError("--select 'tag:' names no tag; write tag:NAME, as tag:pii")

        def tagged(node) -> bool:
            tags = list(node.get("tags") or []) + list((node.get("config") or {}).get("tags") or [])
            return any(fnmatch.fnmatchcase(str(t), arg) for t in tags)

        return tagged
    if method == "path":
        return _path_matcher(selector, arg)
    raise UsageError(
        f"--select {selector!r} uses the method {method!r}, which qar does not know; "
        f"use a model name or one of {', '.join(m + ':' for m in SELECT_METHODS)}"
    )


def _default_matcher(selector: str):
    """A selector without a method, read as dbt reads it: a path when it holds a slash
    (``models/staging``), a file name when it ends in .sql, .py or .csv (``people.sql``), a
    name (``people``, ``stg_*``) or a qualified name (``my_project.staging.people``, ``my_project``:
    the parts of the node's fqn from the start, wildcards in each). qar read each as a name, so
    dbt's ``my_project.people`` matched no model."""
    if "/" in selector or "\\" in selector:
        return _path_matcher(selector, selector)
    if selector.lower().endswith((".sql", ".py", ".csv")):
        return lambda node: fnmatch.fnmatchcase(
            posixpath.basename(str(node.get("original_file_path") or "").replace("\\", "/")), selector
        )
    parts = selector.split(".")

    def named(node) -> bool:  # (its name, or its fqn from the start: the project's name picks all of it)
        fqn = node.get("fqn")
        flat = [p for seg in fqn for p in str(seg).split(".")] if isinstance(fqn, list) else []
        qualified = len(parts) <= len(flat) and all(
            fnmatch.fnmatchcase(f, p) for f, p in zip(flat, parts, strict=False)
        )
        return qualified or fnmatch.fnmatchcase(str(node.get("name")), selector)

    return named


def _own_names(node: Mapping[str, Any]) -> set[str]:
    """The selectors that pick this node alone: its name, its dotted fqn, its file and its path."""
    fqn = node.get("fqn")
    file = posixpath.normpath(str(node.get("original_file_path") or "").replace("\\", "/"))
    dotted = ".".join(str(p) for p in fqn) if isinstance(fqn, list) else ""
    return {str(node.get("name")), dotted, posixpath.basename(file), file} - {"", "."}


def _path_matcher(selector: str, arg: str):
    if not arg.strip():
        raise UsageError(f"--select {selector!r} names no path; write a folder or file of the project, as path:models")
    if posixpath.isabs(arg) or ntpath.isabs(arg):
        raise UsageError(
            f"--select {selector!r} is an absolute path; write it relative to the project folder, as path:models"
        )
    want = posixpath.normpath(arg.replace("\\", "/"))
    if want == ".." or want.startswith("../"):
        raise UsageError(
            f"--select {selector!r} points outside the project folder; write a folder or file inside it, as path:models"
        )

    def under(node) -> bool:
        file = posixpath.normpath(str(node.get("original_file_path") or "").replace("\\", "/"))
        return want == "." or file == want or file.startswith(want + "/") or fnmatch.fnmatchcase(file, want)

    return under


def project_scans(
    project_dir: str | Path,
    *,
    url: str | None = None,
    profile: str | None = None,
    target: str | None = None,
    profiles: str | Path | None = None,
    select: Sequence[str] = (),
) -> tuple[list, str]:
    """(the scans of the project's tagged models, where they read): the warehouse from the
    profile unless ``url`` names it, the models narrowed by ``select``."""
    path = manifest_path(project_dir)
    manifest = load_manifest(path)
    if not url:
        dbt_target = read_target(project_dir, profile=profile, target=target, profiles=profiles)
        folder = Path(project_dir)
        check_adapter(manifest, dbt_target, path.relative_to(folder) if path.is_relative_to(folder) else path)
        url = dbt_target.url
    only = select_nodes(manifest, select) if select else None
    scans = manifest_scans(manifest, url, only=only)
    if only is not None:
        check_named_tagged(manifest, select, only, scans)
    return scans, mask_source(url)


def check_named_tagged(
    manifest: Mapping[str, Any], select: Sequence[str], only: Collection[str], scans: Sequence
) -> None:
    """Refuse a model ``select`` picks by its own name (of those ``only`` holds) that has no tagged
    column, so is not among ``scans``: a folder (path:), a tag or a wildcard picks the tagged models
    among others. For --dbt-project and --dbt-manifest alike (--dbt-manifest skipped such a model
    without a word beside a tagged one, and said no model of the manifest was tagged alone)."""
    covered = {s.name for s in scans}
    nodes = manifest["nodes"]
    terms = [t.removeprefix("path:") for value in select for t in value.split()]
    named = {posixpath.normpath(t) if "/" in t else t for t in terms if not re.search(r"[,:*?\[]", t)}
    untagged = sorted(
        (str(nodes[uid].get("resource_type")), str(nodes[uid].get("name")))
        for uid in only
        if nodes[uid].get("name") not in covered and uid not in covered and _own_names(nodes[uid]) & named
    )
    if untagged:
        kind, name = untagged[0]
        raise UsageError(
            f"--select picks {kind} {name!r}, which has no column with meta {{qar: quasi_identifier}}; "
            "tag its quasi-identifier columns or leave it out of --select"
        )


def check_adapter(manifest: Mapping[str, Any], target: DbtTarget, path: str | Path = "target/manifest.json") -> None:
    """Refuse a manifest parsed for another adapter than the target's: its schemas (``main`` of a
    DuckDB file, say) are that target's, so qar would look for the tables in the wrong place."""
    parsed = (manifest.get("metadata") or {}).get("adapter_type")
    if parsed and target.type and str(parsed) != target.type:
        raise UsageError(
            f"{path} was written by dbt for a {parsed} target, but target {target.target!r} is "
            f"{target.type}, so its schemas are another warehouse's; run dbt parse --target {target.target} "
            "first (or pass --url)"
        )
