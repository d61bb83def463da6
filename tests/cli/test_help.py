"""The command line's help and variables (issue 14, items 4 and 6): every command's ``--help``
ends with examples that parse, and every option's ``QAR_<OPTION>`` variable gives the option the
same value as writing it on the command line — checked for every option of every command."""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from qar_sql.cli.examples import EXAMPLES
from qar_sql.cli.main import cli
from qar_sql.cli_options import NO_ENVVAR


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
ROOT = Path(__file__).resolve().parents[2]


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
    "row_subsamples": "0.25,0.5",
    "hierarchy": "age=age.csv",
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
            # (hidden: a deprecated spelling, or -v/--log-level after a command, read by the group)
            if isinstance(option, click.Option) and option.name not in NO_ENVVAR and not option.hidden:
                yield path, option


OPTIONS = list(_options())


@pytest.mark.parametrize("path,option", OPTIONS, ids=[f"{' '.join(p) or 'qar'} {o.opts[-1]}" for p, o in OPTIONS])
def test_every_variable_gives_the_option_its_value(path, option, monkeypatch):
    monkeypatch.chdir(ROOT)  # where examples/treatments.toml is
    names = [option.envvar] if isinstance(option.envvar, str) else list(option.envvar or ())
    assert names and all(n.startswith("QAR_") for n in names)
    assert option.show_envvar  # `[env var: QAR_…]` in --help
    # New names are QAR_ + the long flag (params.envvar_of); older ones are kept as they were
    # (QAR_DATABASE_URL for SOURCE).
    for key in [k for k in os.environ if k.startswith("QAR_")]:
        monkeypatch.delenv(key)
    # The other required options, so that only the one under test varies.
    required = []
    for other in COMMANDS[path].params:
        if isinstance(other, click.Option) and other.required and other is not option:
            required += [other.opts[0], _value(other)]
    flag = [o for o in option.opts if o.startswith("--")][0]
    if option.is_flag and option.secondary_opts and option.default is True:  # --x/--no-x, on by default
        written, env_value = [option.secondary_opts[0]], "0"
    elif option.is_flag or option.count:
        written, env_value = [flag], "1"
    else:
        value = _value(option)
        written, env_value = [flag, value], value
    by_flag = _parse(path, required + written)[option.name]
    if not option.required:
        assert by_flag != _parse(path, required)[option.name]  # the value is not the default
    monkeypatch.setenv(names[0], env_value)
    assert _parse(path, required)[option.name] == by_flag


def _all_options():
    for path, command in COMMANDS.items():
        for option in command.params:
            if isinstance(option, click.Option) and not option.hidden:
                yield path, option


def test_a_short_flag_means_one_long_option_everywhere():
    """-k was --key in records, risk and report but --group-size in uniqueness (issue 31); -T was
    --treatments in whatif and uniqueness but missing on report and compare."""
    meaning: dict[str, set[str]] = {}
    for _path, option in _all_options():
        longs = [o for o in option.opts if o.startswith("--")]
        for short in [o for o in option.opts if not o.startswith("--")]:
            meaning.setdefault(short, set()).add(longs[0])
    clashes = {short: sorted(longs) for short, longs in meaning.items() if len(longs) > 1}
    # -p is --p everywhere but qar risk's (--qi-size: every key column by default, not 3); -s
    # (discover's --max-size, risk's --sensitive) is older and left for now.
    assert clashes == {"-p": ["--p", "--qi-size"], "-s": ["--max-size", "--sensitive"]}, clashes
    for path, option in _all_options():
        if option.name == "treatments":
            assert "-T" in option.opts, f"qar {' '.join(path)} --treatments has no -T"
        if option.name == "group_size":
            assert "-g" in option.opts, f"qar {' '.join(path)} --group-size has no -g"


def test_uniqueness_k_still_works_with_a_deprecation_note(tmp_path):
    source = tmp_path / "t.csv"
    source.write_text("a,b\n" + "".join(f"{i % 3},{i % 5}\n" for i in range(30)))
    args = ["uniqueness", str(source), "-p", "1", "-f", "json", "-q"]
    by_g = CliRunner().invoke(cli, [*args, "-g", "4"])
    assert by_g.exit_code == 0, by_g.output
    by_k = CliRunner().invoke(cli, [*args, "-k", "4"])
    assert by_k.exit_code == 0, by_k.output
    assert json.loads(by_k.stdout)["group_size"] == json.loads(by_g.stdout)["group_size"] == 4
    assert "-k for --group-size is deprecated" in by_k.stderr and "-g" in by_k.stderr
    assert "deprecated" not in by_g.stderr
    both = CliRunner().invoke(cli, [*args, "-g", "4", "-k", "5"])
    assert both.exit_code == 2 and "-k" in both.output and "--group-size" in both.output
    missing = CliRunner().invoke(cli, args)
    assert missing.exit_code == 2 and "--group-size" in missing.output


def test_risk_qi_size_variable_follows_the_rule(tmp_path, monkeypatch):
    """qar risk's -p reads QAR_QI_SIZE (QAR_ and its long flag, as every option); QAR_RISK_P is
    still read, with a deprecation note on stderr (issue 31)."""
    for key in [k for k in os.environ if k.startswith("QAR_")]:
        monkeypatch.delenv(key)
    risk = COMMANDS[("risk",)]
    option = next(p for p in risk.params if p.name == "p")
    assert option.envvar == "QAR_QI_SIZE" and "--qi-size" in option.opts and "--p" in option.opts
    source = tmp_path / "t.csv"
    source.write_text("a,b,c\n" + "".join(f"{i % 3},{i % 5},{i % 7}\n" for i in range(30)))
    args = ["risk", str(source), "-f", "json", "-q"]

    def n_qi(result):
        assert result.exit_code == 0, result.output
        return len(json.loads(result.stdout)["qis"])

    assert n_qi(CliRunner().invoke(cli, args)) == 1  # every column, one QI
    assert n_qi(CliRunner().invoke(cli, args, env={"QAR_QI_SIZE": "2"})) == 3
    old = CliRunner().invoke(cli, args, env={"QAR_RISK_P": "2"})
    assert n_qi(old) == 3 and "QAR_RISK_P is deprecated; set QAR_QI_SIZE" in old.stderr
    assert n_qi(CliRunner().invoke(cli, args, env={"QAR_RISK_P": "1", "QAR_QI_SIZE": "2"})) == 3
    typed = CliRunner().invoke(cli, [*args, "-p", "2"], env={"QAR_RISK_P": "1"})
    assert n_qi(typed) == 3 and "deprecated" not in typed.stderr
    assert n_qi(CliRunner().invoke(cli, [*args, "--p", "2"])) == 3  # the old long flag still works
    bad = CliRunner().invoke(cli, args, env={"QAR_RISK_P": "two"})
    assert bad.exit_code == 2 and "QAR_RISK_P" in bad.output and "'two'" in bad.output
