"""qar.toml's JSON Schema (issue 28, item 5): generated from the parameter definitions, current,
covering every key; ``qar config --check`` reads a file with qar scan's own loader.

The independent check: the jsonschema package validates the same files against the schema, and
qar scan's loader (compliance/scans.parse_config) must agree on which are valid."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib

import pytest
from click.testing import CliRunner
from conftest import REPO

from qar_sql import config_file as config
from qar_sql import toml_schema, user_files
from qar_sql.cli.main import cli
from qar_sql.compliance import scans
from qar_sql.errors import QarError, UsageError
from qar_sql.treat import treatments

GOOD = """
[store]
url = "qar_results.duckdb"
[defaults]
p = 2
pi_u = 0.2
exclude = ["person_id"]
[sources.demo]
url = "qar_demo.duckdb"
[[scan]]
name = "people"
table = "population"
columns = "age,sex"
fail_above = 0.9
warn_above = 0.5
"""
#: A bad file → the loader's first sentence of it (qar scan's).
BAD = {
    '[scan]\ntable = "t"\n': "scan is a table but must be a list of tables; write [[scan]], not [scan]",
    "[defaults]\npp = 3\n": "[defaults] has an unknown key 'pp'; did you mean 'p'?",
    "[defaults]\np = 0\n": "[defaults]: p = 0 is not a valid QI size; use a whole number of columns, at least 1.",
    "[defaults]\nk = 1\n": "[defaults]: k = 1 is not a whole number of at least 2; pass one such as 5.",
    "[defaults]\npi_u = 1.5\n": "[defaults]: pi_u = 1.5 is outside (0, 1); use a probability such as 0.05.",
    '[defaults]\npwm = "median"\n': "[defaults]: pwm = 'median' is unknown; use one of plotting, unbiased",
    '[sources.a]\nurl = "a.duckdb"\n[[scan]]\ntable = "t"\nfail_above = 2\n': (
        "scan 't': fail_above = 2 must be a risk between 0 and 1, e.g. 0.05"
    ),
    '[sources.a]\nurl = "a.duckdb"\n[[scan]]\ntable = "t"\np = true\n': (
        "scan 't': p = true is not a valid QI size; use a whole number of columns, at least 1."
    ),
    '[sources.a]\nurl = "a.duckdb"\n[[scan]]\ntable = "t"\ncolumns = []\n': (
        'scan \'t\': columns must be a list of column names, e.g. columns = ["age", "sex"]'
    ),
    "[sources.a]\nurl = 3\n": '[sources.a] needs a url, e.g. url = "${QAR_WAREHOUSE_URL}"',
    'stores = "x"\n': "the file has an unknown key 'stores'; did you mean 'store'?",
    '[sources.a]\nurl = "a.duckdb"\n[[scan]]\ntable = "t"\nmin_exceedances = 0\n': (
        "scan 't': min_exceedances = 0 is not a number of exceedances; use a whole number of at least 1, e.g. 3"
    ),
    '[sources.a]\nurl = "a.duckdb"\n[[scan]]\ntable = ""\n': 'scan number 1: table must be a name, e.g. table = "public.people"',
    '[defaults]\nnull_tokens = [""]\n': 'null_tokens must be a list of non-empty texts, e.g. null_tokens = ["NA"]',
    "[store]\n": '[store] needs a url, e.g. url = "qar_results.duckdb"',  # (it recorded nothing, silently)
    '[sources.a]\nurl = "a.duckdb"\n[[scan]]\nsource = []\ntable = "t"\n': (  # (unexpected TypeError, exit 3)
        'scan number 1: source = [] must be one name, e.g. source = "people"'
    ),
    "scan = []\n": "no scans; add at least one [[scan]] naming a source (and its table, for a database: a CSV or Parquet file takes none)",
}


class _AnyVariable(dict):
    """An environment in which every ``${VAR}`` a file names is set."""

    def __contains__(self, name):
        return True

    def __missing__(self, name):
        return "set"


def loader_errors(text: str) -> list[str]:
    """What qar scan's loader (``qar config --check``'s) finds in ``text``, in order."""
    problems = scans.Problems()
    scans.parse_config(
        tomllib.loads(text), path="qar.toml", environ=_AnyVariable(), problems=problems, require_scans=False
    )
    return [message.removeprefix("qar.toml: ") for _, message in problems.found]


def test_the_schema_file_is_current():
    assert toml_schema.PATH.read_text(encoding="utf-8") == toml_schema.render()
    run = subprocess.run([sys.executable, "scripts/schema.py", "--check"], cwd=REPO, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


def test_every_key_of_the_parameter_definitions_is_in_the_schema():
    s = toml_schema.schema()
    props = s["properties"]
    assert list(props) == list(scans.TOP_KEYS)
    assert set(props["scan"]["items"]["properties"]) == set(scans.SCAN_KEYS)
    defaults = props["defaults"]["properties"]
    assert set(scans.DEFAULT_KEYS) <= set(defaults)
    assert set(config.KEYS) - {"store"} <= set(defaults)  # every command default a qar.toml may set
    for key, value in scans.DEFAULTS.items():  # the defaults are the scan file's, one place
        assert defaults[key].get("default") == value, key


def test_a_good_file_and_the_examples_are_valid():
    assert loader_errors(GOOD) == []
    assert loader_errors((REPO / "examples" / "qar.toml").read_text()) == []


def test_every_qar_toml_in_the_docs_is_valid():
    blocks = []
    for page in sorted((REPO / "docs").glob("*.md")):
        for block in re.findall(r"```toml\n(.*?)```", page.read_text(encoding="utf-8"), re.S):
            if "[[scan]]" in block:
                blocks.append((page.name, block))
    assert blocks
    for name, block in blocks:
        assert loader_errors(block) == [], name


@pytest.mark.parametrize("text", list(BAD))
def test_a_bad_file_names_the_key_or_value(text):
    assert loader_errors(text)[0] == BAD[text]


@pytest.mark.parametrize("text", [GOOD, *BAD])
def test_jsonschema_and_qars_loader_agree(text):
    jsonschema = pytest.importorskip("jsonschema")
    ours = loader_errors(text)
    theirs = list(jsonschema.Draft7Validator(toml_schema.schema()).iter_errors(tomllib.loads(text)))
    assert bool(ours) == bool(theirs), (ours, theirs)


def test_qar_config_check(tmp_path):
    good = tmp_path / "qar.toml"
    good.write_text(GOOD)
    r = CliRunner().invoke(cli, ["config", "--check", str(good)])
    assert r.exit_code == 0 and "valid (1 scan" in r.output
    bad = tmp_path / "bad.toml"
    bad.write_text("[defaults]\npwm = 'median'\np = 0\n")
    r = CliRunner().invoke(cli, ["config", "--check", str(bad)])
    assert r.exit_code == 2
    assert r.output.strip() == (
        "Error: bad.toml has 2 errors:\n"
        "  [defaults]: p = 0 is not a valid QI size; use a whole number of columns, at least 1.\n"
        "  [defaults]: pwm = 'median' is unknown; use one of plotting, unbiased"
    )
    r = CliRunner().invoke(cli, ["config", "--check", str(tmp_path / "none.toml")])
    assert r.exit_code == 2 and "does not exist" in r.output


#: Files the schema accepts and ``qar scan`` refuses → what --check must say (it said "valid").
SCAN_REFUSES = {
    "password": (
        '[sources.a]\nurl = "postgresql://u:hunter2@db/x"\n[[scan]]\ntable = "t"\n',
        "sources.a.url contains a password",
    ),
    "warn above fail": (
        '[sources.a]\nurl = "a.duckdb"\n[[scan]]\ntable = "t"\nwarn_above = 0.9\nfail_above = 0.5\n',
        "warn_above",
    ),
    "alpha over pi_u": ('[sources.a]\nurl = "a.duckdb"\n[[scan]]\ntable = "t"\nalpha = 0.3\npi_u = 0.2\n', "alpha"),
    "unset variable": (
        '[sources.a]\nurl = "${QAR_TEST_UNSET_H4}"\n[[scan]]\ntable = "t"\n',
        "QAR_TEST_UNSET_H4",
    ),
    "defaults only": ("[defaults]\nwarn_above = 0.9\nfail_above = 0.5\n", "warn_above"),
    # A line break split the summary's row in two.
    "line break in a name": (
        '[sources.a]\nurl = "a.duckdb"\n[[scan]]\nname = "a\\nb"\ntable = "t"\n',
        "name 'a\\nb' holds U+000A; write it on one line",
    ),
    # The store's engine: qar scan refused it only when it recorded (not with --no-store).
    "a store of another engine": (
        '[store]\nurl = "mysql://u@db/x"\n[sources.a]\nurl = "a.duckdb"\n[[scan]]\ntable = "t"\n',
        "[store] url mysql://u@db/x is a mysql database; a results store is a DuckDB file or a PostgreSQL",
    ),
    # These three were each the scan's error after opening its source.
    "a column listed twice": (
        '[sources.a]\nurl = "a.duckdb"\n[[scan]]\ntable = "t"\ncolumns = ["age", "sex", "age"]\n',
        "columns lists 'age' twice; list it once",
    ),
    "exclude takes every column": (
        '[sources.a]\nurl = "a.duckdb"\n[[scan]]\ntable = "t"\ncolumns = ["age", "sex", "zip"]\nexclude = ["sex", "age", "zip"]\n',
        "exclude takes out every one of columns",
    ),
    "p above the columns": (
        '[sources.a]\nurl = "a.duckdb"\n[[scan]]\ntable = "t"\ncolumns = "age,sex"\n',
        "p = 3 is larger than the number of columns left (2); write p = 2",
    ),
    # Said once: set aside alone, alpha's default 0.01 was found not below pi_u = 0.01 as well.
    "alpha over a small pi_u": (
        '[sources.a]\nurl = "a.duckdb"\n[[scan]]\ntable = "t"\nalpha = 0.05\npi_u = 0.01\n',
        "alpha = 0.05 must be smaller than pi_u = 0.01",
    ),
}


@pytest.mark.parametrize("name", list(SCAN_REFUSES))
def test_check_refuses_what_qar_scan_refuses_with_the_scans_message(name, tmp_path, monkeypatch):
    """--check runs qar scan's own loader after the schema: its message, word for word."""
    monkeypatch.delenv("QAR_TEST_UNSET_H4", raising=False)
    text, says = SCAN_REFUSES[name]
    path = tmp_path / "qar.toml"
    path.write_text(text)
    jsonschema = pytest.importorskip("jsonschema")
    assert jsonschema.Draft7Validator(toml_schema.schema()).is_valid(tomllib.loads(text))  # the schema cannot say it
    r = CliRunner().invoke(cli, ["config", "--check", str(path)])
    assert r.exit_code == 2 and says in r.output, r.output
    loader = config.load if "[[scan]]" not in text else scans.load_config
    with pytest.raises(QarError) as refused:
        loader(path)
    assert r.output.strip() == f"Error: {refused.value}"


