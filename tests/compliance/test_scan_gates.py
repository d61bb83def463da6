"""CI gates of ``qar scan`` (issue 16, item 5): a threshold given on the command line is never
ignored, and an option that would be ignored is an error."""

from __future__ import annotations

import random

import duckdb
import pytest
from click.testing import CliRunner

import qar_sql
from qar_sql.cli.main import cli

_rng = random.Random(3)
ROWS = [
    (_rng.randrange(8), "FM"[_rng.randrange(2)], _rng.randrange(5), "abcdefg"[_rng.randrange(6)]) for _ in range(60)
]
KW = dict(columns=["age", "sex", "zip", "job"], p=2, pi_u=0.5)


@pytest.fixture
def config(tmp_path):
    """(qar.toml with fail_above = 0.99 and warn_above = 0.9, the risk of its one scan)."""
    path = tmp_path / "people.duckdb"
    con = duckdb.connect(str(path))
    con.execute("create table people (age bigint, sex text, zip bigint, job text)")
    con.executemany("insert into people values (?, ?, ?, ?)", ROWS)
    con.close()
    toml = tmp_path / "qar.toml"
    toml.write_text(
        '[sources.files]\nurl = "people.duckdb"\n\n[[scan]]\ntable = "people"\n'
        'columns = ["age", "sex", "zip", "job"]\np = 2\npi_u = 0.5\nfail_above = 0.99\nwarn_above = 0.9\n'
    )
    risk = qar_sql.audit(str(path), table="people", **KW).risk
    assert 0.05 < risk < 0.9
    return toml, risk


def invoke(args, env=None):
    r = CliRunner().invoke(cli, args, env=env)
    assert "Traceback" not in r.output
    return r


def test_fail_above_on_the_command_line_overrides_the_file(config):
    toml, risk = config
    r = invoke(["scan", str(toml), "--no-store"])
    assert r.exit_code == 0, r.output
    r = invoke(["scan", str(toml), "--no-store", "--fail-above", "0.01"])
    assert r.exit_code == 1, r.output  # was 0: the option was ignored
    assert "FAIL" in r.stdout and "0.01" in r.stdout
    r = invoke(["scan", str(toml), "--no-store", "--fail-above", f"{risk + 0.001:.6f}"])
    assert r.exit_code == 0, r.output
    r = invoke(["scan", str(toml), "--no-store", "--warn-above", "0.01", "-f", "json"])
    assert r.exit_code == 0 and '"status": "warn"' in r.stdout and '"warn_above": 0.01' in r.stdout
    # the Python API: the same override
    from qar_sql.compliance.scans import apply_settings, load_config
    from qar_sql.precedence import Chosen

    cfg = apply_settings(load_config(toml), {"fail_above": Chosen(0.01, "command line", "--fail-above")})
    assert qar_sql.scan_config(cfg, record=False).exit_code == 1


@pytest.mark.parametrize(
    "args,message",
    [
        (["--fail-above", "1.5"], "--fail-above 1.5 must be a risk between 0 and 1"),
        (["--warn-above", "-0.1"], "--warn-above -0.1 must be a risk between 0 and 1"),
        (["--fail-above", "0.2", "--warn-above", "0.3"], "--warn-above 0.3 is above --fail-above 0.2"),
        (["--url", "postgresql+psycopg://h/db"], "--url names the warehouse of --dbt-manifest"),
        (["--store", "x.duckdb"], "--store and --no-store contradict each other"),
    ],
)
def test_unused_or_bad_options_are_errors(config, args, message):
    toml, _ = config
    r = invoke(["scan", str(toml), "--no-store", *args])
    assert r.exit_code == 2, r.output
    assert message in r.output


def test_database_url_from_the_environment_is_no_error(config):
    toml, _ = config
    r = invoke(["scan", str(toml), "--no-store"], env={"QAR_DATABASE_URL": "postgresql+psycopg://h/db"})
    assert r.exit_code == 0, r.output


# --------------------------------------------------------------------------------------------
# Issue 31, item 4: a gate's verdict does not depend on the working folder. A scan's own
# threshold wins over [defaults], a QAR_ variable and a discovered config; only an option typed
# on the command line overrides it, and the summary says so.

DOCS = __import__("pathlib").Path(__file__).resolve().parents[2] / "docs"


def _complete_example(folder):
    """docs/compliance.md's complete example, set up in ``folder``: its qar.toml beside the demo."""
    import re

    text = (DOCS / "compliance.md").read_text(encoding="utf-8")
    toml = re.search(r"```toml\n(# qar\.toml\n.*?)```", text, re.S).group(1)
    (folder / "qar.toml").write_text(toml, encoding="utf-8")
    r = invoke(["demo", "-q", "--path", str(folder / "qar_demo.duckdb")])
    assert r.exit_code == 0, r.output
    return folder / "qar.toml"


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    folder = tmp_path_factory.mktemp("docsdemo")
    return _complete_example(folder)


@pytest.fixture
def clean_env(monkeypatch):
    for key in [k for k in __import__("os").environ if k.startswith("QAR_")]:
        monkeypatch.delenv(key)
    return monkeypatch


def _scan(toml, cwd, monkeypatch, *args, env=None):
    monkeypatch.chdir(cwd)
    return invoke(["scan", str(toml), "--no-store", *args], env=env)


