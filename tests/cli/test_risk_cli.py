"""``qar risk``, ``qar records --by suda`` and ``--all-text`` through click's CliRunner: the JSON
contract, exact exit codes, one clear sentence for bad input."""

from __future__ import annotations

import csv
import json
import math

import classic_oracle as oracle
import pytest
from click.testing import CliRunner

from qar_sql.cli.main import cli
from qar_sql.measures import classic

PEOPLE = [
    ("F", "30", "1000", "flu", "100"),
    ("F", "30", "1000", "cold", "120"),
    ("F", "", "1000", "flu", "80"),
    ("M", "40", "2000", "asthma", "150"),
    ("M", "40", "", "flu", "90"),
    ("M", "50", "2000", "cold", "200"),
]


@pytest.fixture
def people(tmp_path):
    path = tmp_path / "people.csv"
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["sex", "age", "zip", "diagnosis", "weight"])
        w.writerows(PEOPLE)
    return path


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_json_contract(people):
    res = run(
        "risk",
        people,
        "-c",
        "sex,age,zip",
        "--weight",
        "weight",
        "--sensitive",
        "diagnosis",
        "--missing",
        "wildcard",
        "--sampling-fraction",
        "0.01",
        "--format",
        "json",
    )
    assert res.exit_code == 0, res.output
    d = json.loads(res.output)
    assert d["rows"] == 6 and d["missing"] == "wildcard"
    (q,) = d["qis"]
    assert q["columns"] == ["sex", "age", "zip"]
    for name in (
        "classes",
        "sample_uniques",
        "violations",
        "expected_reidentifications",
        "global_risk",
        "prosecutor",
        "population_uniqueness",
        "l_diversity",
        "t_closeness",
    ):
        assert name in q
    assert set(q["violations"]) == {"2", "3", "5"}
    assert set(q["prosecutor"]) >= {"highest", "average", "records_at_risk"}
    assert set(q["population_uniqueness"]) >= {"pitman", "zayatz", "snb", "dankar"}
    assert set(q["l_diversity"]) >= {"distinct", "entropy", "recursive_c2"}
    assert (q["classes"], q["sample_uniques"], q["fk_sum"]) == (5, 1, 11)


def test_text_output_and_per_record(people, tmp_path):
    out = tmp_path / "r.csv"
    res = run("risk", people, "-c", "sex,age,zip", "--per-record", out)
    assert res.exit_code == 0, res.output
    assert "sample uniques" in res.output and "expected re-identifications" in res.output
    with open(out) as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["row", *classic.PER_RECORD_COLUMNS]  # the columns test_risk.py spells out
    assert [r[1] for r in rows[1:]] == ["2", "2", "1", "1", "1", "1"]


@pytest.mark.parametrize(
    "args, message",
    [
        (["--weight", "sex"], "weight column 'sex'"),
        (["--sensitive", "age"], "also a quasi-identifier column"),
        (["--sampling-fraction", "0"], "must be in (0, 1]"),
        (["--sampling-fraction", "1.5"], "must be in (0, 1]"),
        (["--missing", "drop"], "drop"),
        (["--per-record", "x.json"], "must end in .csv or .parquet"),
        (["--weight", "wieght"], "--weight column 'wieght' not found"),
        (["--sensitive", "diagnosis", "--ordered", "weight"], "--ordered column 'weight' is not a --sensitive column"),
        (
            ["--suda-max-size", "0", "--per-record", "o.csv"],
            "'--suda-max-size' (env var: 'QAR_SUDA_MAX_SIZE'): 0 is not in the range x>=1",
        ),
        (["--key", "nope", "--per-record", "o.csv"], "key column 'nope' (in --key) not found"),
        (["--key", "id"], "--key has no effect without --per-record"),
    ],
)
def test_bad_input_one_sentence_exit_2(people, args, message):
    res = run("risk", people, "-c", "sex,age,zip", *args)
    assert res.exit_code == 2, res.output
    assert message in res.output
    assert "Traceback" not in res.output


