"""Outputs never overwrite what a command reads (issue 31, item 2).

``qar report a.csv -o a.csv``, ``qar records … --output a.csv`` and ``qar scan … --junit
qar_demo.duckdb`` each exited 0 having destroyed their source. One guard
(:func:`qar_sql.guard.check_not_input`) compares every file a command writes with every
file it reads, by resolved real path, before any work: exit 2, one sentence, the input unchanged.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from qar_sql.cli.main import cli
from qar_sql.guard import check_not_input, local_file

ROOT = Path(__file__).resolve().parent.parent
COLUMNS = "age,sex,zip,grade,a,b,c,d"
ROWS = (
    COLUMNS
    + "\n"
    + "".join(
        f"{20 + i % 7},{'FM'[i % 2]},{1000 + i % 5},{i % 3},{i % 4},{i % 6},{i % 9},{i % 2}\n" for i in range(120)
    )
)


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.csv").write_text(ROWS)
    return tmp_path


def refused(args, protected: Path, option: str):
    """Run ``qar args``: exit 2, one sentence naming ``option`` and the fix, ``protected`` unchanged."""
    before = protected.read_bytes()
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output and "unexpected" not in r.output, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"Error: {option} "), r.output
    assert "which this command reads" in r.output and f"give {option} another file name" in r.output, r.output
    assert protected.read_bytes() == before
    return r.output


def test_report_output_over_its_source_is_refused(folder):
    refused(["report", "a.csv", "-p", "2", "--no-records", "-o", "a.csv", "-q"], folder / "a.csv", "--output")


def test_records_output_over_its_source_is_refused(folder):
    refused(
        ["records", "a.csv", "-c", "age,sex,zip,grade,a,b", "-p", "2", "--output", "a.csv", "-q"],
        folder / "a.csv",
        "--output",
    )
    args = [
        "records",
        "a.csv",
        "-c",
        "age,sex,zip,grade,a,b",
        "-p",
        "2",
        "--by",
        "influence",
        "--output",
        "a.csv",
        "-q",
    ]
    refused(args, folder / "a.csv", "--output")
    refused(["records", "a.csv", "--by", "suda", "--output", "a.csv", "-q"], folder / "a.csv", "--output")


def test_risk_per_record_over_its_source_is_refused(folder):
    refused(["risk", "a.csv", "--per-record", "a.csv", "-q"], folder / "a.csv", "--per-record")


def test_a_symlink_to_the_source_either_way_is_refused(folder):
    (folder / "link.csv").symlink_to(folder / "a.csv")
    refused(["report", "link.csv", "-p", "2", "--no-records", "-o", "a.csv", "-q"], folder / "a.csv", "--output")
    refused(["report", "a.csv", "-p", "2", "--no-records", "-o", "link.csv", "-q"], folder / "a.csv", "--output")


def test_relative_and_absolute_paths_of_the_source_are_refused(folder):
    (folder / "sub").mkdir()
    absolute = str(folder / "a.csv")
    refused(["report", "a.csv", "-p", "2", "--no-records", "-o", absolute, "-q"], folder / "a.csv", "--output")
    refused(["report", absolute, "-p", "2", "--no-records", "-o", "sub/../a.csv", "-q"], folder / "a.csv", "--output")
    refused(["report", f"duckdb:///{absolute}", "-o", "./a.csv", "-q"], folder / "a.csv", "--output")


def test_the_treatments_and_config_files_are_inputs_too(folder):
    (folder / "t.toml").write_text('[treatments.age_band]\ncolumn = "age"\nkind = "top"\nvalue = 24\n')
    args = ["report", "a.csv", "-p", "2", "--no-records", "--treatments", "t.toml", "-o", "t.toml", "-q"]
    refused(args, folder / "t.toml", "--output")
    (folder / "qar.toml").write_text("[defaults]\np = 2\n")  # found in the working folder: its defaults apply
    refused(["report", "a.csv", "--no-records", "-o", "qar.toml", "-q"], folder / "qar.toml", "--output")
    cfg = folder / "other.toml"
    cfg.write_text("[defaults]\np = 2\n")
    refused(["--config", str(cfg), "report", "a.csv", "--no-records", "-o", str(cfg), "-q"], cfg, "--output")


def test_compare_and_uniqueness_treatments_cannot_be_overwritten_by_a_plot(folder):
    """A treatments file named like a plot is far-fetched; the guard covers it all the same."""
    t = folder / "t.svg"
    t.write_text('[treatments.age_band]\ncolumn = "age"\nkind = "top"\nvalue = 24\n')
    refused(["uniqueness", "a.csv", "-g", "2", "-T", "t.svg", "--plot", "t.svg", "-q"], t, "--plot")
    refused(["compare", "a.csv", "--treatments", "t.svg", "--plot", "t.svg", "-q"], t, "--plot")


@pytest.fixture
def demo_scan(tmp_path, monkeypatch):
    """examples/qar.toml beside a small qar_demo.duckdb, run from the folder above examples/ as the
    issue did (the config names ../qar_demo.duckdb)."""
    (tmp_path / "examples").mkdir()
    shutil.copy(ROOT / "examples" / "qar.toml", tmp_path / "examples" / "qar.toml")
    con = duckdb.connect(str(tmp_path / "qar_demo.duckdb"))
    con.execute(
        "create table population as select i as person_id, 20 + i % 50 as age, ['F', 'M'][1 + i % 2] as sex, "
        "'r' || (i % 7) as region, 'm' || (i % 3) as marital_status, 'e' || (i % 5) as education, "
        "'o' || (i % 11) as occupation from range(400) t(i)"
    )
    con.close()
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("option", ["--junit", "--markdown"])
def test_scan_summary_over_a_scanned_database_is_refused(demo_scan, option):
    refused(
        ["scan", "examples/qar.toml", "--no-store", option, "qar_demo.duckdb"], demo_scan / "qar_demo.duckdb", option
    )


def test_scan_outputs_over_the_config_or_the_store_are_refused(demo_scan):
    cfg = demo_scan / "examples" / "qar.toml"
    refused(["scan", "examples/qar.toml", "--no-store", "--markdown", str(cfg)], cfg, "--markdown")
    store = demo_scan / "qar_results.duckdb"  # the config's [store], recorded into by this scan
    duckdb.connect(str(store)).close()
    refused(["scan", "examples/qar.toml", "--junit", "qar_results.duckdb"], store, "--junit")


def test_two_outputs_naming_one_file_are_refused(demo_scan):
    """The Markdown replaced the JUnit file (exit 0), which a CI's JUnit reader then failed to parse."""
    r = CliRunner().invoke(
        cli, ["scan", "examples/qar.toml", "--no-store", "--junit", "s.xml", "--markdown", "./s.xml"]
    )
    assert r.exit_code == 2, r.output
    assert r.output.strip() == "Error: --junit and --markdown both name './s.xml'; give each its own file"
    assert not (demo_scan / "s.xml").exists()
    with pytest.raises(Exception, match="--junit and --markdown both name 'x'"):
        check_not_input([("--junit", "x"), ("--markdown", "x")], [])


