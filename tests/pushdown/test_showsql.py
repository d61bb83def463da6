"""The SQL an audit runs, as printed by ``qar sql`` / ``show_sql``: it renders for every dialect,
every statement parses with sqlglot in that dialect, hostile names stay inside quoted
identifiers, and on the engines that run here (DuckDB, PostgreSQL) the printed SQL executes and
returns the oracle's class-size histograms."""

from __future__ import annotations

import math
import re
from collections import defaultdict

import duckdb
import pytest
import sqlglot
from click.testing import CliRunner
from conftest import Loader, duckdb_file, quote
from sqlglot import exp
from sqlglot.tokens import TokenType

import qar_sql
from qar_sql.cli.main import cli
from qar_sql.engines.dialects import DIALECTS as ALL_DIALECTS
from qar_sql.engines.dialects import get_dialect
from qar_sql.errors import UsageError
from qar_sql.pushdown import scan
from qar_sql.pushdown.scan import render_statements
from qar_sql.pushdown.showsql import show_one_statement, show_sql
from tests.engines.test_sources import write_csv
from tests.measures.test_audit import HOSTILE_COLUMNS, HOSTILE_TABLE, as_columns, oracle, random_table

#: Every dialect qar knows (the executable ones and the compile-checked warehouses), by the
#: name sqlglot parses it with.
DIALECTS = sorted(d for d in ALL_DIALECTS if d != "mariadb")  # "mariadb" is "mysql" by another name
SQLGLOT = {d: ALL_DIALECTS[d].sqlglot for d in DIALECTS}
INJECTION = 'a"; drop table x; --'
RENDER_COLUMNS = HOSTILE_COLUMNS + ("back`tick", "it's", "ends in \\")
#: schema.table; the table part holds a dot of its own, so it is written in double quotes (qar sql
#: splits a name at every dot: nothing is read to look it up)
TABLE = 'sch;ema."' + HOSTILE_TABLE.replace('"', '""') + '"'


def split_statements(sql: str, dialect: str) -> list[str]:
    """The statements of ``sql`` exactly as written, split at the semicolons sqlglot's
    tokenizer finds (a ';' inside a quoted name or a comment is not a separator)."""
    tokens = sqlglot.Dialect.get_or_raise(SQLGLOT[dialect]).tokenize(sql)
    out, start = [], 0
    for tok in tokens:
        if tok.token_type == TokenType.SEMICOLON:
            out.append(sql[start : tok.start])
            start = tok.end + 1
    out.append(sql[start:])
    return [
        s
        for s in out
        if s.strip() and not all(line.strip().startswith("--") or not line.strip() for line in s.splitlines())
    ]


def quoted_identifiers(trees) -> set[str]:
    return {i.name for t in trees for i in t.find_all(exp.Identifier) if i.quoted}


# ---------------------------------------------------------------------------------------------
# Render and parse, every dialect


@pytest.mark.parametrize("dialect", DIALECTS)
def test_renders_and_parses(dialect):
    sql = show_sql(None, dialect=dialect, table=TABLE, columns=RENDER_COLUMNS, p=2, batch_size=10)
    statements = split_statements(sql, dialect)
    n_qi = math.comb(len(RENDER_COLUMNS), 2)
    n_batches = math.ceil(n_qi / 10)
    setup = 1 if dialect == "duckdb" else 0  # DuckDB materialises the codes in a TEMP table
    # Spark and Databricks profile one column per statement (Dialect.profile_columns).
    profiles = math.ceil(len(RENDER_COLUMNS) / (get_dialect(dialect).profile_columns or scan.PROFILE_COLUMNS))
    assert len(statements) == profiles + setup + n_batches
    assert sql.startswith(f"-- qar-sql audit, dialect {dialect}: {n_batches} scan statement(s)")

    trees = []
    for stmt in statements:  # each statement parses on its own, as one statement
        parsed = [t for t in sqlglot.parse(stmt, read=SQLGLOT[dialect]) if t is not None]
        assert len(parsed) == 1, stmt[:200]
        trees += parsed
    assert isinstance(trees[0], exp.Select)  # the profile
    if setup:
        assert isinstance(trees[1], exp.Create) and trees[1].args["kind"] == "TABLE"
        assert trees[1].args["properties"].find(exp.TemporaryProperty) is not None
    for tree in trees[1 + setup :]:
        assert isinstance(tree, (exp.Union, exp.Select))
        assert tree.find(exp.Drop) is None

    names = quoted_identifiers(trees)
    # BigQuery reads a dotted back-quoted name as a path (its column names cannot hold dots).
    expected = [c for c in RENDER_COLUMNS if not (dialect == "bigquery" and "." in c)]
    missing = [c for c in expected if c not in names]
    assert not missing
    if dialect != "bigquery":
        assert {"sch;ema", HOSTILE_TABLE} <= names


