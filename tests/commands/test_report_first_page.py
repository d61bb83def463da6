"""The report a privacy officer signs (issue 29): the first page's five numbers against brute
force, the verdict only against a threshold the user set (and where it came from), numbers as
people read them, the records and k-anonymity sections that do not contradict themselves, the
external release, the Markdown report, and the page in a real headless Chromium (DOM and PDF)."""

from __future__ import annotations

import itertools
import json
import random
import re
from collections import Counter
from pathlib import Path

import html5lib
import pytest
from click.testing import CliRunner

import qar_sql
from qar_sql.cli.main import cli
from qar_sql.errors import UsageError
from qar_sql.output import readable_numbers
from qar_sql.output.html import render_report
from tests.commands.test_report import _browse, _chromium, _pages, _print_to_pdf, check_numbers, numbers, parse

REPO = Path(__file__).resolve().parents[2]
COLS = ["a", "b", "c", "d", "e"]
K = 5
#: A number in scientific notation as people would see it (1e-05, 4.57234e-05, 2.5E+03).
SCIENTIFIC = re.compile(r"(?<![\w.])[-−]?\d+(?:\.\d+)?[eE][-+−]?\d+(?![\w.])")


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> dict:
    """A seeded 400-row CSV of 5 columns of different cardinalities, read back as tuples for
    the brute force; its report (p = 2: 10 QIs; π_u = 0.4 for a tail of 4)."""
    d = tmp_path_factory.mktemp("first-page")
    rng = random.Random(29)
    sizes = (3, 7, 11, 40, 90)
    rows = [tuple(rng.randrange(n) for n in sizes) for _ in range(400)]
    csv = d / "small.csv"
    csv.write_text(",".join(COLS) + "\n" + "".join(",".join(map(str, r)) + "\n" for r in rows), encoding="utf-8")
    inputs = qar_sql.report(str(csv), p=2, pi_u=0.4, k=K, classic=True)
    return {"csv": csv, "rows": rows, "inputs": inputs, "html": inputs.to_html(), "dir": d}


def brute_force(rows: list[tuple], p: int, k: int) -> dict:
    """The first page's numbers by Counter over every QI of p columns, written here."""
    qis = list(itertools.combinations(range(len(rows[0])), p))
    counts = {q: Counter(tuple(r[i] for i in q) for r in rows) for q in qis}
    unique_some = sum(any(counts[q][tuple(r[i] for i in q)] == 1 for q in qis) for r in rows)
    below = {q: sum(n for n in counts[q].values() if n < k) for q in qis}
    classes = {q: len(counts[q]) for q in qis}
    singletons = {q: sum(n == 1 for n in counts[q].values()) for q in qis}
    return {"unique_some": unique_some, "below": below, "classes": classes, "singletons": singletons, "qis": qis}


def test_the_five_numbers_equal_brute_force(small):
    data = numbers(parse(small["html"]))
    s, audit = data["summary"], data["audit"]
    bf = brute_force(small["rows"], 2, K)
    n = len(small["rows"])
    assert s["rows"] == audit["rows"] == n
    assert s["records_unique_on_some_qi"] == bf["unique_some"]
    assert s["share_unique_on_some_qi"] == pytest.approx(bf["unique_some"] / n, rel=1e-12)
    assert s["records_below_k"] == max(bf["below"].values())
    worst = max(bf["qis"], key=lambda q: (bf["below"][q], -bf["qis"].index(q)))
    assert s["records_below_k_qi"] == [COLS[i] for i in worst]
    # without a weight sdcMicro's expected re-identifications are Σ 1/fk = the classes of the QI
    assert s["expected_reidentifications_from"] == "classic"
    assert s["expected_reidentifications"] == pytest.approx(max(bf["classes"].values()), rel=1e-12)
    # the columns that drive T̂: how often each is in the QIs whose θ is above u
    u = audit["u"]
    tail = [q for q in bf["qis"] if bf["classes"][q] / n > u]
    assert len(tail) == audit["n_exceedances"] >= 3
    want = Counter(COLS[i] for q in tail for i in q)
    assert {d["column"]: d["qis"] for d in s["driving_columns"]} == dict(want.most_common(5))
    # beside T̂, in people: the records unique on the riskiest QI (S, S/L: the most singletons)
    most = max(bf["qis"], key=lambda q: (bf["singletons"][q], -bf["qis"].index(q)))
    assert s["records_unique_on_worst_qi"] == bf["singletons"][most] > 0
    assert s["share_unique_on_worst_qi"] == pytest.approx(bf["singletons"][most] / n, rel=1e-12)
    assert s["worst_unique_qi"] == [COLS[i] for i in most] and s["worst_unique_is_bound"] is False
    # T̂ with its tail-fit band, which contains it
    iv = audit["risk_interval"]
    assert iv["low"] <= audit["risk"] <= iv["high"] and iv["level"] == 0.95
    # and the same numbers without the classic measures: the classes of the worst QI
    bare = numbers(parse(qar_sql.report(str(small["csv"]), p=2, pi_u=0.4, k=K, classic=False).to_html()))
    assert bare["summary"]["expected_reidentifications_from"] == "classes"
    assert bare["summary"]["expected_reidentifications"] == max(bf["classes"].values())


