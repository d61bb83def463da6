"""A command is one object (qar_sql/command.py): the click command and the Python API function
are made from its parameter dataclass, so each option is one field with its help, and a rule
(--fail-above's) is checked in one place."""

from __future__ import annotations

import dataclasses
import inspect
import json
import re

import click
import pytest
from click.testing import CliRunner

import qar_sql
from qar_sql.cli.main import cli
from qar_sql.command import cli_command
from qar_sql.commands import anonymize as anonymize_command
from qar_sql.commands import audit as audit_command
from qar_sql.commands import demo as demo_command
from qar_sql.commands import discover as discover_command
from qar_sql.commands import eliminate as eliminate_command
from qar_sql.commands import history as history_command
from qar_sql.commands import migrate as migrate_command
from qar_sql.commands import records as records_command
from qar_sql.commands import release
from qar_sql.commands import risk as risk_command
from qar_sql.commands import scan as scan_command
from qar_sql.commands import settings as config_command
from qar_sql.commands import sql as sql_command
from qar_sql.commands import uniqueness as uniqueness_command
from qar_sql.commands import whatif as whatif_command
from qar_sql.errors import ParameterError, UsageError
from qar_sql.parameters.fields import SourceOptions, meta_of

CONVERTED = [
    audit_command.COMMAND,
    risk_command.COMMAND,
    uniqueness_command.COMMAND,
    records_command.COMMAND,
    eliminate_command.COMMAND,
    discover_command.COMMAND,
    whatif_command.COMMAND,
    release.COMPARE,
    release.REPORT,
    anonymize_command.COMMAND,
    sql_command.COMMAND,
    demo_command.COMMAND,
    history_command.COMMAND,
    migrate_command.COMMAND,
    scan_command.COMMAND,
    config_command.COMMAND,
]
#: The converted commands whose function of the Python API (qar_sql.<name>) is made from them
#: (qar_sql.scan is scan_config, whose keywords predate the command's fields: the test below).
IN_API = [c for c in CONVERTED if c.name in qar_sql.__all__ and c.name != "scan"]


@pytest.mark.parametrize("cmd", IN_API, ids=lambda c: c.name)
def test_the_api_signature_is_the_fields_and_the_source_options(cmd):
    signature = inspect.signature(getattr(qar_sql, cmd.name))
    positional = (*cmd.arguments, *cmd.api_arguments)
    own = [f for f in dataclasses.fields(cmd.Params) if f.name not in positional]
    where = [f for f in dataclasses.fields(SourceOptions) if f.name in cmd.source and f.name != "source"]
    expected = [*positional, *(f.name for f in (*own, *where)), "progress"]
    assert list(signature.parameters) == expected
    for f in (*own, *where):
        parameter = signature.parameters[f.name]
        assert parameter.kind is inspect.Parameter.KEYWORD_ONLY
        required = f.default is dataclasses.MISSING  # (uniqueness's group_size, whatif's treatments)
        assert parameter.default == (inspect.Parameter.empty if required else f.default)
    for name in cmd.arguments:
        assert signature.parameters[name].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD


def test_the_api_keywords_of_compare_and_report_are_those_users_call():
    """The keywords the hand-written signatures had, each with its default (generated now)."""
    compare = inspect.signature(qar_sql.compare).parameters
    assert list(compare)[:2] == ["original", "treated"]
    before = {
        "table": None, "treated_table": None, "treatments": None, "link": None, "aligned": False, "columns": None,
        "exclude": None, "categorical": None, "components": None, "attacker_columns": None, "target": None, "p": 3,
        "alpha": 0.01, "pi_u": 0.05, "pwm": "plotting", "risk": True, "cloaking": True, "anonymeter": False,
        "anonymeter_attacks": 500, "delimiter": None, "null_tokens": (), "impute": "none", "batch_rows": 65536,
        "threads": None, "jobs": 2, "progress": None, "figures": False,
    }  # fmt: skip
    assert {name: compare[name].default for name in before} == before
    report = inspect.signature(qar_sql.report).parameters
    assert list(report)[0] == "source" and report["output"].default is None
    for name in ("table", "delimiter", "null_tokens", "k", "key", "compare", "classic", "threshold", "anonymize"):
        assert report[name].kind is inspect.Parameter.KEYWORD_ONLY, name


