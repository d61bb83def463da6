"""Every file and URL a user gives is parsed by qar_sql.user_files (TOML, JSON, YAML, CSV, text)
or qar_sql.engines.database.check_url: whatever it holds, the command ends with a documented
exit code and, on a usage error, one sentence on stderr naming the file, never a parser's
exception ("unexpected ...", exit 3, or a traceback).

The inputs come from the code: every command of ``qar --help`` (a new one fails
:func:`test_every_command_has_an_invocation` until it has one here), every option whose value
is a path in click's tree (writers too: a corrupt file where an output goes is only
overwritten), and the options that take a file, folder or URL as text. Each reader gets a
deterministic corpus made from a valid file of its kind: truncations, byte flips (seed 39),
empty, a folder, missing, unreadable, binary junk, latin-1, UTF-16 with its BOM, 100,000
levels of nesting, huge numbers, a wrong type at every key, a duplicate key, a symlink loop.
The same corpus reaches the pre-commit hook, the Action's helper and the Python API.
"""

from __future__ import annotations

import contextlib
import datetime
import gzip
import json
import os
import random
import re
import shutil
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import click
import duckdb
import pytest
import yaml
from click.testing import CliRunner

import qar_sql
from qar_sql import user_files
from qar_sql.cli import action, hook
from qar_sql.cli.main import cli
from qar_sql.errors import QarError
from qar_sql.toml_text import toml_value

FIXTURES = Path(__file__).parent / "fixtures"
ROOT = os.geteuid() == 0
CSV = "age,sex,zip\n" + "".join(f"{20 + i % 9},{'FM'[i % 2]},{i % 13}\n" for i in range(60))

#: A valid file of each kind a reader takes (``{csv}``: the table's path).
VALID = {
    "scan": '[defaults]\np = 1\npi_u = 0.5\n\n[sources.a]\nurl = "../a.csv"\n\n[[scan]]\nname = "x"\nsource = "a"\n',
    "config": "[defaults]\np = 1\npi_u = 0.5\nk = 2\n",
    "treatments": (
        'qid = "q"\nrelease = ["b"]\n\n[qis]\nq = ["age", "sex", "zip"]\n\n'
        '[treatments.b]\ncolumn = "age"\nkind = "bands"\nwidth = 10\n'
    ),
    "hierarchy_toml": "[hierarchies.age]\nwidths = [5, 10]\norigin = 0\n",
    "hierarchy_csv": "M;*\nF;*\n",
    "pyproject": '[project]\nname = "x"\n\n[tool.qar]\np = 1\npi_u = 0.5\nstore = "s.duckdb"\n',
    "secret": "s3cret-value\n",
    "csv": CSV,
    "project": (FIXTURES / "dbt_project" / "dbt_project.yml").read_text(),
    "profiles": (FIXTURES / "dbt_project" / "profiles.yml").read_text(),
}
SYNTAX = {"scan": "toml", "config": "toml", "treatments": "toml", "hierarchy_toml": "toml", "project": "yaml"}
SYNTAX |= {"pyproject": "toml"}
SYNTAX |= {"profiles": "yaml", "manifest": "json", "action_json": "json", "hierarchy_csv": "text"}
SYNTAX |= {"secret": "text", "csv": "text"}


def _manifest() -> str:
    """The fixture's dbt manifest, cut to what qar reads (its one tagged model), so that a wrong
    type at every key stays a small corpus."""
    full = json.loads(gzip.decompress((FIXTURES / "dbt_manifest.json.gz").read_bytes()))
    node = "model.qar_fixture.people"
    return json.dumps({"metadata": full["metadata"], "nodes": {node: full["nodes"][node]}, "sources": {}})


VALID["manifest"] = _manifest()
VALID["action_json"] = json.dumps({"scans": [{"name": "x", "status": "ok", "risk": 0.5}], "store": None})


# --------------------------------------------------------------------------------------------
# The corpus
# --------------------------------------------------------------------------------------------


def _toml(v: object) -> str:
    """``v`` as a TOML value, dates and times too (what a TOML file can hold beyond JSON's)."""
    if isinstance(v, datetime.date | datetime.time):
        return v.isoformat()
    if isinstance(v, list):
        return "[" + ", ".join(map(_toml, v)) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{json.dumps(str(k))} = {_toml(x)}" for k, x in v.items()) + " }"
    return toml_value(v)


def _dump(syntax: str, doc: object) -> str:
    if syntax == "json":
        return json.dumps(doc, default=str)  # (a date or time: its text)
    if syntax == "yaml":  # (YAML has dates, not times of day: a time is its text)
        return yaml.safe_dump(json.loads(json.dumps(doc, default=str)) if "time" in repr(doc) else doc)
    assert isinstance(doc, dict)
    return "".join(f"{json.dumps(k)} = {_toml(v)}\n" for k, v in doc.items())


def _load(syntax: str, text: str) -> object:
    if syntax == "json":
        return json.loads(text)
    if syntax == "yaml":
        return yaml.safe_load(text)
    return user_files.parse_toml(text, "valid")


def _key_paths(doc: object, prefix: tuple = ()) -> Iterator[tuple]:
    items = doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(doc, list) else ()
    for k, v in items:
        yield (*prefix, k)
        yield from _key_paths(v, (*prefix, k))


def _replaced(doc: object, path: tuple, value: object) -> object:
    doc = json.loads(json.dumps(doc, default=str))
    node = doc
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value
    return doc


