"""The CI entry points (issue 28, item 4): the composite GitHub Action (``action.yml``) and the
pre-commit hook (``.pre-commit-hooks.yaml``).

The action's ``run:`` steps run here as GitHub runs them — each in ``bash -eo pipefail``, its
``env`` with the inputs filled in, outputs passed through ``$GITHUB_OUTPUT`` — on the examples'
compliance scan (``examples/qar.toml`` beside a small demo table). The install step installs this
tree into a virtual environment that sees the suite's packages. The ``uses:`` steps (setup-python,
upload-artifact) are GitHub's; the test checks what they are given. The hook runs through
``pre-commit try-repo`` when pre-commit is installed (skipped otherwise, failed under CI=true).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import duckdb
import pytest
import yaml
from conftest import IN_CI, REPO

ACTION = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
HOOKS = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))


def demo_checkout(root: Path) -> Path:
    """examples/qar.toml beside a small qar_demo.duckdb, as in the repository root after qar demo."""
    (root / "examples").mkdir(parents=True)
    shutil.copy(REPO / "examples" / "qar.toml", root / "examples" / "qar.toml")
    con = duckdb.connect(str(root / "qar_demo.duckdb"))
    con.execute(
        "create table population as select i as person_id, 20 + i % 50 as age, ['F', 'M'][1 + i % 2] as sex, "
        "'r' || (i % 7) as region, 'm' || (i % 3) as marital_status, 'e' || (i % 5) as education, "
        "'o' || (i % 11) as occupation, 'p' || (i % 13) as postcode from range(400) t(i)"
    )
    con.close()
    return root


def fill(text: str, inputs: dict[str, str], outputs: dict[str, dict[str, str]]) -> str:
    """GitHub's ${{ inputs.x }} and ${{ steps.id.outputs.y }} expressions, as the runner fills them."""

    def value(m: re.Match) -> str:
        expr = m.group(1).strip()
        if expr.startswith("inputs."):
            return inputs[expr.removeprefix("inputs.")]
        step, _, name = expr.removeprefix("steps.").partition(".outputs.")
        return outputs.get(step, {}).get(name, "")

    return re.sub(r"\$\{\{(.*?)\}\}", value, str(text))


def run_action(workdir: Path, venv: Path, **given: str) -> tuple[int, str, dict]:
    """Run the action's run: steps in order; the status of the first failing step (the job's)."""
    inputs = {name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()}
    inputs.update(given)
    outputs: dict[str, dict[str, str]] = {}
    log = ""
    summary = workdir / "step-summary.md"
    for step in ACTION["runs"]["steps"]:
        if "run" not in step:
            continue
        out_file = workdir / "github-output"
        out_file.write_text("")
        env = {
            **os.environ,
            "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}",
            "GITHUB_OUTPUT": str(out_file),
            "GITHUB_ACTION_PATH": str(REPO),  # the runner's checkout of the action at its ref
            "GITHUB_STEP_SUMMARY": str(summary),
            **{k: fill(v, inputs, outputs) for k, v in step.get("env", {}).items()},
        }
        env.pop("PYTHONPATH", None)  # the venv's installed copy of this tree, not the checkout
        script = fill(step["run"], inputs, outputs)
        proc = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
            cwd=workdir,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        log += proc.stdout + proc.stderr
        if "id" in step:
            outputs[step["id"]] = dict(line.split("=", 1) for line in out_file.read_text().splitlines() if "=" in line)
        if proc.returncode != 0:
            return proc.returncode, log, outputs
    return 0, log, outputs


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    """A venv that sees the suite's packages; the action's install step installs this tree there."""
    path = tmp_path_factory.mktemp("action") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(path)], check=True)
    return path


def test_the_action_uploads_its_outputs_whatever_the_scan_says():
    steps = ACTION["runs"]["steps"]
    assert ACTION["runs"]["using"] == "composite"
    (upload,) = [s for s in steps if str(s.get("uses", "")).startswith("actions/upload-artifact@")]
    assert upload["if"] == "always()"  # also after a failing scan: that is when the report matters
    paths = upload["with"]["path"]
    assert "${{ inputs.junit }}" in paths and "${{ inputs.report-dir }}" in paths
    for step in steps:  # inputs reach a shell only through env, never spliced into the script
        assert "${{" not in step.get("run", ""), step["name"]


def test_the_action_passes_and_fails_with_the_scan(venv, tmp_path):
    work = demo_checkout(tmp_path / "repo")
    # The package input: this tree (a user writes qar-sql[postgres]).
    # The default package: this checkout ($GITHUB_ACTION_PATH), not PyPI's latest.
    status, log, outputs = run_action(work, venv, config="examples/qar.toml", args="--no-store --fail-above 1")
    assert status == 0, log
    assert outputs["scan"]["exit-code"] == "0"
    assert "every table is within its thresholds" in log
    junit = (work / "qar-junit.xml").read_text()
    assert junit.count("<testcase") == 2 and "<failure" not in junit
    assert (work / "qar-report" / "index.html").is_file()
    assert "demo population" in (work / "step-summary.md").read_text()

    # A threshold every table is above: the scan exits 1, the job fails, the files are there.
    (work / "qar-junit.xml").unlink()
    status, log, outputs = run_action(
        work, venv, package=str(REPO), config="examples/qar.toml", args="--no-store --fail-above 0.01"
    )
    assert status == 1, log
    assert outputs["scan"]["exit-code"] == "1"
    assert "::error title=qar scan::a re-identification risk is above its fail_above" in log
    assert "::error file=examples/qar.toml,title=qar scan demo population::risk " in log
    assert outputs["results"]["fail"] == "2" and outputs["results"]["ok"] == "0"
    assert "<failure" in (work / "qar-junit.xml").read_text()

    # A config that does not exist: exit 2, said as such.
    status, log, _ = run_action(work, venv, package=str(REPO), config="nope/qar.toml", args="--no-store")
    assert status == 2 and "qar scan exited with 2" in log


