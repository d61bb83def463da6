"""The HTML report (``qar report``, ``qar audit --format html``): valid HTML, sections present iff
their input is given, no secret in the file, the numbers on the page equal the JSON block and
an independent computation, and the page opened in a real headless Chromium."""

from __future__ import annotations

import dataclasses
import json
import math
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import duckdb
import html5lib
import pytest
from conftest import AGE_BANDS_TOML

import qar_sql
from qar_sql.demo import DEMO_COLUMNS, write_population
from qar_sql.output.html import ReportInputs, fmt, lookup, render_html
from tests.compliance.test_store import pg_schema  # noqa: F401  (a fixture: a PostgreSQL schema of its own)
from tests.conftest import IN_CI, PG_URL, Loader, assert_close

REPO = Path(__file__).resolve().parents[2]
COLUMNS = list(DEMO_COLUMNS[:9])  # 84 QIs of p = 3; with π_u = 0.1 a tail of about 8
RISK = {"p": 3, "pi_u": 0.1}
OPTIONAL = ("records", "whatif", "classic", "compare", "uniqueness", "history")
GROUP_SIZE = 5


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> dict:
    """The demo population (3,000 people), a treatments file and a store with two past runs."""
    d = tmp_path_factory.mktemp("report")
    path = str(d / "demo.duckdb")
    con = duckdb.connect(path)
    write_population(con, "population", n=3000, seed=7)
    # The treated release of the compare section: age in 10-year bands, linked by person_id.
    kept = ", ".join("(age // 10) * 10 as age" if c == "age" else f'"{c}"' for c in COLUMNS)
    con.execute(f"create table population_treated as select person_id, {kept} from population")
    con.close()
    (d / "t.toml").write_text(AGE_BANDS_TOML)
    store = str(d / "store.duckdb")
    from qar_sql.compliance.store import recorded_audit

    for _ in range(2):
        recorded_audit(store, path, table="population", columns=COLUMNS, **RISK)
    # The inputs of the optional sections, and the treated release the compare section reads.
    sections = {"key": ["person_id"], "treatments": str(d / "t.toml"), "store": store, "group_size": GROUP_SIZE}
    compared = {"compare": path, "treated_table": "population_treated", "link": "person_id"}
    full = qar_sql.report(
        path,
        table="population",
        columns=COLUMNS,
        **RISK,
        **sections,
        **compared,
        classic=True,
        command="qar report demo.duckdb -t population",
    )
    return {"dir": d, "path": path, "store": store, "full": full, "html": full.to_html()}


def qar(*args: str, env: dict | None = None):
    """``qar ARGS`` in process (click's runner: a child interpreter would spend more time importing
    than the command runs), with ``env`` set; its result, asserting exit code 0."""
    from click.testing import CliRunner

    from qar_sql.cli.main import cli

    res = CliRunner(env=env).invoke(cli, list(args), catch_exceptions=False)
    assert res.exit_code == 0, res.stderr
    return res


def parse(html: str):
    """html5lib's strict parser: any parse error raises."""
    parser = html5lib.HTMLParser(strict=True, namespaceHTMLElements=False)
    return parser.parse(html)


def numbers(doc) -> dict:
    return json.loads("".join(doc.find(".//pre[@id='qar-numbers']").itertext()))


def svgs(doc, *, history: bool = True) -> list:
    """The inline figures (without the history section's with ``history=False``)."""
    sections = [s for s in doc.iter("section") if history or s.get("id") != "history"]
    inside = sections if not history else [doc]
    return [e for s in inside for e in s.iter() if isinstance(e.tag, str) and e.tag.rsplit("}", 1)[-1] == "svg"]


def sql_block(doc) -> str:
    """The text of the reproducibility section's SQL block ("" when there is none)."""
    pre = doc.find(".//pre[@class='sql']")
    return "" if pre is None else "".join(pre.itertext())


def shown(doc) -> list[tuple[str, str]]:
    """Each marked number outside the history section: (its JSON path, the text shown)."""
    return [
        (e.get("data-qar"), "".join(e.itertext()))
        for e in doc.iter()
        if e.get("data-qar") and not e.get("data-qar").startswith("history.")
    ]


def section_ids(doc) -> set[str]:
    return {s.get("id") for s in doc.iter("section")}


#: The paths of the JSON block that hold T̂ (or a change of it): levels of θ, not shares.
T_HAT_PATH = re.compile(
    r"^(audit\.risk|elimination\.(risk|rises\.\d+\.risk|curves\.\w+\.\d+\.risk)|history\.series\.\d+\.runs"
    r"\.\d+\.(risk|change)|whatif\.\w+\.\d+\.(risk|risk_change)|compare\.risk_(original|treated))$"
)


def check_numbers(doc) -> int:
    """Every number shown (marked data-qar) is the JSON value at its path, as formatted; returns
    how many were checked."""
    data = numbers(doc)
    marked = [e for e in doc.iter() if e.get("data-qar")]
    for e in marked:
        value = lookup(data, e.get("data-qar"))
        if T_HAT_PATH.search(e.get("data-qar")):  # a level of θ, never shown as a share of people
            assert e.get("data-fmt") != "share", e.get("data-qar")
        assert "".join(e.itertext()) == fmt(value, e.get("data-fmt") or "auto"), e.get("data-qar")
        if e.get("title") is not None:  # the full precision, in the tooltip
            assert e.get("title") == (repr(value) if isinstance(value, float) else str(value)), e.get("data-qar")
    return len(marked)


