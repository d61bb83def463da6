"""``qar scan``, ``qar history`` and ``qar migrate`` in the one shape of every command (issue 25):
their parameters (``qar_sql/parameters``) hold the rules between options, ``run`` in
``qar_sql/commands`` gives the result, and ``qar_sql/output/render_*`` renders it — the CLI
prints exactly what ``run`` and the renderer give."""

from __future__ import annotations

import json
import subprocess
import sys

import duckdb
import pytest
from click.testing import CliRunner

import qar_sql
from qar_sql.cli.main import cli
from qar_sql.commands import history as history_command
from qar_sql.commands import migrate as migrate_command
from qar_sql.commands import scan as scan_command
from qar_sql.errors import UsageError
from qar_sql.output.render import render
from qar_sql.output.render_history import render_history
from qar_sql.output.render_migrate import render_migrate
from qar_sql.parameters.store import HistoryParams, MigrateParams, ScanParams
from qar_sql.precedence import Chosen


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({}, "name a scan config (qar scan qar.toml), a dbt project (--dbt-project .) or a dbt manifest"),
        ({"config": "q.toml", "dbt_manifest": "m.json", "dbt_project": "p"}, "give --dbt-project or --dbt-manifest"),
        ({"config": "q.toml", "url": "x.duckdb", "given": frozenset({"url"})}, "--url names the warehouse"),
        ({"config": "q.toml", "store": "s", "record": False, "given": frozenset({"store"})}, "contradict"),
    ],
)
def test_the_scan_parameters_refuse_an_option_that_would_be_ignored(kwargs, message):
    with pytest.raises(UsageError, match=message.replace("(", r"\(").replace(")", r"\)")):
        ScanParams(**kwargs)


def test_an_untyped_url_or_store_is_no_mistake():
    """$QAR_DATABASE_URL or a store from qar.toml (not typed) is not refused, and not the dbt profile's URL."""
    p = ScanParams(config="q.toml", url="x.duckdb", store="s", record=False)
    assert p.project_url is None
    assert ScanParams(dbt_project="p", url="w.duckdb", given=frozenset({"url"})).project_url == "w.duckdb"


def test_the_parameter_modules_are_light():
    """click reads the defaults from them when ``qar --help`` loads: no numpy, no database code."""
    code = (
        "import sys, qar_sql.parameters.store, qar_sql.parameters.store, qar_sql.parameters.store; "
        "print(sorted(m for m in ('numpy', 'duckdb', 'sqlalchemy', 'scipy') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.fixture
def people(tmp_path):
    path = tmp_path / "people.duckdb"
    con = duckdb.connect(str(path))
    con.execute(
        "create table people as select i % 7 as age, i % 3 as zip, i % 5 as job, i % 2 as sex from range(60) t(i)"
    )
    con.close()
    toml = tmp_path / "scans.toml"
    toml.write_text(
        '[sources.files]\nurl = "people.duckdb"\n\n[[scan]]\ntable = "people"\np = 2\npi_u = 0.5\nfail_above = 0.99\n'
    )
    return tmp_path, toml


def test_scan_run_is_what_the_cli_prints(people):
    folder, toml = people
    params = ScanParams(config=str(toml), record=False)
    report = scan_command.run(None, scan_command.prepare(params))
    r = CliRunner().invoke(cli, ["scan", str(toml), "--no-store", "-f", "json"])
    assert r.exit_code == report.exit_code == 0
    strip = [line for line in r.stdout.splitlines() if '"seconds"' not in line and '"started_at"' not in line]
    mine = [line for line in render(report, "json").splitlines() if '"seconds"' not in line]
    assert strip == [line for line in mine if '"started_at"' not in line]
    # a threshold typed on the command line replaces the scan's own (one precedence rule)
    typed = {"fail_above": Chosen(0.0, "command line", "--fail-above")}
    failed = scan_command.run(None, scan_command.prepare(ScanParams(config=str(toml), record=False, thresholds=typed)))
    assert failed.exit_code == scan_command.verdict(failed, params) == 1 and failed.outcomes[0].fail_above == 0.0
    assert failed.notes == ("people: threshold 0 from --fail-above overrides the scan's 0.99",)
    assert qar_sql.scan_config(str(toml), record=False).outcomes[0].risk == report.outcomes[0].risk


def test_migrate_and_history_run_is_what_the_cli_prints(people):
    folder, _ = people
    store = str(folder / "store.duckdb")
    applied = migrate_command.run(None, MigrateParams(store=store))
    assert applied.applied and not applied.pending
    status = migrate_command.run(None, MigrateParams(store=store, status=True))
    r = CliRunner().invoke(cli, ["migrate", "--store", store, "--status"])
    assert r.exit_code == 0 and r.stdout == render_migrate(status, "text", params=MigrateParams(status=True))
    empty = history_command.run(None, HistoryParams(store=store))
    assert empty.series == () and qar_sql.history(store) == empty
    r = CliRunner().invoke(cli, ["history", "--store", store])
    assert r.exit_code == 0 and r.stdout == render_history(empty, "text")


def test_migrate_status_exits_3_on_a_changed_migration_in_every_format(tmp_path):
    """The verdict sees the result and the parameters only: a changed migration is exit 3 in
    JSON too (the JSON carries each state; it exited 0 there)."""
    from qar_sql.compliance.store import TRACKING

    store = str(tmp_path / "store.duckdb")
    assert CliRunner().invoke(cli, ["migrate", "--store", store]).exit_code == 0
    con = duckdb.connect(store)
    con.execute(f"update {TRACKING} set checksum = 'x' where version = '0001'")
    con.close()
    for fmt in ("text", "json"):
        r = CliRunner().invoke(cli, ["migrate", "--store", store, "--status", "-f", fmt])
        assert r.exit_code == 3, r.output
        assert "Migration 0001_runs is changed; the store cannot be written until it is fixed." in r.stderr
        if fmt == "json":
            assert json.loads(r.stdout)["migrations"][0]["state"] == "changed"
