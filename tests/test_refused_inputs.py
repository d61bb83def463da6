"""Inputs that gave a silent wrong answer (issue 16, item 8): each is now refused with one
sentence and exit code 2, or read as the user meant."""

from __future__ import annotations

import inspect
import json
import os

import duckdb
import pytest
from click.testing import CliRunner
from conftest import duckdb_file

import qar_sql
from qar_sql.cli.main import cli
from qar_sql.errors import UsageError


def run(args, code: int, *needles: str):
    r = CliRunner().invoke(cli, args)
    assert "Traceback" not in r.output
    assert r.exit_code == code, r.output
    for needle in needles:
        assert needle in r.output, r.output
    return r


@pytest.fixture
def people(tmp_path) -> str:
    return duckdb_file(
        tmp_path / "people.duckdb",
        "create table people as select i as id, i % 7 as age, i % 2 as sex, i % 5 as zip, i % 3 as job "
        "from range(60) r(i)",
    )


@pytest.mark.parametrize("option", ["-c", "--columns", "--exclude"])
@pytest.mark.parametrize("value", ["", ",,,", " , "])
def test_an_option_naming_no_column_is_refused(people, option, value):
    # it audited every column, the id included
    run(["audit", people, "-t", "people", option, value], 2, f"{value!r} names no column")


def test_qar_sql_refuses_a_column_listed_twice(people):
    run(["sql", people, "-t", "people", "-c", "age,age,sex", "-p", "2"], 2, "column 'age' is listed twice in --columns")


def test_a_column_listed_twice_is_named_whatever_the_option(people, tmp_path):
    # one rule (engines.source.listed_once); --qid and compare's column lists said "lists a
    # column twice" without naming it
    plan = tmp_path / "t.toml"
    plan.write_text('[treatments.s]\ncolumn = "age"\nkind = "suppress"\n')
    twice = "column 'age' is listed twice in "
    run(["uniqueness", people, "-t", "people", "-g", "100", "--qid", "age,sex,age"], 2, twice + "--qid; list it once")
    run(["whatif", people, "-t", "people", "--treatments", str(plan), "--qid", "age,sex,age"], 2, twice + "--qid")
    run(
        ["compare", people, people, "-t", "people", "--treated-table", "people", "-c", "age,sex,zip",
         "--attacker-columns", "age,age"], 2, twice + "--attacker-columns",
    )  # fmt: skip


def test_a_closed_source_is_named_closed(people):
    # it failed as a database error (exit 3): "Connection already closed!"
    with qar_sql.connect(people, table="people") as source:
        pass
    for call in (qar_sql.audit, qar_sql.risk):
        with pytest.raises(UsageError, match="is closed") as e:
            call(source, columns=["age", "sex", "zip"], p=1)
        assert e.value.exit_code == 2


def test_a_fifo_is_not_called_empty(tmp_path):
    import os

    fifo = tmp_path / "people.csv"
    os.mkfifo(fifo)
    run(["audit", str(fifo)], 2, "not a regular file")


def test_eliminate_by_nothing_is_refused(people):
    run(
        ["eliminate", people, "-t", "people", "--key", "id", "-x", "id", "--by", " , "],
        2,
        "--by ' , ' names no ranking; use one or more of dt, u_plus",
    )


def _csv(path, rows: int, seed: int) -> None:
    path.write_text("a,b,c\n" + "".join(f"{(i + seed) % 4},{i % 3},{(i * seed) % 5}\n" for i in range(rows)))


@pytest.mark.parametrize("name", ["x*.csv", "x?.csv", "x[1].csv", "x**.csv"])
def test_glob_characters_in_a_real_file_name_read_that_file(tmp_path, name):
    """DuckDB expanded them: 'x*.csv' read x*.csv, xa.csv and x1.csv together."""
    _csv(tmp_path / name, 20, 1)
    _csv(tmp_path / "xa.csv", 30, 2)
    _csv(tmp_path / "x1.csv", 40, 3)
    r = run(["audit", str(tmp_path / name), "-p", "1", "--pi-u", "0.5", "--alpha", "0.1", "-q", "-f", "json"], 0)
    assert json.loads(r.stdout)["rows"] == 20