def test_demo_report_is_valid_html_with_every_section(demo):
    doc = parse(demo["html"])
    assert section_ids(doc) == {
        "summary",
        "theta",
        "sensitivity",
        "qis",
        "kanonymity",
        "records",
        "whatif",
        "classic",
        "compare",
        "uniqueness",
        "history",
        "reproducibility",
    }
    for s in doc.iter("section"):  # each with its plain-language text and its fold-out
        assert s.find(".//p[@class='explain']") is not None, s.get("id")
        assert any("How this was computed" in "".join(x.itertext()) for x in s.iter("summary")), s.get("id")
    csp = doc.find(".//meta[@http-equiv='Content-Security-Policy']").get("content")
    assert "default-src 'none'" in csp and "img-src data:" in csp
    for svg in svgs(doc):  # figures carry a text alternative
        assert svg.get("role") == "img" and svg.get("aria-label")
    assert len(svgs(doc)) >= 8  # θ, QQ, class sizes, elimination, history, fk, θ before/after, π(k)
    sql = sql_block(doc)  # the audit's statements, then each other section's as it ran
    headers = [line for line in sql.splitlines() if line.startswith("-- ") and "as rendered while it ran" in line]
    assert sql.startswith("-- qar-sql audit") and [h.split(":")[0] for h in headers] == [
        *("-- what-if", "-- uniqueness", "-- original vs treated", "-- classic measures")
    ]
    for table in doc.iter("table"):
        assert table.find(".//th") is not None


@pytest.mark.parametrize("name", OPTIONAL)
def test_an_optional_section_is_absent_without_its_input(demo, name):
    full: ReportInputs = demo["full"]
    if name == "records":
        inp = dataclasses.replace(full, records=None, elimination=None)
    else:
        inp = dataclasses.replace(full, **{name: None})
    doc = parse(render_html(inp))
    assert name not in section_ids(doc)
    assert name not in numbers(doc) and (name != "records" or "elimination" not in numbers(doc))
    assert {"summary", "theta", "qis", "kanonymity", "reproducibility"} <= section_ids(doc)


def test_qar_report_without_optional_inputs_has_only_the_audit_sections(demo, tmp_path):
    """qar report with none of --key, --treatments, --compare, --group-size, --store, and with
    --no-classic: the audit's sections and the reproducibility block, whose SQL is the audit's alone."""
    out = tmp_path / "bare.html"
    qar(
        *("report", demo["path"], "-t", "population", "-c", ",".join(COLUMNS), "--pi-u", "0.1", "--no-classic"),
        *("-o", str(out), "-q"),
    )
    doc = parse(out.read_text(encoding="utf-8"))
    assert section_ids(doc) == {"summary", "theta", "sensitivity", "qis", "kanonymity", "reproducibility"}
    assert set(numbers(doc)) == {"audit", "summary", "parameters"}
    sql = sql_block(doc)
    assert sql.startswith("-- qar-sql audit") and "as rendered while it ran" not in sql


def test_numbers_on_the_page_equal_the_json_and_an_independent_computation(demo):
    doc = parse(demo["html"])
    assert check_numbers(doc) > 100
    data = numbers(doc)
    con = duckdb.connect(demo["path"], read_only=True)
    assert data["audit"]["rows"] == con.execute("select count(*) from population").fetchone()[0]
    # θ of one QI by a GROUP BY written here, not by qar's templates
    q0 = data["audit"]["qis"][0]
    cols = ", ".join(f'"{c}"' for c in q0["columns"])
    distinct = con.execute(f"select count(*) from (select distinct {cols} from population)").fetchone()[0]
    con.close()
    assert q0["distinct"] == distinct
    # T̂ and the top records equal those of the audit and records commands run on their own
    a = qar_sql.audit(demo["path"], table="population", columns=COLUMNS, **RISK)
    assert data["audit"]["risk"] == a.risk
    from qar_sql.commands.records import contributions

    c = contributions(demo["path"], table="population", columns=COLUMNS, **RISK, key=["person_id"], top=10)
    assert [r["position"] for r in data["records"]["top"]] == [int(r) + 1 for r in c.order("dt")[:10]]
    assert data["summary"]["verdict"] is None and data["summary"]["threshold"] is None  # none set: no verdict
    assert [s["name"] for s in data["whatif"]["scenarios"]] == ["original", "age_10y"]
    assert len(data["history"]["series"][0]["runs"]) == 2