@pytest.mark.parametrize(
    "text,says",
    [
        ('[scan]\ntable = "t"\n', "scan is a table but must be a list of tables; write [[scan]], not [scan]"),
        ('scan = 3\n[sources.a]\nurl = "a.duckdb"\n', "scan = 3 must be a list"),
    ],
)
def test_qar_scan_names_a_scan_that_is_no_list_as_check_does(text, says, tmp_path):
    """qar scan said "no scans; add at least one [[scan]]" of a file that has one, as [scan]."""
    path = tmp_path / "qar.toml"
    path.write_text(text.replace("[scan]", '[sources.a]\nurl = "a.duckdb"\n[scan]', 1))
    checked = CliRunner().invoke(cli, ["config", "--check", str(path)])
    scanned = CliRunner().invoke(cli, ["scan", str(path), "--no-store"])
    assert checked.exit_code == scanned.exit_code == 2
    assert says in checked.output and says in scanned.output, scanned.output
    assert "no scans" not in scanned.output


def test_check_of_a_file_without_scans_says_qar_scan_refuses_it(tmp_path):
    path = tmp_path / "qar.toml"
    path.write_text("[defaults]\np = 2\n")
    r = CliRunner().invoke(cli, ["config", "--check", str(path)])
    assert r.exit_code == 0 and "no [[scan]], so qar scan would refuse it" in r.output
    assert CliRunner().invoke(cli, ["scan", str(path), "--no-store"]).exit_code == 2


