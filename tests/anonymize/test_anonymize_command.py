"""``qar anonymize`` and ``qar_sql.anonymize`` on DuckDB and PostgreSQL, against oracles:

* the choice under ``--risk-below`` equals an exhaustive evaluation of every node (each node's
  anonymity and loss from the exhaustive search of the models, its T̂ from a plain-Python oracle
  that generalizes the rows with the hierarchies, drops the suppressed records, counts every
  p-subset with ``Counter`` and fits the audit's tail) on random small tables;
* the treatments file it writes (``-o``) round-trips through ``qar whatif``: the same smallest
  class, the same records suppressed and the same T̂;
* ``--format sql`` is a SELECT of the release (run by the test, not by qar);
* bad input is one sentence and exit 2.
"""

from __future__ import annotations

import csv
import itertools
import json
import random
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

import qar_sql
from qar_sql.anonymization.hierarchy import read_hierarchy, read_interval_toml
from qar_sql.anonymization.models import KAnonymity
from qar_sql.anonymization.search import anonymize_session
from qar_sql.cli.main import cli
from qar_sql.errors import NoTailError
from qar_sql.stats import evt

AGE, SEX, TOWN, INCOME, KIDS = 'age "y"', "sex", "town; drop", "income", "kids"
COLUMNS = (AGE, SEX, TOWN, INCOME, KIDS)
QI = (AGE, SEX, TOWN)
P, PI_U, ALPHA = 2, 0.4, 0.05


def make_table(seed: int, n: int = 120) -> dict[str, list]:
    rng = random.Random(seed)
    return {
        AGE: [rng.randrange(18, 80) for _ in range(n)],
        SEX: [rng.choice(["F", "M"]) for _ in range(n)],
        TOWN: [rng.choice([f"T{i}" for i in range(8)]) for _ in range(n)],
        INCOME: [rng.randrange(0, 5) for _ in range(n)],
        KIDS: [rng.randrange(0, 4) for _ in range(n)],
    }


def write_hierarchies(folder: Path) -> tuple[Path, Path, Path]:
    """An ARX CSV for sex and town, interval levels for age (TOML)."""
    sex = folder / "sex.csv"
    sex.write_text("F;*\nM;*\n", encoding="utf-8")
    town = folder / "town.csv"
    town.write_text("".join(f"T{i};P{i // 4};*\n" for i in range(8)), encoding="utf-8")
    age = folder / "age.toml"
    age.write_text('[hierarchies."age \\"y\\""]\nwidths = [5, 10, 20]\n', encoding="utf-8")
    return age, sex, town


def hierarchy_args(age: Path, sex: Path, town: Path) -> dict:
    return {"hierarchy": [(AGE, str(age)), (SEX, str(sex)), (TOWN, str(town))]}


def oracle_risk(data, hierarchies, levels, k):
    """T̂ of the release: the rows generalized in Python, classes smaller than k dropped."""
    n = len(data[AGE])
    rows = []
    for i in range(n):
        row = []
        for c in COLUMNS:
            v = data[c][i]
            row.append(hierarchies[c].generalize(str(v), levels[QI.index(c)]) if c in QI else v)
        rows.append(tuple(row))
    classes = Counter(r[:3] for r in rows)
    kept = [r for r in rows if classes[r[:3]] >= k]
    theta = [
        len(Counter(tuple(r[i] for i in combo) for r in kept)) / len(kept)
        for combo in itertools.combinations(range(len(COLUMNS)), P)
    ]
    try:
        return evt.qar_risk(theta, len(kept), alpha=ALPHA, pi_u=PI_U).risk, n - len(kept)
    except NoTailError:
        return None, n - len(kept)


