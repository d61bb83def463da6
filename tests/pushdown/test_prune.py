"""Exact tail pruning (issue 30): the pruned audit's T̂, u, ξ̂, β̂ and exceedances equal the full
audit's bit for bit, and every bound holds.

Three layers, each against an independent computation:

* the bounds (pushdown/prune.py) against the plain-Python oracle's counts of every QI
  (``collections.Counter`` over row tuples), on random tables (seeded);
* the frontier on its own: fed the oracle's exact H round by round, the QIs it prunes are
  below the tail, and T̂ of θ with them at their upper bound is T̂ of the exact θ, bit for bit;
* the audit on real engines (DuckDB, PostgreSQL here; every engine in test_engines.py): the
  pruned audit against the unpruned one and the oracle.
"""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from click.testing import CliRunner

import qar_sql
from qar_sql.cli.main import cli
from qar_sql.errors import NoTailError
from qar_sql.pushdown import prune
from qar_sql.stats import evt
from tests.measures.test_audit import HOSTILE_COLUMNS, HOSTILE_TABLE, PARAMS, as_columns, oracle, random_table

# ---------------------------------------------------------------------------------------------
# Tables


def skewed_table(seed: int, n_rows: int, cards=(2, 3, 5, 8, 12, 20, 4, 30, 6, 2)):
    """(names, rows, types): columns with Zipf-like shares over ``cards`` values, NULLs in every
    third column, hostile names first; wide enough at p = 3 or 4 for pruning to bite."""
    rng = np.random.default_rng(seed)
    names = [*HOSTILE_COLUMNS, "x1", "x2", "x3", "x4"][: len(cards)]
    cols, types = [], {}
    for i, (name, k) in enumerate(zip(names, cards)):
        w = 1.0 / np.arange(1, k + 1) ** rng.uniform(0.5, 1.5)
        codes = rng.choice(k, size=n_rows, p=w / w.sum())
        if i % 2:
            values = [int(c) for c in codes]
            types[name] = "bigint"
        else:
            values = [f"v{c}" for c in codes]
            types[name] = "text"
        if i % 3 == 2:
            values = [None if rng.random() < 0.05 else v for v in values]
        cols.append(values)
    return names, list(zip(*cols)), types


# ---------------------------------------------------------------------------------------------
# Oracle helpers


def oracle_level(rows, p, n_cols):
    """(oracle QIs at p, prune.Level from the oracle's QIs at p − 1, V_c per column)."""
    values = [len({r[i] for r in rows}) for i in range(n_cols)]
    at_p = oracle(rows, p)
    if p == 1:
        below = prune.empty_level(len(rows), values)
    else:
        lower = oracle(rows, p - 1)
        hist = {j: list(q["class_sizes"]) for j, q in enumerate(lower)}
        below = prune.level(hist, len(lower), values)
    return at_p, below, values


def run_frontier(distinct: np.ndarray, b: prune.Bounds, width: int, first_round: int) -> prune.Frontier:
    """The frontier fed the exact H of the QIs it asks for, round by round, as the audit does."""
    f = prune.Frontier(b.distinct_low, b.distinct_high, width, first_round=first_round)
    while not f.done:
        f.record({j: int(distinct[j]) for j in f.next_round()})
    f.check()
    return f


def assert_bounds_hold(at_p, b: prune.Bounds):
    for j, q in enumerate(at_p):
        assert b.distinct_low[j] <= q["distinct"] <= b.distinct_high[j], q["combo"]
        assert b.singletons_low[j] <= q["singletons"], q["combo"]
        assert q["min_class_size"] <= b.min_class_high[j], q["combo"]


def same_float(a: float, b: float) -> bool:
    return float(a).hex() == float(b).hex()


def assert_same_fit(got, want):
    """Bit-for-bit the same tail fit (or both no tail)."""
    if want is None:
        assert got is None
        return
    assert got == want
    for name in ("risk", "u", "xi", "beta"):
        assert same_float(getattr(got, name), getattr(want, name)), name


