"""``qar scan qar.toml``: many tables, thresholds and exit codes, JUnit and Markdown, secrets
only from the environment, and bad configs as one sentence with exit 2."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import PG_URL, Loader

import qar_sql
from qar_sql.cli.main import cli
from qar_sql.compliance import store as S
from qar_sql.compliance.scans import load_config
from qar_sql.errors import ParameterError, UsageError
from qar_sql.output.markdown import cell

# Two small tables with NULLs; "wide" is riskier than "narrow" on the same columns.
NARROW = {
    "age": [30, 30, 31, 31, 32, 32, 30, 31, 32, 30, 31, 32, None, None, 30, 31],
    "sex": ["F", "M", "F", "M", "F", "M", "F", "M", "F", "M", "F", "M", "F", "M", None, None],
    "zip": [1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 2, 2, 1, 2, 1, 2],
    "job": ["a", "b", "a", "b", "a", "b", "c", "c", "a", "a", "b", "b", "c", "c", "a", "b"],
}
WIDE = {
    "age": [20 + i % 6 for i in range(16)],
    "sex": ["F", "M", "F", "F"] * 4,
    "zip": [i % 5 for i in range(16)],
    "job": ["abcdefg"[i % 7] for i in range(16)],
}
COLS = ["age", "sex", "zip", "job"]


@pytest.fixture
def warehouse(tmp_path):
    """Two DuckDB tables and one PostgreSQL table (behind an env var with a password)."""
    duck = Loader("duckdb", tmp_path)
    duck.load("narrow", NARROW)
    duck.load("wide", WIDE)
    pg = Loader("postgresql", tmp_path)
    pg.load("wide pg", WIDE)
    yield duck, pg
    pg.cleanup()


def risk_of(source, table) -> float:
    return qar_sql.audit(source, table=table, columns=COLS, p=2, pi_u=0.5).risk


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "qar.toml"
    path.write_text(text)
    return path


def config_text(duck, pg, narrow_fail, wide_fail, extra="") -> str:
    return f"""
[store]
url = "results.duckdb"

[defaults]
p = 2
pi_u = 0.5
columns = ["age", "sex", "zip", "job"]

[sources.files]
url = "{duck.path}"

[sources.pg]
url = "${{QAR_TEST_WAREHOUSE}}"

[[scan]]
name = "narrow"
source = "files"
table = "narrow"
fail_above = {narrow_fail}

[[scan]]
source = "files"
table = "wide"
warn_above = 0.0
fail_above = {wide_fail}

