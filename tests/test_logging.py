"""Logging (issue 14, item 4): the ``qar_sql`` logger, SQL and timings at DEBUG, -v/-vv and
--log-level on the group, and no output from library code."""

from __future__ import annotations

import logging
import re

import pytest
from click.testing import CliRunner

import qar_sql
from qar_sql.cli.main import cli

DATA = {
    "a": [1, 1, 2, 2, 3, 3, 4, 5],
    "b": ["x", "y", "x", "y", "x", "y", "z", "z"],
    "c": [1, 2, 1, 2, 1, 2, 1, 3],
    "d": [1, 1, 1, 2, 2, 2, 3, 3],
}


@pytest.fixture
def table(duck):
    return duck.load("t", DATA)


@pytest.fixture(autouse=True)
def _reset_level():
    logger = logging.getLogger("qar_sql")
    level = logger.level
    yield
    logger.setLevel(level)


def test_library_prints_nothing_and_logs_sql_at_debug(table, capsys, caplog):
    source, name = table
    with caplog.at_level(logging.DEBUG, logger="qar_sql"):
        qar_sql.audit(source, table=name, p=2, pi_u=0.5)
    out = capsys.readouterr()
    assert out.out == "" and out.err == ""
    sql = [r for r in caplog.records if r.name == "qar_sql.engines.source" and r.levelno == logging.DEBUG]
    assert sql, "no SQL statement logged at DEBUG"
    messages = [r.getMessage() for r in sql]
    assert any(re.match(r"duckdb \d+\.\d{3} s \(\d+ rows\): select", m, re.I) for m in messages), messages[:3]


def test_nothing_is_logged_above_debug_by_an_audit(table, caplog):
    source, name = table
    with caplog.at_level(logging.INFO, logger="qar_sql"):
        qar_sql.audit(source, table=name, p=2, pi_u=0.5)
    assert [r for r in caplog.records if r.name.startswith("qar_sql")] == []


@pytest.mark.parametrize(
    "flags,expect_sql", [([], False), (["-v"], False), (["-vv"], True), (["--log-level", "debug"], True)]
)
def test_verbosity_flags(table, flags, expect_sql):
    source, name = table
    result = CliRunner().invoke(cli, [*flags, "audit", source, "--table", name, "-p", "2", "--pi-u", "0.5"])
    assert result.exit_code == 0, result.output
    assert ("DEBUG qar_sql.engines.source: duckdb" in result.stderr) is expect_sql
    assert "DEBUG" not in result.stdout  # logs go to stderr only


def test_log_level_variable(table):
    source, name = table
    args = ["audit", source, "--table", name, "-p", "2", "--pi-u", "0.5"]
    result = CliRunner().invoke(cli, args, env={"QAR_LOG_LEVEL": "DEBUG"})
    assert "DEBUG qar_sql.engines.source" in result.stderr