def test_the_action_splits_args_as_a_shell_reads_quotes_and_gives_outputs(venv, tmp_path):
    """config empty (nothing passed positionally), args with quoted spaces and a glob that must
    stay literal; the outputs: the largest T̂, the counts, the files."""
    work = demo_checkout(tmp_path / "repo")
    (work / "my cfg").mkdir()
    shutil.copy(work / "examples" / "qar.toml", work / "my cfg" / "qar.toml")
    (work / "my stX.duckdb").write_text("")  # what an unquoted "my st*.duckdb" would have been expanded to
    args = "'my cfg/qar.toml' --store \"my st*.duckdb\" --fail-above 1"
    status, log, outputs = run_action(work, venv, package=str(REPO), config="", args=args, junit="j*.xml")
    assert status == 0, log
    assert (work / "my st*.duckdb").is_file() and (work / "j*.xml").is_file()
    assert (work / "my stX.duckdb").read_text() == ""
    import qar_sql

    report = qar_sql.scan_config(str(work / "my cfg" / "qar.toml"), record=False)
    res = outputs["results"]
    assert res["risk"] == f"{max(o.risk for o in report.outcomes):.6g}"
    warned = sum(o.warn_above is not None and o.risk > o.warn_above for o in report.outcomes)
    assert (res["scans"], res["ok"], res["warn"], res["fail"], res["error"]) == (
        "2",
        str(2 - warned),
        str(warned),
        "0",
        "0",
    )
    assert res["junit"] == "j*.xml" and res["json"] == "qar-scan.json" and res["report-dir"] == "qar-report"
    assert [s["name"] for s in json.loads((work / "qar-scan.json").read_text())["scans"]] == [
        o.name for o in report.outcomes
    ]
    # An unclosed quote: one sentence, exit 2, nothing run.
    status, log, _ = run_action(work, venv, package=str(REPO), config="", args="--store 'x")
    assert status == 2 and "the args input cannot be split" in log


def test_the_hook_scans_each_changed_qar_toml(tmp_path, monkeypatch, capsys):
    from qar_sql.cli.hook import main

    (hook,) = HOOKS
    assert hook["id"] == "qar-scan" and re.search(hook["files"], "a/b/qar.toml")
    assert not re.search(hook["files"], "qar.toml.bak") and hook["pass_filenames"]
    work = demo_checkout(tmp_path)
    monkeypatch.chdir(work)
    assert main(["--no-store", "--fail-above", "1", "examples/qar.toml"]) == 0
    assert main(["--no-store", "--fail-above", "0.01", "examples/qar.toml"]) == 1
    assert "qar scan examples/qar.toml" in capsys.readouterr().err  # (its own lines: stderr)


