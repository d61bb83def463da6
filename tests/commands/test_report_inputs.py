"""``qar report``'s inputs are checked before the first query (a bad treatments file, a
--sensitive column among the audited ones), its output goes where -o says in the format -f
says, and the Markdown report carries the user's text as text."""

from __future__ import annotations

import re

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


QID = 'qid = ["age", "sex"]\n'
BANDS = '[treatments.a]\ncolumn = "age"\nkind = "bands"\nwidth = 10\n'


@pytest.mark.parametrize(
    "text,message",
    [
        (QID + BANDS.replace('"age"', '"agee"'), "bad.toml (line 3): treatments.a.column = 'agee' is not a column of"),
        (BANDS, "no quasi-identifier to count singletons on"),
        (QID.replace('"sex"', '"sexx"') + BANDS, "QID column 'sexx' is not a column of"),
        (QID + 'key = "id"\n' + BANDS, "bad.toml (line 2): key names 'id', which is not a column of"),
    ],
)
def test_treatments_naming_no_column_fail_before_the_audit(csv, tmp_path, no_audit, text, message):
    """These need the table's column names only; the report found them after its audit and
    records passes (20 s on adult), where qar whatif refuses them at once."""
    bad = tmp_path / "bad.toml"
    bad.write_text(text)
    r = CliRunner().invoke(cli, ["report", str(csv), *RISK, "-T", str(bad), "-o", str(tmp_path / "r.html")])
    assert r.exit_code == 2, r.output
    assert message in r.output and "Traceback" not in r.output
    assert not (tmp_path / "r.html").exists()


def test_a_sensitive_column_among_the_audited_fails_before_the_audit(csv, tmp_path, no_audit):
    r = CliRunner().invoke(cli, ["report", str(csv), *RISK, "--sensitive", "dis", "-o", str(tmp_path / "r.html")])
    assert r.exit_code == 2, r.output
    assert "--sensitive column 'dis' is also a quasi-identifier column; a column cannot be both" in r.output
    assert "add --exclude dis" in r.output


@pytest.mark.parametrize(
    ("roles", "message"),
    [
        (["--weight", "dis", "--sensitive", "dis"], "column 'dis' is both the weight and a sensitive column"),
        (["--sensitive", "dis", "--sensitive", "dis"], "sensitive column 'dis' is listed twice in --sensitive"),
    ],
)
def test_the_classic_roles_are_checked_before_the_audit(csv, tmp_path, no_audit, roles, message):
    """qar risk's rules of the roles (measures.classic.check_roles), in the report before its passes."""
    r = CliRunner().invoke(cli, ["report", str(csv), *RISK, "--exclude", "dis", *roles, "-o", str(tmp_path / "r.html")])
    assert r.exit_code == 2 and message in r.output, r.output


@pytest.mark.parametrize("option", ["--sensitive", "--weight"])
def test_a_sensitive_or_weight_column_that_does_not_exist_fails_before_the_audit(csv, tmp_path, no_audit, option):
    """Found by the classic section, after the audit and records passes (15 s on adult)."""
    r = CliRunner().invoke(cli, ["report", str(csv), *RISK, option, "dsi", "-o", str(tmp_path / "r.html")])
    assert r.exit_code == 2, r.output
    assert f"{option} column 'dsi' not found; did you mean 'dis'?" in r.output


def test_an_output_ending_in_a_slash_fails_before_the_audit(csv, tmp_path, no_audit):
    """Path('out/') is 'out': the folder check passed and the write failed after all the work (23 s on adult)."""
    out = f"{tmp_path / 'out'}/"
    r = CliRunner().invoke(cli, ["report", str(csv), *RISK, "-o", out])
    assert r.exit_code == 2, r.output
    assert r.output.strip() == f"Error: --output {out!r} ends in '/', so it names a folder; name a file in it"


def test_a_population_smaller_than_the_table_fails_before_the_audit(csv, tmp_path, no_audit):
    """The classic section compared it with the rows after the audit and records passes (27 s on
    adult); one count of the rows comes first."""
    r = CliRunner().invoke(cli, ["report", str(csv), *RISK, "--population", "150", "-o", str(tmp_path / "r.html")])
    assert r.exit_code == 2, r.output
    assert "--population 150 must be a whole number at least the number of rows (200)" in r.output
    assert not (tmp_path / "r.html").exists()


@pytest.mark.parametrize(
    "options,message",
    [
        (["--compare", "missing.csv"], "--compare file 'missing.csv' does not exist; check the path"),
        (["--compare", "."], "--compare '.' is not a file; name a CSV, Parquet or DuckDB file"),
        (["--compare", "t.csv", "--link", "id"], "link column 'id' is not in the original (age, sex, zip, dis)"),
    ],
)
def test_a_compare_file_or_link_that_does_not_exist_fails_before_the_audit(
    csv, tmp_path, monkeypatch, no_audit, options, message
):
    """Found by the comparison section, after the audit and records passes (18 s on adult)."""
    pytest.importorskip("saiph")
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(cli, ["report", str(csv), *RISK, *options, "-o", "r.html"])
    assert r.exit_code == 2, r.output
    assert message in r.output and "Traceback" not in r.output


HOSTILE = "<img src=https://evil.example/x.png> ![x](https://evil.example/y.png) [a](javascript:x) <!-- \u202eabc"