@pytest.mark.parametrize("dialect", DIALECTS)
def test_injection_stays_inside_quoted_identifiers(dialect):
    sql = show_sql(None, dialect=dialect, table=TABLE, columns=RENDER_COLUMNS, p=2)
    q = get_dialect(dialect).quote
    # every occurrence of the hostile text is the quoted identifier, nothing else
    assert sql.count("drop table x") == sql.count(q(INJECTION)) > 0
    tokens = sqlglot.Dialect.get_or_raise(SQLGLOT[dialect]).tokenize(sql)
    assert not [t for t in tokens if t.token_type == TokenType.DROP]
    for tok in tokens:
        if "drop" in tok.text.lower() or ";" in tok.text:
            assert tok.token_type in (TokenType.IDENTIFIER, TokenType.SEMICOLON), tok
    for tree in sqlglot.parse(sql, read=SQLGLOT[dialect]):
        if tree is not None:
            assert tree.find(exp.Drop) is None


@pytest.mark.parametrize("dialect", DIALECTS)
def test_table_paths_split_at_every_dot(dialect):
    """catalog.schema.table is three quoted parts on every dialect (it was "db"."schema.people");
    a part holding a dot is written in double quotes; an empty part is refused."""
    d = get_dialect(dialect)
    cases = {
        "db.schema.people": ("db", "schema", "people"),
        "schema.people": ("schema", "people"),
        'db.s."my.table"': ("db", "s", "my.table"),
        's."a""b.c"': ("s", 'a"b.c'),
        'we"ird': ('we"ird',),
    }
    for table, parts in cases.items():
        sql = show_one_statement(None, dialect=dialect, table=table, columns=list("abcdefg"), p=3)
        assert f"from {d.quote_path(parts)}" in sql, (table, sql)
        assert f"from {d.quote_path(parts)} as t" in show_sql(
            None, dialect=dialect, table=table, columns=["a", "b"], p=2
        )
    for bad in ("a..b", ".a", "a."):
        r = CliRunner().invoke(cli, ["sql", "-d", dialect, "-t", bad, "-c", "a,b,c"])
        assert r.exit_code == 2 and "is not a name or a dotted path" in r.output, (bad, r.output)


def test_bigquery_escapes_backticks_and_backslashes():
    columns = ["back`tick", "ends in \\", "x"]
    sql = show_sql(None, dialect="bigquery", table="d.t", columns=columns, p=2)
    assert "`back\\`tick`" in sql and "`ends in \\\\`" in sql
    assert set(columns) <= quoted_identifiers(sqlglot.parse(sql, read="bigquery"))


def test_a_scan_is_a_handful_of_statements():
    """Where the codes are computed once (DuckDB's temp table, PostgreSQL's materialized CTE),
    816 QIs are a handful of statements over codes; elsewhere each QI groups the table's own
    columns, with no coding joins, in statements of scan.RAW_BATCH QIs."""
    columns = [f"c{i}" for i in range(18)]  # 816 QIs of size 3
    for dialect in DIALECTS:
        d = get_dialect(dialect)
        setup, batches, qis, _ = render_statements(d, '"t"', columns, 3, jobs=2)
        assert sum(len(b) for b in qis) == 816
        coded = d.temp_tables or d.cte_materialized
        if coded:
            assert len(setup) + len(batches) <= 16, dialect
        else:
            assert not setup and len(batches) == math.ceil(816 / scan.RAW_BATCH), dialect
        assert all(("join" in sql) == (coded and not d.temp_tables) for sql in batches), dialect


