"""Treatment files: the schema's checks. Every bad file is one sentence on one line that names
the key (and the line, where it can be found) and exits 2; good files parse as documented."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

from qar_sql.cli.main import cli
from qar_sql.engines.dialects import get_dialect
from qar_sql.errors import UsageError
from qar_sql.treat.treatments import TreatmentError, load, parse, type_kind

HEAD = 'qid = ["age", "sex"]\n\n[qis]\nq = ["age", "sex"]\n\n'


@pytest.fixture
def table(duck):
    return duck.load(
        "people",
        {
            "age": [30, 31, 45, 46, None, 70],
            "sex": ["M", "F", "F", None, "M", "F"],
            "town": ["a", "b", "a", "c", "b", "a"],
            "prov": ["P", "Q", "P", "P", None, "P"],
            "score": [1.5, 2.5, 3.0, 3.5, None, 9.0],
        },
    )


def run(table, tmp_path, text, *extra):
    source, name = table
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    res = CliRunner().invoke(cli, ["whatif", source, "-t", name, "-T", str(path), "--no-risk", *extra])
    return res


# (TOML body, words the one-line message must contain, the line it names or None)
# fmt: off
BAD = {
    "unknown column": ('[treatments.b]\ncolumn = "agee"\nkind = "bands"\nwidth = 10\n', ["treatments.b.column", "'agee'", "did you mean 'age'"], 7),
    "unknown kind": ('[treatments.b]\ncolumn = "age"\nkind = "banding"\nwidth = 10\n', ["treatments.b.kind", "'banding'", "bands"], 8),
    "overlapping edges": ('[treatments.b]\ncolumn = "age"\nkind = "bands"\nedges = [0, 30, 30, 60]\n', ["treatments.b.edges", "repeats", "overlap"], 9),
    "unsorted edges": ('[treatments.b]\ncolumn = "age"\nkind = "bands"\nedges = [0, 40, 30]\n', ["treatments.b.edges", "unsorted", "30 follows 40"], 9),
    "bands on text": ('[treatments.b]\ncolumn = "town"\nkind = "bands"\nwidth = 5\n', ["treatments.b.kind", "numeric column", "'town'", "map"], 8),
    "local unknown QI": ('[treatments.b]\ncolumn = "sex"\nkind = "suppress"\nlocal = "best"\n', ["treatments.b.local", "'best'", "[qis]", "defined: q"], 9),
    "local unknown column": ('[treatments.b]\ncolumn = "sex"\nkind = "suppress"\nlocal = ["age", "zzz"]\n', ["treatments.b.local", "'zzz'"], 9),
    "malformed TOML": ('[treatments.b]\ncolumn = "sex"\nkind = suppress\n', ["not valid TOML", "line 8"], None),
    "unknown key": ('[treatments.b]\ncolumn = "age"\nkind = "bands"\nwidht = 10\n', ["treatments.b.widht", "did you mean 'width'"], 9),
    "width and edges": ('[treatments.b]\ncolumn = "age"\nkind = "bands"\nwidth = 10\nedges = [0, 1]\n', ["treatments.b", "exactly one of width"], 6),
    "labels count": ('[treatments.b]\ncolumn = "age"\nkind = "bands"\nedges = [0, 1, 2]\nlabels = ["x"]\n', ["treatments.b.labels", "2 strings"], 10),
    "negative width": ('[treatments.b]\ncolumn = "age"\nkind = "bands"\nwidth = -1\n', ["treatments.b.width", "positive"], 9),
    "too many bands": ('[treatments.b]\ncolumn = "age"\nkind = "bands"\nwidth = 0.001\n', ["treatments.b.width", "bands", "wider"], 9),
    "missing kind": ('[treatments.b]\ncolumn = "age"\n', ["treatments.b.kind", "missing"], 6),
    "map on decimals": ('[treatments.b]\ncolumn = "score"\nkind = "map"\nmap = { "1.5" = "low" }\n', ["treatments.b.kind", "decimal"], 8),
    "top on text": ('[treatments.b]\ncolumn = "sex"\nkind = "top"\nabove = 3\n', ["treatments.b.kind", "numeric"], 8),
    "top without above": ('[treatments.b]\ncolumn = "age"\nkind = "top"\n', ["treatments.b.above is missing; add above = N", "coding threshold"], None),
    "top label on decimals": ('[treatments.b]\ncolumn = "score"\nkind = "top"\nabove = 3\nvalue = "3+"\n', ["treatments.b.value", "whole-number"], 10),
    "unknown parent": ('[treatments.b]\ncolumn = "town"\nkind = "hierarchy"\nparent = "province"\n', ["treatments.b.parent", "'province'"], 9),
    "missing lookup table": ('[treatments.b]\ncolumn = "town"\nkind = "hierarchy"\ntable = "nope"\nkey = "k"\nparent = "p"\n', ["treatments.b.table", "'nope'", "cannot be read"], 9),
    "unknown combination": ('combinations = [["b", "c"]]\n[treatments.b]\ncolumn = "sex"\nkind = "suppress"\n', ["combinations", "'c'", "not defined"], None),
    "combination names a treatment twice": ('combinations = [["b", "b"]]\n[treatments.b]\ncolumn = "sex"\nkind = "suppress"\n', ["combinations", "lists a treatment twice"], None),
    "release of numbers": ('release = [1]\n[treatments.b]\ncolumn = "sex"\nkind = "suppress"\n', ["release", "list of treatment names"], None),
    "unknown top-level key": ('combination = [["b"]]\n[treatments.b]\ncolumn = "sex"\nkind = "suppress"\n', ["combination", "did you mean 'combinations'"], None),
    "no treatments": ("", ["treatments", "missing or empty"], None),
}
# fmt: on


@pytest.mark.parametrize("case", list(BAD))
def test_bad_treatment_file(table, tmp_path, case):
    body, words, line = BAD[case]
    top_level = (
        "unknown combination",
        "unknown top-level key",
        "combination names a treatment twice",
        "release of numbers",
    )
    text = body if case in top_level else HEAD + body
    if case in top_level:
        text = 'qid = ["age", "sex"]\n' + body
    res = run(table, tmp_path, text)
    assert res.exit_code == 2, res.output
    msg = res.output.strip()
    assert msg.startswith("Error: ") and "\n" not in msg and "Traceback" not in msg
    for w in words:
        assert w in msg, (w, msg)
    if line is not None:
        assert f"line {line})" in msg or f"line {line}," in msg, msg


def test_lookup_with_two_parents_for_one_key(duck, table, tmp_path):
    duck.load("lk", {"k": ["a", "a", "b"], "p": ["P", "Q", "P"]})
    res = run(
        table,
        tmp_path,
        HEAD + '[treatments.b]\ncolumn = "town"\nkind = "hierarchy"\ntable = "lk"\nkey = "k"\nparent = "p"\n',
    )
    assert res.exit_code == 2 and "treatments.b.key" in res.output and "more than one parent" in res.output


def test_missing_file_unknown_qid_and_scenario(table, tmp_path):
    source, name = table
    r = CliRunner().invoke(cli, ["whatif", source, "-t", name, "-T", str(tmp_path / "none.toml")])
    assert r.exit_code == 2
    good = HEAD + '[treatments.b]\ncolumn = "sex"\nkind = "suppress"\n'
    res = run(table, tmp_path, good, "--qid", "age,sexx")
    assert res.exit_code == 2 and "'sexx'" in res.output and "did you mean 'sex'" in res.output
    res = run(table, tmp_path, good, "--only", "c")
    assert res.exit_code == 2 and "no treatment 'c'" in res.output
    res = run(table, tmp_path, good.replace('qid = ["age", "sex"]\n', ""))
    assert res.exit_code == 2 and "--qid" in res.output
    assert run(table, tmp_path, good, "--qid", "q").exit_code == 0  # a name from [qis]


def test_good_file_parses():
    plan = parse(
        HEAD + 'combinations = [["a", "b"]]\n'
        if False
        else 'qid = "q"\ncombinations = [["a", "b"]]\nrelease = ["b"]\n[qis]\nq = ["x", "y"]\n'
        '[treatments.a]\ncolumn = "x"\nkind = "bands"\nedges = [0, 10]\nto = "midpoint"\ndigits = 1\nlocal = "q"\n'
        '[treatments.b]\ncolumn = "y"\nkind = "map"\nmap = { u = "v" }\nother = "w"\n'
    )
    assert plan.qid == ("x", "y") and plan.combinations == (("a", "b"),) and plan.release == ("b",)
    a = plan.get("a")
    assert a.kind == "bands" and a.local == ("x", "y") and a.local_name == "q" and a.opt("digits") == 1
    with pytest.raises(TreatmentError, match="did you mean 'a'"):
        plan.get("aa")


def test_dict_and_text_inputs_are_the_same_plan():
    doc = {"qid": ["x"], "treatments": {"s p": {"column": "x", "kind": "suppress", "values": ["a", 1]}}}
    from_dict = load(doc)
    from_text = load('qid = ["x"]\n[treatments."s p"]\ncolumn = "x"\nkind = "suppress"\nvalues = ["a", 1]\n')
    assert from_dict.treatments == from_text.treatments and from_dict.qid == from_text.qid


@pytest.mark.parametrize(
    "name,kind",
    [
        ("INTEGER", "integer"),
        ("bigint", "integer"),
        ("smallint", "integer"),
        ("HUGEINT", "integer"),
        ("DOUBLE", "float"),
        ("double precision", "float"),
        ("numeric", "float"),
        ("DECIMAL(18,3)", "float"),
        ("real", "float"),
        ("VARCHAR", "text"),
        ("text", "text"),
        ("character varying", "text"),
        ("DATE", "other"),
        ("boolean", "other"),
        ("timestamp without time zone", "other"),
    ],
)
def test_type_kinds(name, kind):
    assert type_kind(name) == kind


def test_type_names_per_dialect():
    from qar_sql.treat.treatments import Binder

    b = Binder.__new__(Binder)
    b.dialect = get_dialect("bigquery")
    assert b.as_text("x", "integer") == "cast(x as string)" and b.as_float("x") == "cast(x as float64)"
    b.dialect = get_dialect("postgresql")
    assert b.as_text("x", "float") == "cast(x as varchar)" and b.as_float("x") == "cast(x as double precision)"


@pytest.mark.parametrize(
    ("width", "said"),
    [
        (None, "treatments.a.width is None, which a TOML file cannot hold"),
        (float("inf"), "treatments.a.width = inf is not a finite number"),
        (np.int64(10), "Object of type int64 is not JSON serializable"),
    ],
)
def test_a_dict_of_treatments_holds_only_what_a_file_can(width, said):
    """The API's dict is read as the file's parsed TOML: a value no TOML file holds is one
    sentence naming it and the fix (numpy's int64 was a TypeError from inside the reader)."""
    with pytest.raises(TreatmentError) as err:
        load({"treatments": {"a": {"column": "age", "kind": "bands", "width": width}}})
    assert said in str(err.value) and "give strings, numbers, booleans, lists and tables" in str(err.value)


def test_a_missing_treatments_file_is_named(tmp_path):
    with pytest.raises(UsageError, match=r"treatments file '.*nope\.toml' does not exist; check the path") as e:
        load(tmp_path / "nope.toml")
    assert e.value.exit_code == 2