def test_the_first_page_shows_them_as_people_read_them(small):
    doc = parse(small["html"])
    assert check_numbers(doc) > 50
    five = doc.find(".//table[@id='five-numbers']")
    rows = {tr.get("id"): " ".join("".join(tr.itertext()).split()) for tr in five.iter("tr")}
    assert list(rows) == ["n-unique", "n-below-k", "n-reid", "n-risk", "n-unique-worst", "n-columns"]
    s = numbers(doc)["summary"]
    assert f"{s['records_unique_on_some_qi']:,}" in rows["n-unique"]
    assert readable_numbers.share(s["share_unique_on_some_qi"]) in rows["n-unique"]
    # T̂ is a level of θ, shown as a number (not a percentage, which would read as a share of people)
    assert readable_numbers.plain(numbers(doc)["audit"]["risk"]) in rows["n-risk"] and "tail-fit band" in rows["n-risk"]
    assert "exceedances" in rows["n-risk"] and "not a confidence interval" in rows["n-risk"]
    assert "%" not in rows["n-risk"]
    assert f"{s['records_unique_on_worst_qi']:,}" in rows["n-unique-worst"]
    assert readable_numbers.share(s["share_unique_on_worst_qi"]) in rows["n-unique-worst"]
    # no threshold set: no verdict and no verdict colour
    verdict = doc.find(".//p[@id='verdict']")
    assert "unset" in verdict.get("class") and s["verdict"] is None and s["threshold"] is None
    assert "No threshold was set" in "".join(verdict.itertext())
    # the contents come after the first page
    ids = [e.get("id") for e in doc.find(".//main") if e.get("id")]
    assert ids[:2] == ["summary", "contents"]


def test_people_numbers():
    assert readable_numbers.share(4.57234e-05) == "< 0.01%" and readable_numbers.share(-3e-7) == "> −0.01%"
    assert readable_numbers.share(0.796698) == "79.7%" and readable_numbers.share(0.114405) == "11.4%"
    assert (
        readable_numbers.share(0.0012345) == "0.123%"
        and readable_numbers.share(1.0) == "100%"
        and readable_numbers.share(0) == "0%"
    )
    assert readable_numbers.count(30162) == "30,162" and readable_numbers.plain(0.75812) == "0.7581"
    assert (
        readable_numbers.plain(123456.7) == "123,457"
        and readable_numbers.show(None) == "—"
        and readable_numbers.show(True) == "yes"
    )
    rng = random.Random(1)
    for _ in range(5000):  # nothing above 1e-4 in scientific notation, whatever its kind
        x = 10 ** rng.uniform(-4, 9) * rng.choice((1, -1))
        for kind in ("share", "plain", "auto"):
            assert not SCIENTIFIC.search(readable_numbers.show(x, kind)), (x, kind)
        assert not SCIENTIFIC.search(readable_numbers.show(int(abs(x))))


def _texts(doc) -> str:
    """The page's text but the JSON block and the SQL (for programs, not people)."""
    for e in list(doc.iter()):
        for child in list(e):
            if child.get("id") == "qar-numbers" or child.get("class") == "sql":
                e.remove(child)
    return " ".join(doc.itertext())


def scientific_above(doc) -> list[str]:
    return [m for m in SCIENTIFIC.findall(_texts(doc)) if abs(float(m.replace("−", "-"))) > 1e-4]


def test_no_number_in_scientific_notation_above_1e_4(small):
    assert scientific_above(parse(small["html"])) == []