def test_line_breaks_in_names_are_refused(tmp_path):
    """Rendering re-indents lines and drops trailing blanks, which would silently turn a name
    with a line break into another column's name: such names are refused, clearly, instead."""
    with pytest.raises(UsageError, match="line break"):
        show_sql(None, dialect="duckdb", table="t", columns=["a \nb", "c", "d"], p=2)
    path = duckdb_file(
        tmp_path / "nl.duckdb",
        'create table t as select range % 3 as "a \nb", range % 5 as "a\nb", range % 7 as c, '
        "range % 2 as d, range % 4 as e, range % 6 as f from range(50)",
    )
    with pytest.raises(UsageError, match=re.escape(repr("a \nb") + " contains a line break")):
        qar_sql.audit(path, table="t", p=2, pi_u=0.2)
    result = qar_sql.audit(path, table="t", p=2, pi_u=0.3, exclude=["a \nb", "a\nb"])
    assert result.columns == ("c", "d", "e", "f")


# ---------------------------------------------------------------------------------------------
# The command prints the same SQL


def test_qar_sql_command_equals_show_sql():
    columns = ",".join(RENDER_COLUMNS)
    for dialect in DIALECTS:
        r = CliRunner().invoke(cli, ["sql", "--dialect", dialect, "-t", TABLE, "-c", columns, "-p", "2"])
        assert r.exit_code == 0, r.output
        assert r.stdout == show_sql(None, dialect=dialect, table=TABLE, columns=RENDER_COLUMNS, p=2)


def test_dialect_from_url_without_connecting():
    # Port 1 refuses connections: rendering must not try.
    url = "postgresql+psycopg://u:hunter2@127.0.0.1:1/db"
    r = CliRunner().invoke(cli, ["sql", url, "-t", "s.t", "-c", "a,b,c"])
    assert r.exit_code == 0, r.output
    assert r.stdout == show_sql(None, dialect="postgresql", table="s.t", columns=["a", "b", "c"])
    assert "hunter2" not in r.output
    assert "materialized" in r.stdout  # PostgreSQL keeps the codes in one CTE per statement


def test_audit_show_sql_equals_qar_sql(tmp_path):
    path = str(tmp_path / "x.duckdb")
    args = [path, "-t", "people", "-c", "a,b,c,d", "-p", "2", "--batch-size", "3"]
    a = CliRunner().invoke(cli, ["audit", "--show-sql", *args])
    s = CliRunner().invoke(cli, ["sql", *args])
    assert a.exit_code == s.exit_code == 0, a.output + s.output
    assert a.stdout == s.stdout and 'from "people"' in a.stdout


@pytest.mark.parametrize(
    "args,needle",
    [
        (["sql", "--dialect", "duckdb", "-t", "t"], "--columns"),
        (["sql", "-c", "a,b"], "--dialect"),
        (["sql", "--dialect", "duckdb", "-c", "a,b"], "--table"),
        (["sql", "data.csv", "--dialect", "postgresql", "-c", "a,b"], "data.csv"),
        (["sql", "--dialect", "oracle", "-t", "t", "-c", "a"], "oracle"),
    ],
)
def test_sql_command_bad_input(args, needle, monkeypatch):
    monkeypatch.delenv("QAR_DATABASE_URL", raising=False)
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 2, r.output
    assert needle in r.output and "Traceback" not in r.output


def test_unknown_dialect_did_you_mean():
    with pytest.raises(UsageError, match="did you mean 'postgresql'"):
        show_sql(None, dialect="postgres", table="t", columns=["a"], p=1)


# ---------------------------------------------------------------------------------------------
# The printed SQL runs and counts what the oracle counts


def _histograms(results) -> dict[int, tuple]:
    hist = defaultdict(list)
    for rows in results:
        for qi, size, classes in rows:
            hist[int(qi)].append((int(size), int(classes)))
    return {qi: tuple(sorted(h)) for qi, h in hist.items()}


def _check(names, rows, p, statements_results):
    profile, *scans = statements_results
    (row,) = profile
    assert row[0] == len(rows)
    for i in range(len(names)):
        values = [r[i] for r in rows]
        assert row[1 + 2 * i] == sum(v is not None for v in values)
        assert row[2 + 2 * i] == len({v for v in values if v is not None})
    hist = _histograms(scans)
    want = oracle(rows, p)
    assert sorted(hist) == list(range(len(want)))
    for j, q in enumerate(want):
        assert hist[j] == q["class_sizes"], [names[i] for i in q["combo"]]


