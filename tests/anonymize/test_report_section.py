"""The anonymization section of ``qar report --anonymize`` (and ``qar anonymize -f html``), on
DuckDB and PostgreSQL:

* its numbers (the JSON block's ``anonymize``, and each number the page shows) are those of
  ``qar anonymize -f json`` on the same inputs;
* the frontier is a table and an inline figure; the Markdown report has the same section;
* hostile column names (markup, a Markdown pipe) are escaped; the page parses strictly;
* a search option without --anonymize is refused, and -o never replaces a hierarchy file.
"""

from __future__ import annotations

import json

import html5lib
import pytest
from click.testing import CliRunner

from qar_sql.cli.main import cli
from tests.anonymize.test_anonymize_command import ALPHA, PI_U, P, make_table

AGE, SEX, TOWN = "<b>age</b>", "sex|x", "town <script>alert(1)</script>"
INCOME, KIDS = "income", "kids"


def _data(seed: int) -> dict[str, list]:
    t = make_table(seed)
    return dict(zip((AGE, SEX, TOWN, INCOME, KIDS), t.values()))


def _hierarchies(folder):
    """ARX CSVs for the two hostile QI columns (the QI: sex|x, town <script>…)."""
    sex = folder / "sex.csv"
    sex.write_text("F;*\nM;*\n", encoding="utf-8")
    town = folder / "town.csv"
    town.write_text("".join(f"T{i};P{i // 4};*\n" for i in range(8)), encoding="utf-8")
    return ["--hierarchy", f"{SEX}={sex}", "--hierarchy", f"{TOWN}={town}"]


def run(args):
    r = CliRunner().invoke(cli, args)
    return r.exit_code, r.stdout, r.stderr


def parse(html: str):
    return html5lib.HTMLParser(strict=True, namespaceHTMLElements=False).parse(html)


def page_numbers(doc) -> dict:
    return json.loads("".join(doc.find(".//pre[@id='qar-numbers']").itertext()))


def shown(doc) -> list[str]:
    return [e.get("data-qar") for e in doc.iter() if e.get("data-qar", "").startswith("anonymize.")]


SEARCH = ["--k", "3", "--suppression-limit", "0.05", "--risk-below", "0.9"]


@pytest.mark.parametrize("seed", [71])
def test_the_report_section_equals_qar_anonymize_json(engine, tmp_path, seed):
    source, table = engine.load("people", _data(seed))
    common = ["--table", table, *_hierarchies(tmp_path), "-p", str(P), "--pi-u", str(PI_U), "--alpha", str(ALPHA)]
    code, out, err = run(["anonymize", source, *common, *SEARCH, "-f", "json", "-q"])
    assert code == 0, err
    want = json.loads(out)
    assert len(want["frontier"]) > 1, "the case should have a frontier to show"
    page = tmp_path / "r.html"
    code, _, err = run(
        ["report", source, *common, "--anonymize", *SEARCH, "--no-records", "--no-classic", "-o", str(page), "-q"]
    )
    assert code == 0, err
    html = page.read_text(encoding="utf-8")
    doc = parse(html)
    got = page_numbers(doc)["anonymize"]
    for key in ("seconds",):
        want.pop(key), got.pop(key)
    assert got == want
    paths = shown(doc)
    for path in ("anonymize.suppressed", "anonymize.k", "anonymize.risk", "anonymize.nodes", "anonymize.evaluated"):
        assert path in paths, path
    for m in want["scores"]:
        assert f"anonymize.scores.{m}" in paths
    for i in range(len(want["frontier"])):
        assert f"anonymize.frontier.{i}.risk" in paths
    section = next(s for s in doc.iter("section") if s.get("id") == "anonymize")
    assert any(isinstance(e.tag, str) and e.tag.rsplit("}", 1)[-1] == "svg" for e in section.iter()), "the figure"
    # hostile names: escaped, never markup
    assert "<script>alert(1)</script>" not in html and "<b>age</b>" not in html
    assert "town &lt;script&gt;alert(1)&lt;/script&gt;" in html
    for label in want["labels"].values():
        assert label in "".join(section.itertext())
    # -f html of qar anonymize: the same section, the same numbers
    code, out, err = run(["anonymize", source, *common, *SEARCH, "-f", "html", "-q"])
    assert code == 0, err
    alone = page_numbers(parse(out))["anonymize"]
    alone.pop("seconds")
    assert alone == want


def test_the_markdown_report_has_the_section(duck, tmp_path):
    source, table = duck.load("people", _data(72))
    md = tmp_path / "r.md"
    code, _, err = run(
        [
            "report",
            source,
            "--table",
            table,
            *_hierarchies(tmp_path),
            "-p",
            str(P),
            "--pi-u",
            str(PI_U),
            "--alpha",
            str(ALPHA),
            "--anonymize",
            *SEARCH,
            "--no-records",
            "--no-classic",
            "-o",
            str(md),
            "-q",
        ]  # fmt: skip
    )
    assert code == 0, err
    text = md.read_text(encoding="utf-8")
    part = text.split("## The cheapest generalization (qar anonymize)", 1)[1].split("\n## ", 1)[0]
    assert "| sex\\|x |" in part, part  # the pipe of a column name escaped in the table
    assert "<script>" not in text
    assert "records suppressed" in part and "frontier" in part


