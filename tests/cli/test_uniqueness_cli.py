"""``qar uniqueness`` and ``qar audit --group-size`` through click's CliRunner: the JSON
contract of issue 18, text and Markdown, the figures, and bad input as one sentence with exit
code 2 (never a traceback)."""

from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner

from qar_sql.cli.main import cli
from tests.measures.test_audit import HOSTILE_TABLE, as_columns, random_table

QI_KEYS = {"columns", "domain", "kappa", "pi_uniform", "pi_kl", "pi_poisson", "pi_exact", "k50"}


@pytest.fixture
def table(duck):
    names, rows, types = random_table(21, 60)
    names, rows = names[:5], [r[:5] for r in rows]
    source, table = duck.load(HOSTILE_TABLE, as_columns(names, rows), {c: types[c] for c in names})
    return source, table, names, rows


def run(*args):
    result = CliRunner().invoke(cli, [str(a) for a in args])
    return result


def test_json_contract(table):
    source, name, names, rows = table
    r = run("uniqueness", source, "--table", name, "-p", 2, "--group-size", 5, "--format", "json", "--quiet")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["group_size"] == 5 and doc["rows"] == 60 and doc["domain_mode"] == "observed"
    assert len(doc["qis"]) == math.comb(5, 2)
    for q in doc["qis"]:
        assert QI_KEYS <= set(q)
        assert isinstance(q["columns"], list) and set(q["columns"]) <= set(names)
        assert 0 <= q["pi_exact"] <= 1 and q["kappa"] >= 0 and isinstance(q["k50"], int)
        assert {"k_at", "exposure_mean", "exposure_max"} <= set(q)
    assert "most_exposed" in doc["qis"][0]
    assert [q["pi_exact"] for q in doc["qis"]] == sorted((q["pi_exact"] for q in doc["qis"]), reverse=True)


def test_domain_number_and_product(table):
    source, name, names, rows = table
    r = run("uniqueness", source, "--table", name, "-p", 1, "-g", 3, "--domain", 1000, "-f", "json", "-q")
    doc = json.loads(r.stdout)
    assert r.exit_code == 0 and doc["domain_mode"] == "number"
    assert all(q["domain"] == 1000 for q in doc["qis"])
    r = run("uniqueness", source, "--table", name, "-p", 2, "-g", 3, "--domain", "product", "-f", "json", "-q")
    doc = json.loads(r.stdout)
    counts = {c: len({row[i] for row in rows}) for i, c in enumerate(names)}
    assert doc["domain_mode"] == "product"
    for q in doc["qis"]:
        assert q["domain"] == counts[q["columns"][0]] * counts[q["columns"][1]]


