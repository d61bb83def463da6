"""User-given text never reaches an output channel raw (qar_sql/user_text.py owns the rule).

One DuckDB table whose name, column names and values are hostile texts (a line break, CR, ESC,
NUL, VT, U+0085, U+2028, U+202E, U+2066, U+200B, U+200E/U+200F, ``::error::``, ``%0A``,
``##[error]``, a Markdown fence, ``|``, ``<script>``, ``<!--``, ``](http://x)``, ``=HYPERLINK(...)``,
``$\foo$``), and a dbt manifest whose model's name holds the controls no qar.toml name may,
go through every command of ``qar --help`` (the list read from click's command tree) in every
``--format`` it offers (read from its option), with its progress lines (every tick) and its log
(``-v``) on stderr, plus the files the commands write (``--output``, ``--per-record``, ``--plot``,
``--junit``, ``--markdown``, ``--report-dir``), the results store read back by ``qar history``,
``qar config`` with every ``QAR_`` variable and ``--config`` hostile, ``--debug``'s traceback, the
pre-commit hook, the Action's helper and the Python API's objects (``repr``, ``_repr_html_``);
each channel is checked as its readers read it:

- text and stderr: no raw control or bidirectional character but the line breaks of the output
  itself, and no line starts with text that followed a line break inside user text (``SPLIT``);
- Markdown: every table keeps its column count on every row, no raw ``<script``/``<!--``;
- HTML: parses (html.parser), no ``<script>`` from user text;
- JUnit: parses (xml.etree), no raw control character, and no attribute (a testcase's name) on
  two lines;
- CSV (stdout or a file): parses, and no text cell starts a spreadsheet formula (a number, even
  ``-0.5``, is as written);
- SVG (a plot): parses, no raw control character;
- TOML (anonymize's treatments file): parses;
- JSON: parses, and holds the texts as written (not escaped twice).

Then every option of every command that takes a text or a path (read from click's tree, 132 today)
is given a hostile text on top of the command's first run: what it prints, mostly a refusal quoting
it, is checked the same way. A text slot SQL cannot carry (a column name with a line break) is
refused: exit 2, one line.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import logging
import random
import re
import time
import tomllib
import uuid
import warnings
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import click
import duckdb
import pytest
from click.testing import CliRunner

from qar_sql import user_text
from qar_sql.cli import action
from qar_sql.cli.main import cli
from qar_sql.progress import Progress

#: After a line break inside user text: a line of the output starting with it was split by user text.
SPLIT = "SPLIT"
TABLE = "tab|<script>`=x\u200e"
KEY = "id"
COLS = [
    '=HYPERLINK("http://x","y")',
    "b|```<script>alert(1)</script>",
    "<!--c](http://x)",
    "::error::d ##[error]e %0A\u200b\u200f$\\foo$",
    "@sum",
    "-minus",
    "+plus",
    "h",
]
#: Values of the first six columns (categories the outputs may quote).
HOSTILE_VALUES = [
    f"v\n{SPLIT}",
    "v\u202eR\u2028",
    "v\rCR\x85\x0b",
    "v\x1b[31mESC\x00",
    "=1+1",
    "<script>alert(2)</script>",
    "v\u2066I",
    "a|b",
    "-0.5",
    "@x",
]
#: Values of the last two (hierarchies label them).
PLAIN_VALUES = ["p1", "p2", "p3", "p4", "p5", "p6"]
#: Labels of their hierarchy's upper level.
LABELS = ['=HYPERLINK("u")', "<b>\u200fL\tT</b>", "|*|"]
#: A title, owner or purpose (the report) and a scan's name.
TITLE = (
    "T<script>alert(3)</script> ``` <!-- ](http://x) \u202e=HYPERLINK(1) ::error::t ##[error]x %0A\u200b"
    f"\x1b[2J\x00\u2028\n{SPLIT}"
)
#: A scan's name in qar.toml, which may hold no control character (it is refused there).
SCAN_NAME = "".join(c for c in TITLE if not user_text.control_or_separator(c)).replace(SPLIT, "")
#: A dbt model's name (dbt takes it from a file name; the manifest is read as written).
MODEL = f"m\x1b[31mRED\u202e\n::error::{SPLIT}\u2028%0A\x00\x85z"
#: A --title, --owner or --purpose of the report: TITLE with more of what a TOML string cannot
#: hold raw (an OSC escape sequence, BEL, CR), so only the command line gives it. (A byte that is
#: not UTF-8 is refused on the command line: test_a_text_option_that_is_not_utf8_is_refused.)
REPORT_TEXT = "\x1b]0;t\x07\x1b[31mESC\r" + TITLE
#: Texts a name may not hold in SQL: refused (exit 2, one line).
REFUSED = f"bad\n{SPLIT}name"

#: The database file's name: the source every output names (a line break, ESC, an override, and
#: ``$x^$``, which matplotlib would read as mathtext, and fail on).
DB = f"h\x1b[31m\u202e\n{SPLIT}$x^$.duckdb"

ROWS = 80
#: A file name the outputs write (a report, a plot), said on stderr.
OUT = f"o\u202e|<script>`\n{SPLIT}"


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("user_text")
    rng = random.Random(7)
    con = duckdb.connect(str(root / DB))
    con.execute(f"create table {_q(TABLE)} ({_q(KEY)} varchar, " + ", ".join(f"{_q(c)} varchar" for c in COLS) + ")")
    rows = []
    for i in range(ROWS):
        key = f"k{i}" if i % 9 else f"=k{i}\n{SPLIT}\u202e=cmd"  # (a spreadsheet formula, in a CSV)
        values = [rng.choice(HOSTILE_VALUES[: 4 + j]) + str(rng.randrange(1 + j)) for j in range(6)]
        rows.append([key, *values, *(rng.choice(PLAIN_VALUES) for _ in range(2))])
    con.executemany(f"insert into {_q(TABLE)} values ({', '.join('?' * (len(COLS) + 1))})", rows)
    con.close()
    for col in ("+plus", "h"):
        (root / f"{col}.csv").write_text(
            "".join(f"{v};{LABELS[int(v[1]) % len(LABELS)]};*\n" for v in PLAIN_VALUES), encoding="utf-8"
        )
    (root / "t.toml").write_text(
        f'qid = ["h", "+plus"]\n[treatments.{_toml(SCAN_NAME.replace(chr(0x202E), ""))}]\ncolumn = "h"\nkind = "suppress"\n'
        'values = ["p1"]\n',
        encoding="utf-8",
    )
    (root / "qar.toml").write_text(
        f"[sources.s]\nurl = {_toml(str(root / DB))}\n"
        f'[[scan]]\nname = {_toml(SCAN_NAME)}\ntable = {_toml(TABLE)}\nexclude = ["id"]\n'
        "p = 2\npi_u = 0.2\nfail_above = 1\n"
        '[[scan]]\nname = "::stop-commands::x ##[error]y"\ntable = "no|such<script>\\u202e"\n',
        encoding="utf-8",
    )
    (root / "manifest.json").write_text(json.dumps(manifest()), encoding="utf-8")
    return root


def _toml(text: str) -> str:
    """``text`` as a TOML basic string (JSON's escapes are TOML's, for these texts)."""
    return json.dumps(text)


def manifest() -> dict:
    """A dbt manifest: a model named :data:`MODEL` on the hostile table (its QIs tagged in meta),
    and one named with a bidi control whose table does not exist (an error to report)."""
    qis = [COLS[1], COLS[3], "-minus", "h"]
    model = {
        "resource_type": "model",
        "name": MODEL,
        "schema": "main",
        "alias": TABLE,
        "original_file_path": f"models/{MODEL}.sql",
        "config": {"materialized": "table", "meta": {"qar": {"p": 2, "pi_u": 0.2, "fail_above": 1}}},
        "columns": {c: {"name": c, "meta": {"qar": "quasi_identifier"}} for c in qis},
    }
    missing = {**model, "name": "gone\u202e|`", "alias": "no\u202etable", "original_file_path": "models/gone.sql"}
    return {
        "metadata": {"adapter_type": "duckdb"},
        "nodes": {f"model.p.{MODEL}": model, "model.p.gone": missing},
    }


def _source(work: Path) -> list[str]:
    return [str(work / DB), "-t", TABLE]


#: A QI option's value (comma-separated: COLS[0], which holds a comma, cannot be named in one).
QI = f"{COLS[1]},{COLS[3]},-minus,h"


def recipes(work: Path) -> dict[str, list[list[str]]]:
    """The runs of each command (SOURCE and options, no --format), each filling user text slots."""
    src = _source(work)
    store = str(work / "store.duckdb")
    dbt = ["--dbt-manifest", str(work / "manifest.json"), "--url", str(work / DB)]
    return {
        "audit": [[*src, "-x", KEY, "-p", "2", "--pi-u", "0.2", "--bootstrap", "0", "--store", store]],
        "sql": [[*src, "-c", QI, "-p", "2"]],
        "demo": [["-n", "200", "--path", str(work / "d|<script>`\u202e=x.duckdb")]],
        "records": [
            [*src, "-k", KEY, "-c", QI, "-p", "2", "--pi-u", "0.2", "--top", "20"],
            [*src, "-k", KEY, "-c", QI, "-p", "2", "--pi-u", "0.2", "-o", str(work / "records.csv")],
        ],
        "eliminate": [
            [*src, "-k", KEY, "-c", QI, "-p", "2", "--pi-u", "0.2", "--by", "dt", "--max", "4", "--step", "2"],
            [*src, "-k", KEY, "-c", QI, "-p", "2", "--pi-u", "0.2", "--by", "dt", "--max", "4", "--step", "2"]
            + ["--plot", str(work / "eliminate.svg")],
        ],
        "risk": [
            [*src, "-c", QI, "-p", "2"],
            [*src, "-c", QI, "-p", "2", "-k", KEY, "--per-record", str(work / "risk.csv")],
        ],
        "discover": [[*src, "-x", KEY, "-s", "2"]],
        "whatif": [[*src, "-T", str(work / "t.toml"), "--no-risk"]],
        "anonymize": [
            [*src, "--qid", "h,+plus", "--k", "2", "--hierarchy", f"h={work / 'h.csv'}"]
            + ["--hierarchy", f"+plus={work / '+plus.csv'}"],
            [*src, "--qid", "h,+plus", "--k", "2", "--hierarchy", f"h={work / 'h.csv'}"]
            + ["--hierarchy", f"+plus={work / '+plus.csv'}", "-x", KEY, "-p", "2", "--pi-u", "0.2"]
            + ["-o", str(work / "anonymize.toml"), "--plot", str(work / "anonymize.svg")],
        ],
        "report": [
            # (its records section: the keys; its what-if section: the treatments' names and values)
            [*src, "-x", KEY, "-p", "2", "--pi-u", "0.2", "--bootstrap", "0", "-k", KEY, "-T", str(work / "t.toml")]
            + ["--title", REPORT_TEXT]
            + ["--owner", REPORT_TEXT, "--purpose", REPORT_TEXT, "-o", "-"],
            [
                *src,
                "-x",
                KEY,
                "-p",
                "2",
                "--pi-u",
                "0.2",
                "--bootstrap",
                "0",
                "--no-records",
                "--title",
                REPORT_TEXT,
                "-o",
                str(work / f"{OUT}.html"),
            ],
        ],
        "compare": [
            [str(work / DB), str(work / DB), "-t", TABLE, "--aligned", "-c", "h,+plus"],
            [str(work / DB), str(work / DB), "-t", TABLE, "--aligned", "-c", "h,+plus"]
            + ["--plot", str(work / "compare.svg")],
        ],
        "uniqueness": [[*src, "-c", QI, "-g", "3"], [*src, "-c", QI, "-g", "3", "--plot", str(work / f"{OUT}.svg")]],
        "history": [["--store", store], ["--store", store, "--plot", str(work / "history.svg")]],
        "migrate": [["--store", store, "--status"]],
        "scan": [
            [str(work / "qar.toml"), "--no-store", "--junit", str(work / "j.xml"), "--markdown", str(work / "s.md")]
            + ["--report-dir", str(work / "pages"), *dbt],
            [str(work / "qar.toml"), "--store", store, *dbt],  # (qar history reads its names back)
        ],
        "config": [["--check", str(work / "qar.toml")], []],
    }


#: Commands whose recipe is run before the others (history and migrate read the store audit and
#: scan write).
FIRST = ("audit", "scan")
#: The files the recipes write, each checked as its format's readers read it.
FILES = ("records.csv", "risk.csv", "anonymize.toml", "anonymize.svg", "eliminate.svg", "compare.svg", "history.svg")


def commands() -> dict[str, click.Command]:
    assert isinstance(cli, click.Group)
    return dict(cli.commands)


def formats(command: click.Command) -> list[str]:
    option = next((p for p in command.params if "--format" in getattr(p, "opts", ())), None)
    if option is None:
        return ["text"]
    assert isinstance(option.type, click.Choice)
    return [str(c) for c in option.type.choices]


def test_the_commands_are_read_from_the_command_tree():
    found = commands()
    assert len(found) >= 16 and {"audit", "scan", "report", "config"} <= set(found)
    assert sum(len(formats(c)) for c in found.values()) >= 60


# --- the channel checks ---------------------------------------------------------------------------


def raw_unsafe(text: str, keep: str = "\n") -> list[str]:
    """The unsafe characters (control, separator, bidi) in ``text`` other than ``keep``."""
    return sorted({f"U+{ord(c):04X}" for c in text if user_text.unsafe(c) and c not in keep})


def check_text(text: str, where: str) -> None:
    assert not raw_unsafe(text), f"{where}: raw {raw_unsafe(text)} in {text[:3000]!r}"
    split = [line for line in text.split("\n") if line.lstrip().startswith(SPLIT)]
    assert not split, f"{where}: user text split a line: {split[:3]} in {text[:3000]!r}"


def _md_rows(text: str) -> list[list[str]]:
    """The tables of ``text``: consecutive lines starting with ``|``, each row's cell count."""
    tables, current = [], []
    for line in text.split("\n") + [""]:
        if line.startswith("|"):
            current.append(line)
        elif current:
            tables.append(current)
            current = []
    return tables


