"""``qar anonymize --theta unique``: the QaR target of θ = S/L (the audit's ``--theta unique``), on
DuckDB and PostgreSQL, against oracles:

* the choice equals an exhaustive evaluation of every node, each node's T̂ from a plain-Python
  oracle (the rows generalized with the hierarchies, the suppressed records dropped, the records
  unique on every p-subset counted with ``Counter``, a subset without one at 0.5/L, the audit's
  tail fit);
* T̂ of the chosen release equals ``qar audit --theta unique`` of that release (its rows read
  through ``--format sql``, loaded as a table);
* a release on which no record is unique on any p-subset has T̂ = 0 (not "no tail"), so it
  meets any target, and the audit of it finds no singleton on any QI.
"""

from __future__ import annotations

import itertools
import json
from collections import Counter

import pytest

import qar_sql
from qar_sql.anonymization.hierarchy import read_hierarchy, read_interval_toml
from qar_sql.anonymization.models import KAnonymity
from qar_sql.anonymization.search import anonymize_session
from qar_sql.errors import NoTailError
from qar_sql.stats import evt
from tests.anonymize.test_anonymize_command import (
    AGE,
    ALPHA,
    COLUMNS,
    PI_U,
    QI,
    SEX,
    TOWN,
    P,
    hierarchy_args,
    make_table,
    run_cli,
    write_hierarchies,
)


def oracle_unique_risk(data, hierarchies, levels, k):
    """(T̂ of θ = S/L of the release, records suppressed); T̂ 0 when no record is unique on any
    subset, None when no tail."""
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
    singles = []
    for combo in itertools.combinations(range(len(COLUMNS)), P):
        counts = Counter(tuple(r[i] for i in combo) for r in kept)
        singles.append(sum(1 for v in counts.values() if v == 1))
    if not any(singles):
        return 0.0, n - len(kept)
    theta = [max(s, 0.5) / len(kept) for s in singles]
    try:
        return evt.qar_risk(theta, len(kept), alpha=ALPHA, pi_u=PI_U).risk, n - len(kept)
    except NoTailError:
        return None, n - len(kept)


def _hierarchies(tmp_path):
    age, sex, town = write_hierarchies(tmp_path)
    loaded = {**read_interval_toml(age), SEX: read_hierarchy(sex, SEX), TOWN: read_hierarchy(town, TOWN)}
    return (age, sex, town), loaded


@pytest.mark.parametrize("seed", [61, 62])
def test_theta_unique_equals_exhaustive_evaluation(engine, tmp_path, seed):
    data = make_table(seed)
    source, table = engine.load("people", data)
    files, hierarchies = _hierarchies(tmp_path)
    k, limit = 2, 0.05
    with qar_sql.connect(source, table=table) as session:
        every = anonymize_session(
            session, hierarchies, [KAnonymity(k=k)], limit, "entropy", qi=QI, strategy="exhaustive"
        )
    nodes = {r.levels: r for r in every.evaluated_nodes}
    risks = {lv: oracle_unique_risk(data, hierarchies, lv, k) for lv, r in nodes.items() if r.anonymous}
    values = sorted(r for r, _ in risks.values() if r)  # (τ = 0 is no target)
    assert len(set(values)) >= 3
    for tau in (values[0], values[len(values) // 2], values[-1]):
        feasible = [
            (nodes[lv].scores["entropy"], sum(lv), lv) for lv, (r, _) in risks.items() if r is not None and r <= tau
        ]
        want = min(feasible)[2]
        got = qar_sql.anonymize(
            source, table=table, **hierarchy_args(*files), k=k, suppression_limit=limit, risk_below=tau, p=P,
            pi_u=PI_U, alpha=ALPHA, theta="unique",
        )  # fmt: skip
        assert got.chosen is not None and got.chosen.levels == want, tau
        assert got.risk == pytest.approx(risks[want][0], rel=1e-12, abs=1e-15)
        assert got.chosen.suppressed == risks[want][1]
        assert got.to_dict()["theta"] == "unique"


def _args(source, table, files):
    age, sex, town = files
    return ["anonymize", source, "--table", table, "--hierarchy", f"{AGE}={age}", "--hierarchy", f"{SEX}={sex}",
            "--hierarchy", f"{TOWN}={town}", "-p", str(P), "--pi-u", str(PI_U), "--alpha", str(ALPHA),
            "--theta", "unique", "-q"]  # fmt: skip


def _audit_of_release(engine, source, table, sql, code_wanted=0):
    """``qar audit --theta unique`` (JSON) of the release's rows, loaded as a table (exit 2: no tail)."""
    rows = engine.fetch(sql)
    data = {c: [r[i] for r in rows] for i, c in enumerate(COLUMNS)}
    data = {c: [None if v is None else str(v) for v in values] for c, values in data.items()}
    rsource, rtable = engine.load("release", data, types=dict.fromkeys(COLUMNS, "text"))
    code, out, err = run_cli(
        [
            "audit",
            rsource,
            "--table",
            rtable,
            "-p",
            str(P),
            "--pi-u",
            str(PI_U),
            "--alpha",
            str(ALPHA),
            "--theta",
            "unique",
            "-f",
            "json",
            "-q",
        ]  # fmt: skip
    )
    assert code == code_wanted, err
    return json.loads(out)


def test_theta_unique_equals_the_audit_of_the_release(engine, tmp_path):
    data = make_table(63)
    source, table = engine.load("people", data)
    files, _ = _hierarchies(tmp_path)
    args = [*_args(source, table, files), "--k", "3", "--suppression-limit", "0.1", "--risk-below", "0.9"]
    code, out, err = run_cli([*args, "-f", "json"])
    assert code == 0, err
    got = json.loads(out)
    assert got["suppressed"] > 0 and got["risk"] is not None
    code, sql, err = run_cli([*args, "-f", "sql"])
    assert code == 0, err
    audit = _audit_of_release(engine, source, table, sql)
    assert audit["rows"] == len(data[AGE]) - got["suppressed"]
    assert audit["risk"] == pytest.approx(got["risk"], rel=1e-12)


def test_a_release_without_unique_records_has_zero_risk(engine, tmp_path):
    """Every row twice: no record is unique on any subset at any node, so T̂ = 0 everywhere and
    the cheapest node (the table as it is) meets any τ; the audit of it counts no singleton
    (and, fitting the θ-vector at its floor, finds no tail)."""
    half = make_table(64, 60)
    data = {c: v + v for c, v in half.items()}
    source, table = engine.load("people", data)
    files, _ = _hierarchies(tmp_path)
    args = [*_args(source, table, files), "--risk-below", "1e-9"]
    code, out, err = run_cli([*args, "-f", "json"])
    assert code == 0, err
    got = json.loads(out)
    assert got["levels"] == dict.fromkeys(QI, 0) and got["suppressed"] == 0
    assert got["risk"] == 0.0 and got["risk_interval"] is None
    assert "no record of the release is unique" in got["risk_note"]
    code, sql, err = run_cli([*args, "-f", "sql"])
    assert code == 0, err
    audit = _audit_of_release(engine, source, table, sql, code_wanted=2)
    assert audit["rows"] == len(data[AGE]) and audit["risk"] is None
    assert all(q["singletons"] == 0 for q in audit["qis"])