@pytest.mark.parametrize("seed", [11, 12, 13])
def test_the_risk_target_equals_exhaustive_evaluation(engine, tmp_path, seed):
    data = make_table(seed)
    source, table = engine.load("people", data)
    age, sex, town = write_hierarchies(tmp_path)
    hierarchies = {**read_interval_toml(age), SEX: read_hierarchy(sex, SEX), TOWN: read_hierarchy(town, TOWN)}
    k, limit = 3, 0.05
    with qar_sql.connect(source, table=table) as session:
        every = anonymize_session(
            session, hierarchies, [KAnonymity(k=k)], limit, "entropy", qi=QI, strategy="exhaustive"
        )
    nodes = {r.levels: r for r in every.evaluated_nodes}
    assert len(nodes) == 5 * 2 * 3
    risks = {lv: oracle_risk(data, hierarchies, lv, k) for lv, r in nodes.items() if r.anonymous}
    for lv, (_, suppressed) in risks.items():
        assert nodes[lv].suppressed == suppressed
    values = sorted(r for r, _ in risks.values() if r is not None)
    assert len(values) >= 4
    for tau in (values[0], values[len(values) // 3], values[-1] * 1.01):
        feasible = [
            (nodes[lv].scores["entropy"], sum(lv), lv) for lv, (r, _) in risks.items() if r is not None and r <= tau
        ]
        want = min(feasible)[2] if feasible else None
        got = qar_sql.anonymize(
            source, table=table, **hierarchy_args(age, sex, town), k=k, suppression_limit=limit, risk_below=tau,
            p=P, pi_u=PI_U, alpha=ALPHA,
        )  # fmt: skip
        assert (got.chosen.levels if got.chosen else None) == want, tau
        if want is not None:
            assert got.risk == pytest.approx(risks[want][0], rel=1e-12)
            assert got.chosen.suppressed == risks[want][1]
            assert got.optimal and got.risk <= tau
            # the frontier: loss rising, T̂ falling, the choice last
            f = got.frontier
            assert f[-1].levels == want
            assert all(a.scores["entropy"] <= b.scores["entropy"] and a.risk > b.risk for a, b in zip(f, f[1:]))


def test_the_risk_target_alone_needs_no_other_model(duck, tmp_path):
    data = make_table(21)
    source, table = duck.load("people", data)
    age, sex, town = write_hierarchies(tmp_path)
    hierarchies = {**read_interval_toml(age), SEX: read_hierarchy(sex, SEX), TOWN: read_hierarchy(town, TOWN)}
    risks = {lv: oracle_risk(data, hierarchies, lv, 1)[0] for lv in itertools.product(range(5), range(2), range(3))}
    tau = sorted(r for r in risks.values() if r is not None)[10]
    got = qar_sql.anonymize(
        source, table=table, **hierarchy_args(age, sex, town), risk_below=tau, p=P, pi_u=PI_U, alpha=ALPHA
    )
    with qar_sql.connect(source, table=table) as session:
        every = anonymize_session(
            session, hierarchies, [KAnonymity(k=2)], 0.99, "entropy", qi=QI, strategy="exhaustive"
        )
    entropy = {r.levels: r.scores["entropy"] for r in every.evaluated_nodes}
    want = min((entropy[lv], sum(lv), lv) for lv, r in risks.items() if r is not None and r <= tau)[2]
    assert got.chosen.levels == want and got.chosen.suppressed == 0


def run_cli(args):
    r = CliRunner().invoke(cli, args)
    return r.exit_code, r.stdout, r.stderr


def test_the_treatments_file_round_trips_through_whatif(engine, tmp_path):
    data = make_table(31)
    source, table = engine.load("people", data)
    age, sex, town = write_hierarchies(tmp_path)
    out = tmp_path / "chosen.toml"
    common = ["--table", table, "-p", str(P), "--pi-u", str(PI_U), "--alpha", str(ALPHA)]
    code, stdout, stderr = run_cli(
        ["anonymize", source, *common, "--hierarchy", f"{AGE}={age}", "--hierarchy", f"{SEX}={sex}",
         "--hierarchy", f"{TOWN}={town}", "--k", "3", "--suppression-limit", "0.1", "--risk-below", "0.9",
         "-o", str(out), "-f", "json", "-q"]
    )  # fmt: skip
    assert code == 0, stderr
    got = json.loads(stdout)
    assert got["suppressed"] > 0, "the case should exercise record suppression"
    code, stdout, stderr = run_cli(["whatif", source, *common, "-T", str(out), "--no-loss", "-f", "json", "-q"])
    assert code == 0, stderr
    w = json.loads(stdout)
    release = w["scenarios"][-1]  # the file's release, all of its treatments in order
    assert release["treatments"][-1] == "suppress_small_classes"
    assert release["min_class_size"] == got["k"]
    assert w["rows"] - release["rows"] == got["suppressed"]
    assert release["risk"] == pytest.approx(got["risk"], rel=1e-12)


def test_json_contract_and_sql(engine, tmp_path):
    data = make_table(41)
    source, table = engine.load("people", data)
    age, sex, town = write_hierarchies(tmp_path)
    args = ["anonymize", source, "--table", table, "--hierarchy", f"{AGE}={age}", "--hierarchy", f"{SEX}={sex}",
            "--hierarchy", f"{TOWN}={town}", "--k", "3", "--suppression-limit", "0.05", "-q"]  # fmt: skip
    code, stdout, stderr = run_cli([*args, "-f", "json"])
    assert code == 0, stderr
    j = json.loads(stdout)
    for key in (
        "levels",
        "labels",
        "suppressed",
        "scores",
        "metric",
        "k",
        "optimal",
        "nodes",
        "evaluated",
        "seconds",
        "frontier",
    ):
        assert key in j, key
    assert list(j["levels"]) == list(QI) and list(j["labels"]) == list(QI)
    assert set(j["scores"]) == {"entropy", "loss", "precision", "discernibility", "aecs"}
    assert "risk" not in j  # neither -p nor --risk-below
    assert j["k"] >= 3 and j["nodes"] == 30
    code, sql, stderr = run_cli([*args, "-f", "sql"])
    assert code == 0, stderr
    rows = engine.fetch(
        f"select count(*), count(distinct {qar_sql.engines.dialects.get_dialect(None).quote(TOWN)}) from ({sql}) as r"
    )
    assert rows[0][0] == len(data[AGE]) - j["suppressed"]
    for fmt in ("text", "markdown"):
        code, out, stderr = run_cli([*args, "-f", fmt])
        assert code == 0 and "records suppressed" in out, stderr


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ([], "no privacy model given"),
        # 0 read as "no model": "no privacy model given"
        (["--k", "0"], "Invalid value for '--k' (env var: 'QAR_K'): 0 is not in the range x>=2"),
        (["--l", "0", "--sensitive", "age"], "Invalid value for '--l' (env var: 'QAR_L'): 0 is not in the range x>=2"),
        (["--l", "2"], "--l needs the sensitive column"),
        (["--k", "2", "--metric", "nonsense"], "Invalid value for '--metric'"),
        (["--k", "2", "--hierarchy", "sex=/no/such/file.csv"], "does not exist"),
        (["--k", "2", "--hierarchy", "sex"], "names no column"),
        (["--k", "2", "--suppression-limit", "1.5"], "--suppression-limit 1.5"),
        (["--risk-below", "2"], "--risk-below 2"),
        (["--k", "2", "--sensitive", "nope"], "sensitive column 'nope' (--sensitive) is not in the table"),
    ],
)
def test_bad_input_is_one_sentence(duck, tmp_path, extra, message):
    source, table = duck.load("people", make_table(1, 20))
    code, _, stderr = run_cli(["anonymize", source, "--table", table, *extra])
    assert code == 2, stderr
    assert message in stderr and "Traceback" not in stderr


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--risk-below", "0.5", "-p", "9"], "p = 9 is larger than the number of quasi-identifier columns (5)"),
        (["--k", "2", "--qid", f"{SEX},{SEX}"], f"--qid names {SEX!r} twice"),
    ],
)
def test_bad_input_with_hierarchies_is_one_sentence(duck, tmp_path, extra, message):
    source, table = duck.load("people", make_table(1, 20))
    age, sex, town = write_hierarchies(tmp_path)
    given = ["--hierarchy", f"{AGE}={age}", "--hierarchy", f"{SEX}={sex}", "--hierarchy", f"{TOWN}={town}"]
    code, _, stderr = run_cli(["anonymize", source, "--table", table, *given, *extra])
    assert code == 2, stderr
    assert message in stderr and "Traceback" not in stderr, stderr


