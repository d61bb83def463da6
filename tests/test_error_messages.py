"""Advice that misled (issue 16, item 10): each message now says what is wrong and a fix that works."""

from __future__ import annotations

import duckdb
import pytest
from click.testing import CliRunner

import qar_sql
from qar_sql.cli.main import cli
from qar_sql.errors import ParameterError, UsageError
from qar_sql.stats import evt


def run(args, code: int, *needles: str):
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == code, r.output
    for needle in needles:
        assert needle in r.output, r.output
    return r


@pytest.fixture
def keyed(engine):
    """A table with an id: 3 of the 5 QIs of p = 2 over 5 columns... every QI with the id is a key."""
    n = 50
    data = {
        "person id": list(range(n)),
        "age": [i % 7 for i in range(n)],
        "sex": [i % 2 for i in range(n)],
        "zip": [i % 5 for i in range(n)],
        "job": [i % 3 for i in range(n)],
    }
    return engine.load("people", data)


def test_a_key_column_is_named_when_it_leaves_no_tail(keyed):
    source, table = keyed
    result = qar_sql.audit(source, table=table, p=2, pi_u=0.2, alpha=0.01)
    assert result.fit is None  # 4 of the 10 QIs contain the id: u is a clipped key
    assert result.warnings == (
        "no tail to fit: column 'person id' identifies every record (50 distinct values), so every QI containing "
        "it is a key (θ = 1) and no θ is left above u; leave it out with exclude='person id'",
    )  # the API names the keyword; the command line says --exclude 'person id'
    assert qar_sql.audit(source, table=table, p=2, pi_u=0.2, exclude=["person id"]).fit is not None
    args = ["audit", source, *(["--table", table] if table else []), "-p", "2", "--pi-u", "0.2", "-q"]
    run(args, 2, "leave it out with --exclude 'person id'")  # (quoted: one argument in a shell; no tail: exit 2)


def test_a_key_column_is_named_when_a_tail_remains(keyed):
    source, table = keyed
    result = qar_sql.audit(source, table=table, p=1, pi_u=0.5, alpha=0.1)
    assert (
        "column 'person id' identifies every record (50 distinct values), so every QI containing it is a key "
        "(θ = 1); an identifier is no quasi-identifier: leave it out with exclude='person id'"
    ) in result.warnings


@pytest.mark.parametrize(
    "alpha,pi_u,advice",
    [
        (0.06, 0.05, "lower alpha below 0.05 (e.g. 0.01) or raise pi_u above 0.06 (e.g. 0.3)."),
        (0.05, 0.05, "lower alpha below 0.05 (e.g. 0.01) or raise pi_u above 0.05 (e.g. 0.25)."),
        (0.5, 0.1, "lower alpha below 0.1 (e.g. 0.02) or raise pi_u above 0.5 (e.g. 0.75)."),
    ],
)
def test_alpha_above_pi_u_suggests_values_that_work(alpha, pi_u, advice):
    with pytest.raises(ParameterError) as err:
        evt.validate_parameters(3, alpha, pi_u)
    assert str(err.value) == f"alpha = {alpha!r} must be smaller than pi_u = {pi_u!r}; {advice}"
    a_fix, pi_fix = (float(x.split("e.g. ")[1].rstrip(").")) for x in advice.split(" or "))
    evt.validate_parameters(3, a_fix, pi_u)  # both suggestions really work
    evt.validate_parameters(3, alpha, pi_fix)


@pytest.mark.parametrize(
    "url,message",
    [
        (
            "mysql://u:secret@db.example/x",
            "the database driver for mysql://u:***@db.example/x is not installed (MySQLdb); install it with: "
            "pip install 'qar-sql[mysql]' and write the URL as mysql+pymysql://…",
        ),
        (
            "snowflake://acct/db",
            "the SQLAlchemy dialect for snowflake (snowflake://acct/db) is not installed; install it with: pip install 'qar-sql[snowflake]'",
        ),
        (
            "bigquery://project/dataset",
            "the SQLAlchemy dialect for bigquery (bigquery://project/dataset) is not installed; install it with: pip install 'qar-sql[bigquery]'",
        ),
    ],
)
def test_a_missing_driver_names_the_extra(url, message):
    module = {"mysql": "MySQLdb", "snowflake": "snowflake.sqlalchemy", "bigquery": "sqlalchemy_bigquery"}
    try:
        __import__(module[url.split(":", 1)[0]])
        pytest.skip("the driver is installed here")
    except ImportError:
        pass
    with pytest.raises(UsageError) as err:
        qar_sql.audit(url, table="t")
    assert str(err.value) == message  # was "Can't load plugin: sqlalchemy.dialects:snowflake"
    run(["audit", url, "-t", "t"], 2, message)