@pytest.mark.parametrize("cmd", CONVERTED, ids=lambda c: c.name)
def test_every_click_option_is_one_field_or_one_output_option(cmd):
    fields = cmd.fields()
    command = cli.commands[cmd.name]
    names = [p.name for p in command.params if isinstance(p, click.Option) and p.expose_value]
    assert len(names) == len(set(names))
    for name in names:
        assert (name in fields) != (name in cmd.outputs), name
    on_cli = {n for n, (_, meta) in fields.items() if meta.cli}
    assert on_cli <= set(names)


@pytest.mark.parametrize("cmd", IN_API, ids=lambda c: c.name)
def test_every_field_has_help(cmd):
    """Each keyword of a generated API function is documented (its option's help; cli=False: the API's own)."""
    for f in (*dataclasses.fields(cmd.Params), *dataclasses.fields(SourceOptions)):
        meta = meta_of(f)
        assert meta is not None and meta.help.strip(), f"{f.name} has no option help"


@pytest.mark.parametrize("cmd", CONVERTED, ids=lambda c: c.name)
def test_the_click_defaults_are_the_dataclass_defaults(cmd):
    command = cli_command(cmd)
    fields = cmd.fields()
    for p in command.params:
        if (
            isinstance(p, click.Option)
            and p.name in fields
            and isinstance(fields[p.name][0].default, int | float | str)
        ):
            default = fields[p.name][0].default
            # An "off" flag (--no-risk) is unset by default: the field's default is its negation.
            assert p.default == (not default if fields[p.name][1].kind == "off" else default), p.name


def test_fail_above_is_checked_once_for_the_api_and_the_command_line(tmp_path):
    """One check, in AuditParams' field: the API and `qar audit` (also with --show-sql) give its sentence."""
    message = "--fail-above 1.5 must be a risk between 0 and 1, e.g. 0.05"
    with pytest.raises(ParameterError, match=message):
        audit_command.AuditParams(fail_above=1.5)
    with pytest.raises(ParameterError, match="fail_above=1.5 must be a risk between 0 and 1, e.g. 0.05"):
        qar_sql.audit(str(tmp_path / "none.csv"), fail_above=1.5)  # (the API names the keyword)
    for extra in ([], ["--show-sql", "-c", "a,b"]):
        result = CliRunner().invoke(cli, ["audit", str(tmp_path / "none.csv"), "--fail-above", "1.5", *extra])
        assert result.exit_code == 2
        assert message in result.output


def test_the_verdict_is_the_commands(tmp_path):
    """--fail-above and --min-exceedances judge the result in commands/audit.verdict only."""
    path = tmp_path / "t.csv"
    path.write_text("a,b,c\n" + "".join(f"{i % 7},{i % 3},{i % 5}\n" for i in range(60)))
    result = qar_sql.audit(str(path), p=2, pi_u=0.4, alpha=0.1, bootstrap=0)
    above = audit_command.verdict(result, audit_command.AuditParams(p=2, fail_above=0.0))
    assert int(above) == 1 and "above the threshold" in above.reason
    assert audit_command.verdict(result, audit_command.AuditParams(p=2, fail_above=1.0)) == 0
    run = CliRunner().invoke(
        cli,
        [
            "audit",
            str(path),
            "-p",
            "2",
            "--pi-u",
            "0.4",
            "--alpha",
            "0.1",
            "--bootstrap",
            "0",
            "--fail-above",
            "0",
            "-q",
        ],
    )
    assert run.exit_code == 1


