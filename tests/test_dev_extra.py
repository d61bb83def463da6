"""The ``dev`` extra is the test suite's whole environment (issue 14, item 7): every package a
test imports (or asks ``pytest.importorskip`` for) is a dependency of qar-sql or of ``dev``, so
``pip install '.[dev]'`` in a fresh virtual environment runs the suite, and ``dev`` names the
other extras instead of repeating their pins."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
EXTRAS = PROJECT["optional-dependencies"]
#: Packages of opt-in tests, outside the suite ``scripts/test.sh`` runs: module → why.
OPT_IN = {"dbt": "tests/compliance/test_dbt.py's real dbt build runs only with QAR_TEST_DBT=1 (docs/compliance.md#dbt)"}


def _name(requirement: str) -> str:
    """The normalised distribution name of a requirement string (PEP 503)."""
    return re.sub(r"[-_.]+", "-", re.match(r"[A-Za-z0-9_.\-]+", requirement).group(0)).lower()


def _declared() -> set[str]:
    """The distributions ``pip install '.[dev]'`` asks for by name: the dependencies, dev's own,
    and those of the extras dev names (``qar-sql[postgres,plot,…]``)."""
    out = {_name(r) for r in PROJECT["dependencies"]}
    for req in EXTRAS["dev"]:
        if _name(req) == "qar-sql":
            for extra in re.search(r"\[(.*)\]", req).group(1).split(","):
                out |= {_name(r) for r in EXTRAS[extra.strip()]}
        else:
            out.add(_name(req))
    return out


def _imported() -> dict[str, str]:
    """Top-level module → the first test file importing it outside a ``try`` (an import a test
    guards, such as an optional package whose absence it checks, is not a requirement)."""
    local = {p.stem for p in (ROOT / "tests").glob("*.py")} | {"tests", "qar_sql"}
    found: dict[str, str] = {}
    for path in sorted((ROOT / "tests").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        guarded = {id(n) for t in ast.walk(tree) if isinstance(t, ast.Try) for b in t.body for n in ast.walk(b)}
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import) and id(node) not in guarded:
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and id(node) not in guarded:
                names = [node.module or ""]
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "importorskip"
                and node.args
                and isinstance(node.args[0], ast.Constant)
            ):
                names = [node.args[0].value]
            for name in names:
                top = name.split(".")[0]
                if top and top not in local and top not in sys.stdlib_module_names:
                    found.setdefault(top, path.name)
    return found


def test_every_package_the_tests_import_is_declared():
    # Module → distribution from the installed metadata; a module that maps to nothing here
    # is checked under its own name (and fails unless declared, which is the point).
    dists = importlib.metadata.packages_distributions()
    declared = _declared()
    missing = {
        module: where
        for module, where in _imported().items()
        if module not in OPT_IN and not {_name(d) for d in dists.get(module, [module])} & declared
    }
    assert not missing, f"imported by the tests but not in the dependencies or the dev extra: {missing}"


def test_dev_names_the_extras_and_carries_the_test_only_packages():
    dev = EXTRAS["dev"]
    (own,) = [r for r in dev if _name(r) == "qar-sql"]
    named = {e.strip() for e in re.search(r"\[(.*)\]", own).group(1).split(",")}
    assert {"postgres", "plot", "pls", "arrow", "compare", "progress"} <= named
    # No pin repeated: a package of a named extra is not listed again in dev.
    again = {_name(r) for r in dev} & {_name(r) for e in named for r in EXTRAS[e]}
    assert not again
    assert "mpmath" in {_name(r) for r in dev}  # the exact oracle of tests/stats/test_evt.py
