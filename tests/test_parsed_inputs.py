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
    # (its source in a [sources] table: a path as a scan's source is refused as undefined, before
    # anything else, so qar scan's outputs and every later check went untested)
    "scan": '[defaults]\np = 1\npi_u = 0.5\n\n[sources.a]\nurl = "../a.csv"\n\n[[scan]]\nname = "x"\nsource = "a"\n',
    "config": '[defaults]\np = 1\npi_u = 0.5\nformat = "json"\n',
    "treatments": (
        'qid = "q"\nrelease = ["b"]\n\n[qis]\nq = ["age", "sex", "zip"]\n\n'
        '[treatments.b]\ncolumn = "age"\nkind = "bands"\nwidth = 10\n'
    ),
    "hierarchy_toml": "[hierarchies.age]\nwidths = [5, 10]\norigin = 0\n",
    "hierarchy_csv": "M;*\nF;*\n",
    "secret": "s3cret-value\n",
    "csv": CSV,
    "project": (FIXTURES / "dbt_project" / "dbt_project.yml").read_text(),
    "profiles": (FIXTURES / "dbt_project" / "profiles.yml").read_text(),
}
SYNTAX = {"scan": "toml", "config": "toml", "treatments": "toml", "hierarchy_toml": "toml", "project": "yaml"}
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
UNREAD = ("folder", "missing", "symlink-loop", "binary", "utf16", "deep", "unreadable", "latin1", "nul")

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
        for i, path in enumerate(paths[:40]):  # (the manifest's keys: the first 40 of a walk)
            text = _dump(syntax, _replaced(doc, path, WRONG[i % len(WRONG)]))
            items.append((f"wrong-type-{'.'.join(map(str, path))[:40]}", data(text.encode())))
            # at every key too: a date (TOML, YAML) and a number of 400 digits (JSON, YAML: TOML
            # refuses it as it parses), which messages showed as their Python repr
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
    "anonymize": ["{csv}", "--k", "2", "-q"],
    "audit": ["{csv}", "-p", "1", "--pi-u", "0.5", "-q"],
    "compare": ["{csv}", "{csv}", "-p", "1", "--pi-u", "0.5", "--aligned", "--no-risk", "-q"],
    "config": [],
    "demo": ["--path", "{dir}/demo.duckdb", "-q"],
    "discover": ["{csv}", "-q"],
    "eliminate": ["{csv}", "-p", "1", "--pi-u", "0.5", "--max", "2", "-q"],
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
    ("compare", "--treatments"): ("treatments", ["compare", "{csv}", "-T", "{f}", "-q", "--no-risk"]),
    ("uniqueness", "--treatments"): ("treatments", ["uniqueness", "{csv}", "-T", "{f}", "-g", "2", "-q"]),
    ("report", "--treatments"): ("treatments", ["report", "{csv}", "-T", "{f}", "-q", "-o", "{dir}/r.html"]),
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
}
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
    duckdb.connect(str(d / "w.duckdb")).close()  # (the --dbt-manifest runs' warehouse: empty)
    return d


def _fill(args: list[str], place: Path, f: Path | None = None) -> list[str]:
    out = [a.replace("{csv}", str(place / "a.csv")).replace("{dir}", str(place)) for a in args]
    return [a.replace("{f}", str(f)) for a in out]


def check(r, codes: set[int] = frozenset({0, 1, 2}), names: tuple[str, ...] = ()) -> None:
    """The rule: a documented exit code, no parser's exception; a usage error is one sentence
    (``Error: …``, then only indented lines: a list of every place a file breaks its schema)
    naming one of ``names`` (the file, or its folder)."""
    shown = f"exit {r.exit_code}: {r.output!r}"
    assert r.exit_code in codes, shown
    assert r.exception is None or isinstance(r.exception, SystemExit), (shown, r.exc_info)
    assert "Traceback" not in r.output and "Error: unexpected" not in r.output, shown
    # (a value as the file wrote it: no Python repr of a parser's type, no number of 400 digits)
    assert not re.search(r"datetime\.\w+\(|np\.\w+\(|Decimal\(|\d{40}", r.output), shown
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


@pytest.mark.parametrize("key, case, make", READER_CASES)
def test_a_bad_file_is_one_sentence_naming_it(place, key, case, make):
    kind, args = READERS[key]
    f = (
        place
        / "cases"
        / f"{key[0] or 'qar'}{key[1]}-{case}{'.csv' if kind in ('csv', 'hierarchy_csv') else '.json' if kind == 'manifest' else '.toml'}"
    )
    f.parent.mkdir(exist_ok=True)
    if not f.exists() and not f.is_symlink():
        make(f)
    try:
        r = CliRunner().invoke(cli, _fill(args, place, f))
    finally:
        with contextlib.suppress(OSError):
            f.chmod(0o644)
    named = case in UNREAD and kind != "csv"  # (DuckDB names a CSV it cannot read, or the table)
    check(r, names=(f.name,) if named else ())


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
    # query options the driver refuses before it connects (no server needed): exit 2 too
    "postgresql+psycopg://u@127.0.0.1:1/db?sslmode=bogus",
    "postgresql+psycopg://u@127.0.0.1:1/db?no_such_option=1",
    "postgresql+psycopg://u@127.0.0.1:1/db?connect_timeout=abc",
]


@pytest.mark.parametrize("url", URLS, ids=range(len(URLS)))
def test_a_bad_url_is_one_sentence(place, url):
    """As a SOURCE (also of qar sql, which only renders), a --store and a scan's --url. Each is
    bad input, exit 2 (the test allowed 0-3, and a query option libpq refuses before connecting,
    ?sslmode=bogus, was exit 3); a server that refuses the connection is exit 3, as documented
    (below), never "unexpected"."""
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


def test_an_unclosed_ipv6_bracket_is_named_not_the_port():
    """postgresql://[::1/db was "its port is not a number" (SQLAlchemy read 1/db as the port)."""
    for args in (["audit", "postgresql://[::1/db", "-t", "t"], ["history", "--store", "postgresql://u:p@[::1/db"]):
        r = CliRunner().invoke(cli, args)
        assert r.exit_code == 2 and "opens an IPv6 address with [ and does not close it" in r.output, r.output