def test_a_session_keeps_the_sql_it_rendered(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("a,b\n1,2\n3,4\n")
    with qar_sql.connect(str(path)) as s:
        with s.logging_sql() as log:
            qar_sql.audit(s, p=1, pi_u=0.9, alpha=0.5, bootstrap=0)
        assert log is s.sql_log and any("select" in statement for statement in log)
        after = len(s.sql_log)
        qar_sql.audit(s, p=1, pi_u=0.9, alpha=0.5, bootstrap=0)
        assert len(s.sql_log) == after  # only while logging_sql is open


def test_the_files_hook_guards_the_api_and_the_command_line_alike(tmp_path):
    """risk's --per-record may not be its source: one hook (COMMAND.files), one sentence, both ways."""
    path = tmp_path / "t.csv"
    path.write_text("a,b\n1,2\n3,4\n")
    before = path.read_text()
    message = f"--per-record {str(path)!r} is the source file itself"
    # the API's sentence names its keyword where the command line names the flag
    with pytest.raises(UsageError, match=re.escape(f"per_record={str(path)!r} is the source file itself")):
        qar_sql.risk(str(path), per_record=str(path))
    result = CliRunner().invoke(cli, ["risk", str(path), "--per-record", str(path), "-q"])
    assert result.exit_code == 2 and message in result.output
    assert path.read_text() == before


def test_a_field_without_a_default_is_a_required_keyword_and_option():
    """uniqueness's group_size: the API's keyword has no default; the command line names the option."""
    parameter = inspect.signature(qar_sql.uniqueness).parameters["group_size"]
    assert parameter.default is inspect.Parameter.empty
    with pytest.raises(TypeError, match="group_size"):
        qar_sql.uniqueness("none.csv")
    result = CliRunner().invoke(cli, ["uniqueness", "none.csv", "-q"])
    assert result.exit_code == 2 and "Missing option '--group-size' / '-g'" in result.output


def test_a_field_without_default_is_a_required_option(tmp_path):
    """whatif's treatments: a required keyword of the API and a required option of the command line."""
    with pytest.raises(TypeError, match="treatments"):
        qar_sql.whatif(str(tmp_path / "t.csv"))  # type: ignore[call-arg]
    result = CliRunner().invoke(cli, ["whatif", str(tmp_path / "t.csv")])
    assert result.exit_code == 2
    assert "Missing option '--treatments' / '-T'" in result.output


@pytest.mark.parametrize(
    ("args", "env", "risk", "loss"),
    [
        ([], {}, True, True),
        (["--no-risk"], {}, False, True),
        (["--no-loss"], {}, True, False),
        ([], {"QAR_NO_RISK": "1", "QAR_NO_LOSS": "0"}, False, True),
    ],
)
def test_an_off_flag_turns_its_field_off(args, env, risk, loss, monkeypatch):
    """--no-risk (or QAR_NO_RISK=1) is risk=False, as the API's keyword."""
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    command = cli.commands["whatif"]
    ctx = command.make_context("whatif", ["t.csv", "-T", "t.toml", *args])
    assert (ctx.params["risk"], ctx.params["loss"]) == (risk, loss)


def test_combine_takes_names_or_a_text_of_names():
    """--combine a,b (a text) and the API's ("a", "b") are one combination."""
    params = whatif_command.WhatIfParams(treatments="t.toml", combine=["a, b", ("c", "d"), "e"])
    assert params.combine == (("a", "b"), ("c", "d"), ("e",))
    assert whatif_command.WhatIfParams(treatments="t.toml").combine is None


def test_report_asks_for_its_output_and_compare_takes_two_sources(tmp_path):
    """-o is required on the command line (not in the API); ORIGINAL and TREATED are compare's
    two positional arguments, ORIGINAL read from $QAR_DATABASE_URL when left out."""
    path = tmp_path / "t.csv"
    path.write_text("a,b\n1,2\n3,4\n")
    missing = CliRunner().invoke(cli, ["report", str(path), "-q"])
    assert missing.exit_code == 2 and "Missing option '--output' / '-o'" in missing.output
    params = [p for p in cli.commands["compare"].params if isinstance(p, click.Argument)]
    assert [(p.name, p.envvar) for p in params] == [("original", "QAR_DATABASE_URL"), ("treated", None)]
    assert list(inspect.signature(qar_sql.compare).parameters)[:2] == ["original", "treated"]


def test_a_command_without_source_takes_no_argument_and_no_session(tmp_path):
    """qar demo: no SOURCE on the command line; its run gets None and opens the file it writes."""
    assert not [p for p in cli.commands["demo"].params if isinstance(p, click.Argument)]
    assert [p.name for p in cli.commands["sql"].params if isinstance(p, click.Argument)] == ["source"]
    path = str(tmp_path / "d.duckdb")
    run = CliRunner().invoke(cli, ["demo", "--path", path, "--rows", "300", "-p", "1", "--pi-u", "0.5", "-q"])
    assert run.exit_code == 0, run.output
    assert "population" in run.output


def test_report_takes_the_search_options_of_the_anonymize_fields():
    """qar report --anonymize's search options are AnonymizeParams' fields, as qar anonymize's."""
    from qar_sql.commands.search_options import SEARCH

    def options(name):
        return {p.name: p for p in cli.commands[name].params if isinstance(p, click.Option)}

    anonymize, report = options("anonymize"), options("report")
    for name in SEARCH:
        if name in ("k", "sensitive"):  # the report's own serve the search
            continue
        assert report[name].help == anonymize[name].help == meta_of(anonymize_command.COMMAND.fields()[name][0]).help
        assert report[name].default == anonymize[name].default


def test_a_value_the_field_cannot_parse_is_a_usage_error(tmp_path):
    """--hierarchy's parse (COLUMN=FILE) refuses with click's usage error, naming the value."""
    run = CliRunner().invoke(cli, ["anonymize", str(tmp_path / "t.csv"), "--hierarchy", "age", "--k", "5"])
    assert run.exit_code == 2
    assert "'age' names no column; write --hierarchy COLUMN=FILE" in run.output
    assert anonymize_command.AnonymizeParams(hierarchy=(("age", "a.csv"),), k=5).hierarchy_items == [("age", "a.csv")]
    assert anonymize_command.AnonymizeParams(hierarchy={"age": "a.csv"}, k=5).hierarchy_items == [("age", "a.csv")]


def test_the_scan_api_keeps_its_keywords_and_config_is_a_file_argument(tmp_path, monkeypatch):
    """qar_sql.scan (scan_config) keeps the keywords users call; qar scan's CONFIG is a file and,
    unlike a SOURCE, does not read $QAR_DATABASE_URL (--url does)."""
    signature = inspect.signature(qar_sql.scan)
    assert list(signature.parameters) == ["config", "store", "record", "jobs", "environ", "progress", "on_outcome"]
    assert [signature.parameters[n].default for n in ("store", "record", "jobs", "environ")] == [None, None, 2, None]
    (argument,) = [p for p in cli.commands["scan"].params if isinstance(p, click.Argument)]
    assert argument.name == "config" and argument.envvar is None and isinstance(argument.type, click.Path)
    monkeypatch.setenv("QAR_DATABASE_URL", str(tmp_path / "w.duckdb"))
    run = CliRunner().invoke(cli, ["scan", str(tmp_path)])
    assert run.exit_code == 2 and "is a directory" in run.output
    run = CliRunner().invoke(cli, ["scan"])
    assert run.exit_code == 2 and "name a scan config (qar scan qar.toml)" in run.output


def test_config_checks_a_file_instead_of_printing_and_reads_the_groups_config(tmp_path):
    """qar config --check FILE prints its one sentence whatever --format (the preview hook); without
    --check, the config the qar group was given (--config) is the one run resolves."""
    path = tmp_path / "d.toml"
    path.write_text("[defaults]\np = 2\n")
    r = CliRunner().invoke(cli, ["config", "--check", str(path), "-f", "json"])
    assert r.exit_code == 0 and r.output == (
        f"{path}: valid defaults (qar scan's checks); it has no [[scan]], so qar scan "
        "would refuse it: add one to scan with it\n"
    )
    r = CliRunner().invoke(cli, ["--config", str(path), "config", "-f", "json"])
    got = json.loads(r.output)
    assert r.exit_code == 0 and got["config_file"] == str(path)
    assert got["settings"]["p"] == {"value": 2, "origin": f"{path} [defaults]", "env": "QAR_P"}