def test_glob_characters_in_a_parquet_name(tmp_path):
    con = duckdb.connect()
    for name, n in (("p[0].parquet", 12), ("p0.parquet", 50)):
        con.execute(
            f"copy (select i % 3 as a, i % 4 as b, i % 5 as c from range({n}) r(i)) to '{tmp_path / name}' (format parquet)"
        )
    result = qar_sql.audit(str(tmp_path / "p[0].parquet"), p=1, pi_u=0.5, alpha=0.1)
    assert result.rows == 12


def test_demo_refuses_to_replace_a_table_it_did_not_write(tmp_path):
    path = str(tmp_path / "mine.duckdb")
    con = duckdb.connect(path)
    con.execute("create table population as select 42 as precious")
    con.execute("create table other as select 1 as x")
    con.close()
    run(
        ["demo", "--path", path, "--rows", "300", "-q"],
        2,
        f"{path!r} already exists and holds a table 'population', which qar demo did not write; pass --overwrite",
    )
    con = duckdb.connect(path, read_only=True)
    assert con.execute("select * from population").fetchall() == [(42,)]  # unchanged
    con.close()
    run(["demo", "--path", path, "--rows", "300", "-q", "--overwrite"], 0, "QaR audit of population")
    con = duckdb.connect(path, read_only=True)
    assert con.execute("select count(*) from population").fetchall() == [(300,)]
    assert con.execute("select * from other").fetchall() == [(1,)]  # the rest is left alone
    con.close()


def test_demo_path_that_is_no_duckdb_file_is_refused_before_it_is_opened(tmp_path, monkeypatch):
    """DuckDB opens a CSV or Parquet file as a database of views: --path people.csv was said to
    hold "tables of its own (people, file)" and, with --overwrite, "--table 'population' does
    not apply to the CSV file"; --path - made a DuckDB file named '-'; a missing folder or a
    symlink loop was exit 3; --path '' was "a folder". Each is one sentence, exit 2, nothing made."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "people.csv").write_text("a,b\n1,2\n")
    (tmp_path / "loop.duckdb").symlink_to(tmp_path / "loop2.duckdb")
    (tmp_path / "loop2.duckdb").symlink_to(tmp_path / "loop.duckdb")
    before = sorted(os.listdir(tmp_path))
    for path, needle in (
        ("people.csv", "must end in .duckdb"),
        ("-", "must end in .duckdb"),
        ("", "--path is empty"),
        ("no/such/folder.duckdb", "does not exist"),
        ("loop.duckdb", "cannot be written"),
    ):
        for more in ([], ["--overwrite"]):
            run(["demo", "--path", path, "--rows", "300", "-q", *more], 2, needle)
    assert sorted(os.listdir(tmp_path)) == before
    assert (tmp_path / "people.csv").read_text() == "a,b\n1,2\n"


def test_demo_replaces_its_own_population_without_asking(tmp_path):
    path = str(tmp_path / "qar_demo.duckdb")
    run(["demo", "--path", path, "--rows", "300", "-q"], 0)
    run(["demo", "--path", path, "--rows", "400", "-q"], 0)  # running the demo again just works
    con = duckdb.connect(path, read_only=True)
    assert con.execute("select count(*) from population").fetchall() == [(400,)]
    con.close()
    other = str(tmp_path / "other.duckdb")
    duckdb.connect(other).execute("create table t as select 1 as x").close()
    run(["demo", "--path", other, "--rows", "300", "-q"], 2, "holds tables of its own (t)")


@pytest.mark.parametrize("kind", ["sqlite", "text"])
def test_demo_refuses_a_path_that_is_not_a_duckdb_file(tmp_path, kind):
    # exit 3 ("cannot write the demo database … not a valid DuckDB database file"); a SQLite
    # file made DuckDB fetch its sqlite extension, and --overwrite would have written into it
    import sqlite3

    path = str(tmp_path / "app.db")
    if kind == "sqlite":
        with sqlite3.connect(path) as con:
            con.execute("create table population (precious integer)")
    else:
        (tmp_path / "app.db").write_text("my notes\n")
    before = (tmp_path / "app.db").read_bytes()
    for extra in ([], ["--overwrite"]):
        run(
            ["demo", "--path", path, "--rows", "300", "-q", *extra], 2, f"--path {path!r} is not a DuckDB database file"
        )
    assert (tmp_path / "app.db").read_bytes() == before


RAGGED = [  # (file text, line, found, expected fields)
    ("a,b,c\n1,2,3\n4,5\n1,2,3\n", 3, 2, 3),
    ("name,age,city\nann,3,x\nbob,4\ncid,5,y,z\n", 3, 2, 3),  # was "table is empty"
    ("a,b,c\n1,2,3\n4,5,6,7\n", 3, 4, 3),  # was "table is empty"
    ("a,b,c\n1,2,3,4\n5,6,7,8\n", 2, 4, 3),  # was read with the header 1,2,3,4
    ("a,b,c\n" + "1,2,3\n" * 3000 + "4,5,6,7\n", 3002, 4, 3),  # past DuckDB's sniffing sample
]


@pytest.mark.parametrize("text,line,found,fields", RAGGED)
def test_a_ragged_csv_is_named_with_its_line(tmp_path, text, line, found, fields):
    path = tmp_path / "ragged.csv"
    path.write_text(text)
    run(
        ["audit", str(path), "-p", "1", "-q"],
        2,
        f"{str(path)!r} is ragged: line {line} has {found} fields where the header has {fields} (delimiter ','); "
        f"give every line {fields} fields (quote values that contain ','), or name the right --delimiter",
    )


def test_a_csv_that_is_not_utf8_names_its_line_and_the_fix(tmp_path):
    """DuckDB's first line alone ("CSV Error on Line: 4") was the whole message."""
    path = tmp_path / "latin1.csv"
    path.write_bytes("age,town\n1,Aosta\n2,Bard\n3,Ch\u00e2tillon\n4,Aosta\n".encode("latin-1"))
    run(
        ["audit", str(path), "-p", "1", "-q"],
        2,
        f"line 4 of {str(path)!r} is not UTF-8 text; save the file as UTF-8 (e.g. iconv -f cp1252 -t utf-8)",
    )