def check_markdown(text: str, where: str) -> None:
    check_text(text, where)
    for table in _md_rows(text):
        counts = {len(re.findall(r"(?<!\\)\|", row)) for row in table}
        assert len(counts) == 1, f"{where}: a Markdown table's rows differ in cells: {table}"
    prose = re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", text)  # (a code span shows its text as written)
    assert "<script" not in prose and "<!--" not in prose, f"{where}: raw HTML in Markdown: {text[:3000]}"
    assert not re.search(r"(?<!\\)\]\(http://x\)", text), f"{where}: a link from user text: {text[:3000]}"


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.scripts: list[str] = []
        self.in_script = False

    def handle_starttag(self, tag, attrs):
        self.in_script = tag == "script"

    def handle_endtag(self, tag):
        self.in_script = False

    def handle_data(self, data):
        if self.in_script:
            self.scripts.append(data)


def check_html(text: str, where: str) -> None:
    assert not raw_unsafe(text, keep="\n\t\r"), f"{where}: raw {raw_unsafe(text, keep=chr(10) + chr(9) + chr(13))}"
    parser = _Tags()
    parser.feed(text)
    parser.close()
    assert not any("alert(" in s for s in parser.scripts), f"{where}: a <script> from user text"
    assert "<script>alert(" not in text