def check_frontier_exact(rows, p, *, alpha=0.01, pi_u=0.05, first_round=8):
    """Bounds hold; the frontier's pruned QIs stand below the tail; T̂ with them at their upper
    bound is the exact T̂ bit for bit. Returns how many were pruned."""
    n_cols = len(rows[0])
    at_p, below, values = oracle_level(rows, p, n_cols)
    combos = prune.qi_array(n_cols, p)
    b = prune.bounds(below, combos, n_cols, values)
    assert_bounds_hold(at_p, b)
    distinct = np.array([q["distinct"] for q in at_p])
    n = len(rows)
    try:
        width = evt.tail_width(len(at_p), pi_u)
    except qar_sql.QarError:
        return 0
    f = run_frontier(distinct, b, width, first_round)
    placed = np.where(f.pruned, b.distinct_high, distinct) / n
    try:
        want = evt.qar_risk(distinct / n, n, alpha=alpha, pi_u=pi_u)
    except NoTailError:
        with pytest.raises(NoTailError):
            evt.qar_risk(placed, n, alpha=alpha, pi_u=pi_u)
        return int(f.pruned.sum())
    got = evt.qar_risk(placed, n, alpha=alpha, pi_u=pi_u)
    assert_same_fit(got, want)
    theta = evt.clip_theta(distinct / n, n)
    assert (theta[f.pruned] < want.u).all()  # no pruned QI is an exceedance, or ties with u
    top = np.sort(theta)[len(theta) - width]  # the lowest order statistic T̂ reads
    assert (theta[f.pruned] < top).all()
    return int(f.pruned.sum())


# ---------------------------------------------------------------------------------------------
# Pure: bounds and frontier against the oracle


def test_combination_index_is_the_itertools_order():
    for n, k in ((7, 1), (7, 3), (9, 4), (5, 5)):
        combos = prune.qi_array(n, k)
        assert (prune.combination_index(combos, n) == np.arange(len(combos))).all()


def test_bounds_by_hand():
    """Two columns, four rows: a = (1, 1, 2, 2), b = (x, y, x, x). The level below p = 2 is each
    column: a has classes 2 + 2, b has 3 + 1, and b has 2 values, a 2 values."""
    rows = [(1, "x"), (1, "y"), (2, "x"), (2, "x")]
    _, below, values = oracle_level(rows, 2, 2)
    b = prune.bounds(below, prune.qi_array(2, 2), 2, values)
    # low: max(H(a), H(b)) = 2; high: min(Σ min(s, V_b) over a's classes = 2 + 2,
    # Σ min(s, V_a) over b's classes = 2 + 1) = 3; the truth: (1,x) (1,y) (2,x): 3.
    assert (b.distinct_low[0], b.distinct_high[0]) == (2, 3)
    # singletons: b has one (y), a none; smallest class: min(2, 1) = 1
    assert (b.singletons_low[0], b.min_class_high[0]) == (1, 1)


@pytest.mark.parametrize("seed,n_rows,p", [(1, 200, 3), (2, 400, 4), (3, 60, 4), (4, 300, 2), (5, 150, 1)])
def test_frontier_is_exact_on_seeded_tables(seed, n_rows, p):
    names, rows, _ = skewed_table(seed, n_rows)
    pruned = check_frontier_exact(rows, p)
    if p >= 3:
        assert pruned > 0  # the case exercises pruning


@pytest.mark.parametrize("seed,n_rows,p,alpha,pi_u", PARAMS)
def test_frontier_is_exact_on_the_oracle_tables(seed, n_rows, p, alpha, pi_u):
    _, rows, _ = random_table(seed, n_rows)
    check_frontier_exact(rows, p, alpha=alpha, pi_u=pi_u)


def random_case(seed: int):
    """A small random table (1 to 6 values a column, NULLs in some), p, π_u and a first round
    size: many shapes, ties and keys included."""
    rng = random.Random(seed)
    n_cols = rng.randint(3, 7)
    cards = [rng.randint(1, 6) for _ in range(n_cols)]
    n_rows = rng.randint(2, 80)

    def cell(k):
        return None if k > 2 and rng.random() < 0.15 else rng.randrange(k)

    rows = [tuple(cell(k) for k in cards) for _ in range(n_rows)]
    return rows, rng.randint(1, min(4, n_cols)), rng.choice([0.05, 0.1, 0.2, 0.3]), rng.randint(1, 40)


