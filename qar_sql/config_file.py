"""Configuration discovery: defaults for the command line from ``qar.toml`` or ``pyproject.toml``.

As ruff and pytest do, the working directory and then each parent is searched; the first folder
with a ``qar.toml`` (its ``[defaults]`` table and ``[store] url`` — the same file and tables a
compliance scan reads, so one file serves both) or a ``pyproject.toml`` with a ``[tool.qar]``
table wins. The values are checked as a scan's ``[defaults]`` are (same messages).

Precedence, highest first: the command line, the option's ``QAR_<OPTION>`` variable, the file,
the built-in default. The CLI applies the file through click's ``default_map``, below the
variables; the Python API takes no implicit defaults (a function's result does not depend on the
folder it is called from). In ``qar scan`` a scan's own settings and its file's [defaults] rank
above the variables and this file: only the command line replaces them
(:mod:`qar_sql.precedence`, the one rule).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from qar_sql import user_files
from qar_sql.compliance import scans
from qar_sql.engines.secrets import mask_source
from qar_sql.engines.source import URL_ENV
from qar_sql.errors import UsageError

#: The keys a config may set, with their built-in defaults (None: unset), in the order of a
#: scan file's settings: a scan's (:class:`~qar_sql.compliance.scans.ScanSpec`, the audit's
#: parameters and warn_above); a scan's min_exceedances is a gate of the scan file only.
KEYS: dict[str, Any] = {
    "columns": None,
    "exclude": None,
    **{key: scans.DEFAULTS[key] for key in scans.PARAM_KEYS if key != "min_exceedances"},
    "store": None,
    "null_tokens": None,  # CSV cells read as NULL (--null-token)
}
#: Where a variable's name differs from QAR_<KEY>. QAR_STORE is the store ``--store`` alone and
#: the store commands use; it does not switch recording on (that is ``--store`` or ``store =``).
ENVVARS = {key: f"QAR_{key.upper()}" for key in KEYS} | {"null_tokens": "QAR_NULL_TOKEN"}
CONFIG_ENV = "QAR_CONFIG"


@dataclass(frozen=True)
class Config:
    """Defaults found in one file: ``values`` (checked), ``path`` and the table they came from."""

    values: Mapping[str, Any]
    path: Path | None = None
    table: str = ""

    @property
    def origin(self) -> str:
        return f"{self.path} {self.table}" if self.path else "built-in default"


@dataclass(frozen=True)
class Setting:
    name: str
    value: Any
    origin: str  # "built-in default", "/x/qar.toml [defaults]", "$QAR_P", "--p"
    envvar: str

    @property
    def shown(self) -> Any:
        """The value safe to print: a store URL's password masked."""
        return mask_source(self.value) if isinstance(self.value, str) else self.value


def find(start: str | Path | None = None, *, environ: Mapping[str, str] | None = None) -> Config:
    """The config that applies in ``start`` (default: the working directory); ``$QAR_CONFIG``
    names a file directly. No file: an empty :class:`Config`."""
    environ = os.environ if environ is None else environ
    if environ.get(CONFIG_ENV):
        return load(environ[CONFIG_ENV], environ=environ)
    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "qar.toml").is_file():
            return load(folder / "qar.toml", environ=environ)
        pyproject = folder / "pyproject.toml"
        tool = _read(pyproject).get("tool", {}) if pyproject.is_file() else {}
        if isinstance(tool, Mapping) and "qar" in tool:  # (tool = 1979-05-27 is no table: not qar's file)
            return load(pyproject, environ=environ)
    return Config({})


def load(path: str | Path, *, environ: Mapping[str, str] | None = None) -> Config:
    """The defaults of one ``qar.toml`` (``[defaults]`` and ``[store] url``) or ``pyproject.toml``
    (``[tool.qar]``)."""
    path = Path(path)
    if not path.exists():
        raise UsageError(f"config file {str(path)!r} does not exist; check ${CONFIG_ENV} or --config")
    return from_data(_read(path), path, environ=environ)


