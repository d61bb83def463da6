"""The package's shape: imports run one way, and statistics stay free of database code.

Every import is counted, also those inside functions (a lazy import is still a dependency).
A unit is a subpackage (``qar_sql.ranking``) or a top-level module (``qar_sql.errors``); the
package root (the public API) and ``__main__`` are left out as importers, since they import
everything by design.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "qar_sql"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _imports(name: str, path: Path) -> set[str]:
    """Every qar_sql module ``name`` imports, resolved to a module of the package."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]
        else:
            continue
        found |= {t for t in targets if t in MODULES and t != name}
    return found


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _unit(module: str) -> str:
    return ".".join(module.split(".")[:2])


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a path, or None (iterative depth-first search)."""
    state: dict[str, int] = {}
    for start in graph:
        if state.get(start):
            continue
        stack = [(start, iter(sorted(graph[start])))]
        path = [start]
        state[start] = 1
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                state[node] = 2
                stack.pop()
                path.pop()
            elif state.get(child) == 1:
                return path[path.index(child) :] + [child]
            elif not state.get(child):
                state[child] = 1
                path.append(child)
                stack.append((child, iter(sorted(graph.get(child, ())))))
    return None


def test_no_module_imports_another_in_a_cycle():
    assert _cycle(GRAPH) is None, " -> ".join(_cycle(GRAPH) or [])


def test_no_subpackage_imports_another_in_a_cycle():
    units: dict[str, set[str]] = defaultdict(set)
    for module, targets in GRAPH.items():
        if module in ("qar_sql", "qar_sql.__main__"):
            continue
        units[_unit(module)] |= {_unit(t) for t in targets if _unit(t) not in (_unit(module), "qar_sql")}
    assert _cycle(dict(units)) is None, " -> ".join(_cycle(dict(units)) or [])


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith("qar_sql.stats")))
def test_statistics_import_no_database_code(module):
    tree = ast.parse(MODULES[module].read_text())
    names = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    names |= {(n.module or "").split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and not n.level}
    assert not names & {"sqlalchemy", "duckdb", "psycopg", "pyarrow"}, f"{module} imports {names}"
    # (qar_sql.lazy: the lazy loading of submodules every package __init__ has; it imports nothing)
    inner = {t for t in GRAPH[module] if not t.startswith(("qar_sql.stats", "qar_sql.errors", "qar_sql.lazy"))}
    assert not inner, f"{module} imports {inner}: statistics use only numpy/scipy and qar_sql.errors"


def test_the_cycle_finder_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None
