"""``qar risk`` (qar_sql.risk) on DuckDB and PostgreSQL against plain-Python oracles: every
measure per QI and per record, with NULLs, weights and hostile column names, for both missing
value conventions; both engines give identical results."""

from __future__ import annotations

import csv
import math
import random

import classic_oracle as oracle
import numpy as np
import pytest

from qar_sql.commands import risk as risk_command
from qar_sql.errors import ColumnError, DataError, ParameterError, UsageError
from qar_sql.measures import classic
from qar_sql.stats import population as popmodels

SEX, AGE, ZIP, CITY = 'sex "x"', "age; drop", "zip ü", "city"
DIAG, INCOME, WEIGHT, KEY = "diag's", "in come", "w eight", "id"
QI = [SEX, AGE, ZIP, CITY]
TYPES = {
    SEX: "text",
    AGE: "bigint",
    ZIP: "text",
    CITY: "text",
    DIAG: "text",
    INCOME: "bigint",
    WEIGHT: "double precision",
    KEY: "bigint",
}


def make_rows(seed: int, n: int = 60) -> list[dict]:
    rng = random.Random(seed)

    def maybe(values, p_null):
        return None if rng.random() < p_null else rng.choice(values)

    rows = []
    for i in range(n):
        rows.append(
            {
                KEY: i + 1,
                SEX: maybe(["F", "M"], 0.1),
                AGE: maybe([20, 30, 40, 50], 0.1),
                ZIP: maybe(["1000", "2000", "3000"], 0.05),
                CITY: rng.choice(["a", "b"]),
                DIAG: maybe(["flu", "cold", "none", "asthma"], 0.15),
                INCOME: maybe([10, 20, 30, 40, 50, 60], 0.1),
                WEIGHT: rng.choice([1.5, 2.0, 7.25, 10.0, 33.0]),
            }
        )
    return rows


def load(engine, rows, name="t risk"):
    data = {c: [r[c] for r in rows] for c in rows[0]}
    return engine.load(name, data, {c: TYPES[c] for c in data})


def expected_qi(
    rows, cols, missing, *, weight=WEIGHT, sensitive=(DIAG, INCOME), threshold=0.2, l_min=2, t_max=0.2, population=None
):
    freq = oracle.frequencies(rows, cols, missing, weight)
    fk = [f for f, _ in freq]
    tuples = [tuple(r[c] for c in cols) for r in rows]
    firsts = {t: i for i, t in reversed(list(enumerate(tuples)))}
    out = {
        "classes": len(firsts),
        "sample_uniques": fk.count(1),
        "violations": {str(k): sum(f < k for f in fk) for k in (2, 3, 5)},
        "fk_sum": sum(fk[i] for i in firsts.values()),
        "expected_reidentifications": sum(oracle.bf_risk(f, F) for f, F in freq),
        "prosecutor": oracle.prosecutor(fk, threshold),
        "fk_histogram": {str(k): fk.count(k) for k in sorted(set(fk))},
    }
    out["global_risk"] = out["expected_reidentifications"] / len(rows)
    r = [oracle.bf_risk(f, F) for f, F in freq]
    out["individual_risk"] = (max(r), sum(r) / len(r), sum(x > threshold for x in r) / len(r))
    if population:
        sizes = sorted(set(fk))
        counts = [fk.count(s) / s for s in sizes]
        out["population_uniqueness"] = popmodels.population_uniqueness(sizes, counts, population)
    if sensitive:
        ld, tc = [], []
        for i in range(len(rows)):
            m = oracle.matches(rows, i, cols, missing)
            # A class with no value of a sensitive column is left out for it, as sdcMicro does
            # (its l would be 0); a class with no value in any is left out altogether.
            per = [
                oracle.ldiversity([rows[j][s] for j in m]) for s in sensitive if any(rows[j][s] is not None for j in m)
            ]
            if per:
                ld.append(tuple(min(x[k] for x in per) for k in range(3)))
            emds = [oracle.emd([rows[j][s] for j in m], [r[s] for r in rows], ordered=(s == INCOME)) for s in sensitive]
            emds = [e for e in emds if not math.isnan(e)]
            tc.append(max(emds) if emds else math.nan)
        out["l"] = (min(x[0] for x in ld), min(x[1] for x in ld), min(x[2] for x in ld))
        out["records_below"] = sum(x[0] < l_min for x in ld)
        out["t"] = max(t for t in tc if not math.isnan(t))
        out["t_above"] = sum(t > t_max for t in tc if not math.isnan(t))
    return out


