"""The command line's help and variables (issue 14, items 4 and 6): every command's ``--help``
ends with examples that parse, and every option's ``QAR_<OPTION>`` variable gives the option the
same value as writing it on the command line — checked for every option of every command."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from qar_sql.cli.examples import EXAMPLES
from qar_sql.cli.main import cli
from qar_sql.params import NO_ENVVAR


def _commands() -> dict[tuple[str, ...], click.Command]:
    """Every command by its path (the group itself as ``()``)."""
    out: dict[tuple[str, ...], click.Command] = {(): cli}

    def walk(group: click.Group, path: tuple[str, ...]) -> None:
        for name, sub in group.commands.items():
            out[(*path, name)] = sub
            if isinstance(sub, click.Group):
                walk(sub, (*path, name))

    walk(cli, ())
    return out


COMMANDS = _commands()
ROOT = Path(__file__).resolve().parents[1]


def _parse(path: tuple[str, ...], args: list[str]) -> dict:
    """The parameters click gives ``path``'s command for ``args``, without running it."""
    if not path:  # the group's own options, before a command
        with cli.make_context("qar", [*args, "config"]) as ctx:
            return dict(ctx.params)
    ctx = click.Context(cli, info_name="qar")
    command: click.Command = cli
    for name in path:
        command = command.commands[name]  # type: ignore[attr-defined]
        ctx = command.make_context(name, list(args) if name == path[-1] else [], parent=ctx)
    return dict(ctx.params)


@pytest.mark.parametrize("name", sorted(n for p in COMMANDS for n in p[:1]))
def test_help_ends_with_examples_that_parse(name, monkeypatch):
    monkeypatch.chdir(ROOT)  # the examples name examples/treatments.toml
    result = CliRunner().invoke(cli, [name, "--help"], terminal_width=200)
    assert result.exit_code == 0
    assert "Examples:" in result.output
    assert name in EXAMPLES, f"qar {name} has no examples in qar_sql/cli/examples.py"
    for line in EXAMPLES[name]:
        assert f"  {line}" in result.output  # not re-wrapped
        words = shlex.split(line)
        while "=" in words[0]:  # a leading VAR=value
            words.pop(0)
        assert words[:2] == ["qar", name], line
        _parse((name,), words[2:])  # raises on an unknown option or a bad value


#: Values for options whose type alone does not say what a valid value looks like.
VALUES = {
    "max": "10%",
    "by": "u_plus",
    "order": "x=x.csv",
    "fail_below": "hidden_rate=0.9",
    "components": "3",
    "link": "id",
    "combine": "a,b",
    "weight": "w",
}


def _value(option: click.Option) -> str:
    """A valid value for ``option`` other than its default, as it is written."""
    if option.name in VALUES:
        return VALUES[option.name]
    t = option.type
    if isinstance(t, click.Choice):
        return next(str(c) for c in t.choices if str(c).lower() != str(option.default).lower())
    if isinstance(t, click.IntRange | click.FloatRange):
        low = 0 if t.min is None else t.min
        value = low + 1 if t.min_open or low == option.default else low
        return str(value)
    if isinstance(t, click.types.IntParamType):
        return str((option.default if isinstance(option.default, int) else 0) + 1)
    if isinstance(t, click.types.FloatParamType):
        return "0.25"
    if isinstance(t, click.Path):
        if not t.file_okay:  # a folder (scan --report-dir)
            return "examples"
        return "examples/treatments.toml"  # exists (some options want an existing file)
    return "a,b"


def _options():
    for path, command in COMMANDS.items():
        for option in command.params:
            if isinstance(option, click.Option) and option.name not in NO_ENVVAR:
                yield path, option


OPTIONS = list(_options())


@pytest.mark.parametrize("path,option", OPTIONS, ids=[f"{' '.join(p) or 'qar'} {o.opts[-1]}" for p, o in OPTIONS])
def test_every_variable_gives_the_option_its_value(path, option, monkeypatch):
    monkeypatch.chdir(ROOT)  # where examples/treatments.toml is
    names = [option.envvar] if isinstance(option.envvar, str) else list(option.envvar or ())
    assert names and all(n.startswith("QAR_") for n in names)
    assert option.show_envvar  # `[env var: QAR_…]` in --help
    # New names are QAR_ + the long flag (params.envvar_of); older ones are kept as they were
    # (QAR_DATABASE_URL for SOURCE, QAR_RISK_P for qar risk's -p, which is not the QaR p).
    for key in [k for k in os.environ if k.startswith("QAR_")]:
        monkeypatch.delenv(key)
    # The other required options, so that only the one under test varies.
    required = []
    for other in COMMANDS[path].params:
        if isinstance(other, click.Option) and other.required and other is not option:
            required += [other.opts[0], _value(other)]
    flag = [o for o in option.opts if o.startswith("--")][0]
    if option.is_flag or option.count:
        written, env_value = [flag], "1"
    else:
        value = _value(option)
        written, env_value = [flag, value], value
    by_flag = _parse(path, required + written)[option.name]
    if not option.required:
        assert by_flag != _parse(path, required)[option.name]  # the value is not the default
    monkeypatch.setenv(names[0], env_value)
    assert _parse(path, required)[option.name] == by_flag