def test_a_column_given_two_hierarchies_is_refused(duck, tmp_path):
    """Two --hierarchy options for one column (or a TOML file of every column and a file of one of
    them): the earlier was ignored without a word; the search ran with the later."""
    source, table = duck.load("people", make_table(1, 20))
    age, sex, town = write_hierarchies(tmp_path)
    other = tmp_path / "sex2.csv"
    other.write_text("F;X;*\nM;X;*\n", encoding="utf-8")
    both = tmp_path / "both.toml"
    both.write_text(age.read_text(encoding="utf-8"), encoding="utf-8")
    for given in (
        [f"{SEX}={sex}", f"{SEX}={other}"],
        [str(age), f"{AGE}={both}"],
    ):
        args = [a for g in [*given, f"{TOWN}={town}"] for a in ("--hierarchy", g)]
        code, _, stderr = run_cli(["anonymize", source, "--table", table, "--k", "2", *args])
        assert code == 2, stderr
        # (two COLUMN=FILE for one column are refused as the options are read, parameters.treat;
        # a file of several columns beside one of them once the files are read, choose.py)
        said = ("is given two hierarchies by --hierarchy", f"--hierarchy gives column {SEX!r} two files")
        assert any(s in stderr for s in said) and "Traceback" not in stderr, stderr


