"""The information-loss report of ``qar whatif`` against a plain pandas computation on the
released rows (read back through the emitted view), on DuckDB and PostgreSQL.

pandas reference: changed cells, mean and sample sd before/after, IL1s as published
(Σ|x − y| / (√2·sd(x)·n); Yancey, Winkler & Creecy 2002), Pearson's r of numeric pairs, Cramér's V of the
two-way tables (numeric columns cut at the original's deciles as ntile(10) would: the largest
value of each of the first nine tenths), and the total variation distance of those tables.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import qar_sql
from tests.conftest import TREATMENTS
from tests.treat.test_perturb import ID, INCOME, SAVE, SEX, TOWN, _rows, make_rows

TOML = (TREATMENTS / "infoloss.toml").read_text(encoding="utf-8")
COLS = [ID, SEX, "age y", INCOME, TOWN, SAVE]


def _deciles(x: pd.Series) -> list[float]:
    v = np.sort(x.dropna().to_numpy())
    n = len(v)
    # ntile(10): the first n % 10 groups have one row more
    sizes = [n // 10 + (1 if i < n % 10 else 0) for i in range(10)]
    ends = np.cumsum(sizes)
    return sorted(set(float(v[e - 1]) for e in ends[:9]))


def _bin(x: pd.Series, edges) -> pd.Series:
    def f(v):
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return None
        for i, e in enumerate(edges):
            if v <= e:
                return str(i)
        return str(len(edges))

    return x.map(f)


def _cramers_v(a: pd.Series, b: pd.Series) -> float:
    t = pd.crosstab(a.fillna("<NULL>"), b.fillna("<NULL>"))
    n = t.to_numpy().sum()
    expected = np.outer(t.sum(axis=1), t.sum(axis=0)) / n
    chi2 = ((t.to_numpy() - expected) ** 2 / expected).sum()
    return math.sqrt(chi2 / (n * (min(t.shape) - 1)))


def _tvd(a0, b0, a1, b1) -> float:
    before = pd.Series(list(zip(a0.fillna("<NULL>"), b0.fillna("<NULL>")))).value_counts()
    after = pd.Series(list(zip(a1.fillna("<NULL>"), b1.fillna("<NULL>")))).value_counts()
    both = before.to_frame("o").join(after.to_frame("t"), how="outer").fillna(0)
    return float((both.o - both.t).abs().sum() / (2 * len(a0)))


def test_information_loss_matches_pandas(engine, tmp_path):
    data = make_rows()
    types = {ID: "bigint", "age y": "bigint", INCOME: "double precision", SAVE: "double precision"}
    if engine.name == "duckdb":
        types = {k: v.replace("double precision", "double") for k, v in types.items()}
    source, table = engine.load("people", data, types)
    r = qar_sql.whatif(source, table=table, treatments=TOML, risk=False, combine=[("noise", "pram")])
    loss = r.scenario("noise + pram").information_loss
    view = f"{engine.schema}.rel" if engine.schema else "rel"
    engine.execute(
        qar_sql.treat.whatif.emit_sql(source, treatments=TOML, table=table, apply=["noise", "pram"], view=view)
    )
    rel = pd.DataFrame(_rows(engine, f'"{engine.schema}"."rel"' if engine.schema else '"rel"'), columns=COLS)
    orig = pd.DataFrame(data)[COLS]
    rel = rel.set_index(ID).loc[orig[ID]].reset_index()
    n = len(orig)
    by_name = {c.column: c for c in loss.columns}
    assert [c.column for c in loss.columns] == [SEX, TOWN, INCOME, SAVE]
    for col in (INCOME, SAVE):
        x, y = orig[col].astype(float), rel[col].astype(float)
        c = by_name[col]
        assert c.changed == int((x != y).sum())
        assert c.mean_before == pytest.approx(x.mean(), rel=1e-12)
        assert c.sd_after == pytest.approx(y.std(), rel=1e-9)
        # Yancey, Winkler & Creecy (2002) / sdcMicro dUtility "IL1" (after its commit 4d42643):
        # (1/n) Σ |x − y| / (√2 · S).
        assert c.il1s == pytest.approx((x - y).abs().sum() / (math.sqrt(2) * x.std() * n), rel=1e-9)
    assert loss.il1s == pytest.approx((by_name[INCOME].il1s + by_name[SAVE].il1s) / 2, rel=1e-12)
    assert by_name[SEX].changed == int((orig[SEX].fillna("~") != rel[SEX].fillna("~")).sum())
    assert by_name[TOWN].changed == 0
    edges = {c: _deciles(orig[c]) for c in (INCOME, SAVE)}

    def cat(frame, col):
        return _bin(frame[col].astype(float), edges[col]) if col in edges else frame[col]

    for p in loss.pairs:
        a, b = p.columns
        if p.measure == "pearson":
            assert p.before == pytest.approx(orig[a].astype(float).corr(orig[b].astype(float)), rel=1e-9)
            assert p.after == pytest.approx(rel[a].astype(float).corr(rel[b].astype(float)), rel=1e-9)
        else:
            assert p.before == pytest.approx(_cramers_v(cat(orig, a), cat(orig, b)), rel=1e-9, abs=1e-12)
            assert p.after == pytest.approx(_cramers_v(cat(rel, a), cat(rel, b)), rel=1e-9, abs=1e-12)
        assert p.tvd == pytest.approx(_tvd(cat(orig, a), cat(orig, b), cat(rel, a), cat(rel, b)), abs=1e-12)
    changes = [abs(p.change) for p in loss.pairs]
    assert loss.utility == pytest.approx(1 - sum(changes) / len(changes))
    assert {p.columns for p in loss.pairs} == {
        (SEX, TOWN),
        (SEX, INCOME),
        (SEX, SAVE),
        (TOWN, INCOME),
        (TOWN, SAVE),
        (INCOME, SAVE),
    }
    # the PRAM risk figures: posterior odds from the design, true singletons counted
    s = r.scenario("pram")
    odds = dict(s.posterior_odds[0][2])
    freq = orig[SEX].dropna().value_counts(normalize=True)
    for v in freq.index:
        into = sum(freq[a] * (0.6 * (a == v) + 0.4 * freq[v]) for a in freq.index)
        assert odds[v] == pytest.approx(freq[v] * (0.6 + 0.4 * freq[v]) / into)
    assert s.posterior_odds_max == max(odds.values())
    assert 0 <= s.true_singletons <= s.singletons
    # true singletons of "noise + pram" by brute force on the released rows
    key = rel[[SEX, TOWN]].fillna("<NULL>").apply(tuple, axis=1)
    single = key.map(key.value_counts()) == 1
    same = (rel[SEX].fillna("<NULL>") == orig[SEX].fillna("<NULL>")) & (rel[TOWN] == orig[TOWN])
    combo = r.scenario("noise + pram")
    assert combo.singletons == int(single.sum())
    assert combo.true_singletons == int((single & same).sum())


def test_il1s_hand_computed(duck):
    """The published IL1s on five values: top-coding x = 1..5 at 3 gives y = 1, 2, 3, 3, 3, so
    Σ|x − y| = 3, S = sd(x) = √(5/2) (sample sd) and IL1s = 3 / (√2 · √(5/2) · 5) = 3 / (5√5)
    = 0.268328… — the figure of (1/(p·n))·Σ|x − y|/(√2·S) with p = 1 (Yancey, Winkler & Creecy
    2002, "Disclosure risk assessment in perturbative microdata protection", eq. for IL1s;
    sdcMicro ``dUtility(method = "IL1")`` since commit 4d42643). The tool reported twice this
    before (√2·Σ|x − y|/(S·n))."""
    data = {"id": [1, 2, 3, 4, 5], "x": [1, 2, 3, 4, 5], "g": ["a", "a", "b", "b", "b"]}
    source, table = duck.load("five", data, {"id": "bigint", "x": "bigint"})
    toml = 'qid = ["x", "g"]\n[treatments.top]\ncolumn = "x"\nkind = "top"\nabove = 3\nvalue = 3\n'
    r = qar_sql.whatif(source, table=table, treatments=toml, risk=False)
    loss = r.scenario("top").information_loss
    x = next(c for c in loss.columns if c.column == "x")
    assert x.il1s == pytest.approx(3 / (5 * math.sqrt(5)), rel=1e-14)
    assert x.il1s == pytest.approx(0.2683281572999748, rel=1e-14)
    assert loss.il1s == x.il1s  # one treated numeric column: the table's IL1s is its own
    assert x.rank_displacement is None


def _dense_rank_displacement(x: pd.Series, y: pd.Series) -> float:
    """Mean |r(x) − r(y)| over all rows, r the dense rank among both sides' distinct values."""
    values = sorted(set(x.dropna().astype(float)) | set(y.dropna().astype(float)))
    rank = {v: i + 1 for i, v in enumerate(values)}
    both = x.notna() & y.notna()
    moved = [abs(rank[float(a)] - rank[float(b)]) for a, b in zip(x[both], y[both])]
    return sum(moved) / len(x)