def check_qi(q, want):
    assert q.classes == want["classes"]
    assert q.sample_uniques == want["sample_uniques"]
    assert q.violations == want["violations"]
    assert q.fk_sum == want["fk_sum"]
    assert q.expected_reidentifications == pytest.approx(want["expected_reidentifications"], rel=1e-12)
    assert q.global_risk == pytest.approx(want["global_risk"], rel=1e-12)
    assert q.fk_histogram == want["fk_histogram"]
    ir = q.individual_risk
    assert (ir.highest, ir.average, ir.records_at_risk) == pytest.approx(want["individual_risk"], rel=1e-12)
    pr = want["prosecutor"]
    assert (q.prosecutor.highest, q.prosecutor.average, q.prosecutor.records_at_risk) == pytest.approx(
        (pr["highest"], pr["average"], pr["records_at_risk"]), rel=1e-12
    )
    if "population_uniqueness" in want:
        assert q.population_uniqueness == want["population_uniqueness"]
    if "l" in want:
        ld = q.l_diversity
        assert (ld.distinct, ld.recursive_c2) == (want["l"][0], want["l"][2])
        assert ld.entropy == pytest.approx(want["l"][1], rel=1e-12)
        assert ld.records_below == want["records_below"]
        assert q.t_closeness == pytest.approx(want["t"], abs=1e-12)
        assert q.t_closeness_records_above == want["t_above"]


def weighted_risk(source, table, **kwargs):
    """classic.risk over QI with the weight and both sensitive columns: every measure at once."""
    return risk_command.risk(source, table=table, columns=QI, weight=WEIGHT, sensitive=[DIAG, INCOME], **kwargs)


@pytest.mark.parametrize("missing", ["value", "wildcard"])
def test_every_qi_matches_the_oracle(engine, missing):
    rows = make_rows(1)
    source, table = load(engine, rows)
    res = weighted_risk(source, table, p=2, missing=missing, sampling_fraction=0.05)
    assert res.rows == len(rows) and res.missing == missing and res.engine == engine.name
    assert [q.columns for q in res.qis] == [(a, b) for i, a in enumerate(QI) for b in QI[i + 1 :]]
    for q in res.qis:
        check_qi(q, expected_qi(rows, list(q.columns), missing, population=res.population))
    if missing == "wildcard":
        assert any(q.fk_sum > res.rows for q in res.qis)  # classes overlap
        assert any("exceeds the number of rows" in w for w in res.warnings)
    else:
        assert all(q.fk_sum == res.rows for q in res.qis)


@pytest.mark.parametrize("missing", ["value", "wildcard"])
def test_default_key_set_unweighted(engine, missing):
    rows = make_rows(2, 45)
    source, table = load(engine, rows)
    res = risk_command.risk(source, table=table, columns=QI, missing=missing, population=4500)
    assert res.p == 4 and len(res.qis) == 1
    (q,) = res.qis
    want = expected_qi(rows, QI, missing, weight=None, sensitive=(), population=4500)
    check_qi(q, want)
    # without weights sdcMicro's risk is 1/fk: the expected re-identifications are Σ 1/fk
    fk = [f for f, _ in oracle.frequencies(rows, QI, missing)]
    assert q.expected_reidentifications == pytest.approx(sum(1 / f for f in fk))
    assert q.l_diversity is None and q.t_closeness is None


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as fh:
        r = list(csv.reader(fh))
    return r[0], r[1:]


@pytest.mark.parametrize("missing", ["value", "wildcard"])
def test_per_record_file_matches_the_oracle(engine, missing, tmp_path):
    rows = make_rows(3, 50)
    source, table = load(engine, rows)
    out = tmp_path / "records.csv"
    res = risk_command.risk(
        source,
        table=table,
        columns=[SEX, AGE, ZIP],
        weight=WEIGHT,
        sensitive=[DIAG],
        missing=missing,
        per_record=out,
        key=[KEY],
        sampling_fraction=0.02,
    )
    assert res.per_record == str(out)
    header, body = read_csv(out)
    assert header == [
        KEY,
        "fk",
        "Fk",
        "risk",
        "l_distinct",
        "l_entropy",
        "suda",
        "dis_suda",
        "l_recursive",
        "t_closeness",
    ]
    cols = [SEX, AGE, ZIP]
    freq = oracle.frequencies(rows, cols, missing, WEIGHT)
    scores, dis = oracle.suda(rows, cols, missing=missing, dis_fraction=0.02)
    assert any(scores)
    for i, line in enumerate(body):
        assert int(line[0]) == rows[i][KEY]
        f, F = freq[i]
        assert int(line[1]) == f
        assert float(line[2]) == pytest.approx(F, rel=1e-12)
        assert float(line[3]) == pytest.approx(oracle.bf_risk(f, F), rel=1e-12)
        m = oracle.matches(rows, i, cols, missing)
        d, e, rec = oracle.ldiversity([rows[j][DIAG] for j in m])
        assert float(line[4]) == d
        assert float(line[5]) == pytest.approx(e, rel=1e-12)
        assert float(line[6]) == scores[i]
        assert float(line[7]) == pytest.approx(dis[i], rel=1e-12)
        assert float(line[8]) == rec
        t = oracle.emd([rows[j][DIAG] for j in m], [r[DIAG] for r in rows], ordered=False)
        assert (math.isnan(t) and line[9] == "") or float(line[9]) == pytest.approx(t, abs=1e-12)