@pytest.mark.parametrize("drop_null", [False, True])
def test_the_release_of_a_csv_runs_as_printed(tmp_path, monkeypatch, drop_null):
    """A file is read into a temp table for the search; the printed SELECT reads the file itself,
    so it runs in a fresh DuckDB (from the folder qar ran in) and keeps rows - suppressed."""
    import csv

    import duckdb

    data = make_table(3, 200)
    monkeypatch.chdir(tmp_path)
    with open("people.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(COLUMNS)
        w.writerows(zip(*(data[c] for c in COLUMNS)))
    age, sex, town = write_hierarchies(tmp_path)
    args = ["anonymize", "people.csv", "--hierarchy", f"{AGE}={age}", "--hierarchy", f"{SEX}={sex}"]
    args += ["--hierarchy", f"{TOWN}={town}", "--k", "8", "--suppression-limit", "0.1"]
    args += ["--drop-null"] if drop_null else []
    code, out, stderr = run_cli([*args, "-f", "json"])
    assert code == 0, stderr
    j = json.loads(out)
    code, sql, stderr = run_cli([*args, "-f", "sql"])
    assert code == 0, stderr
    got = duckdb.connect().execute(f"select count(*) from ({sql}) as r").fetchone()
    assert got == (200 - j["suppressed"],)


def test_local_recoding_names_the_target_it_misses(duck, tmp_path):
    """--local with only --k: the line names k, not a risk target that was never asked for."""
    source, table = duck.load("people", make_table(2, 150))
    age, sex, town = write_hierarchies(tmp_path)
    args = ["anonymize", source, "--table", table, "--hierarchy", f"{AGE}={age}", "--hierarchy", f"{SEX}={sex}"]
    args += ["--hierarchy", f"{TOWN}={town}", "--k", "6", "--local"]
    code, out, stderr = run_cli(args)
    assert code == 0, stderr
    j = json.loads(run_cli([*args, "-f", "json"])[1])
    line = next(x for x in out.splitlines() if "local recoding" in x)
    assert "risk target" not in line
    assert ("misses k = 6" in line) == (j["local"]["k"] < 6), line


def test_a_hierarchy_of_no_column_is_named(duck, tmp_path):
    """The only hierarchy given names a column the table lacks: the error names that column."""
    source, table = duck.load("people", make_table(1, 20))
    town = tmp_path / "town.csv"
    town.write_text("T0;*\nT1;*\n", encoding="utf-8")
    code, _, stderr = run_cli(["anonymize", source, "--table", table, "--hierarchy", f"nope={town}", "--k", "2"])
    assert code == 2 and "column 'nope' (of a hierarchy) is not in the table" in stderr, stderr


def test_a_value_missing_from_its_hierarchy_is_named(duck, tmp_path):
    source, table = duck.load("people", make_table(1, 20))
    town = tmp_path / "town.csv"
    town.write_text("T0;*\nT1;*\n", encoding="utf-8")
    code, _, stderr = run_cli(["anonymize", source, "--table", table, "--hierarchy", f"{TOWN}={town}", "--k", "2"])
    assert code == 2 and "is missing from its hierarchy" in stderr and "row" in stderr, stderr


def test_l_diversity_with_the_risk_reported(duck, tmp_path):
    """-p without --risk-below reports T̂ of the choice of the models alone; the sensitive column
    is no audit column; l is the release's smallest count of distinct sensitive values."""
    data = make_table(51)
    source, table = duck.load("people", data)
    age, sex, town = write_hierarchies(tmp_path)
    hierarchies = {**read_interval_toml(age), SEX: read_hierarchy(sex, SEX), TOWN: read_hierarchy(town, TOWN)}
    got = qar_sql.anonymize(
        source, table=table, **hierarchy_args(age, sex, town), l=2, sensitive=INCOME, risk=True, p=P, pi_u=PI_U,
        alpha=ALPHA,
    )  # fmt: skip
    assert got.audit_columns == (AGE, SEX, TOWN, KIDS)
    lv = got.chosen.levels
    rows = [
        tuple(hierarchies[c].generalize(str(data[c][i]), lv[QI.index(c)]) for c in QI) for i in range(len(data[AGE]))
    ]
    diversity: dict = {}
    for key, s in zip(rows, data[INCOME]):
        diversity.setdefault(key, set()).add(s)
    assert got.l_value == min(len(v) for v in diversity.values()) >= 2
    assert got.risk is not None and got.to_dict()["risk"] == got.risk


def test_the_treatments_file_never_replaces_a_hierarchy_it_reads(tmp_path):
    """-o levels.toml beside --hierarchy levels.toml: refused before any work (exit 2), the
    hierarchy file left as it was."""
    data = tmp_path / "t.csv"
    data.write_text("age,sex\n31,M\n32,F\n33,M\n34,F\n", encoding="utf-8")
    levels = tmp_path / "levels.toml"
    levels.write_text("[hierarchies.age]\nwidths = [5, 10]\n", encoding="utf-8")
    before = levels.read_bytes()
    r = CliRunner().invoke(
        cli, ["anonymize", str(data), "--hierarchy", str(levels), "--k", "2", "-o", str(levels), "-q"]
    )
    assert r.exit_code == 2, r.output
    assert "is the hierarchy of its columns, which this command reads" in r.stderr
    assert levels.read_bytes() == before


def test_the_outputs_never_replace_a_file_of_the_hierarchies_directory(tmp_path):
    """--hierarchies DIR: each of its <name>_hierarchy_<column>.csv files is an input of the
    output guard, as a --hierarchy file is (-o refused before any work, exit 2)."""
    data = tmp_path / "t.csv"
    data.write_text("age,sex\n31,M\n32,F\n33,M\n34,F\n", encoding="utf-8")
    folder = tmp_path / "h"
    folder.mkdir()
    sex = folder / "t_hierarchy_sex.csv"
    sex.write_text("M;*\nF;*\n", encoding="utf-8")
    before = sex.read_bytes()
    r = CliRunner().invoke(cli, ["anonymize", str(data), "--hierarchies", str(folder), "--k", "2", "-o", str(sex)])
    assert r.exit_code == 2, r.output
    assert "is the hierarchy file t_hierarchy_sex.csv, which this command reads" in r.stderr, r.stderr
    assert sex.read_bytes() == before


def test_the_risk_target_with_diversity_and_suppression_says_why_not(duck, tmp_path):
    source, table = duck.load("people", make_table(1, 40))
    age, sex, town = write_hierarchies(tmp_path)
    code, _, stderr = run_cli(
        [
            "anonymize",
            source,
            "--table",
            table,
            "--hierarchy",
            f"{AGE}={age}",
            "--l",
            "2",
            "--sensitive",
            INCOME,
            "--risk-below",
            "0.5",
            "--suppression-limit",
            "0.05",
            "-q",
        ]  # fmt: skip
    )
    assert code == 2 and "Traceback" not in stderr
    assert "a class failing l-diversity or t-closeness can be of any size" in stderr, stderr


def test_the_nodes_counted_as_passing_are_known_to_pass(tmp_path):
    """The text said "N passing the models" of the nodes the search knows to pass (evaluated, or
    above one that passed): on adult 760 (k only) and 1,869 (with --risk-below) where 4,452 of the
    12,960 nodes pass. Here every node is judged by hand (classes below k counted with Counter,
    their records against the suppression limit): the count is at most the true one, and each
    run says "known to pass"."""
    pd = pytest.importorskip("pandas")
    from qar_sql.demo import generate_population
    from qar_sql.output.render_anonymize import render_anonymize

    people = pd.DataFrame(generate_population(2000, seed=5))
    levels = tmp_path / "levels.toml"
    levels.write_text(
        "[hierarchies.age]\nwidths = [2, 4, 8, 16, 32]\n[hierarchies.household_size]\nwidths = [2, 4]\n"
        "[hierarchies.number_of_children]\nwidths = [2, 4]\n"
    )
    widths = {
        "age": [1, 2, 4, 8, 16, 32, None],
        "household_size": [1, 2, 4, None],
        "number_of_children": [1, 2, 4, None],
    }
    columns = list(widths)
    passing = 0
    for node in itertools.product(*(range(len(w)) for w in widths.values())):
        keys = zip(
            *([0 if widths[c][lv] is None else v // widths[c][lv] for v in people[c]] for c, lv in zip(columns, node))
        )
        sizes = Counter(keys)
        passing += sum(n for n in sizes.values() if n < 5) <= 0.05 * len(people)
    for extra in ({}, {"risk_below": 0.9, "p": 2, "columns": [*columns, "sex", "region", "education"]}):
        result = qar_sql.anonymize(people, hierarchy=[("", str(levels))], k=5, suppression_limit=0.05, **extra)
        assert 0 < result.anonymous <= passing == 78
        assert f"{result.anonymous:,} known to pass the models" in render_anonymize(result, "text")


def test_the_treatments_file_is_checked_before_the_search_and_csv_has_the_chosen_node(tmp_path):
    """-o x.json wrote the TOML treatments file into x.json, and a missing folder was found only
    after the search; without a risk target -f csv printed a header and no row (the frontier
    is of the nodes whose T̂ was measured): the chosen node is its row."""
    data = tmp_path / "t.csv"
    data.write_text("age,sex\n31,M\n32,F\n33,M\n34,F\n36,M\n38,F\n", encoding="utf-8")
    levels = tmp_path / "levels.toml"
    levels.write_text("[hierarchies.age]\nwidths = [5, 10]\n", encoding="utf-8")
    args = ["anonymize", str(data), "--hierarchy", str(levels), "--k", "2", "-q"]
    for output, said in (
        (tmp_path / "x.json", "must end in .toml"),
        (tmp_path / "nowhere" / "x.toml", "does not exist; create it or write elsewhere"),
    ):
        r = CliRunner().invoke(cli, [*args, "-o", str(output)])
        assert r.exit_code == 2 and said in r.stderr and not output.exists(), r.output
        assert "Anonymization of" not in r.stdout  # refused before the search
    r = CliRunner().invoke(cli, [*args, "-f", "csv"])
    rows = list(csv.DictReader(r.stdout.splitlines()))
    got = qar_sql.anonymize(str(data), hierarchy=str(levels), k=2)
    assert (
        len(rows) == 1 and int(rows[0]["levels.age"]) == got.chosen.levels[0] and int(rows[0]["k"]) == got.chosen.k >= 2
    )


def test_the_risk_target_is_shown_as_given():
    """``--risk-below 0.9999999`` was shown as "T̂(2, 0.01) ≤ 1", a target no run can be given."""
    from qar_sql.output.render_anonymize import models_text

    class Asked:
        models = {"risk_below": 0.9999999, "suppression_limit": 0.0}
        p, alpha = 2, 0.01

    assert models_text(Asked()) == "T̂(2, 0.01) ≤ 0.9999999; at most 0% of rows suppressed"


def test_the_treatments_file_must_end_in_toml_also_from_the_environment(tmp_path):
    """`-o scores.csv` wrote TOML into a .csv, also from a $QAR_OUTPUT set for `qar records`
    (replacing its scores): refused before the source is read (it does not exist here)."""
    missing = str(tmp_path / "no.csv")
    out = tmp_path / "scores.csv"
    out.write_text("record,dt\n1,0.5\n", encoding="utf-8")
    args = ["anonymize", missing, "--hierarchies", str(tmp_path), "--k", "2", "-q"]
    r = CliRunner().invoke(cli, [*args, "-o", str(out)])
    assert r.exit_code == 2, r.output
    assert f"--output {str(out)!r} must end in .toml" in r.stderr, r.stderr
    r = CliRunner().invoke(cli, args, env={"QAR_OUTPUT": str(out)})
    assert r.exit_code == 2 and "must end in .toml" in r.stderr, r.output
    assert out.read_text(encoding="utf-8") == "record,dt\n1,0.5\n"


def test_the_frontier_plot_needs_a_measured_risk(engine, tmp_path):
    """Without --risk-below or -p no node has a T̂: ``--plot`` wrote an empty figure (exit 0, a
    matplotlib warning on stderr) and ``plot()`` returned empty axes. Both are refused, the
    command line's before the search; with -p the chosen node is drawn."""
    pytest.importorskip("matplotlib")
    source, table = engine.load("people", make_table(51))
    age, sex, town = write_hierarchies(tmp_path)
    plot = tmp_path / "frontier.png"
    args = ["anonymize", source, "--table", table, "--hierarchy", f"{AGE}={age}", "--k", "3", "-q"]
    code, stdout, stderr = run_cli([*args, "--plot", str(plot)])
    assert code == 2 and "--plot has no effect without --risk-below or --p" in stderr and "frontier" in stderr, stderr
    assert not plot.exists() and stdout == ""
    result = qar_sql.anonymize(source, table=table, hierarchy=[(AGE, str(age))], k=3)
    with pytest.raises(qar_sql.QarError, match=r"did not measure; pass risk_below="):
        result.plot()
    code, _, stderr = run_cli([*args, "-p", "1", "--pi-u", "0.3", "--plot", str(plot)])
    assert code == 0 and plot.stat().st_size > 0 and "Warning" not in stderr, stderr
    measured = qar_sql.anonymize(source, table=table, hierarchy=[(AGE, str(age))], k=3, risk=True, p=1, pi_u=0.3)
    assert len(measured.plot().collections) == 1  # the chosen node


def _missed_args(tmp_path, target: str) -> list[str]:
    """Options of a search that runs and meets no node: k = 20 of 20 rows with a sex hierarchy
    that never merges F and M, or a T̂ target below every node's."""
    age, sex, town = write_hierarchies(tmp_path)
    if target == "k":
        flat = tmp_path / "flat.csv"
        flat.write_text("F;F\nM;M\n", encoding="utf-8")
        return ["--hierarchy", f"{SEX}={flat}", "--k", "20", "--suppression-limit", "0.2"]
    given = ["--hierarchy", f"{AGE}={age}", "--hierarchy", f"{SEX}={sex}", "--hierarchy", f"{TOWN}={town}"]
    return [*given, "--risk-below", "1e-6", "-p", str(P), "--pi-u", str(PI_U)]


@pytest.mark.parametrize("target", ["k", "risk_below"])
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_a_target_the_search_misses_exits_1_whatever_the_target(engine, tmp_path, target, fmt):
    """An unmet --risk-below exited 0 and an unmet --k 2 (a DataError raised by the search, no
    output). Both are a target the search tried and missed: the output on stdout, then exit 1
    with one sentence naming the target, the best the search reached and what to widen; -o
    writes nothing and says so."""
    source, table = engine.load("people", make_table(4, 20))
    output = tmp_path / "chosen.toml"
    args = ["anonymize", source, "--table", table, *_missed_args(tmp_path, target), "-q", "-f", fmt]
    code, stdout, stderr = run_cli([*args, "-o", str(output)])
    assert code == 1, stderr
    assert not output.exists() and "(no treatments file was written)." in stderr, stderr
    named = "20-anonymity" if target == "k" else "T̂(2, 0.01) ≤ 1e-06"
    reached = (
        "the fewest records a node leaves in classes failing the models is 20 of 20"
        if target == "k"
        else ("the lowest T̂ it measured is")
    )
    assert f"No node of the {2 if target == 'k' else 30} meets {named}" in stderr, stderr
    assert reached in stderr and "widen the hierarchies" in stderr and "--suppression-limit" in stderr, stderr
    assert len(stderr.strip().splitlines()) == 1 and "Traceback" not in stderr, stderr
    if fmt == "json":
        assert json.loads(stdout)["levels"] is None
    else:
        assert "none: no node of the lattice meets every target" in stdout
    got = qar_sql.anonymize(source, table=table, **_api(tmp_path, target))
    assert got.chosen is None and got.reached is not None and reached in got.reached


def _api(tmp_path, target: str) -> dict:
    age, sex, town = write_hierarchies(tmp_path)
    if target == "k":
        flat = tmp_path / "flat.csv"
        return {"hierarchy": [(SEX, str(flat))], "k": 20, "suppression_limit": 0.2}
    return {**hierarchy_args(age, sex, town), "risk_below": 1e-6, "p": P, "pi_u": PI_U}


@pytest.mark.parametrize(
    ("rows", "extra", "message"),
    [
        (20, ["--k", "21"], "--k 21 asks for classes of at least 21 records, but the table has 20 rows"),
        (1, ["--no-singletons"], "--no-singletons asks for classes of at least 2 records, but the table has 1 row,"),
        (1, ["--k", "2", "--suppression-limit", "0.5"], "--k 2 asks for classes of at least 2 records"),
        # (every l-diversity needs l distinct sensitive values in a class: here the table has 1)
        (1, ["--l", "2", "--sensitive", INCOME], f"--l 2 asks for at least 2 distinct values of {INCOME!r}"),
        (20, ["--k", "2", "--l", "6", "--sensitive", INCOME], "but the table holds 5, so"),
    ],
)
def test_a_target_impossible_on_its_face_is_refused_before_the_search(engine, tmp_path, rows, extra, message):
    """--k above the number of rows, --no-singletons on one row, --l above the sensitive column's
    distinct values: bad input (exit 2, nothing on stdout), not a target the search tried (exit 1):
    no hierarchy or suppression limit can meet it."""
    source, table = engine.load("people", make_table(4, rows))
    age, sex, town = write_hierarchies(tmp_path)
    code, stdout, stderr = run_cli(["anonymize", source, "--table", table, "--hierarchy", f"{SEX}={sex}", *extra])
    assert code == 2 and message in stderr and "no release can meet it" in stderr, stderr
    assert stdout == "" and "Traceback" not in stderr