@pytest.mark.parametrize("block", range(6))
def test_frontier_is_exact_on_random_tables(block):
    """300 random tables (seeded): bounds hold, pruned QIs stay below the tail, T̂ bit for bit."""
    pruning = 0
    for seed in range(50 * block, 50 * block + 50):
        rows, p, pi_u, first_round = random_case(seed)
        try:
            pruning += check_frontier_exact(rows, p, pi_u=pi_u, alpha=pi_u / 5, first_round=first_round) > 0
        except AssertionError as exc:
            raise AssertionError(f"seed {seed}: {exc}") from exc
    assert pruning >= 5  # the cases exercise pruning


# ---------------------------------------------------------------------------------------------
# The audit on real engines: pruned against unpruned, and against the oracle


def measure_theta(qis, rows, measure):
    """θ of the measure, by hand: H/L, or S/L with no one singled out at half a record."""
    if measure == "unique":
        return np.maximum(np.array([q.singletons for q in qis], dtype=float), 0.5) / rows
    return np.array([q.distinct for q in qis], dtype=float) / rows


def assert_pruned_equals_full(pr, full, *, expect_pruned=True):
    """Everything the tail depends on is identical; grouped QIs equal; pruned QIs' bounds hold."""
    assert pr.prune == "auto" and full.prune == "off" and full.n_pruned == 0
    assert pr.n_qi == full.n_qi and pr.rows == full.rows and pr.columns == full.columns
    assert_same_fit(pr.fit, full.fit)
    assert pr.measure == full.measure
    assert list(pr.warnings) == list(full.warnings)
    # the band: the pruned audit grouped the top the bootstrap reads, so the same intervals
    assert pr.intervals == full.intervals
    assert_same_loco(pr, full)
    assert pr.n_keys == full.n_keys
    if expect_pruned:
        assert pr.n_pruned > 0
    assert pr.n_grouped + pr.n_pruned == pr.n_qi
    theta = measure_theta(full.qis, full.rows, full.measure)
    clipped = evt.clip_theta(theta, full.rows)
    u = full.fit.u if full.fit else None
    for q, want in zip(pr.qis, full.qis, strict=True):
        if not q.pruned:
            assert q == want
            continue
        b = q.bounds
        assert b.distinct_low <= want.distinct <= b.distinct_high, q.columns
        assert b.singletons_low <= want.singletons and want.min_class_size <= b.min_class_high
        lo, hi = q.theta_bounds
        assert lo <= want.theta <= hi
        assert np.isnan(q.theta)
        if u is not None:
            assert clipped[q.index] < u  # never an exceedance
    if u is not None:  # the exceedances, by QI and value
        exc_full = {j: theta[j] for j in np.flatnonzero(clipped > u)}
        grouped = [q for q in pr.qis if not q.pruned]
        mine = measure_theta(grouped, pr.rows, pr.measure)
        exc_pr = {q.index: t for q, t in zip(grouped, mine) if evt.clip_theta(np.array([t]), pr.rows)[0] > u}
        assert exc_pr == exc_full
        assert len(exc_full) == full.fit.n_exceedances
    if "min_class_size" in pr.bounded:
        assert full.min_class_size <= pr.min_class_size
    else:
        assert pr.min_class_size == full.min_class_size
    if "qis_with_singletons" in pr.bounded:
        assert pr.qis_with_singletons <= full.qis_with_singletons
    else:
        assert pr.qis_with_singletons == full.qis_with_singletons


def assert_same_loco(pr, full):
    """Leave-one-column-out: each column's T̂ equal (to rounding: the batch fit), unless the
    pruned audit says why it has none (pruned QIs reach the tail without the column)."""
    if full.leave_one_column_out is None:
        assert pr.leave_one_column_out is None
        return
    for a, b in zip(pr.leave_one_column_out, full.leave_one_column_out, strict=True):
        assert a.column == b.column and a.n_qi == b.n_qi
        if a.risk is None and b.risk is not None:
            assert a.reason and "pruned" in a.reason
        elif b.risk is None:
            assert a.risk is None
        else:
            assert a.risk == pytest.approx(b.risk, rel=1e-12)


