"""The ``qar`` command through click's CliRunner: exact exit codes, one clear sentence naming the
bad value (never a traceback), the documented output formats, the database URL from the
environment, and passwords that never reach the output."""

from __future__ import annotations

import json
import math
import uuid

import click
import duckdb
import pytest
from click.testing import CliRunner
from conftest import PG_URL, Loader, quote

import qar_sql
from qar_sql.cli.main import cli
from qar_sql.output.markdown import cell
from tests.measures.test_audit import HOSTILE_COLUMNS, as_columns, check_against_oracle, random_table

JSON_KEYS = {
    "rows",
    "columns",
    "p",
    "alpha",
    "pi_u",
    "n_qi",
    "risk",
    "u",
    "n_exceedances",
    "xi",
    "beta",
    "warnings",
    "qis",
}
QI_KEYS = {"columns", "distinct", "singletons", "theta", "min_class_size"}


def _create(con, table: str, names, rows, types) -> None:
    ddl = ", ".join(f"{quote(n)} {types[n].replace('double precision', 'double')}" for n in names)
    con.execute(f"create table {quote(table)} ({ddl})")
    if rows:
        con.executemany(f"insert into {quote(table)} values ({', '.join('?' * len(names))})", rows)


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    """A DuckDB file with one table per situation; returns (path, {table: (names, rows)})."""
    path = str(tmp_path_factory.mktemp("cli") / "audit.duckdb")
    tables = {}
    people = random_table(3, 40)  # p = 3, pi_u = 0.1: a tail of 3 keys, clipped
    names, rows, types = random_table(1, 40, names=[f"c{i}" for i in range(8)])
    keyed = (names + ["id"], [r + (i,) for i, r in enumerate(rows)], {**types, "id": "bigint"})
    flat_names = [f"f{i}" for i in range(6)]  # identical columns: every θ equal, no tail
    flat = (flat_names, [(i % 4,) * 6 for i in range(30)], dict.fromkeys(flat_names, "bigint"))
    names, rows, types = random_table(5, 60, names=[f"c{i}" for i in range(6)])
    odd = (
        names + ["nothing", "same"],
        [r + (None, "k") for r in rows],
        {**types, "nothing": "text", "same": "text"},
    )
    con = duckdb.connect(path)
    for table, (names, rows, types) in {
        "people": people,
        "keyed": keyed,
        "flat": flat,
        "odd": odd,
        "empty": (people[0], [], people[2]),
        "one": (people[0], people[1][:1], people[2]),
    }.items():
        _create(con, table, names, rows, types)
        tables[table] = (names, rows)
    con.close()
    return path, tables


def run(args, code: int, *needles: str, env=None):
    """Invoke ``qar``; assert the exit code exactly, no traceback, and each needle in output."""
    result = CliRunner().invoke(cli, args, env=env)
    out = result.output
    assert "Traceback" not in out
    if result.exception is not None:
        assert isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code == code, out
    for needle in needles:
        assert needle in out, f"{needle!r} not in {out!r}"
    return result


# ---------------------------------------------------------------------------------------------
# Bad input: exit 2 (usage) or 3 (database), one sentence naming the value


def test_missing_file(tmp_path):
    missing = str(tmp_path / "nope.csv")
    r = run(["audit", missing], 2, repr(missing), "does not exist")
    assert r.output.count("\n") == 1


def test_missing_table_did_you_mean(db):
    path, _ = db
    run(["audit", path, "--table", "peple"], 2, "'peple'", "did you mean 'people'?")


def test_no_table_named_lists_tables(db):
    path, _ = db
    run(["audit", path], 2, "--table", "people")


def test_unknown_column_did_you_mean(db):
    path, _ = db
    run(
        ["audit", path, "-t", "people", "--columns", "semi;colon 50%,with spac"],
        2,
        "'with spac'",
        "not found; did you mean 'with space' (columns: ",
    )
    run(
        ["audit", path, "-t", "people", "--exclude", "selct"],
        2,
        "'selct'",
        "not found; did you mean 'select' (columns: ",
    )


def test_p_larger_than_columns(db):
    path, _ = db
    run(["audit", path, "-t", "people", "-c", "select,order", "-p", "3"], 2, "p = 3", "(2)")


@pytest.mark.parametrize("p", ["0", "-1"])
def test_p_below_one(db, p):
    path, _ = db
    run(["audit", path, "-t", "people", "-p", p], 2, f"p = {p}")