def test_per_record_parquet_and_file_order(duck, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    rows = make_rows(4, 30)
    path = tmp_path / "people.csv"
    names = [SEX, AGE, ZIP, WEIGHT]
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(names)
        w.writerows([["" if r[c] is None else r[c] for c in names] for r in rows])
    out = tmp_path / "r.parquet"
    risk_command.risk(str(path), columns=[SEX, AGE, ZIP], weight=WEIGHT, per_record=out)
    t = pq.read_table(out)
    assert t.column_names == ["row", *classic.PER_RECORD_COLUMNS]
    assert t.column("row").to_pylist() == list(range(1, 31))
    freq = oracle.frequencies(rows, [SEX, AGE, ZIP], "value", WEIGHT)
    assert t.column("fk").to_pylist() == [f for f, _ in freq]
    np.testing.assert_allclose(t.column("Fk").to_numpy(), [F for _, F in freq])


def comparable(res) -> dict:
    d = res.to_dict()
    for k in ("source", "table", "engine", "seconds", "per_record"):
        d.pop(k)
    return d


def test_duckdb_and_postgresql_identical(tmp_path):
    from conftest import Loader

    rows = make_rows(5, 70)
    got = []
    for name in ("duckdb", "postgresql"):
        loader = Loader(name, tmp_path)
        try:
            source, table = load(loader, rows)
            for missing in ("value", "wildcard"):
                got.append(comparable(weighted_risk(source, table, p=3, missing=missing, population=700)))
        finally:
            loader.cleanup()
    assert got[0] == got[2]
    assert got[1] == got[3]


def test_worked_example_both_conventions(duck):
    # docs/risk-measures.md: six people, two NULLs
    rows = [
        {"sex": "F", "age": 30, "zip": "1000"},
        {"sex": "F", "age": 30, "zip": "1000"},
        {"sex": "F", "age": None, "zip": "1000"},
        {"sex": "M", "age": 40, "zip": "2000"},
        {"sex": "M", "age": 40, "zip": None},
        {"sex": "M", "age": 50, "zip": "2000"},
    ]
    source, table = duck.load("people", {c: [r[c] for r in rows] for c in rows[0]})
    value = risk_command.risk(source, table=table).qis[0]
    wild = risk_command.risk(source, table=table, missing="wildcard").qis[0]
    assert (value.classes, value.sample_uniques, value.fk_sum) == (5, 4, 6)
    assert (wild.classes, wild.sample_uniques, wild.fk_sum) == (5, 1, 11)
    assert value.expected_reidentifications == pytest.approx(5.0)  # Σ 1/fk = classes
    assert wild.expected_reidentifications == pytest.approx(3 * (1 / 3) + 2 * (1 / 2) + 1)
    assert value.violations == {"2": 4, "3": 6, "5": 6}
    assert wild.violations == {"2": 1, "3": 3, "5": 6}


def test_sdcmicro_freqcalc_example(duck):
    # sdcMicro tests/testthat/test_freqCalc.R: after suppressing one status, fk = 3, 3, 3, 3, 5
    data = {"region": ["A"] * 5, "status": ["single", "married", "married", "single", None], "agegroup": ["5"] * 5}
    source, table = duck.load("df", data)
    q = risk_command.risk(source, table=table, missing="wildcard").qis[0]
    assert q.fk_sum == 3 + 3 + 5  # cells single, married, NULL
    assert q.violations["5"] == 4


# --- bad input ----------------------------------------------------------------------------------


@pytest.fixture
def small(duck):
    rows = make_rows(6, 20)
    return load(duck, rows)


def test_bad_weights(duck):
    rows = make_rows(7, 10)
    rows[3][WEIGHT] = -2.5
    source, table = load(duck, rows, "neg")
    with pytest.raises(
        DataError, match=r"weight column 'w eight' has 1 weight\(s\) of 0 or less \(the smallest is -2.5\)"
    ):
        risk_command.risk(source, table=table, columns=QI, weight=WEIGHT)
    rows[3][WEIGHT] = None
    source, table = load(duck, rows, "nul")
    with pytest.raises(DataError, match="is NULL in 1 record"):
        risk_command.risk(source, table=table, columns=QI, weight=WEIGHT)
    with pytest.raises(ColumnError, match="not numbers"):
        risk_command.risk(source, table=table, columns=QI, weight=DIAG)


def test_bad_roles_and_parameters(small):
    source, table = small
    with pytest.raises(ColumnError, match="also a quasi-identifier column"):
        risk_command.risk(source, table=table, columns=QI, sensitive=[SEX])
    with pytest.raises(ColumnError, match="did you mean"):
        risk_command.risk(source, table=table, columns=QI, sensitive=["diag"])
    for bad in (0.0, 1.5, -1.0):
        with pytest.raises(ParameterError, match=r"sampling_fraction=.* must be in \(0, 1\]"):
            risk_command.risk(source, table=table, columns=QI, sampling_fraction=bad)
    with pytest.raises(ParameterError, match="missing='ignore' is unknown; use one of value, wildcard"):
        risk_command.risk(source, table=table, columns=QI, missing="ignore")
    with pytest.raises(UsageError, match=r"must end in \.csv or \.parquet"):
        risk_command.risk(source, table=table, columns=QI, per_record="x.txt")
    with pytest.raises(UsageError, match="key="):
        risk_command.risk(source, table=table, columns=QI, per_record="x.csv")
    with pytest.raises(ParameterError, match="at least the number of rows"):
        risk_command.risk(source, table=table, columns=QI, population=3)


def test_bad_weights_not_finite(engine):
    # NaN and infinity pass "w <= 0" in SQL (NaN sorts above every number): named, not summed into Fk
    for name, bad in (("nan w", float("nan")), ("inf w", float("inf"))):
        rows = make_rows(8, 10)
        rows[2][WEIGHT] = bad
        source, table = load(engine, rows, name)
        with pytest.raises(DataError, match=r"weight column 'w eight' holds 1 weight\(s\) that are not finite"):
            risk_command.risk(source, table=table, columns=QI, weight=WEIGHT)


def test_unknown_role_columns_name_their_option(small):
    source, table = small
    # without --columns the weight and sensitive columns leave the default key set: the message
    # still names the option the user typed, not --exclude
    with pytest.raises(ColumnError, match=r"^weight= column 'wieght' not found"):
        risk_command.risk(source, table=table, weight="wieght")
    with pytest.raises(ColumnError, match=r"^sensitive= column 'diag' not found; did you mean"):
        risk_command.risk(source, table=table, sensitive=["diag"])


def test_per_record_never_overwrites_the_source(tmp_path):
    path = tmp_path / "people.csv"
    path.write_text("a,b\n1,2\n1,3\n")
    before = path.read_bytes()
    with pytest.raises(UsageError, match="is the source file itself"):
        risk_command.risk(str(path), per_record=str(path))
    assert path.read_bytes() == before
    with pytest.raises(ParameterError, match="suda_max_size=0 is not a whole number of at least 1"):
        risk_command.risk(str(path), per_record=str(tmp_path / "o.csv"), suda_max_size=0)


@pytest.mark.parametrize("missing", ["value", "wildcard"])
@pytest.mark.parametrize("max_size", [2, None])
def test_records_by_suda_matches_the_oracle(engine, missing, max_size):
    # qar records --by suda (classic.suda) on both engines: SUDA and DIS-SUDA of every record,
    # in key order, against brute force over every column set (classic_oracle.suda)
    rows = make_rows(9, 40)
    source, table = load(engine, rows)
    cols = [SEX, AGE, ZIP, CITY]
    found = classic.suda(
        source, table=table, columns=cols, key=[KEY], max_size=max_size, missing=missing, population=4000, all_keys=True
    )
    res, key_names, keys = found.suda, found.key, found.keys
    scores, dis = oracle.suda(rows, cols, max_size=max_size, missing=missing, dis_fraction=40 / 4000)
    assert key_names == (KEY,) and [keys[i] for i in range(40)] == [(r[KEY],) for r in rows]
    assert res.max_size == (max_size or 4)
    assert res.score.tolist() == scores
    np.testing.assert_allclose(res.dis_score, dis, rtol=1e-12)


def test_table_columns_hold_every_measure(duck):
    # the per-QI table (to_pandas / a report section): one row per QI, the values of qis[]
    rows = make_rows(10, 30)
    source, table = load(duck, rows)
    res = risk_command.risk(source, table=table, columns=QI, p=2, weight=WEIGHT, sensitive=[DIAG], population=3000)
    cols = res.table_columns()
    assert {len(v) for v in cols.values()} == {len(res.qis)} == {6}
    # the JSON's names, an object's fields as outer.inner
    for name in ("individual_risk.highest", "population_uniqueness.dankar", "l_diversity.distinct", "violations.5"):
        assert name in cols
    for i, q in enumerate(res.qis):
        assert cols["individual_risk.highest"][i] == q.individual_risk.highest
        assert cols["population_uniqueness.dankar"][i] == q.population_uniqueness.dankar
        assert cols["l_diversity.entropy"][i] == q.l_diversity.entropy
        assert cols["t_closeness"][i] == q.t_closeness
        assert sum(q.fk_histogram.values()) == res.rows
    plain = risk_command.risk(source, table=table, columns=QI, p=2).table_columns()
    assert "l_diversity.distinct" not in plain and "population_uniqueness.dankar" not in plain


def test_ordered_text_sensitive_column(engine):
    # --ordered: an ordinal text column gets Li et al.'s ordered distance in sort order
    rows = make_rows(11, 40)
    grades = ["1-low", "2-mid", "3-high", None]
    for i, r in enumerate(rows):
        r[DIAG] = grades[(i * 7 + (r[AGE] or 0)) % 4]
    source, table = load(engine, rows)
    res = risk_command.risk(source, table=table, columns=[SEX, AGE], sensitive=[DIAG], ordered=[DIAG])
    assert res.ordered == (DIAG,)
    want = expected_qi(rows, [SEX, AGE], "value", weight=None, sensitive=())
    tc = [
        oracle.emd([rows[j][DIAG] for j in oracle.matches(rows, i, [SEX, AGE], "value")], [r[DIAG] for r in rows], True)
        for i in range(len(rows))
    ]
    tc = [t for t in tc if not math.isnan(t)]
    assert res.qis[0].classes == want["classes"]
    assert res.qis[0].t_closeness == pytest.approx(max(tc), abs=1e-12)
    equal = risk_command.risk(source, table=table, columns=[SEX, AGE], sensitive=[DIAG])
    assert equal.ordered == () and equal.qis[0].t_closeness != res.qis[0].t_closeness
    with pytest.raises(ParameterError, match="ordered= column 'in come' is not a sensitive= column"):
        risk_command.risk(source, table=table, columns=[SEX, AGE], sensitive=[DIAG], ordered=[INCOME])


def test_l_diversity_leaves_out_classes_without_sensitive_values(duck):
    """sdcMicro's ``ldiversity`` leaves out a class whose sensitive values are all missing
    (sdcMicro src/Measure_Risk.h, compute_group_ldiversity: no value, no l); before, such a
    class had distinct l 0 and recursive l 0 and pulled the table's figures to 0. Classes:
    (a) diag x, y -> distinct 2, recursive (2, l) 2; (b) x, x -> 1, 1; (c) only NULLs -> out."""
    data = {"id": [1, 2, 3, 4, 5, 6], "k": ["a", "a", "b", "b", "c", "c"], "diag": ["x", "y", "x", "x", None, None]}
    source, table = duck.load("ld", data, {"id": "bigint"})
    r = risk_command.risk(source, table=table, columns=["k"], sensitive=["diag"])
    (q,) = r.qis
    ld = q.l_diversity
    assert (ld.distinct, ld.recursive_c2, ld.entropy) == (1.0, 1.0, 1.0)
    assert ld.classes_all_missing == 1 and ld.by_column["diag"]["classes_all_missing"] == 1
    assert ld.records_below == 2  # class (b) only: (c) has no l to be below 2
    assert any("classes in which a sensitive column has no value" in w for w in r.warnings)


def test_wildcard_refuses_more_key_columns_than_its_null_pattern_holds(tmp_path):
    """--missing wildcard's NULL patterns are 64-bit masks over the key columns: 63 columns are
    refused with one sentence before any count (they failed, or risked wrong classes, before)."""
    import qar_sql

    path = tmp_path / "wide.csv"
    names = [f"c{i}" for i in range(classic.WILDCARD_MAX_COLUMNS + 1)]
    path.write_text(",".join(names) + "\n" + ",".join("1" for _ in names) + "\n" + ",".join("" for _ in names) + "\n")
    with pytest.raises(ParameterError, match=r"missing='wildcard' reads at most 62 key columns .* 63 are given"):
        qar_sql.risk(str(path), missing="wildcard", p=1)
    assert qar_sql.risk(str(path), columns=names[:62], missing="wildcard", p=1).rows == 2