def test_the_docs_example_has_one_verdict_from_every_folder(example, tmp_path, clean_env):
    here = _scan(example, example.parent, clean_env)  # qar.toml is discovered: was exit 0
    there = _scan(example, tmp_path, clean_env)
    assert there.exit_code == 1, there.output
    assert here.exit_code == there.exit_code, here.output
    assert here.stdout.splitlines()[:4] == there.stdout.splitlines()[:4]  # same thresholds, same statuses
    assert "0.1         0.2         FAIL" in here.stdout


@pytest.mark.parametrize("variable", ["QAR_FAIL_ABOVE", "QAR_WARN_ABOVE"])
def test_a_variable_does_not_replace_a_scans_own_threshold(example, tmp_path, clean_env, variable):
    for cwd in (example.parent, tmp_path):
        r = _scan(example, cwd, clean_env, env={variable: "0.99"})
        assert r.exit_code == 1, r.output  # was 0: the variable silently passed the gate
        assert "FAIL" in r.stdout and "overrides" not in r.output


def test_an_explicit_option_overrides_and_says_so(example, tmp_path, clean_env):
    for cwd in (example.parent, tmp_path):
        r = _scan(example, cwd, clean_env, "--fail-above", "0.99")
        assert r.exit_code == 0, r.output
        assert "threshold 0.99 from --fail-above overrides the scan's 0.2" in r.stdout
        assert "threshold 0.99 from --fail-above overrides the scan's 0.7 from [defaults]" in r.stdout
        r = _scan(example, cwd, clean_env, "--fail-above", "0.99", "-f", "json")
        assert r.exit_code == 0 and "overrides the scan's 0.2" in r.stderr


def test_a_variable_or_a_config_sets_the_threshold_a_scan_lacks(config, tmp_path, clean_env):
    """Below a scan's own setting, the variable and the discovered config still apply."""
    toml, risk = config
    toml.write_text(toml.read_text().replace("fail_above = 0.99\nwarn_above = 0.9\n", ""))
    work = tmp_path / "work"  # (tmp_path holds the scan's qar.toml, which would be found first)
    work.mkdir()
    r = _scan(toml, work, clean_env, env={"QAR_FAIL_ABOVE": "0.01"})
    assert r.exit_code == 1 and "overrides" not in r.output, r.output
    (work / "pyproject.toml").write_text("[tool.qar]\nfail_above = 0.01\n")
    r = _scan(toml, work, clean_env)
    assert r.exit_code == 1, r.output
    r = _scan(toml, work, clean_env, env={"QAR_FAIL_ABOVE": "0.99"})  # the variable above the file
    assert r.exit_code == 0, r.output


def test_variables_and_config_leave_a_scans_parameters_alone(config, tmp_path, clean_env):
    """p, alpha, pi_u, pwm and k of a scan are its own: no QAR_ variable nor config changes them."""
    import json

    toml, risk = config
    work = tmp_path / "work"
    work.mkdir()
    (work / "pyproject.toml").write_text("[tool.qar]\np = 1\nalpha = 0.02\npi_u = 0.3\nk = 9\n")
    env = {"QAR_P": "3", "QAR_ALPHA": "0.1", "QAR_PI_U": "0.3", "QAR_PWM": "unbiased", "QAR_K": "7"}
    r = _scan(toml, work, clean_env, "-f", "json", env=env)
    assert r.exit_code == 0, r.output
    scan = json.loads(r.stdout)["scans"][0]
    assert (scan["p"], scan["alpha"], scan["risk"]) == (2, 0.01, pytest.approx(risk, rel=1e-12))


def test_fail_above_judges_the_measure_the_scan_names(config):
    """theta = "unique": the scan's risk is T̂ of S/L, and fail_above judges that one; a
    threshold between the two measures' T̂ passes one and fails the other."""
    toml, risk = config
    path = toml.parent / "people.duckdb"
    unique = qar_sql.audit(str(path), table="people", **KW, theta="unique").risk
    assert unique is not None and unique < risk  # S ≤ H, so here its T̂ is the lower
    between = (unique + risk) / 2
    plain = toml.read_text().replace("fail_above = 0.99\nwarn_above = 0.9\n", f"fail_above = {between:.6f}\n")
    toml.write_text(plain)
    assert invoke(["scan", str(toml), "--no-store"]).exit_code == 1
    toml.write_text(plain.replace("p = 2\n", 'p = 2\ntheta = "unique"\n'))
    r = invoke(["scan", str(toml), "--no-store", "-f", "json"])
    assert r.exit_code == 0, r.output
    assert f"{unique:.6g}"[:6] in r.stdout or str(unique)[:8] in r.stdout
    toml.write_text(plain.replace("p = 2\n", 'p = 2\ntheta = "singled"\n'))
    bad = invoke(["scan", str(toml), "--no-store"])
    assert bad.exit_code == 2 and "theta" in bad.output


def test_the_text_summary_keeps_a_scan_name_on_its_row_as_written(config):
    """A scan name from qar.toml with a bidi override: the U+202E reversed the rest of the line.
    (A line break split the row, its second line a GitHub workflow command "::error::": such a
    name is now refused, tests/test_toml_schema.py.)"""
    toml, _ = config
    text = toml.read_text().replace('table = "people"', 'name = "odd\\u202e name ::error::x"\ntable = "people"')
    toml.write_text(text)
    r = CliRunner().invoke(cli, ["scan", str(toml), "-q"])
    assert r.exit_code == 0, r.output
    assert "\u202e" not in r.output and not any(line.startswith("::") for line in r.output.splitlines())
    row = next(line for line in r.output.splitlines() if line.startswith("odd"))
    assert row.startswith("odd⟦U+202E⟧ name ::error::x  people") and row.rstrip().endswith("OK")
