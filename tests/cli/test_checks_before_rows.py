"""Every input check runs before the first query that reads rows (issue 39, item 6).

Generated over the click command tree (every command of ``qar --help``, ``qar scan`` and the
pre-commit hook), not a list: each option that takes a value gets values that are wrong by
construction (a name that is no column of the table, a file in a folder that does not exist, a
file that is a folder or holds no TOML, numbers out of every range). The table is a DuckDB VIEW
whose filter raises ``qar-test: the rows were read`` the first time a row is evaluated, so a
command that reads rows stops there: what counts as reading rows is exactly what evaluates that
filter. Catalog queries (DuckDB's ``duckdb_tables()``, ``DESCRIBE``, ``LIMIT 0``) do not; the
same view on PostgreSQL (its filter a function that raises) checks a subset there.

A case passes when the command refuses the value (exit 2) without the marker, or accepts it
(the marker: it went on to read rows) where the same value is no error on the plain view. A
refusal that comes only after rows were read is the finding this test exists for.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import os
from pathlib import Path
from typing import Any

import click
import duckdb
import pytest
from click.testing import CliRunner

import qar_sql
from qar_sql.cli import hook
from qar_sql.cli.main import cli

MARKER = "qar-test: the rows were read"
COLUMNS = ("id", "age", "sex", "zip", "job", "edu", "race", "income", "disease")
#: Options that are no input of the run: the log's level, the output's format.
SKIPPED = {"log_level", "verbose", "fmt", "format", "quiet", "help"}
#: The commands of ``qar --help`` today: a smaller tree means the derivation lost some.
AT_LEAST = 16


def _table(path: Path, boom: bool) -> str:
    con = duckdb.connect(str(path))
    values = ", ".join(
        f"hash(i, {n}) % {m} as {c}" for n, (c, m) in enumerate(zip(COLUMNS[1:], (40, 2, 30, 9, 5, 6, 11, 4)))
    )
    con.execute(f"create table base as select i as id, {values} from range(300) t(i)")
    where = f"where error('{MARKER}, id ' || id) is null" if boom else ""
    con.execute(f"create view people as select * from base {where}")
    con.close()
    return str(path)


@dataclasses.dataclass(frozen=True)
class Files:
    boom: str
    plain: str
    treatments: str
    hierarchies: str
    garbage: str
    folder: str
    missing: str  # a path in a folder that does not exist


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> Files:
    tmp = tmp_path_factory.mktemp("rows")
    (tmp / "treat.toml").write_text(
        'qid = "q"\n[qis]\nq = ["age", "sex", "zip"]\n[treatments.age5]\ncolumn = "age"\nkind = "bands"\nwidth = 5\n'
    )
    (tmp / "h.toml").write_text("[hierarchies.age]\nwidths = [5, 10, 20]\norigin = 0\n")
    (tmp / "garbage.toml").write_text("this is [[ not = toml\n")
    (tmp / "folder").mkdir()
    return Files(
        _table(tmp / "boom.duckdb", True), _table(tmp / "plain.duckdb", False), str(tmp / "treat.toml"),
        str(tmp / "h.toml"), str(tmp / "garbage.toml"), str(tmp / "folder"), str(tmp / "no" / "such" / "x.toml"),
    )  # fmt: skip


def base_args(name: str, source: str, f: Files) -> list[str]:
    """A run of ``name`` on ``source`` that succeeds on the plain view: SOURCE and the options
    the command cannot run without."""
    common = [source, "-t", "people", "-x", "id,disease"]
    extra = {
        "anonymize": [
            *common,
            "--qid",
            "age",
            "--hierarchy",
            f"age={f.hierarchies}",
            "--k",
            "2",
            "--risk-below",
            "0.99",
        ],
        "compare": [source, source, "-t", "people", "--treated-table", "people", "-x", "id,disease"],
        "eliminate": [*common, "--key", "id", "--step", "10"],
        "records": [*common, "--key", "id"],
        "report": [*common, "--key", "id", "-o", str(Path(f.folder) / "r.html")],
        "sql": [source, "-t", "people", "-c", "age,sex,zip,job,edu,race"],
        "uniqueness": [*common, "-g", "5"],
        "whatif": [*common, "-T", f.treatments],
    }
    return extra.get(name, common)


def _commands() -> dict[str, click.Command]:
    ctx = click.Context(cli)
    return {name: cli.get_command(ctx, name) for name in cli.list_commands(ctx)}  # type: ignore[misc]


COMMANDS = _commands()
#: The commands that read a table (SOURCE): those whose first argument is SOURCE or ORIGINAL.
TABLE_COMMANDS = sorted(
    n
    for n, c in COMMANDS.items()
    if any(p.name in ("source", "original") for p in c.params if isinstance(p, click.Argument))
)


def bad_values(param: click.Option, f: Files) -> list[str]:
    """Values of ``param`` wrong by construction, from its click type: a name that is no column
    (nor a file, a treatment, a store), a file in a folder that does not exist or one that holds
    no TOML, numbers below and far above every range."""
    kind = param.type
    if isinstance(kind, click.Choice) or param.is_flag or param.count:
        return []  # (click refuses another word itself, before the command's body)
    if isinstance(kind, click.Path):
        return [f.missing, f.garbage]
    if isinstance(kind, click.types.IntParamType | click.IntRange):
        return ["-7", "1000000"]
    if isinstance(kind, click.types.FloatParamType | click.FloatRange):
        return ["-0.5", "7"]
    return ["nosuch_col"]


#: Values that are no error (checked on the plain view: the command runs, exit 0), by option
#: and value as :func:`bad_values` writes them ("MISSING" and "GARBAGE" stand for the files): a
#: delimiter of a table that is no CSV is not read; counts such as --top cap what is shown; text
#: such as --title is shown as given. A new option whose bad value reads rows first fails the
#: test; add it here only when its value is right.
ACCEPTED = {
    ("--delimiter", "nosuch_col"), ("--top", "1000000"), ("--k", "1000000"), ("--bootstrap", "1000000"),
    ("--max-size", "1000000"), ("--population", "1000000"), ("--suda-max-size", "1000000"), ("--l", "1000000"),
    ("--monte-carlo", "1000000"), ("--seed", "-7"), ("--seed", "1000000"), ("--exposed", "1000000"),
    ("--exposed-qis", "1000000"), ("--anonymeter-attacks", "1000000"), ("--greedy-steps", "1000000"),
    ("--title", "nosuch_col"), ("--owner", "nosuch_col"), ("--purpose", "nosuch_col"),
    ("--hash-secret-file", "GARBAGE"), ("--key", "nosuch_col"), ("--output", "GARBAGE"),
}  # fmt: skip
#: Values whose error needs the rows (the table's row count, the fit's exceedances): allowed
#: after a query that reads rows, since no catalog can tell.
NEED_ROWS = {("--group-size", "1000000"), ("--min-exceedances", "1000000"), ("--step", "1000000")}
#: One command's value that is no error: qar compare's -p above its columns is a note beside its
#: metrics (it reports them when the QaR risk cannot be estimated).
OWN = {("compare", "-p", "1000000")}


def cases(f: Files | None = None):
    f = f or Files("S", "S", "T", "H", "G", "D", "M")
    for name in TABLE_COMMANDS:
        for param in COMMANDS[name].params:
            if isinstance(param, click.Option) and param.name not in SKIPPED:
                for value in bad_values(param, f):
                    yield name, param.opts[0], value


def _symbol(value: str, f: Files) -> str:
    return {f.missing: "MISSING", f.garbage: "GARBAGE"}.get(value, value)


def test_the_derived_tree_is_not_smaller_than_today():
    assert len(COMMANDS) >= AT_LEAST, sorted(COMMANDS)
    assert len(TABLE_COMMANDS) >= 11, TABLE_COMMANDS
    assert sum(1 for _ in cases()) >= 280


def _invoke(args: list[str]):
    return CliRunner().invoke(cli, args, catch_exceptions=False)


def test_every_bad_value_is_refused_before_the_rows_are_read(files):
    for name in TABLE_COMMANDS:  # (the base run reads rows: the view is a witness; qar sql reads none)
        r = _invoke([name, *base_args(name, files.boom, files)])
        assert (MARKER in r.output) != (name == "sql"), (name, r.output)
    findings, refused, allowed = [], 0, 0
    for name, flag, value in cases(files):
        r = _invoke([name, *base_args(name, files.boom, files), flag, value])
        assert "Traceback" not in r.output, (name, flag, value, r.output)
        if MARKER not in r.output:
            refused += r.exit_code == 2
            continue
        allowed += 1
        symbol = _symbol(value, files)
        if (flag, symbol) not in ACCEPTED | NEED_ROWS and (name, flag, symbol) not in OWN:
            findings.append(f"qar {name} {flag} {value!r} read rows before refusing or accepting it")
    assert not findings, "\n".join(findings)
    assert refused > 4 * allowed, (refused, allowed)


def _api_functions() -> dict[str, Any]:
    """The Python API's command functions that take ``columns=`` (each made from its command)."""
    found = {}
    for name in qar_sql.__all__:
        value = getattr(qar_sql, name)
        if callable(value) and not isinstance(value, type) and "columns" in inspect.signature(value).parameters:
            found[name] = value
    return found


