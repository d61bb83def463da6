"""``qar records`` and ``qar eliminate`` in the one shape (issue 25): their parameters
(RecordsParams, EliminateParams — the one home of defaults and option rules), ``run(session,
params)`` equal to the Python API, the CLI opening nothing and rendering nothing, the JSON
through the one writer, and the coded-columns lifecycle the ranking modules now share
(:func:`qar_sql.engines.session.coded`), on DuckDB and PostgreSQL."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

import qar_sql
from qar_sql.commands import eliminate as eliminate_command
from qar_sql.commands import records as records_command
from qar_sql.engines.session import coded
from qar_sql.engines.source import connect
from qar_sql.errors import DatabaseError, ParameterError, UsageError
from qar_sql.output.render import render
from qar_sql.parameters.ranking import EliminateParams, RecordsParams, parse_by, parse_orders
from qar_sql.ranking.eliminate import CurvePoint, Elimination

ROOT = Path(__file__).resolve().parents[2]
COLS = ["a", "b", "c", "d"]
AUDIT = dict(columns=COLS, p=2, pi_u=0.2)


def make_data(n=60, seed=5):
    rng = random.Random(seed)
    data = {c: [rng.choice([None, 1, 2, 3, 4, 5][: 3 + i]) for _ in range(n)] for i, c in enumerate(COLS)}
    data["id"] = rng.sample(range(10_000), n)
    return data


# --- parameters ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, error, words",
    [
        (dict(output="scores.txt"), ParameterError, "must end in .csv or .parquet"),
        (dict(by="entropy"), ParameterError, "--by 'entropy' is not a record score"),
        (dict(by="influence", top=0), ParameterError, "--top 0 must be a whole number"),
        (dict(by="dt", alpha=1.5), ParameterError, "alpha"),
        (dict(by="suda", sampling_fraction=2.0), ParameterError, "sampling"),
    ],
)
def test_records_params_refuse_each_bad_combination_when_made(kwargs, error, words):
    with pytest.raises(error, match=words):
        RecordsParams(**kwargs)


@pytest.mark.parametrize(
    "kwargs, words",
    [
        (dict(by="dt", max_size=2), "max_size has no effect without by='suda'"),
        (dict(by="influence", population=100), "population has no effect without by='suda'"),
        (dict(by="suda", refine=5), "refine has no effect without by='influence'"),
        (dict(by="dt", refine=5), "refine has no effect without by='influence'"),
        (dict(by="u_plus", compare_dt=True), "compare_dt has no effect without by='influence'"),
    ],
)
def test_the_api_refuses_a_ranking_option_of_another_ranking(kwargs, words, tmp_path):
    """Each ranking's options are Needs relations (refused typed, or as a keyword other than its
    default; a QAR_MAX_SIZE set for qar discover no longer fails qar records)."""
    with pytest.raises(qar_sql.QarError, match=words):
        qar_sql.records(str(tmp_path / "x.csv"), key="id", **kwargs)


def test_records_params_fetch_every_key_for_output_all_and_whole_table_formats():
    assert not RecordsParams().every_key
    assert RecordsParams(output="x.csv").every_key
    assert RecordsParams(all_records=True).every_key
    assert RecordsParams(all_keys=True).every_key


def test_eliminate_params_rules_and_option_parsing():
    assert EliminateParams(by=("dt", "random", "dt")).by == ("dt", "random")
    with pytest.raises(ParameterError, match="--by 'nope' is not a ranking"):
        EliminateParams(by=("dt", "nope"))
    with pytest.raises(ParameterError, match="--step 0 must be a whole number"):
        EliminateParams(step=0)
    assert parse_by(" dt, random ,") == ("dt", "random")
    with pytest.raises(UsageError, match="names no ranking"):
        parse_by(" , ")
    assert parse_orders(["edu=low,mid,high"]) == {"edu": ["low", "mid", "high"]}
    assert parse_orders([]) is None
    with pytest.raises(UsageError, match="must look like COLUMN=v1,v2,v3"):
        parse_orders(["edu"])


def test_click_options_take_their_defaults_from_the_parameters():
    from qar_sql.cli.main import cli

    rec = {p.name: p.default for p in cli.commands["records"].params}
    assert (rec["top"], rec["by"], rec["refine"]) == (100, "dt", 0)
    assert (RecordsParams().top, RecordsParams().by, RecordsParams().refine) == (100, "dt", 0)
    eli = {p.name: p.default for p in cli.commands["eliminate"].params}
    d = EliminateParams()
    assert eli["by"] == ",".join(d.by) and eli["step"] == d.step
    assert eli["max_removed"] == d.max_removed and eli["seed"] == d.seed


def test_eliminate_params_read_the_command_lines_texts():
    """--by dt,random and --order COLUMN=v1,v2 reach the fields as typed; the fields read them."""
    got = EliminateParams(by=" dt, random ,dt", orders=("edu=low,mid,high",))
    assert got.by == ("dt", "random") and got.orders == {"edu": ["low", "mid", "high"]}
    assert EliminateParams(orders=()).orders is None
    with pytest.raises(UsageError, match="--by ' , ' names no ranking"):
        EliminateParams(by=" , ")


# --- run(session, params) is the API's work ----------------------------------------------------


def test_run_equals_the_api_for_every_mode(engine):
    source, table = engine.load("people", make_data())
    with connect(source, table=table) as s:
        by_dt = records_command.run(s, RecordsParams(**AUDIT, key=["id"], top=5, by="u_star"))
        by_inf = records_command.run(s, RecordsParams(**AUDIT, key=["id"], top=5, by="influence", compare_dt=True))
        curves = eliminate_command.run(s, EliminateParams(**AUDIT, key=["id"], by=("dt", "random"), step=5))
    api = records_command.contributions(source, table=table, **AUDIT, key=["id"], top=5, by="u_star")
    np.testing.assert_array_equal(by_dt.u_star, api.u_star)
    np.testing.assert_array_equal(by_dt.dt, api.dt)
    assert by_dt.keys == api.keys
    inf = records_command.influence(source, table=table, **AUDIT, key=["id"], top=5, all_scores=True)
    assert by_inf.top == inf.top
    # compare_dt: the correlation of I with exact DT, computed independently here
    from qar_sql.stats.contributions import correlations

    assert inf.scores is not None
    assert by_inf.correlation_with_dt == correlations(inf.scores, api.dt)
    again = eliminate_command.eliminate(source, table=table, **AUDIT, key=["id"], by=("dt", "random"), step=5)
    assert curves.to_dict() == again.to_dict()


def test_run_writes_every_records_scores_through_the_session(duck, tmp_path):
    source, table = duck.load("people", make_data())
    out = tmp_path / "influence.csv"
    with connect(source, table=table) as s:
        inf = records_command.run(s, RecordsParams(**AUDIT, key=["id"], by="influence", output=str(out)))
    lines = out.read_text().splitlines()
    assert lines[0] == "id,influence" and len(lines) == 1 + inf.audit.rows
    ids = sorted(make_data()["id"])  # key order
    assert [int(line.split(",")[0]) for line in lines[1:]] == ids
    assert inf.scores is not None
    assert [float(line.split(",")[1]) for line in lines[1:]] == inf.scores.tolist()


# --- no CLI body; one JSON writer ----------------------------------------------------------------


def test_records_and_eliminate_have_no_command_line_module_of_their_own():
    """Both are made from their parameters (qar_sql/command.py): no body that could open or render."""
    assert not (ROOT / "qar_sql" / "cli" / "ranking.py").exists()


def test_eliminate_json_keeps_its_ascii_escapes():
    res = Elimination(
        risk=0.5,
        rows=10,
        step=1,
        max_removed=2,
        curves={"dt": (CurvePoint(1, 0.25, 0.5), CurvePoint(2, None, None))},
        notes=("the key column 'sélect' — a note",),
    )
    # what qar eliminate --format json has always written, byte for byte
    assert render(res, "json") == json.dumps(res.to_dict(), indent=2, allow_nan=False) + "\n"
    assert "\\u00e9" in render(res, "json")


# --- one lifecycle of coded columns ------------------------------------------------------------


def test_coded_without_an_order_and_on_both_paths_gives_the_same_codes(engine):
    source, table = engine.load("people", make_data())
    with connect(source, table=table) as s:
        d = s.db.dialect
        got = []
        for materialize in (None, False):
            with s.coded(["a", "b"], materialize=materialize, what="test") as c:
                sql = "select c0, c1 from " + c.encoded
                if c.encode_sql is not None:
                    sql = f"with encoded as ({c.encode_sql})\nselect c0, c1 from encoded"
                got.append(sorted(s.db.query(sql)))
                if c.materialized:
                    assert c.name is not None and d.quote(c.name) == c.encoded
                    name = c.name
        if d.temp_tables:  # dropped on exit
            with pytest.raises(DatabaseError):
                s.db.query(f"select 1 from {d.quote(name)}")
    assert got[0] == got[1] and len(got[0]) == 60


def test_coded_drops_its_temp_table_after_an_error(duck):
    source, table = duck.load("people", make_data())
    with connect(source, table=table) as s:
        with pytest.raises(RuntimeError):
            with coded(s.db, s.relation, ["a"], what="test") as c:
                name = c.name
                raise RuntimeError("interrupted")
        assert name is not None
        assert not s.db.query(f"select * from duckdb_tables() where table_name = '{name}'")


# --- qar records --store: the recorded run opens the source, --output follows it --------------


def test_records_store_records_a_source_that_fails_and_writes_output_after_the_run(duck, tmp_path):
    from click.testing import CliRunner

    from qar_sql.cli.main import cli
    from qar_sql.compliance.store import runs

    source, table = duck.load("people", make_data())
    store, out = str(tmp_path / "store.duckdb"), tmp_path / "scores.csv"
    common = ["-c", ",".join(COLS), "-p", "2", "--pi-u", "0.2", "--key", "id", "--store", store, "-q"]
    r = CliRunner().invoke(cli, ["records", source, "-t", table, *common, "--output", str(out)])
    assert r.exit_code == 0, r.output
    assert [x.status for x in runs(store)] == ["complete"]
    assert len(out.read_text().splitlines()) == 1 + 60
    # a table that is not there: the run was started, so an existing store records it as failed
    # (a store this run had just made is removed instead: test_store.py)
    r = CliRunner().invoke(cli, ["records", source, "-t", "no_such_table", *common])
    assert r.exit_code == 2 and "no_such_table" in r.output, r.output
    assert [x.status for x in runs(store)] == ["complete", "failed"]


def test_all_text_ranks_the_records_of_the_audit_that_read_the_csv_as_text(tmp_path):
    """The audit's note says "Use --all-text"; qar records --all-text (every ranking, not only
    suda) reads the CSV as that audit did: U+ and n_unique per record equal a brute force over the
    cells as text ("1" and "1.0" two values), and the records' T̂ is the --all-text audit's."""
    import itertools
    from collections import Counter

    from click.testing import CliRunner

    from qar_sql.cli.main import cli

    rng = random.Random(11)
    rows = [[str(i), rng.choice(["1", "1.0", "2"]), *(str(rng.randint(0, 3)) for _ in range(4))] for i in range(40)]
    path = tmp_path / "t.csv"
    path.write_text("id,a,b,c,d,e\n" + "".join(",".join(r) + "\n" for r in rows))
    common = ["-x", "id", "-p", "2", "--pi-u", "0.3", "-f", "json", "-q", "--all-text"]
    run = CliRunner().invoke(cli, ["records", str(path), "--key", "id", "--all", *common])
    assert run.exit_code == 0, run.output
    got = json.loads(run.output)
    audit = CliRunner().invoke(cli, ["audit", str(path), *common])
    assert audit.exit_code == 0, audit.output
    assert got["risk"] == json.loads(audit.output)["risk"]
    qis = list(itertools.combinations(range(1, 6), 2))
    counts = [Counter(tuple(r[c] for c in qi) for r in rows) for qi in qis]
    theta = [len(c) / len(rows) for c in counts]
    for rec in got["records"]:
        row = rows[int(rec["key"])]
        unique = [j for j, qi in enumerate(qis) if counts[j][tuple(row[c] for c in qi)] == 1]
        assert rec["n_unique"] == len(unique)
        assert rec["u_plus"] == pytest.approx(sum(theta[j] for j in unique), abs=1e-12)
    assert len(got["records"]) == 40


def test_all_text_reaches_the_session_from_the_api_and_the_command_line(tmp_path):
    """--all-text is a parameter of qar records (every ranking) that the session opens
    with (Command.session_params): the CSV's cells come back as text, 1.0 and 1 two values."""
    from click.testing import CliRunner

    import qar_sql
    from qar_sql.cli.main import cli

    path = tmp_path / "t.csv"
    path.write_text("id,a,b\n" + "".join(f"{i},{'1.0' if i % 2 else '1'},{i % 3}\n" for i in range(1, 13)))
    common = dict(key=["id"], by="suda", columns=["a", "b"], top=12)
    as_text = qar_sql.records(str(path), all_text=True, **common)
    inferred = qar_sql.records(str(path), **common)
    assert {k for k in as_text.keys.values()} == {(str(i),) for i in range(1, 13)}
    assert {k for k in inferred.keys.values()} == {(i,) for i in range(1, 13)}
    # a, read as text, has two values (1 and 1.0): with b's three, 6 classes of 2 records, no unique;
    # inferred as numbers, a is one value: 3 classes of 4. Either way SUDA finds no sample unique.
    assert float(as_text.suda.score.sum()) == 0.0 == float(inferred.suda.score.sum())
    args = ["records", str(path), "--key", "id", "--by", "suda", "-c", "a,b", "-f", "json", "-q"]
    run = CliRunner().invoke(cli, [*args, "--all-text"])
    assert run.exit_code == 0, run.output
    assert '"1"' in run.output and '"1"' not in CliRunner().invoke(cli, args).output


def test_no_tail_because_of_the_key_is_one_sentence_per_problem(tmp_path):
    """The key left among the QI columns makes every QI with it a key: the refusal names the
    missing tail and the key column, joined as clauses (it glued "… 'id' Also: key column …")."""
    from click.testing import CliRunner

    from qar_sql.cli.main import cli

    path = tmp_path / "t.csv"
    path.write_text("id,a,b\n" + "".join(f"{i},{i % 2},{i % 3}\n" for i in range(12)))
    run = CliRunner().invoke(cli, ["records", str(path), "--key", "id", "-p", "2", "--pi-u", "0.5", "-q"])
    assert run.exit_code == 2, run.output
    assert "record contributions are too: no tail to fit" in run.output
    assert "--exclude 'id'; also, key column 'id' is also a quasi-identifier column" in run.output