@pytest.mark.parametrize("p,batch_size", [(2, 7), (3, None)])
def test_duckdb_printed_sql_executes(p, batch_size):
    names, rows, types = random_table(41, 50)
    schema, table = "sch;ema", HOSTILE_TABLE
    con = duckdb.connect()
    con.execute(f"create schema {quote(schema)}")
    full = f"{quote(schema)}.{quote(table)}"
    ddl = ", ".join(f"{quote(n)} {types[n].replace('double precision', 'double')}" for n in names)
    con.execute(f"create table {full} ({ddl})")
    con.executemany(f"insert into {full} values ({', '.join('?' * len(names))})", rows)
    sql = show_sql(None, dialect="duckdb", table=TABLE, columns=names, p=p, batch_size=batch_size)
    statements = split_statements(sql, "duckdb")
    results = [con.execute(s).fetchall() for s in statements]
    del results[1]  # the TEMP table of codes
    _check(names, rows, p, results)


def test_duckdb_printed_sql_for_a_csv_executes(tmp_path):
    names, rows, _ = random_table(42, 50, empty_string=False)
    path = write_csv(tmp_path / "it's data.csv", names, rows)
    r = CliRunner().invoke(cli, ["sql", str(path), "-c", ",".join(names), "-p", "2"])
    assert r.exit_code == 0, r.output
    statements = split_statements(r.stdout, "duckdb")
    con = duckdb.connect()
    results = [con.execute(s).fetchall() for s in statements]
    del results[2], results[0]  # the TEMP tables: the parsed CSV, then the codes
    _check(names, rows, 2, results)
    # and the audit itself agrees
    audit = qar_sql.audit(str(path), p=2, pi_u=0.2)
    assert [q.class_sizes for q in audit.qis] == [q["class_sizes"] for q in oracle(rows, 2)]


def test_postgresql_printed_sql_executes_read_only(pg, tmp_path):
    names, rows, types = random_table(43, 50)
    loader = Loader("postgresql", tmp_path)
    try:
        _, table = loader.load(HOSTILE_TABLE, as_columns(names, rows), types)
        schema = table[: -len(HOSTILE_TABLE) - 1]
        quoted = f'{schema}."{HOSTILE_TABLE.replace(chr(34), chr(34) * 2)}"'
        sql = show_sql(None, dialect="postgresql", table=quoted, columns=names, p=2, batch_size=9)
        statements = split_statements(sql, "postgresql")
        raw = pg.raw_connection()
        try:
            cur = raw.cursor()
            cur.execute("set transaction read only")  # the printed SQL needs no writes
            results = []
            for s in statements:
                cur.execute(s)
                results.append(cur.fetchall())
            raw.rollback()
        finally:
            raw.close()
        _check(names, rows, 2, results)
    finally:
        loader.cleanup()


# ---------------------------------------------------------------------------------------------
# Compile-checked warehouses: every templated statement of every command parses there


#: The warehouses qar renders SQL for but cannot run here.
COMPILE_ONLY = [d for d in DIALECTS if not ALL_DIALECTS[d].executable]
#: Templates that are pieces of a statement (a WITH list, macros), not statements.
FRAGMENTS = ("perturb_layers.sql",)
#: Templates that are a derived table (a piece of a FROM clause, with its alias).
DERIVED_TABLES = ("mdav_groups.sql",)


def _in_dialect(value, target: str, *, whole: bool = True):
    """DuckDB SQL text in another dialect (quoting translated by sqlglot), in the lists and
    dicts of a context too; anything else as is. ``whole``: the text is SQL (a relation or a
    statement); else only a text with a quoted name in it is (a column's expression: a plain
    name stays as it is, the template quotes it)."""
    if isinstance(value, dict):
        return {k: _in_dialect(v, target, whole=whole) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_in_dialect(v, target, whole=whole) for v in value)
    if not isinstance(value, str) or not (whole or '"' in value):
        return value
    try:
        return sqlglot.transpile(value, read="duckdb", write=target, identify=True)[0]
    except sqlglot.errors.SqlglotError:
        return value