def test_search_options_need_anonymize_and_hierarchies_are_inputs(duck, tmp_path):
    source, table = duck.load("people", _data(73))
    hier = _hierarchies(tmp_path)
    code, _, err = run(["report", source, "--table", table, *hier, "-o", str(tmp_path / "r.html")])
    assert code == 2 and "--hierarchy has no effect without --anonymize" in err, err
    sex = tmp_path / "sex.csv"
    before = sex.read_bytes()
    code, _, err = run(["report", source, "--table", table, "--anonymize", *hier, "--k", "3", "-o", str(sex)])
    assert code == 2 and "which this command reads" in err, err
    assert sex.read_bytes() == before
    code, _, err = run(
        ["report", source, "--table", table, "--anonymize", *hier, "--l", "2", "-o", str(tmp_path / "r.html")]
    )
    assert code == 2 and "one --sensitive column" in err, err


def test_each_node_is_measured_once(duck, tmp_path):
    """The node the search of the models alone chose and measured is not measured (nor counted)
    again by the search with the target: here every node is measured, each once."""
    source, table = duck.load("people", _data(71))
    code, out, err = run(
        ["anonymize", source, "--table", table, *_hierarchies(tmp_path), "-p", str(P), "--pi-u", str(PI_U),
         "--alpha", str(ALPHA), "--k", "3", "--suppression-limit", "0.05", "--risk-below", "0.8", "-f", "json", "-q"]
    )  # fmt: skip
    assert code == 1 and "No node of the 6 meets" in err, err  # no node meets the target: exit 1
    got = json.loads(out)
    assert got["levels"] is None and got["nodes"] == 6
    assert got["measured"] == 6


def test_the_python_report_takes_the_search_keywords(duck, tmp_path):
    """qar_sql.report(anonymize={...}): the section is qar_sql.anonymize's result with the
    report's columns and tail; an unknown keyword and --from-store are refused."""
    import qar_sql
    from qar_sql.errors import ParameterError, UsageError

    source, table = duck.load("people", _data(74))
    hier = _hierarchies(tmp_path)
    search = {"hierarchy": [(hier[1].split("=", 1)[0], hier[1].split("=", 1)[1]), (TOWN, str(tmp_path / "town.csv"))]}
    search |= {"k": 3, "suppression_limit": 0.05}
    tail = {"p": P, "pi_u": PI_U, "alpha": ALPHA}
    inputs = qar_sql.report(source, table=table, records=False, classic=False, anonymize=search, **tail)
    alone = qar_sql.anonymize(source, table=table, **search, risk=True, **tail)
    got, want = inputs.anonymize.to_dict(), alone.to_dict()
    got.pop("seconds"), want.pop("seconds")
    assert got == want and got["risk"] is not None
    with pytest.raises(ParameterError, match="'tabel' is no option"):
        qar_sql.report(source, table=table, anonymize={**search, "tabel": "x"}, **tail)
    with pytest.raises(UsageError, match="from_store="):
        qar_sql.report(from_store="", run_id="x", anonymize=search)
    sex = tmp_path / "sex.csv"
    before = sex.read_bytes()
    with pytest.raises(UsageError, match="a hierarchy file"):
        qar_sql.report(source, table=table, anonymize=search, output=sex, **tail)
    assert sex.read_bytes() == before


def test_a_target_no_release_can_meet_is_refused_before_the_audit(duck, tmp_path):
    """``qar report --anonymize --k`` above the rows was refused only once the audit and records
    passes had run (15 s on 100,000 rows, or their own error first: here the audit has no tail);
    the rows are counted first, as for --population."""
    n = 60
    data = {"id": list(range(n)), "age": [18 + i % 6 for i in range(n)], "sex": [i % 2 for i in range(n)]}
    data |= {f"c{j}": [i % 3 for i in range(n)] for j in range(4)}  # every θ equal: the audit has no tail
    source, table = duck.load("flat", data)
    levels = tmp_path / "age.toml"
    levels.write_text("[hierarchies.age]\nwidths = [5, 10]\n", encoding="utf-8")
    args = ["report", source, "--table", table, "-x", "id", "--key", "id", "--anonymize", "--hierarchy", str(levels)]
    code, out, err = run([*args, "--k", str(n + 1), "-o", str(tmp_path / "r.html")])
    assert code == 2 and f"--k {n + 1} asks for classes of at least {n + 1} records" in err, err
    assert not (tmp_path / "r.html").exists()