def test_bad_weights_exit_2(tmp_path):
    path = tmp_path / "w.csv"
    path.write_text("a,b,w\n1,2,3\n1,3,-1\n2,2,\n")
    res = run("risk", path, "-c", "a,b", "--weight", "w")
    assert res.exit_code == 2
    assert res.output.count("Error:") == 1 and "NULL in 1 record" in res.output


def test_records_by_suda(tmp_path):
    # sdcMicro's SDC-guideline example: SUDA scores 0, 0, 6, 0, 12, 0, 6, 10, 0, 0
    path = tmp_path / "g.csv"
    data = list(
        zip(
            ["Urban"] * 4 + ["Rural"] + ["Urban"] * 5,
            ["Female", "Female", "Female", "Male", "Female", "Male", "Female", "Male", "Female", "Female"],
            ["SecInc", "SecInc", "PrimInc", "SecCom", "SecCom", "SecCom", "PrimCom", "Post", "SecInc", "SecInc"],
            ["Emp", "Emp", "NonLF", "Emp", "Unemp", "Emp", "NonLF", "Unemp", "NonLF", "NonLF"],
        )
    )
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["res", "gender", "edu", "labor"])
        w.writerows(data)
    res = run("records", path, "--by", "suda", "--format", "json", "--top", "3")
    assert res.exit_code == 0, res.output
    d = json.loads(res.output)
    assert [(r["key"], r["suda"]) for r in d["records"]] == [([5], 12.0), ([8], 10.0), ([3], 6.0)]
    rows = [dict(zip("RGEL", r)) for r in data]
    _, dis = oracle.suda(rows, list("RGEL"))
    assert d["records"][0]["dis_suda"] == pytest.approx(dis[4], rel=1e-12)
    res = run("records", path, "--by", "suda", "--max-size", "2")
    assert res.exit_code == 0 and "MSUs up to 2 columns" in res.output


def test_all_text_keeps_1_and_1_0_apart(tmp_path):
    path = tmp_path / "n.csv"
    path.write_text("a,b\n1,x\n1.0,x\n2,y\n2,y\n")
    typed = run("risk", path, "--format", "json")
    text = run("risk", path, "--all-text", "--format", "json")
    assert json.loads(typed.output)["qis"][0]["classes"] == 2
    assert json.loads(text.output)["qis"][0]["classes"] == 3
    assert json.loads(typed.output)["inferred_columns"] == {"a": "DOUBLE"}
    assert json.loads(text.output)["inferred_columns"] == {}
    audit = run("audit", path, "-p", "1", "--pi-u", "0.5")
    assert "read as numbers" in audit.output and "'a'" in audit.output


def test_a_wide_csv_note_names_twenty_typed_columns_and_counts_the_rest(tmp_path):
    """The note named every typed column: 500 of them in one line on a 500-column CSV."""
    path = tmp_path / "wide.csv"
    width = 45
    path.write_text(",".join(f"c{j}" for j in range(width)) + "\n" + "".join(
        ",".join(str((i * (j + 1)) % 7) for j in range(width)) + "\n" for i in range(20)
    ))  # fmt: skip
    notes = json.loads(run("audit", path, "-p", "1", "--format", "json").output)["column_notes"]
    typed = next(n for n in notes if "read as numbers" in n)
    assert "'c19' (BIGINT), and 25 more;" in typed and "'c20'" not in typed


def test_per_record_onto_the_source_exit_2(people):
    before = people.read_bytes()
    res = run("risk", people, "-c", "sex,age,zip", "--per-record", people)
    assert res.exit_code == 2 and "is the source file itself" in res.output
    assert people.read_bytes() == before
    res = run("records", people, "--by", "suda", "--key", "sex", "--output", people)
    assert res.exit_code == 2 and "is the source file itself" in res.output
    assert people.read_bytes() == before