@pytest.fixture
def rendered(monkeypatch):
    """Every (template, context) the commands render while they run, recorded."""
    import sys

    from qar_sql.engines import render as render_module

    calls: list[tuple[str, dict]] = []
    original = render_module.render

    def spy(template_name, dialect, **context):
        calls.append((template_name, context))
        return original(template_name, dialect, **context)

    for module in list(sys.modules.values()):
        if getattr(module, "__name__", "").startswith("qar_sql") and getattr(module, "render", None) is original:
            monkeypatch.setattr(module, "render", spy)
    return calls


def test_every_command_renders_and_parses_in_each_warehouse(rendered, tmp_path):
    """audit, records (exact and influence), discover, whatif (every treatment kind, the
    perturbative ones included) and uniqueness run on DuckDB; every template they rendered is
    rendered again in each warehouse's dialect and parsed by sqlglot there."""
    from qar_sql.commands.records import contributions, influence
    from tests.treat.test_perturb import TOML as PERTURB_TOML
    from tests.treat.test_perturb import make_rows

    loader = Loader("duckdb", tmp_path)
    names, rows, types = random_table(5, 40)
    source, table = loader.load(HOSTILE_TABLE, as_columns(names, rows), types)
    cols = list(names[:5])
    qar_sql.audit(source, table=table, columns=cols, p=2, pi_u=0.2)
    qar_sql.discover(source, table=table, columns=cols, max_size=2)
    qar_sql.uniqueness(source, table=table, columns=cols, p=2, group_size=4)
    data = make_rows(60)
    _, people = loader.load("people", data, {"id": "bigint", "savings": "double"})
    from tests.ranking.test_records import KW, make_data

    _, rec = loader.load("records", make_data(70))
    contributions(source, table=rec, **KW)
    influence(source, table=rec, **KW, top=5)
    toml = tmp_path / "t.toml"
    toml.write_text(PERTURB_TOML)
    qar_sql.whatif(source, table=people, treatments=str(toml), qid=['se"x', "town"], risk=False)
    templates = {name for name, _ in rendered}
    assert {"encode.sql", "class_sizes.sql", "discover.sql", "treat.sql", "influence.sql"} <= templates
    from qar_sql.engines.render import render, templates_dir

    # One rendering per template: the batches of a template differ only in their QIs, and
    # sqlglot's pure-Python parser takes minutes over all of them in five dialects.
    first: dict[str, dict] = {}
    for name, context in rendered:
        first.setdefault(name, context)
    failures = []
    for dialect in COMPILE_ONLY:
        d = get_dialect(dialect)
        for name, context in first.items():
            if name in FRAGMENTS or name.startswith("materialize") or not (templates_dir() / "default" / name).exists():
                continue  # temp tables and the influence capture are DuckDB's alone
            # The relation and the SQL embedded in the context were written for DuckDB: the
            # same text in the warehouse's dialect (sqlglot translates the quoting).
            ctx = {k: _in_dialect(v, d.sqlglot, whole=k == "relation" or k.endswith("sql")) for k, v in context.items()}
            sql = render(name, d, **ctx)
            if name in DERIVED_TABLES:  # a piece of FROM: parsed in a statement that reads it
                sql = f"select * from {sql}"
            for stmt in split_statements(sql, dialect):
                try:
                    parsed = [t for t in sqlglot.parse(stmt, read=d.sqlglot) if t is not None]
                except sqlglot.errors.ParseError as exc:
                    failures.append((dialect, name, str(exc).splitlines()[0]))
                    continue
                assert len(parsed) == 1, (dialect, name, stmt[:300])
    assert not failures, failures


def test_the_sql_of_a_pruned_audit_says_which_qis_run():
    """At p >= 4 the audit prunes by default (issue 30): the statements shown are the scan of
    every QI, and the header says that the QIs of size p actually grouped are chosen at run time."""
    from qar_sql.pushdown.showsql import show_sql

    four = show_sql(None, dialect="duckdb", table="t", columns=["a", "b", "c", "d", "e"], p=4)
    three = show_sql(None, dialect="duckdb", table="t", columns=["a", "b", "c", "d", "e"], p=3)
    assert "prunes by default (--prune auto)" in four and "This is the scan of every QI (--prune off)" in four
    assert "prune" not in three
