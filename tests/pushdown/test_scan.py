"""A large scan says so before it plans and shows progress while it renders (issue 31, item 10):
300 columns at the default p = 3 are 4,455,100 QIs, whose SQL took over a minute to render
in silence, even on a terminal. Here the threshold (scan.LARGE_QIS) is lowered so that a
small real table is "large"; the order of events is that of the real run."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import duckdb_file

import qar_sql
from qar_sql.pushdown import scan

REPO = Path(__file__).resolve().parents[2]
COLUMNS = [f"c{i}" for i in range(8)]  # 56 QIs at p = 3


@pytest.fixture
def table(tmp_path) -> str:
    values = ", ".join(f"cast(hash(i, {k}) % {3 + k} as integer) as c{k}" for k in range(len(COLUMNS)))
    return duckdb_file(tmp_path / "t.duckdb", f"create table t as select {values} from range(60) as r(i)")


def test_the_announcement_names_the_count_its_cost_and_a_smaller_p(caplog):
    with caplog.at_level(logging.WARNING, logger="qar_sql"):
        assert scan.announce(300, 3) is True
        assert scan.announce(40, 3) is False  # 9,880 QIs: nothing to say
    (record,) = caplog.records
    assert record.getMessage() == (
        "300 columns at p = 3: 4,455,100 quasi-identifiers to scan, one GROUP BY over the table each; "
        "this is large and can take many minutes — consider a smaller p (p = 2: 44,850 quasi-identifiers) "
        "or fewer columns (--columns, --exclude)"
    )


@pytest.mark.parametrize("command", ["audit", "risk"])
def test_a_large_scan_announces_itself_then_ticks_while_rendering(table, monkeypatch, command):
    """Events in order: the announcement, a tick per statement rendered (before any statement of
    the scan runs), then a tick per statement run; done rises to total."""
    monkeypatch.setattr(scan, "LARGE_QIS", 10)
    events: list = []

    class Recorder(logging.Handler):
        def emit(self, record):
            events.append(("log", record.levelno, record.getMessage()))

    handler = Recorder(logging.DEBUG)
    logger = logging.getLogger("qar_sql")
    old_level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        where = {
            "table": "t",
            "columns": COLUMNS,
            "p": 3,  # (no jobs: DuckDB runs its statements one at a time, and refuses --jobs)
            "progress": lambda d, t: events.append(("tick", d, t)),
        }
        if command == "audit":
            qar_sql.audit(table, batch_size=8, **where)
        else:
            qar_sql.risk(table, **where)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old_level)
    warned = [i for i, e in enumerate(events) if e[0] == "log" and e[1] == logging.WARNING]
    assert len(warned) == 1 and "8 columns at p = 3: 56 quasi-identifiers to scan" in events[warned[0]][2]
    ticks = [e for e in events if e[0] == "tick"]
    first_tick = events.index(ticks[0])
    assert warned[0] < first_tick
    total = ticks[-1][2]
    assert [d for _, d, _ in ticks] == list(range(1, total + 1)) and {t for *_, t in ticks} == {total}
    # First a tick per statement rendered, with no SQL between them; then each tick follows a
    # statement run (DEBUG: the statement and its time).
    n_statements = len(range(0, 56, 8)) if command == "audit" else total // 2
    assert n_statements > 1
    assert all(events[first_tick + k][0] == "tick" for k in range(n_statements))
    later = [i for i, e in enumerate(events) if e[0] == "tick"][n_statements:]
    assert later and all(events[i - 1][:2] == ("log", logging.DEBUG) for i in later)


def test_a_small_scan_says_nothing_and_counts_only_statements_run(table):
    seen = []
    qar_sql.audit(table, table="t", columns=COLUMNS, p=3, batch_size=8, progress=lambda d, t: seen.append((d, t)))
    assert seen[-1][1] == len(seen)  # no rendering ticks: one tick per setup or scan statement


def test_the_command_line_shows_it_off_a_terminal(table):
    """Shown on stderr without -v (a WARNING reaches stderr with no logging set up), before the result."""
    code = "import qar_sql.pushdown.scan as s; s.LARGE_QIS = 10; from qar_sql.cli import main; main()"
    r = subprocess.run(
        [sys.executable, "-c", code, "audit", table, "-t", "t", "-c", ",".join(COLUMNS), "--pi-u", "0.2"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert r.returncode in (0, 1), r.stderr
    assert "8 columns at p = 3: 56 quasi-identifiers to scan" in r.stderr.splitlines()[0]