def test_the_markdown_report_shows_user_text_as_text(csv, tmp_path, monkeypatch):
    """--title/--owner/--purpose: no raw HTML, no remote image, no link, no comment that hides the
    rest; a ``` in the command line cannot close its fence; bidi controls shown as code points."""
    out = tmp_path / "r.md"
    argv = ["report", str(csv), *RISK, "--title", HOSTILE, "--owner", "a|b", "--purpose", "x ```` y", "-o", str(out)]
    monkeypatch.setattr("sys.argv", ["qar", *argv])
    r = CliRunner().invoke(cli, argv)
    assert r.exit_code == 0, r.output
    md = out.read_text()
    # The command line holds a run of 4 backticks: its fence is 5 long, and closes after it.
    (command,) = [b for b in md.split("\n\n") if b.startswith("`````\n")]
    assert command.endswith("\n`````") and "x ```` y" in command
    assert "\u202e" not in md
    rest = md.replace(command, "")
    for raw in ("<img", "<!--", "!["):  # outside the code block, where they would act
        assert raw not in rest, raw
    assert not re.search(r"(?<!\\)\]\(", rest)  # no link or image: every ] escaped
    assert "&lt;img src=https://evil.example/x.png&gt;" in md and "&lt;\\!-- ⟦U+202E⟧abc" in md
    assert "## Sign-off" in md.split("&lt;\\!--")[-1]  # nothing after the comment is hidden
    page = CliRunner().invoke(cli, [*argv[:-2], "-o", "-", "-f", "html"]).stdout
    assert "\u202e" not in page and "⟦U+202E⟧abc" in page


def test_output_dash_is_stdout_and_the_format_follows_the_suffix(csv, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(cli, ["report", str(csv), *RISK, "-o", "-", "-f", "md"])
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith("# ") and "Wrote the report to stdout" in r.stderr
    assert not (tmp_path / "-").exists()
    # A suffix naming another format than -f is refused before any work; without -f it decides.
    r = CliRunner().invoke(cli, ["report", str(csv), *RISK, "-f", "md", "-o", "x.html"])
    assert r.exit_code == 2 and "-o 'x.html' ends in .html but --format is md; name the file x.md" in r.output
    assert not (tmp_path / "x.html").exists()
    assert CliRunner().invoke(cli, ["report", str(csv), *RISK, "-o", "x.md"]).exit_code == 0
    assert (tmp_path / "x.md").read_text().startswith("# ")
    assert CliRunner().invoke(cli, ["report", str(csv), *RISK, "-o", "x.html"]).exit_code == 0
    assert (tmp_path / "x.html").read_text().startswith("<!DOCTYPE html>")


@pytest.mark.parametrize("name", ["report.pdf", "report.json", "r.TXT"])
def test_a_suffix_of_a_format_the_report_is_not_is_refused(csv, tmp_path, monkeypatch, name):
    """-o report.pdf wrote an HTML page into report.pdf."""
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(cli, ["report", str(csv), *RISK, "-o", name])
    stem, suffix = name.rsplit(".", 1)
    assert r.exit_code == 2, r.output
    assert r.output.startswith(
        f"Error: -o {name!r} ends in .{suffix.lower()}, a format qar report does not write; name the file {stem}.html"
    )
    assert not (tmp_path / name).exists()


def test_the_parameters_table_lists_values_and_the_threshold_does_not_gate(csv, tmp_path):
    out = tmp_path / "r.md"
    r = CliRunner().invoke(
        cli,
        ["report", str(csv), *RISK, "--exclude", "dis", "--sensitive", "dis", "--fail-above", "0.01", "-o", str(out)],
    )
    assert r.exit_code == 0, r.output  # above the threshold: the page says so, the command exits 0
    (row,) = [ln for ln in out.read_text().splitlines() if ln.startswith("| classic |")]
    assert "sensitive = dis" in row and "weight = —" in row
    help_text = " ".join(CliRunner().invoke(cli, ["report", "--help"]).output.split())
    assert "still exits 0" in help_text


def test_a_figure_names_columns_with_backslashes_and_brackets_as_written(tmp_path):
    """The figure's <title> was put in by a regex: a name's backslash was read as an escape
    (exit 3 after the whole report) and a '>' of a name ended the <svg> tag inside its label."""
    pytest.importorskip("matplotlib")
    names = ["c\\d", "z<s>x", "age", "e", "f"]
    path = tmp_path / "t.csv"
    path.write_text(
        ",".join(f'"{n}"' for n in names)
        + "\n"
        + "".join(f"{i % 41},{i % 7},{(i * 31) % 13},{i % 3},{(i * i) % 11}\n" for i in range(200))
    )
    out = tmp_path / "r.html"
    r = CliRunner().invoke(cli, ["report", str(path), "-p", "2", "--pi-u", "0.3", "-q", "-o", str(out)])
    assert r.exit_code == 0, r.output
    page = out.read_text()
    tags = re.findall(r"<svg [^>]*>", page)
    assert tags and all(t.startswith('<svg role="img" aria-label="') for t in tags)
    labels = re.findall(r'<svg role="img" aria-label="([^"]*)"[^>]*><title>([^<]*)</title>', page)
    assert len(labels) == len(tags) and all(a == t for a, t in labels)
    assert any("c\\d" in a and "z&lt;s&gt;x" in a for a, _ in labels), labels