def check_csv(text: str, where: str) -> None:
    for row in csv.reader(io.StringIO(text)):
        for cell in row:
            if cell.startswith(user_text.FORMULA_START):
                try:
                    float(cell)
                except ValueError:
                    pytest.fail(f"{where}: CSV cell {cell!r} starts a spreadsheet formula")


def _data_of(value):
    """A JSON value without its messages (an ``error``: a sentence for people, which quotes a name
    as the terminal shows it)."""
    if isinstance(value, dict):
        return {k: _data_of(v) for k, v in value.items() if k != "error"}
    if isinstance(value, list):
        return [_data_of(v) for v in value]
    return value


def check_json(text: str, where: str) -> None:
    dumped = json.dumps(_data_of(json.loads(text)), ensure_ascii=False)
    assert "⟦U+" not in dumped and "&lt;" not in dumped, f"{where}: JSON escaped twice"


def check_xml(text: str, where: str) -> None:
    root = ET.fromstring(text.encode("utf-8"))
    assert not raw_unsafe(text), f"{where}: raw {raw_unsafe(text)}"
    for element in root.iter():  # (an attribute is one line: a viewer shows a testcase's name so)
        for key, value in element.attrib.items():
            assert not raw_unsafe(value, keep=""), f"{where}: <{element.tag} {key}={value!r}>"


