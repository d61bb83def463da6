"""Logging (issue 14, item 5): the ``qar_sql`` logger, SQL and timings at DEBUG, -v/-vv and
--log-level on the group, and no output from library code."""

from __future__ import annotations

import logging
import re

import pytest
from click.testing import CliRunner

import qar_sql
from qar_sql.cli.main import cli
from tests.conftest import SMALL_TABLE

DATA = SMALL_TABLE


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


def test_an_audit_logs_its_stages_at_info_without_sql(table, caplog):
    source, name = table
    with caplog.at_level(logging.INFO, logger="qar_sql"):
        r = qar_sql.audit(source, table=name, p=2, pi_u=0.5)
    records = [x for x in caplog.records if x.name.startswith("qar_sql")]
    assert {x.levelno for x in records} == {logging.INFO}  # no SQL, no warning: those are in the result
    text = [x.getMessage() for x in records]
    assert text[0].startswith("duckdb on ") and "8 rows, 4 columns, 6 QIs of size 2" in text[0]
    assert text[1].startswith("scanned 6 QIs in ") and text[1].endswith(f"= {r.risk:.6g}")


@pytest.mark.parametrize(
    "flags,expect_sql,expect_info",
    [([], False, False), (["-v"], False, True), (["-vv"], True, True), (["--log-level", "debug"], True, True)],
)
def test_verbosity_flags(table, flags, expect_sql, expect_info):
    source, name = table
    result = CliRunner().invoke(cli, [*flags, "audit", source, "--table", name, "-p", "2", "--pi-u", "0.5"])
    assert result.exit_code == 0, result.output
    assert ("DEBUG qar_sql.engines.source: duckdb" in result.stderr) is expect_sql
    assert ("INFO qar_sql.measures.audit: scanned 6 QIs" in result.stderr) is expect_info
    assert "DEBUG" not in result.stdout  # logs go to stderr only


def test_log_level_variable(table):
    source, name = table
    args = ["audit", source, "--table", name, "-p", "2", "--pi-u", "0.5"]
    result = CliRunner().invoke(cli, args, env={"QAR_LOG_LEVEL": "DEBUG"})
    assert "DEBUG qar_sql.engines.source" in result.stderr


@pytest.mark.parametrize(
    "flags,expect_sql,expect_info",
    [(["-v"], False, True), (["-vv"], True, True), (["--log-level", "debug"], True, True), (["-q", "-v"], False, True)],
)
def test_verbosity_flags_after_the_command(table, flags, expect_sql, expect_info):
    """-v and --log-level are accepted after the command too (issue 31), like --debug."""
    source, name = table
    result = CliRunner().invoke(cli, ["audit", source, "--table", name, "-p", "2", "--pi-u", "0.5", *flags])
    assert result.exit_code == 0, result.output
    assert ("DEBUG qar_sql.engines.source: duckdb" in result.stderr) is expect_sql
    assert ("INFO qar_sql.measures.audit: scanned 6 QIs" in result.stderr) is expect_info


def test_log_level_after_the_command_wins_over_v(table):
    source, name = table
    args = ["audit", source, "--table", name, "-p", "2", "--pi-u", "0.5"]
    result = CliRunner().invoke(cli, ["-vv", *args, "--log-level", "warning"])
    assert result.exit_code == 0 and "INFO" not in result.stderr and "DEBUG" not in result.stderr
    result = CliRunner().invoke(cli, [*args, "--log-level", "error", "-v"])  # the level wins, in any order
    assert result.exit_code == 0 and "INFO" not in result.stderr, result.stderr