def test_debug_is_accepted_after_the_command(tmp_path):
    missing = str(tmp_path / "none.duckdb")
    r = run(["audit", missing, "-t", "t", "--debug"], 2, "does not exist")  # was "No such option: --debug"
    assert "Traceback" in r.output  # and it shows the traceback
    r = run(["audit", missing, "-t", "t"], 2, "does not exist")
    assert "Traceback" not in r.output


def test_exclude_works_with_columns_as_its_help_now_says(tmp_path):
    path = str(tmp_path / "t.duckdb")
    con = duckdb.connect(path)
    con.execute("create table t as select i % 7 as a, i % 3 as b, i % 5 as c, i % 2 as d from range(40) r(i)")
    con.close()
    result = qar_sql.audit(path, table="t", columns=["a", "b", "c"], exclude=["b"], p=1, pi_u=0.5, alpha=0.1)
    assert result.columns == ("a", "c")
    out = run(["audit", "--help"], 0).output
    assert "from all columns, or from those of --columns" in " ".join(out.split())
    assert "Records this audit's run there; without --store nothing is recorded" in " ".join(out.split())


@pytest.mark.parametrize(
    "command,says", [("report", "read, not written"), ("history", "runs are shown"), ("scan", "[store]")]
)
def test_each_store_option_says_what_its_command_does_with_the_store(command, says):
    """Every --store's help said "An audit records its run only when --store is given", in qar
    report (which reads the store), qar history, qar migrate and qar scan too."""
    out = " ".join(run([command, "--help"], 0).output.split())
    assert says in out and "An audit records" not in out