@pytest.mark.parametrize(
    "text", ["a = " + "[" * 3000 + "]" * 3000 + "\n", "[defaults]\nx = " + "{a = " * 400 + "1" + "}" * 400]
)
def test_deep_nesting_is_a_toml_error_everywhere(text, tmp_path):
    """tomllib parses nesting by recursion: a deep file crashed --check, qar scan and the
    config lookup with "unexpected RecursionError" (exit 3)."""
    path = tmp_path / "qar.toml"
    path.write_text(text)
    for args in (["config", "--check", str(path)], ["scan", str(path)], ["--config", str(path), "config"]):
        r = CliRunner().invoke(cli, args)
        assert r.exit_code == 2 and "nested" in r.output and "RecursionError" not in r.output, (args, r.output)


def test_pyproject_tool_qar_has_a_schema_and_a_check(tmp_path):
    """[tool.qar] had no schema and --check read a pyproject.toml as a qar.toml (every other
    [tool.*] table an unknown key)."""
    jsonschema = pytest.importorskip("jsonschema")
    path = tmp_path / "pyproject.toml"
    path.write_text('[project]\nname = "x"\n[tool.ruff]\nline-length = 1\n[tool.qar]\np = 2\nexclude = ["id"]\n')
    r = CliRunner().invoke(cli, ["config", "--check", str(path)])
    assert r.exit_code == 0 and "valid" in r.output, r.output
    path.write_text('[tool.qar]\np = 0\npp = 3\nstore = "x.duckdb"\n')
    r = CliRunner().invoke(cli, ["config", "--check", str(path)])
    assert r.exit_code == 2
    assert r.output.strip() == (
        "Error: pyproject.toml has 2 errors:\n"
        "  [tool.qar] has an unknown key 'pp'; did you mean 'p'?\n"
        "  [tool.qar]: p = 0 is not a valid QI size; use a whole number of columns, at least 1."
    )
    data = tomllib.loads(path.read_text())["tool"]["qar"]
    assert len(list(jsonschema.Draft7Validator(toml_schema.tool_schema()).iter_errors(data))) == 2
    path.write_text("[tool.qar]\nwarn_above = 0.9\nfail_above = 0.5\n")
    r = CliRunner().invoke(cli, ["config", "--check", str(path)])
    assert r.exit_code == 2 and "warn_above" in r.output, r.output
    path.write_text("[tool.black]\nx = 1\n")
    r = CliRunner().invoke(cli, ["config", "--check", str(path)])
    assert r.exit_code == 2 and "no [tool.qar] table" in r.output, r.output