def test_classic_compare_and_uniqueness_numbers_equal_independent_counts(demo):
    """The three sections' numbers against GROUP BYs written here and closed forms."""
    data = numbers(parse(demo["html"]))
    con = duckdb.connect(demo["path"], read_only=True)
    rows = data["audit"]["rows"]

    def sizes(columns, table="population") -> list[int]:
        cols = ", ".join(f'"{c}"' for c in columns)
        return [n for (n,) in con.execute(f"select count(*) from {table} group by {cols}").fetchall()]

    # classic: the QI with the most expected re-identifications; without a weight each record's
    # risk is 1/fk, so the expected re-identifications are the number of classes
    top = max(data["classic"]["qis"], key=lambda q: (q["expected_reidentifications"], -q["index"]))
    fk = sizes(top["columns"])
    assert top["classes"] == len(fk) and top["expected_reidentifications"] == pytest.approx(len(fk), rel=1e-12)
    assert top["sample_uniques"] == sum(n == 1 for n in fk)
    assert top["violations"]["3"] == sum(n for n in fk if n < 3)
    assert_close(top["prosecutor"]["average"], len(fk) / rows)
    assert top["fk_histogram"] == {str(k): k * c for k, c in sorted(Counter(fk).items())}
    # compare: θ of the treated table, and T̂ of the original equal to the audit's
    for q in data["compare"]["qis"]:
        assert q["theta_treated"] == len(sizes(q["columns"], "population_treated")) / rows
    assert_close(data["compare"]["risk_original"], data["audit"]["risk"])
    assert data["compare"]["rows_treated"] == rows and data["compare"]["link"] == "key:person_id"
    # uniqueness: P(all k unique) = k! e_k(p), e_k by the usual recurrence
    k = data["uniqueness"]["group_size"]
    assert k == GROUP_SIZE
    for q in data["uniqueness"]["qis"][:3]:
        e = [1.0] + [0.0] * k
        for n in sizes(q["columns"]):
            for j in range(k, 0, -1):
                e[j] += e[j - 1] * n / rows
        assert q["pi_exact"] == pytest.approx(math.factorial(k) * e[k], rel=1e-9)
        assert q["distinct"] == len(sizes(q["columns"]))
    con.close()


def test_audit_format_html(demo):
    out = qar(
        "audit", demo["path"], "-t", "population", "-c", ",".join(COLUMNS), "--pi-u", "0.1", "-f", "html", "-q"
    ).stdout
    doc = parse(out)
    assert section_ids(doc) == {"summary", "theta", "sensitivity", "qis", "kanonymity", "reproducibility"}
    assert check_numbers(doc) > 20
    # --group-size: the audit's own uniqueness measures make the uniqueness section
    doc = cli_html("audit", demo["path"], "-t", "population", "-c", ",".join(COLUMNS), "--pi-u", "0.1", "-q")
    assert "uniqueness" not in section_ids(doc)
    doc = cli_html(
        *("audit", demo["path"], "-t", "population", "-c", ",".join(COLUMNS), "--pi-u", "0.1", "-q"),
        *("--group-size", str(GROUP_SIZE)),
    )
    assert section_ids(doc) == {"summary", "theta", "sensitivity", "qis", "kanonymity", "uniqueness", "reproducibility"}
    full = numbers(parse(demo["html"]))["uniqueness"]["qis"]
    got = {tuple(q["columns"]): q["pi_exact"] for q in numbers(doc)["uniqueness"]["qis"]}
    assert all(got[tuple(q["columns"])] == pytest.approx(q["pi_exact"], rel=1e-12) for q in full)


def test_audit_and_records_format_html_with_a_store_show_the_history(demo, tmp_path):
    """--store with --format html: the run is recorded, and the history section shows it with the
    earlier runs of the table there, each T̂ as the store holds it; without --store, no history."""
    from qar_sql.compliance.store import runs

    store = str(tmp_path / "store.duckdb")
    where = (demo["path"], "-t", "population", "-c", ",".join(COLUMNS), "--pi-u", "0.1", "-q", "--store", store)
    first, second = cli_html("audit", *where), cli_html("audit", *where)
    assert section_ids(first) == {"summary", "theta", "sensitivity", "qis", "kanonymity", "history", "reproducibility"}
    stored = runs(store)
    assert len(stored) == 2 and stored[0].risk == stored[1].risk == numbers(first)["audit"]["risk"]
    for doc, n in ((first, 1), (second, 2)):
        points = numbers(doc)["history"]["series"][0]["runs"]
        assert [p["run_id"] for p in points] == [r.run_id for r in stored[:n]]
        assert [p["risk"] for p in points] == [r.risk for r in stored[:n]]
        assert numbers(doc)["parameters"]["store"] == store
        assert check_numbers(doc) > 20
    records = cli_html("records", *where, "--key", "person_id", "--top", "5")
    assert section_ids(records) >= {"records", "history"} and len(runs(store)) == 3
    # (qar records records its runs under the table's name as source, so they form a series of their own)
    assert runs(store)[-1].run_id in {p["run_id"] for s in numbers(records)["history"]["series"] for p in s["runs"]}


def cli_html(*args: str, env: dict | None = None):
    """A command's --format html on stdout, parsed strictly (click's runner, in process)."""
    from click.testing import CliRunner

    from qar_sql.cli.main import cli

    res = CliRunner(env=env).invoke(cli, [*args, "-f", "html"], catch_exceptions=False)
    assert res.exit_code == 0, res.stderr
    return parse(res.stdout)


