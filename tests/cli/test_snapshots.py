"""The command line's behaviour lock (issue 25): every ``--help`` and a fixed set of commands on
the demo, adult.csv and the driver licences, byte for byte against tests/cli/snapshots/.

A failure prints the unified diff. When a change is meant to alter output, regenerate the
snapshots with ``python scripts/cli_snapshots.py --update`` and review the diff (CONTRIBUTING.md).
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import REPO, SHARED_DATA

SCRIPT = REPO / "scripts" / "cli_snapshots.py"


def _check(inputs: str) -> None:
    env = {**os.environ, "QAR_SHARED_DATA": str(SHARED_DATA)}
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--check", "--inputs", inputs], cwd=REPO, env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout[-20000:] + proc.stderr[-5000:]


def test_help_and_demo_commands_match_their_snapshots():
    _check("demo")


@pytest.mark.shared_data
def test_shared_dataset_commands_match_their_snapshots(shared_data):
    _check("shared")


def test_the_temporary_folder_is_masked_in_markdown_too(tmp_path):
    """mkdtemp's random names hold "_", which Markdown output escapes; a CI run failed on one."""
    import importlib.util

    from qar_sql.output.report_md import escape_md

    spec = importlib.util.spec_from_file_location("cli_snapshots", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["cli_snapshots"] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    folder = tmp_path / "qar-snapshots-0t_pwc08"
    text = f"| store | {escape_md(str(folder / 'scan_store.duckdb'))} |\n{folder}/demo.duckdb"
    assert module.mask(text, folder) == "| store | $TMP/scan\\_store.duckdb |\n$TMP/demo.duckdb"


@pytest.mark.parametrize(
    ("expected", "text", "same"),
    [
        # DuckDB 2.0.1 against the snapshots made on 1.x (adult.csv's audit, the demo's uniqueness)
        ('"sex": 0.11440461382169613,', '"sex": 0.11440461382169612,', True),
        ("&#34;pearson&#34;: 0.5847177563526545", "&#34;pearson&#34;: 0.584717756352661", True),
        ("x 1.2345678901234567e-05 y", "x 1.2345678901234568e-05 y", True),
        ('"sex": 0.11440461382169613,', '"sex": 0.11440461392169613,', False),  # the 11th digit
        ('"sex": 0.11440461382169613,', '"sax": 0.11440461382169612,', False),  # the text around
        ('"sex": 0.1144,', '"sex": 0.1145,', False),  # rounded output is text
        ("a 1.5 b", "a 1.50 b", False),
        ("x 0.000012 y", "x 0.000013 y", False),
    ],
)
def test_full_precision_numbers_match_to_12_digits_and_nothing_else(expected, text, same):
    """The snapshots were made on DuckDB 1.x; 2.0 sums doubles in another order, and pip installs
    the newest: a number printed to full precision may move in its last digits, nothing else may."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("cli_snapshots", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["cli_snapshots"] = module
    spec.loader.exec_module(module)
    assert module.same_but_last_digits(expected, text) is same