def test_a_report_dir_page_over_a_scanned_file_is_refused(demo_scan):
    (demo_scan / "pages").mkdir()
    page = demo_scan / "pages" / "index.html"  # a DuckDB file named like the index page
    shutil.copy(demo_scan / "qar_demo.duckdb", page)
    cfg = demo_scan / "pages.toml"
    cfg.write_text(
        f'[sources.demo]\nurl = "duckdb:///{page}"\n[[scan]]\nname = "d"\ntable = "population"\n'
        'exclude = ["person_id"]\np = 2\npi_u = 0.2\n'
    )
    refused(["scan", str(cfg), "--no-store", "--report-dir", "pages"], page, "--report-dir")


def test_distinct_files_still_work(folder):
    r = CliRunner().invoke(cli, ["report", "a.csv", "-p", "2", "--no-records", "-o", "r.html", "-q"])
    assert r.exit_code == 0, r.output
    assert (folder / "r.html").read_text().startswith("<!DOCTYPE html>")
    r = CliRunner().invoke(cli, ["records", "a.csv", "-p", "2", "--output", "scores.csv", "-q"])
    assert r.exit_code == 0, r.output


def test_the_guard_itself():
    check_not_input([("-o", None), ("--plot", "")], [("the source", "a.csv")])  # nothing written: fine
    check_not_input([("-o", "b.csv")], [("the source", "postgresql://u:pw@h/a.csv"), ("frame", object())])
    assert local_file("duckdb:///x.duckdb") == "x.duckdb"
    assert local_file("duckdb:////abs/x.duckdb") == "/abs/x.duckdb"
    assert local_file("sqlite:///rel.db") == "rel.db"
    assert local_file("postgresql+psycopg://u@h/db") is None
    with pytest.raises(Exception, match=r"^-o 'x.db' is the source file itself \('sqlite:///x.db'\), which"):
        check_not_input([("-o", "x.db")], [("the source file itself", "sqlite:///x.db")])


def test_the_python_report_refuses_its_source_as_output(folder):
    import qar_sql
    from qar_sql.errors import UsageError

    before = (folder / "a.csv").read_bytes()
    with pytest.raises(UsageError, match="^output 'a.csv' is the source file itself"):
        qar_sql.report("a.csv", p=2, records=False, output="a.csv")
    assert (folder / "a.csv").read_bytes() == before


@pytest.mark.parametrize(
    "args",
    [
        ["anonymize", "{csv}", "--k", "2", "--hierarchy", "sex={h}", "-o", "-"],
        ["risk", "{csv}", "--per-record", "-"],
        ["scan", "{toml}", "--no-store", "--junit", "-"],
        ["scan", "{toml}", "--no-store", "--markdown", "-"],
    ],
)
def test_a_dash_is_no_file_name(tmp_path, monkeypatch, args):
    """A dash is stdout everywhere (qar report -o -); an option that writes a file refuses it before
    any work rather than create a file named "-"."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.csv").write_text("sex,age\n" + "".join(f"{'FM'[i % 2]},{20 + i % 9}\n" for i in range(40)))
    (tmp_path / "h.csv").write_text("F;*\nM;*\n")
    (tmp_path / "qar.toml").write_text('[sources.a]\nurl = "p.csv"\n[[scan]]\nsource = "a"\np = 1\npi_u = 0.5\n')
    filled = [a.format(csv="p.csv", h="h.csv", toml="qar.toml") for a in args]
    r = CliRunner().invoke(cli, filled)
    assert r.exit_code == 2, r.output
    assert "'-' would write a file named '-'" in r.output and "give it a file name" in r.output
    assert not (tmp_path / "-").exists()