API = _api_functions()
#: The API's keywords each function needs (as the command line's base run gives them).
API_KEYWORDS = {
    "whatif": lambda f: {"treatments": f.treatments},
    "uniqueness": lambda f: {"group_size": 5},
    "records": lambda f: {"key": "id"},
    "eliminate": lambda f: {"key": "id"},
    "report": lambda f: {"key": "id", "output": str(Path(f.folder) / "api.html")},
    "anonymize": lambda f: {"qid": "age", "hierarchy": f"age={f.hierarchies}"},
}


def test_the_api_refuses_a_column_before_the_rows_are_read(files):
    assert len(API) >= 9, sorted(API)
    for name, function in API.items():
        if name == "compare":  # (its columns are ORIGINAL's and TREATED's: the command line's case)
            continue
        keywords = API_KEYWORDS.get(name, lambda f: {})(files)
        with pytest.raises(qar_sql.QarError) as caught:
            function(files.boom, table="people", columns="age,nosuch_col", **keywords)
        assert MARKER not in str(caught.value) and caught.value.exit_code == 2, (name, str(caught.value))


def test_scan_and_the_hook_refuse_a_bad_column_before_the_rows_are_read(files, tmp_path, monkeypatch, capsys):
    config = tmp_path / "qar.toml"
    # (a scan names a [sources] table: a path there was refused as undefined, before any column)
    sources = f'[sources.people]\nurl = "{files.boom.replace(chr(92), "/")}"\n'
    bad = '[[scan]]\nname = "s"\nsource = "people"\ntable = "people"\ncolumns = ["age", "sex", "nosuch_col"]\n'
    config.write_text(sources + bad)
    r = _invoke(["scan", str(config), "--no-store"])
    assert r.exit_code == 2 and MARKER not in r.output and "nosuch_col" in r.output, r.output
    # several scans: each is its own gate (one failure does not stop the others: test_scans.py),
    # and the last one's bad column is refused before it reads a row, whatever the others did
    first = '[[scan]]\nname = "first"\nsource = "people"\ntable = "people"\nexclude = ["id"]\n'
    several = tmp_path / "several.toml"
    several.write_text(sources + first + bad.replace('"s"', '"last"'))
    r = _invoke(["scan", str(several), "--no-store", "-f", "json"])
    errors = {s["name"]: (s["exit_code"], s["error"]) for s in json.loads(r.stdout)["scans"]}
    assert MARKER in errors["first"][1], errors  # (the witness: a good scan reads the rows)
    assert errors["last"][0] == 2 and "nosuch_col" in errors["last"][1] and MARKER not in errors["last"][1], errors
    monkeypatch.chdir(tmp_path)
    assert hook.main(["--no-store", str(config)]) == 2
    assert MARKER not in capsys.readouterr().err
    with pytest.raises(SystemExit) as stopped:  # (the hook's outputs, before any scan)
        hook.main(["--no-store", "--junit", files.missing.replace(".toml", ".xml"), str(config)])
    assert stopped.value.code == 2 and MARKER not in capsys.readouterr().err


