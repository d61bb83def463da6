"""The quick loop (``-m "not heavy"``) keeps one test of each slow end-to-end run: each test that
conftest.HEAVY_KEEP names exists, so a rename cannot drop a kind from the quick loop unseen."""

from __future__ import annotations

import ast
import re

import pytest
from conftest import HEAVY_KEEP, REPO


@pytest.mark.parametrize("kind", sorted(HEAVY_KEEP))
def test_the_representative_of_each_heavy_kind_exists(kind):
    path, name = HEAVY_KEEP[kind].split("::")
    tree = ast.parse((REPO / path).read_text(encoding="utf-8"))
    functions = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    assert re.sub(r"\[.*\]$", "", name) in functions, HEAVY_KEEP[kind]