def _messages():
    """The template of every message raised or failed with text in qar_sql ({} for a value)."""
    import ast
    from pathlib import Path

    for path in sorted((Path(qar_sql.__file__).parent).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            func = getattr(node, "func", None)
            name = getattr(func, "id", None) or getattr(func, "attr", "")
            if not isinstance(node, ast.Call) or not (name.endswith("Error") or name == "fail"):
                continue
            for arg in node.args[:3]:
                text = _template(arg)
                if text is not None:
                    yield f"{path.name}:{node.lineno}", text


def _template(node):
    """A message's text with {} for each value: an f-string, a literal, or a sum of them (a
    parenthesised conditional part counts as a value)."""
    import ast

    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _template(node.left), _template(node.right)
        if left is not None or right is not None:
            return (left if left is not None else "{}") + (right if right is not None else "{}")
    return None


def test_no_message_glues_two_clauses_without_a_separator():
    """'is not a known top-level key Use: …' and 'unknown SQL dialect 'x' Choose one of: …' ran
    two clauses together (the hint before them was empty); a clause after a value is joined by
    '; ' (or ', ', ': ', a parenthesis)."""
    import re

    # A capital right after a value or a word starts a second clause, but in a name (DuckDB).
    glued = re.compile(
        r"(\w*)[a-z0-9)\]'\"}`]([A-Z][a-z]\w*)|(?:[a-z0-9)}']|\{\}) (Use|Choose|Keys|Defined|Known|Try|Set|Available|Allowed)\b"
    )
    names = {"ClickHouse", "DataFrame", "DuckDB", "PostgreSQL", "MariaDB", "SQLite", "AnonymizeParams", "LazyFrame"}
    names |= {"RecordBatch", "DuckDBPyRelation", "PyArrow", "ScanConfig", "ScanParams", "GitHub", "sdcMicro"}

    def is_glued(text):
        for m in glued.finditer(text):
            word = (m.group(1) or "") + text[m.start(2) - 1 : m.end(2)] if m.group(2) else ""
            if m.group(3) or not any(word.endswith(n) or n in word for n in names):
                return True
        return False

    found = [f"{where}: {text!r}" for where, text in _messages() if is_glued(text)]
    assert not found, "\n".join(found)


def test_an_unknown_name_gets_one_sentence_of_advice():
    from qar_sql.engines.dialects import get_dialect as dialect
    from qar_sql.treat import treatments

    with pytest.raises(UsageError) as e:
        dialect("postgress", strict=True)
    assert str(e.value).startswith("unknown SQL dialect 'postgress'; did you mean 'postgresql' (one of: ")
    with pytest.raises(UsageError) as e:
        dialect("zzz", strict=True)
    assert str(e.value).startswith("unknown SQL dialect 'zzz'; use one of: ")
    with pytest.raises(UsageError) as e:
        treatments.parse("[[zzz]]\nbogus = 1\n", "t.toml")
    assert "t.toml: zzz is not a known top-level key; use one of: " in str(e.value)
    assert str(e.value).count(". ") == 0


def test_an_api_error_names_the_keyword_the_caller_passed_not_the_flag(keyed):
    """The checks deep in the audit name --exclude, -p, --key; the Python caller passed keywords."""
    source, table = keyed
    with pytest.raises(UsageError) as caught:
        qar_sql.audit(source, table=table, exclude=["no such"])
    assert "(in exclude=)" in str(caught.value) and "--exclude" not in str(caught.value)
    with pytest.raises(ParameterError, match=r"use p=1 or name more columns$"):
        qar_sql.audit(source, table=table, columns=["age"])
    with pytest.raises(UsageError, match=r"with key= \(e\.g\. key='person_id'\)$"):
        qar_sql.records(source, table=table, p=2)


def test_the_parameters_own_checks_name_keywords_in_the_api(keyed, tmp_path):
    """The checks the parameters make when built (``--k 1``, ``--suppression-limit 2``,
    ``--group-size 30``, ``--sampling-fraction 2``) reached the Python caller with the flags."""
    source, table = keyed
    levels = tmp_path / "age.toml"
    levels.write_text("[hierarchies.age]\nwidths = [5, 10]\n")
    cases = [
        (
            qar_sql.anonymize,
            {"hierarchy": {"age": str(levels)}, "k": 1},
            "k=1 is not a whole number of at least 2; pass one such as 2.",
        ),
        (
            qar_sql.anonymize,
            {"hierarchy": {"age": str(levels)}, "k": 2, "suppression_limit": 2},
            "suppression_limit=2 must",
        ),
        (qar_sql.anonymize, {"hierarchy": {"age": str(levels)}}, "l=2 sensitive='COLUMN', t=0.2 sensitive='COLUMN'"),
        (qar_sql.uniqueness, {"group_size": 0}, "e.g. group_size=30"),
        (qar_sql.risk, {"sampling_fraction": 2}, "sampling_fraction=2 must be in (0, 1]"),
        # a Python constant after the keyword, as passed (it read "risk_below= True")
        (qar_sql.anonymize, {"hierarchy": {"age": str(levels)}, "risk_below": True}, "risk_below=True must be"),
        # a whole float: its whole number is the example (it said "pass one such as 1")
        (
            qar_sql.anonymize,
            {"hierarchy": {"age": str(levels)}, "k": 5.0},
            "is not a whole number of at least 2; pass one such as 5.",
        ),
    ]
    for function, keywords, said in cases:
        with pytest.raises(ParameterError) as caught:
            function(source, table=table, **keywords)
        assert said in str(caught.value) and "--" not in str(caught.value), (keywords, str(caught.value))


def test_anonymize_takes_hierarchies_as_the_command_line_writes_them(keyed, tmp_path):
    """``hierarchy=["age=levels.toml"]`` (the command line's form) failed with a bare ValueError
    ("too many values to unpack"); a mapping, pairs, "COLUMN=FILE" texts and a TOML path now give
    the same search, and anything else one sentence naming the keyword."""
    source, table = keyed
    levels = tmp_path / "age.toml"
    levels.write_text("[hierarchies.age]\nwidths = [5, 10]\n")
    forms = [{"age": str(levels)}, [("age", str(levels))], [f"age={levels}"], f"age={levels}", levels]
    chosen = {str(qar_sql.anonymize(source, table=table, hierarchy=h, k=2).chosen.levels) for h in forms}
    assert len(chosen) == 1
    for bad in ([1], ["age"], [("age", str(levels), "x")]):
        with pytest.raises(ParameterError, match="hierarchy=") as caught:
            qar_sql.anonymize(source, table=table, hierarchy=bad, k=2)
        assert "--" not in str(caught.value)


def test_flags_are_written_as_keywords_with_their_values():
    from qar_sql.parameters.fields import SourceOptions, as_keywords
    from qar_sql.parameters.tail import AuditParams

    def written(message):
        return as_keywords(message, (AuditParams, SourceOptions))

    assert written("leave it out with --exclude 'person id' unless") == "leave it out with exclude='person id' unless"
    assert written("use -p 2 or --alpha 0.05.") == "use p=2 or alpha=0.05."
    assert written("use --columns to name them") == "use columns= to name them"  # (a word is the sentence's)
    assert written("re-identification, non-p x--exclude") == "re-identification, non-p x--exclude"
    assert written("--table people and --delimiter ';'") == "table= people and delimiter=';'"
    assert written("add --columns COLUMN") == "add columns='COLUMN'"  # a placeholder is the value
    assert written("drop --prune auto, not --pwm median") == "drop prune='auto', not pwm= median"  # a choice's word
    # a list and a COLUMN=FILE are one value each: "qid= a,b,c" and "hierarchy= sex=FILE" read as
    # a keyword without its value followed by the sentence's words
    assert written("(qar whatif also takes --columns a,b,c)") == "(qar whatif also takes columns='a,b,c')"
    assert written("use --columns age,sex.") == "use columns='age,sex'."
    from qar_sql.parameters.treat import AnonymizeParams

    hint = "give it one (--hierarchy sex=FILE)"
    assert as_keywords(hint, (AnonymizeParams,)) == "give it one (hierarchy='sex=FILE')"


def test_a_key_given_as_one_text_is_the_column_not_its_letters(keyed):
    """``key="person id"`` (the form the API's own message suggests, ``key='person_id'``) was
    read as the letters p, e, r, …: "key column 'p' (in key=) not found"."""
    source, table = keyed
    by_text = qar_sql.records(source, table=table, key="person id", exclude="person id", p=2, pi_u=0.5)
    by_list = qar_sql.records(source, table=table, key=["person id"], exclude=["person id"], p=2, pi_u=0.5)
    assert by_text.to_dict() == by_list.to_dict()
    with pytest.raises(UsageError, match=r"^key column 'nobody' \(in key=\) not found"):
        qar_sql.records(source, table=table, key="nobody", p=2, pi_u=0.5)


def test_a_yaml_exponent_number_reads_the_same_from_every_rule():
    """The "is text; YAML reads ..." sentence was assembled in three places (the tail's, a risk's
    and an option field's rule), which ended it differently; one rule now writes it."""
    from qar_sql import rules
    from qar_sql.parameters.tail import AuditParams

    said = []
    for check in (
        lambda: rules.check_tail(3, "5e-1", 0.6),
        lambda: rules.check_risk("5e-1", "fail_above =", "0.05"),
        lambda: AuditParams(interval_level=0.9, batch_size="5e-1"),  # type: ignore[arg-type]
    ):
        with pytest.raises(ParameterError) as refused:
            check()
        said.append(str(refused.value).split("'5e-1' is text; ", 1)[1])
    assert said == [said[0]] * 3 and said[0].startswith("write it as a decimal: 0.5 ("), said


def test_a_group_size_below_2_reads_the_same_in_every_command(tmp_path):
    """qar report stated k >= 2 as a click range of its own ("1 is not in the range x>=2"); audit
    and uniqueness as the rule: one rule (fields.group_size), one sentence."""
    csv = tmp_path / "a.csv"
    csv.write_text("a,b\n1,2\n3,4\n")
    said = "Error: group size k = 1 must be a whole number of at least 2, e.g. --group-size 30"
    for argv in (["report", str(csv), "-o", str(tmp_path / "r.html")], ["audit", str(csv)], ["uniqueness", str(csv)]):
        r = CliRunner().invoke(cli, [*argv, "-g", "1"])
        assert r.exit_code == 2 and said in r.output, (argv, r.output)