def check_pruned_audit(loader, names, rows, types, p, *, pi_u=0.05, alpha=0.01, expect_pruned=True, **kw):
    """Load the rows with ``loader`` (the ``engine`` fixture or ``Engine.loader()``), audit them
    pruned and unpruned, compare (and return both); the unique measure too (its own frontier)."""
    source, table = loader.load(HOSTILE_TABLE, as_columns(names, rows), types)
    common = dict(table=table, p=p, alpha=alpha, pi_u=pi_u)
    # without the band the frontier reads only the tail, and prunes most
    kw = {"bootstrap": 0, **kw}
    full = qar_sql.audit(source, **common, prune="off", **kw)
    pr = qar_sql.audit(source, **common, prune="auto", **kw)
    assert_pruned_equals_full(pr, full, expect_pruned=expect_pruned)
    full_u = qar_sql.audit(source, **common, prune="off", theta="unique", **kw)
    pr_u = qar_sql.audit(source, **common, prune="auto", theta="unique", **kw)
    assert_pruned_equals_full(pr_u, full_u, expect_pruned=False)
    assert pr_u.unique is not None and pr_u.unique.fit == pr_u.fit
    # with the band (the default bootstrap): the same intervals as the full audit's
    band = {**kw, "bootstrap": 1000}
    pr_b, full_b = (qar_sql.audit(source, **common, prune=mode, **band) for mode in ("auto", "off"))
    assert_pruned_equals_full(pr_b, full_b, expect_pruned=False)
    return pr, full


@pytest.mark.parametrize("seed,n_rows,p,alpha,pi_u", PARAMS)
def test_pruned_audit_equals_oracle_cases(engine, seed, n_rows, p, alpha, pi_u):
    """The oracle's own cases (ties with u, keys, no tail) with --prune auto at their p."""
    names, rows, types = random_table(seed, n_rows)
    pr, full = check_pruned_audit(engine, names, rows, types, p, alpha=alpha, pi_u=pi_u, expect_pruned=False)
    qis = oracle(rows, p)
    for q, want in zip(pr.qis, qis, strict=True):
        if q.pruned:
            assert q.bounds.distinct_low <= want["distinct"] <= q.bounds.distinct_high
        else:
            assert q.distinct == want["distinct"] and q.class_sizes == want["class_sizes"]


@pytest.mark.parametrize(
    "seed,n_rows,p,first_round,batch_size,jobs,min_saved",
    [
        (11, 500, 4, 8, None, 2, None),
        (12, 300, 3, 4, 7, 3, None),
        (13, 2000, 4, 256, None, 1, None),
        (14, 120, 4, 1, 5, 2, None),
        # residuals wherever a subset has a singleton: many per statement, one QI each, none
        (15, 800, 4, 8, None, 1, 0.0),
        (16, 300, 3, 4, 3, 2, 0.0),
        (17, 600, 4, 64, 2, 1, 0.0),
        (18, 400, 2, 2, None, 1, 0.0),
    ],
)
def test_pruned_audit_equals_unpruned(engine, monkeypatch, seed, n_rows, p, first_round, batch_size, jobs, min_saved):
    monkeypatch.setattr(prune, "FIRST_ROUND", first_round)  # small rounds: many of them
    if min_saved is not None:
        monkeypatch.setattr(prune, "RESIDUAL_MIN_SAVED", min_saved)
    names, rows, types = skewed_table(seed, n_rows)
    # (--jobs is concurrent connections, a server's: DuckDB refuses it, as it would do nothing)
    kw = {"jobs": jobs} if engine.name != "duckdb" else {}
    check_pruned_audit(engine, names, rows, types, p, batch_size=batch_size, **kw)