#: The inputs no parser reads as the file's kind: the sentence must name the file. (Another may
#: parse and fail on what it says, naming a key, a column, a table.)
UNREAD = ("folder", "missing", "symlink-loop", "binary", "utf16", "utf16-no-bom", "deep", "unreadable", "latin1", "nul")

#: What a wrong type at a key becomes (each key gets the next, in turn): TOML's and YAML's dates
#: and times too, which messages showed as datetime.date(1979, 5, 27).
WRONG = ([], {}, "x", -1, 1.5, True, 10**400, [[{"a": "b"}]], datetime.date(1979, 5, 27), datetime.time(7, 32))
WRONG += (datetime.datetime(1979, 5, 27, 7, 32), -0.0, [10**400])


def corpus(kind: str, *, rich: bool = True) -> list[tuple[str, Callable[[Path], None]]]:
    """``(name, make)`` pairs; ``make(path)`` puts one bad input at ``path`` (a file, a folder, a
    symlink loop or nothing). ``rich``: the whole corpus, else its generic part (for writers and
    the many SOURCE arguments)."""
    valid = VALID[kind].encode()
    syntax = SYNTAX[kind]

    def data(b: bytes) -> Callable[[Path], None]:
        return lambda p: p.write_bytes(b)

    def folder(p: Path) -> None:
        p.mkdir()

    def loop(p: Path) -> None:
        p.symlink_to(p.with_name(p.name + ".other"))
        p.with_name(p.name + ".other").symlink_to(p)

    def unreadable(p: Path) -> None:
        p.write_bytes(valid)
        p.chmod(0)

    deep = {"toml": b"x = " + b"[" * 100_000 + b"]" * 100_000, "json": b"[" * 100_000 + b"]" * 100_000}
    deep["yaml"] = b"a: " + deep["json"]
    # (a CSV: one field of 200 KB, over the csv module's limit; not 100,000 columns, which is
    # a wide table's cost, not a parser's)
    deep["text"] = b'"' + b"x" * 200_000 + b'"\n1\n2\n'

    items: list[tuple[str, Callable[[Path], None]]] = [
        ("empty", data(b"")),
        ("folder", folder),
        ("missing", lambda p: None),
        ("symlink-loop", loop),
        ("binary", data(bytes(range(256)) * 8)),
        ("utf16", data(valid.decode().encode("utf-16"))),
        ("utf16-no-bom", data(valid.decode().encode("utf-16-le"))),
        ("deep", data(deep[syntax])),
    ]
    if not ROOT:  # (root reads a file of mode 000 anyway)
        items.append(("unreadable", unreadable))
    if not rich:
        return items
    items += [
        ("latin1", data(valid + "\n# é\n".encode("latin-1"))),
        ("nul", data(valid[: len(valid) // 2] + b"\x00" + valid[len(valid) // 2 :])),
        ("huge-numbers", data(re.sub(rb"\d+(\.\d+)?", b"9" * 400, valid))),
        ("exponents", data(re.sub(rb"\b\d+(\.\d+)?\b", b"1e999", valid))),
        ("long-number", data(re.sub(rb"\d+", b"9" * 5000, valid, count=1))),
        ("duplicate-key", data(valid + b"\n" + valid.splitlines(keepends=True)[-1])),
    ]
    rng = random.Random(39)
    for offset in sorted({1, 2, len(valid) // 3, len(valid) // 2, 2 * len(valid) // 3, len(valid) - 2}):
        items.append((f"cut-{offset}", data(valid[:offset])))
    for i in range(6):
        at = rng.randrange(len(valid))
        flipped = bytearray(valid)
        flipped[at] ^= 1 << rng.randrange(8)
        items.append((f"flip-{i}-at-{at}", data(bytes(flipped))))
    if syntax != "text":
        doc = _load(syntax, valid.decode())
        paths = list(_key_paths(doc))
        # (the manifest's keys: the first 40 of a walk, and every key under a meta, which qar reads)
        paths = paths[:40] + [p for p in paths[40:] if "meta" in p[:-1]]
        for i, path in enumerate(paths):
            text = _dump(syntax, _replaced(doc, path, WRONG[i % len(WRONG)]))
            items.append((f"wrong-type-{'.'.join(map(str, path))[:40]}", data(text.encode())))
            # at every key too: a date (TOML, YAML) and a number of 400 digits (JSON, YAML: TOML
            # refuses it as it parses), which messages showed as their Python repr
            # and a list of one name, a table where a name is wanted (column = ["age"]), which
            # a check of "a non-empty text" read as the key missing
            items.append(
                (
                    f"wrong-type-{'.'.join(map(str, path))[:40]}-list",
                    data(_dump(syntax, _replaced(doc, path, ["age"])).encode()),
                )
            )
            for name, value in (("date", datetime.date(1979, 5, 27)), ("huge", 10**400)):
                if (name == "date") == (syntax == "json") or (name == "huge" and syntax == "toml"):
                    continue
                text = _dump(syntax, _replaced(doc, path, value))
                items.append((f"{name}-at-{'.'.join(map(str, path))[:40]}", data(text.encode())))
    return items


# --------------------------------------------------------------------------------------------
# The commands, their options, and what each reader gets
# --------------------------------------------------------------------------------------------

#: One quick invocation of each command ({csv}: a small table; {dir}: a scratch folder).
BASE = {
    "anonymize": ["{csv}", "--k", "2", "--qid", "age", "--hierarchy", "age={dir}/h.toml", "-q"],
    "audit": ["{csv}", "-p", "1", "--pi-u", "0.5", "-q"],
    "compare": ["{csv}", "{csv}", "-p", "1", "--pi-u", "0.5", "--aligned", "--no-risk", "-q"],
    "config": [],
    "demo": ["--path", "{dir}/demo.duckdb", "-q"],
    "discover": ["{csv}", "-q"],
    "eliminate": ["{csv}", "-p", "1", "--pi-u", "0.5", "--max", "2", "--step", "1", "-q"],
    "history": ["--store", "{dir}/store.duckdb"],
    "migrate": ["--store", "{dir}/store.duckdb", "--status"],
    "records": ["{csv}", "-p", "1", "--pi-u", "0.5", "-q"],
    "report": ["{csv}", "-p", "1", "--pi-u", "0.5", "-q", "-o", "{dir}/r.html"],
    "risk": ["{csv}", "-q"],
    "scan": ["{dir}/qar.toml", "--no-store"],
    "sql": ["{csv}", "-c", "age,sex,zip"],
    "uniqueness": ["{csv}", "-p", "1", "-g", "2", "-q"],
    "whatif": ["{csv}", "-T", "{dir}/t.toml", "-q"],
}

#: The readers of a file's content, beside the path options: (command, option) → (kind, how
#: the option is given: {f} the bad input, and any other options it needs).
READERS: dict[tuple[str, str], tuple[str, list[str]]] = {
    ("", "--config"): ("config", ["--config", "{f}", "config"]),
    ("scan", "config"): ("scan", ["scan", "{f}", "--no-store"]),
    ("config", "--check"): ("scan", ["config", "--check", "{f}"]),
    ("whatif", "--treatments"): ("treatments", ["whatif", "{csv}", "-T", "{f}", "-q"]),
    ("compare", "--treatments"): (
        "treatments",
        ["compare", "{csv}", "-T", "{f}", "-q", "--no-risk", "--categorical", "age"],
    ),
    ("uniqueness", "--treatments"): ("treatments", ["uniqueness", "{csv}", "-T", "{f}", "-g", "2", "-q"]),
    ("report", "--treatments"): (
        "treatments",
        ["report", "{csv}", "-T", "{f}", "-p", "1", "--pi-u", "0.5", "-q", "-o", "{dir}/r.html"],
    ),
    ("anonymize", "--hierarchy"): (
        "hierarchy_toml",
        ["anonymize", "{csv}", "--k", "2", "--hierarchy", "age={f}", "-q"],
    ),
    ("report", "--hierarchy"): (
        "hierarchy_csv",
        [
            "report",
            "{csv}",
            "--anonymize",
            "--k",
            "2",
            "--hierarchy",
            "sex={f}",
            "-p",
            "1",
            "--pi-u",
            "0.5",
            "-q",
            "-o",
            "{dir}/r.html",
        ],
    ),
    ("records", "--hash-secret-file"): (
        "secret",
        [
            "records",
            "{csv}",
            "--key",
            "zip,age,sex",
            "--store",
            "{dir}/s.duckdb",
            "--hash-keys",
            "--hash-secret-file",
            "{f}",
            "-p",
            "1",
            "--pi-u",
            "0.5",
            "-q",
        ],
    ),
    ("report", "--hash-secret-file"): (
        "secret",
        [
            "report",
            "{csv}",
            "--key",
            "zip,age,sex",
            "--hash-secret-file",
            "{f}",
            "-p",
            "1",
            "--pi-u",
            "0.5",
            "-q",
            "-o",
            "{dir}/r.html",
        ],
    ),
    ("scan", "--dbt-manifest"): (
        "manifest",
        ["scan", "--dbt-manifest", "{f}", "--url", "{dir}/w.duckdb", "--no-store"],
    ),
    ("report", "--compare"): (
        "csv",
        ["report", "{csv}", "--compare", "{f}", "--aligned", "-p", "1", "--pi-u", "0.5", "-q", "-o", "{dir}/r.html"],
    ),
    ("audit", "source"): ("csv", ["audit", "{f}", "-p", "1", "--pi-u", "0.5", "-q"]),
    # ({f}: a copy of the fixture's dbt project whose file of that kind is the bad input)
    ("scan", "--dbt-project"): ("project", ["scan", "--dbt-project", "{f}", "--profiles-dir", "{f}", "--no-store"]),
    ("scan", "--profiles-dir"): ("profiles", ["scan", "--dbt-project", "{f}", "--profiles-dir", "{f}", "--no-store"]),
}
#: The fixture's dbt model, as a table of the warehouse the dbt runs audit.
WAREHOUSE = (
    "create table people as select i as person_id, 20 + i % 9 as age, ['F', 'M'][i % 2 + 1] as sex, "
    "i % 13 as \"zip code\", ['a', 'b', 'c'][i % 3 + 1] as job from range(60) t(i)"
)
#: The readers of a file inside a folder the option names: the file's name.
IN_FOLDER = {"project": "dbt_project.yml", "profiles": "profiles.yml"}
#: The other options that take a file, folder or URL as text (not click.Path): checked below to
#: exist, each given the generic corpus (a SOURCE of every command, a store, a dbt folder).
TEXT_PATHS = {"source", "original", "treated", "config", "--store", "--url", "--dbt-project", "--profiles-dir"}
TEXT_PATHS |= {"--compare", "--hierarchy", "--check", "--hash-secret-file", "--dbt-manifest", "--hierarchies"}


def _commands() -> dict[str, click.Command]:
    return {name: cli.get_command(click.Context(cli), name) for name in cli.list_commands(click.Context(cli))}


#: What an output option (a click.Path no reader takes) is given: each fails before any work.
WRITER_CASES = ("folder", "symlink-loop")


def _long(p: click.Parameter) -> str:
    """An option's long flag, an argument's name."""
    if isinstance(p, click.Option):
        return next((o for o in p.opts if o.startswith("--")), p.opts[0])
    return p.name or ""


def file_params() -> list[tuple[str, click.Parameter]]:
    """(command, parameter) for every parameter in click's tree that takes a path: a click.Path,
    or a text option or argument named in TEXT_PATHS (``""``: the qar group's own)."""
    out = [("", p) for p in cli.params if isinstance(p.type, click.Path) or _long(p) in TEXT_PATHS]
    for name, cmd in _commands().items():
        out += [(name, p) for p in cmd.params if isinstance(p.type, click.Path) or _long(p) in TEXT_PATHS]
    return out


def test_every_command_has_an_invocation():
    assert len(_commands()) >= 16
    assert set(_commands()) == set(BASE), "add the new command's quick invocation to BASE"


def test_the_derived_inputs_are_all_there():
    """The lists below come from click's tree; they must not shrink (today: 49 parameters, 26 of
    them click paths), and every reader named here is a parameter of the tree."""
    params = file_params()
    assert len(params) >= 49, len(params)
    assert sum(isinstance(p.type, click.Path) for _, p in params) >= 26
    names = {(c, _long(p)) for c, p in params}
    assert set(READERS) <= names, set(READERS) - names


# --------------------------------------------------------------------------------------------
# The property
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def place(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("parsed")
    (d / "a.csv").write_text(CSV)
    (d / "qar.toml").write_text(VALID["scan"].replace("../a.csv", "a.csv"))
    (d / "t.toml").write_text(VALID["treatments"])
    (d / "h.toml").write_text(VALID["hierarchy_toml"])
    r = CliRunner().invoke(
        cli, ["audit", str(d / "a.csv"), "-p", "1", "--pi-u", "0.5", "-q", "--store", str(d / "store.duckdb")]
    )
    assert r.exit_code == 0, r.output  # (qar history's store)
    with duckdb.connect(str(d / "w.duckdb")) as con:  # (the dbt runs' warehouse: the fixture's model)
        con.execute(WAREHOUSE)
    return d


def _fill(args: list[str], place: Path, f: Path | None = None) -> list[str]:
    out = [a.replace("{csv}", str(place / "a.csv")).replace("{dir}", str(place)) for a in args]
    return [a.replace("{f}", str(f)) for a in out]


def check(r, codes: set[int] = frozenset({0, 1, 2}), names: tuple[str, ...] = ()) -> None:
    """The rule: a documented exit code, no parser's exception; a usage error is one sentence
    (``Error: …``, then only indented lines: a list of every error qar scan's loader finds in a file)
    naming one of ``names`` (the file, or its folder)."""
    shown = f"exit {r.exit_code}: {r.output!r}"
    assert r.exit_code in codes, shown
    assert r.exception is None or isinstance(r.exception, SystemExit), (shown, r.exc_info)
    assert "Traceback" not in r.output and "Error: unexpected" not in r.output, shown
    # (a value as the file wrote it: no Python repr of a parser's type, no number of 400 digits)
    assert not re.search(r"datetime\.\w+\(|np\.\w+\(|Decimal\(|\d{40}", r.output), shown
    # (a value of another type is no number out of range: pi_u = true, [] or {} "is outside (0, 1)")
    assert not re.search(r"= (True|False|\[[^\]]*\]|\{[^}]*\}) is outside", r.output), shown
    if r.exit_code == 2 and "\nErrors:\n" not in r.output:  # (qar scan's summary lists its scans' errors)
        lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
        errors = [i for i, ln in enumerate(lines) if ln.startswith("Error: ")]
        assert len(errors) == 1 and all(ln.startswith(" ") for ln in lines[errors[0] + 1 :]), shown
        if names:
            assert any(n in lines[errors[0]] for n in names), shown


#: Commands whose readers get the generic corpus only: a file that parses lets the whole
#: command run (seconds each); the same parsers get the whole corpus through other commands.
RUNS_ON = ("report", "audit")

READER_CASES = [
    pytest.param(key, name, make, id=f"{key[0] or 'qar'}{key[1]}-{name}")
    for key, (kind, _) in READERS.items()
    for name, make in corpus(kind, rich=key[0] not in RUNS_ON)
]


@pytest.mark.parametrize("key", list(READERS), ids=[f"{c or 'qar'}{o}" for c, o in READERS])
def test_each_reader_runs_on_its_valid_file(place, key):
    """The corpus is made from a valid file: each reader's invocation must run on it (exit 0 or 1).
    A refusal before the file is read (an option that would be ignored, a source not defined)
    would make every bad input of its corpus test that refusal alone."""
    kind, args = READERS[key]
    folder = place / f"valid{key[0] or 'qar'}{key[1]}"  # (beside cases/: a scan's ../a.csv is the table)
    folder.mkdir()
    if kind in IN_FOLDER:
        shutil.copytree(FIXTURES / "dbt_project", folder, dirs_exist_ok=True)
        (folder / "target").mkdir()
        (folder / "target" / "manifest.json").write_text(VALID["manifest"])
        shutil.copy(place / "w.duckdb", folder / "warehouse.duckdb")
        f = folder
    else:
        f = (
            folder
            / f"valid{'.csv' if kind in ('csv', 'hierarchy_csv') else '.json' if kind == 'manifest' else '.toml'}"
        )
        f.write_text(VALID[kind])
    r = CliRunner().invoke(cli, _fill(args, place, f))
    assert r.exit_code in (0, 1), r.output


@pytest.mark.parametrize("name", list(BASE))
def test_each_quick_invocation_runs(place, name):
    """Each command's quick invocation runs (exit 0 or 1): its path options' corpus is given on top."""
    r = CliRunner().invoke(cli, [name, *_fill(BASE[name], place)])
    assert r.exit_code in (0, 1), r.output


@pytest.mark.parametrize("key, case, make", READER_CASES)
def test_a_bad_file_is_one_sentence_naming_it(place, key, case, make):
    kind, args = READERS[key]
    f = (
        place
        / "cases"
        / f"{key[0] or 'qar'}{key[1]}-{case}{'.csv' if kind in ('csv', 'hierarchy_csv') else '.json' if kind == 'manifest' else '.toml'}"
    )
    f.parent.mkdir(exist_ok=True)
    if kind in IN_FOLDER:  # (the project's folder, its file of this kind the bad input)
        folder, f = f.with_suffix(""), f.with_suffix("") / IN_FOLDER[kind]
        if not folder.exists():
            shutil.copytree(FIXTURES / "dbt_project", folder)
            (folder / "target").mkdir()
            (folder / "target" / "manifest.json").write_text(VALID["manifest"])
            shutil.copy(place / "w.duckdb", folder / "warehouse.duckdb")
            f.unlink()
    if not f.exists() and not f.is_symlink():
        make(f)
    try:
        r = CliRunner().invoke(cli, _fill(args, place, f.parent if kind in IN_FOLDER else f))
    finally:
        with contextlib.suppress(OSError):
            f.chmod(0o644)
    named = case in UNREAD and kind != "csv"  # (DuckDB names a CSV it cannot read, or the table)
    check(r, names=(f.name,) if named else ())
    if case.startswith("wrong-type-"):
        # a key given a value of the wrong type is there: "column is missing" sent the user
        # looking for a key they had written (treatments.x.column = ["age"])
        key = case.removeprefix("wrong-type-").removesuffix("-list").split(".")[-1]
        assert not re.search(rf"\b{re.escape(key)} is missing[;,]", r.output), (case, r.output)
    if case.startswith("utf16") and r.exit_code == 2:  # (the cause named: not ragged lines, a wrong delimiter)
        assert "UTF-16" in r.stderr, r.stderr


def test_every_path_option_takes_the_generic_corpus(place):
    """Each click.Path option (an input or an output) and each text option naming a file, folder
    or URL, on its command's quick invocation, given each generic bad input."""
    runs = 0
    for command, p in file_params():
        if not command or command not in BASE:
            continue
        opt = next((o for o in p.opts if o.startswith("-")), None)
        reads = (command, _long(p)) in READERS or _long(p) in TEXT_PATHS
        for case, make in corpus("csv", rich=False):
            if not reads and case not in WRITER_CASES:
                continue
            f = place / "generic" / f"{command}{opt or p.name}-{case}"
            f.parent.mkdir(exist_ok=True)
            if not f.exists() and not f.is_symlink():
                make(f)
            args = _fill(BASE[command], place)
            if opt is None:  # an argument: the first one (SOURCE, CONFIG, ORIGINAL) or TREATED
                at = 1 if p.name == "treated" else 0
                args = [*args[:at], str(f), *args[at + 1 :]] if args else [str(f)]
            else:
                args = [*args, opt, str(f)]
            r = CliRunner().invoke(cli, [command, *args])
            with contextlib.suppress(OSError):
                f.chmod(0o644)
            check(r)
            if not reads:  # an output that cannot be written is refused before the work: nothing on stdout
                assert r.exit_code != 2 or not r.stdout, (command, opt, case, r.output)
            runs += 1
    assert runs >= 250, runs


def test_no_output_option_makes_a_file_or_folder_named_dash(place, tmp_path, monkeypatch):
    """ "-" is stdout everywhere: an output option given "-" writes there or is refused, never a
    file or folder named "-" (qar scan --report-dir - made a folder '-' of pages, exit 1, where
    --junit - and --markdown - were refused). Every output option of click's tree, as typed."""
    monkeypatch.chdir(tmp_path)
    runs = 0
    for command, p in file_params():
        if not command or command not in BASE or p.name in ("config",) or isinstance(p, click.Argument):
            continue
        opt = next((o for o in p.opts if o.startswith("--")), None)
        reads = (command, _long(p)) in READERS or _long(p) in TEXT_PATHS
        if opt is None or reads:
            continue
        r = CliRunner().invoke(cli, [command, *_fill(BASE[command], place), opt, "-"])
        assert not os.path.lexists(tmp_path / "-"), (command, opt, r.output)
        assert r.exit_code != 3, (command, opt, r.output)
        runs += 1
    assert runs >= 10, runs


URLS = [
    "postgresql://u@127.0.0.1:54x32/db",
    "postgresql://u:Qx7@Wv5:Kp3@127.0.0.1/db",
    "postgresql://u@127.0.0.1:99999999/db",
    "postgresql://u@127.0.0.1:0/db",
    "postgresql://u@\u202eh/db",
    "postgresql://u@a..b/db",
    "postgresql://u@127.0.0.1:1/db?port=x",
    "postgresql+nodriver://u@127.0.0.1/db",
    "nosuchdialect://x",
    "://",
    "postgresql://[::1/db",
    "sqlite:///no/such/file.db",
    "duckdb:///no/such/file.duckdb",
    "duckdb:///s.duckdb?access_mode=READ_WRITE",
    # query options the driver refuses before it connects (no server needed): exit 2 too
    "postgresql+psycopg://u@127.0.0.1:1/db?sslmode=bogus",
    "postgresql+psycopg://u@127.0.0.1:1/db?no_such_option=1",
    "postgresql+psycopg://u@127.0.0.1:1/db?connect_timeout=abc",
]


@pytest.mark.parametrize("url", URLS, ids=range(len(URLS)))
def test_a_bad_url_is_one_sentence(place, url, tmp_path, monkeypatch):
    """As a SOURCE (also of qar sql, which only renders), a --store and a scan's --url. Each is
    bad input, exit 2 (the test allowed 0-3, and a query option libpq refuses before connecting,
    ?sslmode=bogus, was exit 3); a server that refuses the connection is exit 3, as documented
    (below), never "unexpected"; and no file is made for it (a DuckDB store URL's query was read
    as part of a new file's name)."""
    monkeypatch.chdir(tmp_path)
    for args in (
        ["audit", url, "-t", "t", "-q"],
        ["sql", url, "-t", "t", "-c", "a,b,c"],
        ["history", "--store", url],
        ["audit", str(place / "a.csv"), "-p", "1", "--pi-u", "0.5", "-q", "--store", url],
        ["scan", "--dbt-manifest", str(place / "m.json"), "--url", url, "--no-store"],
    ):
        (place / "m.json").write_text(VALID["manifest"])
        r = CliRunner().invoke(cli, args)
        # (qar sql only renders: a URL it can render is no error there)
        check(r, codes={0, 2} if args[0] == "sql" else {2})
        assert not list(tmp_path.iterdir()), (args, list(tmp_path.iterdir()))


def test_a_bad_url_of_the_test_server_is_one_sentence(place):
    """The same on PostgreSQL: the test server's URL with its port, host or query made wrong. Each
    is bad input (exit 2), named before a connection is tried (the driver refuses a query option
    while reading it: ?sslmode=nonsense was exit 3, a failed connection); a database the server
    does not have is the server's answer (exit 3)."""
    base = os.environ.get("QAR_TEST_PG_URL")
    if not base:
        pytest.skip("QAR_TEST_PG_URL is not set")
    from sqlalchemy.engine import make_url

    good = make_url(base)
    bad = [
        base.replace(f":{good.port}", ":5x4") if good.port else base.replace(f"@{good.host}", f"@{good.host}:5x4"),
        good.set(port=70000).render_as_string(hide_password=False),
        good.set(host="loc\u202ealhost").render_as_string(hide_password=False),
        *(
            good.set(query={name: value}).render_as_string(hide_password=False)
            for name, value in (
                ("sslmode", "nonsense"),
                ("no_such_option", "1"),
                ("target_session_attrs", "x"),
                ("connect_timeout", "abc"),
                ("gssencmode", "x"),
            )
        ),
    ]
    server = good.set(database="no_such_db_qar").render_as_string(hide_password=False)
    for url in [*bad, server]:
        for args in (["audit", url, "-t", "t", "-q"], ["history", "--store", url]):
            r = CliRunner().invoke(cli, args)
            check(r, codes={3} if url == server else {2})
            if "?" in url and url != server:
                option = url.rsplit("?", 1)[1].split("=")[0]
                assert f"option {option}" in r.output and "?query" in r.output, r.output


# --------------------------------------------------------------------------------------------
# The hook, the Action and the Python API
# --------------------------------------------------------------------------------------------


def test_the_hook_takes_every_bad_config(place, capsys):
    for case, make in corpus("scan"):
        f = place / "hook" / f"{case}.toml"
        f.parent.mkdir(exist_ok=True)
        if not f.exists() and not f.is_symlink():
            make(f)
        code = hook.main([str(f), "--no-store"])
        out = capsys.readouterr()
        assert code in (0, 1, 2), (case, code, out)
        assert "Traceback" not in out.err + out.out and "Error: unexpected" not in out.err + out.out, (case, out)


def test_the_actions_helper_takes_every_bad_json(place, capsys):
    """The Action reads qar scan's JSON where its ``json`` input points (standard library only):
    a bad file there gives no outputs, never a traceback."""
    for case, make in corpus("action_json"):
        f = place / "action" / f"{case}.json"
        f.parent.mkdir(exist_ok=True)
        if not f.exists() and not f.is_symlink():
            make(f)
        env = {"QAR_ACTION_JSON": str(f), "GITHUB_OUTPUT": str(place / "action" / "out.txt")}
        action.results(env)
        assert action.keep_json(str(f), {**env, "QAR_ACTION_JSON": str(place / "action" / "kept.json")}) in (0, 2)
        capsys.readouterr()


@pytest.mark.parametrize(
    "kind, call",
    [
        ("treatments", lambda f, csv: qar_sql.whatif(csv, treatments=str(f))),
        ("hierarchy_toml", lambda f, csv: qar_sql.anonymize(csv, k=2, hierarchy=f"age={f}")),
        ("scan", lambda f, csv: qar_sql.scan_config(str(f), store=False)),
    ],
    ids=["whatif-treatments", "anonymize-hierarchy", "scan-config"],
)
def test_the_python_api_raises_one_qar_error(place, kind, call):
    for case, make in corpus(kind, rich=False):
        f = place / "api" / f"{kind}-{case}.toml"
        f.parent.mkdir(exist_ok=True)
        if not f.exists() and not f.is_symlink():
            make(f)
        try:
            call(f, str(place / "a.csv"))
        except QarError as exc:
            assert exc.exit_code == 2 and "\n" not in str(exc), (case, exc)
        finally:
            with contextlib.suppress(OSError):
                f.chmod(0o644)


def test_a_pipe_still_gives_the_secret(place, tmp_path):
    """--hash-secret-file takes a named pipe (``<(vault read …)``): the owner reads it, to its limit."""
    fifo = tmp_path / "secret.fifo"
    os.mkfifo(fifo)

    def write():
        with open(fifo, "w") as fh:
            fh.write("from-a-pipe\n")

    t = threading.Thread(target=write)
    t.start()
    assert user_files.read_text(fifo, "--hash-secret-file", encoding="utf-8", pipes=True) == "from-a-pipe\n"
    t.join()
    with pytest.raises(QarError, match="not a regular file"):
        user_files.read_text(fifo, "treatments file")


# --------------------------------------------------------------------------------------------
# The results store's own tables
# --------------------------------------------------------------------------------------------


def _json_columns(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str]]:
    """(table, column) of every text column of the store whose value a run wrote as JSON (read
    from the store a real audit made, not listed here: a new one is in the corpus at once)."""
    found = []
    for table, column in con.execute(
        "select table_name, column_name from information_schema.columns "
        "where table_name like 'qar%' and data_type = 'VARCHAR'"
    ).fetchall():
        values = [v for (v,) in con.execute(f'select "{column}" from "{table}"').fetchall() if v]
        with contextlib.suppress(ValueError):
            if values and all(isinstance(json.loads(v), list | dict) for v in values):
                found.append((table, column))
    return found


def test_a_store_whose_json_qar_did_not_write_is_one_sentence(place, tmp_path):
    """The store is a file (or database) the user owns, read back by qar history and qar report
    --from-store: each JSON column of a run (its columns, parameters, results, ...) given text that
    is no JSON, JSON nested 100,000 deep and each wrong type, is one sentence (exit 2), never
    JSON's exception or a value of another type failing later ("unexpected", exit 3)."""
    store = tmp_path / "store.duckdb"
    r = CliRunner().invoke(
        cli,
        ["records", str(place / "a.csv"), "-p", "1", "--pi-u", "0.5", "-q", "-k", "age,sex,zip"]
        + ["--store", str(store)],
    )
    assert r.exit_code == 0, r.output
    with duckdb.connect(str(store)) as con:
        (run,) = con.execute("select run_id from qar_runs").fetchone()
        columns = _json_columns(con)
    assert {("qar_runs", "columns"), ("qar_runs", "parameters"), ("qar_run_results", "results")} <= set(columns)
    bad = ["not json", "[" * 100_000 + "]" * 100_000] + [json.dumps(v) for v in WRONG[:8]]
    bad += [json.dumps({"audit": {"rows": "x"}, "records": [1]}), json.dumps({"p": [1], "alpha": {}})]
    runs = 0
    for table, column in columns:
        for i, value in enumerate(bad):
            copy = tmp_path / f"{table}-{column}-{i}.duckdb"
            copy.write_bytes(store.read_bytes())
            with duckdb.connect(str(copy)) as con:
                con.execute(f'update "{table}" set "{column}" = ?', [value])
            # (the report as CSV: the same reading of the store, 0.2 s a run where HTML takes 0.9 s)
            report = ["report", "--from-store", str(copy), "--run", run, "-f", "csv", "-o", str(tmp_path / "r.csv")]
            for args in (["history", "--store", str(copy)], report):
                r = CliRunner().invoke(cli, args)
                check(r) if r.exit_code != 3 else pytest.fail(f"{table}.{column} = {value[:80]!r}: {r.output}")
                runs += 1
    assert runs >= 50, runs


@pytest.mark.parametrize(
    "change, said",
    [
        (lambda p: {"qar_fixture": []}, "profile 'qar_fixture' in"),  # (said: not in … (profiles: qar_fixture))
        (lambda p: {"qar_fixture": {**p["qar_fixture"], "target": []}}, "target is a list"),  # (said: names no target)
        (lambda p: _output(p, path=True), "path is true or false"),  # (opened the file 'True')
        (lambda p: _output(p, type="postgres", host=["h"], user="u", dbname="d"), "host is a list"),
    ],
    ids=["profile-not-a-mapping", "target-a-list", "path-a-boolean", "host-a-list"],
)
def test_a_profile_value_of_another_type_is_named(tmp_path, change, said):
    project = tmp_path / "p"
    shutil.copytree(FIXTURES / "dbt_project", project)
    (project / "target").mkdir()
    (project / "target" / "manifest.json").write_text(VALID["manifest"])
    profiles = yaml.safe_load((project / "profiles.yml").read_text())
    (project / "profiles.yml").write_text(yaml.safe_dump(change(profiles)))
    r = CliRunner().invoke(cli, ["scan", "--dbt-project", str(project), "--profiles-dir", str(project), "--no-store"])
    check(r)
    assert r.exit_code == 2 and said in r.stderr, r.stderr


def _output(profiles: dict, **settings) -> dict:
    dev = {**profiles["qar_fixture"]["outputs"]["dev"], **settings}
    return {"qar_fixture": {**profiles["qar_fixture"], "outputs": {"dev": dev}}}


#: Every character Python's str.splitlines() ends a line at, but a line feed and a carriage return.
LINE_BOUNDARIES = [c for c in map(chr, range(0x3000)) if len(f"a{c}b".splitlines()) == 2 and c not in "\r\n"]


@pytest.mark.parametrize("separator", LINE_BOUNDARIES, ids=[f"U+{ord(c):04X}" for c in LINE_BOUNDARIES])
def test_a_csv_row_ends_only_where_csv_readers_end_it(tmp_path, separator):
    """A hierarchy's row ends at a line feed or carriage return, as ARX and a spreadsheet read it:
    a label holding another of Python's line boundaries (U+2028, NEL, a form feed) stays one
    label (it was split into two rows: a value of the hierarchy the file never had)."""
    import csv

    path = tmp_path / "h.csv"
    path.write_bytes(f"M;x{separator}F;y\r\nF;z;*\n".encode())
    with open(path, newline="", encoding="utf-8") as fh:
        expected = [tuple(r) for r in csv.reader(fh, delimiter=";")]
    assert (
        user_files.read_csv(path, "hierarchy file", delimiter=";")
        == expected
        == [("M", f"x{separator}F", "y"), ("F", "z", "*")]
    )


@pytest.mark.parametrize("separator", LINE_BOUNDARIES, ids=[f"U+{ord(c):04X}" for c in LINE_BOUNDARIES])
def test_a_toml_line_is_counted_as_toml_counts_it(place, tmp_path, separator):
    """A message's line number counts TOML's lines (a line feed ends one): a string holding U+2028,
    U+2029 or NEL (U+0085) moved every later line number one down."""
    path = tmp_path / "t.toml"
    text = f'[treatments.a]\ncolumn = "age"\nkind = "bands"\ndescription = "x{separator}y"\nwidth = "ten"\n'
    written = separator if ord(separator) >= 0x20 else f"\\u{ord(separator):04x}"  # (TOML's ASCII controls: escaped)
    path.write_text(text.replace(separator, written), encoding="utf-8")
    r = CliRunner().invoke(cli, ["whatif", str(place / "a.csv"), "-T", str(path), "-q"])
    check(r)
    assert "(line 5)" in r.stderr, r.stderr


@pytest.mark.parametrize("case, make", corpus("pyproject"), ids=[c for c, _ in corpus("pyproject")])
def test_a_bad_pyproject_is_one_sentence(tmp_path, monkeypatch, case, make):
    """A pyproject.toml is read where it is found (the working folder or a parent: every command
    reads its [tool.qar] defaults), named by --config, and checked by qar config --check: each
    bad input is one sentence there (a [tool] that is a date was 'unexpected TypeError')."""
    path = tmp_path / "pyproject.toml"
    make(path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("QAR_CONFIG", raising=False)
    try:
        for args in (["config"], ["--config", str(path), "config"], ["config", "--check", str(path)]):
            check(CliRunner().invoke(cli, args))
    finally:
        with contextlib.suppress(OSError):
            path.chmod(0o644)


#: One character of each kind qar cannot put in SQL (user_text.unsafe_character): C0 and C1
#: controls, DEL, a line separator, bidi overrides and isolates.
UNSAFE_IN_SQL = ["\x1b", "\x00", "\x7f", "\x85", "\u2028", "\u202e", "\u2066"]


@pytest.mark.parametrize("bad", UNSAFE_IN_SQL, ids=[f"U+{ord(c):04X}" for c in UNSAFE_IN_SQL])
def test_a_hierarchy_label_sql_cannot_hold_is_named_with_its_file(place, tmp_path, bad):
    """A hierarchy's value or label goes into the release's SQL as a literal: one it cannot hold is
    refused as the file is read, naming the file and the row (it was refused after the search had
    run, as a 'text value' of no file, when the chosen level used it)."""
    path = tmp_path / "h.csv"
    path.write_text(f"M;a{bad}b;*\nF;a{bad}b;*\n", encoding="utf-8")
    r = CliRunner().invoke(
        cli, ["anonymize", str(place / "a.csv"), "--k", "31", "--qid", "sex", "--hierarchy", f"sex={path}", "-q"]
    )
    check(r)
    assert r.exit_code == 2 and "h.csv" in r.stderr and "row 1" in r.stderr, r.stderr


def test_an_unclosed_ipv6_bracket_is_named_not_the_port():
    """postgresql://[::1/db was "its port is not a number" (SQLAlchemy read 1/db as the port)."""
    for args in (["audit", "postgresql://[::1/db", "-t", "t"], ["history", "--store", "postgresql://u:p@[::1/db"]):
        r = CliRunner().invoke(cli, args)
        assert r.exit_code == 2 and "opens an IPv6 address with [ and does not close it" in r.output, r.output


@pytest.mark.parametrize("bad", UNSAFE_IN_SQL, ids=[f"U+{ord(c):04X}" for c in UNSAFE_IN_SQL])
@pytest.mark.parametrize("where", ["value", "key", "other"])
def test_a_treatment_value_sql_cannot_hold_is_named_with_its_key(place, tmp_path, bad, where):
    """A treatments file's map (its keys and values) and ``other`` go into the release's SQL as
    literals: one SQL cannot hold is refused as the file is read, naming the file and the key (it
    was refused when the SQL was built, as a 'text value' of no file or key)."""
    escaped = f"\\u{ord(bad):04x}"  # (TOML's basic strings take every character so)
    entry = {
        "value": f'map = {{ M = "a{escaped}b", F = "x" }}',
        "key": f'map = {{ "M{escaped}" = "a", F = "x" }}',
        "other": f'map = {{ M = "a" }}\nother = "o{escaped}"',
    }[where]
    path = tmp_path / "t.toml"
    path.write_text(f'[treatments.s]\ncolumn = "sex"\nkind = "map"\n{entry}\n', encoding="utf-8")
    r = CliRunner().invoke(cli, ["whatif", str(place / "a.csv"), "-T", str(path), "--qid", "age,sex,zip", "-q"])
    check(r)
    key = "treatments.s.other" if where == "other" else "treatments.s.map"
    assert r.exit_code == 2 and "t.toml" in r.stderr and key in r.stderr, r.stderr
