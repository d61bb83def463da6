"""``qar history``: the risk trend per table, the change since the previous run, JSON, plots."""

from __future__ import annotations

import json
import os
import uuid

import duckdb
import pytest
from click.testing import CliRunner
from conftest import quote, require_postgres

import qar_sql
from qar_sql.cli.main import cli
from qar_sql.compliance import store as S
from qar_sql.output.render_history import plot_history as plot
from tests.compliance.test_store import pg_store_url

COLS = ["age", "sex", "zip", "job"]
BASE = [(20 + i % 6, "FMFF"[i % 4], i % 5, "abcdefg"[i % 7]) for i in range(16)]
KW = dict(columns=COLS, p=2, pi_u=0.5)


def load(path, rows, table="people"):
    con = duckdb.connect(str(path))
    con.execute(f"create or replace table {quote(table)} (age bigint, sex text, zip bigint, job text)")
    con.executemany(f"insert into {quote(table)} values (?, ?, ?, ?)", rows)
    con.close()


def record_three(src, store, table="people"):
    """Three complete runs on a table that changes between runs, and one failed run; returns
    the risks of the complete runs."""
    risks = []
    for extra in (0, 6, 12):
        load(src, BASE + [(40 + j, "M", 9, "z") for j in range(extra)], table)
        risks.append(S.recorded_audit(store, str(src), table=table, **KW).risk)
        if extra == 6:
            with pytest.raises(qar_sql.QarError):
                S.recorded_audit(store, str(src), table=table, columns=["nope"], p=2, pi_u=0.5)
    return risks


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("history")
    src, store = tmp_path / "src.duckdb", str(tmp_path / "store.duckdb")
    risks = record_three(src, store)
    load(src, BASE, "other")
    S.recorded_audit(store, str(src), table="other", **KW)
    return store, risks


def test_trend_and_change(recorded):
    store, risks = recorded
    assert len(set(risks)) == 3  # the table really changed
    h = qar_sql.history(store)
    assert [s.table for s in h.series] == ["other", "people"]
    people = h.series[1]
    assert [pt.status for pt in people.points] == ["complete", "complete", "failed", "complete"]
    assert [pt.risk for pt in people.points] == [risks[0], risks[1], None, risks[2]]
    # The change is against the previous complete run; the failed run has none.
    assert [pt.change for pt in people.points] == [None, risks[1] - risks[0], None, risks[2] - risks[1]]
    assert people.latest.risk == risks[2]
    assert [pt.rows for pt in people.points] == [16, 22, None, 28]
    assert qar_sql.history(store, table="people").series == (people,)