def test_a_wrong_delimiter_is_named(tmp_path):
    path = tmp_path / "semi.csv"
    path.write_text("a;b;c\n1;2;3\n4;5;6\n7;8;9\n")
    # it said "p = 3 is larger than the number of quasi-identifier columns (1)"
    run(
        ["audit", str(path), "--delimiter", ",", "-q"],
        2,
        f"--delimiter ',' does not occur in the header of {str(path)!r} ('a;b;c'), so every line would be one "
        "column; the file seems to use ';': try --delimiter ';' or leave --delimiter out",
    )
    tsv = tmp_path / "tabs.tsv"
    tsv.write_text("a\tb\n1\t2\n3\t4\n")
    run(["audit", str(tsv), "--delimiter", ";", "-q"], 2, "try --delimiter '\\t' or leave --delimiter out")


BREAKS = [("\u2028", "U+2028"), ("\x0c", "U+000C"), ("\x85", "U+0085"), ("\u2029", "U+2029"), ("\x1e", "U+001E")]


@pytest.mark.parametrize("char,code", BREAKS)
def test_a_column_name_with_a_line_or_page_break_is_refused(engine, char, code):
    """Rendering split such a name (silently another name) and the error message was cut at it.
    (Dialect.quote refuses them; the message must reach the user whole.)"""
    name = f"a{char}b"
    data = {name: [i % 3 for i in range(30)], "b": [i % 5 for i in range(30)], "c": [i % 7 for i in range(30)]}
    source, table = engine.load("t", data)
    with pytest.raises(UsageError) as err:
        qar_sql.audit(source, table=table, p=1, pi_u=0.5, alpha=0.1)
    assert str(err.value) == (
        f"column or table name {name!r} contains a line break ({code}), which qar cannot put in SQL safely; "
        "rename it, or if it is a column leave it out with exclude="
    )
    # without it, the rest audits
    result = qar_sql.audit(source, table=table, exclude=[name], p=1, pi_u=0.5, alpha=0.1)
    assert result.columns == ("b", "c")


