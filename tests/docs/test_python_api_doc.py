"""docs/python-api.md's examples run: every ```python block, in order, in one namespace, in a
folder holding the demo database the first example reads (issue 14)."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import pytest

from qar_sql.demo import write_population

DOC = Path(__file__).resolve().parents[2] / "docs" / "python-api.md"
BLOCKS = re.findall(r"^```python\n(.*?)^```", DOC.read_text(encoding="utf-8"), flags=re.MULTILINE | re.DOTALL)


def test_the_page_has_examples():
    assert len(BLOCKS) >= 4


@pytest.fixture
def demo_folder(tmp_path, monkeypatch):
    con = duckdb.connect(str(tmp_path / "qar_demo.duckdb"))
    try:
        write_population(con, "population")
    finally:
        con.close()
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_every_python_block_runs(demo_folder, capsys):
    namespace: dict = {}
    for i, block in enumerate(BLOCKS):
        try:
            exec(compile(block, f"{DOC.name} block {i + 1}", "exec"), namespace)
        except Exception as exc:  # name the block, not just the line
            raise AssertionError(f"block {i + 1} of {DOC.name} failed: {exc!r}\n{block}") from exc
    out = capsys.readouterr().out
    # The first example's numbers, as the page prints them.
    assert out.startswith("0.5955192553623638\n286 ")
    assert "[(25,), (373,), (428,)]" in out
    assert "<AuditResult <pandas.DataFrame>: T(p=2, alpha=0.01) = " in out