def cli_report(*args: str, env: dict | None = None, cwd: Path | None = None) -> tuple[int, str, str]:
    """qar report ARGS in process (in ``cwd`` when given), written to a temporary file; returns
    (exit code, the file's text, stderr)."""
    import os
    import tempfile

    here = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.report"
        os.chdir(cwd or here)
        try:
            res = CliRunner(env=env).invoke(cli, ["report", *args, "-o", str(out), "-q"], catch_exceptions=False)
        finally:
            os.chdir(here)
        return res.exit_code, out.read_text(encoding="utf-8") if out.exists() else "", res.stderr


def test_the_verdict_names_where_its_threshold_came_from(small, tmp_path):
    csv = str(small["csv"])
    where = (csv, "-p", "2", "--pi-u", "0.4", "--no-classic", "--no-records")
    cases = [
        ((*where, "--fail-above", "0.9"), None, "--fail-above (command line)", 0.9),
        ((*where, "--threshold", "0.01"), None, "--fail-above (command line)", 0.01),  # the old name, kept
        (where, {"QAR_FAIL_ABOVE": "0.5"}, "$QAR_FAIL_ABOVE (config)", 0.5),
    ]
    for args, env, origin, value in cases:
        code, page, err = cli_report(*args, env=env)
        assert code == 0, err
        doc = parse(page)
        s = numbers(doc)["summary"]
        assert s["threshold"] == value and s["threshold_source"] == origin
        risk = numbers(doc)["audit"]["risk"]
        assert s["verdict"] == ("above" if risk > value else "at or below")
        text = "".join(doc.find(".//p[@id='verdict']").itertext())
        assert origin in text and readable_numbers.plain(value) in text  # T̂ and its threshold: levels of θ
    # from the qar.toml found from the working folder
    (tmp_path / "qar.toml").write_text("[defaults]\nfail_above = 0.7\n", encoding="utf-8")
    code, page, err = cli_report(*where, env={"QAR_FAIL_ABOVE": None}, cwd=tmp_path)
    assert code == 0, err
    s = numbers(parse(page))["summary"]
    assert s["threshold"] == 0.7 and str(tmp_path / "qar.toml") in s["threshold_source"]
    # none set: no verdict, no colour (the built-in 0.05 banner is gone)
    code, page, err = cli_report(*where, env={"QAR_FAIL_ABOVE": None})
    assert 'class="verdict above"' not in page and 'class="verdict below"' not in page
    assert numbers(parse(page))["summary"]["threshold_source"] is None


def test_a_scan_report_names_the_scan_threshold(small, tmp_path):
    config = tmp_path / "scans.toml"
    config.write_text(
        f'[defaults]\np = 2\npi_u = 0.4\n\n[sources.s]\nurl = "{small["csv"]}"\n\n'
        '[[scan]]\nname = "small"\nsource = "s"\nfail_above = 0.99\n',
        encoding="utf-8",
    )
    res = CliRunner().invoke(
        cli,
        ["scan", str(config), "--no-store", "-f", "html", "--report-dir", str(tmp_path / "r")],
        catch_exceptions=False,
    )
    assert res.exit_code == 0, res.stderr
    s = numbers(parse((tmp_path / "r" / "small.html").read_text(encoding="utf-8")))["summary"]
    assert s["threshold"] == 0.99 and "fail_above of scan 'small'" in s["threshold_source"]
    assert "[[scan]]" in s["threshold_source"]


def test_the_records_section_shows_block_and_greedy_elimination(small):
    inp = small["inputs"]
    e = inp.elimination
    assert set(e.curves) == {"dt", "random", "greedy"}
    # the greedy curve equals qar eliminate --by greedy with the same step and length
    ref = qar_sql.eliminate(
        str(small["csv"]), p=2, pi_u=0.4, by=("greedy",), step=e.step, max_removed=e.max_removed
    ).curves["greedy"]
    assert [(p.removed, p.risk) for p in e.curves["greedy"]] == [(p.removed, p.risk) for p in ref]
    doc = parse(small["html"])
    section = doc.find(".//section[@id='records']")
    text = " ".join("".join(section.itertext()).split())
    assert "lowers the risk most" not in text and "first step of an elimination" in text
    rises = [p for pts in e.curves.values() for p in pts if p.risk is not None and p.risk > e.risk]
    assert ("T̂ is not monotone in removals" in text) == bool(rises)
    assert numbers(doc)["elimination"]["rises"] == [
        {"ranking": name, "removed": worst.removed, "risk": worst.risk}
        for name, pts in e.curves.items()
        for worst in [max((p for p in pts if p.risk is not None), key=lambda p: p.risk)]
        if worst.risk > e.risk
    ]