def test_pre_commit_try_repo(tmp_path):
    pre_commit = os.environ.get("QAR_TEST_PRE_COMMIT") or shutil.which("pre-commit")
    if not pre_commit:
        why = "pre-commit is not installed (pip install pre-commit, or set QAR_TEST_PRE_COMMIT)"
        if IN_CI:
            pytest.fail(why)
        pytest.skip(why)
    work = demo_checkout(tmp_path / "repo")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run([*git, "init", "-q"], cwd=work, check=True)
    subprocess.run([*git, "add", "examples/qar.toml"], cwd=work, check=True)
    run = subprocess.run(
        [pre_commit, "try-repo", str(REPO), "qar-scan", "--files", "examples/qar.toml", "--verbose"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    out = run.stdout + run.stderr
    # examples/qar.toml's thresholds (fail_above 0.9 and 0.95) on the 400-row table: decided by
    # qar scan itself, run here; the hook must agree.
    from click.testing import CliRunner

    from qar_sql.cli.main import cli

    cwd = os.getcwd()
    os.chdir(work)
    try:
        expected = CliRunner().invoke(cli, ["scan", "examples/qar.toml", "--no-store"]).exit_code
    finally:
        os.chdir(cwd)
    assert "qar scan" in out and "Traceback" not in out, out
    assert run.returncode == (0 if expected == 0 else 1), out


def two_configs(work: Path) -> None:
    """sub/qar.toml above its fail_above, sub2/qar.toml below it, both on the demo."""
    for sub, fail in (("sub", 0.01), ("sub2", 1)):
        (work / sub).mkdir()
        (work / sub / "qar.toml").write_text(
            f'[sources.demo]\nurl = "../qar_demo.duckdb"\n[[scan]]\nname = "{sub} people"\ntable = "population"\n'
            f"p = 2\npi_u = 0.5\nfail_above = {fail}\n"
        )


def test_the_hook_reports_every_changed_qar_toml(tmp_path, monkeypatch, capsys):
    """Two configs, one above its threshold: the JUnit XML and the Markdown hold both (not only
    the last), the exit code is the worst; nothing is stored unasked."""
    from qar_sql.cli.hook import main

    work = demo_checkout(tmp_path)
    monkeypatch.chdir(work)
    two_configs(work)
    code = main(["--junit", "j.xml", "--markdown=m.md", "sub/qar.toml", "sub2/qar.toml"])
    assert code == 1
    root = ET.parse(work / "j.xml").getroot()
    assert [s.get("name") for s in root.iter("testsuite")] == ["qar scan sub/qar.toml", "qar scan sub2/qar.toml"]
    assert root.get("tests") == "2" and root.get("failures") == "1"
    assert sorted(c.get("name") for c in root.iter("testcase")) == ["sub people", "sub2 people"]
    md = (work / "m.md").read_text()
    assert "### sub/qar.toml" in md and "### sub2/qar.toml" in md and "| fail |" in md and "| ok |" in md
    # each config's own headings sit under its heading, not beside it
    assert re.findall(r"(?m)^#+ .*$", md) == [
        "## QaR compliance scan",
        "### sub/qar.toml",
        "#### scans",
        "### sub2/qar.toml",
        "#### scans",
    ]
    assert not (work / "qar_results.duckdb").exists()


def test_the_hook_ranks_exit_codes_as_qar_scan_does(tmp_path, monkeypatch, capsys):
    """A bad table (2) outranks a database failure (3), as in ScanReport.exit_code (not max)."""
    from qar_sql.cli.hook import main, worst

    assert worst([3, 2]) == 2 and worst([1, 3]) == 3 and worst([0, 1]) == 1 and worst([]) == 0
    assert worst([130, 2]) == 130
    work = demo_checkout(tmp_path)
    monkeypatch.chdir(work)
    (work / "a").mkdir()
    (work / "a" / "qar.toml").write_text('[sources.x]\nurl = "../qar_demo.duckdb"\n[[scan]]\ntable = "nope"\n')
    (work / "b").mkdir()
    (work / "b" / "qar.toml").write_text(
        '[sources.x]\nurl = "postgresql+psycopg://nobody@127.0.0.1:1/none"\n[[scan]]\ntable = "t"\n'
    )
    assert main(["b/qar.toml", "a/qar.toml"]) == 2


def test_a_qar_toml_without_scans_passes_the_hook(tmp_path, monkeypatch, capsys):
    from qar_sql.cli.hook import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "qar.toml").write_text("[defaults]\np = 2\nfail_above = 0.5\n")
    assert main(["--markdown", "m.md", "qar.toml"]) == 0
    assert "nothing to scan (ok)" in capsys.readouterr().err
    assert "nothing to scan" in (tmp_path / "m.md").read_text()


@pytest.mark.parametrize(
    "args,what",
    [
        (["--markdown", "../qar_demo.duckdb"], "the source of scan 'sub people'"),  # the scanned file
        (["--junit=sub2/qar.toml"], "a scan config"),
        (["--markdown", "store.duckdb", "--store", "store.duckdb"], "the results store"),
    ],
)
def test_the_hook_never_writes_its_summaries_over_what_the_scans_read(tmp_path, monkeypatch, capsys, args, what):
    """The hook writes the combined JUnit and Markdown itself, past qar scan's guard:
    --markdown naming a scanned DuckDB file replaced the data with the summary."""
    from qar_sql.cli.hook import main

    work = demo_checkout(tmp_path)
    monkeypatch.chdir(work / "examples")
    for sub in ("sub", "sub2"):
        (work / "examples" / sub).mkdir()
        (work / "examples" / sub / "qar.toml").write_text(
            f'[sources.demo]\nurl = "../../qar_demo.duckdb"\n[[scan]]\nname = "{sub} people"\n'
            'table = "population"\np = 2\npi_u = 0.5\n'
        )
    args = [a.replace("../qar_demo.duckdb", str(work / "qar_demo.duckdb")) for a in args]
    before = {p: p.read_bytes() for p in (work / "qar_demo.duckdb", work / "examples" / "sub2" / "qar.toml")}
    with pytest.raises(SystemExit) as stop:
        main([*args, "sub/qar.toml", "sub2/qar.toml"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("Error: --") and what in err and "writing would destroy" in err
    assert {p: p.read_bytes() for p in before} == before
    assert not (work / "examples" / "store.duckdb").exists()


def test_the_hook_scans_every_toml_it_is_given(tmp_path, monkeypatch, capsys):
    """A project's own `files:` pattern may pass qar.prod.toml: the hook took only files named
    qar.toml and dropped the rest as options, so the commit passed unscanned (exit 0); a missing
    or unreadable one passed too."""
    from qar_sql.cli.hook import main

    work = demo_checkout(tmp_path)
    monkeypatch.chdir(work)
    (work / "qar.prod.toml").write_text(
        '[sources.demo]\nurl = "qar_demo.duckdb"\n[[scan]]\ntable = "population"\np = 2\npi_u = 0.5\nfail_above = 0.01\n'
    )
    assert main(["--no-store", "qar.prod.toml"]) == 1
    assert "qar scan qar.prod.toml" in capsys.readouterr().err
    assert main(["--no-store", "gone/qar.toml"]) == 2
    assert "does not exist" in capsys.readouterr().err
    os.mkfifo(work / "pipe.toml")
    assert main(["--no-store", "pipe.toml"]) == 2
    assert "is not a regular file" in capsys.readouterr().err


def _action_results(tmp_path, capsys, scans) -> str:
    """The action's results step over a scan JSON of ``scans``, annotations on: what it printed
    (its outputs are in tmp_path / "out")."""
    from qar_sql.cli import action

    (tmp_path / "j.json").write_text(json.dumps({"scans": scans}))
    env = {
        "QAR_ACTION_JSON": str(tmp_path / "j.json"),
        "GITHUB_OUTPUT": str(tmp_path / "out"),
        "QAR_ACTION_ANNOTATIONS": "true",
    }
    action.results(env)
    return capsys.readouterr().out


def test_the_action_prints_a_scan_name_on_one_line(tmp_path, capsys):
    """A scan named with a newline (qar.toml accepts it) cannot start a workflow command line."""

    printed = _action_results(tmp_path, capsys, [{"name": "x\n::error::injected", "status": "ok", "risk": 0.5}])
    assert not any(line.startswith("::") for line in printed.splitlines()), printed
    assert "x%0A::error::injected: ok" in printed


@pytest.mark.parametrize("args", ["--format text", "-f text", "--format=html", "-ftext", "--no-store -f json"])
def test_the_action_refuses_a_format_in_args(args):
    """The action reads qar scan's JSON: a --format in args would leave every output empty."""
    from qar_sql.cli import action

    with pytest.raises(SystemExit, match="leave it out"):
        action.split_args(args)
    assert action.split_args("--fail-above 0.5 --select 'tag:pii path:models'") == [
        "--fail-above",
        "0.5",
        "--select",
        "tag:pii path:models",
    ]


@pytest.mark.parametrize(
    "scan",
    [
        {"name": "a", "status": "fail", "risk": None, "fail_above": 0.5},
        {"name": "a", "status": "warn", "risk": 0.7},
        {"name": "a", "status": "fail", "risk": "0.7", "fail_above": None},
    ],
)
def test_the_action_annotates_a_scan_with_missing_numbers(tmp_path, capsys, scan):
    """A JSON from another qar version (or edited by hand) with a failing scan without its risk or
    threshold still gets its annotation and the outputs of every scan, never a traceback."""

    printed = _action_results(tmp_path, capsys, [scan, {"name": "b", "status": "ok", "risk": 0.25}, 3])
    assert re.search(r"^::(error|warning) title=qar scan a::risk \S+ is above (fail|warn)_above \S+$", printed, re.M)
    out = dict(line.split("=", 1) for line in (tmp_path / "out").read_text().splitlines())
    assert out["scans"] == "2" and out["ok"] == "1" and out["risk"] == ("0.7" if scan["risk"] == 0.7 else "0.25")


def test_a_single_scan_is_counted_in_the_singular(tmp_path, monkeypatch, capsys):
    from qar_sql.cli.hook import main

    work = demo_checkout(tmp_path)
    monkeypatch.chdir(work)
    text = (work / "examples" / "qar.toml").read_text()
    (work / "examples" / "qar.toml").write_text(
        text[: text.rindex("[[scan]]", 0, text.index("demo, published columns"))]
    )
    assert main(["--no-store", "--fail-above", "1", "--markdown", "m.md", "examples/qar.toml"]) == 0
    assert re.search(r"^1 scan: ", capsys.readouterr().out, re.M)
    assert re.search(r"^1 scan\(s\): ", (work / "m.md").read_text(), re.M)


@pytest.mark.parametrize("option", ["--junit", "--markdown"])
def test_the_hook_refuses_an_unwritable_summary_before_any_scan(tmp_path, monkeypatch, capsys, option):
    """The combined file's folder is checked before the scans run, as qar scan checks its own."""
    from qar_sql.cli.hook import main

    work = demo_checkout(tmp_path)
    monkeypatch.chdir(work)
    with pytest.raises(SystemExit) as stop:
        main(["--no-store", option, "nodir/out", "examples/qar.toml"])
    assert stop.value.code == 2
    out, err = capsys.readouterr()
    assert "qar scan examples/qar.toml" not in out + err and "does not exist" in err and "'nodir/out'" in err


def test_the_hook_junit_shows_a_config_qar_scan_stopped_on(tmp_path, monkeypatch, capsys):
    """A config refused before any scan is an error in the combined JUnit, not left out of it
    (where a reader would count every other config's passes and show the run green)."""
    from qar_sql.cli.hook import main

    work = demo_checkout(tmp_path)
    monkeypatch.chdir(work)
    (work / "bad.toml").write_text("x = [\n")
    assert main(["--no-store", "--fail-above", "1", "--junit", "j.xml", "examples/qar.toml", "bad.toml"]) == 2
    root = ET.parse(work / "j.xml").getroot()
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    assert suites["qar scan bad.toml"].get("errors") == "1"
    assert suites["qar scan examples/qar.toml"].get("errors") == "0"
    assert (root.get("tests"), root.get("errors"), root.get("failures")) == ("3", "1", "0")


@pytest.mark.parametrize(
    "json_input", ["examples/qar.toml", "qar_demo.duckdb", "missing/qar-scan.json", "examples", ""]
)
def test_the_action_never_writes_its_json_over_an_input_nor_reads_a_missing_folder_as_a_risk(tmp_path, json_input):
    """The scan step redirected qar scan's JSON to the json input: naming the config emptied it
    before the scan read it, naming the audited DuckDB file replaced it with JSON, and a missing
    folder failed the redirect with exit 1, announced as a risk above fail_above. Each is now
    exit 2 with an annotation naming the input, the files untouched."""
    work = demo_checkout(tmp_path / "repo")
    before = {p: (work / p).read_bytes() for p in ("examples/qar.toml", "qar_demo.duckdb")}
    log, outputs = run_steps(work, ("scan",), config="examples/qar.toml", json=json_input, args="--no-store")
    assert outputs["scan"]["exit-code"] == "2", log
    assert "::error title=qar scan::the " in log, log
    assert {p: (work / p).read_bytes() for p in before} == before
    assert sorted(p.name for p in (work / "examples").iterdir()) == ["qar.toml"]  # (a folder: nothing moved in)


def runner_commands(log: str) -> list[str]:
    """The lines GitHub's runner reads as workflow commands: ``::`` at the start (after blanks)
    or its legacy ``##[name]`` anywhere in a line; between ``::stop-commands::T`` and ``::T::``
    none but that resume (actions/runner, ActionCommand.TryParseV2 and TryParse)."""
    found, stop = [], None
    for line in log.splitlines():
        text = line.lstrip()
        if text.startswith("::"):
            head, _, data = text[2:].partition("::")
        elif "##[" in line and "]" in line.split("##[", 1)[1]:
            head, _, data = line.split("##[", 1)[1].partition("]")
        else:
            continue
        name = head.split(" ", 1)[0]
        if stop is not None:
            stop = None if name == stop else stop
            continue
        if name == "stop-commands":
            stop = data
            continue
        found.append(line)
    assert stop is None, "the step left the runner's commands stopped"
    return found


def run_steps(work: Path, ids: tuple[str, ...], **given: str) -> tuple[str, dict[str, dict[str, str]]]:
    """The action's steps of these ids run as the runner runs them (its log, and each step's
    outputs by id), with the suite's qar (no install)."""
    inputs = {name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()} | given
    outputs: dict[str, dict[str, str]] = {}
    log = ""
    for step in [s for s in ACTION["runs"]["steps"] if s.get("id") in ids]:
        out_file = work / "github-output"
        out_file.write_text("")
        env = {
            **os.environ,
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
            "GITHUB_OUTPUT": str(out_file),
            "GITHUB_STEP_SUMMARY": str(work / "step-summary.md"),
            "GITHUB_ACTION_PATH": str(REPO),
            **{k: fill(v, inputs, outputs) for k, v in step["env"].items()},
        }
        proc = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", fill(step["run"], inputs, outputs)],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert proc.returncode == 0, proc.stderr
        log += proc.stdout + proc.stderr
        outputs[step["id"]] = dict(line.split("=", 1) for line in out_file.read_text().splitlines())
    return log, outputs


HOSTILE_NAMES = ["::stop-commands::tok", "  ::error title=forged::all pass", "a ##[error]forged", "b ::warning::x"]


def test_no_scan_name_gives_the_runner_a_workflow_command(tmp_path):
    """A scan named '::stop-commands::tok' printed its line as a command that paused the step's
    annotations, '  ::error …' forged one, and '##[error]…' (the runner's legacy form, read
    anywhere in a line) did so from the results' line and from qar scan's own messages (a table
    not found quotes the name). Only the action's own annotations are commands."""
    work = demo_checkout(tmp_path / "repo")
    scans = "".join(
        f'[[scan]]\nname = {json.dumps(name)}\nsource = "demo"\ntable = "{"nope" if i % 2 else "population"}"\n'
        for i, name in enumerate(HOSTILE_NAMES)
    )
    (work / "qar.toml").write_text(
        f'[sources.demo]\nurl = "qar_demo.duckdb"\n[defaults]\np = 2\npi_u = 0.5\nfail_above = 0.01\n{scans}'
    )
    log, steps = run_steps(work, ("scan", "results"), config="qar.toml", args="--no-store")
    outputs = steps["results"]
    assert outputs["scans"] == "4" and outputs["fail"] == "2" and outputs["error"] == "2", log
    assert "##[error]forged" in log  # qar scan's message quoted it, inside the stopped stretch
    commands = runner_commands(log)
    assert len(commands) == 4 and all(
        re.match(r"::(error|warning) file=qar\.toml,title=qar scan ", c) for c in commands
    ), log
    assert "::error file=qar.toml,title=qar scan b %3A%3Awarning%3A%3Ax::" in log


def test_the_annotations_input_is_off_only_for_false(tmp_path, capsys):
    """'TRUE' (or any text but 'false', in any case) keeps the annotations, as the input says."""
    from qar_sql.cli import action

    scan = {"name": "a", "status": "fail", "risk": 0.7, "fail_above": 0.5}
    (tmp_path / "j.json").write_text(json.dumps({"scans": [scan]}))
    env = {"QAR_ACTION_JSON": str(tmp_path / "j.json"), "GITHUB_OUTPUT": str(tmp_path / "out")}
    for value, shown in (("TRUE", True), ("true", True), ("False", False), (" false ", False)):
        action.results({**env, "QAR_ACTION_ANNOTATIONS": value})
        assert ("::error title=qar scan a::" in capsys.readouterr().out) is shown, value


def test_the_action_shows_a_bidi_control_by_its_code_point(tmp_path, capsys):
    """U+202E in a scan name reversed the rest of the log line and of the annotation's title."""
    printed = _action_results(
        tmp_path, capsys, [{"name": "x\u202eabc", "status": "fail", "risk": 0.7, "fail_above": 0.5}]
    )
    assert "\u202e" not in printed and printed.count("x⟦U+202E⟧abc") == 2, printed


@pytest.mark.parametrize(
    "text, error",
    [
        ('[defaults]\nfail_abvoe = 0.5\np = "x"\n', "has 2 errors"),
        ("scan = false\n", "must be a list of [[scan]] tables"),
    ],
)
def test_a_qar_toml_without_scans_but_with_errors_fails_the_hook(tmp_path, monkeypatch, capsys, text, error):
    """A defaults-only qar.toml passed the hook as "nothing to scan (ok)" whatever it held: a
    misspelt key, a wrong type, or scan = false (which qar scan refuses)."""
    from qar_sql.cli.hook import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "qar.toml").write_text(text)
    assert main(["--junit", "j.xml", "qar.toml"]) == 2
    out, err = capsys.readouterr()
    assert error in err and "(ok)" not in out
    assert ET.parse(tmp_path / "j.xml").getroot().get("errors") == "1"


def test_the_hook_takes_junit_and_markdown_from_the_environment_for_every_config(tmp_path, monkeypatch, capsys):
    """$QAR_JUNIT/$QAR_MARKDOWN (qar scan's env vars) reached each config's qar scan, so each
    wrote over the last one's: the files held the last config only ("1 ok") while the hook
    exited 1."""
    from qar_sql.cli.hook import main

    work = demo_checkout(tmp_path)
    monkeypatch.chdir(work)
    two_configs(work)
    monkeypatch.setenv("QAR_JUNIT", "j.xml")
    monkeypatch.setenv("QAR_MARKDOWN", "m.md")
    assert main(["sub/qar.toml", "sub2/qar.toml"]) == 1
    root = ET.parse(work / "j.xml").getroot()
    assert (root.get("tests"), root.get("failures")) == ("2", "1")
    md = (work / "m.md").read_text()
    assert "### sub/qar.toml" in md and "### sub2/qar.toml" in md


def test_the_hook_report_dir_holds_every_config(tmp_path, monkeypatch, capsys):
    """--report-dir with two configs: each config's index.html replaced the last one's, so the
    folder's index listed the last config's scans only."""
    from qar_sql.cli.hook import main

    work = demo_checkout(tmp_path)
    monkeypatch.chdir(work)
    for sub in ("sub", "sub2"):
        (work / sub).mkdir()
        (work / sub / "qar.toml").write_text(
            f'[sources.demo]\nurl = "../qar_demo.duckdb"\n[[scan]]\nname = "{sub} <people>"\ntable = "population"\n'
            "p = 2\npi_u = 0.5\n"
        )
    assert main(["--no-store", "--report-dir", "pages", "sub/qar.toml", "sub2/qar.toml"]) == 0
    index = (work / "pages" / "index.html").read_text()
    for sub in ("sub", "sub2"):
        assert f'href="{sub}_qar.toml/index.html">{sub}/qar.toml<' in index
        assert f"{sub} &lt;people&gt;" in (work / "pages" / f"{sub}_qar.toml" / "index.html").read_text()
    (work / "afile").write_text("x")
    assert main(["--no-store", "--report-dir=afile", "sub/qar.toml"]) == 2
    assert "'afile' is a file" in capsys.readouterr().err and (work / "afile").read_text() == "x"


def test_the_action_does_not_report_an_earlier_runs_json_when_args_cannot_be_split(tmp_path):
    """A second run of the action in one job (or a self-hosted runner's workspace) finds the
    first run's JSON at the json input: an args input that cannot be split ran no scan, so the
    outputs and annotations must not be that JSON's."""
    work = demo_checkout(tmp_path / "repo")
    log, outputs = run_steps(
        work, ("scan", "results"), config="examples/qar.toml", args="--no-store --fail-above 0.001"
    )
    assert outputs["scan"]["exit-code"] == "1" and outputs["results"]["fail"] != "0", log
    log, outputs = run_steps(work, ("scan", "results"), config="examples/qar.toml", args="--store 'x")
    assert outputs["scan"]["exit-code"] == "2" and "the args input cannot be split" in log
    assert (outputs["results"]["scans"], outputs["results"]["fail"], outputs["results"]["risk"]) == ("0", "0", ""), log
    assert "is above fail_above" not in log


def test_the_hook_shows_a_config_path_as_written_in_the_markdown_and_the_log(tmp_path, monkeypatch, capsys):
    """A changed qar.toml's folder name is text: in the Markdown summary (a job's step summary)
    a backtick, a line break and a tag in it closed the heading's code span and started a
    heading and a remote image of their own; in the log the line break split the line."""
    from qar_sql.cli.hook import main

    work = demo_checkout(tmp_path)
    monkeypatch.chdir(work)
    two_configs(work)
    odd = "x`y\n## Forged <img src=http:"
    (work / odd / "e").mkdir(parents=True)
    config = Path(odd) / "e" / "qar.toml"
    (work / config).write_text((work / "sub2" / "qar.toml").read_text().replace("../", "../../"))
    assert main(["--no-store", "--markdown", "m.md", "sub/qar.toml", str(config)]) == 1
    md = (work / "m.md").read_text()
    assert "\n## Forged" not in md and "<img" not in md, md
    assert md.count("\n### ") == 2 + md.count("\n### scans")
    out = capsys.readouterr().err
    assert "qar scan x`y\\n## Forged <img src=http:/e/qar.toml" in out
    assert not any(line.startswith("## Forged") for line in out.splitlines())


def test_the_hook_says_an_empty_junit_is_empty(tmp_path, monkeypatch, capsys):
    """--junit= (an unset variable in args) was "--junit '' is a folder"."""
    from qar_sql.cli.hook import main

    work = demo_checkout(tmp_path)
    monkeypatch.chdir(work)
    two_configs(work)
    with pytest.raises(SystemExit) as stopped:
        main(["--no-store", "--junit=", "sub2/qar.toml"])
    assert stopped.value.code == 2
    assert "--junit is empty; name a file to write" in capsys.readouterr().err


@pytest.mark.parametrize("json_input", ["qar-junit.xml", "qar-report/index.html"])
def test_the_action_never_moves_its_json_over_the_junit_or_a_report_page(tmp_path, json_input):
    """The json input naming the junit input's file (or a page of report-dir) replaced the JUnit
    XML qar scan had written with JSON, silently: exit 2, an annotation, before the scan (nothing
    written); and the move after a scan checks it again."""
    work = demo_checkout(tmp_path / "repo")
    log, outputs = run_steps(work, ("scan",), config="examples/qar.toml", json=json_input, args="--no-store")
    assert outputs["scan"]["exit-code"] == "2", log
    assert "::error title=qar scan::the json input names " in log, log
    assert not (work / "qar-junit.xml").exists() and not (work / "qar-report").exists()  # no scan ran
    from qar_sql.cli import action

    scratch = tmp_path / "scan.json"
    scratch.write_text("{}")
    env = {
        "QAR_ACTION_JSON": str(work / json_input),
        "QAR_ACTION_JUNIT": "qar-junit.xml",
        "QAR_ACTION_REPORT_DIR": "qar-report",
    }
    (work / "qar-report").mkdir()
    (work / json_input).write_text("<?xml kept")
    cwd = os.getcwd()
    os.chdir(work)
    try:
        assert action.keep_json(str(scratch), env) == 2
    finally:
        os.chdir(cwd)
    assert (work / json_input).read_text() == "<?xml kept" and scratch.exists()


def test_two_outputs_on_one_file_are_refused_before_any_scan(tmp_path, monkeypatch, capsys):
    """qar scan --junit a.xml --markdown a.xml wrote the Markdown over the JUnit XML (and the
    hook did, with its combined files): refused before any scan, naming both options."""
    from click.testing import CliRunner

    from qar_sql.cli.hook import main
    from qar_sql.cli.main import cli

    work = demo_checkout(tmp_path)
    monkeypatch.chdir(work)
    two_configs(work)
    (work / "r").mkdir()
    for args in (["--junit", "a.xml", "--markdown", "./a.xml"], ["--junit", "r/index.html", "--report-dir", "r"]):
        r = CliRunner().invoke(cli, ["scan", "sub2/qar.toml", "--no-store", *args])
        assert r.exit_code == 2 and f"--junit and {args[2]} both name" in r.output, r.output
        assert not (work / "a.xml").exists() and not (work / "r" / "index.html").exists()
    with pytest.raises(SystemExit) as stopped:
        main(["--no-store", "--junit", "a.xml", "--markdown", "a.xml", "sub2/qar.toml"])
    assert stopped.value.code == 2 and "--junit and --markdown both name" in capsys.readouterr().err


def test_the_actions_outputs_name_only_files_the_scan_wrote(tmp_path):
    """The junit and report-dir outputs named the inputs' paths whatever happened: a scan refused
    before it ran (a bad config, args) named a JUnit file that was never written, or one an
    earlier run left. Now only what this run's scans wrote."""
    from qar_sql.cli import action

    env = {
        "QAR_ACTION_JUNIT": str(tmp_path / "j.xml"),
        "QAR_ACTION_JSON": str(tmp_path / "s.json"),
        "QAR_ACTION_REPORT_DIR": str(tmp_path / "pages"),
    }
    scans = [{"name": "x", "status": "ok", "risk": 0.5}]
    for listed in ([], scans):
        out = action.outputs(listed, env)
        assert (out["junit"], out["report-dir"], out["json"]) == ("", "", env["QAR_ACTION_JSON"])
    (tmp_path / "j.xml").write_text("<testsuites/>")
    (tmp_path / "pages").mkdir()
    (tmp_path / "pages" / "index.html").write_text("<html></html>")
    assert action.outputs([], env)["junit"] == ""  # (left by an earlier run: no scan ran now)
    out = action.outputs(scans, env)
    assert (out["junit"], out["report-dir"]) == (env["QAR_ACTION_JUNIT"], env["QAR_ACTION_REPORT_DIR"])


@pytest.mark.parametrize("args", ["--junit other.xml", "--junit=other.xml", "--report-dir pages", "--markdown m.md"])
def test_the_action_refuses_in_args_an_option_it_sets_from_an_input(tmp_path, args):
    """qar scan keeps the last of two --junit: one in args replaced the junit input's silently, so
    the input's file was never written, though the junit output named it and the artifact looked
    for it (the same for --report-dir, and for --markdown, which replaced the step summary)."""
    work = demo_checkout(tmp_path / "repo")
    log, outputs = run_steps(work, ("scan", "results"), config="examples/qar.toml", args=f"--no-store {args}")
    option = args.split()[0].partition("=")[0]
    assert outputs["scan"]["exit-code"] == "2", log
    assert f"::error title=qar scan::the args input gives {option}, which the action sets itself" in log, log
    assert not list(work.glob("other.xml")) and not (work / "pages").exists() and not (work / "m.md").exists()


def test_the_action_takes_markdown_in_args_where_the_runner_has_no_step_summary():
    from qar_sql.cli import action

    assert action.split_args("--markdown m.md") == ["--markdown", "m.md"]
    with pytest.raises(SystemExit, match="to the job's step summary"):
        action.split_args("--markdown m.md", summary="/tmp/summary")
    # --help printed the help into the JSON and exited 0: a green job with no scan
    for helps in ("--help", "--no-store -h"):
        with pytest.raises(SystemExit, match="runs no scan, so the job would pass unscanned"):
            action.split_args(helps)


def test_the_action_outputs_name_only_the_files_the_scan_wrote(tmp_path):
    """A scan stopped by a bad config writes no JUnit XML and no report: the junit and report-dir
    outputs named them anyway, and a later step reading them failed on a missing file."""
    work = demo_checkout(tmp_path / "repo")
    log, outputs = run_steps(work, ("scan", "results"), config="missing.toml", args="--no-store")
    assert outputs["scan"]["exit-code"] == "2", log
    assert (outputs["results"]["junit"], outputs["results"]["report-dir"]) == ("", ""), outputs
    log, outputs = run_steps(work, ("scan", "results"), config="examples/qar.toml", args="--no-store")
    assert (outputs["results"]["junit"], outputs["results"]["report-dir"]) == ("qar-junit.xml", "qar-report")
    assert (work / "qar-junit.xml").is_file()


def test_the_hook_reads_an_options_value_as_its_value_not_as_a_config(tmp_path, monkeypatch, capsys):
    """`--report-dir pages.toml` (any option's value ending in .toml) was taken for a config to
    scan: the hook scanned a file that is a folder name ('does not exist', exit 2)."""
    from qar_sql.cli.hook import main

    work = demo_checkout(tmp_path)
    monkeypatch.chdir(work)
    two_configs(work)
    assert main(["--no-store", "--report-dir", "pages.toml", "sub2/qar.toml"]) == 0
    err = capsys.readouterr().err
    assert "qar scan pages.toml" not in err and (work / "pages.toml" / "index.html").is_file(), err
    assert main(["--no-store", "--store", "s.toml", "--no-store", "sub2/qar.toml"]) == 2
    assert "qar scan s.toml" not in capsys.readouterr().err


def test_the_hook_writes_one_json_document_for_every_config(tmp_path, monkeypatch, capsys):
    """--format json with two configs wrote two JSON documents back to back (and the hook's
    'qar scan PATH' lines between them) on stdout: no JSON reader took it."""
    from qar_sql.cli.hook import main

    work = demo_checkout(tmp_path)
    monkeypatch.chdir(work)
    two_configs(work)
    (work / "none.toml").write_text("[defaults]\np = 2\n")
    assert main(["--no-store", "-f", "json", "sub/qar.toml", "sub2/qar.toml", "none.toml"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["exit_code"] == 1
    assert [(c["config"], c["exit_code"]) for c in out["configs"]] == [
        ("sub/qar.toml", 1),
        ("sub2/qar.toml", 0),
        ("none.toml", 0),
    ]
    assert out["configs"][0]["scan"]["scans"][0]["name"] == "sub people" and out["configs"][2]["scan"] is None
    monkeypatch.setenv("QAR_FORMAT", "json")  # qar scan's variable: the same document
    assert main(["--no-store", "sub2/qar.toml", "gone.toml"]) == 2
    out = json.loads(capsys.readouterr().out)
    assert [(c["config"], c["exit_code"], c["scan"] is None) for c in out["configs"]] == [
        ("sub2/qar.toml", 0, False),
        ("gone.toml", 2, True),
    ]


def test_the_action_reads_args_as_click_does():
    """The args input's options as click reads qar scan's: a bundle of short options is each of
    them (-qh ran the help, no scan, exit 0: a green job; -qfmarkdown replaced --format json, so
    the JSON file held Markdown), and an option's value is no option (--select -h is a selector).
    action.py runs on the standard library: its list of the options taking a value is click's."""
    import click

    from qar_sql.cli import action
    from qar_sql.cli.main import cli

    params = [p for p in cli.commands["scan"].params if isinstance(p, click.Option)]
    valued = {o for p in params if not p.is_flag and not p.count and not p._flag_needs_value for o in p.opts}
    assert action.VALUED == valued
    assert action.OPTIONAL_VALUE == {o for p in params if p._flag_needs_value for o in p.opts}
    for args, says in (
        ("-qh", "gives -h, which prints the help"),
        ("-vh", "gives -h, which prints the help"),
        ("--jobs 2 -qh", "gives -h, which prints the help"),
        ("--store -h", "gives -h, which prints the help"),
        ("-qfmarkdown", "gives -f, but the action runs qar scan with --format json"),
        ("-q -fmarkdown", "gives -f, but the action runs qar scan with --format json"),
    ):
        with pytest.raises(SystemExit) as refused:
            action.split_args(args)
        assert says in str(refused.value), (args, refused.value)
    for args in ("--select -h", "--select=-fx", "-j2 -q", "--store s.duckdb -q", "--fail-above 0.5"):
        assert action.split_args(args) == args.split()


@pytest.mark.parametrize("args", [["--help"], ["-qh"], ["--no-store", "-vh"]])
def test_the_hook_refuses_help_in_its_args(tmp_path, monkeypatch, capsys, args):
    """The hook's args giving --help ran qar scan --help once per file and exited 0: the commit
    passed with nothing scanned (the Action refuses it; the hook did not)."""
    from qar_sql.cli.hook import main

    work = demo_checkout(tmp_path)
    monkeypatch.chdir(work)
    assert main([*args, "examples/qar.toml"]) == 2
    out, err = capsys.readouterr()
    assert "which prints qar scan's help and scans nothing" in err and "Usage:" not in out + err
