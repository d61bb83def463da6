"""Record contributions and block elimination against brute force (delete the record, recompute
everything from scratch with a plain-Python oracle), on DuckDB and PostgreSQL."""

from __future__ import annotations

import csv
import itertools
import json
import random
from collections import Counter
from pathlib import Path

import duckdb
import numpy as np
import pytest
from click.testing import CliRunner
from conftest import quote, table_args

from qar_sql.cli.main import cli
from qar_sql.commands.eliminate import eliminate
from qar_sql.commands.records import contributions
from qar_sql.errors import NoTailError
from qar_sql.stats import evt

COLS = ["a", "b c", 'd"q', "e;f", "sélect"]
P, PI_U, ALPHA = 2, 0.2, 0.01


def make_data(n=70, seed=3):
    rng = random.Random(seed)
    data = {c: [rng.choice([None, 1, 2, 3, 4, 5, 6][: 3 + i]) for _ in range(n)] for i, c in enumerate(COLS)}
    data["id"] = rng.sample(range(10_000), n)
    return data


def oracle_risk(rows, combos):
    h = [len(Counter(tuple(r[k] for k in q) for r in rows)) for q in combos]
    try:
        return evt.qar_risk(np.array(h) / len(rows), len(rows), alpha=ALPHA, pi_u=PI_U).risk
    except NoTailError:
        return None


def key_ordered_rows(data):
    order = sorted(range(len(data["id"])), key=lambda i: data["id"][i])
    return [tuple(data[c][i] for c in COLS) for i in order]


KW = dict(columns=COLS, key=["id"], p=P, pi_u=PI_U, alpha=ALPHA)


def test_dt_and_proxies_equal_brute_force(engine):
    data = make_data()
    source, table = engine.load("people", data)
    res = contributions(source, table=table, **KW, top=10)
    rows = key_ordered_rows(data)
    combos = list(itertools.combinations(range(len(COLS)), P))
    t0 = oracle_risk(rows, combos)
    assert res.audit.risk == pytest.approx(t0, rel=1e-13)
    counts = [Counter(tuple(r[k] for k in q) for r in rows) for q in combos]
    theta = np.array([len(c) for c in counts]) / len(rows)
    for i, row in enumerate(rows):
        u = np.array([counts[j][tuple(row[k] for k in q)] == 1 for j, q in enumerate(combos)])
        assert res.n_unique[i] == u.sum()
        assert res.u_plus[i] == pytest.approx((u * theta).sum(), abs=1e-12)
        assert res.u_star[i] == pytest.approx((u * (1 - theta)).sum(), abs=1e-12)
        ti = oracle_risk(rows[:i] + rows[i + 1 :], combos)
        assert res.dt[i] == pytest.approx(t0 - ti, abs=1e-13)
    # records sharing a pattern share DT; the empty pattern is pattern 0
    assert res.patterns.counts.sum() == len(rows)
    assert res.summary()["share_unique_on_no_qi"] == pytest.approx(np.mean(res.n_unique == 0))
    # top keys are the key values of the top records, ties broken by key order
    order = res.order("dt")
    keys_sorted = sorted(data["id"])
    for r in order[:10]:
        assert res.key_of(r) == (keys_sorted[r],)
    dts = res.dt[order]
    for a, b, ra, rb in zip(dts, dts[1:], order, order[1:]):
        assert a > b or (a == b and ra < rb)


def test_identical_on_both_engines(tmp_path, pg):
    from conftest import on_both_engines

    data = make_data(90, seed=11)

    def run(loader):
        src, tab = loader.load("people", data)
        return contributions(src, table=tab, **KW)

    a, b = on_both_engines(tmp_path, run)
    assert np.array_equal(a.dt, b.dt) and np.array_equal(a.u_plus, b.u_plus)
    assert np.array_equal(a.n_unique, b.n_unique)