def test_k_anonymity_is_per_qi_never_summed(small):
    doc = parse(small["html"])
    bf = brute_force(small["rows"], 2, K)
    section = doc.find(".//section[@id='kanonymity']")
    table = section.find(".//table")
    shown = [int("".join(tr.findall("td")[1].itertext()).replace(",", "")) for tr in table.find("tbody")]
    assert shown == sorted(bf["below"].values(), reverse=True)[: len(shown)]
    assert max(shown) <= len(small["rows"])  # people, not a sum over QIs
    labels = [s.get("aria-label") for s in section.iter() if s.get("role") == "img"]
    assert (
        len(labels) == 1 and "never summed" not in labels[0] and "per quasi-identifier" in "".join(section.itertext())
    )


def test_an_external_release_holds_no_record_key_position_or_value(tmp_path):
    import duckdb

    from qar_sql.compliance.store import hash_key
    from qar_sql.demo import write_population

    path = str(tmp_path / "demo.duckdb")
    con = duckdb.connect(path)
    write_population(con, "population", n=600, seed=3)
    con.close()
    secret = "external-s3cret"
    common = dict(table="population", columns=["age", "sex", "postcode", "education"], p=2, pi_u=0.3)
    kw = dict(key=["person_id"], hash_secret=secret, group_size=3)
    internal = qar_sql.report(path, **common, **kw)
    external = qar_sql.report(path, **common, **kw, release_kind="external", title="Q3 release", owner="Data team")
    html = external.to_html()
    inside = numbers(parse(internal.to_html()))["records"]["top"]
    con = duckdb.connect(path, read_only=True)
    keys = [r[0] for r in con.execute("select person_id from population order by person_id").fetchall()]
    con.close()
    for r in inside:  # the hashed keys and the positions the internal report lists
        assert r["hashed_key"] == hash_key(str(keys[r["position"] - 1]), secret)
        assert r["hashed_key"] not in html and r["hashed_key"][:16] not in html
    data = numbers(parse(html))
    assert "top" not in data["records"] and "records.top" not in html
    assert all("most_exposed" not in q for q in data["uniqueness"]["qis"])
    records = html.split('id="records"')[1].split("</section>")[0]
    assert "<tbody>" not in records.split("Elimination curves: T̂ after")[0]  # no table of records
    doc = parse(html)
    assert data["summary"]["release_kind"] == "external" and data["summary"]["title"] == "Q3 release"
    assert doc.find(".//title").text.startswith("Q3 release") and "Data team" in html
    assert doc.find(".//*[@id='signoff']") is not None


def test_markdown_is_the_same_report(small):
    md = render_report(small["inputs"], "md")
    s = numbers(parse(small["html"]))["summary"]
    assert md.startswith("# Re-identification risk report")
    for heading in ("## Summary", "## Contents", "## k-anonymity", "## The records that carry the risk", "## Sign-off"):
        assert heading in md
    assert not re.search(r"<[a-zA-Z/][^>]*>", md)  # no HTML left
    assert f"| Records unique on at least one quasi-identifier | {s['records_unique_on_some_qi']:,} |" in md
    assert "*Figure: " in md and '"audit": {' not in md  # figures as their text; no JSON block
    assert not [m for m in SCIENTIFIC.findall(md) if abs(float(m.replace("−", "-"))) > 1e-4]
    code, page, err = cli_report(str(small["csv"]), "-p", "2", "--pi-u", "0.4", "--format", "md", "--no-classic")
    assert code == 0 and page.startswith("# Re-identification risk report") and "## Summary" in page, err


# ------------------------------------------------------------------------------------------------
# In a real headless Chromium: the demo of examples/ and adult.csv


