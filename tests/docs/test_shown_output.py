"""Output shown on a page is what qar prints now: a block that starts with ``$ qar …`` is run
(from a folder holding what the page names) and compared with its text, the run time aside.

The README's worked example and the anonymize and what-if pages had fallen behind the output
(the audit's "T̂ without each column" table, whatif's four risk and loss columns, anonymize's
scores and counts) though their numbers still held."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from click.testing import CliRunner

from qar_sql.cli.main import cli

REPO = Path(__file__).resolve().parents[2]


def shown(page: Path, command_start: str) -> tuple[list[str], str]:
    """The arguments of the block's command that starts with ``command_start`` (its ``\\``
    continuations joined) and the text shown below it, up to the next ``$`` line or the fence."""
    text = page.read_text(encoding="utf-8")
    start = text.index("$ " + command_start)
    block = text[start : text.index("\n```", start)].split("\n")
    command = block[0][2:]
    i = 1
    while command.endswith("\\"):
        command = command[:-1] + " " + block[i].strip()
        i += 1
    out = []
    for line in block[i:]:
        if line.startswith("$ "):
            break
        out.append(line)
    return shlex.split(command)[1:], "\n".join(out).rstrip()


def timeless(text: str) -> str:
    """``text`` without run times: "(duckdb 2.0.1, 3.34 s)", "time   1.46 s"."""
    text = re.sub(r"\d+\.\d+ s\)", "X s)", text)
    return re.sub(r"(?m)^(  time +)\d+\.\d+ s$", r"\1X s", text).rstrip()


def run(args: list[str], folder: Path, monkeypatch) -> str:
    monkeypatch.chdir(folder)
    if args[0] == "demo":  # (its progress lines may fall among the report)
        r = CliRunner().invoke(cli, args)
        return r.stdout
    r = CliRunner().invoke(cli, [*args, "-q"])  # stdout and stderr in the order written, as a terminal shows them
    assert "Traceback" not in r.output, r.output
    return r.output


def test_the_readme_shows_what_qar_demo_and_the_ci_gate_print(tmp_path, monkeypatch):
    args, text = shown(REPO / "README.md", "qar demo")
    assert timeless(run(args, tmp_path, monkeypatch)) == timeless(text)
    args, text = shown(REPO / "README.md", "qar audit qar_demo.duckdb")
    assert timeless(run(args, tmp_path, monkeypatch)) == timeless(text)


def test_the_licences_anonymization_is_shown_as_it_runs(shared_data, tmp_path, monkeypatch):
    (tmp_path / "driverLicense_ValleAosta.csv").symlink_to(
        shared_data / "driver_license" / "driverLicense_ValleAosta.csv"
    )
    (tmp_path / "examples").symlink_to(REPO / "examples")
    args, text = shown(REPO / "docs" / "anonymize.md", "qar anonymize driverLicense_ValleAosta.csv")
    assert timeless(run(args, tmp_path, monkeypatch)) == timeless(text)


def test_the_whatif_tables_have_the_columns_qar_prints(shared_data, tmp_path, monkeypatch):
    """The licence register's table in full; the demo's by its heading (the demo at 100,000 rows
    takes half a minute): the page showed 7 of the 11 columns."""
    page = REPO / "docs" / "treatments.md"
    text = page.read_text(encoding="utf-8")
    start = text.index("### Pastore's Table 1 as a file")
    body = text.index("```toml\n", start) + len("```toml\n")
    pastore = text[body : text.index("\n```", body)]
    (tmp_path / "pastore.toml").write_text(pastore + "\n")
    (tmp_path / "driverLicense_ValleAosta.csv").symlink_to(
        shared_data / "driver_license" / "driverLicense_ValleAosta.csv"
    )
    args, want = shown(page, "qar whatif driverLicense_ValleAosta.csv")
    assert timeless(run(args, tmp_path, monkeypatch)) == timeless(want)

    (tmp_path / "examples").symlink_to(REPO / "examples")
    assert run(["demo", "--rows", "2000", "-q"], tmp_path, monkeypatch)
    args, want = shown(page, "qar whatif qar_demo.duckdb -t population -T examples/treatments.toml --exclude")
    heading = [line for line in run(args, tmp_path, monkeypatch).splitlines() if line.startswith("  treatments")]
    assert (
        heading
        and heading[0].split() == next(line for line in want.splitlines() if line.startswith("  treatments")).split()
    )