def check_svg(text: str, where: str) -> None:
    """A plot: its XML parses and holds no raw control character (its text is drawn as paths,
    and a $ in a name is no mathtext: the figure was drawn at all)."""
    ET.fromstring(text.encode("utf-8"))
    assert not raw_unsafe(text), f"{where}: raw {raw_unsafe(text)}"


def check_toml(text: str, where: str) -> None:
    """A treatments file: TOML that parses, its comments (read by people) on their own lines."""
    tomllib.loads(text)
    check_text("\n".join(line for line in text.split("\n") if line.startswith("#")), where)


def check_sql(text: str, where: str) -> None:
    """SQL names a table as it is: a bidi mark (U+200E) in a name stays (the dialects refuse the
    overrides and every control character but a literal's tab)."""
    marks = "\n\t" + "".join(user_text.BIDI_CONTROLS - user_text.BIDI_OVERRIDES)
    assert not raw_unsafe(text, keep=marks), f"{where}: raw {raw_unsafe(text, keep=marks)}"


CHECKS = {
    "text": check_text,
    "markdown": check_markdown,
    "md": check_markdown,
    "html": check_html,
    "csv": check_csv,
    "json": check_json,
    "sql": check_sql,
}


#: Where stdout is another channel than the format says: qar sql prints SQL; qar scan -f html
#: prints its text summary (its pages are in --report-dir); qar config --check prints a sentence.
CHANNEL = {
    ("sql", "text", 0): "sql",
    ("scan", "html", 0): "text",
    ("config", "json", 0): "text",
    ("config", "csv", 0): "text",
}


def check_stderr(text: str, where: str) -> None:
    check_text(text, where + " stderr")
    assert "Traceback" not in text and "unexpected" not in text, f"{where}: {text}"


def _cases() -> list[tuple[str, str, int]]:
    """(command, format, recipe): the first recipe in every format, a further one in the first."""
    found, table = commands(), recipes(Path("/work"))  # (the recipes' count does not depend on the folder)
    return [
        (name, fmt, i)
        for name in found
        for i in range(len(table.get(name, [[]])))
        for fmt in formats(found[name])[: None if i == 0 else 1]
    ]


# --- every command x every format ---------------------------------------------------------------


@contextlib.contextmanager
def stderr_channels():
    """Progress (a stage line at every tick, as a CI log gets one every 10 s) and the log (``-v``)
    on stderr for the block, and its warnings kept (a plot's glyph a font lacks); the ``qar_sql``
    logger as it was after it."""
    logger = logging.getLogger("qar_sql")
    handlers, level = list(logger.handlers), logger.level
    with pytest.MonkeyPatch.context() as mp, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mp.setattr(Progress, "interval", 0.0)
        try:
            yield ["-v"], caught
        finally:
            logger.handlers[:] = handlers
            logger.setLevel(level)


