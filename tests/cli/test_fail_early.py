"""Late failures that threw finished work away (issue 16, item 9): an output file that cannot be
written and a plot without matplotlib are refused before any computation, in one sentence.

Each case names a source that does not exist: had the command started working first, the error
would be about the source."""

from __future__ import annotations

import os
import sys

import duckdb
import pytest
from click.testing import CliRunner

from qar_sql.cli.main import cli

MISSING = "/no/such/source.duckdb"
NO_FOLDER = "/no/such/folder"


def run(args, code: int, expected: str):
    r = CliRunner().invoke(cli, args)
    assert "Traceback" not in r.output and "unexpected" not in r.output, r.output
    assert r.exit_code == code, r.output
    assert expected in r.output, r.output
    return r


@pytest.mark.parametrize(
    "args,option,path",
    [
        (["records", MISSING, "-t", "t", "--output"], "--output", f"{NO_FOLDER}/scores.csv"),
        (["records", MISSING, "-t", "t", "--by", "influence", "--output"], "--output", f"{NO_FOLDER}/s.parquet"),
        (["eliminate", MISSING, "-t", "t", "--plot"], "--plot", f"{NO_FOLDER}/curves.png"),
        (["history", "--store", MISSING, "--plot"], "--plot", f"{NO_FOLDER}/trend.svg"),
        (["scan", MISSING, "--junit"], "--junit", f"{NO_FOLDER}/junit.xml"),
        (["scan", MISSING, "--markdown"], "--markdown", f"{NO_FOLDER}/summary.md"),
        (["risk", MISSING, "-t", "t", "--per-record"], "--per-record", f"{NO_FOLDER}/records.csv"),
    ],
)
def test_an_output_in_a_missing_folder_is_refused_first(args, option, path):
    # was: the whole computation, then "unexpected FileNotFoundError"
    run(
        args + [path],
        2,
        f"Error: {option} {path!r}: the folder {NO_FOLDER!r} does not exist; create it or write elsewhere",
    )


def test_an_output_that_is_a_folder_or_read_only_is_refused(tmp_path):
    folder = tmp_path / "x.csv"
    folder.mkdir()
    run(["records", MISSING, "-t", "t", "--output", str(folder)], 2, "is a directory")  # click's own check
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if os.access(locked, os.W_OK):  # root may write anywhere
            pytest.skip("this user can write into read-only folders")
        run(["eliminate", MISSING, "-t", "t", "--plot", str(locked / "p.png")], 2, "cannot be written")
    finally:
        locked.chmod(0o700)