@pytest.mark.parametrize(
    "option,name,value",
    [
        ("--alpha", "alpha", "0"),
        ("--alpha", "alpha", "1"),
        ("--alpha", "alpha", "1.5"),
        ("--alpha", "alpha", "nan"),
        ("--pi-u", "pi_u", "0"),
        ("--pi-u", "pi_u", "-0.1"),
        ("--pi-u", "pi_u", "1"),
    ],
)
def test_alpha_pi_u_outside_unit_interval(db, option, name, value):
    path, _ = db
    run(["audit", path, "-t", "people", option, value], 2, f"{name} = {float(value)!r}", "(0, 1)")


@pytest.mark.parametrize("alpha,pi_u", [("0.05", "0.05"), ("0.2", "0.1")])
def test_alpha_not_below_pi_u(db, alpha, pi_u):
    path, _ = db
    run(
        ["audit", path, "-t", "people", "--alpha", alpha, "--pi-u", pi_u],
        2,
        f"alpha = {float(alpha)!r}",
        f"pi_u = {float(pi_u)!r}",
    )


def test_empty_table(db):
    path, _ = db
    run(["audit", path, "-t", "empty", "--pi-u", "0.1"], 2, "'empty'", "is empty")


def test_one_row(db):
    path, _ = db
    run(["audit", path, "-t", "one", "--pi-u", "0.1"], 2, "'one'", "one row", "at least 2")


def test_np_too_small_for_pi_u(db):
    path, _ = db
    # C(8, 1) = 8 quasi-identifiers cannot have a 5 % tail
    run(["audit", path, "-t", "people", "-p", "1"], 2, "N_p = 8", "pi_u = 0.05", "at least 14")


def test_no_tail_reports_null_risk_and_exits_2(db):
    path, _ = db
    r = run(["audit", path, "-t", "flat", "-p", "2", "-f", "json"], 2, "no tail")
    doc = json.loads(r.stdout)
    assert doc["risk"] is None and doc["u"] is None and doc["n_exceedances"] == 0
    assert doc["n_qi"] == 15 and {q["distinct"] for q in doc["qis"]} == {4}
    run(["audit", path, "-t", "flat", "-p", "2"], 2, "undefined: no tail")


def test_all_null_and_constant_columns_warn_and_still_audit(db):
    path, tables = db
    r = run(["audit", path, "-t", "odd", "-p", "2", "--pi-u", "0.2", "-f", "json"], 0)
    doc = json.loads(r.stdout)
    warnings = " ".join(doc["warnings"])
    assert "'nothing' is entirely NULL" in warnings
    assert "'same' is constant" in warnings
    assert doc["risk"] is not None
    names, rows = tables["odd"]
    api = qar_sql.audit(path, table="odd", p=2, pi_u=0.2)
    check_against_oracle(api, names, rows, 2, pi_u=0.2)
    assert doc["risk"] == api.risk


def test_keys_are_clipped_counted_and_warned(db):
    path, tables = db
    r = run(["audit", path, "-t", "keyed", "-p", "2", "--pi-u", "0.3", "-f", "json"], 0)
    doc = json.loads(r.stdout)
    assert doc["n_keys"] == 8  # every pair with "id"
    assert sum(q["theta"] == 1.0 for q in doc["qis"]) == 8
    assert any("8 of 36 quasi-identifiers are keys" in w for w in doc["warnings"])
    names, rows = tables["keyed"]
    fit = check_against_oracle(qar_sql.audit(path, table="keyed", p=2, pi_u=0.3), names, rows, 2, pi_u=0.3)
    assert fit.n_clipped == 8 and 0 < doc["risk"] < 1 and doc["risk"] == fit.risk


def test_bad_source_kinds(tmp_path):
    (tmp_path / "x.dat").write_text("a,b\n1,2\n")
    run(["audit", str(tmp_path / "x.dat")], 2, "x.dat", "cannot tell the format")
    run(["audit", str(tmp_path)], 2, "is a folder")
    (tmp_path / "fake.duckdb").write_text("not a database")
    run(
        ["audit", str(tmp_path / "fake.duckdb"), "-t", "t"], 2, "fake.duckdb"
    )  # not a DuckDB file: a bad input, as a bad CSV (issue 31)
    (tmp_path / "x.csv").write_text("a,b\n1,2\n")
    run(["audit", "--delimiter", "ab", str(tmp_path / "x.csv")], 2, "--delimiter 'ab'")
    run(["audit", str(tmp_path / "x.csv"), "-t", "t"], 2, "--table 't'")