# docs/risk-measures.md, "Worked example": (fk, Fk, risk, l_distinct) per row, then the expected
# re-identifications. By hand:
# fk = 1, Fk = 80: pk = 1/80, r = pk/(1 − pk)·ln(1/pk) = ln(80)/79 = 0.05547;
# fk = 3, Fk = 300: r = pk/(fk − (1 − pk)) = 0.01/2.01 = 0.00498.
# fmt: off
WORKED_EXAMPLE = [
    ("value", [(2, 220, 0.00878, 2), (2, 220, 0.00878, 2), (1, 80, 0.05547, 1),
               (1, 150, 0.03363, 1), (1, 90, 0.05056, 1), (1, 200, 0.02662, 1)], 0.184),
    ("wildcard", [(3, 300, 0.00498, 2), (3, 300, 0.00498, 2), (3, 300, 0.00498, 2),
                  (2, 240, 0.00807, 2), (2, 240, 0.00807, 2), (1, 200, 0.02662, 1)], 0.058),
]
# fmt: on


@pytest.mark.parametrize("missing, table, expected", WORKED_EXAMPLE)
def test_docs_worked_example(people, tmp_path, missing, table, expected):
    out = tmp_path / "people_risk.csv"
    res = run("risk", people, "-c", "sex,age,zip", "--weight", "weight", "--sensitive", "diagnosis",
              "--sampling-fraction", "0.01", "--missing", missing, "--per-record", out, "--format", "json")  # fmt: skip
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["qis"][0]["expected_reidentifications"] == pytest.approx(expected, abs=5e-4)
    with open(out) as fh:
        body = list(csv.reader(fh))[1:]
    for line, (fk, Fk, r, ld) in zip(body, table, strict=True):
        assert (int(line[1]), float(line[2]), float(line[4])) == (fk, Fk, ld)
        assert float(line[3]) == pytest.approx(r, abs=5e-6)
    assert math.log(80) / 79 == pytest.approx(0.05547, abs=5e-6)


@pytest.mark.parametrize(
    "option, value",
    [
        ("--population", 10**30),
        ("--sampling-fraction", "1e-9"),
        ("--sampling-fraction", "1e-300"),
    ],
)
def test_a_population_that_dwarfs_the_sample_is_answered_at_once(people, option, value):
    """Zayatz in log space (was "unexpected TypeError" at N = 1e30 and f = 1e-300, and past
    120 s in scipy's hypergeometric at f = 1e-9 on adult.csv): the fraction of population
    uniques tends to c1²/n² (c1 sample uniques, n rows)."""
    import time

    started = time.process_time()  # CPU seconds: imports under load took 17 s of wall clock
    res = run("risk", people, "-c", "sex,age", option, value, "--format", "json")
    assert time.process_time() - started < 10
    assert res.exit_code == 0, res.output
    (q,) = json.loads(res.output)["qis"]
    c1 = q["sample_uniques"]
    assert c1 > 0
    assert q["population_uniqueness"]["zayatz"] == pytest.approx(c1 * c1 / 36, rel=1e-6)


@pytest.mark.parametrize(
    "option, value, words",
    [
        ("--sampling-fraction", "1e-320", "--sampling-fraction 1e-320 is too small"),
        ("--population", "1" + "0" * 400, "--population 1e+400 is larger than"),
    ],
)
def test_a_population_beyond_any_number_is_one_sentence(people, option, value, words):
    res = run("risk", people, "-c", "sex,age", option, value)
    assert res.exit_code == 2, res.output
    assert words in res.stderr and res.stderr.count("\n") == 1, res.stderr


def test_a_huge_population_is_printed_readably(people):
    """N = n/f for f = 1e-300 is a float's 301 digits; text shows 6e+300, not the digits."""
    res = run("risk", people, "-c", "sex,age", "--sampling-fraction", "1e-300")
    assert res.exit_code == 0, res.output
    assert "population          6e+300 (sampling fraction 1e-300)" in res.output
    assert "000,000,000" not in res.output
