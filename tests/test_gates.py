"""CI gates of ``qar scan`` (issue 16, item 5): a threshold given on the command line is never
ignored, and an option that would be ignored is an error."""

from __future__ import annotations

import random

import duckdb
import pytest
from click.testing import CliRunner

import qar_sql
from qar_sql.cli.main import cli

_rng = random.Random(3)
ROWS = [
    (_rng.randrange(8), "FM"[_rng.randrange(2)], _rng.randrange(5), "abcdefg"[_rng.randrange(6)]) for _ in range(60)
]
KW = dict(columns=["age", "sex", "zip", "job"], p=2, pi_u=0.5)


@pytest.fixture
def config(tmp_path):
    """(qar.toml with fail_above = 0.99 and warn_above = 0.9, the risk of its one scan)."""
    path = tmp_path / "people.duckdb"
    con = duckdb.connect(str(path))
    con.execute("create table people (age bigint, sex text, zip bigint, job text)")
    con.executemany("insert into people values (?, ?, ?, ?)", ROWS)
    con.close()
    toml = tmp_path / "qar.toml"
    toml.write_text(
        '[sources.files]\nurl = "people.duckdb"\n\n[[scan]]\ntable = "people"\n'
        'columns = ["age", "sex", "zip", "job"]\np = 2\npi_u = 0.5\nfail_above = 0.99\nwarn_above = 0.9\n'
    )
    risk = qar_sql.audit(str(path), table="people", **KW).risk
    assert 0.05 < risk < 0.9
    return toml, risk


def invoke(args, env=None):
    r = CliRunner().invoke(cli, args, env=env)
    assert "Traceback" not in r.output
    return r


def test_fail_above_on_the_command_line_overrides_the_file(config):
    toml, risk = config
    r = invoke(["scan", str(toml), "--no-store"])
    assert r.exit_code == 0, r.output
    r = invoke(["scan", str(toml), "--no-store", "--fail-above", "0.01"])
    assert r.exit_code == 1, r.output  # was 0: the option was ignored
    assert "FAIL" in r.stdout and "0.01" in r.stdout
    r = invoke(["scan", str(toml), "--no-store", "--fail-above", f"{risk + 0.001:.6f}"])
    assert r.exit_code == 0, r.output
    r = invoke(["scan", str(toml), "--no-store", "--warn-above", "0.01", "-f", "json"])
    assert r.exit_code == 0 and '"status": "warn"' in r.stdout and '"warn_above": 0.01' in r.stdout
    # the Python API: the same override
    from qar_sql.compliance.scans import load_config, override_thresholds

    cfg = override_thresholds(load_config(toml), fail_above=0.01)
    assert qar_sql.scan_config(cfg, record=False).exit_code == 1


@pytest.mark.parametrize(
    "args,message",
    [
        (["--fail-above", "1.5"], "--fail-above 1.5 must be a risk between 0 and 1"),
        (["--warn-above", "-0.1"], "--warn-above -0.1 must be a risk between 0 and 1"),
        (["--fail-above", "0.2", "--warn-above", "0.3"], "--warn-above 0.3 is above --fail-above 0.2"),
        (["--url", "postgresql+psycopg://h/db"], "--url names the warehouse of --dbt-manifest"),
        (["--store", "x.duckdb"], "--store and --no-store contradict each other"),
    ],
)
def test_unused_or_bad_options_are_errors(config, args, message):
    toml, _ = config
    r = invoke(["scan", str(toml), "--no-store", *args])
    assert r.exit_code == 2, r.output
    assert message in r.output


def test_database_url_from_the_environment_is_no_error(config):
    toml, _ = config
    r = invoke(["scan", str(toml), "--no-store"], env={"QAR_DATABASE_URL": "postgresql+psycopg://h/db"})
    assert r.exit_code == 0, r.output
