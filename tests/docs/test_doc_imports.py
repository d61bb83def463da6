"""Every name a page's Python imports from qar_sql exists: docs/report.md's "Adding a section"
imported ``register_section``, removed from ``qar_sql.output.html`` since (ImportError)."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def imports() -> list[tuple[str, str, str]]:
    """(page, module, name) of each ``from qar_sql… import name`` and (page, module, "") of each
    ``import qar_sql…`` in the pages' python blocks."""
    out = []
    for page in PAGES:
        for block in re.findall(r"^```python\n(.*?)^```", page.read_text(encoding="utf-8"), flags=re.M | re.S):
            for module, names in re.findall(r"^\s*from (qar_sql[\w.]*) import \(?([^)\n]+)", block, flags=re.M):
                out += [(page.name, module, n.split(" as ")[0].strip()) for n in names.split(",") if n.strip()]
            out += [(page.name, m, "") for m in re.findall(r"^\s*import (qar_sql[\w.]*)", block, flags=re.M)]
    return out


@pytest.mark.parametrize(("page", "module", "name"), imports())
def test_a_name_a_page_imports_exists(page, module, name):
    loaded = importlib.import_module(module)
    assert not name or hasattr(loaded, name), f"{page} imports {name} from {module}, which has no such name"