@pytest.fixture(scope="module")
def demo_page(tmp_path_factory) -> Path:
    """The example report of scripts/make_demo_report.py (every section), written fresh."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_demo_report", REPO / "scripts" / "make_demo_report.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    page = tmp_path_factory.mktemp("demo-page") / "demo-report.html"
    module.main(page)
    return page


def _dom_checks(exe: str, page: Path, tmp: Path) -> tuple:
    dom, console, requests = _browse(exe, page, tmp)
    assert not console and not requests, (console, requests)
    doc = html5lib.parse(dom, namespaceHTMLElements=False)
    csp = doc.find(".//meta[@http-equiv='Content-Security-Policy']").get("content")
    assert "default-src 'none'" in csp and not doc.findall(".//script")
    five = doc.find(".//table[@id='five-numbers']")
    assert five is not None and len(five.findall(".//tbody/tr")) == 6
    assert scientific_above(html5lib.parse(dom, namespaceHTMLElements=False)) == []
    data = json.loads("".join(doc.find(".//pre[@id='qar-numbers']").itertext()))
    iv = doc.find(".//span[@id='risk-interval']")
    low, high = (float(e.get("title")) for e in iv.iter("span") if e.get("data-qar"))
    assert low <= data["audit"]["risk"] <= high
    return doc, data


def test_the_demo_report_in_chromium_first_page_and_pdf(demo_page, tmp_path):
    exe = _chromium()
    doc, data = _dom_checks(exe, demo_page, tmp_path)
    assert check_numbers(doc) > 200
    verdict = "".join(doc.find(".//p[@id='verdict']").itertext())
    assert "set by --fail-above (command line)" in verdict and data["summary"]["verdict"] == "above"
    assert "above" in doc.find(".//p[@id='verdict']").get("class")
    pdf = _print_to_pdf(exe, demo_page, tmp_path / "demo.pdf")
    assert 3 <= _pages(pdf) < 20, _pages(pdf)  # (leave-one-column-out added a section)


def test_adult_report_in_chromium(shared_data, tmp_path):
    exe = _chromium()
    csv = str(shared_data / "arx" / "adult.csv")
    for kind in ("internal", "external"):
        page = tmp_path / f"adult-{kind}.html"
        res = CliRunner(env={"QAR_HASH_SECRET": None}).invoke(
            cli, ["report", csv, "--fail-above", "0.2", "--release-kind", kind, "-o", str(page), "-q"],
            catch_exceptions=False,
        )  # fmt: skip
        assert res.exit_code == 0, res.stderr
        doc, data = _dom_checks(exe, page, tmp_path)
        verdict = "".join(doc.find(".//p[@id='verdict']").itertext())
        assert "--fail-above (command line)" in verdict and data["summary"]["threshold"] == 0.2
        rows = data["audit"]["rows"]
        assert data["summary"]["records_below_k"] <= rows
        if kind == "external":
            captions = ["".join(c.itertext()) for c in doc.find(".//section[@id='records']").iter("caption")]
            assert "top" not in data["records"] and not any("records with the largest" in c for c in captions)


def test_a_fit_from_fewer_than_3_exceedances_is_flagged_on_the_first_page(small):
    """π_u = 0.1 of 10 QIs: a tail of 1; T̂ is still shown, with the flag on the first page."""
    inputs = qar_sql.report(str(small["csv"]), p=2, pi_u=0.1, classic=False, records=False)
    doc = parse(inputs.to_html())
    data = numbers(doc)
    assert data["audit"]["n_exceedances"] < 3 and data["summary"]["few_exceedances"] is True
    summary = doc.find(".//section[@id='summary']")
    flag = summary.find(".//p[@id='few-exceedances']")
    assert flag is not None and "do not base a release decision on T̂" in "".join(flag.itertext())
    assert "no tail-fit band" not in " ".join(summary.itertext()) or data["audit"]["risk_interval"] is None
    md = render_report(inputs, "md")
    assert "do not base a release decision on T̂" in md.split("## Contents")[0]


def test_classic_measures_by_default_and_no_classic(small):
    csv = str(small["csv"])
    where = (csv, "-p", "2", "--pi-u", "0.4", "--no-records")
    for extra, present in (((), True), (("--classic",), True), (("--no-classic",), False)):
        code, page, err = cli_report(*where, *extra)
        assert code == 0, err
        assert ("classic" in numbers(parse(page))) is present, extra
    code, _, err = cli_report(*where, "--classic", "--no-classic")
    assert code == 2 and "--classic and --no-classic contradict each other" in err
    code, _, err = cli_report(*where, "--no-classic", "--weight", "a")
    assert code == 2 and "--weight has no effect with --no-classic" in err, err


def test_a_classic_option_from_a_variable_is_no_request_beside_no_classic(small):
    """A QAR_WEIGHT set for qar risk made every qar report --no-classic exit 2 naming --weight,
    which nobody typed (h2's pass 9): only a typed option is refused as ignored; the API's
    classic=False with weight= is refused as the keywords."""
    where = (str(small["csv"]), "-p", "2", "--pi-u", "0.4", "--no-records", "--no-classic")
    code, _, err = cli_report(*where, env={"QAR_WEIGHT": "a"})
    assert code == 0, err
    with pytest.raises(UsageError, match=r"^weight has no effect with classic=False \(an option of the classic"):
        qar_sql.report(str(small["csv"]), p=2, pi_u=0.4, records=False, classic=False, weight="a")