def from_data(
    data: Mapping[str, Any],
    path: Path,
    *,
    environ: Mapping[str, str] | None = None,
    problems: scans.Problems | None = None,
) -> Config:
    """The defaults in ``data``, the parsed ``path``. With ``problems``, every error is collected
    there (each with the path of its key) instead of the first raised."""
    where = path.name
    if path.name == "pyproject.toml":
        tool = data.get("tool", {})
        table, at, given = "[tool.qar]", ("tool.qar",), tool.get("qar", {}) if isinstance(tool, Mapping) else None
        store_at: tuple[str, ...] = (*at, "store")
        given = dict(given) if isinstance(given, Mapping) else given
        store = given.pop("store", None) if isinstance(given, dict) else None
    else:
        table, at, given, store_at = "[defaults]", ("defaults",), data.get("defaults", {}), ("store",)
        store = data.get("store")
        store = store.get("url") if isinstance(store, Mapping) else store
    # Checked as a scan's [defaults] are, so a bad value reads the same in both places.
    also = ("store",) if path.name == "pyproject.toml" else ()  # (popped above; named to a misspelling)
    values, null_tokens = scans.defaults_of(problems, at, given, table, where, also)
    if null_tokens is not None:
        values["null_tokens"] = list(null_tokens)
    # ${NAME} substituted, no literal password, a file relative to this one: as a scan's
    env = scans._Env(os.environ if environ is None else environ, where)
    if (store := scans.store_of(problems, store_at, store, "store", env, path.resolve().parent)) is not None:
        values["store"] = store
    for key in ("columns", "exclude"):
        if isinstance(values.get(key), str):
            values[key] = [v.strip() for v in values[key].split(",") if v.strip()]
    return Config(values, path.resolve(), table)


def _read(path: Path) -> dict[str, Any]:
    return user_files.read_toml(path, "config file")


def resolve(config: Config, *, environ: Mapping[str, str] | None = None) -> list[Setting]:
    """Each key's value and where it came from: its variable, the file, or the default."""
    environ = os.environ if environ is None else environ
    out = []
    for key, default in KEYS.items():
        env = ENVVARS[key]
        if environ.get(env):
            out.append(Setting(key, environ[env], f"${env}", env))
        elif key in config.values:
            origin = f"{config.path} [store] url" if key == "store" and config.table == "[defaults]" else config.origin
            out.append(Setting(key, config.values[key], origin, env))
        else:
            out.append(Setting(key, default, "built-in default", env))
    if environ.get(URL_ENV):
        out.append(Setting("source", environ[URL_ENV], f"${URL_ENV}", URL_ENV))
    return out


def default_map(config: Config, commands: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """click's ``default_map`` for ``commands`` (name → click command): each config key goes to
    every command with a parameter of that name and meaning — one whose variable is the key's
    (``qar risk -p``, read from QAR_RISK_P, is a different p and is left alone)."""
    out: dict[str, dict[str, Any]] = {}
    for name, command in commands.items():
        params = {p.name: p for p in getattr(command, "params", ())}
        picked = {
            k: v
            for k, v in config.values.items()
            if k in params and getattr(params[k], "envvar", None) in (None, ENVVARS[k])
        }
        if name == "scan":  # (scan reads the found store itself: a scan config's own [store] comes first)
            picked.pop("store", None)
        if picked:
            out[name] = picked
    return out


def check_file(path: str | Path) -> dict[str, Any]:
    """``qar config --check``: one qar.toml, or the ``[tool.qar]`` table of a pyproject.toml, read by
    the loader qar reads it with (``qar scan``'s, or the commands' for a pyproject.toml): its
    parsed content, or a UsageError (exit 2) listing every error that loader finds, each with the
    sentence ``qar scan`` (which stops at the first) prints for it."""
    path = Path(path)
    data = user_files.read_toml(path, "--check")
    problems = scans.Problems()
    if path.name != "pyproject.toml":
        scans.parse_config(data, path=str(path), problems=problems, require_scans=False)
    elif isinstance(data.get("tool"), dict) and "qar" in data["tool"]:
        from_data(data, path, problems=problems)
    else:
        raise UsageError(
            f"{path.name} has no [tool.qar] table; add one (e.g. [tool.qar] then p = 3) or check a qar.toml"
        )
    found = [message.removeprefix(f"{path.name}: ") for _, message in problems.found]
    if len(found) == 1:
        raise UsageError(f"{path.name}: {found[0]}")
    if found:
        raise UsageError(f"{path.name} has {len(found)} errors:" + "".join(f"\n  {error}" for error in found))
    return data