def test_text_markdown_and_options(table, tmp_path):
    source, name, names, rows = table
    r = run(
        "uniqueness", source, "--table", name, "-p", 2, "-g", 4, "--monte-carlo", 500, "--seed", 3,
        "--from-marginals", "--target", 0.9, "-q",
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "Uniqueness probability of groups of k = 4" in r.stdout and "Monte Carlo" in r.stdout
    assert "Independence model" in r.stdout and "Most exposed records" in r.stdout
    r = run("uniqueness", source, "--table", name, "--qid", f"{names[0]},{names[2]}", "-g", 4, "-f", "markdown", "-q")
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith("## ") and "| kappa |" in r.stdout and "groups of k = 4" in r.stdout


@pytest.mark.parametrize("suffix", ["png", "svg"])
def test_plot(table, tmp_path, suffix):
    source, name, names, rows = table
    path = tmp_path / f"figure.{suffix}"
    r = run("uniqueness", source, "--table", name, "-p", 2, "-g", 4, "--plot", path, "-q")
    assert r.exit_code == 0, r.output
    assert path.stat().st_size > 5000


def test_treatments_file(duck, tmp_path):
    source, name = duck.load("people", {"age": [i % 70 for i in range(300)], "sex": ["MF"[i % 2] for i in range(300)]})
    plan = tmp_path / "t.toml"
    plan.write_text('[treatments.age_5y]\ncolumn = "age"\nkind = "bands"\nwidth = 5\n')
    r = run("uniqueness", source, "--table", name, "--qid", "age,sex", "-g", 8, "-T", plan, "-f", "json", "-q")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    (scenario,) = doc["scenarios"]
    assert scenario["name"] == "age_5y" and scenario["qis"][0]["distinct"] == 14 * 2
    assert scenario["qis"][0]["pi_exact"] < doc["qis"][0]["pi_exact"]
    r = run("uniqueness", source, "--table", name, "--qid", "age,sex", "-g", 8, "-T", plan, "-q")
    assert "Treatments" in r.stdout and "age_5y" in r.stdout


def test_audit_gains_a_uniqueness_block(table):
    source, name, names, rows = table
    r = run("audit", source, "--table", name, "-p", 2, "--pi-u", 0.2, "--group-size", 6, "-f", "json", "-q")
    assert r.exit_code in (0, 2), r.output
    block = json.loads(r.stdout)["uniqueness"]
    assert block["group_size"] == 6 and block["rows"] == 60 and block["domain_mode"] == "observed"
    assert len(block["qis"]) == math.comb(5, 2) and all(QI_KEYS <= set(q) for q in block["qis"])
    r = run("audit", source, "--table", name, "-p", 2, "--pi-u", 0.2, "-f", "json", "-q")
    assert "uniqueness" not in json.loads(r.stdout)
    r = run("audit", source, "--table", name, "-p", 2, "--pi-u", 0.2, "--group-size", 6, "-q")
    assert "Uniqueness" in r.stdout


@pytest.mark.parametrize(
    "args, words",
    [
        (["-g", 1], "group size k = 1 must be a whole number of at least 2"),
        (["-g", 61], "group size k = 61 is larger than the table's 60 rows"),
        (["-g", 5, "--target", 0], "target probability 0.0 must lie strictly between 0 and 1"),
        (["-g", 5, "--target", 1.5], "strictly between 0 and 1"),
        (["-g", 5, "--domain", "universe"], "domain 'universe' is unknown"),
        (["-g", 5, "--domain", 3], "is smaller than the"),
        (["-g", 5, "--plot", "figure.pdf"], "must end in .png or .svg"),
        (["-g", 5, "--qid", "x", "--columns", "y"], "not both"),
    ],
)
def test_bad_input_exits_2_with_one_sentence(table, args, words):
    source, name, names, rows = table
    r = run("uniqueness", source, "--table", name, "-p", 2, *args, "-q")
    assert r.exit_code == 2, r.output
    assert words in r.stderr
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr


def test_a_negative_monte_carlo_is_refused_by_its_range(table):
    source, name, names, rows = table
    r = run("uniqueness", source, "--table", name, "-p", 2, "-g", 5, "--monte-carlo", -1, "-q")
    assert r.exit_code == 2, r.output
    assert r.stderr.splitlines()[-1] == (
        "Error: Invalid value for '--monte-carlo' (env var: 'QAR_MONTE_CARLO'): -1 is not in the range x>=0."
    )


def test_audit_group_size_bad_input(table):
    source, name, names, rows = table
    r = run("audit", source, "--table", name, "-p", 2, "--pi-u", 0.2, "--group-size", 100, "-q")
    assert r.exit_code == 2 and "larger than the table's 60 rows" in r.stderr


def test_help():
    r = run("uniqueness", "--help")
    assert r.exit_code == 0
    for option in ("--group-size", "--target", "--domain", "--qid", "--plot", "--monte-carlo", "--seed",
                   "--from-marginals", "--treatments", "--format", "--exposed"):  # fmt: skip
        assert option in r.stdout


@pytest.mark.parametrize("column", ["constant", "empty"])
def test_a_constant_or_all_null_qi_is_answered(duck, column):
    """Every record shares one value (NULL is a value, as in the audit): no two people are both
    unique, so π = 0 for every k ≥ 2, every exposure is 0 and k50 = 1 (π(1) = 1). It failed
    with "unexpected ValueError: math domain error" (log1p(−n/L) with n = L)."""
    import warnings

    data = {"constant": [7] * 6, "empty": [None] * 6, "other": [1, 2, 3, 4, 5, 5]}
    source, name = duck.load("t", data, {"constant": "bigint", "empty": "bigint", "other": "bigint"})
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no raw numpy RuntimeWarning either
        r = run("uniqueness", source, "--table", name, "--qid", column, "-g", 2, "-f", "json", "-q")
    assert r.exit_code == 0, r.output
    (q,) = json.loads(r.stdout)["qis"]
    assert q["pi_exact"] == 0.0 and q["pi_uniform"] == 0.0 and q["kappa"] == 0.0
    assert q["k50"] == 1 and q["k_at"] == 1
    assert q["exposure_mean"] == 0.0 and q["exposure_max"] == 0.0
    assert [e["exposure"] for e in q["most_exposed"]] == [0.0] and q["most_exposed"][0]["class_size"] == 6