@pytest.mark.parametrize("seed", range(6))
def test_residual_plan_against_the_oracle(seed):
    """Each planned QI's subset is the QI less one column, its S is the oracle's singletons of
    that subset; the greedy takes the subset sparing the most rows first, and none below the
    threshold. Counting the QI over the residual (brute force) and adding S gives its classes."""
    from collections import Counter

    names, rows, _ = skewed_table(seed, 300, cards=(2, 3, 5, 8, 12, 20, 30))
    n_cols, p = len(names), 3
    at_p, below, _ = oracle_level(rows, p, n_cols)
    combos = prune.qi_array(n_cols, p)
    chosen = list(range(0, len(combos), 2))
    plan = prune.residual_plan(chosen, combos, below, n_cols, len(rows), min_saved=0.0)
    lower = {q["combo"]: q for q in oracle(rows, p - 1)}
    # with no threshold, every chosen QI that has a subset with a singleton is planned
    with_singletons = {
        j for j in chosen if any(lower[tuple(np.delete(combos[j], k))]["singletons"] > 0 for k in range(p))
    }
    assert plan and set(plan) == with_singletons
    for j, (subset, spared) in plan.items():
        combo = tuple(combos[j])
        assert set(subset) < set(combo) and len(subset) == p - 1
        assert spared == lower[subset]["singletons"] > 0
        on_subset = Counter(tuple(r[i] for i in subset) for r in rows)
        residual = [r for r in rows if on_subset[tuple(r[i] for i in subset)] > 1]
        sizes = Counter(Counter(tuple(r[i] for i in combo) for r in residual).values())
        sizes[1] += spared
        assert sorted(sizes.items()) == list(at_p[j]["class_sizes"])
    # a threshold no subset reaches plans nothing
    assert prune.residual_plan(chosen, combos, below, n_cols, len(rows), min_saved=10.0**9) == {}


def test_a_scan_of_every_qi_with_residuals_counts_every_qi(engine):
    """Residuals without ``only``: the QIs that have none are counted too, and every histogram is
    the plain scan's (the oracle's)."""
    from qar_sql.engines.source import session_of
    from qar_sql.pushdown import scan

    names, rows, types = skewed_table(3, 300, cards=(2, 3, 5, 8, 12, 20, 30))
    source, table = engine.load(HOSTILE_TABLE, as_columns(names, rows), types)
    n_cols, p = len(names), 3
    at_p, below, _ = oracle_level(rows, p, n_cols)
    combos = prune.qi_array(n_cols, p)
    plan = prune.residual_plan(list(range(0, len(combos), 2)), combos, below, n_cols, len(rows), min_saved=0.0)
    assert plan and len(plan) < len(combos)
    with session_of(source, table=table) as s:
        hist = scan.histograms(s.db, s.relation.sql, names, p, residuals=plan, batch_size=16)
    assert {j: sorted(h) for j, h in hist.items()} == {j: list(q["class_sizes"]) for j, q in enumerate(at_p)}


def test_default_prunes_from_p4_only(tmp_path):
    from conftest import Loader

    names, rows, types = skewed_table(21, 400)
    source, table = Loader("duckdb", tmp_path).load("t", as_columns(names, rows), types)
    assert qar_sql.audit(source, table=table, p=3).prune == "off"
    four = qar_sql.audit(source, table=table, p=4)
    assert four.prune == "auto" and four.n_pruned > 0
    assert qar_sql.audit(source, table=table, p=3, prune="auto").prune == "auto"
    # the uniqueness block needs every QI's classes: exact path by default, refused when asked
    assert qar_sql.audit(source, table=table, p=4, group_size=5).prune == "off"
    with pytest.raises(qar_sql.QarError, match="^group_size= needs .* prune='auto'"):
        qar_sql.audit(source, table=table, p=4, group_size=5, prune="auto")
    with pytest.raises(qar_sql.QarError, match="prune='some'"):
        qar_sql.audit(source, table=table, p=4, prune="some")