def _not_regular(tmp_path):
    """A named pipe under tmp_path (opening it waits for a writer) and /dev/zero, which is
    only stat-ed and, before the fix, read (never written)."""
    fifo = tmp_path / "pipe.toml"
    os.mkfifo(fifo)
    return [str(fifo)] + (["/dev/zero"] if os.path.exists("/dev/zero") else [])


def test_a_device_or_pipe_is_refused_not_read_forever(tmp_path):
    """`qar config --check /dev/zero` read forever, a pipe waited for a writer."""
    for path in _not_regular(tmp_path):
        for args, what in (
            (["config", "--check", path], "--check"),
            (["scan", path], "scan config"),
            (["--config", path, "config"], "config file"),
        ):
            r = subprocess.run(
                [sys.executable, "-c", "from qar_sql.cli.main import main; main()", *args],
                capture_output=True,
                text=True,
                timeout=300,  # "forever" is caught all the same; a cold start took 16 s at load 22
                cwd=tmp_path,
            )
            assert r.returncode == 2, (args, r.stderr)
            assert r.stderr.strip() == (
                f"Error: {what} {path!r} is not a regular file (a device, pipe or socket); give the path of a file"
            )
        with pytest.raises(UsageError, match="not a regular file"):
            treatments.load(path)


def test_a_huge_file_is_refused_by_its_size(tmp_path):
    path = tmp_path / "qar.toml"
    with path.open("wb") as f:
        f.truncate(user_files.MAX_BYTES + 1)  # sparse: no disk used
    r = CliRunner().invoke(cli, ["config", "--check", str(path)])
    assert r.exit_code == 2
    assert r.output.strip() == (
        f"Error: --check {str(path)!r} is larger than 10 MB, more than such a file holds; give the path of the right file"
    )