#: A second scan's source faults that need no query (its [sources] url, its table beside a file),
#: each refused before the first scan's first query reads a row, naming the scan; ``{d}`` is the
#: config's folder. A catalog fault (a table not found) is each scan's own gate instead.
NO_QUERY_FAULTS = {
    "a file that does not exist": ('url = "{d}/missing.duckdb"', "", "does not exist"),
    "a folder": ('url = "{d}/folder"', "", "is a folder"),
    "a file of no known kind": ('url = "{d}/x.xlsx"', "", "cannot tell the format"),
    "an empty CSV file": ('url = "{d}/empty.csv"', "", "is empty"),
    "a table beside a CSV file": ('url = "{d}/x.csv"', 'table = "people"', "does not apply to the CSV file"),
    "a port that is no number": ('url = "postgresql+psycopg://h:port/db"', 'table = "t"', "port is not a number"),
    "a dialect that is not installed": ('url = "nosuch://h/db"', 'table = "t"', "cannot use database URL"),
    "a SQLite file that does not exist": ('url = "sqlite:///{d}/missing.db"', 'table = "t"', "does not exist"),
    "a DuckDB URL whose file does not exist": ('url = "duckdb:///{d}/missing.duckdb"', 'table = "t"', "does not exist"),
    "null_tokens of [defaults] on a Parquet file": ('url = "{d}/x.parquet"', "", None),
}


