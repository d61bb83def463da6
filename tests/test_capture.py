"""The DuckDB top-k influence path (capture.py) against the path that ranks every record:
same records, same scores, same keys and key-order positions — whether the candidate QIs
cover the weighted ones or not, on tables, views and files."""

from __future__ import annotations

import duckdb
import numpy as np
import pytest

from qar_sql import capture
from qar_sql.influence import influence

from test_influence import KW, make_data


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
    con.execute("create table t as select * from (values " + ", ".join(
        "(" + ", ".join("NULL" if data[c][i] is None else str(data[c][i]) for c in list(data)) + ")"
        for i in range(150)) + ") v(" + ", ".join(f'"{c.replace(chr(34), chr(34) * 2)}"' for c in data) + ")")
    con.execute(f"copy t to '{path}' (header, delimiter ',')")
    con.close()
    kw = {k: v for k, v in KW.items() if k != "key"}
    got = influence(str(path), **kw, top=10)
    want = influence(str(path), **kw, all_scores=True, top=10)
    assert got.top == want.top
    assert np.all(np.diff([s for _, s in got.top]) <= 0)
