"""No SQL injected through names, values or comments (issue 16, item 2).

Every identifier and literal goes through the dialect's own rules, and every statement that
``whatif --emit-sql`` prints is parsed by sqlglot in its dialect: exactly one statement, a
CREATE VIEW reading only the source table, with the hostile names and values intact.
"""

from __future__ import annotations

import duckdb
import pytest
import sqlglot
from click.testing import CliRunner
from sqlglot import exp

from qar_sql.cli.main import cli
from qar_sql.engines.dialects import DIALECTS, sql_comment
from qar_sql.errors import UsageError

HOSTILE = [
    "a'b",
    "x\\",
    "\\' or 1=1 --",
    'ü "q" `b`',
    "a\\'; drop table population; --",
    "select",
    "*/ drop table population; /*",
    "name\u00a0with nbsp",
]
SEPARATORS = ["\n", "\r", "\u2028", "\u2029", "\u0085", "\x0c", "\x00", "\u202e"]


def _parse(sql: str, dialect: str) -> list[exp.Expression]:
    return [s for s in sqlglot.parse(sql, read=DIALECTS[dialect].sqlglot or dialect) if s is not None]


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
@pytest.mark.parametrize("value", HOSTILE)
def test_names_and_literals_round_trip_through_each_dialect(dialect, value):
    d = DIALECTS[dialect]
    (statement,) = _parse(f"select {d.literal(value)} as v, {d.quote(value)} from {d.quote('t')}", dialect)
    assert statement.find(exp.Literal).this == value
    assert statement.find(exp.Column).name == value
    assert [t.name for t in statement.find_all(exp.Table)] == ["t"]


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
@pytest.mark.parametrize("bad", SEPARATORS)
def test_line_separators_and_control_characters_are_refused(dialect, bad):
    d = DIALECTS[dialect]
    for make in (d.quote, d.literal) if bad != "\t" else ():
        with pytest.raises(UsageError, match=f"U\\+{ord(bad):04X}"):
            make(f"age{bad}x")


@pytest.mark.parametrize("bad", SEPARATORS)
def test_comments_cannot_be_ended(bad):
    text = sql_comment(f"name{bad}drop table population; --")
    assert "\n" not in text and len(text.splitlines()) == 1 and "drop table population" in text


TREATMENTS = r"""
[qis]
q = ["age", "sex"]

[treatments."top\u0085drop table population; --"]
column = "age"
kind = "top"
above = 60

[treatments."age_bands\ndrop table population; --"]
column = "age"
kind = "bands"
width = 10

[treatments."sex_map\u2028drop table population; --"]
column = "sex"
kind = "map"
map = { "F" = "x\\' or 1=1; drop table population; --", "M" = "it's" }

"""


@pytest.fixture
def population(tmp_path):
    path = tmp_path / "pop.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute("create table population (id integer, age integer, sex varchar)")
        con.execute(
            "insert into population select i, 20 + i % 50, case when i % 2 = 0 then 'F' else 'M' end from range(200) t(i)"
        )
    toml = tmp_path / "t.toml"
    toml.write_text(TREATMENTS)
    return path, toml


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_emitted_view_is_exactly_one_statement_reading_only_the_source(population, dialect):
    path, toml = population
    r = CliRunner().invoke(
        cli, ["whatif", str(path), "-t", "population", "-T", str(toml), "--emit-sql", "--dialect", dialect]
    )
    assert r.exit_code == 0, r.output
    statements = _parse(r.stdout, dialect)
    assert len(statements) == 1, r.stdout
    (view,) = statements
    assert isinstance(view, exp.Create) and view.kind == "VIEW"
    ctes = {c.alias for c in view.find_all(exp.CTE)}
    tables = {t.name for t in view.find_all(exp.Table)} - ctes
    assert tables == {"population", "population_treated"}
    literals = {lit.this for lit in view.find_all(exp.Literal) if lit.is_string}
    assert "x\\' or 1=1; drop table population; --" in literals and "it's" in literals


def test_emitted_duckdb_view_runs_and_drops_nothing(population):
    path, toml = population
    r = CliRunner().invoke(cli, ["whatif", str(path), "-t", "population", "-T", str(toml), "--emit-sql"])
    assert r.exit_code == 0, r.output
    with duckdb.connect(str(path)) as con:
        con.execute(r.stdout)
        assert con.execute("select count(*) from population").fetchone() == (200,)
        values = {v for (v,) in con.execute("select distinct sex from population_treated").fetchall()}
        assert values == {"x\\' or 1=1; drop table population; --", "it's"}
