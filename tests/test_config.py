"""Configuration (issue 14, item 4): every option's QAR_ variable, qar.toml / [tool.qar]
discovery and precedence, and ``qar config`` with secrets masked."""

from __future__ import annotations

import json
import re

import click
import pytest
from click.testing import CliRunner

from qar_sql import config_file as qar_config
from qar_sql.cli.main import cli
from qar_sql.errors import UsageError
from tests.conftest import SMALL_TABLE

DATA = SMALL_TABLE


@pytest.fixture
def table(duck, monkeypatch, tmp_path):
    source, name = duck.load("t", DATA)
    monkeypatch.chdir(tmp_path)  # no config file above tmp_path (checked below)
    assert qar_config.find().path is None
    return source, name


def _audit_json(args, env=None):
    result = CliRunner().invoke(cli, ["audit", *args, "--format", "json", "--pi-u", "0.5"], env=env)
    assert result.exit_code in (0, 2) and result.stdout, result.output
    return json.loads(result.stdout)


# A sample of variables taking effect: each changes what the audit reports.
@pytest.mark.parametrize(
    "env,check",
    [
        ({"QAR_FORMAT": "json"}, None),
        ({"QAR_COLUMNS": "a,b,c"}, lambda r: r["columns"] == ["a", "b", "c"]),
        ({"QAR_EXCLUDE": "d"}, lambda r: r["columns"] == ["a", "b", "c"]),
        ({"QAR_P": "1"}, lambda r: r["p"] == 1),
        ({"QAR_K": "3"}, lambda r: r["k"] == 3),
        ({"QAR_ALPHA": "0.02"}, lambda r: r["alpha"] == 0.02),
    ],
    ids=lambda v: ",".join(v) if isinstance(v, dict) else "",
)
def test_a_variable_takes_effect(table, env, check):
    source, name = table
    if check is None:  # QAR_FORMAT: no --format on the command line
        result = CliRunner().invoke(cli, ["audit", source, "--table", name, "-p", "1", "--pi-u", "0.5"], env=env)
        assert json.loads(result.stdout)["rows"] == 8
        return
    assert check(_audit_json([source, "--table", name, "-p", "2"] if "QAR_P" not in env else [source, "-t", name], env))


def test_choice_and_threshold_variables(table):
    source, name = table
    args = ["audit", source, "--table", name, "-p", "2", "--pi-u", "0.5"]
    bad = CliRunner().invoke(cli, args, env={"QAR_PWM": "nonsense"})
    assert bad.exit_code == 2 and "--pwm" in bad.output and "nonsense" in bad.output
    assert CliRunner().invoke(cli, args, env={"QAR_FAIL_ABOVE": "0.000001"}).exit_code == 1
    assert CliRunner().invoke(cli, args, env={"QAR_FAIL_ABOVE": "1"}).exit_code == 0


def test_the_command_line_wins_over_the_variable(table):
    source, name = table
    out = _audit_json([source, "--table", name, "-p", "2"], env={"QAR_P": "1"})
    assert out["p"] == 2


def test_top_key_and_by_have_variables(duck, monkeypatch, tmp_path):
    """--top, --key, --by had none before issue 14."""
    source, name = duck.load("t", {"id": list(range(8)), **DATA})
    monkeypatch.chdir(tmp_path)
    env = {"QAR_KEY": "id", "QAR_TOP": "2", "QAR_BY": "u_plus"}
    args = ["records", source, "--table", name, "--columns", "a,b,c,d", "-p", "2", "--pi-u", "0.5", "--format", "json"]
    result = CliRunner().invoke(cli, args, env=env)
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["key"] == ["id"] and len(out["records"]) == 2 and out["by"] == "u_plus"


def test_qar_toml_defaults_apply_and_explicit_options_win(table, tmp_path, monkeypatch):
    source, name = table
    (tmp_path / "qar.toml").write_text('[defaults]\np = 1\ncolumns = ["a", "b", "c"]\n')
    sub = tmp_path / "deeper" / "still"
    sub.mkdir(parents=True)
    monkeypatch.chdir(sub)  # found in a parent
    out = _audit_json([source, "--table", name])
    assert (out["p"], out["columns"]) == (1, ["a", "b", "c"])
    assert _audit_json([source, "--table", name], env={"QAR_P": "2"})["p"] == 2  # variable over file
    assert _audit_json([source, "--table", name, "-p", "2", "-c", "a,b,d"])["columns"] == [
        "a",
        "b",
        "d",
    ]  # option over all