def test_pram_and_shuffle_give_no_il1s_but_rank_displacement(engine):
    """Category codes after PRAM or a shuffle: no IL1s (a distance between codes means
    nothing), the changed share, and the rank displacement — checked against pandas on the
    released rows; noise on the same table keeps its IL1s."""
    rows = make_rows(200, seed=11)
    data = {ID: rows[ID], "grade": [(i * 7) % 5 + 1 for i in range(200)], INCOME: rows[INCOME]}
    data["grade"][3] = None
    types = {ID: "bigint", "grade": "bigint", INCOME: "double precision"}
    if engine.name == "duckdb":
        types[INCOME] = "double"
    source, table = engine.load("coded", data, types)
    toml = (
        'seed = 9\nkey = "id"\nqid = ["grade"]\n'
        '[treatments.pram]\ncolumn = "grade"\nkind = "pram"\nretention = 0.5\n'
        '[treatments.shuffle]\ncolumn = "grade"\nkind = "shuffle"\n'
        f'[treatments.noise]\ncolumn = "{INCOME}"\nkind = "noise"\nsd = 0.1\n'
    )
    r = qar_sql.whatif(source, table=table, treatments=toml, risk=False, combine=[("pram", "noise")])
    orig = pd.DataFrame(data)
    for i, name in enumerate(("pram", "shuffle", "pram + noise")):
        loss = r.scenario(name).information_loss
        grade = next(c for c in loss.columns if c.column == "grade")
        assert grade.il1s is None
        view = f"{engine.schema}.rel_{i}" if engine.schema else f"rel_{i}"
        engine.execute(
            qar_sql.treat.whatif.emit_sql(source, treatments=toml, table=table, apply=name.split(" + "), view=view)
        )
        quoted = f'"{engine.schema}"."rel_{i}"' if engine.schema else f'"rel_{i}"'
        rel = pd.DataFrame(engine.fetch(f"select * from {quoted}"), columns=list(data))
        rel = rel.set_index(ID).loc[orig[ID]].reset_index()
        want = _dense_rank_displacement(orig["grade"], rel["grade"])
        assert want > 0
        assert grade.rank_displacement == pytest.approx(want, rel=1e-12)
        assert grade.changed_share == pytest.approx(
            ((orig["grade"] != rel["grade"]) & orig["grade"].notna() & rel["grade"].notna()).sum() / len(orig)
        )
        if name == "pram + noise":
            inc = next(c for c in loss.columns if c.column == INCOME)
            x, y = orig[INCOME].astype(float), rel[INCOME].astype(float)
            assert inc.il1s == pytest.approx((x - y).abs().sum() / (math.sqrt(2) * x.std() * len(x)), rel=1e-9)
            assert loss.il1s == inc.il1s  # the mean over treated numeric columns leaves PRAM's codes out
        else:
            assert loss.il1s is None