@pytest.mark.parametrize("char", ["\u202e", "\u2028"])
def test_a_csv_text_column_qar_cannot_quote_can_be_excluded_as_the_message_says(tmp_path, char):
    """Opening a CSV looked for number-like text columns in every column, this one too, so the
    refusal's own fix (--exclude) was refused again."""
    name = f"a{char}b"
    path = tmp_path / "t.csv"
    path.write_text(f"{name},c,d\n" + "".join(f"x{i % 3},{i % 5},{i % 2}\n" for i in range(30)), encoding="utf-8")
    run(["audit", str(path), "-p", "1", "--pi-u", "0.5", "-q"], 2, "leave it out with --exclude")
    r = run(["audit", str(path), "-x", name, "-p", "1", "--pi-u", "0.5", "--alpha", "0.1", "-f", "json", "-q"], 0, "")
    assert json.loads(r.stdout)["columns"] == ["c", "d"]


def test_the_refusal_reaches_the_command_line_whole(tmp_path):
    path = str(tmp_path / "sep.duckdb")
    con = duckdb.connect(path)
    con.execute('create table t as select i % 3 as "a\u2028b", i % 5 as c, i % 2 as d from range(30) r(i)')
    con.close()
    r = run(["audit", path, "-t", "t", "-p", "1", "-q"], 2, "column or table name 'a\\u2028b' contains a line break")
    assert r.output.count("\n") == 1 and r.output.endswith("leave it out with --exclude\n")


def test_the_columns_a_misspelt_name_is_told_show_a_broken_or_bidi_name_escaped(tmp_path):
    """The did-you-mean lists the table's columns: one with a line break cut the message in two,
    and a bidi override (U+202E) reversed the rest of the line on the terminal."""
    path = str(tmp_path / "names.duckdb")
    con = duckdb.connect(path)
    con.execute('create table t as select i % 3 as "g\nh", i % 5 as "ab\u202ecod", i % 2 as age from range(30) r(i)')
    con.close()
    r = run(["audit", path, "-t", "t", "-c", "zz", "-q"], 2, "the columns are: 'g\\nh', 'ab\\u202ecod', age")
    assert r.output.count("\n") == 1 and "\u202e" not in r.output


def test_a_csv_duckdb_cannot_sniff_names_what_to_check(tmp_path):
    """A quoted line break in a header with CRLF line endings defeats DuckDB's sniffer."""
    path = tmp_path / "h.csv"
    path.write_bytes(b'"g\nh",b\r\n' + b"".join(b"%d,%d\r\n" % (i % 3, i % 5) for i in range(20)))
    run(["audit", str(path), "-q"], 2, "Error when sniffing file", "; check its quoting and line endings")


@pytest.fixture
def broken_name(tmp_path):
    """A DuckDB table with a column named across a line break, beside ordinary ones."""
    path = str(tmp_path / "broken.duckdb")
    con = duckdb.connect(path)
    con.execute(
        'create table t as select i as k, i % 3 as a, i % 5 as b, i % 7 as c, i % 4 as "g\nh" from range(60) r(i)'
    )
    con.close()
    (tmp_path / "w.toml").write_text('qid = ["a", "b"]\n[treatments.s]\ncolumn = "a"\nkind = "suppress"\n')
    (tmp_path / "h.toml").write_text("[hierarchies.a]\nwidths = [2, 4]\n[hierarchies.b]\nwidths = [2, 4]\n")
    return path, str(tmp_path / "w.toml"), str(tmp_path / "h.toml")