def test_no_source(monkeypatch):
    monkeypatch.delenv("QAR_DATABASE_URL", raising=False)
    run(["audit"], 2, "no source given", "QAR_DATABASE_URL")


# ---------------------------------------------------------------------------------------------
# Thresholds and output formats


@pytest.fixture(scope="module")
def people(db):
    path, tables = db
    names, rows = tables["people"]
    result = qar_sql.audit(path, table="people", p=3, pi_u=0.1)
    check_against_oracle(result, names, rows, 3, pi_u=0.1)
    assert result.fit is not None
    return path, result


def test_fail_above(people):
    path, result = people
    base = ["audit", path, "-t", "people", "--pi-u", "0.1", "-q"]
    risk = result.risk
    r = run(base + ["--fail-above", repr(math.nextafter(risk, 0))], 1, "above the threshold")
    assert "above the threshold" in r.stderr and "above the threshold" not in r.stdout
    run(base + ["--fail-above", repr(risk)], 0)  # not above: equal
    run(base + ["--fail-above", "1"], 0)
    run(base + ["--fail-above", "0"], 1)
    run(base + ["--fail-above", "1.5"], 2, "1.5")


def test_json_has_documented_keys_and_full_precision(people):
    path, result = people
    r = run(["audit", path, "-t", "people", "--pi-u", "0.1", "--format", "json"], 0)
    assert r.stderr == ""  # no progress bar when stderr is not a terminal
    doc = json.loads(r.stdout)
    assert JSON_KEYS <= set(doc)
    assert doc["rows"] == 40 and doc["columns"] == list(HOSTILE_COLUMNS)
    assert (doc["source"], doc["table"], doc["engine"]) == (path, "people", "duckdb")
    assert (doc["p"], doc["alpha"], doc["pi_u"], doc["n_qi"]) == (3, 0.01, 0.1, 56)
    fit = result.fit
    # floats round-trip bit for bit
    assert (doc["risk"], doc["u"], doc["xi"], doc["beta"]) == (fit.risk, fit.u, fit.xi, fit.beta)
    assert doc["n_exceedances"] == fit.n_exceedances
    assert doc["warnings"] == list(result.warnings)
    assert len(doc["qis"]) == 56
    for got, want in zip(doc["qis"], result.qis, strict=True):
        assert QI_KEYS <= set(got)
        assert got["columns"] == list(want.columns)
        assert (got["distinct"], got["singletons"], got["min_class_size"]) == (
            want.distinct,
            want.singletons,
            want.min_class_size,
        )
        assert got["theta"] == want.theta
    assert repr(fit.risk) in r.stdout


def test_json_histograms(people):
    path, result = people
    r = run(["audit", path, "-t", "people", "--pi-u", "0.1", "-f", "json", "--histograms"], 0)
    doc = json.loads(r.stdout)
    assert [[tuple(x) for x in q["class_sizes"]] for q in doc["qis"]] == [list(q.class_sizes) for q in result.qis]


def test_markdown(people):
    path, result = people
    r = run(["audit", path, "-t", "people", "--pi-u", "0.1", "--format", "markdown"], 0)
    out = r.stdout
    assert out.startswith("## ") and "| field | value |" in out
    assert f"| rows | {result.rows} |" in out
    assert f"| risk | {cell(result.fit.risk)} |" in out
    top = result.riskiest(1)[0]  # the QIs riskiest first
    assert "### qis\n\n| index | columns |" in out and f"\n| {top.index} | {cell(list(top.columns))} |" in out
    assert cell('a"; drop table x; --') in out and "Read it as: T̂ =" in out


def test_text(people):
    path, result = people
    r = run(["audit", path, "-t", "people", "--pi-u", "0.1", "--top", "3"], 0)
    out = r.stdout
    assert "rows                40" in out
    assert f"{result.fit.risk:.10g}" in out
    assert "The 3 riskiest quasi-identifiers" in out
    assert "Warnings:" in out


def test_source_from_environment(people):
    path, result = people
    r = run(["audit", "-t", "people", "--pi-u", "0.1", "-f", "json"], 0, env={"QAR_DATABASE_URL": f"duckdb:///{path}"})
    assert json.loads(r.stdout)["risk"] == result.risk


