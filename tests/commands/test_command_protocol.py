"""A command is one object (qar_sql/command.py): the click command and the Python API function
are made from its parameter dataclass, so each option is one field with its help, and a rule
(--fail-above's) is checked in one place."""

from __future__ import annotations

import dataclasses
import inspect

import click
import pytest
from click.testing import CliRunner

import qar_sql
from qar_sql.cli.main import cli
from qar_sql.command import cli_command
from qar_sql.commands import anonymize as anonymize_command
from qar_sql.commands import audit as audit_command
from qar_sql.commands import demo as demo_command
from qar_sql.commands import sql as sql_command
from qar_sql.errors import ParameterError
from qar_sql.parameters.fields import SourceOptions, meta_of

CONVERTED = [audit_command, anonymize_command, sql_command, demo_command]
#: The converted commands that are a function of the Python API (qar_sql.<name>).
IN_API = [m for m in CONVERTED if m.NAME in qar_sql.__all__]


@pytest.mark.parametrize("module", IN_API, ids=lambda m: m.NAME)
def test_the_api_signature_is_the_fields_and_the_source_options(module):
    cmd = module.COMMAND
    signature = inspect.signature(getattr(qar_sql, cmd.name))
    own = dataclasses.fields(cmd.Params)
    where = [f for f in dataclasses.fields(SourceOptions) if f.name in cmd.source and f.name != "source"]
    expected = ["source", *(f.name for f in (*own, *where)), "progress"]
    assert list(signature.parameters) == expected
    for f in (*own, *where):
        parameter = signature.parameters[f.name]
        assert parameter.kind is inspect.Parameter.KEYWORD_ONLY
        assert parameter.default == f.default
    assert signature.parameters["source"].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD


@pytest.mark.parametrize("module", CONVERTED, ids=lambda m: m.NAME)
def test_every_click_option_is_one_field_or_one_output_option(module):
    cmd = module.COMMAND
    fields = cmd.fields()
    command = cli.commands[cmd.name]
    names = [p.name for p in command.params if isinstance(p, click.Option) and p.expose_value]
    assert len(names) == len(set(names))
    for name in names:
        assert (name in fields) != (name in cmd.outputs), name
    on_cli = {n for n, (_, meta) in fields.items() if meta.cli}
    assert on_cli <= set(names)


@pytest.mark.parametrize("module", CONVERTED, ids=lambda m: m.NAME)
def test_every_field_has_help(module):
    for f in (*dataclasses.fields(module.COMMAND.Params), *dataclasses.fields(SourceOptions)):
        meta = meta_of(f)
        assert meta is not None and meta.help.strip(), f"{f.name} has no option help"


@pytest.mark.parametrize("module", CONVERTED, ids=lambda m: m.NAME)
def test_the_click_defaults_are_the_dataclass_defaults(module):
    cmd = module.COMMAND
    command = cli_command(cmd)
    fields = cmd.fields()
    for p in command.params:
        if (
            isinstance(p, click.Option)
            and p.name in fields
            and isinstance(fields[p.name][0].default, int | float | str)
        ):
            assert p.default == fields[p.name][0].default, p.name


def test_fail_above_is_checked_once_for_the_api_and_the_command_line(tmp_path):
    """One check, in AuditParams' field: the API and `qar audit` (also with --show-sql) give its sentence."""
    message = "--fail-above 1.5 must be a risk between 0 and 1, e.g. 0.05"
    with pytest.raises(ParameterError, match=message):
        audit_command.AuditParams(fail_above=1.5)
    with pytest.raises(ParameterError, match=message):
        qar_sql.audit(str(tmp_path / "none.csv"), fail_above=1.5)
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
    from qar_sql.cli.search_options import SEARCH

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