@pytest.mark.parametrize(
    "command",
    [
        ["whatif", "-p", "1", "--pi-u", "0.5", "-T", "{w}"],
        ["uniqueness", "-g", "3", "-T", "{w}"],
        ["report", "-p", "1", "--pi-u", "0.5", "--key", "k", "-T", "{w}", "-o", "{out}"],
        ["report", "-p", "1", "--pi-u", "0.5", "--key", "k", "--anonymize", "--qid", "a,b", "--hierarchy", "{h}",
         "--k", "2", "-o", "{out}"],
        # (-p: the release's T̂ over the audit columns, which --exclude chooses; without it -x is refused as ignored)
        ["anonymize", "-p", "1", "--pi-u", "0.5", "--qid", "a,b", "--hierarchy", "{h}", "--k", "2"],
    ],
)  # fmt: skip
def test_a_release_refuses_a_column_it_cannot_carry_before_any_work(broken_name, tmp_path, command):
    """A treated release carries every column of the table, the excluded ones too: the refusal
    told to "leave it out with --exclude", which was done, and came after the audit and records
    passes (qar report -T), or after the search (qar anonymize). Now one sentence before any
    grouping query (--log-level debug logs every statement)."""
    path, w, h = broken_name
    out = str(tmp_path / "r.html")
    args = [a.format(w=w, h=h, out=out) for a in command]
    r = run(
        ["--log-level", "debug", args[0], path, "-t", "t", "-x", "k,g\nh", *args[1:], "-q"],
        2,
        "column name 'g\\nh' contains a line break (U+000A)",
        "carries every column of the table, so --exclude does not leave it out; give it a view",
    )
    assert "group by" not in r.output.lower(), r.output
    assert not (tmp_path / "r.html").exists()


def _bounded_options():
    """(command, field, a value out of its bounds or of its kind) for every number option of
    every generated command of the Python API."""
    import importlib

    from qar_sql.parameters.fields import options_of

    commands = [
        importlib.import_module(f"qar_sql.commands.{n}").COMMAND
        for n in (
            "anonymize",
            "audit",
            "discover",
            "eliminate",
            "records",
            "risk",
            "uniqueness",
            "whatif",
        )
    ]
    from qar_sql.commands.release import COMPARE, REPORT

    cases = []
    for cmd in (*commands, COMPARE, REPORT):
        for f, meta in options_of(cmd.Params):
            if meta.kind not in ("int", "float") or meta.multiple or not meta.cli:
                continue
            if meta.minimum is not None:
                cases.append((cmd.name, f.name, meta.minimum - 1))
            if meta.maximum is not None:
                cases.append((cmd.name, f.name, meta.maximum + 1))
            cases.append((cmd.name, f.name, "3"))  # text where a number goes
    assert len(cases) > 20
    return cases


@pytest.mark.parametrize(("command", "name", "value"), _bounded_options())
def test_the_api_checks_a_number_option_as_the_command_line_does(command, name, value, tmp_path):
    """Each number option's kind and bounds hold for a Python caller too (click checked them on the
    command line only: qar_sql.audit(jobs=0) ran), before any source is read."""
    import re

    from qar_sql.errors import ParameterError

    function = getattr(qar_sql, command)
    args = [str(tmp_path / "absent.csv")] * (2 if command == "compare" else 1)
    # what the other rules need, so that the value is what is refused (a privacy model, a mode)
    given = {"group_size": 2, "treatments": str(tmp_path / "t.toml") if command == "whatif" else None}
    if command == "anonymize":
        given |= {"k": 5, "sensitive": "s"} | ({"l": 2, "l_kind": "recursive"} if name == "c" else {})
    if command == "records":
        given["by"] = "influence" if name == "refine" else "suda" if name != "top" else "dt"
    given = {k: v for k, v in given.items() if k in inspect.signature(function).parameters and k != name}
    with pytest.raises(ParameterError, match=re.escape(repr(value) if isinstance(value, str) else f"{value:g}")):
        function(*args, **given, **{name: value})