def test_pyproject_tool_qar(table, tmp_path):
    source, name = table
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.qar]\np = 1\nexclude = "c"\n')
    out = _audit_json([source, "--table", name])
    assert (out["p"], out["columns"]) == (1, ["a", "b", "d"])


def test_a_pyproject_without_tool_qar_is_passed_over(tmp_path, monkeypatch):
    (tmp_path / "qar.toml").write_text("[defaults]\nk = 7\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "pyproject.toml").write_text('[project]\nname = "x"\n')
    monkeypatch.chdir(tmp_path / "sub")
    assert qar_config.find().values == {"k": 7}


def test_the_scan_config_still_scans_with_its_defaults(tmp_path):
    """qar.toml is also the scan config: its [defaults] serve both."""
    from qar_sql.compliance.scans import load_config

    (tmp_path / "qar.toml").write_text('[defaults]\np = 2\n\n[sources.s]\nurl = "x.duckdb"\n\n[[scan]]\ntable = "t"\n')
    assert load_config(tmp_path / "qar.toml").scans[0].p == 2
    assert qar_config.find(tmp_path).values == {"p": 2}


def test_bad_config_values_are_one_sentence(tmp_path, monkeypatch):
    (tmp_path / "qar.toml").write_text("[defaults]\npp = 2\n")
    with pytest.raises(UsageError, match="unknown key 'pp'; did you mean 'p'"):
        qar_config.find(tmp_path)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["config"])
    assert result.exit_code == 2 and "unknown key 'pp'" in result.output
    (tmp_path / "qar.toml").write_text("[defaults]\np = 0\n")
    with pytest.raises(click.exceptions.ClickException if False else Exception, match="p = 0"):
        qar_config.find(tmp_path)