def test_a_scan_is_refused_before_any_scan_reads_a_row(files, tmp_path):
    """Several scans: what needs no query (config values, options, files, URLs) is checked for
    every scan before the first scan's first query; what needs the catalog stays each scan's
    own gate (test_scans.py: test_one_failure_does_not_stop_the_others)."""
    d = tmp_path.as_posix()
    (tmp_path / "folder").mkdir()
    (tmp_path / "x.xlsx").write_text("a,b\n1,2\n")
    (tmp_path / "empty.csv").write_text("")
    (tmp_path / "x.csv").write_text("a,b\n1,2\n")
    duckdb.connect().execute(f"copy (select 1 as a, 2 as b) to '{d}/x.parquet'")
    first = f'[sources.good]\nurl = "{files.boom}"\n[[scan]]\nname = "first"\nsource = "good"\ntable = "people"\n'
    for case, (url, table, said) in NO_QUERY_FAULTS.items():
        defaults = '[defaults]\nnull_tokens = ["NA"]\n' if said is None else ""
        second = f'[sources.bad]\n{url.format(d=d)}\n[[scan]]\nname = "second"\nsource = "bad"\n{table}\n'
        config = tmp_path / "qar.toml"
        config.write_text(defaults + first + second)
        r = _invoke(["scan", str(config), "--no-store", "-f", "json"])
        if said is None:  # (no fault: [defaults] null_tokens are a CSV scan's, the others' NULLs their own)
            errors = {s["name"]: s["error"] for s in json.loads(r.stdout)["scans"]}
            assert MARKER in errors["first"] and "null" not in (errors["second"] or ""), (case, errors)
            continue
        assert r.exit_code == 2 and MARKER not in r.output, (case, r.output)
        assert "scan 'second'" in r.output and said in r.output, (case, r.output)


PG_CASES = [("--columns", "nosuch_col"), ("-p", "1000000"), ("--alpha", "7")]


@pytest.fixture(scope="module")
def pg_boom(files):
    """``(url, schema)``: the table of :func:`_table` on PostgreSQL, behind a view ``people`` whose
    filter raises (a function that raises on every row), dropped after the module."""
    from conftest import PG_URL, require_postgres
    from sqlalchemy import text

    eng = require_postgres()
    schema = f"qar_rows_{os.getpid()}"
    values = ", ".join(
        f"(i * {7919 + n}) % {m} as {c}" for n, (c, m) in enumerate(zip(COLUMNS[1:], (40, 2, 30, 9, 5, 6, 11, 4)))
    )
    with eng.begin() as c:
        c.execute(text(f"create schema {schema}"))
        c.execute(text(f"create table {schema}.base as select i as id, {values} from generate_series(0, 299) i"))
        c.execute(text(
            f"create function {schema}.boom(i bigint) returns boolean language plpgsql as "
            f"$$ begin raise exception '{MARKER}, id %', i; end $$"
        ))  # fmt: skip
        c.execute(text(f"create view {schema}.people as select * from {schema}.base where {schema}.boom(id)"))
    try:
        yield PG_URL, schema
    finally:
        with eng.begin() as c:
            c.execute(text(f"drop schema {schema} cascade"))


@pytest.mark.postgres
def test_on_postgresql_too(files, pg_boom):
    url, schema = pg_boom
    for name in ("audit", "records", "eliminate", "report", "whatif", "uniqueness"):
        args = [a if a != "people" else f"{schema}.people" for a in base_args(name, url, files)]
        r = _invoke([name, *args])
        assert MARKER in r.output, (name, r.output)  # (the witness: the base run reads rows)
        for flag, value in PG_CASES:
            r = _invoke([name, *args, flag, value])
            assert r.exit_code == 2 and MARKER not in r.output, (name, flag, value, r.output)


