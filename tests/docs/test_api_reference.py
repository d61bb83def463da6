"""The API reference (mkdocstrings) beside the hand-written pages, and the ``docs`` extra that
builds it: every public function of ``qar_sql`` has its ``:::`` entry, the page is in the nav,
and the extra names mkdocs-material and mkdocstrings' Python handler."""

from __future__ import annotations

import tomllib
from pathlib import Path

import qar_sql

REPO = Path(__file__).resolve().parents[2]


def test_every_public_function_is_in_the_reference():
    page = (REPO / "docs" / "api-reference.md").read_text(encoding="utf-8")
    functions = [
        n for n in qar_sql.__all__ if callable(getattr(qar_sql, n)) and not isinstance(getattr(qar_sql, n), type)
    ]
    functions = [n for n in functions if n[0].islower() and getattr(qar_sql, n).__module__ != "types"]
    assert functions and all(f"::: qar_sql.{n}\n" in page for n in functions), functions
    assert "api-reference.md" in (REPO / "mkdocs.yml").read_text(encoding="utf-8")


def test_the_docs_extra_installs_what_the_build_needs():
    extras = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    names = " ".join(extras["docs"])
    assert "mkdocs-material" in names and "mkdocstrings[python]" in names
    assert any(r.startswith("qar-sql[") and "docs" in r for r in extras["dev"])
