"""``qar report``'s inputs are checked before the first query (a bad treatments file, a
--sensitive column among the audited ones), its output goes where -o says in the format -f
says, and the Markdown report carries the user's text as text."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

import qar_sql.commands.report as report_command
from qar_sql.cli.main import cli

ROWS = "age,sex,zip,dis\n" + "".join(f"{20 + i % 37},{'FM'[i % 2]},{i % 7},{'abc'[i % 3]}\n" for i in range(200))
RISK = ["-p", "2", "--pi-u", "0.5", "-q", "--no-records"]


@pytest.fixture
def csv(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text(ROWS)
    return path


@pytest.fixture
def no_audit(monkeypatch):
    """The audit and the records pass fail the test if reached: the check must come first."""

    def reached(*args, **kwargs):
        raise AssertionError("the audit ran before the inputs were checked")

    monkeypatch.setattr(report_command, "audit_relation", reached)
    monkeypatch.setattr(report_command, "compute", reached)


def test_a_bad_treatments_file_fails_before_the_audit(csv, tmp_path, no_audit):
    bad = tmp_path / "bad.toml"
    bad.write_text("[[treatment]]\nbogus = 1\n")
    r = CliRunner().invoke(cli, ["report", str(csv), *RISK, "-T", str(bad), "-o", str(tmp_path / "r.html")])
    assert r.exit_code == 2, r.output
    assert "bad.toml: treatment is not a known top-level key" in r.output
    assert not (tmp_path / "r.html").exists()


def test_a_sensitive_column_among_the_audited_fails_before_the_audit(csv, tmp_path, no_audit):
    r = CliRunner().invoke(cli, ["report", str(csv), *RISK, "--sensitive", "dis", "-o", str(tmp_path / "r.html")])
    assert r.exit_code == 2, r.output
    assert "--sensitive column 'dis' is also a quasi-identifier column of the audit" in r.output
    assert "add --exclude dis" in r.output