@pytest.mark.postgres
@pytest.mark.parametrize("name", TABLE_COMMANDS)
def test_every_bad_value_on_postgresql_too(name, files, pg_boom):
    """:func:`test_every_bad_value_is_refused_before_the_rows_are_read` on PostgreSQL, every
    option of every table command (its own catalog queries, types and SQLAlchemy's reflection);
    one command stays in the quick loop (conftest.HEAVY_KEEP), the others are ``heavy``."""
    url, schema = pg_boom
    args = [a if a != "people" else f"{schema}.people" for a in base_args(name, url, files)]
    r = _invoke([name, *args])
    assert (MARKER in r.output) != (name == "sql"), (name, r.output)  # (the witness)
    findings = []
    for command, flag, value in cases(files):
        if command != name:
            continue
        r = _invoke([name, *args, flag, value])
        assert "Traceback" not in r.output, (name, flag, value, r.output)
        symbol = _symbol(value, files)
        if MARKER in r.output and (flag, symbol) not in ACCEPTED | NEED_ROWS and (name, flag, symbol) not in OWN:
            findings.append(f"qar {name} {flag} {value!r} read rows before refusing or accepting it")
    assert not findings, "\n".join(findings)


SQLITE_MARKER = "integer overflow"
#: Valid values refused on SQLite by what only the rows tell, with the reason.
REFUSED_BY_ROWS = {
    ("anonymize", "--output"): "the chosen node is the table as it is: the search's result",
    ("compare", "--link"): "the link column is not unique: its distinct values",
    ("uniqueness", "-T"): "bands need numbers: a column SQLite declares no type for holds values of any type",
}


@pytest.fixture(scope="module")
def sqlite_boom(tmp_path_factory) -> tuple[str, str]:
    """(plain, boom): SQLite URLs of :func:`_table`'s rows, ``boom`` holding a view ``people``
    whose filter raises when a row is read (SQLite's abs() of the smallest integer overflows)."""
    import sqlite3

    tmp = tmp_path_factory.mktemp("sqlite_rows")
    rows = duckdb.connect(_table(tmp / "src.duckdb", False), read_only=True).execute("select * from base").fetchall()
    urls = []
    for name, where in (("plain", ""), ("boom", "where abs(-9223372036854775808 + 0 * id) > 0")):
        con = sqlite3.connect(tmp / f"{name}.db")
        con.execute(f"create table base ({', '.join(COLUMNS)})")
        con.executemany(f"insert into base values ({', '.join('?' * len(COLUMNS))})", rows)
        con.execute(f"create view people as select * from base {where}")
        con.commit()
        con.close()
        urls.append(f"sqlite:///{(tmp / f'{name}.db').as_posix()}")
    return urls[0], urls[1]


@pytest.mark.parametrize("name", TABLE_COMMANDS)
def test_an_engine_refuses_a_valid_value_before_the_rows_are_read(name, files, sqlite_boom):
    """Values no engine check was generated for: each option's valid value (the ignored-options
    test's) on SQLite, an engine without some of DuckDB's means (a row hash, array parameters):
    where the plain table's run refuses it (exit 2), the raising view's run refuses it too,
    before reading a row. One command stays in the quick loop (conftest.HEAVY_KEEP)."""
    from tests.cli.test_ignored_options import value_of

    plain, boom = sqlite_boom
    out = Path(files.folder)
    findings = []
    for param in COMMANDS[name].params:
        if not isinstance(param, click.Option) or param.name in SKIPPED | {"store", "jobs"}:
            continue
        if set(param.opts) & {flag for flag, _ in NEED_ROWS}:  # (refused by the rows: the fit's exceedances)
            continue
        if any((name, flag) in REFUSED_BY_ROWS for flag in param.opts):
            continue
        try:
            args = value_of(name, param, files, out)
        except StopIteration:
            continue
        if not args:
            continue
        base = base_args(name, plain, files)
        r = _invoke([name, *base, *args])
        if r.exit_code != 2 or SQLITE_MARKER in r.output:
            continue
        r = _invoke([name, *[boom if a == plain else a for a in base], *args])
        if SQLITE_MARKER in r.output:
            findings.append(f"qar {name} {' '.join(args)} on SQLite: refused only after a query read rows")
    assert not findings, "\n".join(findings)


@pytest.mark.postgres
def test_compare_aligned_on_a_table_without_a_stored_order_is_refused_before_the_rows(files, pg_boom):
    """qar compare --aligned needs each table's stored row order, which a PostgreSQL table has not:
    a catalog fact, refused before a query reads a row (it came after the columns were profiled)."""
    url, schema = pg_boom
    table = f"{schema}.people"
    r = _invoke(["compare", url, url, "-t", table, "--treated-table", table, "-x", "id,disease", "--aligned"])
    assert r.exit_code == 2 and "--aligned needs rows in a stored order" in r.output, r.output
    assert MARKER not in r.output, r.output