@pytest.fixture(scope="module")
def ran(work) -> dict:
    """Every command's every recipe in every format, run once (the store written by audit and
    scan first), with its progress and log on stderr."""
    runner = CliRunner(env={"QAR_BOOTSTRAP": "0"})  # (the tail-fit bands' resamples: no user text)
    found = commands()
    table = recipes(work)
    missing = set(found) - set(table)
    assert not missing, f"commands without a user-text recipe here: {sorted(missing)}"
    out: dict = {}
    start = time.process_time()
    with stderr_channels() as (verbose, caught):
        for name in sorted(found, key=lambda n: n not in FIRST):
            for i, args in enumerate(table[name]):
                for fmt in formats(found[name])[: None if i == 0 else 1]:  # (a further recipe: one format)
                    flag = ["-f", fmt] if len(formats(found[name])) > 1 or fmt != "text" else []
                    out[name, fmt, i] = runner.invoke(cli, [name, *args, *flag, *verbose], catch_exceptions=False)
        out["warnings"] = [str(w.message) for w in caught]
    out["seconds"] = time.process_time() - start  # (CPU: the wall clock of a shared machine varies 3x)
    return out


@pytest.mark.parametrize("name,fmt,i", _cases())
def test_user_text_is_safe_on_every_channel_of_every_command(ran, name, fmt, i):
    r = ran[name, fmt, i]
    where = f"qar {name} -f {fmt} (recipe {i})"
    check_stderr(r.stderr, where)
    # (a recipe refused before its work shows no user text but the refusal's: it tests nothing. The
    # scans hold a table that does not exist, on purpose: they report it, exit 2, after the others.)
    assert r.exit_code in ((0, 1, 2) if name == "scan" else (0, 1)), f"{where}: exit {r.exit_code}: {r.stderr}"
    if r.stdout:
        CHECKS[CHANNEL.get((name, fmt, i), fmt)](r.stdout, where)


def test_the_scan_files_and_the_report_file(ran, work):
    assert ran["scan", "text", 0].exit_code == 2  # the second scan's table does not exist
    assert MODEL in {s["name"] for s in json.loads(ran["scan", "json", 0].stdout)["scans"]}  # (the dbt model)
    check_xml((work / "j.xml").read_text(encoding="utf-8"), "qar scan --junit")
    check_markdown((work / "s.md").read_text(encoding="utf-8"), "qar scan --markdown")
    pages = sorted((work / "pages").glob("*.html"))
    assert pages
    for page in pages:
        check_html(page.read_text(encoding="utf-8"), f"qar scan --report-dir {page.name}")
    check_html((work / f"{OUT}.html").read_text(encoding="utf-8"), "qar report -o FILE.html --title")


def test_a_plot_draws_every_name(ran):
    """A control character in a name has no glyph in any font: the plots write its escape."""
    assert not [w for w in ran["warnings"] if "missing from font" in w], ran["warnings"]


def test_the_files_the_commands_write(ran, work):
    check = {".csv": check_csv, ".toml": check_toml, ".svg": check_svg}
    for name in FILES:
        path = work / name
        assert path.exists(), f"{name} was not written"
        check[path.suffix](path.read_text(encoding="utf-8"), name)
    assert "'=k0" in (work / "records.csv").read_text(encoding="utf-8")  # (the key, as written but the formula)
    check_svg((work / f"{OUT}.svg").read_text(encoding="utf-8"), "qar uniqueness --plot")


# --- names SQL cannot carry, and error messages quoting user text --------------------------------


@pytest.mark.parametrize("option", ["-t", "-c", "-x", "-k"])
def test_a_slot_holding_a_line_break_is_one_line_of_error(work, option):
    value = REFUSED if option != "-t" else f"no\n{SPLIT}such\u202e"
    args = ["records", str(work / DB), *(["-t", TABLE] if option != "-t" else []), option, value]
    r = CliRunner().invoke(cli, [*args, "-q"] + (["-k", KEY] if option != "-k" else []))
    assert r.exit_code == 2, r.stderr
    check_stderr(r.stderr, f"{option} {value!r}")
    assert r.stderr.startswith("Error: ") and r.stderr.count("\n") == 1, r.stderr


