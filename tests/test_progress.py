"""Long commands write a stage line now and then when stderr is not a terminal (issue 31, item
12): eliminate (63 s) and whatif (56 s) on the 100k demo left a CI log empty for a minute.
Lines as dbt's — ``12:01:03  whatif: scenarios 40/120 (33%), 25 s`` — every ``interval``
seconds, a last one when the command ends, none with --quiet; a terminal keeps its bar."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from conftest import AGE_BANDS_TOML

from qar_sql.demo import write_population
from qar_sql.progress import Progress

REPO = Path(__file__).resolve().parents[1]
STAGE = re.compile(r"^\d\d:\d\d:\d\d  (?P<command>[a-z]+): (?P<what>.*), (?P<seconds>\d+) s$")
TREATMENTS = (
    AGE_BANDS_TOML
    + """[treatments.age_5y]
column = "age"
kind = "bands"
width = 5
"""
)


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_line_every_interval_off_a_terminal_and_a_last_one():
    out, clock = io.StringIO(), Clock()
    with Progress("scenarios", stream=out, clock=clock, interval=10) as bar:
        bar(1, 120)
        clock.now += 9.9
        bar(2, 120)  # not yet 10 s since the start
        assert out.getvalue() == ""
        clock.now += 0.1
        bar(40, 120)
        clock.now += 5
        bar(41, 120)  # 5 s since the last line
        clock.now += 12
        bar(90, 120)
    lines = out.getvalue().splitlines()
    assert [STAGE.match(line).group("what", "seconds") for line in lines] == [
        ("scenarios 40/120 (33%)", "10"),
        ("scenarios 90/120 (75%)", "27"),
        ("scenarios done", "27"),
    ]
    assert all(STAGE.match(line).group("command") == "qar" for line in lines)  # outside a command


def test_quiet_a_short_run_and_a_terminal_write_no_line():
    out, clock = io.StringIO(), Clock()
    with Progress("scanning", quiet=True, stream=out, clock=clock, interval=10) as bar:
        clock.now += 60
        bar(5, 10)
    with Progress("scanning", stream=out, clock=clock, interval=10) as bar:
        clock.now += 3
        bar(5, 10)  # 3 s: nothing to report, and no last line either
    assert out.getvalue() == ""

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    tty = Terminal()
    with Progress("scanning", stream=tty, clock=clock, interval=10) as bar:
        clock.now += 60
        bar(5, 10)
    assert not any(STAGE.match(line) for line in tty.getvalue().splitlines())
    assert "5/10" in tty.getvalue()  # click's bar


def test_a_phase_without_ticks_still_shows_the_command_alive():
    """The timer writes the line: eliminate's curves and a suda run call no progress."""
    import time

    out = io.StringIO()
    with Progress("scanning", stream=out, interval=0.02):
        # Wait for the timer's second line, not a fixed time: a loaded machine may not run the
        # timer thread for a while.
        deadline = time.monotonic() + 60
        while len(out.getvalue().splitlines()) < 2:
            assert time.monotonic() < deadline, f"the timer wrote {out.getvalue()!r} in 60 s"
            time.sleep(0.01)
    lines = out.getvalue().splitlines()
    assert len(lines) >= 3 and STAGE.match(lines[0]).group("what") == "scanning started"
    assert STAGE.match(lines[-1]).group("what") == "scanning done"


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("lines")
    con = duckdb.connect(str(d / "demo.duckdb"))
    write_population(con, "population", n=2000, seed=5)
    con.close()
    (d / "t.toml").write_text(TREATMENTS)
    return d


COMMANDS = {
    "audit": ["audit", "{db}", "-t", "population", "-x", "person_id", "-p", "2", "--pi-u", "0.2"],
    "whatif": ["whatif", "{db}", "-t", "population", "-T", "{dir}/t.toml", "--pi-u", "0.2", "-p", "2"],
    "eliminate": ["eliminate", "{db}", "-t", "population", "-k", "person_id", "-x", "person_id", "-p", "2"]
    + ["--pi-u", "0.2", "--by", "dt,random", "--step", "200"],
    "records": ["records", "{db}", "-t", "population", "-k", "person_id", "-x", "person_id", "-p", "2"]
    + ["--pi-u", "0.2"],
    "risk": ["risk", "{db}", "-t", "population", "-x", "person_id", "-p", "2"],
    "uniqueness": ["uniqueness", "{db}", "-t", "population", "-x", "person_id", "-p", "2", "--group-size", "5"],
    "discover": ["discover", "{db}", "-t", "population", "-x", "person_id", "--max-size", "2"],
    "report": ["report", "{db}", "-t", "population", "-x", "person_id", "-p", "2", "--pi-u", "0.2"]
    + ["--no-records", "-o", "{dir}/report.html"],
    "compare": ["compare", "{db}", "{db}", "-t", "population", "--treated-table", "population", "--link"]
    + ["person_id", "-c", "age,sex,postcode", "-p", "2", "--pi-u", "0.2"],
}


def _run(demo: Path, args: list[str]) -> subprocess.CompletedProcess:
    # The real command in a child process whose stderr is a pipe (not a terminal), with a short
    # interval so that a run of a second writes several lines.
    code = "from qar_sql.progress import Progress; Progress.interval = 0.02; from qar_sql.cli import main; main()"
    args = [a.format(db=demo / "demo.duckdb", dir=demo) for a in args]
    return subprocess.run([sys.executable, "-c", code, *args], cwd=REPO, capture_output=True, text=True)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_long_command_writes_stage_lines_off_a_terminal(demo, command):
    r = _run(demo, COMMANDS[command])
    assert r.returncode in (0, 1), r.stderr
    stages = [m for m in map(STAGE.match, r.stderr.splitlines()) if m]
    assert len(stages) >= 2, r.stderr
    assert {m.group("command") for m in stages} == {command}
    assert stages[-1].group("what").endswith("done")
    assert [int(m.group("seconds")) for m in stages] == sorted(int(m.group("seconds")) for m in stages)
    quiet = _run(demo, COMMANDS[command] + ["--quiet"])
    assert quiet.returncode == r.returncode and not any(map(STAGE.match, quiet.stderr.splitlines())), quiet.stderr
