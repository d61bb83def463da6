"""The `qar sql` commands that docs/dbt.md and the dbt package's README show inline run as
written (`qar sql` reads no source, so they need no warehouse)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from qar_sql.cli.main import cli

REPO = Path(__file__).resolve().parents[2]
PAGES = [REPO / "docs" / "dbt.md", REPO / "integrations" / "dbt" / "README.md"]


def inline_commands(page: Path) -> list[str]:
    """Every `qar sql ...` code span of the page, its line breaks read as spaces."""
    return [" ".join(m.split()) for m in re.findall(r"`(qar sql [^`]+)`", page.read_text(encoding="utf-8"))]


def test_the_pages_show_a_command():
    assert inline_commands(PAGES[0])


@pytest.mark.parametrize("command", [c for page in PAGES for c in inline_commands(page)])
def test_every_shown_qar_sql_command_runs(command):
    r = CliRunner().invoke(cli, shlex.split(command)[1:])
    assert r.exit_code == 0, r.output
    assert r.output.lstrip().lower().startswith(("--", "with", "select")), r.output[:200]