def test_cli_history_text_json_and_filter(recorded):
    store, risks = recorded
    r = CliRunner().invoke(cli, ["history", "--store", store, "--table", "people"])
    assert r.exit_code == 0, r.output
    assert "people (p=2, α=0.01)" in r.output and "other" not in r.output
    assert f"{risks[2] - risks[1]:+.6g}" in r.output and "failed" in r.output
    r = CliRunner().invoke(cli, ["history", "--store", store, "--format", "json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    people = [s for s in data["series"] if s["table"] == "people"][0]
    assert [x["risk"] for x in people["runs"]] == [risks[0], risks[1], None, risks[2]]
    assert people["latest_change"] == pytest.approx(risks[2] - risks[1], rel=1e-12)
    r = CliRunner().invoke(cli, ["history", "--store", store, "--table", "peeple"])
    assert r.exit_code == 2 and "no runs of table 'peeple'" in r.output and "other, people" in r.output


def test_plot_png_and_svg(recorded, tmp_path):
    store, _ = recorded
    png, svg = tmp_path / "trend.png", tmp_path / "trend.svg"
    r = CliRunner().invoke(cli, ["history", "--store", store, "--plot", str(png)])
    assert r.exit_code == 0, r.output
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    plot(qar_sql.history(store), svg)
    assert "<svg" in svg.read_text()[:500]
    r = CliRunner().invoke(cli, ["history", "--store", store, "--plot", str(tmp_path / "trend.gif")])
    assert r.exit_code == 2 and "must end in .png or .svg" in r.output


def test_a_store_that_does_not_exist_is_refused_not_made(tmp_path, monkeypatch):
    """A misspelt store read as an empty one ("No runs in none.duckdb yet", exit 0): the
    commands that only read a store say it does not exist (exit 2) and make nothing; a store
    with no runs yet is still empty history."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("QAR_STORE", raising=False)
    (tmp_path / "a.csv").write_text("a,b\n" + "".join(f"{i % 3},{i % 5}\n" for i in range(40)))
    for store in ("none.duckdb", "duckdb:///none.duckdb", None):
        given = ["--store", store] if store else []
        for args in (
            ["history", *given],
            ["report", "a.csv", "-p", "1", "--pi-u", "0.5", "-q", "-o", "r.html", *(given or ["--store"])],
            ["report", "--run", "x", "-o", "r.html", "--from-store", *given[1:]],
        ):
            r = CliRunner().invoke(cli, args)
            assert r.exit_code == 2 and "does not exist" in r.output, (args, r.output)
            assert ("the default store" in r.output) == (store is None), r.output
    assert sorted(os.listdir(tmp_path)) == ["a.csv"]
    S.migrate(str(tmp_path / "empty.duckdb"))
    r = CliRunner().invoke(cli, ["history", "--store", str(tmp_path / "empty.duckdb")])
    assert r.exit_code == 0 and "No runs in" in r.output


def test_history_postgres_store(tmp_path):
    eng = require_postgres()
    schema = f"qh_{uuid.uuid4().hex[:10]}"
    with eng.begin() as c:
        c.exec_driver_sql(f"create schema {quote(schema)}")
    try:
        store = pg_store_url(schema)  # (a QAR_TEST_PG_URL with a query string of its own too)
        src, risks = tmp_path / "src.duckdb", []
        for extra in (0, 6):
            load(src, BASE + [(40 + j, "M", 9, "z") for j in range(extra)])
            risks.append(S.recorded_audit(store, str(src), table="people", **KW).risk)
        h = qar_sql.history(store, table="people")
        (series,) = h.series
        assert [pt.risk for pt in series.points] == risks and risks[0] != risks[1]
        assert [pt.change for pt in series.points] == [None, risks[1] - risks[0]]
        assert h.to_dict()["series"][0]["latest_change"] == risks[1] - risks[0]
        assert "qar_test:qar_test@" not in h.store
    finally:
        with eng.begin() as c:
            c.exec_driver_sql(f"drop schema {quote(schema)} cascade")


def test_a_configuration_change_starts_a_new_series(tmp_path):
    """Issue 16, item 7: runs with other columns or another p were one series, and the risk
    "change" between them came only from the configuration."""
    src, store = tmp_path / "src.duckdb", str(tmp_path / "store.duckdb")
    load(src, BASE)
    four = S.recorded_audit(store, str(src), table="people", **KW).risk
    three = S.recorded_audit(store, str(src), table="people", columns=COLS[:3], p=2, pi_u=0.5).risk
    p1 = S.recorded_audit(store, str(src), table="people", columns=COLS, p=1, pi_u=0.5).risk
    with pytest.raises(qar_sql.QarError):  # fails before resolving its columns: joins the p = 1 series
        S.recorded_audit(store, str(src), table="people", exclude=["nope"], p=1, pi_u=0.5)
    load(src, BASE + [(40, "M", 9, "z")])
    four_again = S.recorded_audit(store, str(src), table="people", **KW).risk
    assert len({four, three, p1}) == 3
    h = qar_sql.history(store, table="people")
    assert [(s.columns, s.p) for s in h.series] == [(tuple(COLS), 2), (tuple(COLS[:3]), 2), (tuple(COLS), 1)]
    first, second, third = h.series
    assert [pt.risk for pt in first.points] == [four, four_again]
    assert [pt.change for pt in first.points] == [None, four_again - four]  # same configuration only
    assert [pt.change for pt in second.points] == [None] and [pt.change for pt in third.points] == [None, None]
    assert [pt.status for pt in third.points] == ["complete", "failed"]
    assert first.new_configuration is None
    assert second.new_configuration == "4 → 3 columns (−job)"
    assert third.new_configuration == "3 → 4 columns (+job); p 2 → 1"
    r = CliRunner().invoke(cli, ["history", "--store", store])
    assert r.exit_code == 0, r.output
    assert "New configuration, a new series: 4 → 3 columns (−job)." in r.output
    assert "Columns (3): age, sex, zip" in r.output
    series = json.loads(CliRunner().invoke(cli, ["history", "--store", store, "-f", "json"]).output)["series"]
    assert [s["columns"] for s in series] == [COLS, COLS[:3], COLS]
    assert [s["new_configuration"] for s in series][1:] == ["4 → 3 columns (−job)", "3 → 4 columns (+job); p 2 → 1"]
    md = CliRunner().invoke(cli, ["history", "--store", store, "-f", "markdown"]).output
    assert "| new\\_configuration | 3 → 4 columns (+job); p 2 → 1 |" in md


def test_a_table_filter_on_a_store_of_file_runs_says_what_it_holds(tmp_path):
    """Runs of a CSV have no table: --table finds none, and the message does not say the store is
    empty (it read "the store has no runs yet")."""
    csv = tmp_path / "people.csv"
    csv.write_text("age,sex,zip\n" + "".join(f"{20 + i % 7},{'FM'[i % 2]},{i % 5}\n" for i in range(60)))
    store = str(tmp_path / "s.duckdb")
    r = CliRunner().invoke(cli, ["audit", str(csv), "-p", "1", "--pi-u", "0.5", "--store", store])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(cli, ["history", "--store", store, "--table", "nope"])
    assert r.exit_code == 2
    assert "its runs are of sources with no table (files); leave --table out" in r.output
    assert "no runs yet" not in r.output
