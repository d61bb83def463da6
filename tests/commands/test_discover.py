"""``qar discover`` against a plain-Python oracle, on DuckDB and PostgreSQL; Pastore's row.

The oracle counts classes with ``collections.Counter`` over row tuples (``None`` is a value and
equals other ``None`` s: GROUP BY semantics; with drop_null, rows with a ``None`` in the
combination are left out of it), walks sizes 1..s itself and prunes supersets of identifiers
itself. Column names are hostile on purpose.
"""

from __future__ import annotations

import itertools
import json
import math
import random
from collections import Counter

import pytest
from click.testing import CliRunner

import qar_sql
from qar_sql.cli.main import cli

COLS = ('a"b', "semi;colon %s", "dot.ted", "ünï©ødé", "select", "id x")


def make_table(n=60, seed=7):
    rng = random.Random(seed)
    data = {
        'a"b': [rng.choice(["x", "y", "z", None]) for _ in range(n)],
        "semi;colon %s": [rng.choice([1, 2, 3, 4, 5, 6, 7, 8, None]) for _ in range(n)],
        "dot.ted": [rng.choice(["", "p", "q", None]) for _ in range(n)],  # '' is a value, not NULL
        "ünï©ødé": [rng.randrange(25) if rng.random() > 0.1 else None for _ in range(n)],
        "select": [rng.choice(["k", "l"]) for _ in range(n)],
        "id x": list(range(n)),  # an identifier: its supersets must be skipped
    }
    return data


def oracle(data, columns, max_size, drop_null):
    rows = list(zip(*(data[c] for c in columns)))
    found, idents, skipped, order = [], [], 0, {}
    for size in range(1, max_size + 1):
        for combo in itertools.combinations(range(len(columns)), size):
            names = tuple(columns[i] for i in combo)
            order[names] = len(order)
            if any(set(i) <= set(combo) for i in idents):
                skipped += 1
                continue
            keys = [tuple(r[i] for i in combo) for r in rows]
            if drop_null:
                keys = [k for k in keys if None not in k]
            classes = Counter(keys)
            counted = sum(classes.values())
            ident = counted > 0 and len(classes) == counted
            if ident:
                idents.append(combo)
            found.append(
                {
                    "columns": list(names),
                    "rows": counted,
                    "distinct": len(classes),
                    "singletons": sum(1 for v in classes.values() if v == 1),
                    "singleton_share": (sum(1 for v in classes.values() if v == 1) / counted) if counted else 0.0,
                    "min_class_size": min(classes.values()) if classes else 0,
                    "identifier": ident,
                }
            )
    found.sort(key=lambda c: (-c["singletons"], len(c["columns"]), order[tuple(c["columns"])]))
    cands = [c for c in found if not c["identifier"] and c["singletons"] > 0]
    best = cands[0]["columns"] if cands else []
    return found, best, skipped, [[columns[i] for i in c] for c in idents]


def as_dicts(result):
    return result.to_dict()["combinations"]


@pytest.mark.parametrize("drop_null", [False, True])
def test_counts_equal_oracle(engine, drop_null):
    data = make_table()
    source, table = engine.load('my "t"; x', data)
    seen = []
    r = qar_sql.discover(
        source,
        table=table,
        max_size=3,
        drop_null=drop_null,
        batch_size=7,
        jobs=2,
        progress=lambda d, t: seen.append((d, t)),
    )
    found, best, skipped, idents = oracle(data, COLS, 3, drop_null)
    assert r.rows == 60
    assert as_dicts(r) == found
    assert list(r.best_qid) == best
    assert r.skipped == skipped >= math.comb(5, 1) + math.comb(5, 2)  # every superset of "id x"
    assert [list(i) for i in r.identifiers] == idents and ["id x"] in idents
    assert seen[-1][0] == seen[-1][1] == sum(math.comb(6, s) for s in (1, 2, 3))


def test_engines_agree_and_columns_option(engine):
    data = make_table(n=40, seed=3)
    source, table = engine.load("t", data)
    cols = ["ünï©ødé", 'a"b', "select"]
    r = qar_sql.discover(source, table=table, columns=cols, max_size=5)
    found, best, skipped, _ = oracle(data, cols, 3, False)
    assert as_dicts(r) == found and list(r.best_qid) == best and r.skipped == skipped
    assert r.max_size == 3 and "combinations stop at 3" in r.warnings[0]


def test_best_qid_prefers_smaller_combination(duck):
    # b alone has as many singletons as (a, b): the smaller set wins.
    data = {"a": [1, 1, 1, 1, 2, 2], "b": [1, 2, 3, 3, 4, 4], "c": [0, 0, 0, 0, 0, 0]}
    source, table = duck.load("t", data)
    r = qar_sql.discover(source, table=table, max_size=2)
    assert r.best_qid == ("b",)
    assert r.best.singletons == 2
    assert r.combinations[0].columns == ("b",)


def test_no_singletons_means_no_best_qid(duck):
    source, table = duck.load("t", {"a": [1, 1, 2, 2], "b": ["x", "x", "y", "y"]})
    r = qar_sql.discover(source, table=table, max_size=2)
    assert r.best_qid == () and r.best is None and r.identifiers == ()


def test_pastore_driver_licence_row(shared_data):
    """Pastore, Pellegrino & Scarano 2020, Table 1, Valle d'Aosta."""
    csv = shared_data / "driver_license" / "driverLicense_ValleAosta.csv"
    qid = ["anno_nascita", "sesso", "comune_residenza"]
    r = qar_sql.discover(str(csv), columns=qid, max_size=3, drop_null=True)
    row = next(c for c in r.combinations if c.columns == tuple(qid))
    assert (row.rows, row.distinct, row.singletons) == (87_464, 9_174, 1_684)
    assert round(100 * row.singleton_share, 2) == 1.93
    assert r.best_qid == tuple(qid)


def test_cli_json_text_markdown(duck):
    data = make_table(n=30, seed=11)
    source, table = duck.load("t", data)
    runner = CliRunner()
    res = runner.invoke(cli, ["discover", source, "-t", table, "--max-size", "2", "--drop-null", "-f", "json", "-q"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    found, best, skipped, _ = oracle(data, COLS, 2, True)
    assert out["rows"] == 30 and out["best_qid"] == best and out["skipped"] == skipped
    assert out["combinations"] == found
    assert set(out["combinations"][0]) == {
        "columns",
        "rows",
        "distinct",
        "singletons",
        "singleton_share",
        "min_class_size",
        "identifier",
    }
    text = runner.invoke(cli, ["discover", source, "-t", table, "-s", "2", "--top", "3"])
    assert text.exit_code == 0 and "best QID" in text.output and "identifier" in text.output
    md = runner.invoke(cli, ["discover", source, "-t", table, "-s", "2", "-f", "markdown"])
    assert md.exit_code == 0 and md.output.startswith("## ") and "### combinations" in md.output
    assert "| columns | rows | distinct | singletons |" in md.output


def test_cli_errors(duck):
    source, table = duck.load("t", {"a": [1, 2]})
    empty_src, empty = duck.load("e", {"a": []}, {"a": "bigint"})
    runner = CliRunner()
    bad_col = runner.invoke(cli, ["discover", source, "-t", table, "-c", "nope"])
    assert bad_col.exit_code == 2 and "'nope'" in bad_col.output
    assert runner.invoke(cli, ["discover", source, "-t", table, "--max-size", "0"]).exit_code == 2
    res = runner.invoke(cli, ["discover", empty_src, "-t", empty])
    assert res.exit_code == 2 and "empty" in res.output
    assert runner.invoke(cli, ["discover", "--help"]).exit_code == 0