@pytest.mark.parametrize(
    "args",
    [
        ["eliminate", MISSING, "-t", "t", "--plot", "curves.png"],
        ["history", "--store", MISSING, "--plot", "trend.png"],
    ],
)
def test_a_plot_without_matplotlib_is_refused_first(args, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if the [plot] extra were not installed
    run(
        args,
        2,
        "Error: --plot needs matplotlib, which is not installed; install it with: pip install 'qar-sql[plot]' "
        "(or leave --plot out)",
    )


def test_a_good_output_still_works(tmp_path):
    path = str(tmp_path / "t.duckdb")
    con = duckdb.connect(path)
    con.execute("create table t as select i as id, i % 7 as a, i % 3 as b, i % 5 as c from range(40) r(i)")
    con.close()
    out = tmp_path / "scores.csv"
    run(
        [
            "records",
            path,
            "-t",
            "t",
            "--key",
            "id",
            "-x",
            "id",
            "-p",
            "1",
            "--pi-u",
            "0.5",
            "--alpha",
            "0.1",
            "--output",
            str(out),
            "-q",
        ],
        0,
        "Records by dt",
    )
    assert out.read_text().startswith("id,dt,u_plus,u_star,n_unique\n")


# Issue 31, item 11: uniqueness and compare checked --plot only after the work ("/proc/x.png" and
# "x.csv" gave "unexpected …"), and uniqueness created a missing folder. They now make the check
# every command that draws makes (output.files.check_plot), before reading anything.
PLOTTERS = [
    ["uniqueness", MISSING, "-t", "t", "-g", "2", "--plot"],
    ["compare", MISSING, "/no/such/treated.duckdb", "-t", "t", "--plot"],
    ["eliminate", MISSING, "-t", "t", "--plot"],
    ["history", "--store", MISSING, "--plot"],
]


@pytest.mark.parametrize("args", PLOTTERS, ids=lambda a: a[0])
def test_a_plot_with_another_suffix_is_refused_first(args):
    run(args + ["x.csv"], 2, "Error: --plot 'x.csv' must end in .png or .svg")


@pytest.mark.parametrize("args", PLOTTERS, ids=lambda a: a[0])
def test_a_plot_in_a_missing_folder_is_refused_and_the_folder_not_created(args, tmp_path):
    path = tmp_path / "new" / "dir" / "x.png"
    run(args + [str(path)], 2, f"the folder {str(path.parent)!r} does not exist; create it or write elsewhere")
    assert not (tmp_path / "new").exists()


@pytest.mark.parametrize("args", PLOTTERS, ids=lambda a: a[0])
def test_a_plot_in_a_folder_no_file_can_be_created_in_is_refused_first(args):
    # /proc passes os.access for root, yet no file can be created there
    run(args + ["/proc/x.png"], 2, "Error: --plot '/proc/x.png' cannot be written")


def _store_cases(tmp_path):
    (tmp_path / "afile").write_text("x")
    (tmp_path / "folder.duckdb").mkdir()
    long_name = "s" * 300 + ".duckdb"  # longer than a file name may be: the database cannot create it
    return [
        (
            tmp_path / "afile" / "x.duckdb",
            f"the store {{path!r}} cannot be created: {str(tmp_path / 'afile')!r} is a file, not a folder; "
            "create the folder or point --store elsewhere, e.g. --store qar_results.duckdb",
        ),
        (
            tmp_path / "no" / "x.duckdb",
            f"the store {{path!r}} cannot be created: {str(tmp_path / 'no')!r} does not exist; "
            "create the folder or point --store elsewhere, e.g. --store qar_results.duckdb",
        ),
        (
            tmp_path / "folder.duckdb",
            "the store {path!r} is a folder; point --store at a .duckdb file, e.g. --store qar_results.duckdb",
        ),
        (tmp_path / long_name, "cannot write the store {path!r} ("),
        (
            _text_file(tmp_path / "notes.duckdb"),
            "the store {path!r} is not a DuckDB database file; point --store at a store qar made or a new "
            "file name, e.g. --store qar_results.duckdb",
        ),
    ]


def _text_file(path):
    path.write_text("not a database\n")
    return path


def test_a_store_that_is_not_a_duckdb_file_is_named_so_by_every_store_command(tmp_path):
    # it read "point --store at a file in a folder you can write" (exit 2), and exit 3 for history
    path = _text_file(tmp_path / "notes.duckdb")
    says = f"Error: the store {str(path)!r} is not a DuckDB database file; point --store at a store qar made"
    for args in (["history"], ["migrate"], ["migrate", "--status"]):
        run([*args, "--store", str(path)], 2, says)
    assert path.read_text() == "not a database\n"


def test_a_sqlite_file_as_the_store_is_refused_before_duckdb_opens_it(tmp_path):
    # DuckDB opened it by fetching its sqlite extension from the network (exit 3 offline, and
    # with the extension it would write the store's tables into the user's SQLite file)
    import sqlite3

    path = tmp_path / "app.db"
    with sqlite3.connect(path) as con:
        con.execute("create table t (a integer)")
    before = path.read_bytes()
    says = f"Error: the store {str(path)!r} is not a DuckDB database file; point --store at a store qar made"
    for args in (["history"], ["migrate"], ["migrate", "--status"]):
        run([*args, "--store", str(path)], 2, says)
    assert path.read_bytes() == before


def test_a_store_in_a_read_only_folder_is_refused_before_any_work(tmp_path):
    """A writable store file in a read-only folder opened, then failed at its first commit
    (DuckDB writes a .wal beside it): exit 3, and `qar scan` ran its scans, said "recorded in"
    and recorded nothing."""
    import shutil
    import subprocess

    source = tmp_path / "t.duckdb"
    con = duckdb.connect(str(source))
    con.execute("create table t as select i % 7 as a, i % 3 as b from range(40) r(i)")
    con.close()
    folder = tmp_path / "ro"
    folder.mkdir()
    store = folder / "s.duckdb"
    r = CliRunner().invoke(cli, ["migrate", "--store", str(store)])
    assert r.exit_code == 0, r.output
    (tmp_path / "qar.toml").write_text(f'[sources.s]\nurl = "{source}"\n[[scan]]\ntable = "t"\np = 1\npi_u = 0.5\n')
    folder.chmod(0o555)
    prefix: list[str] = []
    if os.geteuid() == 0:  # root writes anywhere: drop the capabilities that let it
        if shutil.which("setpriv") is None:
            pytest.skip("root without setpriv can write into read-only folders")
        caps = "-dac_override,-dac_read_search,-fowner"
        prefix = ["setpriv", "--bounding-set", caps, "--inh-caps", caps, "--"]
    try:
        for args in (
            ["audit", str(source), "-t", "t", "-p", "1", "--pi-u", "0.5"],
            ["records", str(source), "-t", "t", "-p", "1", "--pi-u", "0.5"],
            ["scan", str(tmp_path / "qar.toml")],
        ):
            out = subprocess.run(
                [*prefix, sys.executable, "-c", "from qar_sql.cli import main; main()", *args, "--store", str(store)],
                capture_output=True,
                text=True,
                env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
            )
            assert out.returncode == 2, out.stdout + out.stderr
            assert out.stderr.startswith(f"Error: cannot write the store {str(store)!r}: the folder "), out.stderr
            assert "T̂" not in out.stdout and "recorded" not in out.stdout, out.stdout
    finally:
        folder.chmod(0o755)
    con = duckdb.connect(str(store), read_only=True)
    assert con.execute("select count(*) from qar_runs").fetchone() == (0,)


def test_a_store_that_cannot_be_written_is_a_bad_option_not_an_unexpected_error(tmp_path):
    """`--store /proc/x.duckdb` (any path where no file can be made) was exit 3, "cannot open
    store": it is the option that is wrong, so exit 2, naming the path and a fix, before the audit."""
    source = str(tmp_path / "t.duckdb")
    con = duckdb.connect(source)
    con.execute("create table t as select i % 7 as a, i % 3 as b from range(40) r(i)")
    con.close()
    for path, says in _store_cases(tmp_path):
        r = run(["audit", source, "-t", "t", "-p", "1", "--pi-u", "0.5", "--store", str(path)], 2, "")
        assert r.output.startswith("Error: " + says.format(path=str(path))), r.output
        assert r.output.count("\n") == 1 and "T̂" not in r.output, r.output  # one sentence, no audit
        assert "--store qar_results.duckdb" in r.output


def test_a_per_record_file_that_cannot_be_made_is_refused_before_the_measures(tmp_path):
    """`qar risk --per-record /proc/x.csv` measured every QI (48 s on a loaded machine) and only
    then failed to write; the Python API checks the same way."""
    import qar_sql

    (tmp_path / "afile").write_text("x")
    path = str(tmp_path / "afile" / "r.csv")
    run(
        ["risk", MISSING, "-t", "t", "--per-record", path],
        2,
        f"--per-record {path!r}: {str(tmp_path / 'afile')!r} is a file, not a folder; write elsewhere",
    )
    with pytest.raises(qar_sql.QarError, match="per_record=.* is a file, not a folder"):  # the API names its keyword
        qar_sql.risk(MISSING, table="t", per_record=path)


def test_block_elimination_on_an_engine_without_arrays_is_refused_before_a_row_is_read(tmp_path):
    # SQLite has no array parameters: `qar eliminate` ran the audit and every ranking, then
    # refused at the first curve. The view fails when a row is read ("integer overflow", exit 3).
    import sqlite3

    path = tmp_path / "w.db"
    with sqlite3.connect(path) as con:
        con.execute("create table w (id integer, a integer, b integer, c integer, d integer)")
        con.executemany("insert into w values (?, ?, ?, ?, ?)", [(i, i % 3, i % 5, i % 7, i % 11) for i in range(200)])
        con.execute("create view v as select * from w where abs(-9223372036854775807 - 1) > 0")
    url = f"sqlite:///{path}"
    says = "block elimination is not implemented for sqlite yet; use DuckDB or PostgreSQL (--by greedy alone runs here)"
    run(["eliminate", url, "-t", "v", "--key", "id", "-x", "id", "--by", "dt", "--pi-u", "0.3", "-q"], 2, says)
    # greedy alone needs no array of the removal order, and runs
    r = CliRunner().invoke(
        cli, ["eliminate", url, "-t", "w", "--key", "id", "-x", "id", "--by", "greedy", "--step", "5", "--max", "10",
              "-p", "2", "--pi-u", "0.3", "-q"]
    )  # fmt: skip
    assert r.exit_code in (0, 2) and "block elimination" not in r.output, r.output


@pytest.mark.parametrize("value", ["0", "-3"])
def test_compare_refuses_components_below_one_before_a_row_is_read(tmp_path, value):
    # it compared both tables first (17 s on 2,000 rows over PostgreSQL), then refused
    path = str(tmp_path / "t.duckdb")
    con = duckdb.connect(path)
    con.execute("create table t as select i as id, i % 7 as a, i % 5 as b, i % 3 as c from range(60) r(i)")
    con.execute("create view boom as select * from t where error('qar-test: the rows were read') is null")
    con.close()
    r = run(
        ["compare", path, path, "-t", "boom", "--treated-table", "boom", "--link", "id", "--components", value, "-q"],
        2,
        f"--components {value} must be at least 1; give a positive integer or 'all'",
    )
    assert "the rows were read" not in r.output