#: One error each, schema or rule, in parts of a file that do not touch one another.
SEVERAL = {
    "unknown default": "[defaults]\npp = 3\n",
    "store password": '[store]\nurl = "postgresql://u:hunter2@db/x"\n',
    "unset variable": '[sources.a]\nurl = "${QAR_TEST_UNSET_H6}"\n',
    "source password": '[sources.b]\nurl = "postgresql://u:pw@db/x"\n',
    "alpha over pi_u": '[[scan]]\nsource = "a"\ntable = "t"\nalpha = 0.3\npi_u = 0.2\n',
    "bad pwm and warn above fail": '[[scan]]\nsource = "b"\ntable = "u"\npwm = "median"\nwarn_above = 0.9\nfail_above = 0.5\n',
    "undefined source": '[[scan]]\nsource = "c"\ntable = "v"\n',
}


def test_check_lists_every_schema_and_rule_error(tmp_path, monkeypatch):
    """--check stopped at qar scan's first error (and listed none of them after a schema error):
    it lists each, once, with the sentence a file holding only that error gets."""
    monkeypatch.delenv("QAR_TEST_UNSET_H6", raising=False)
    sources = {"a": '[sources.a]\nurl = "a.duckdb"\n', "b": '[sources.b]\nurl = "b.duckdb"\n'}
    scan = '[[scan]]\nsource = "a"\ntable = "ok"\n'
    expected = []
    for name, part in SEVERAL.items():
        alone = tmp_path / name / "qar.toml"
        alone.parent.mkdir()
        others = "".join(text for name, text in sources.items() if f"[sources.{name}]" not in part)
        alone.write_text(part + others + (scan if "[[scan]]" not in part else ""))
        r = CliRunner().invoke(cli, ["config", "--check", str(alone)])
        assert r.exit_code == 2, (name, r.output)
        lines = r.output.strip().splitlines()
        expected += [line.strip() for line in lines[1:]] or [lines[0].removeprefix("Error: qar.toml: ")]
    assert len(expected) == len(SEVERAL) + 1  # the second scan has two
    path = tmp_path / "qar.toml"
    path.write_text("".join(SEVERAL.values()))
    r = CliRunner().invoke(cli, ["config", "--check", str(path)])
    assert r.exit_code == 2
    lines = r.output.strip().splitlines()
    assert lines[0] == f"Error: qar.toml has {len(expected)} errors:"

    def numberless(found):  # a scan's number in the whole file is not its number alone
        return sorted(re.sub(r"number \d+", "number N", line.strip()) for line in found)

    assert numberless(lines[1:]) == numberless(expected)
    for key in ("'pp'", "store.url", "sources.a.url", "sources.b.url", "alpha =", "pwm =", "warn_above =", "'c'"):
        assert sum(key in line for line in lines) == 1, key


def test_check_lists_every_error_of_the_defaults(tmp_path):
    path = tmp_path / "pyproject.toml"
    path.write_text('[tool.qar]\np = 0\nalpha = 0.5\npi_u = 0.2\nwarn_above = 0.9\nfail_above = 0.5\nstore = "x"\n')
    r = CliRunner().invoke(cli, ["config", "--check", str(path)])
    assert r.exit_code == 2
    assert r.output.strip().splitlines()[1:] == [
        "  [tool.qar]: p = 0 is not a valid QI size; use a whole number of columns, at least 1.",
        "  [tool.qar]: alpha = 0.5 must be smaller than pi_u = 0.2; lower alpha below 0.2 (e.g. 0.04) "
        "or raise pi_u above 0.5 (e.g. 0.75).",
        "  [tool.qar]: warn_above = 0.9 is above fail_above = 0.5; a warning must come before the failure, "
        "so make warn_above the smaller",
    ]


def test_a_refused_table_is_not_reported_again_by_what_depends_on_it(tmp_path):
    """A source the schema refused is not then 'not defined' for its scans, nor 'needs a url'."""
    path = tmp_path / "qar.toml"
    path.write_text(
        '[sources]\na = 3\n[sources.b]\nurl = 5\n[[scan]]\nsource = "a"\ntable = "t"\n'
        '[[scan]]\nsource = "b"\ntable = "u"\n[[scan]]\nsource = "c"\ntable = "v"\n'
    )
    r = CliRunner().invoke(cli, ["config", "--check", str(path)])
    assert r.exit_code == 2
    assert r.output.strip().splitlines() == [
        "Error: qar.toml has 3 errors:",
        '  [sources.a] needs a url, e.g. url = "${QAR_WAREHOUSE_URL}"',
        '  [sources.b] needs a url, e.g. url = "${QAR_WAREHOUSE_URL}"',
        "  scan number 3 uses source 'c', which is not defined; allowed: a, b",
    ]


