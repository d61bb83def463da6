"""The command line's behaviour lock (issue 25): every ``--help`` and a fixed set of commands on
the demo, adult.csv and the driver licences, byte for byte against tests/cli/snapshots/.

One test per case of scripts/cli_snapshots.py, each command run by the script's own ``run`` (a
fresh ``qar`` process in one working directory, as ``--check`` runs it), after the stage-0 cases
that make what the others read. One test per case, not one for all: a failure names its case, and
the file's hundred tests put it first in pytest-xdist's queue (``--dist loadfile`` hands out the
files with the most tests first), not last, where its two minutes kept one worker busy alone.

A failure prints the unified diff. When a change is meant to alter output, regenerate the
snapshots with ``python scripts/cli_snapshots.py --update`` and review the diff (CONTRIBUTING.md).
"""

from __future__ import annotations

import importlib.util
import sys
import tempfile
from pathlib import Path

import pytest
from conftest import REPO

SCRIPT = REPO / "scripts" / "cli_snapshots.py"


def _script():
    spec = importlib.util.spec_from_file_location("cli_snapshots", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["cli_snapshots"] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


snapshots = _script()
CASES = snapshots.help_cases() + snapshots.cases()


@pytest.fixture(scope="module")
def folder():
    """The working directory of every case (the script's: the same prefix, so the same path
    length wherever an output wraps), holding what the stage-0 cases made; their texts."""
    with tempfile.TemporaryDirectory(prefix="qar-snapshots-") as name:
        tmp = Path(name)
        snapshots.prepare(tmp)
        env = snapshots.environment()
        # in order: the second store run must follow the first
        made = {c.name: snapshots.run(c, tmp, env, snapshots.THREADS) for c in CASES if c.stage == 0}
        yield tmp, env, made


def _check(folder, case) -> None:
    tmp, env, made = folder
    text = made[case.name] if case.name in made else snapshots.run(case, tmp, env, snapshots.THREADS)
    diff = snapshots.difference(case.name, text)
    assert not diff, diff[-20000:]


@pytest.mark.parametrize("case", [c for c in CASES if not c.data], ids=lambda c: c.name)
def test_help_and_demo_commands_match_their_snapshots(folder, case):
    _check(folder, case)


@pytest.mark.shared_data
@pytest.mark.parametrize("case", [c for c in CASES if c.data], ids=lambda c: c.name)
def test_shared_dataset_commands_match_their_snapshots(shared_data, folder, case):
    if not snapshots.DATA[case.data].is_file():
        pytest.skip(f"{snapshots.DATA[case.data]} is absent (shared data not on this machine)")
    _check(folder, case)


def test_every_snapshot_has_its_case():
    assert not snapshots.stale()


def test_check_of_every_case_ends_with_the_stale_snapshots(monkeypatch, capsys):
    """``--check`` of every case reaches its last step, the snapshots no case makes (a local
    name shadowed stale() there: UnboundLocalError after every comparison). The commands are not
    run here: each case "prints" its snapshot."""
    texts = {c.name: (snapshots.SNAPSHOTS / f"{c.name}.txt").read_text(encoding="utf-8") for c in CASES}
    monkeypatch.setattr(snapshots, "execute", lambda chosen, jobs, threads: {c.name: texts[c.name] for c in chosen})
    monkeypatch.setattr(snapshots, "select", lambda only, inputs="all": (CASES, []))
    assert snapshots.main(["--check"]) == 0
    assert f"{len(CASES)} of {len(CASES)} identical" in capsys.readouterr().out


def test_the_temporary_folder_is_masked_in_markdown_too(tmp_path):
    """mkdtemp's random names hold "_", which Markdown output escapes; a CI run failed on one."""
    from qar_sql.output.report_md import escape_md

    folder = tmp_path / "qar-snapshots-0t_pwc08"
    text = f"| store | {escape_md(str(folder / 'scan_store.duckdb'))} |\n{folder}/demo.duckdb"
    assert snapshots.mask(text, folder) == "| store | $TMP/scan\\_store.duckdb |\n$TMP/demo.duckdb"


@pytest.mark.parametrize(
    ("expected", "text", "same"),
    [
        # a fresh machine against the snapshots (adult.csv's audit and records, the demo's uniqueness)
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
    """A fresh machine (DuckDB 2.0.1 from pip, numpy on an AVX-512 CPU) printed 11 numbers of the
    snapshots with other last digits: such a number may move there, nothing else may."""
    assert snapshots.same_but_last_digits(expected, text) is same