def test_progress_counts_qis_grouped_and_pruned(tmp_path):
    from conftest import Loader

    names, rows, types = skewed_table(22, 400)
    source, table = Loader("duckdb", tmp_path).load("t", as_columns(names, rows), types)
    seen = []
    r = qar_sql.audit(source, table=table, p=4, prune="auto", progress=lambda d, t: seen.append((d, t)))
    total = 10 + 120 + 210  # the columns alone (their values), C(10, 3) QIs for the bounds, then C(10, 4)
    assert {t for _, t in seen} == {total}
    assert [d for d, _ in seen] == sorted(d for d, _ in seen) and seen[-1][0] == total
    assert r.n_subsets == 130 and r.n_grouped + r.n_pruned == 210

    class Bar:  # what the CLI's bar offers: ticks, and a note of where the work stands
        def __init__(self):
            self.notes = []

        def __call__(self, done, total):
            pass

        def note(self, text):
            self.notes.append(text)

    bar = Bar()
    qar_sql.audit(source, table=table, p=4, prune="auto", progress=bar)
    assert bar.notes[-1] == f"QIs of size 4: {r.n_grouped:,} grouped, {r.n_pruned:,} pruned, 0 left"


def test_json_text_and_frames_say_what_was_pruned(tmp_path):
    from conftest import Loader

    names, rows, types = skewed_table(23, 400)
    source, table = Loader("duckdb", tmp_path).load("t", as_columns(names, rows), types)
    out = CliRunner().invoke(cli, ["audit", source, "--table", table, "-p", "4", "--format", "json"])
    assert out.exit_code == 0, out.output
    d = json.loads(out.output)
    assert d["prune"] == "auto" and d["n_grouped"] + d["n_pruned"] == d["n_qi"] == 210 and d["n_pruned"] > 0
    assert d["n_subsets_grouped"] == 130
    pruned = [q for q in d["qis"] if q.get("pruned")]
    assert len(pruned) == d["n_pruned"]
    for q in pruned:
        assert q["theta"] is None and q["distinct"] is None
        lo, hi = q["theta_bounds"]
        assert 0 < lo <= hi < d["u"]
    full = CliRunner().invoke(cli, ["audit", source, "--table", table, "-p", "4", "--prune", "off", "--format", "json"])
    f = json.loads(full.output)
    for name in ("risk", "u", "xi", "beta", "n_exceedances", "n_keys"):
        assert d[name] == f[name], name
    assert f["prune"] == "off" and f["n_pruned"] == 0 and f["bounds"] == []
    text = CliRunner().invoke(cli, ["audit", source, "--table", table, "-p", "4"]).output
    assert f"{d['n_pruned']:,} pruned" in text
    r = qar_sql.audit(source, table=table, p=4)
    frame = r.table_columns()
    assert sum(v is None for v in frame["distinct"]) == r.n_pruned
    assert all((b is None) == (not q.pruned) for b, q in zip(frame["theta_bounds"], r.qis))  # the JSON's names
    bad = CliRunner().invoke(
        cli, ["audit", source, "--table", table, "-p", "4", "--prune", "auto", "--group-size", "5"]
    )
    assert bad.exit_code == 2 and "--group-size" in bad.output


def test_records_take_the_exact_path(tmp_path):
    """Record-level commands need every QI's classes: at p = 4 they group every QI."""
    from conftest import Loader

    names, rows, types = skewed_table(24, 200, cards=(2, 3, 5, 8, 4, 6))
    keyed = [(i, *r) for i, r in enumerate(rows)]
    source, table = Loader("duckdb", tmp_path).load("t", as_columns(["id", *names], keyed), {"id": "bigint", **types})
    from qar_sql.commands.records import contributions

    c = contributions(source, table=table, key=["id"], columns=names, p=4, pi_u=0.2)
    assert c.audit.prune == "off" and c.audit.n_pruned == 0


def test_html_report_of_a_pruned_audit(tmp_path):
    """The report's θ figure plots the grouped QIs (the pruned ones have bounds, no θ)."""
    from conftest import Loader

    names, rows, types = skewed_table(25, 400)
    source, table = Loader("duckdb", tmp_path).load("t", as_columns(names, rows), types)
    out = CliRunner().invoke(cli, ["audit", source, "--table", table, "-p", "4", "--format", "html"])
    assert out.exit_code == 0, out.output
    assert "<html" in out.output.lower()


