"""Two low items of issue 31: a stdout that cannot be written (``qar … > /dev/full``) said
"unexpected OSError"; a file that is not a DuckDB database, given as one, exited 3 where every
other bad file exits 2."""

from __future__ import annotations

import os
import subprocess
import sys

import duckdb
import pytest
from click.testing import CliRunner

from qar_sql.cli.main import cli

QAR = [sys.executable, "-c", "from qar_sql.cli import main; main()"]
CSV = "age,sex,zip\n" + "".join(f"{20 + i % 9},{'FM'[i % 2]},{i % 13}\n" for i in range(60))


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.csv").write_text(CSV)
    return tmp_path


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
@pytest.mark.parametrize(
    "args",
    [["config"], ["audit", "a.csv", "-p", "1", "--pi-u", "0.5", "-f", "json", "-q"], ["--version"]],
    ids=["config", "audit", "version"],
)
def test_a_full_stdout_is_one_sentence_and_exit_3(folder, args):
    with open("/dev/full", "w") as full:
        r = subprocess.run(QAR + args, stdout=full, stderr=subprocess.PIPE, text=True, cwd=folder)
    assert r.stderr == (
        "Error: cannot write to standard output (No space left on device); free space where it goes "
        "or send it elsewhere\n"
    ), r.stderr
    assert r.returncode == 3


def test_a_closed_pipe_stops_quietly(folder):
    """``qar … | head -c 10``: the reader got what it wanted; no message, exit 0 as before."""
    args = " ".join(QAR[:2]) + f' "{QAR[2]}" audit a.csv -p 1 --pi-u 0.5 -f html -q'
    r = subprocess.run(
        f"{args} 2>err.txt | head -c 10 > /dev/null; echo ${{PIPESTATUS[0]}}",
        shell=True,
        executable="/bin/bash",
        capture_output=True,
        text=True,
        cwd=folder,
    )
    assert (folder / "err.txt").read_text() == ""
    assert r.stdout.strip() == "0"


@pytest.mark.parametrize(
    "name, content",
    [("fake.duckdb", CSV.encode()), ("empty.duckdb", b""), ("noise.db", bytes(range(256)) * 20)],
)
def test_a_file_that_is_not_duckdb_exits_2(folder, name, content):
    (folder / name).write_bytes(content)
    r = CliRunner().invoke(cli, ["audit", name, "-t", "t", "-q"])
    assert r.exit_code == 2, r.output
    assert r.output == (
        f"Error: {name!r} is not a DuckDB database file; name a DuckDB file, a CSV or Parquet file by its suffix "
        "(.csv, .parquet), or a SQLite file by its URL (sqlite:///file.db)\n"
    )
    r = CliRunner().invoke(cli, ["audit", f"duckdb:///{name}", "-t", "t", "-q"])
    assert r.exit_code == 2 and "is not a DuckDB database file" in r.output, r.output


def test_a_sqlite_file_named_as_a_path_is_refused_with_its_url(folder):
    # DuckDB opened it by fetching its sqlite extension from the network first; the message
    # named DuckDB, CSV and Parquet files, not the sqlite:/// URL that reads it
    import sqlite3

    with sqlite3.connect(folder / "app.db") as con:
        con.execute("create table t (a integer, b integer)")
    r = CliRunner().invoke(cli, ["audit", "app.db", "-t", "t", "-q"])
    assert r.exit_code == 2, r.output
    assert "or a SQLite file by its URL (sqlite:///file.db)" in r.output


def test_a_locked_duckdb_file_is_still_a_runtime_error(folder):
    """A real DuckDB file that cannot be opened (held by another process) stays exit 3."""
    path = folder / "real.duckdb"
    con = duckdb.connect(str(path))
    con.execute("create table t as select 1 as a")
    con.close()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import duckdb, sys; c = duckdb.connect({str(path)!r}); print('ok', flush=True); sys.stdin.read()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "ok"
        r = CliRunner().invoke(cli, ["audit", str(path), "-t", "t", "-q"])
        assert r.exit_code == 3 and "is locked by another process" in r.output, r.output
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