def test_elimination_points_equal_from_scratch_audits(engine):
    data = make_data(120, seed=5)
    source, table = engine.load("people", data)
    res = eliminate(source, table=table, by=["dt", "u_plus", "u_star", "random"], step=10, max_removed="50%", **KW)
    c = contributions(source, table=table, **KW)
    rows = key_ordered_rows(data)
    combos = list(itertools.combinations(range(len(COLS)), P))
    assert res.risk == pytest.approx(oracle_risk(rows, combos), rel=1e-13)
    for name in ("dt", "u_plus", "u_star", "random"):
        order = c.order(name) if name != "random" else np.random.default_rng(0).permutation(len(rows))
        assert [pt.removed for pt in res.curves[name]] == list(range(10, 61, 10))
        for pt in res.curves[name]:
            gone = set(order[: pt.removed].tolist())
            expect = oracle_risk([r for i, r in enumerate(rows) if i not in gone], combos)
            if expect is None:
                assert pt.risk is None
            else:
                assert pt.risk == pytest.approx(expect, rel=1e-12)
                assert pt.reduction == pytest.approx(1 - expect / res.risk, rel=1e-9, abs=1e-12)


def test_elimination_of_names_holding_percent_signs(engine):
    """The elimination binds its arrays as %(name)s parameters on PostgreSQL: a table or column
    name holding '%' (or a placeholder's very text) failed with "only '%s', '%b', '%t' are
    allowed as placeholders". The curves equal those of the same table under plain names."""
    data = make_data(120, seed=5)
    source, table = engine.load("people", data)
    plain = eliminate(source, table=table, by=["dt", "random"], step=10, max_removed="50%", **KW)
    hostile = {"a": "a%", "b c": "%(a0)s", 'd"q': "50%s", "e;f": "%%", "sélect": "%(qar_0)s"}
    renames = [f"alter table {{t}} rename column {quote(a)} to {quote(b)}" for a, b in hostile.items()]
    odd = quote('we"ird%s')
    if engine.name == "postgresql":
        with engine.eng.begin() as c:
            full = f"{quote(engine.schema)}.{quote('people')}"
            for sql in renames:
                c.exec_driver_sql(sql.format(t=full).replace("%", "%%"))
            c.exec_driver_sql(f"alter table {full} rename to {odd}".replace("%", "%%"))
        renamed = f'{engine.schema}.we"ird%s'
    else:
        con = duckdb.connect(engine.path)
        for sql in renames:
            con.execute(sql.format(t="people"))
        con.execute(f"alter table people rename to {odd}")
        con.close()
        renamed = 'we"ird%s'
    kw = {**KW, "columns": [hostile[c] for c in COLS]}
    res = eliminate(source, table=renamed, by=["dt", "random"], step=10, max_removed="50%", **kw)
    assert res.risk == plain.risk
    assert res.curves == plain.curves


def test_file_default_key_is_row_number(tmp_path):
    data = make_data(40, seed=2)
    path = tmp_path / "people.csv"
    with open(path, "w") as fh:
        fh.write(",".join('"' + c.replace('"', '""') + '"' for c in COLS) + "\n")
        for i in range(40):
            fh.write(",".join("" if data[c][i] is None else str(data[c][i]) for c in COLS) + "\n")
    res = contributions(str(path), columns=COLS, p=P, pi_u=PI_U, alpha=ALPHA)
    assert res.key == ("row",)
    rows = [tuple(data[c][i] for c in COLS) for i in range(40)]
    combos = list(itertools.combinations(range(len(COLS)), P))
    t0 = oracle_risk(rows, combos)
    for i in range(40):
        assert res.dt[i] == pytest.approx(t0 - oracle_risk(rows[:i] + rows[i + 1 :], combos), abs=1e-13)
    assert res.key_of(0) == (1,)