@pytest.mark.parametrize("command", [["config"], ["config", "--check", "qar.toml"], ["audit", "x.csv"]])
def test_an_unset_variable_of_the_config_is_named_for_the_command_that_ran(tmp_path, monkeypatch, command):
    """The sentence told a user of qar config or qar audit to export it 'before running qar scan'."""
    (tmp_path / "qar.toml").write_text('[store]\nurl = "${QAR_TEST_UNSET_STORE}"\n')
    (tmp_path / "x.csv").write_text("a,b\n1,2\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("QAR_TEST_UNSET_STORE", raising=False)
    result = CliRunner().invoke(cli, command)
    assert result.exit_code == 2, result.output
    assert "export QAR_TEST_UNSET_STORE before running qar" in result.output
    assert "qar scan" not in result.output


def test_qar_config_prints_origins_and_masks_secrets(tmp_path, monkeypatch):
    (tmp_path / "qar.toml").write_text('[store]\nurl = "${STORE_URL}"\n\n[defaults]\np = 2\n')
    monkeypatch.chdir(tmp_path)
    env = {
        "STORE_URL": "postgresql://u:hunter2@db/x",
        "QAR_ALPHA": "0.02",
        "QAR_DATABASE_URL": "postgresql://u:s3cret@h/d",
    }
    result = CliRunner().invoke(cli, ["config", "--format", "json"], env=env)
    assert result.exit_code == 0, result.output
    assert "hunter2" not in result.output and "s3cret" not in result.output
    s = json.loads(result.stdout)["settings"]
    assert s["p"] == {"value": 2, "origin": f"{tmp_path / 'qar.toml'} [defaults]", "env": "QAR_P"}
    assert s["alpha"]["origin"] == "$QAR_ALPHA"
    assert s["pi_u"]["origin"] == "built-in default"
    assert s["store"]["value"] == "postgresql://u:***@db/x" and s["store"]["origin"].endswith("[store] url")
    assert s["source"]["value"] == "postgresql://u:***@h/d"
    text = CliRunner().invoke(cli, ["config"], env=env).output
    assert "hunter2" not in text and re.search(r"^p +2 ", text, re.M)


def test_shell_completion_as_documented():
    """docs/commands.md's completion lines: the script, and a completion of a command name."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    repo = Path(__file__).resolve().parents[1]
    doc = (repo / "docs" / "commands.md").read_text(encoding="utf-8")
    run = [sys.executable, "-c", "from qar_sql.cli import main; main()"]
    base = {**os.environ, "PYTHONPATH": str(repo)}
    for shell in ("bash", "zsh", "fish"):
        assert f"_QAR_COMPLETE={shell}_source qar" in doc
        script = subprocess.run(run, env={**base, "_QAR_COMPLETE": f"{shell}_source"}, capture_output=True, text=True)
        assert script.returncode == 0 and "_QAR_COMPLETE" in script.stdout
    env = {**base, "_QAR_COMPLETE": "bash_complete", "COMP_WORDS": "qar aud", "COMP_CWORD": "1"}
    done = subprocess.run(run, env=env, capture_output=True, text=True)
    assert "audit" in done.stdout


def test_a_config_key_skips_an_option_of_another_meaning(tmp_path):
    """qar risk's -p (QAR_RISK_P: default every key column in one QI) is not the QaR p."""
    from qar_sql.cli.main import cli as group

    (tmp_path / "qar.toml").write_text("[defaults]\np = 2\nk = 7\n")
    mapping = qar_config.default_map(qar_config.find(tmp_path), group.commands)
    assert mapping["audit"]["p"] == 2 and mapping["audit"]["k"] == 7
    assert "p" not in mapping.get("risk", {})


def test_a_reader_that_goes_away_ends_qar_quietly(tmp_path):
    """`qar config | head -0`: the pipe closes before qar writes; no 'unexpected BrokenPipeError'."""
    import subprocess
    import sys

    from conftest import REPO

    code = f"import sys; sys.path.insert(0, {str(REPO)!r}); sys.argv[0] = 'qar'; from qar_sql.cli import main; main()"
    child = subprocess.Popen(
        [sys.executable, "-c", code, "config"], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert child.stdout is not None
    child.stdout.close()  # the reader is gone before the first line
    _, err = child.communicate(timeout=120)
    assert child.returncode == 0 and b"Error" not in err, err


def test_precedence_is_one_rule():
    """qar_sql.precedence.choose (issue 31, item 4): command line > scan's own > the scan file's
    [defaults] > a QAR_ variable or discovered config > built-in, whatever the order given."""
    import itertools

    from qar_sql.precedence import LEVELS, Chosen, choose

    assert LEVELS == ("command line", "scan", "defaults", "config", "built-in")
    layers = [Chosen(i / 10, level, level) for i, level in enumerate(LEVELS)]
    for k in range(1, len(layers) + 1):
        for subset in itertools.combinations(layers, k):
            for order in itertools.permutations(subset):
                assert choose(*order) is subset[0]  # the highest level given, never the order
    assert choose(None, Chosen(0.5, "config", "$QAR_FAIL_ABOVE")).value == 0.5
    assert choose() == Chosen(None, "built-in", "built-in default")
    with pytest.raises(ValueError):
        Chosen(1, "environment", "$X")


def test_a_scans_settings_follow_the_rule(tmp_path):
    """The scan file: [[scan]] over [defaults] over built-in, each with its origin; a threshold
    from outside the file replaces them only from the command line."""
    from qar_sql.compliance.scans import apply_settings, parse_config
    from qar_sql.precedence import Chosen

    data = {
        "defaults": {"p": 2, "fail_above": 0.7},
        "sources": {"s": {"url": str(tmp_path / "x.duckdb")}},
        "scan": [{"table": "a", "fail_above": 0.2}, {"table": "b"}, {"table": "c", "p": 1}],
    }
    a, b, c = parse_config(data, path=str(tmp_path / "qar.toml")).scans
    assert (a.fail_above, a.origins["fail_above"].level) == (0.2, "scan")
    assert (b.fail_above, b.origins["fail_above"].level) == (0.7, "defaults")
    assert (c.p, c.origins["p"].level, b.p, b.origins["p"].level) == (1, "scan", 2, "defaults")
    assert (a.warn_above, a.origins["warn_above"].level, a.k) == (None, "built-in", 5)
    cfg = parse_config(data, path=str(tmp_path / "qar.toml"))
    env = apply_settings(cfg, {"fail_above": Chosen(0.99, "config", "$QAR_FAIL_ABOVE")})
    assert [s.fail_above for s in env.scans] == [0.2, 0.7, 0.7] and not env.notes
    env = apply_settings(cfg, {"warn_above": Chosen(0.1, "config", "$QAR_WARN_ABOVE")})
    assert [s.warn_above for s in env.scans] == [0.1, 0.1, 0.1]
    assert env.notes[0] == "a: warning threshold 0.1 from $QAR_WARN_ABOVE (the scan sets none)"
    typed = apply_settings(cfg, {"fail_above": Chosen(0.5, "command line", "--fail-above")})
    assert [s.fail_above for s in typed.scans] == [0.5, 0.5, 0.5]
    assert typed.notes == (
        "a: threshold 0.5 from --fail-above overrides the scan's 0.2",
        "b: threshold 0.5 from --fail-above overrides the scan's 0.7 from [defaults]",
        "c: threshold 0.5 from --fail-above overrides the scan's 0.7 from [defaults]",
    )


def test_null_tokens_key(tmp_path, monkeypatch):
    """``null_tokens = ["NA"]`` in qar.toml reads NA as NULL for every command (as
    --null-token NA); a value that is not a list of texts is refused with the key's name."""
    (tmp_path / "t.csv").write_text("a,b\n1,x\n2,y\nNA,x\n3,z\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    before = json.loads(CliRunner().invoke(cli, ["risk", "t.csv", "-f", "json", "-q"]).stdout)
    assert any("a is numeric except 'NA' in 1 row" in n for n in before["column_notes"])
    (tmp_path / "qar.toml").write_text('[defaults]\nnull_tokens = ["NA"]\n', encoding="utf-8")
    after = json.loads(CliRunner().invoke(cli, ["risk", "t.csv", "-f", "json", "-q"]).stdout)
    assert after["inferred_columns"] == {"a": "BIGINT"}
    assert not any("numeric except" in n for n in after["column_notes"])
    (tmp_path / "qar.toml").write_text("[defaults]\nnull_tokens = 3\n", encoding="utf-8")
    with pytest.raises(UsageError, match="null_tokens must be a list of non-empty texts"):
        qar_config.load(tmp_path / "qar.toml")


def test_a_found_store_yields_to_the_scan_configs_own_and_is_what_store_alone_means(table, tmp_path, monkeypatch):
    """A [tool.qar] store found in the working folder replaced a scan config's own [store] url
    (qar scan own.toml recorded in the found store, not the config's), and --store alone meant
    qar_results.duckdb where the run without it recorded in the found store (qar audit --store,
    qar scan --store, qar history --store)."""
    source, name = table
    monkeypatch.delenv("QAR_STORE", raising=False)
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n[tool.qar]\nstore = "found.duckdb"\n')
    scan = f'[sources.s]\nurl = "{source}"\n[[scan]]\nname = "t"\nsource = "s"\ntable = "{name}"\np = 1\npi_u = 0.5\n'
    (tmp_path / "own.toml").write_text('[store]\nurl = "own.duckdb"\n' + scan)
    (tmp_path / "plain.toml").write_text(scan)

    def recorded(*args: str) -> set[str]:
        before = {p.name for p in tmp_path.glob("*.duckdb")}
        r = CliRunner().invoke(cli, [*args, "-q"])
        assert r.exit_code in (0, 1), r.output
        return {p.name for p in tmp_path.glob("*.duckdb")} - before

    assert recorded("scan", "own.toml") == {"own.duckdb"}
    assert recorded("scan", "own.toml", "--store") == set()  # own.duckdb again
    assert recorded("scan", "plain.toml") == {"found.duckdb"}
    assert recorded("scan", "plain.toml", "--store") == set()  # found.duckdb again
    assert recorded("audit", source, "-t", name, "-p", "1", "--pi-u", "0.5", "--store") == set()
    assert not (tmp_path / "qar_results.duckdb").exists()
    r = CliRunner().invoke(cli, ["history", "--store", "-f", "json"])
    assert r.exit_code == 0 and len(json.loads(r.stdout)["series"][0]["runs"]) == 3, r.output


def test_tool_qars_unknown_key_is_named_with_store_among_the_keys(tmp_path, monkeypatch):
    """[tool.qar] sources = … was told "allowed: p, alpha, …, null_tokens" by every command,
    without store, which [tool.qar] takes (qar config --check, reading its schema, said "did
    you mean 'store'?")."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n[tool.qar]\nsores = "s.duckdb"\n')
    r = CliRunner().invoke(cli, ["history"])
    assert r.exit_code == 2 and "unknown key 'sores'; did you mean 'store'?" in r.output, r.output
