"""The DuckDB top-k influence path (capture.py) against the path that ranks every record:
same records, same scores, same keys and key-order positions — whether the candidate QIs
cover the weighted ones or not, on tables, views and files."""

from __future__ import annotations

import duckdb
import numpy as np
import pytest
from conftest import table_args

from qar_sql.commands.records import influence
from qar_sql.ranking import capture
from tests.ranking.test_influence import KW, make_data


def ranked_everything(source, table, top):
    full = influence(source, table=table, **KW, all_scores=True, top=top)
    return full


@pytest.mark.parametrize("margin,extra", [(1.5, 8), (0.0, 0), (0.2, 1)])
@pytest.mark.parametrize("top", [1, 7, 40])
def test_capture_equals_ranking_every_record(duck, monkeypatch, margin, extra, top):
    # (0, 0): no candidates, every weighted QI is grouped afterwards; (0.2, 1): some of each.
    monkeypatch.setattr(capture, "CANDIDATE_MARGIN", margin)
    monkeypatch.setattr(capture, "CANDIDATE_EXTRA", extra)
    data = make_data(300, seed=21)  # ids shuffled: rowid order is not key order
    source, table = duck.load("people", data)
    want = ranked_everything(source, table, top)
    got = influence(source, table=table, **KW, top=top)
    assert got.top == want.top  # positions in key order and scores, bit for bit
    keys = sorted(data["id"])
    assert [got.key_of(r) for r, _ in got.top] == [(keys[r],) for r, _ in got.top]
    assert got.baseline == want.baseline and got.n_weighted == want.n_weighted
    assert want.captured is None and sum(got.captured) == got.n_weighted
    if margin == 0:
        assert got.captured == (0, got.n_weighted)


def test_more_records_asked_than_score_above_baseline(duck):
    data = make_data(120, seed=3)
    source, table = duck.load("people", data)
    want = ranked_everything(source, table, 120)
    got = influence(source, table=table, **KW, top=120)
    assert got.top == want.top and len(got.top) == 120


def test_views_have_no_rowid_and_take_the_sorting_path(duck):
    data = make_data(200, seed=5)
    source, table = duck.load("people", data)
    con = duckdb.connect(source)
    con.execute('create view "v w" as select * from people where "a" is not null or true')
    con.close()
    want = ranked_everything(source, table, 15)
    got = influence(source, table="v w", **KW, top=15)
    assert got.top == want.top


def test_files_rank_by_row_order(duck, tmp_path):
    data = make_data(150, seed=8)
    path = tmp_path / "people.csv"
    con = duckdb.connect()
    con.execute(
        "create table t as select * from (values "
        + ", ".join(
            "(" + ", ".join("NULL" if data[c][i] is None else str(data[c][i]) for c in list(data)) + ")"
            for i in range(150)
        )
        + ") v("
        + ", ".join(f'"{c.replace(chr(34), chr(34) * 2)}"' for c in data)
        + ")"
    )
    con.execute(f"copy t to '{path}' (header, delimiter ',')")
    con.close()
    kw = {k: v for k, v in KW.items() if k != "key"}
    got = influence(str(path), **kw, top=10)
    want = influence(str(path), **kw, all_scores=True, top=10)
    assert got.top == want.top
    assert np.all(np.diff([s for _, s in got.top]) <= 0)


@pytest.mark.parametrize("refine", [5, 60])
def test_refined_dt_is_exact_dt(engine, refine, monkeypatch):
    # A small first margin forces the retry with a larger top-M on some candidates.
    from qar_sql.commands.records import contributions
    from qar_sql.ranking import refine as refine_mod

    monkeypatch.setattr(refine_mod, "MARGIN", 1)
    data = make_data(250, seed=31)
    source, table = engine.load("people", data)
    exact = contributions(source, table=table, **KW, top=0)
    got = influence(source, table=table, **KW, top=10, refine=refine)
    assert len(got.refined) == refine and len(got.top) == 10
    by_i = influence(source, table=table, **KW, top=refine).top
    assert sorted(r for r, _, _ in got.refined) == sorted(r for r, _ in by_i)
    for r, dt, score in got.refined:
        assert dt == pytest.approx(exact.dt[r], rel=1e-12, abs=1e-15), r
        assert score == dict(by_i)[r]
    dts = [dt for _, dt, _ in got.refined]
    assert dts == sorted(dts, reverse=True)


def test_refine_on_the_command_line(duck):
    import json

    from click.testing import CliRunner

    from qar_sql.cli.main import cli

    data = make_data(200, seed=2)
    source, table = duck.load("people", data)
    args = table_args("records", source, table, KW["columns"], "--by", "influence", "--top", "3", "--refine", "10")
    r = CliRunner().invoke(cli, args + ["-f", "json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert len(doc["refined"]) == 10 and {"key", "r", "dt", "influence"} <= set(doc["refined"][0])
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0 and "Exact DT of the top 10 by influence" in r.output
    r = CliRunner().invoke(cli, ["records", source, "-t", table, "--key", "id", "--refine", "5"])
    assert r.exit_code == 2 and "--refine has no effect without --by influence" in r.output