def test_a_file_with_a_byte_order_mark_is_read(tmp_path):
    """Windows editors start UTF-8 files with a byte-order mark, which tomllib refuses ("Invalid
    statement (at line 1, column 1)"): qar.toml, `qar config --check` and a treatments file are
    read without it, as the same file without the mark."""
    plain = (REPO / "examples" / "qar.toml").read_text(encoding="utf-8")
    marked = tmp_path / "qar.toml"
    marked.write_bytes(b"\xef\xbb\xbf" + plain.encode("utf-8"))
    r = CliRunner().invoke(cli, ["config", "--check", str(marked)])
    assert "Invalid statement" not in r.output and "line 1, column 1" not in r.output, r.output
    assert user_files.read_text(marked, "scan config") == plain
    trt = tmp_path / "t.toml"
    trt.write_bytes(b"\xef\xbb\xbf" + (REPO / "examples" / "treatments.toml").read_bytes())
    import dataclasses

    same = treatments.load(str(REPO / "examples" / "treatments.toml"))
    assert treatments.load(str(trt)) == dataclasses.replace(same, path=str(trt))


def test_check_lists_every_error_of_the_qar_toml_in_the_working_directory(tmp_path, monkeypatch):
    """The qar group read the qar.toml it found first and stopped at its first error, so --check
    of that file (or of any other) never ran there; qar config without --check still says it."""
    monkeypatch.delenv("QAR_CONFIG", raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "qar.toml").write_text("[defaults]\np = 0\nbogus = 2\n")
    r = CliRunner().invoke(cli, ["config", "--check", "qar.toml"])
    assert r.exit_code == 2 and r.output.startswith("Error: qar.toml has 2 errors:"), r.output
    good = tmp_path / "other" / "qar.toml"
    good.parent.mkdir()
    good.write_text("[defaults]\np = 2\n")
    r = CliRunner().invoke(cli, ["config", "--check", str(good)])
    assert r.exit_code == 0 and "valid defaults" in r.output, r.output
    for argv in (["config"], ["config", "-f", "json"], ["audit", str(good)]):
        r = CliRunner().invoke(cli, argv)
        assert r.exit_code == 2 and r.output.count("Error: ") == 1, r.output
        assert "[defaults] has an unknown key 'bogus'" in r.output


def test_a_bad_default_is_said_once_where_it_is_written(tmp_path):
    """Each scan took the bad [defaults] value and said it again ("scan 'a': p = 0 ...", "scan
    'b': p = 0 ..."): [defaults] is checked once, as a table, as the commands read it."""
    path = tmp_path / "qar.toml"
    path.write_text('[defaults]\np = 0\n[sources.s]\nurl = "s.duckdb"\n[[scan]]\ntable = "a"\n[[scan]]\ntable = "b"\n')
    said = "qar.toml: [defaults]: p = 0 is not a valid QI size; use a whole number of columns, at least 1."
    for argv in (["config", "--check", str(path)], ["scan", str(path), "--no-store"]):
        r = CliRunner().invoke(cli, argv)
        assert r.exit_code == 2 and r.output.strip() == f"Error: {said}", r.output


@pytest.mark.parametrize(
    "text, said",
    [
        ('[sources.a]\nurl = "a.duckdb"\n[[scan]]\nsource = []\ntable = "t"\n', "source = [] must be one name"),
        ('[store]\n[sources.a]\nurl = "a.duckdb"\n[[scan]]\ntable = "t"\n', "[store] needs a url"),
    ],
)
def test_qar_scan_refuses_what_the_schema_refused(tmp_path, text, said):
    """With --check now the loader's, a fuzz of the schema against it found two files the schema
    refused and qar scan did not: source = [] (unexpected TypeError, exit 3) and an empty [store]
    (recorded nothing, silently)."""
    path = tmp_path / "qar.toml"
    path.write_text(text)
    r = CliRunner().invoke(cli, ["scan", str(path)])
    assert r.exit_code == 2 and said in r.output, r.output
