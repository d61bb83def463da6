"""The shipped examples run as printed (issue 16, item 11), and the text output reads the risk
out in plain language."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from qar_sql.cli.main import cli

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def checkout(tmp_path_factory) -> Path:
    """A copy of the examples folder with `qar demo` run beside it, as in the repository root."""
    root = tmp_path_factory.mktemp("root")
    shutil.copytree(REPO / "examples", root / "examples")
    return root


def invoke(args, cwd: Path, monkeypatch):
    monkeypatch.chdir(cwd)
    r = CliRunner().invoke(cli, args)
    assert "Traceback" not in r.output
    return r


def test_qar_demo_then_the_example_scan(checkout, monkeypatch):
    # README: `qar demo` writes qar_demo.duckdb in the working directory; the example scan must
    # find it from the repository root (it looked next to the example file and exited 2).
    r = invoke(["demo", "--rows", "20000", "-q"], checkout, monkeypatch)
    assert r.exit_code == 0, r.output
    r = invoke(["scan", "examples/qar.toml", "-f", "json"], checkout, monkeypatch)
    assert r.exit_code == 0, r.output
    report = json.loads(r.stdout)
    assert [s["status"] in ("ok", "warn") and s["risk"] is not None for s in report["scans"]] == [True, True]
    assert Path(report["store"]) == checkout / "qar_results.duckdb"  # relative to the file: ../
    # the same from another working directory: paths are relative to the file, not the cwd
    r = invoke(["scan", str(checkout / "examples" / "qar.toml"), "--no-store"], checkout / "examples", monkeypatch)
    assert r.exit_code == 0, r.output


def test_the_example_treatments(checkout, monkeypatch):
    if not (checkout / "qar_demo.duckdb").exists():
        invoke(["demo", "--rows", "20000", "-q"], checkout, monkeypatch)
    r = invoke(
        ["whatif", "qar_demo.duckdb", "-t", "population", "-T", "examples/treatments.toml", "--no-risk", "-q"],
        checkout,
        monkeypatch,
    )
    assert r.exit_code == 0, r.output


def test_audit_text_says_how_to_read_the_risk(checkout, monkeypatch):
    if not (checkout / "qar_demo.duckdb").exists():
        invoke(["demo", "--rows", "20000", "-q"], checkout, monkeypatch)
    args = ["audit", "qar_demo.duckdb", "-t", "population", "-x", "person_id", "-q"]
    doc = json.loads(invoke(args + ["-f", "json"], checkout, monkeypatch).stdout)
    risk = doc["risk"]
    text = invoke(args, checkout, monkeypatch).stdout
    assert (
        f"Read it as: T̂ = {risk:.3g} is the level of θ that a quasi-identifier made of 3 of these columns exceeds "
        "with probability α = 1%, extrapolated from the tail of the largest θ; θ = distinct value combinations / "
        "rows, a count per record, not a number of people."
    ) in text
    # beside it, in people: the records unique on the riskiest QI, S and S/L from the QIs' own counts
    worst = max(doc["qis"], key=lambda q: (q["singletons"], -q["index"]))
    assert (
        f"In people: {worst['singletons']:,} records ({100 * worst['singletons'] / doc['rows']:.3g}%) are unique "
        f"on the riskiest quasi-identifier ({', '.join(worst['columns'])})"
    ) in text
    assert "not a confidence interval" in text
    assert "Read it as: T̂ =" in invoke(args + ["-f", "markdown"], checkout, monkeypatch).stdout


def test_the_compare_help_example_runs_as_written(checkout, monkeypatch):
    """`qar compare --help`'s demo example (issue 31): without -x person_id both risks were "—"
    (the key is one value per row: no tail) and it exited 1."""
    import shlex

    from qar_sql.cli.examples import EXAMPLES

    if not (checkout / "qar_demo.duckdb").exists():
        invoke(["demo", "--rows", "20000", "-q"], checkout, monkeypatch)
    (line,) = [x for x in EXAMPLES["compare"] if "qar_demo.duckdb" in x]
    r = invoke([*shlex.split(line)[1:], "-q", "-f", "json"], checkout, monkeypatch)
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["risk_original"] is not None and doc["risk_treated"] is not None
    assert doc["risk_treated"] < doc["risk_original"]