def test_whatif_compare_uniqueness_and_risk_format_html(demo):
    """Each command's report has the summary, its own section and the reproducibility block,
    and no audit section; its numbers are those of the same command's JSON."""
    path, cols = demo["path"], ",".join(COLUMNS)
    where = [path, "-t", "population", "-c", cols]
    docs = {
        "whatif": cli_html("whatif", *where, "-T", str(demo["dir"] / "t.toml"), "--pi-u", "0.1", "--no-loss", "-q"),
        "compare": cli_html(
            *("compare", path, path, "-t", "population", "--treated-table", "population_treated"),
            *("--link", "person_id", "-c", cols, "--pi-u", "0.1", "-q"),
        ),
        "uniqueness": cli_html("uniqueness", *where, "-g", str(GROUP_SIZE), "-q"),  # --exposed 5 by default
        "classic": cli_html("risk", *where, "-p", "3", "-q"),
    }
    full = numbers(parse(demo["html"]))
    command = {"whatif": "qar whatif", "compare": "qar compare", "uniqueness": "qar uniqueness", "classic": "qar risk"}
    for name, doc in docs.items():
        assert section_ids(doc) == {"summary", name, "reproducibility"}, name
        assert check_numbers(doc) > 10
        # The SQL the command rendered while it ran, under a comment naming it (reproducibility)
        sql = sql_block(doc)
        assert sql.startswith(f"-- {command[name]}: ") and '"population"' in sql, name
        assert int(sql.split(": ", 1)[1].split(" ", 1)[0]) >= 1 and sql.rstrip().endswith(";"), name
        data = numbers(doc)
        assert "audit" not in data
        if name == "whatif":
            assert [s["risk"] for s in data["whatif"]["scenarios"]] == [s["risk"] for s in full["whatif"]["scenarios"]]
        elif name == "classic":
            assert data["classic"]["qis"] == full["classic"]["qis"]
        else:
            assert data[name]["qis"] == full[name]["qis"]  # no most_exposed values in the uniqueness report


def test_secrets_never_appear(tmp_path, monkeypatch):
    """A URL carrying a secret as the source, and a hash secret: neither reaches the file; the
    record keys appear only hashed."""
    loader = Loader("postgresql", tmp_path)
    try:
        ids = [f"person-{i:04d}-x" for i in range(200)]
        data = {
            "id": ids,
            "a": [i % 7 for i in range(200)],
            "b": [i % 11 for i in range(200)],
            "c": [i % 13 for i in range(200)],
            "d": [(i * 7) % 5 for i in range(200)],
        }
        _, table = loader.load("people", data)
        password = "T0kenS3cretXY"
        url = PG_URL + ("&" if "?" in PG_URL else "?") + f"sslpassword={password}"
        secret = "hmac-s3cret-value"
        out = tmp_path / "r.html"
        env = {"QAR_HASH_SECRET": secret}
        qar("report", url, "-t", table, "-c", "a,b,c,d", "-p", "2", "--pi-u", "0.2", "--key", "id", "-o", str(out), "-q",
            env=env)  # fmt: skip
        html = out.read_text()
        # The other commands' reports, the source given on the command line or in $QAR_DATABASE_URL
        where = ["-t", table, "-c", "a,b,c,d", "-p", "2", "-f", "html", "-q"]
        others = [
            ("uniqueness", url, *where, "-g", "3"),
            ("risk", *where),
            ("compare", url, url, "-t", table, "--link", "id", "-c", "a,b,c,d", "--components", "2", "--no-risk")
            + ("-f", "html", "-q"),
        ]
        pages = [qar(*args, env={**env, "QAR_DATABASE_URL": url}).stdout for args in others]
    finally:
        loader.cleanup()
    for page in pages:
        assert password not in page and section_ids(parse(page)) >= {"summary", "reproducibility"}
    assert "sslpassword=***" in pages[0] and "sslpassword=***" in pages[1]  # in the parameters, masked
    assert password not in html and secret not in html
    assert "sslpassword=***" in html  # the command line is there, masked
    assert not any(k in html for k in ids)
    doc = parse(html)
    assert numbers(doc)["records"]["hashed"] is True
    from qar_sql.compliance.store import hash_key

    top = numbers(doc)["records"]["top"]
    assert top[0]["hashed_key"] == hash_key(ids[top[0]["position"] - 1], secret)


def test_without_a_secret_records_show_positions_only(tmp_path):
    csv = tmp_path / "p.csv"
    mods = (2, 3, 5, 7, 11, 13)
    csv.write_text(
        "name,a,b,c,d,e,f\n" + "".join(f"Name{i}x," + ",".join(str(i % m) for m in mods) + "\n" for i in range(90))
    )
    html = qar_sql.report(str(csv), exclude=["name"], p=2, pi_u=0.2).to_html()
    assert "Name1" not in html.replace(str(csv), "")
    rec = numbers(parse(html))["records"]
    assert rec["hashed"] is False and all(r["hashed_key"] is None for r in rec["top"])


def _chromium() -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if exe is None:
        reason = "headless Chromium is not installed (apt-get install chromium)"
        if IN_CI:
            pytest.fail(f"{reason}; CI=true: the browser test must run")
        pytest.skip(reason)
    return exe


#: Headless, no sandbox (containers), and none of Chromium's own background traffic it can switch off.
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
)