def test_a_column_name_sql_cannot_carry_is_refused_in_one_line(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text(f'"{REFUSED}",b\n' + "".join(f"{i % 3},{i % 5}\n" for i in range(30)), encoding="utf-8")
    r = CliRunner().invoke(cli, ["audit", str(path), "-p", "1", "-q"])
    assert r.exit_code == 2, r.stderr
    check_stderr(r.stderr, "a column with a line break")
    assert r.stderr.count("\n") == 1


# --- the hook, the Action, the Python API ---------------------------------------------------------


def test_the_hook_shows_a_config_path_as_written(work, tmp_path, monkeypatch, capsys):
    from qar_sql.cli.hook import main

    hostile = tmp_path / f"c`|<script>\u202e\n{SPLIT}"
    hostile.mkdir()
    config = hostile / "qar.toml"
    config.write_text((work / "qar.toml").read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code = main(["--no-store", "--junit", "j.xml", "--markdown", "s.md", "--report-dir", "r", str(config)])
    assert code == 2
    captured = capsys.readouterr()
    check_text(captured.out, "hook stdout")
    check_stderr(captured.err, "hook")
    check_xml((tmp_path / "j.xml").read_text(encoding="utf-8"), "hook --junit")
    check_markdown((tmp_path / "s.md").read_text(encoding="utf-8"), "hook --markdown")
    check_html((tmp_path / "r" / "index.html").read_text(encoding="utf-8"), "hook index.html")


def test_the_action_log_holds_no_workflow_command_from_user_text(ran, work, tmp_path, capsys):
    # its stdlib-only copies
    assert action.BIDI.keys() == {ord(c) for c in user_text.BIDI_CONTROLS}
    assert action.CONTROLS == {c for c in range(0x110000) if user_text.control_or_separator(chr(c))}
    scans = json.loads(ran["scan", "json", 0].stdout)["scans"]  # (MODEL's among them)
    scans.append({"name": TITLE, "status": "error", "error": TITLE + f"\n{SPLIT}::error::y\x1b[2J\x00\x85"})
    scans.append({"name": MODEL, "status": "fail", "risk": 0.5, "fail_above": "\x1b[31m\n::error::x"})
    (tmp_path / "s.json").write_text(json.dumps({"scans": scans}), encoding="utf-8")
    outputs = tmp_path / "out"
    action.results({"QAR_ACTION_JSON": str(tmp_path / "s.json"), "GITHUB_OUTPUT": str(outputs)})
    log = capsys.readouterr().out
    check_text(log, "the Action's log")
    ours = ("::error file=", "::error title=", "::warning file=", "::warning title=")
    for line in log.splitlines():  # (the runner reads a line starting "::" as a command before "##[")
        assert "##[" not in line or line.startswith(ours), line
        assert not line.lstrip().startswith("::") or line.startswith(ours), line
    for line in outputs.read_text(encoding="utf-8").splitlines():
        assert re.fullmatch(r"[\w-]+=[^\n]*", line), line


def test_the_python_api_shows_user_text_safely(work):
    """Each public function's result as a notebook shows it (``repr``, ``_repr_html_``)."""
    import qar_sql

    path = str(work / DB)
    qi = [COLS[1], COLS[3], "-minus", "h"]
    where = {"table": TABLE}
    tail = {"p": 2, "pi_u": 0.2}
    objects = {
        "audit": qar_sql.audit(path, exclude=[KEY], **where, **tail),
        "records": qar_sql.records(path, key=KEY, columns=qi, **where, **tail),
        "uniqueness": qar_sql.uniqueness(path, columns=qi, group_size=3, **where),
        "risk": qar_sql.risk(path, columns=qi, p=2, **where),
        "discover": qar_sql.discover(path, exclude=[KEY], **where),
        "compare": qar_sql.compare(path, path, aligned=True, columns=["h", "+plus"], **where),
        "eliminate": qar_sql.eliminate(path, key=KEY, columns=qi, by=["dt"], max_removed=4, step=2, **where, **tail),
        "connect": qar_sql.connect(path, **where),
    }
    from qar_sql.output.html import ReportInputs

    objects["a report without an audit"] = ReportInputs(audit=None, uniqueness=objects["uniqueness"])
    for name, obj in objects.items():
        check_text(repr(obj), f"repr of {name}")
        if hasattr(obj, "_repr_html_"):
            check_html(obj._repr_html_(), f"{name}._repr_html_")
    objects["connect"].close()


def test_the_whole_run_is_quick(ran):
    assert ran["seconds"] < 30, ran["seconds"]


#: The commands run on the hostile table in another engine (its names come back through its driver).
ON_OTHER_ENGINES = [
    ("records", ["-k", KEY, "-c", QI, "-p", "2", "--pi-u", "0.2"]),
    ("audit", ["-x", KEY, "-p", "2", "--pi-u", "0.2"]),
    ("discover", ["-x", KEY, "-s", "2"]),
    ("risk", ["-c", QI, "-p", "2"]),
    ("uniqueness", ["-c", QI, "-g", "3"]),
]


@pytest.mark.parametrize("command,options", ON_OTHER_ENGINES)
def test_on_postgresql_too(pg, work, command, options):
    """The same table on PostgreSQL: its names and values come back through another driver."""
    from conftest import PG_URL, pg_copy

    schema = f"qar_ut_{uuid.uuid4().hex[:8]}"
    with duckdb.connect(str(work / DB), read_only=True) as con:
        rows = con.execute(f"select * from {_q(TABLE)}").fetchall()
    rows = [[v.replace("\x00", "") for v in row] for row in rows]  # (PostgreSQL's text holds no NUL)
    with pg.begin() as c:
        c.exec_driver_sql(f"create schema {schema}")
    try:
        ddl = ", ".join(f"{_q(c)} text" for c in [KEY, *COLS])
        pg_copy(pg, f"{schema}.{_q(TABLE)}", ddl, rows)
        for fmt in ("text", "markdown", "csv"):
            args = [command, PG_URL, "-t", f"{schema}.{TABLE}", *options, "-f", fmt, "-q"]
            r = CliRunner(env={"QAR_BOOTSTRAP": "0"}).invoke(cli, args)
            where = f"qar {command} -f {fmt} on PostgreSQL"
            assert r.exit_code == 0, f"{where}: {r.stderr}"
            check_stderr(r.stderr, where)
            CHECKS[fmt](r.stdout, where)
    finally:
        with pg.begin() as c:
            c.exec_driver_sql(f"drop schema {schema} cascade")


@pytest.mark.parametrize("command,options", ON_OTHER_ENGINES)
def test_on_sqlite_too(work, tmp_path, command, options):
    """The same table in a SQLite file: its names and values come back through sqlite3."""
    import sqlite3

    with duckdb.connect(str(work / DB), read_only=True) as con:
        rows = con.execute(f"select * from {_q(TABLE)}").fetchall()
    path = tmp_path / "h.sqlite"
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.execute(f"create table {_q(TABLE)} (" + ", ".join(f"{_q(c)} text" for c in [KEY, *COLS]) + ")")
        db.executemany(f"insert into {_q(TABLE)} values ({', '.join('?' * (len(COLS) + 1))})", rows)
        db.commit()
    for fmt in ("text", "markdown", "csv"):
        args = [command, f"sqlite:///{path}", "-t", TABLE, *options, "-f", fmt, "-q"]
        r = CliRunner(env={"QAR_BOOTSTRAP": "0"}).invoke(cli, args)
        where = f"qar {command} -f {fmt} on SQLite"
        assert r.exit_code == 0, f"{where}: {r.stderr}"
        check_stderr(r.stderr, where)
        CHECKS[fmt](r.stdout, where)


@pytest.mark.parametrize(
    "cell,written",
    [("=1+1", "'=1+1"), ("+x", "'+x"), ("-cmd|' /C calc'!A0", "'-cmd|' /C calc'!A0"), ("@SUM(A1)", "'@SUM(A1)")]
    + [("\tx", "'\tx"), ("-0.5", "-0.5"), ("+3", "+3"), ("-1e-5", "-1e-5"), ("a=b", "a=b"), ("", "")],
)
def test_a_csv_text_cell_never_starts_a_formula_and_a_number_stays(cell, written):
    assert user_text.csv_cell(cell) == written


def test_the_one_predicate():
    """Control characters and separators (Cc, Zl, Zp) by Unicode's categories; bidi controls by
    their list: overrides (refused in SQL) and marks (shown, allowed in SQL names)."""
    import unicodedata

    for code in range(0x3000):
        c = chr(code)
        assert user_text.control_or_separator(c) == (unicodedata.category(c) in ("Cc", "Zl", "Zp"))
    assert user_text.unsafe_character("a\u200eb") is None and user_text.unsafe_character("a\u202eb") == "\u202e"
    assert user_text.unsafe_character("a\tb", allow="\t") is None and user_text.unsafe_character("a\tb") == "\t"
    assert user_text.one_line("a\nb\u202ec\x1b") == "a\\nb⟦U+202E⟧c\\x1b"
    assert user_text.terminal("a\rb\nc") == "a\\rb\nc"


def text_options() -> list[tuple[str, str]]:
    """(command, option) of every option of every command that takes a text or a path: each a
    slot a user fills, read from click's command tree."""
    return [
        (name, p.opts[-1] if p.opts[-1].startswith("--") else p.opts[0])
        for name, cmd in commands().items()
        for p in cmd.params
        if isinstance(p, click.Option) and not p.hidden and not p.is_flag and p.name != "fmt"
        if isinstance(p.type, click.types.StringParamType | click.Path)
    ]


def test_every_text_option_is_read_from_the_tree():
    assert len(text_options()) >= 120


@pytest.fixture(scope="module")
def slots(work) -> dict:
    """Every text option of every command given a hostile text (or a file of that name) on top
    of the command's first recipe: whatever it does with it (a refusal quoting it, mostly), its
    output is checked as the matrix's is, and with ``--debug`` the traceback of the refusal."""
    runner = CliRunner(env={"QAR_BOOTSTRAP": "0"})
    table = recipes(work)
    hostile = f"x\u202e<script>`|\n{SPLIT}"
    out = {}
    for name, option in text_options():
        args = list(table[name][0])
        if option in args:  # (its value in the recipe replaced)
            del args[args.index(option) : args.index(option) + 2]
        value = str(work / "slot" / hostile) if option in PATHS else hostile
        if option == "--store":  # (a store that is made, whose name qar scan and qar migrate then show)
            value = str(work / f"{hostile}.duckdb")
            args = [a for a in args if a not in ("--no-store", "--status")]
        out[name, option] = runner.invoke(
            cli, [name, *args, option, value, "--debug", *(["-q"] if name != "sql" else [])]
        )
    return out


def debug_traceback(stderr: str) -> tuple[str, str]:
    """(``--debug``'s traceback, the rest of ``stderr``): the traceback ends at the error's line."""
    traceback, rest, inside = [], [], False
    for line in stderr.split("\n"):
        inside = (inside or line.startswith("Traceback (most recent call last):")) and not line.startswith("Error: ")
        (traceback if inside else rest).append(line)
    return "\n".join(traceback), "\n".join(rest)


#: Options whose value is a path (given one under the test's folder, so nothing is written elsewhere).
PATHS = {"--path", "--output", "--plot", "--per-record", "--store", "--from-store", "--treatments", "--hierarchies"}
PATHS |= {"--hash-secret-file", "--junit", "--markdown", "--report-dir", "--dbt-manifest", "--dbt-project"}
PATHS |= {"--profiles-dir", "--compare", "--check", "--domain"}


@pytest.mark.parametrize("name,option", text_options())
def test_a_hostile_text_in_every_text_option_is_shown_safely(slots, name, option):
    r = slots[name, option]
    where = f"qar {name} {option} HOSTILE --debug"
    traceback, stderr = debug_traceback(r.stderr)
    check_text(traceback, where + " traceback")
    check_stderr(stderr, where)
    # (exit 3 is not this test's: a path the engine cannot open is another kind of finding)
    assert r.exit_code in (0, 1, 2, 3), f"{where}: exit {r.exit_code}: {r.stderr} {r.exception!r}"
    if name == "sql":
        check_sql(r.stdout, where)
    elif not r.stdout.lstrip().startswith(("{", "<")):
        check_text(r.stdout, where)


def test_every_qar_variable_and_the_config_path_are_shown_safely(work, tmp_path):
    """``qar config`` shows every setting's value and where it came from: each text option's
    ``QAR_`` variable given a hostile text, and the group's ``--config`` a file in a hostile folder."""
    hostile = f"x\x1b[31m\u202e<script>`|=y\n{SPLIT}"
    env = {"QAR_BOOTSTRAP": "0"}
    for cmd in commands().values():
        for p in cmd.params:
            text = isinstance(p, click.Option) and isinstance(p.type, click.types.StringParamType)
            if text and p.envvar and not set(p.opts) & PATHS:  # (a path: another test's)
                env.update(dict.fromkeys([p.envvar] if isinstance(p.envvar, str) else p.envvar, hostile))
    folder = tmp_path / f"c`|<script>\u202e\n{SPLIT}"
    folder.mkdir()
    (folder / "qar.toml").write_text("[defaults]\np = 2\n", encoding="utf-8")
    for fmt in formats(commands()["config"]):
        r = CliRunner(env=env).invoke(cli, ["--config", str(folder / "qar.toml"), "config", "-f", fmt])
        where = f"qar --config HOSTILE config -f {fmt} with every QAR_ variable HOSTILE"
        assert r.exit_code == 0, f"{where}: {r.stderr}"
        check_stderr(r.stderr, where)
        CHECKS[fmt](r.stdout, where)


@pytest.mark.parametrize("name,option", [(n, o) for n, o in text_options() if o not in PATHS])
def test_a_text_option_that_is_not_utf8_is_refused(work, name, option):
    """A byte that is not UTF-8 (Python's lone surrogate) in a text option, on top of the
    command's first recipe: refused (exit 2) before the work, as no output could write it."""
    args = list(recipes(work)[name][0])
    if option in args:
        del args[args.index(option) : args.index(option) + 2]
    r = CliRunner().invoke(cli, [name, *args, option, "a\udcff\nb", *(["-q"] if name != "sql" else [])])
    where = f"qar {name} {option} NOT-UTF-8"
    assert r.exit_code == 2, f"{where}: exit {r.exit_code}: {r.stderr} {r.exception!r}"
    check_stderr(r.stderr, where)


def test_a_frame_index_is_named_safely_in_the_warning(work):
    import pandas as pd

    import qar_sql

    frame = pd.DataFrame({"a": [1, 2, 3, 1] * 5, "b": [1, 2] * 10, "c": list(range(4)) * 5})
    frame.index.name = f"i\x1b[2J\u202e\n{SPLIT}"
    with pytest.warns(UserWarning) as caught:
        qar_sql.audit(frame, p=1, pi_u=0.4)
    for w in caught:
        check_text(str(w.message), "the index warning")
