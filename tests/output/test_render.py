"""The output formats (qar_sql/output/render.py). ``--format csv`` on every command that has
``--format``: a header and one row per row of the result's table, checked against the command's
own JSON (its table field, read independently) on a small demo database. Floats at full precision:
the same text as the JSON's. And the registry of renderers: every result type a command returns
renders in every format its ``--format`` offers, a new format or type is one registration.
"""

from __future__ import annotations

import ast
import csv
import importlib
import inspect
import io
import json
import pkgutil
import typing
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

import qar_sql.commands
import qar_sql.output
from qar_sql.cli.main import cli
from qar_sql.errors import UsageError
from qar_sql.output.registry import RENDERERS, renders, type_name
from qar_sql.output.render import FORMATS, RENDERED_IN, choices, render, renderer
from qar_sql.results import Tabular

REPO = Path(__file__).resolve().parents[2]
TREATMENTS = str(REPO / "examples" / "treatments.toml")
ROWS = "300"


def cell(v) -> str:
    """The CSV text of one JSON value: null empty, floats as the JSON writes them, lists joined."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        return ", ".join(cell(x) for x in v)
    return repr(v) if isinstance(v, float) else str(v)


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("csv")
    r = CliRunner().invoke(cli, ["demo", "--path", str(path / "demo.duckdb"), "--rows", ROWS, "-q", "-p", "2"])
    assert r.exit_code == 0, r.output
    return path


def run(args: list[str], fmt: str, code: int = 0) -> str:
    r = CliRunner().invoke(cli, [*args, "-f", fmt])
    assert r.exit_code == code, r.output
    return r.stdout


def both(args: list[str], code: int = 0) -> tuple[dict, list[str], list[list[str]]]:
    """The JSON of ``args`` and its CSV: header, rows."""
    table = list(csv.reader(io.StringIO(run(args, "csv", code))))
    return json.loads(run(args, "json", code)), table[0], table[1:]


def demo_args(folder: Path, command: str, *extra: str) -> list[str]:
    return [command, str(folder / "demo.duckdb"), "-t", "population", "-x", "person_id", *extra]


def test_every_format_option_offers_csv():
    """csv comes from the registry: every --format offers it (qar migrate's too: a row per migration)."""
    import click

    def options(cmd, path=()):
        if isinstance(cmd, click.Group):
            for name, sub in cmd.commands.items():
                yield from options(sub, (*path, name))
        for p in cmd.params:
            if p.name == "fmt":
                yield " ".join(path), p.type.choices

    found = dict(options(cli))
    assert {"audit", "records", "eliminate", "discover", "whatif", "risk", "uniqueness"} <= set(found)
    assert {"compare", "scan", "history", "config", "demo", "migrate"} <= set(found)
    for name, kinds in found.items():
        assert "csv" in kinds, name
    assert choices(html=True) == ("text", "json", "markdown", "html", "csv")
    assert set(FORMATS) == {"text", "json", "markdown", "html", "csv", "sql"}
    assert "sql" in found["anonymize"]  # the release as one SELECT


def test_audit_and_demo(folder):
    for args in (
        demo_args(folder, "audit", "-p", "2"),
        ["demo", "--path", str(folder / "other.duckdb"), "--rows", ROWS, "-q", "-p", "2"],
    ):
        j, head, rows = both(args)
        names = ("index", "columns", "distinct", "singletons", "theta", "min_class_size", "records_below_k")
        assert head == list(names)  # the JSON's names
        assert rows == [[cell(q[n]) for n in names] for q in j["qis"]]
        assert len(rows) == 78  # C(13, 2) QIs of the demo's 13 columns


def test_records_by_dt_suda_influence(folder):
    j, head, rows = both(demo_args(folder, "records", "-p", "2", "--key", "person_id", "--all", "-q"))
    names = ("key", "r", "dt", "u_plus", "u_star", "n_unique")
    assert head == [*names, "unique_on"]
    assert [r[:-1] for r in rows] == [[cell(x[n]) for n in names] for x in j["records"]] and len(rows) == int(ROWS)
    assert [json.loads(r[-1]) for r in rows] == [x["unique_on"] for x in j["records"]]  # a list of lists: its JSON
    _, _, top = both(demo_args(folder, "records", "-p", "2", "--key", "person_id", "--top", "7", "-q"))
    assert [r[:2] for r in top] == [r[:2] for r in rows[:7]] and len(top) == 7  # the JSON's records: the top 7

    j, head, rows = both(
        demo_args(folder, "records", "-p", "2", "--key", "person_id", "--all", "--by", "suda", "--max-size", "2")
    )
    names = ("key", "suda", "dis_suda", "msus_by_size")
    assert head == list(names)
    assert rows == [[cell(x[n]) for n in names] for x in j["records"]]
    assert len(rows) == int(ROWS)

    j, head, rows = both(demo_args(folder, "records", "-p", "2", "--key", "person_id", "--by", "influence", "-q"))
    assert head == ["key", "r", "influence"]
    assert rows == [[cell(x["key"]), cell(x["r"]), cell(x["influence"])] for x in j["records"]] and rows


def test_eliminate(folder):
    j, head, rows = both(demo_args(folder, "eliminate", "-p", "2", "--key", "person_id", "--step", "20", "-q"))
    assert head == ["curves", "removed", "risk", "reduction"]  # a curve's name under its object's
    want = [
        [name, *(cell(pt[n]) for n in ("removed", "risk", "reduction"))] for name, c in j["curves"].items() for pt in c
    ]
    assert rows == want and rows


def test_discover(folder):
    j, head, rows = both(demo_args(folder, "discover", "--max-size", "2", "-q"))
    names = ("columns", "rows", "distinct", "singletons", "singleton_share", "min_class_size", "identifier")
    assert head == list(names)
    assert rows == [[cell(c[n]) for n in names] for c in j["combinations"]]


def test_whatif(folder):
    j, head, rows = both(demo_args(folder, "whatif", "-p", "2", "-T", TREATMENTS, "-q"))
    names = list(j["scenarios"][0])  # the original has no information loss: its fields, flattened, come after
    loss = [f"information_loss.{n}" for n in j["scenarios"][1]["information_loss"]]
    assert head == names + loss
    want = [[cell(s[n]) if not isinstance(s[n], dict) else "" for n in names] for s in j["scenarios"]]
    assert [r[: len(names)] for r in rows] == want and rows[0][0] == "original"
    # a list of objects in one cell: its JSON (the loss's last digits vary between the two runs)
    at = head.index("information_loss.columns")
    assert [[c["column"] for c in json.loads(r[at])] for r in rows[1:]] == [
        [c["column"] for c in s["information_loss"]["columns"]] for s in j["scenarios"][1:]
    ]


def test_risk(folder):
    j, head, rows = both(demo_args(folder, "risk", "-p", "2", "-q"))
    ks = sorted({k for q in j["qis"] for k in q["violations"]}, key=int)
    nested = [
        f"{who}.{what}" for who in ("prosecutor", "journalist") for what in ("highest", "average", "records_at_risk")
    ]
    assert head[:4] == ["index", "columns", "classes", "sample_uniques"]
    assert head[4 : 4 + len(ks)] == [f"violations.{k}" for k in ks]  # an object's fields: outer.inner
    assert set(nested) <= set(head)
    want = [
        [cell(q["index"]), cell(q["columns"]), cell(q["classes"]), cell(q["sample_uniques"])]
        + [cell(q["violations"].get(k)) for k in ks]
        + [cell(q[n.split(".")[0]][n.split(".")[1]]) for n in nested]
        for q in j["qis"]
    ]
    at = [head.index(n) for n in nested]
    assert [r[: 4 + len(ks)] + [r[i] for i in at] for r in rows] == want


def test_uniqueness(folder):
    j, head, rows = both(demo_args(folder, "uniqueness", "-p", "2", "-g", "30", "-q"))
    names = ("columns", "domain", "kappa", "pi_uniform", "pi_kl", "pi_poisson", "pi_exact", "k50", "pi_kl_u", "k_at")
    names += ("index", "distinct", "exposure_mean", "exposure_max")
    assert head[: len(names)] == list(names)
    assert [r[: len(names)] for r in rows] == [[cell(q[n]) for n in names] for q in j["qis"]]


def test_compare(folder):
    j, head, rows = both(demo_args(folder, "compare", "-p", "2", "--treatments", TREATMENTS, "-q"))
    assert head == ["columns", "theta_original", "theta_treated"]
    assert rows == [[cell(q["columns"]), cell(q["theta_original"]), cell(q["theta_treated"])] for q in j["qis"]]
    assert rows


def test_scan_history_config(folder, monkeypatch):
    monkeypatch.chdir(folder)
    (folder / "scans.toml").write_text(
        '[sources.demo]\nurl = "demo.duckdb"\n\n[[scan]]\nname = "demo"\nsource = "demo"\ntable = "population"\nexclude = ["person_id"]\n'
        "p = 2\npi_u = 0.2\nfail_above = 0.999\n"
    )
    store = ["--store", str(folder / "store.duckdb")]
    j, head, rows = both(["scan", "scans.toml", *store, "-q"])
    names = ("name", "table", "source", "status", "risk", "warn_above", "fail_above", "p", "alpha", "rows", "n_qi")
    names += ("seconds", "error", "exit_code")
    assert head == list(names)
    same = [i for i, n in enumerate(names) if n != "seconds"]  # (two runs: json, then csv)
    assert [[r[i] for i in same] for r in rows] == [[cell(s[names[i]]) for i in same] for s in j["scans"]]
    assert len(rows) == 1

    j, head, rows = both(["history", *store])
    # one row per run, after its series' fields (the JSON's names: a series holds its runs)
    outer = [n for n in j["series"][0] if n != "runs"]
    names = list(j["series"][0]["runs"][0])
    assert head == outer + names
    want = [[*(cell(s[n]) for n in outer), *(cell(pt[n]) for n in names)] for s in j["series"] for pt in s["runs"]]
    assert rows == want and len(rows) == 2  # the scan run twice (json, then csv)

    j, head, rows = both(["config"])
    assert head == ["settings", "value", "origin", "env"]  # a setting's name under its object's
    assert rows == [[name, cell(s["value"]), s["origin"], s["env"]] for name, s in j["settings"].items()]


def test_records_html_needs_exact_contributions(folder):
    """--by suda printed its text for --format html; like --by influence it is refused (exit 2)."""
    for by in ("suda", "influence"):
        r = CliRunner().invoke(cli, [*demo_args(folder, "records", "--by", by, "-q"), "-f", "html"])
        assert r.exit_code == 2 and f"not --by {by}" in r.output and "Traceback" not in r.output, r.output


def test_report(folder):
    """qar report --format csv writes the audit's QIs to -o, the table qar audit --format csv prints."""
    out = folder / "report.csv"
    args = demo_args(folder, "report", "-p", "2", "--no-records", "--no-classic", "-q", "-o", str(out), "-f", "csv")
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, r.output
    assert out.read_text() == run(demo_args(folder, "audit", "-p", "2", "-q"), "csv")


# --- the registry of renderers ------------------------------------------------------------------


def returned_types(module) -> set[type]:
    """The result types a command's ``run`` returns, from its return annotation (a string under
    ``from __future__ import annotations``; names imported under TYPE_CHECKING are imported here)."""
    names = dict(vars(module))
    for node in ast.parse(inspect.getsource(module)).body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            exec(compile(ast.Module(body=node.body, type_ignores=[]), module.__file__, "exec"), names)
    hint = module.run.__annotations__["return"]
    hint = eval(hint, names) if isinstance(hint, str) else hint
    return set(typing.get_args(hint)) or {hint}


def offered() -> list[tuple[str, type, str]]:
    """(command, result type, format) for every format of every command with --format."""
    found = []
    for info in pkgutil.iter_modules(qar_sql.commands.__path__):
        module = importlib.import_module(f"qar_sql.commands.{info.name}")
        command = cli.commands.get(getattr(module, "NAME", ""))
        option = next((p for p in command.params if p.name == "fmt"), None) if command else None
        if option is None or command.name == "report":  # qar sql prints SQL; qar report writes
            continue  # its page from its own inputs (output/html.py: write_report), not through render()
        found += [
            (command.name, t, fmt)
            for t in sorted(returned_types(module), key=lambda t: t.__name__)
            for fmt in option.type.choices
        ]
    return found


OFFERED = offered()


def test_every_command_with_format_is_checked():
    assert {c for c, _, _ in OFFERED} == {
        *("audit", "demo", "records", "eliminate", "discover", "whatif", "risk", "uniqueness", "compare"),
        *("scan", "history", "migrate", "config", "anonymize"),
    }
    assert {t.__name__ for c, t, _ in OFFERED if c == "records"} == {"Contributions", "Influence", "SudaRecords"}


@pytest.mark.parametrize(("command", "result_type", "fmt"), OFFERED, ids=lambda x: getattr(x, "__name__", x))
def test_every_result_renders_in_every_format_its_command_offers(command, result_type, fmt):
    """A new result type without a renderer, or a new format without one, fails here."""
    if FORMATS[fmt].from_table is not None:  # generic: from the table every result has
        assert issubclass(result_type, Tabular), f"{type_name(result_type)} has no table_columns()"
    elif fmt == "json" or (fmt == "markdown" and renderer(result_type, fmt) is None):  # generic: its own data
        assert callable(getattr(result_type, "to_dict", None)), f"{type_name(result_type)} has no to_dict()"
    elif fmt == "html" and renderer(result_type, fmt) is None:  # the command's report, built from its run
        source = inspect.getsource(cli.commands[command].callback)
        assert "html=" in source, f"qar {command} offers html but neither registers nor builds a report"
    else:
        assert renderer(result_type, fmt) is not None, f"no {fmt} renderer for {type_name(result_type)}"


@pytest.mark.parametrize("name", sorted(RENDERED_IN))
def test_each_module_named_registers_its_type(name):
    """RENDERED_IN names real types, and the module it names registers each."""
    module, _, cls = name.rpartition(".")
    result_type = getattr(importlib.import_module(module), cls)
    assert any(renderer(result_type, fmt) for fmt in FORMATS), name


def test_every_registration_is_found_from_its_type():
    """Every type a module of qar_sql/output registers renderers for is in RENDERED_IN, naming that
    module: else its renderers are found only once something else has imported the module."""
    for info in pkgutil.iter_modules(qar_sql.output.__path__):
        importlib.import_module(f"qar_sql.output.{info.name}")
    ours = {(name, fn.__module__) for (name, _), fn in RENDERERS.items() if fn.__module__.startswith("qar_sql.")}
    assert ours and {name for name, _ in ours} == set(RENDERED_IN)
    for name, module in ours:
        assert f"qar_sql.output.{RENDERED_IN[name]}" == module, name


@dataclass(frozen=True)
class Shouted(Tabular):
    words: tuple[str, ...]
    table_at = ("words",)

    def to_dict(self) -> dict[str, list]:
        return {"words": [{"word": w} for w in self.words]}


@dataclass(frozen=True)
class Whispered(Shouted):
    pass


@renders(Shouted, "text", "markdown")
def shout(r: Shouted, fmt: str, *, mark: str = "!") -> str:
    return " ".join(w.upper() for w in r.words) + mark + ("\n" if fmt == "text" else "  \n")


@renders(Whispered, "text")
def whisper(r: Whispered, fmt: str, *, mark: str = "…") -> str:
    return " ".join(r.words) + mark + "\n"


def test_a_type_renders_as_registered_and_a_subclass_as_its_nearest_base():
    assert render(Shouted(("a", "b")), "text", mark="?") == "A B?\n"
    assert render(Whispered(("a", "b")), "text") == "a b…\n"  # its own
    assert render(Whispered(("a",)), "markdown") == "A!  \n"  # its base's
    assert render(Whispered(("a", "b")), "csv") == "word\na\nb\n"  # generic, from its table
    with pytest.raises(UsageError, match="--format json is not offered"):
        render(object(), "json")  # no to_dict()
    assert render(Shouted(("a",)), "html", html=lambda: "<p>report</p>") == "<p>report</p>"