@pytest.mark.parametrize(
    "url", ["postgresql+psycopg://u:pw@127.0.0.1:54x32/db", "postgresql+psycopg://u:Qx7@Wv5:Kp3@127.0.0.1/db"]
)
def test_a_url_whose_port_is_no_number_is_a_bad_input(url, tmp_path, monkeypatch):
    """SQLAlchemy's int() of the port (also where a password's unencoded @ and : make one) was
    "unexpected ValueError: invalid literal for int()", exit 3; a scan's error said the same."""
    run(["audit", url, "-t", "t", "-q"], 2, "its port is not a number", "%40")
    monkeypatch.setenv("QAR_T_URL", url)
    (tmp_path / "qar.toml").write_text(
        '[sources.pg]\nurl = "${QAR_T_URL}"\n[[scan]]\nname = "s"\nsource = "pg"\ntable = "t"\n'
    )
    # (a scan's URL is read before any scan runs: the whole scan is refused, naming it)
    r = run(["scan", str(tmp_path / "qar.toml"), "-q", "-f", "json"], 2, "scan 's': cannot use database URL")
    assert "its port is not a number" in r.output and "Qx7" not in r.output and "pw@" not in r.output
    run(["history", "--store", url], 2, "cannot use store URL", "its port is not a number")


def test_a_null_token_with_a_line_break_names_the_option(tmp_path):
    """--null-token 'N<newline>A' was refused as a "text value" whose fix was to "change the value
    or the file name": every command with --null-token (click's tree) names the option, exit 2."""
    import click

    csv = tmp_path / "a.csv"
    csv.write_text("a,b,c\n" + "".join(f"{i % 3},{i % 5},{i % 7}\n" for i in range(40)))
    (tmp_path / "t.toml").write_text(
        'qid = "q"\nrelease = ["b"]\n[qis]\nq = ["a", "b"]\n[treatments.b]\ncolumn = "a"\nkind = "bands"\nwidth = 2\n'
    )
    ctx = click.Context(cli)
    commands = [
        name
        for name in cli.list_commands(ctx)
        if any("--null-token" in getattr(p, "opts", ()) for p in cli.get_command(ctx, name).params)
    ]
    assert len(commands) >= 8, commands
    needs = {"anonymize": ["--k", "2"], "report": ["-o", str(tmp_path / "r.html")], "uniqueness": ["-g", "2"]}
    needs["whatif"] = ["-T", str(tmp_path / "t.toml")]
    for name in commands:
        for token in ("N\nA", "\x1b[31m", "\u202eAN"):
            r = CliRunner().invoke(cli, [name, str(csv), *needs.get(name, []), "--null-token", token])
            assert r.exit_code == 2 and "Error: --null-token " in r.output, (name, token, r.output)
    # The rule itself, so the parameters refuse the token when made, not only the source opened later
    from qar_sql.parameters.release import CompareParams

    with pytest.raises(UsageError, match=r"--null-token 'N\\nA' holds the character U\+000A"):
        CompareParams(null_tokens=("N\nA",))


def test_a_column_given_two_hierarchies_is_refused(tmp_path):
    """--hierarchy sex=a.csv --hierarchy sex=b.csv ran with one of them, the other silently
    dropped; refused on the command line and in the API (the same file twice is one)."""
    csv = tmp_path / "t.csv"
    csv.write_text("age,sex\n" + "".join(f"{20 + i % 9},{'FM'[i % 2]}\n" for i in range(60)))
    for name, text in (("a.csv", "M;*\nF;*\n"), ("b.csv", "M;X\nF;X\n")):
        (tmp_path / name).write_text(text)
    a, b = str(tmp_path / "a.csv"), str(tmp_path / "b.csv")
    base = ["anonymize", str(csv), "--k", "2", "-q"]
    run([*base, "--hierarchy", f"sex={a}", "--hierarchy", f"sex={b}"], 2, "two files")
    run([*base, "--hierarchy", f"sex={a}", "--hierarchy", f"sex={a}"], 0)
    with pytest.raises(UsageError, match="two files"):
        qar_sql.anonymize(str(csv), k=2, hierarchy=[("sex", a), ("sex", b)])
