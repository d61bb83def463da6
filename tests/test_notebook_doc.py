"""docs/notebook.md is a notebook session that runs (issue 14, item 3): each ``python`` cell is
executed in order in one namespace, and what it prints, or the repr of its last expression as
Jupyter shows it, must equal the ``text`` block that follows it on the page."""

from __future__ import annotations

import ast
import contextlib
import io
import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[1] / "docs" / "notebook.md"
# A python cell and, when it shows something, the text block right after it.
CELLS = re.findall(
    r"^```python\n(.*?)^```\n\n(?:```text\n(.*?)^```\n)?", DOC.read_text(encoding="utf-8"), flags=re.M | re.S
)


def _run(cell: str, namespace: dict) -> str:
    """Run a cell as Jupyter does: its statements, then its last expression's repr (unless None)."""
    tree = ast.parse(cell)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(tree, DOC.name, "exec"), namespace)
        if last is not None:
            value = eval(compile(ast.Expression(last.value), DOC.name, "eval"), namespace)
            if value is not None:
                print(repr(value))
    return out.getvalue()


def test_the_page_has_cells_with_outputs():
    assert len(CELLS) >= 6 and sum(bool(shown) for _, shown in CELLS) >= 6


def test_every_cell_shows_what_the_page_says():
    pytest.importorskip("polars")  # a cell audits a polars DataFrame
    namespace: dict = {}
    for i, (cell, shown) in enumerate(CELLS, 1):
        got = _run(cell, namespace)
        assert got.rstrip("\n") == shown.rstrip("\n"), f"cell {i} of {DOC.name}:\n{cell}\nshowed:\n{got}"