def test_frontier_check_refuses_a_bound_that_reaches_the_tail():
    """The check before the fit: four QIs, W = 1; the three low ones are pruned, and a pruned
    upper bound that reaches the top exact H is refused."""
    f = prune.Frontier(np.array([1, 1, 1, 5]), np.array([2, 2, 2, 6]), 1, first_round=1)
    while not f.done:
        f.record({j: int(f.high[j]) for j in f.next_round()})
    f.check()
    assert f.pruned.tolist() == [True, True, True, False]
    f.high[0] = 6
    with pytest.raises(ValueError, match="reaches the tail"):
        f.check()
    with pytest.raises(ValueError, match="outside its bounds"):
        f.record({1: 3})


# ---------------------------------------------------------------------------------------------
# The unique measure's frontier, and the band


def check_unique_frontier_exact(rows, p, *, alpha=0.01, pi_u=0.05, first_round=8):
    """The unique measure's frontier (S between max_B S(B) and the bound on H): its pruned QIs
    stand below the top W of S, and T̂ of S/L with them at the bound on H is the exact one, bit
    for bit. Returns how many were pruned."""
    from qar_sql.pushdown.pruned_scan import frontier_of

    n_cols, n = len(rows[0]), len(rows)
    at_p, below, values = oracle_level(rows, p, n_cols)
    b = prune.bounds(below, prune.qi_array(n_cols, p), n_cols, values)
    s = np.array([q["singletons"] for q in at_p])
    try:
        width = evt.tail_width(len(at_p), pi_u)
    except qar_sql.QarError:
        return 0
    f = frontier_of(b, "unique", width)
    while not f.done:
        f.record({j: int(s[j]) for j in f.next_round()})
    f.check()
    exact = np.maximum(s, 0.5) / n
    placed = np.where(f.pruned, np.maximum(b.distinct_high, 0.5) / n, exact)
    try:
        want = evt.qar_risk(exact, n, alpha=alpha, pi_u=pi_u)
    except NoTailError:
        with pytest.raises(NoTailError):
            evt.qar_risk(placed, n, alpha=alpha, pi_u=pi_u)
        return int(f.pruned.sum())
    assert_same_fit(evt.qar_risk(placed, n, alpha=alpha, pi_u=pi_u), want)
    top = np.sort(evt.clip_theta(exact, n))[len(exact) - width]
    assert (evt.clip_theta(exact, n)[f.pruned] < top).all()
    return int(f.pruned.sum())


@pytest.mark.parametrize("block", range(3))
def test_unique_frontier_is_exact_on_random_tables(block):
    pruning = 0
    for seed in range(50 * block, 50 * block + 50):
        rows, p, pi_u, first_round = random_case(seed)
        try:
            pruning += check_unique_frontier_exact(rows, p, pi_u=pi_u, alpha=pi_u / 5, first_round=first_round) > 0
        except AssertionError as exc:
            raise AssertionError(f"seed {seed}: {exc}") from exc
    assert pruning >= 1  # the cases exercise pruning


@pytest.mark.parametrize("seed,n_rows,p", [(1, 200, 3), (2, 400, 4), (4, 300, 2)])
def test_unique_frontier_is_exact_on_seeded_tables(seed, n_rows, p):
    _, rows, _ = skewed_table(seed, n_rows)
    pruned = check_unique_frontier_exact(rows, p)
    if p >= 3:
        assert pruned > 0


def test_pruned_band_equals_the_full_band_and_prunes(engine):
    """The default bootstrap with pruning: the same intervals as --prune off, and QIs pruned
    (the frontier reads the K ≈ 2W + 40 largest θ, not all 210)."""
    names, rows, types = skewed_table(13, 2000)
    source, table = engine.load(HOSTILE_TABLE, as_columns(names, rows), types)
    pr = qar_sql.audit(source, table=table, p=4, prune="auto")
    full = qar_sql.audit(source, table=table, p=4, prune="off")
    assert pr.n_pruned > 0 and pr.intervals is not None
    assert pr.intervals == full.intervals
    assert_same_fit(pr.fit, full.fit)
    assert dict(pr.risk_by_p)[3] == qar_sql.audit(source, table=table, p=3, bootstrap=0).risk