def run(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.fixture
def people(duck):
    data = make_data(60, seed=7)
    data["dup"] = [1, 1] + list(range(2, 60))
    data["nullkey"] = [None] + list(range(1, 60))
    return duck.load("people", data)


def test_cli_records_json_and_output(people, tmp_path):
    source, table = people
    out = tmp_path / "scores.csv"
    r = run(*table_args("records", source, table, COLS, "--format", "json", "--top", "5", "--output", str(out)))
    assert r.exit_code == 0, r.output
    obj = json.loads(r.output)
    assert len(obj["records"]) == 5
    assert {"key", "dt", "u_plus", "u_star", "n_unique"} <= set(obj["records"][0])
    assert set(obj["summary"]["correlations"]) == {"dt_u_plus", "dt_u_star", "u_plus_u_star"}
    lines = out.read_text().splitlines()
    assert lines[0] == "id,dt,u_plus,u_star,n_unique" and len(lines) == 61
    pq = tmp_path / "scores.parquet"
    r = run(*table_args("records", source, table, COLS, "--output", str(pq), "-q"))
    assert r.exit_code == 0 and pq.exists()
    r = run(*table_args("records", source, table, COLS, "--all", "--format", "json"))
    assert len(json.loads(r.output)["records"]) == 60


def test_output_files_guard_a_key_that_reads_as_a_formula(duck, tmp_path):
    # A text key is the user's data: in CSV, one a spreadsheet would run (=, +, -, @) starts
    # with ' (user_text.csv_cell, as --format csv writes it), in every per-record file (--by dt,
    # influence, suda); Parquet keeps it as it is.
    data = make_data(60, seed=7)
    data["id"] = [f'=HYPERLINK("x{i}")' if i % 2 else f"p{i}" for i in range(60)]
    source, table = duck.load("people", data)
    for by in ("dt", "influence", "suda"):
        out = tmp_path / f"{by}.csv"
        r = run(*table_args("records", source, table, COLS, "--by", by, "--output", str(out), "-q"))
        assert r.exit_code == 0, r.output
        with out.open(newline="", encoding="utf-8") as fh:
            keys = [row[0] for row in csv.reader(fh)][1:]
        assert sorted(keys) == sorted("'" + k if k.startswith("=") else k for k in data["id"]), by
    pq = tmp_path / "dt.parquet"
    r = run(*table_args("records", source, table, COLS, "--output", str(pq), "-q"))
    assert r.exit_code == 0, r.output
    got = duckdb.sql(f"select id from '{pq}'").fetchall()
    assert sorted(k for (k,) in got) == sorted(data["id"])


def test_cli_eliminate_json_and_plot(people, tmp_path):
    source, table = people
    png = tmp_path / "curves.png"
    options = ["--step", "5", "--max", "30%", "--by", "dt,u_plus,random", "--format", "json", "--plot", str(png)]
    r = run(*table_args("eliminate", source, table, COLS, *options))
    assert r.exit_code == 0, r.output
    obj = json.loads(r.output)
    assert set(obj["curves"]) == {"dt", "u_plus", "random"}
    assert obj["curves"]["dt"][0]["removed"] == 5 and "reduction" in obj["curves"]["dt"][0]
    assert png.read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize(
    "args, code, needle",
    [
        (["--key", "dup"], 2, "not unique"),
        (["--key", "nullkey"], 2, "NULL"),
        (["--key", "nope"], 2, "'nope'"),
        ([], 2, "--key"),
    ],
)
def test_records_bad_keys(people, args, code, needle):
    source, table = people
    r = run(*table_args("records", source, table, COLS, *args, key=None))
    assert r.exit_code == code, r.output
    assert needle in r.output and "Traceback" not in r.output


@pytest.mark.parametrize("mx, needle", [("150%", "150%"), ("3", "below one step"), ("0%", "0%"), ("abc", "abc")])
def test_eliminate_bad_max(people, mx, needle):
    source, table = people
    r = run(*table_args("eliminate", source, table, COLS, "--step", "5", "--max", mx))
    assert r.exit_code == 2, r.output
    assert needle in r.output


def test_server_table_without_key_is_refused(engine):
    source, table = engine.load("people", make_data(30))
    r = run(*table_args("records", source, table, COLS, key=None))
    assert r.exit_code == 2 and "--key" in r.output


def test_key_listed_as_qi_warns(duck):
    data = make_data(50)
    rng = random.Random(1)
    extra = [f"x{i}" for i in range(4)]
    for c in extra:
        data[c] = [rng.randint(1, 4) for _ in range(50)]
    source, table = duck.load("people", data)
    # 9 columns, p = 2: the 8 QIs containing the key are 22% of 36, inside the 30% tail
    res = contributions(source, table=table, columns=COLS + extra, key=["id"], p=2, pi_u=0.3)
    assert res.audit.n_keys == 0
    res = contributions(source, table=table, columns=COLS + extra[:3] + ["id"], key=["id"], p=2, pi_u=0.3)
    assert res.audit.n_keys == 8
    assert any("'id' is also a quasi-identifier" in w for w in res.warnings)


def test_records_store_with_hashed_keys(people, tmp_path, monkeypatch):
    import hashlib
    import hmac

    import duckdb

    source, table = people
    store = str(tmp_path / "store.duckdb")
    args = table_args("records", source, table, COLS, "--top", "7")
    r = run(*args, "--hash-keys")
    assert r.exit_code == 2 and "--store" in r.output
    # Without a secret the HMAC is keyed with nothing: refused before any work, with the reason.
    monkeypatch.delenv("QAR_HASH_SECRET", raising=False)
    r = run(*args, "--store", store, "--hash-keys")
    assert r.exit_code == 2 and "QAR_HASH_SECRET" in r.output and "reversible" in r.output
    assert not Path(store).exists()
    secret_file = tmp_path / "secret.txt"
    secret_file.write_text("file-pepper\n")
    r = run(*args, "--store", str(tmp_path / "other.duckdb"), "--hash-keys", "--hash-secret-file", str(secret_file))
    assert r.exit_code == 0, r.output
    monkeypatch.setenv("QAR_HASH_SECRET", "env-pepper")
    r = run(*args, "--store", store, "--hash-keys")
    assert r.exit_code == 0, r.output
    con = duckdb.connect(store, read_only=True)
    rows = con.execute(
        "select rank, record_key, key_hashed, contribution from qar_top_records order by rank"
    ).fetchall()
    status = con.execute("select status from qar_runs").fetchall()
    con.close()
    assert status == [("complete",)] and len(rows) == 7
    assert all(h and len(k) == 64 for _, k, h, _ in rows)
    # The attack that recovered keys from an unkeyed HMAC finds nothing now.
    guesses = {hmac.new(b"", str(i).encode(), hashlib.sha256).hexdigest() for i in range(1, 50_001)}
    assert not guesses & {k for _, k, _, _ in rows}
    keyed = {hmac.new(b"env-pepper", str(i).encode(), hashlib.sha256).hexdigest() for i in range(0, 50_001)}
    assert {k for _, k, _, _ in rows} <= keyed
    assert [c for *_, c in rows] == sorted((c for *_, c in rows), reverse=True)


def test_no_tail_from_several_identifiers_names_them_in_the_plural(duck):
    """Every column identifies every record: "every QI containing one of them", "leave them out"."""
    data = make_data(30)
    for c in ("u1", "u2", "u3"):
        data[c] = [v + 1 for v in data["id"]]  # unique too: every θ is 1
    source, table = duck.load("people", data)
    r = run(*table_args("records", source, table, ["id", "u1", "u2", "u3"], p=1))
    assert r.exit_code != 0 and "so record contributions are too" in r.output
    assert "every QI containing one of them is a key" in r.output
    assert "leave them out with --exclude 'id,u1,u2,u3'; also, key column 'id'" in r.output, r.output