def _browse(exe: str, page: Path, tmp: Path) -> tuple[str, list[str], list[str]]:
    """Open ``page`` in headless Chromium: its DOM as the browser built it, the console lines
    (script errors, CSP violations) and the URLs of every network request the page made.

    Requests come from Chromium's net log: those with an initiator are the page's; Chromium's
    own background traffic (update checks, accounts) has the initiator "not an origin"."""
    log = tmp / f"{page.stem}.netlog.json"
    run = subprocess.run(
        [
            exe,
            *CHROMIUM_FLAGS,
            f"--user-data-dir={tmp / ('profile-' + page.stem)}",
            "--enable-logging=stderr",
            "--v=0",
            f"--log-net-log={log}",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=300,  # a loaded machine (2 cores, several test runs) starts Chromium slowly
    )
    assert run.returncode == 0, run.stderr[-2000:]
    console = [line for line in run.stderr.splitlines() if "CONSOLE" in line or "Content Security Policy" in line]
    text = log.read_text(encoding="utf-8").rstrip()
    events = json.loads(text if text.endswith("}") else text.rstrip(",") + "]}")["events"]  # cut short at exit
    requests = [
        e["params"]["url"]
        for e in events
        if "url" in e.get("params", {}) and e["params"].get("initiator", "not an origin") != "not an origin"
    ]
    return run.stdout, console, requests


def test_the_report_in_headless_chromium(demo, tmp_path):
    exe = _chromium()
    # The checks themselves first: a page without the CSP, with a script error and an image
    # from the network, is caught by both.
    control = tmp_path / "control.html"
    control.write_text(
        '<!DOCTYPE html><html lang="en"><head><title>c</title></head><body>'
        '<img src="http://127.0.0.1:9/x.png" alt=""><script>undefined_function()</script></body></html>'
    )
    _, console, requests = _browse(exe, control, tmp_path)
    assert any("undefined_function" in line for line in console) and requests == ["http://127.0.0.1:9/x.png"]

    page = tmp_path / "report.html"
    page.write_text(demo["html"], encoding="utf-8")
    dom, console, requests = _browse(exe, page, tmp_path)
    assert not console, console
    assert not requests, requests
    doc = html5lib.parse(dom, namespaceHTMLElements=False)
    for e in doc.iter():
        for attr in ("src", "href", "{http://www.w3.org/1999/xlink}href", "xlink:href", "action", "data"):
            v = e.get(attr)
            assert not (v and re.match(r"\s*(https?:)?//", v)), (e.tag, attr, v)
    assert check_numbers(doc) > 100  # as the browser built the page
    shot = tmp_path / "shot.png"
    run = subprocess.run(
        [exe, *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'shot'}"]
        + [f"--screenshot={shot}", "--window-size=1200,2000", page.as_uri()],
        capture_output=True,
        timeout=300,
    )
    assert run.returncode == 0 and shot.is_file()
    try:
        from PIL import Image, ImageStat
    except ImportError:
        assert shot.stat().st_size > 20_000  # a blank 1200×2000 PNG is a few kB
        return
    img = Image.open(shot).convert("L")
    assert img.size == (1200, 2000)
    assert ImageStat.Stat(img).stddev[0] > 10, "the screenshot is blank"


def _print_to_pdf(exe: str, page: Path, pdf: Path) -> bytes:
    run = subprocess.run(
        [exe, *CHROMIUM_FLAGS, f"--user-data-dir={page.parent / ('pdf-' + page.stem)}", "--no-pdf-header-footer"]
        + [f"--print-to-pdf={pdf}", page.as_uri()],
        capture_output=True,
        timeout=300,
    )
    assert run.returncode == 0 and pdf.is_file(), run.stderr[-2000:]
    return pdf.read_bytes()


def _pages(pdf: bytes) -> int:
    """The pages of a PDF: the /Count of its page tree's root (the largest; Chromium writes the
    page tree uncompressed)."""
    return max(int(n) for n in re.findall(rb"/Count (\d+)", pdf))


def test_the_report_prints_to_pdf(demo, tmp_path):
    """Printed to PDF by headless Chromium (the print stylesheet), the report is a document of a
    readable length: every section, the fold-outs open, but not the SQL and the JSON block (a
    hundred pages of text for programs; the print says they are in the HTML file). The PDF's
    text is not read back: that needs a PDF parser such as pypdf, which qar-sql does not depend
    on; the numbers on the page are checked against the JSON in the browser test above."""
    exe = _chromium()
    page = tmp_path / "report.html"
    page.write_text(demo["html"], encoding="utf-8")
    pdf = _print_to_pdf(exe, page, tmp_path / "report.pdf")
    assert pdf.startswith(b"%PDF-") and pdf.rstrip().endswith(b"%%EOF")
    assert len(pdf) > 100_000 and 5 <= _pages(pdf) <= 40, (len(pdf), _pages(pdf))
    control = tmp_path / "control.html"  # the page counter itself, on a page of known length
    control.write_text("<!DOCTYPE html><title>c</title>" + '<p style="break-after: page">x</p>' * 3, encoding="utf-8")
    assert _pages(_print_to_pdf(exe, control, tmp_path / "control.pdf")) == 3


def test_session_logs_what_its_connection_renders_in_any_thread(engine):
    """Session.logging_sql: every statement rendered on the session's connection while it is
    open, also in worker threads, once in nested blocks, none after; another session's
    statements (a process-wide recorder would take them) stay out of it, and the connection
    renders as before once the block closes."""
    import threading

    import qar_sql
    from qar_sql.pushdown.insql import risk_sql

    source, table = engine.load("log t", {"a": [1, 4], "b": [2, 5], "c": [3, 6]})

    def rendered(s) -> str:
        return risk_sql(s.dialect, s.relation.sql, ["a", "b", "c"], 2, pi_u=0.5)

    with qar_sql.connect(source, table=table) as session, qar_sql.connect(source, table=table) as other:
        plain = session.dialect
        with session.logging_sql() as outer:
            with session.logging_sql() as inner:
                first = rendered(session)
            worker = threading.Thread(target=rendered, args=(session,))
            worker.start()
            worker.join()
            rendered(other)
        rendered(session)
        assert inner is outer is session.sql_log and other.sql_log == []
        assert session.dialect is plain and plain.sql_log is None
    assert outer and len(outer) % 2 == 0 and outer[: len(outer) // 2] == outer[len(outer) // 2 :]
    assert all(statement.strip() in first for statement in outer)  # the statement is made of them


def test_class_size_bins_keep_every_record():
    from qar_sql.output.figures import size_bins

    pairs = [(1, 7), (2, 3), (4, 1), (5, 2), (12, 1), (700, 2)]
    bars = size_bins(pairs, 5)
    assert [b[0] for b in bars] == [
        "1",
        "2",
        "3",
        "4",
        "5–9",
        "10–19",
        "20–49",
        "50–99",
        "100–199",
        "200–499",
        "500–999",
    ]
    assert sum(b[1] for b in bars) == sum(s * n for s, n in pairs)
    assert [b[1] for b in bars[:5]] == [7, 6, 0, 4, 10] and all(b[2] for b in bars[:4]) and not bars[4][2]


def test_history_section_with_a_store_without_runs_of_the_table(demo, tmp_path):
    from qar_sql.compliance.store import migrate

    migrate(str(tmp_path / "empty.duckdb"))  # (a store that does not exist is refused before the work)
    html = qar_sql.report(
        demo["path"], table="population", columns=COLUMNS, **RISK, records=False, store=str(tmp_path / "empty.duckdb")
    ).to_html()
    doc = parse(html)
    assert "history" in section_ids(doc) and numbers(doc)["history"]["series"] == []


def test_records_format_html(demo):
    out = qar("records", demo["path"], "-t", "population", "-c", ",".join(COLUMNS), "--pi-u", "0.1",
              "--key", "person_id", "--top", "5", "-f", "html", "-q").stdout  # fmt: skip
    doc = parse(out)
    assert section_ids(doc) == {"summary", "theta", "sensitivity", "qis", "kanonymity", "records", "reproducibility"}
    assert check_numbers(doc) > 20
    full = numbers(parse(demo["html"]))["records"]["top"][:5]
    assert numbers(doc)["records"]["top"] == full


def test_report_rebuilt_from_a_stored_run(demo, tmp_path):
    """qar report --from-store --run: the stored run's numbers, without reading the source."""
    from click.testing import CliRunner

    from qar_sql.cli.main import cli
    from qar_sql.compliance.store import runs

    run = runs(demo["store"])[-1]
    out = tmp_path / "stored.html"
    res = CliRunner().invoke(
        cli, ["report", "--from-store", demo["store"], "--run", run.run_id, "-o", str(out)], catch_exceptions=False
    )
    assert res.exit_code == 0, res.stderr
    doc = parse(out.read_text(encoding="utf-8"))
    assert section_ids(doc) == {"summary", "theta", "sensitivity", "qis", "kanonymity", "history", "reproducibility"}
    assert check_numbers(doc) > 50
    data, full = numbers(doc), numbers(parse(demo["html"]))["audit"]
    assert data["audit"]["risk"] == run.risk == full["risk"]
    fields = ("columns", "distinct", "singletons", "theta", "min_class_size", "class_sizes")  # histograms kept (0004)
    assert [{f: q[f] for f in fields} for q in data["audit"]["qis"]] == [{f: q[f] for f in fields} for q in full["qis"]]
    assert data["parameters"]["run"] == run.run_id
    assert "records" not in data  # qar audit --store records no top records

    # A run of qar records --store --hash-keys recorded before 0004: its top records come back, keys only hashed
    store = str(tmp_path / "records.duckdb")
    args = ["records", demo["path"], "-t", "population", "-c", ",".join(COLUMNS), "--pi-u", "0.1", "--key"]
    env = {"QAR_HASH_SECRET": "s3cret-for-keys"}
    res = CliRunner(env=env).invoke(cli, [*args, "person_id", "--store", store, "--hash-keys", "-q"])
    assert res.exit_code == 0, res.stderr
    run = runs(store)[-1]
    # A run recorded before migration 0004 kept its top records only by rank, hashed key and DT
    con = duckdb.connect(store)
    con.execute("delete from qar_run_results")
    con.close()
    CliRunner().invoke(cli, ["report", "--from-store", store, "--run", run.run_id, "-o", str(out)])
    html = out.read_text(encoding="utf-8")
    doc = parse(html)
    assert "records" in section_ids(doc) and check_numbers(doc) > 50
    stored, full = numbers(doc)["records"], numbers(parse(demo["html"]))["records"]
    assert stored["stored"] is True and stored["hashed"] is True
    n = len(stored["top"])
    assert n > 0 and [r["position"] for r in stored["top"]] == list(range(1, n + 1))
    from qar_sql.compliance.store import hash_key

    con = duckdb.connect(demo["path"], read_only=True)
    ids = [i for (i,) in con.execute("select person_id from population order by person_id").fetchall()]
    con.close()
    for got, want in zip(stored["top"], full["top"][:n]):  # the same records, in the same order
        assert_close(got["dt"], want["dt"])
        assert got["hashed_key"] == hash_key(str(ids[want["position"] - 1]), env["QAR_HASH_SECRET"])
    bad = CliRunner().invoke(cli, ["report", "--from-store", demo["store"], "--run", "nope", "-o", str(out)])
    assert bad.exit_code == 2 and "'nope' is not in the results store" in bad.stderr


@pytest.fixture(params=["duckdb", "postgresql"])
def fresh_store(request, tmp_path):
    """An empty results store on each engine the store supports (PostgreSQL: a schema of its own)."""
    if request.param == "duckdb":
        yield str(tmp_path / "store.duckdb")
        return
    from tests.compliance.test_store import pg_store_url

    yield pg_store_url(request.getfixturevalue("pg_schema"))


def test_a_stored_run_rebuilds_the_live_report(demo, fresh_store, tmp_path):
    """qar report --from-store --run of a run recorded by audit --group-size --store and by
    records --store --hash-keys: the same sections and the same numbers as the live report of
    that run (--format html), histograms and curves included, on DuckDB and PostgreSQL stores."""
    from click.testing import CliRunner

    from qar_sql.cli.main import cli
    from qar_sql.compliance.store import runs

    where = (demo["path"], "-t", "population", "-c", ",".join(COLUMNS), "--pi-u", "0.1", "-q", "--store", fresh_store)
    env = {"QAR_HASH_SECRET": "s3cret-for-keys"}
    live = {
        "audit": cli_html("audit", *where, "--group-size", str(GROUP_SIZE)),
        "records": cli_html("records", *where, "--key", "person_id", "--top", "5", "--hash-keys", env=env),
    }
    out = tmp_path / "stored.html"
    # audit and records name the source alike (the path), so the store holds one history series
    assert {(r.source, r.table) for r in runs(fresh_store)} == {(demo["path"], "population")}
    for (name, doc), run in zip(live.items(), runs(fresh_store), strict=True):
        res = CliRunner().invoke(cli, ["report", "--from-store", fresh_store, "--run", run.run_id, "-o", str(out)])
        assert res.exit_code == 0, res.stderr
        stored = parse(out.read_text(encoding="utf-8"))
        assert section_ids(stored) == section_ids(doc), name
        # every figure but the history's: audit and records of one source are one history series,
        # which has grown since the live report
        assert "kanonymity" in section_ids(stored), name
        assert len(svgs(stored, history=False)) == len(svgs(doc, history=False)), name
        assert check_numbers(stored) > 50 and check_numbers(doc) > 50, name
        # the same numbers shown, but for the history, which has grown since the live report
        assert shown(stored) == shown(doc), name
        got, want = numbers(stored), numbers(doc)
        for key in ("audit", "uniqueness", "records"):
            assert got.get(key) == want.get(key), (name, key)
        assert got["audit"]["risk"] == run.risk and got["parameters"]["run"] == run.run_id
        assert all(q["class_sizes"] for q in got["audit"]["qis"])  # the histograms, kept
        if name == "audit":
            assert "uniqueness" in got and all("most_exposed" not in q for q in got["uniqueness"]["qis"])
        else:  # the records section: the hashed keys of the same records, no key in clear
            assert got["records"]["hashed"] and all(r["hashed_key"] for r in got["records"]["top"])


def test_scan_format_html_writes_a_report_per_table_and_an_index(demo, tmp_path):
    from click.testing import CliRunner

    from qar_sql.cli.main import cli

    config = tmp_path / "qar.toml"
    config.write_text(
        f"""
[defaults]
p = 3
pi_u = 0.1
columns = {json.dumps(COLUMNS)}

[sources.demo]
url = "{demo["path"]}"

[[scan]]
name = "people / original"
source = "demo"
table = "population"

[[scan]]
name = "people / treated"
source = "demo"
table = "population_treated"
"""
    )
    folder = tmp_path / "reports"
    res = CliRunner().invoke(
        cli, ["scan", str(config), "--no-store", "-f", "html", "--report-dir", str(folder)], catch_exceptions=False
    )
    assert res.exit_code == 0, res.stderr
    index = parse((folder / "index.html").read_text(encoding="utf-8"))
    assert check_numbers(index) >= 2
    links = [a.get("href") for a in index.iter("a")]
    assert links == ["people_original.html", "people_treated.html"]
    for scan, link in zip(numbers(index)["scans"], links):
        doc = parse((folder / link).read_text(encoding="utf-8"))
        assert section_ids(doc) == {"summary", "theta", "sensitivity", "qis", "kanonymity", "reproducibility"}
        assert numbers(doc)["audit"]["risk"] == scan["risk"] and numbers(doc)["audit"]["table"] == scan["table"]
    assert numbers(index)["scans"][0]["risk"] == numbers(parse(demo["html"]))["audit"]["risk"]
    refused = CliRunner().invoke(cli, ["scan", str(config), "--no-store", "-f", "html"])
    assert refused.exit_code == 2 and "--report-dir" in refused.stderr


def test_the_example_report_the_readme_links_is_complete():
    """examples/report/demo-report.html (scripts/make_demo_report.py): valid, every section,
    its numbers equal its JSON, and no temporary path of the machine that made it."""
    html = (REPO / "examples" / "report" / "demo-report.html").read_text(encoding="utf-8")
    doc = parse(html)
    assert section_ids(doc) == {
        *("summary", "theta", "sensitivity", "qis", "kanonymity", "records", "whatif", "classic"),
        *("compare", "uniqueness", "history", "reproducibility"),
    }
    assert check_numbers(doc) > 100
    assert "/tmp/" not in html and str(REPO) not in html


# --- one session: run(session, params) runs the sections' commands on the report's session ----------


def _tokens_csv(tmp_path) -> Path:
    """90 people whose town is missing as an empty cell or as "NA": read with --null-token NA
    the two are one class (NULL), read without it two (NULL and the value "NA")."""
    csv = tmp_path / "tokens.csv"
    towns = ("T0", "T1", "", "NA", "T2")
    rows = "".join(f"{i % 7},{'FM'[i % 2]},{towns[i % 5]},{i}\n" for i in range(90))
    csv.write_text("age,sex,town,id\n" + rows)
    return csv


def test_the_sections_run_on_the_report_s_session_opened_once(tmp_path, monkeypatch):
    """The report opens SOURCE once: the what-if, uniqueness and classic sections are their
    commands' run() on that session (before: each section opened the source again)."""
    from qar_sql.engines import source as engines_source

    csv = _tokens_csv(tmp_path)
    opened = []
    real = engines_source.open_source

    def counted(*args, **kwargs):
        opened.append(args[0] if args else kwargs.get("source"))
        return real(*args, **kwargs)

    monkeypatch.setattr(engines_source, "open_source", counted)
    treatments = 'qid = ["age", "sex", "town"]\n[treatments.age2]\ncolumn = "age"\nkind = "bands"\nwidth = 2\n'
    inputs = qar_sql.report(str(csv), exclude=["id"], p=2, pi_u=0.3, treatments=treatments, group_size=2, records=False)
    assert inputs.whatif is not None and inputs.uniqueness is not None and inputs.classic is not None
    assert opened == [str(csv)]


def test_the_sections_read_the_source_with_the_report_s_source_options(tmp_path):
    """--null-token applies to every section (one session): the classic and uniqueness sections
    equal qar risk's and qar uniqueness's with the same tokens (before, they read "NA" as a value)."""
    csv = str(_tokens_csv(tmp_path))
    cols, common = ["age", "sex", "town"], {"p": 2, "null_tokens": ["NA"]}
    inputs = qar_sql.report(csv, columns=cols, pi_u=0.3, group_size=2, records=False, **common)
    risk = qar_sql.risk(csv, columns=cols, **common)
    assert inputs.classic.to_dict()["qis"] == risk.to_dict()["qis"]
    unique = qar_sql.uniqueness(csv, columns=cols, group_size=2, exposed=0, **common)
    assert [q.distinct for q in inputs.uniqueness.qis] == [q.distinct for q in unique.qis]
    town = next(q for q in risk.qis if tuple(q.columns) == ("sex", "town"))
    assert town.classes == 2 * 4  # T0, T1, T2 and NULL ("" and NA) for each sex


def test_run_on_an_open_session_leaves_it_open_and_clean(tmp_path):
    """commands.report.run(session, ReportParams): the report of an open source, which stays open
    for its owner, with no temp table left behind; the same numbers as qar_sql.report."""
    from qar_sql.commands import report as report_command
    from qar_sql.parameters.release import ReportParams

    csv = str(_tokens_csv(tmp_path))
    settings = {"exclude": ["id"], "p": 2, "pi_u": 0.3, "group_size": 2}
    with qar_sql.connect(csv) as s:
        inputs = report_command.run(s, ReportParams(**settings))
        left = s.db.query("select table_name from duckdb_tables() where table_name <> 'qar_source'")
        assert left == [] and s.db.query("select 1") == [(1,)]
    again = qar_sql.report(csv, **settings)
    assert inputs.audit.risk == again.audit.risk and inputs.records.top == again.records.top
    assert inputs.classic.to_dict()["qis"] == again.classic.to_dict()["qis"]


def test_sensitivity_section_shows_both_measures_and_each_column(demo):
    """The section's numbers are the audit's: T̂ of the unique measure (marked, checked against
    the JSON block by check_numbers) and T̂ without each column, as leave_one_column_out gives."""
    doc = parse(demo["html"])
    data = numbers(doc)["audit"]
    assert data["theta"] == "distinct" and 0 < data["risk_unique"] <= 1
    section = next(s for s in doc.iter("section") if s.get("id") == "sensitivity")
    rows = [tuple("".join(td.itertext()).strip() for td in tr.iter("td")) for tr in section.iter("tr")]
    shown = {r[0]: r[1] for r in rows if len(r) == 3}
    assert set(shown) == set(data["leave_one_column_out"])
    for column, value in data["leave_one_column_out"].items():
        assert shown[column] == fmt(value, "plain")
    check_numbers(doc)