[[scan]]
name = "pg wide"
source = "pg"
table = "{pg.schema}.wide pg"
{extra}
"""


def test_scan_thresholds_store_and_reports(warehouse, tmp_path, monkeypatch):
    duck, pg = warehouse
    monkeypatch.setenv("QAR_TEST_WAREHOUSE", PG_URL)
    r_narrow, r_wide = risk_of(duck.path, "narrow"), risk_of(duck.path, "wide")
    assert r_narrow < r_wide
    r_pg = risk_of(PG_URL, f"{pg.schema}.wide pg")
    assert r_pg == pytest.approx(r_wide, rel=1e-12)  # same data on both engines
    # narrow passes, wide breaches its fail_above; pg has no threshold.
    cfg = write(tmp_path, config_text(duck, pg, r_narrow + 0.01, r_wide - 0.01))
    junit, md = tmp_path / "out" / "junit.xml", tmp_path / "summary.md"
    junit.parent.mkdir()
    r = CliRunner().invoke(cli, ["scan", str(cfg), "--junit", str(junit), "--markdown", str(md)])
    assert r.exit_code == 1, r.output
    lines = {ln.split()[0]: ln for ln in r.stdout.splitlines() if ln.startswith(("narrow", "wide", "pg"))}
    assert lines["narrow"].endswith("OK") and lines["wide"].endswith("FAIL") and lines["pg"].endswith("OK")
    assert f"{r_wide:.6g}" in lines["wide"]
    # JUnit: valid XML, one testcase per table, the failure on "wide".
    root = ET.parse(junit).getroot()
    cases = {c.get("name"): c for c in root.iter("testcase")}
    assert set(cases) == {"narrow", "wide", "pg wide"}
    tables = {
        c.get("name"): {p.get("name"): p.get("value") for p in c.iter("property")}["table"] for c in cases.values()
    }
    assert tables == {"narrow": "narrow", "wide": "wide", "pg wide": f"{pg.schema}.wide pg"}
    assert cases["wide"].find("failure") is not None and cases["narrow"].find("failure") is None
    assert root.find("testsuite").get("failures") == "1" and root.find("testsuite").get("errors") == "0"
    assert "| wide | wide | " in md.read_text() and "| fail |" in md.read_text()
    # The runs are stored (the config's store, relative to the file), secrets masked.
    runs = S.runs(str(tmp_path / "results.duckdb"))
    assert sorted(x.scan_name for x in runs) == ["narrow", "pg wide", "wide"]
    assert all(x.status == "complete" for x in runs)
    by_name = {x.scan_name: x for x in runs}
    assert by_name["wide"].risk == pytest.approx(r_wide, rel=1e-12)
    assert by_name["pg wide"].risk == pytest.approx(r_pg, rel=1e-12)
    assert ":qar@" not in by_name["pg wide"].source and "***" in by_name["pg wide"].source
    # Python API: the same verdicts; threshold just above → 0.
    report = qar_sql.scan_config(cfg, record=False)
    assert [o.status for o in report.outcomes] == ["ok", "fail", "ok"] and report.exit_code == 1
    ok = write(tmp_path, config_text(duck, pg, r_narrow + 0.01, r_wide + 0.01))
    report = qar_sql.scan_config(ok, record=False)
    assert [o.status for o in report.outcomes] == ["ok", "warn", "ok"] and report.exit_code == 0


def test_one_failure_does_not_stop_the_others(warehouse, tmp_path, monkeypatch):
    duck, pg = warehouse
    secret = "s3cr3t-pw"
    monkeypatch.setenv("QAR_TEST_WAREHOUSE", f"postgresql+psycopg://qar:{secret}@localhost:1/nowhere")
    text = config_text(duck, pg, 1.0, 1.0).replace('table = "wide"', 'table = "wdie"')
    cfg = write(tmp_path, text)
    junit = tmp_path / "j.xml"
    r = CliRunner().invoke(cli, ["scan", str(cfg), "--junit", str(junit), "-f", "json"])
    # A wrong table is a usage error (2), which outranks the unreachable database (3).
    assert r.exit_code == 2, r.output
    out = json.loads(r.stdout)
    status = {s["name"]: (s["status"], s["exit_code"]) for s in out["scans"]}
    assert status == {"narrow": ("ok", 0), "wdie": ("error", 2), "pg wide": ("error", 3)}
    assert "table 'wdie' not found" in out["scans"][1]["error"] and "did you mean 'wide'?" in out["scans"][1]["error"]
    # The secret is never printed, written or stored.
    stored = [(x.source, x.error) for x in S.runs(str(tmp_path / "results.duckdb"))]
    for text in (r.output, junit.read_text(), json.dumps(stored)):
        assert secret not in text
    assert sorted(x.status for x in S.runs(str(tmp_path / "results.duckdb"))) == ["complete", "failed", "failed"]
    # Only the database error left: exit 3.
    cfg = write(tmp_path, config_text(duck, pg, 1.0, 1.0))
    r = CliRunner().invoke(cli, ["scan", str(cfg), "--no-store"])
    assert r.exit_code == 3, r.output
    assert "cannot connect to postgresql+psycopg://qar:***@localhost:1/nowhere" in r.output
    assert secret not in r.output


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda t: t, "uses ${QAR_TEST_WAREHOUSE}, but the environment variable QAR_TEST_WAREHOUSE is not set"),
        (lambda t: t.replace('name = "pg wide"', 'name = "narrow"'), "two scans are named 'narrow'"),
        (
            lambda t: t.replace("fail_above = 0.9", "fail_above = 1.5"),
            "fail_above = 1.5 must be a risk between 0 and 1",
        ),
        (
            lambda t: t.replace("fail_above = 0.9", 'fail_above = "high"'),
            "fail_above = 'high' must be a risk between 0 and 1",
        ),
        (  # quoted in the file: text, and said so (it read "'0.5' must be a risk between 0 and 1")
            lambda t: t.replace("fail_above = 0.9", 'fail_above = "0.5"'),
            "fail_above = '0.5' is text; write it without quotes, as a number",
        ),
        (lambda t: t.replace("warn_above = 0.0", "warn_above = 0.95"), "warn_above = 0.95 is above fail_above = 0.9"),
        (lambda t: t.replace("p = 2", "p = 0"), "p = 0 is not a valid QI size"),
        # A bad [defaults] value is named where it is written, once (it read "scan 'narrow': ...").
        (lambda t: t.replace("pi_u = 0.5", "pi_u = 1.5"), "qar.toml: [defaults]: pi_u = 1.5 is outside (0, 1)"),
        (
            lambda t: t.replace("fail_above = 0.9", "fail_abve = 0.9"),
            "unknown key 'fail_abve'; did you mean 'fail_above'?",
        ),
        (
            lambda t: t.replace('source = "pg"', 'source = "pgg"'),
            "source 'pgg', which is not defined; did you mean 'pg'?",
        ),
        (
            lambda t: t.replace('url = "${QAR_TEST_WAREHOUSE}"', 'url = "postgresql://u:hunter2@h/db"'),
            "contains a password; keep secrets out of the file",
        ),
        (lambda t: t + "\n[[scan\n", "is not valid TOML"),
    ],
)
def test_bad_configs_exit_2(tmp_path, monkeypatch, change, message):
    monkeypatch.delenv("QAR_TEST_WAREHOUSE", raising=False)
    if "QAR_TEST_WAREHOUSE" not in message:
        monkeypatch.setenv("QAR_TEST_WAREHOUSE", "postgresql+psycopg://u:pw@localhost/db")

    class Fake:  # paths only: nothing connects before validation
        path, schema = str(tmp_path / "x.duckdb"), "s"

    cfg = write(tmp_path, change(config_text(Fake, Fake, 0.9, 0.9)))
    r = CliRunner().invoke(cli, ["scan", str(cfg)])
    assert r.exit_code == 2, r.output
    errors = [ln for ln in r.output.splitlines() if ln.strip()]
    assert len(errors) == 1 and errors[0].startswith("Error: qar.toml"), r.output
    assert message in r.output
    assert "hunter2" not in r.output
    assert not (tmp_path / "results.duckdb").exists()  # nothing ran, nothing was stored
    with pytest.raises((UsageError, ParameterError)):
        load_config(cfg)


def test_unknown_table_cli_exit_2(tmp_path):
    duck = Loader("duckdb", tmp_path)
    duck.load("narrow", NARROW)
    cfg = write(tmp_path, f'[sources.f]\nurl = "{duck.path}"\n[[scan]]\ntable = "nope"\n')
    r = CliRunner().invoke(cli, ["scan", str(cfg), "--no-store"])
    assert r.exit_code == 2
    assert "nope: table 'nope' not found" in r.output


def test_missing_config_and_no_arguments(tmp_path):
    r = CliRunner().invoke(cli, ["scan", str(tmp_path / "missing.toml")])
    assert r.exit_code == 2 and "does not exist" in r.output
    r = CliRunner().invoke(cli, ["scan"])
    assert r.exit_code == 2 and "name a scan config" in r.output


def test_example_config_parses(monkeypatch, tmp_path):
    example = Path(__file__).resolve().parents[2] / "examples" / "qar.toml"
    cfg = load_config(example)
    assert [s.name for s in cfg.scans] == ["demo population", "demo, published columns"]
    assert cfg.scans[1].fail_above == 0.95 and cfg.scans[1].warn_above == 0.3 and cfg.scans[0].p == 2
    # the commented warehouse scan, uncommented, parses too, with its secret masked
    text = example.read_text()
    block = text[text.index("# [sources.warehouse]") :]
    uncommented = text.replace(block, "\n".join(ln[2:] if ln.startswith("# ") else ln for ln in block.splitlines()))
    (tmp_path / "qar.toml").write_text(uncommented)
    monkeypatch.setenv("QAR_WAREHOUSE_URL", "postgresql+psycopg://u:Xyzzy42@db/warehouse")
    cfg = load_config(tmp_path / "qar.toml")
    assert [s.name for s in cfg.scans][-1] == "patients" and cfg.scans[-1].pi_u == 0.1
    assert "Xyzzy42" not in repr(cfg) and cfg.scans[-1].source_display == "postgresql+psycopg://u:***@db/warehouse"


def test_a_scan_records_only_where_a_store_is_asked_for(tmp_path, monkeypatch):
    """Nothing is written unasked: without --store or a [store] no qar_results.duckdb appears
    (not even with $QAR_STORE set, which only names what --store alone uses); with either the
    run is recorded, and --no-store still wins over a [store]."""
    duck = Loader("duckdb", tmp_path)
    duck.load("narrow", NARROW)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("QAR_STORE", raising=False)
    cfg = write(tmp_path, f'[sources.f]\nurl = "{duck.path}"\n[[scan]]\ntable = "narrow"\np = 2\npi_u = 0.5\n')
    before = sorted(p.name for p in tmp_path.iterdir())
    r = CliRunner().invoke(cli, ["scan", str(cfg)])
    assert r.exit_code == 0, r.output
    assert "recorded in" not in r.output
    assert qar_sql.scan_config(cfg).store is None
    monkeypatch.setenv("QAR_STORE", str(tmp_path / "env.duckdb"))
    assert CliRunner().invoke(cli, ["scan", str(cfg)]).exit_code == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no store file anywhere

    r = CliRunner().invoke(cli, ["scan", str(cfg), "--store"])  # --store alone: $QAR_STORE
    assert r.exit_code == 0 and [x.scan_name for x in S.runs(str(tmp_path / "env.duckdb"))] == ["narrow"]
    monkeypatch.delenv("QAR_STORE")
    r = CliRunner().invoke(cli, ["scan", str(cfg), "--store", "given.duckdb"])
    assert r.exit_code == 0 and len(S.runs(str(tmp_path / "given.duckdb"))) == 1
    cfg.write_text('[store]\nurl = "kept.duckdb"\n' + cfg.read_text())
    assert CliRunner().invoke(cli, ["scan", str(cfg), "--no-store"]).exit_code == 0
    assert not (tmp_path / "kept.duckdb").exists()
    assert CliRunner().invoke(cli, ["scan", str(cfg)]).exit_code == 0
    assert len(S.runs(str(tmp_path / "kept.duckdb"))) == 1
    assert not (tmp_path / "qar_results.duckdb").exists()


def test_junit_and_markdown_of_a_file_source(tmp_path):
    """A CSV takes no table: the failure names the file (never "table None"), the classname is
    the config's source name (not a path JUnit readers split at its dots), the Markdown cell is
    the file; every JUnit value passes one masker."""
    csv = tmp_path / "adult.v2.csv"
    csv.write_text("age,sex,zip,job\n" + "".join(f"{a},{s},{z},{j}\n" for a, s, z, j in zip(*WIDE.values())))
    cfg = write(
        tmp_path,
        '[sources.people]\nurl = "adult.v2.csv"\n[[scan]]\nname = "adult"\np = 2\npi_u = 0.5\nfail_above = 0\n',
    )
    junit, md = tmp_path / "j.xml", tmp_path / "m.md"
    r = CliRunner().invoke(cli, ["scan", str(cfg), "--junit", str(junit), "--markdown", str(md)])
    assert r.exit_code == 1, r.output
    (case,) = ET.parse(junit).getroot().iter("testcase")
    assert case.get("classname") == "qar.people"
    message = case.find("failure").get("message")
    assert "None" not in message and message.endswith(f"for {csv}")
    props = {p.get("name"): p.get("value") for p in case.iter("property")}
    assert props["table"] == "—" and props["source"] == str(csv)  # no empty value
    assert f"| adult | — | {cell(str(csv))} | fail |" in md.read_text()
    assert f"adult  {csv}" in r.stdout  # the text summary too


def test_markdown_and_junit_show_no_raw_html_nor_bidi_controls(tmp_path):
    """A scan named with U+202E (which reverses what follows) and HTML: the pull-request comment
    and the CI page show the control as its code point and the HTML as text."""
    csv = tmp_path / "a`b.csv"
    csv.write_text("age,sex,zip,job\n" + "".join(f"{a},{s},{z},{j}\n" for a, s, z, j in zip(*WIDE.values())))
    name = 'x\u202eevil <img src="http://example.com/t.png"> <!--'
    cfg = write(
        tmp_path,
        f'[sources.people]\nurl = "a`b.csv"\n[[scan]]\nname = {json.dumps(name)}\np = 2\npi_u = 0.5\nfail_above = 0\n',
    )
    junit, md = tmp_path / "j.xml", tmp_path / "m.md"
    r = CliRunner().invoke(cli, ["scan", str(cfg), "--junit", str(junit), "--markdown", str(md)])
    assert r.exit_code == 1, r.output
    text = md.read_text()
    assert "\u202e" not in text and "<img" not in text and "<!--" not in text
    shown = 'x⟦U+202E⟧evil &lt;img src="http://example.com/t.png"&gt; &lt;\\!--'
    assert f"| {shown} | — | {cell(str(csv))} |" in text and "a\\`b.csv" in text  # the backtick shown, escaped
    assert "\u202e" not in junit.read_text()
    (case,) = ET.parse(junit).getroot().iter("testcase")
    assert case.get("name").startswith("x⟦U+202E⟧evil <img")  # XML escapes it; the control is shown


def test_a_config_that_is_not_utf8_is_one_sentence(tmp_path):
    cfg = tmp_path / "qar.toml"
    cfg.write_bytes(b'\xff\xfe[sources.a]\nurl = "x.csv"\n')
    r = CliRunner().invoke(cli, ["scan", str(cfg), "--no-store"])
    assert r.exit_code == 2, r.output
    assert r.output == f"Error: scan config {str(cfg)!r} is not UTF-8 text (byte 0: b'\\xff'); save it as UTF-8\n"


def test_an_empty_scan_name_is_said_to_be_empty(tmp_path):
    """name = "" was refused as "name must be text", which it is."""
    cfg = write(tmp_path, '[sources.s]\nurl = "x.duckdb"\n[[scan]]\nname = ""\ntable = "t"\n')
    r = CliRunner().invoke(cli, ["scan", str(cfg), "--no-store"])
    assert r.exit_code == 2 and "name must be a non-empty text" in r.output, r.output


def test_defaults_null_tokens_reach_a_csv_scan_as_null_token_does(tmp_path):
    """[defaults] null_tokens is documented for the config file; qar scan refused it beside
    [[scan]] ("unknown key") though --check and the schema accepted it. The scan's risk equals
    qar audit's with --null-token, and differs from the file read without it."""
    rows = ["age,sex,zip,job"] + [
        ",".join([{0: "NA", 1: ""}.get((i * 7 + j) % 5, str(v[i])) for j, v in enumerate(WIDE.values())])
        for i in range(16)
    ]  # empty cells and 'NA': two values, or one (NULL) with the token
    (tmp_path / "t.csv").write_text("\n".join(rows) + "\n")
    config = tmp_path / "qar.toml"
    base = '[sources.f]\nurl = "t.csv"\n[defaults]\np = 2\npi_u = 0.5\n{}[[scan]]\nname = "t"\nsource = "f"\n'
    risks = {}
    for tokens in ("", 'null_tokens = ["NA"]\n'):
        config.write_text(base.format(tokens))
        assert CliRunner().invoke(cli, ["config", "--check", str(config)]).exit_code == 0
        r = CliRunner().invoke(cli, ["scan", str(config), "-q", "-f", "json", "--no-store"])
        assert r.exit_code == 0, r.output
        risks[tokens] = json.loads(r.stdout)["scans"][0]["risk"]
    audit = CliRunner().invoke(
        cli, ["audit", str(tmp_path / "t.csv"), "-p", "2", "--pi-u", "0.5", "--null-token", "NA", "-f", "json", "-q"]
    )
    assert audit.exit_code == 0, audit.output
    assert risks['null_tokens = ["NA"]\n'] == json.loads(audit.stdout)["risk"] != risks[""]
    config.write_text(base.format("null_tokens = [1]\n"))
    r = CliRunner().invoke(cli, ["scan", str(config), "-q"])
    assert r.exit_code == 2 and "null_tokens must be a list of non-empty texts" in r.output


def test_a_scan_without_a_risk_says_its_fix_as_a_scan_writes_it(tmp_path):
    """The audit's warning that ends a scan without a risk names the command line's --exclude;
    qar scan has none: the fix is the scan's exclude = [...] (as its refusals say)."""
    duck = Loader("duckdb", tmp_path)
    duck.load("people", {"id": list(range(16)), **WIDE})
    cfg = write(tmp_path, f'[sources.f]\nurl = "{duck.path}"\n[[scan]]\ntable = "people"\np = 2\npi_u = 0.5\n')
    r = CliRunner().invoke(cli, ["scan", str(cfg), "--no-store", "-f", "json"])
    error = json.loads(r.stdout)["scans"][0]["error"]
    assert "identifies every record" in error and "--exclude" not in error, error
    assert "exclude = ['id'] in the scan's [[scan]]" in error, error