# ---------------------------------------------------------------------------------------------
# PostgreSQL: URL from the environment, passwords masked


def test_postgres_url_from_environment_and_masked(pg, tmp_path):
    names, rows, types = random_table(3, 40)
    loader = Loader("postgresql", tmp_path)
    try:
        _, table = loader.load("people", as_columns(names, rows), types)
        r = run(["audit", "-t", table, "--pi-u", "0.1", "-f", "json", "-j", "3"], 0, env={"QAR_DATABASE_URL": PG_URL})
        doc = json.loads(r.stdout)
        api = qar_sql.audit(PG_URL, table=table, p=3, pi_u=0.1)
        check_against_oracle(api, names, rows, 3, pi_u=0.1)
        assert doc["risk"] == api.risk and doc["engine"] == "postgresql"
        from sqlalchemy.engine import make_url

        password = make_url(PG_URL).password
        assert password and f":{password}@" not in r.output
        assert "***" in doc["source"]
        # a missing table names the server with its password masked
        r = run(["audit", "-t", "no_such_table"], 2, "'no_such_table'", "***", env={"QAR_DATABASE_URL": PG_URL})
        assert f":{password}@" not in r.output
    finally:
        loader.cleanup()


@pytest.mark.parametrize("column,sql_type,value", [("j s", "json", "'{\"x\": 1}'"), ("pt", "point", "point(1, 2)")])
def test_postgres_column_without_equality_is_named(pg, column, sql_type, value):
    # json and point have no equality operator: PostgreSQL's own message names only the type.
    import warnings

    schema = f"t_noeq_{sql_type}_{uuid.uuid4().hex[:10]}"  # a run killed in the test leaves it behind
    with pg.begin() as c:
        c.exec_driver_sql(f'create schema "{schema}"')
        c.exec_driver_sql(f'create table "{schema}".t (a int, "{column}" {sql_type})')
        c.exec_driver_sql(f'insert into "{schema}".t select mod(i, 3), {value} from generate_series(1, 40) i')
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no SQLAlchemy warning about an unknown type
            run(
                ["audit", PG_URL, "-t", f"{schema}.t", "-p", "1", "--pi-u", "0.3", "--alpha", "0.1"],
                2,
                f"column {column!r} has type {sql_type}",
                f"--exclude {column!r}",
            )
            # qar risk and qar discover passed PostgreSQL's message on (exit 3)
            for args in (["risk", "-c", f"a,{column}"], ["risk", "-c", "a", "--sensitive", column], ["discover"]):
                run([*args, PG_URL, "-t", f"{schema}.t"], 2, f"column {column!r} has type {sql_type}")
    finally:
        with pg.begin() as c:
            c.exec_driver_sql(f'drop schema "{schema}" cascade')


def test_wrong_password_is_masked(pg):
    from sqlalchemy.engine import make_url

    url = make_url(PG_URL).set(password="s3cret-Pa55word").render_as_string(hide_password=False)
    r = run(["audit", url, "-t", "people"], 3, "cannot connect", "***")
    assert "s3cret-Pa55word" not in r.output
    r = run(["audit", "-t", "people"], 3, "***", env={"QAR_DATABASE_URL": url})
    assert "s3cret-Pa55word" not in r.output


def test_unknown_driver_is_a_usage_error():
    r = run(["audit", "postgresql+nodriver://u:hunter2@localhost/db", "-t", "x"], 2, "***")
    assert "hunter2" not in r.output


# ---------------------------------------------------------------------------------------------
# Help


def _commands(group: click.Group, prefix=()):
    for name, cmd in sorted(group.commands.items()):
        yield prefix + (name,), cmd
        if isinstance(cmd, click.Group):
            yield from _commands(cmd, prefix + (name,))


def test_every_command_has_help():
    commands = list(_commands(cli))
    assert {("audit",), ("sql",)} <= {path for path, _ in commands}
    run(["--help"], 0, "Exit codes")
    for path, cmd in commands:
        assert (cmd.help or "").strip(), f"qar {' '.join(path)} has no help text"
        for param in cmd.params:
            if isinstance(param, click.Option) and not param.hidden:
                assert (param.help or "").strip(), f"qar {' '.join(path)} {param.opts[0]} has no help"
        run([*path, "--help"], 0, "Usage:")
