"""``qar whatif`` and ``--emit-sql`` against a plain-Python oracle, on DuckDB and PostgreSQL.

The oracle applies every treatment kind to Python row dicts itself (bands as label, mean and
midpoint; inline maps; hierarchies from a column and from a lookup table; top and bottom
coding; suppression; local application to a QI's singleton rows in the source), then counts
singletons, distinct values, smallest class and modified rows with ``collections.Counter``
(``None`` a value of its own). The emitted views are created in the test's own database or
schema (never by qar) and queried back.
"""

from __future__ import annotations

import json
import math
import random
from collections import Counter

import duckdb
import pytest
from click.testing import CliRunner

import qar_sql
from qar_sql.cli.main import cli
from qar_sql.treat.treatments import parse
from tests.conftest import TREATMENTS

AGE, SEX, TOWN, PROV, INCOME, KIDS = 'age "y"', "sex", "town; drop", "prov.name", "income", "select"
COLS = (AGE, SEX, TOWN, PROV, INCOME, KIDS)
QI = [AGE, SEX, TOWN]


def make_data(n=80, seed=5):
    rng = random.Random(seed)
    towns = {f"T{i}": f"P{i % 3}" for i in range(9)}
    rows = {c: [] for c in COLS}
    for _ in range(n):
        town = rng.choice(list(towns) + [None])
        rows[AGE].append(rng.randrange(15, 96) if rng.random() > 0.08 else None)
        rows[SEX].append(rng.choice(["M", "F", "F", None]))
        rows[TOWN].append(town)
        rows[PROV].append(towns[town] if town and rng.random() > 0.1 else None)
        rows[INCOME].append(float(rng.randrange(0, 200)) * 250.0 if rng.random() > 0.1 else None)
        rows[KIDS].append(rng.choice([0, 0, 1, 2, 3, 4, 5, 7, None]))
    return rows, towns


TOML = (TREATMENTS / "whatif.toml").read_text(encoding="utf-8")

# ------------------------------------------------------------------------------------------
# The oracle
# ------------------------------------------------------------------------------------------


def _label(v, edges, labels=None):
    fmt = lambda x: str(int(x)) if float(x).is_integer() else repr(x)  # noqa: E731
    if v < edges[0]:
        return f"< {fmt(edges[0])}"
    for i, (a, b) in enumerate(zip(edges, edges[1:])):
        if v < b:
            return labels[i] if labels else f"[{fmt(a)}, {fmt(b)})"
    return f">= {fmt(edges[-1])}"


def _edges(spec, values):
    if "edges" in spec:
        return [float(e) for e in spec["edges"]]
    w, o = spec["width"], spec.get("origin", 0)
    vals = [v for v in values if v is not None]
    lo, hi = (min(vals), max(vals)) if vals else (o, o)
    first = math.floor((lo - o) / w)
    n = math.floor((hi - o) / w) - first + 1
    return [o + (first + i) * w for i in range(n + 1)]


def _singletons(rows, qi):
    counts = Counter(tuple(r[c] for c in qi) for r in rows)
    return [counts[tuple(r[c] for c in qi)] == 1 for r in rows]


def _as_text(v):
    return None if v is None else (v if isinstance(v, str) else str(v))


def apply_oracle(rows, spec, qis, lookup, source_rows):
    """One treatment applied to a list of row dicts; returns (new rows, changed flags)."""
    col, kind = spec["column"], spec["kind"]
    local = spec.get("local")
    local = qis[local] if isinstance(local, str) else local
    flags = _singletons(source_rows, local) if local else [True] * len(rows)
    values = [r[col] for r in rows]
    new = list(values)
    if kind == "bands":
        edges = _edges(spec, [r[col] for r in source_rows])
        to = spec.get("to", "label")
        labels = [None if v is None else _label(v, edges, spec.get("labels")) for v in values]
        if to == "label":
            new = labels
        elif to == "midpoint":

            def mid(v):
                if v < edges[0]:
                    return edges[0]
                for a, b in zip(edges, edges[1:]):
                    if v < b:
                        return (a + b) / 2
                return edges[-1]

            new = [None if v is None else float(mid(v)) for v in values]
        else:
            groups = {}
            for v, lab in zip(values, labels):
                if v is not None:
                    groups.setdefault(lab, []).append(float(v))
            means = {lab: sum(vs) / len(vs) for lab, vs in groups.items()}
            if "digits" in spec:
                s = 10 ** spec["digits"]
                means = {k: math.floor(m * s + 0.5) / s for k, m in means.items()}
            new = [None if v is None else means[lab] for v, lab in zip(values, labels)]
    elif kind == "map":
        new = [None if v is None else spec["map"].get(_as_text(v), spec.get("other", _as_text(v))) for v in values]
    elif kind == "hierarchy":
        if "table" in spec:
            parents = [None if v is None else lookup.get(_as_text(v)) for v in values]
        else:
            parents = [_as_text(r[spec["parent"]]) for r in rows]
        new = [
            None if v is None else (p if p is not None else spec.get("other", _as_text(v)))
            for v, p in zip(values, parents)
        ]
    elif kind in ("top", "bottom"):
        lim = spec["above"] if kind == "top" else spec["below"]
        value = spec.get("value", lim)
        hit = (lambda v: v > lim) if kind == "top" else (lambda v: v < lim)  # noqa: E731
        if isinstance(value, str):
            new = [None if v is None else (value if hit(v) else str(v)) for v in values]
        else:
            new = [None if v is None else (value if hit(v) else v) for v in values]
    elif kind == "suppress":
        vals = spec.get("values")
        new = [None if vals is None or _as_text(v) in [str(x) for x in vals] else v for v in values]
    out_text = (
        kind in ("map", "hierarchy")
        or (kind == "bands" and spec.get("to", "label") == "label")
        or (kind in ("top", "bottom") and isinstance(spec.get("value"), str))
    )
    out, changed = [], []
    for r, old, v, f in zip(rows, values, new, flags):
        if not f:  # a local treatment keeps the value, in the type the treatment produces
            v = _as_text(old) if out_text else old
        r2 = dict(r)
        r2[col] = v
        out.append(r2)
        if isinstance(v, str) or isinstance(old, str):
            changed.append(_as_text(v) != _as_text(old))
        else:
            changed.append((None if v is None else float(v)) != (None if old is None else float(old)))
    return out, changed


def oracle(data, plan_doc, names, lookup, qid, drop_null=False):
    rows = [dict(zip(COLS, vals)) for vals in zip(*(data[c] for c in COLS))]
    if drop_null:
        rows = [r for r in rows if all(r[c] is not None for c in qid)]
    source = [dict(r) for r in rows]
    modified = [False] * len(rows)
    for n in names:
        rows, ch = apply_oracle(rows, plan_doc["treatments"][n], plan_doc.get("qis", {}), lookup, source)
        modified = [a or b for a, b in zip(modified, ch)]
    classes = Counter(tuple(r[c] for c in qid) for r in rows)
    return {
        "rows": len(rows),
        "singletons": sum(1 for v in classes.values() if v == 1),
        "distinct": len(classes),
        "min_class_size": min(classes.values()) if classes else 0,
        "modified_rows": sum(modified),
    }, rows


# ------------------------------------------------------------------------------------------
# Tests
# ------------------------------------------------------------------------------------------


def _load(engine, tmp_path, data, towns):
    source, table = engine.load(
        'the "people"; x', data, {INCOME: "double precision" if engine.name == "postgresql" else "double"}
    )
    lookup = {k: v for k, v in towns.items() if k != "T4"}  # T4 has no parent: 'other' applies
    _, lk = engine.load("look up", {"mun cipality": list(lookup), "prov 'x'": list(lookup.values())})
    toml = TOML.replace('"LOOKUP"', json.dumps(lk))
    path = tmp_path / "t.toml"
    path.write_text(toml, encoding="utf-8")
    return source, table, path, toml, lookup


@pytest.mark.parametrize("drop_null", [False, True])
def test_every_treatment_equals_oracle(engine, tmp_path, drop_null):
    every_treatment_equals_oracle(engine, tmp_path, drop_null)


def every_treatment_equals_oracle(engine, tmp_path, drop_null, loss=True):
    """``loss=False`` skips the information-loss statements, which this oracle does not check
    (test_infoloss.py does, and tests/engines/test_conformance.py compares them with DuckDB's)."""
    import tomllib

    data, towns = make_data()
    source, table, path, toml, lookup = _load(engine, tmp_path, data, towns)
    doc = tomllib.loads(toml)
    r = qar_sql.whatif(
        source,
        table=table,
        treatments=str(path),
        drop_null=drop_null,
        risk=False,
        loss=loss,
        combine=[
            ["age_stage", "kids_map", "town_lookup", "kids_suppress"],
            ["kids_top_label", "income_bottom", "sex_null", "age_local_mean", "age_mid"],
        ],
        jobs=2,
    )
    names = [s.name for s in r.scenarios]
    assert names[0] == "original" and len(names) == 1 + len(doc["treatments"]) + 5
    for s in r.scenarios:
        want, _ = oracle(data, doc, s.treatments, lookup, QI, drop_null)
        got = {k: getattr(s, k) for k in want}
        assert got == want, s.name
    assert r.original.modified_rows == 0
    # The treatments do bite (guards against an oracle and SQL that both do nothing).
    assert r.scenario("age_label + town_prov").singletons < r.original.singletons
    assert 0 < r.scenario("sex_local").modified_rows <= r.original.singletons  # NULL sexes stay


def test_risk_before_and_after_equal_audit_of_materialised_release(engine, tmp_path):
    data, towns = make_data(n=120, seed=9)
    source, table, path, toml, lookup = _load(engine, tmp_path, data, towns)
    kw = dict(columns=list(COLS), p=2, pi_u=0.2)
    digest = _digest(engine)
    r = qar_sql.whatif(source, table=table, treatments=str(path), only=["town_prov", "age_label + town_prov"], **kw)
    assert [s.name for s in r.scenarios] == ["original", "town_prov", "age_label + town_prov"]
    assert _digest(engine) == digest  # the source is only read
    before = qar_sql.audit(source, table=table, **kw)
    assert r.risk_before == pytest.approx(before.risk, rel=1e-12)
    # Materialise the release with the emitted SQL (in the test's own database) and audit it.
    from qar_sql.treat.whatif import emit_sql

    sql = emit_sql(
        source, treatments=str(path), table=table, apply=["age_label", "town_prov"], view=_view_name(engine, "rel v")
    )
    engine.execute(sql)
    after = qar_sql.audit(source, table=_view_table(engine, "rel v"), **kw)
    assert r.scenario("age_label + town_prov").risk == pytest.approx(after.risk, rel=1e-12)
    assert r.scenario("age_label + town_prov").risk < r.risk_before


def _digest(engine):
    """What the source database holds: the DuckDB file's bytes, or PostgreSQL's catalog of the
    test schema (tables and views) with their row counts."""
    import hashlib

    if engine.name == "duckdb":
        return hashlib.sha256(open(engine.path, "rb").read()).hexdigest()
    return engine.fetch(
        "select table_name, table_type from information_schema.tables "
        f"where table_schema = '{engine.schema}' order by 1",
    )


def _view_name(engine, name):
    return f"{engine.schema}.{name}" if engine.schema else name


def _view_table(engine, name):
    return engine.table_name(name)


def _emit_sql(source, table, path, *options):
    """``qar whatif SOURCE -t TABLE -T PATH --emit-sql OPTIONS…``."""
    return CliRunner().invoke(cli, ["whatif", source, "-t", table, "-T", str(path), "--emit-sql", *options])


@pytest.mark.parametrize(
    "release",
    [
        ["age_label", "town_map", "kids_top_label", "income_bottom", "sex_local"],
        ["age_mean", "town_lookup", "kids_suppress", "town_local"],
        ["age_local_mean", "town_prov", "sex_null", "age_mid"],
    ],
)
def test_emitted_view_runs_and_gives_treated_counts(engine, tmp_path, release):
    import tomllib

    data, towns = make_data()
    source, table, path, toml, lookup = _load(engine, tmp_path, data, towns)
    doc = tomllib.loads(toml)
    view = _view_name(engine, 'treated "v"; 1')
    res = _emit_sql(source, table, path, "--drop-null", "--apply", ",".join(release), "--view", view)
    assert res.exit_code == 0, res.output
    assert res.output.count("create view") == 1
    engine.execute(res.output)
    q = lambda c: '"' + c.replace('"', '""') + '"'  # noqa: E731
    full = ".".join(q(p) for p in ((engine.schema, 'treated "v"; 1') if engine.schema else ('treated "v"; 1',)))
    got_rows = engine.fetch(f"select {', '.join(q(c) for c in COLS)} from {full}")
    want, want_rows = oracle(data, doc, release, lookup, QI, drop_null=True)

    def norm(r):
        return tuple(
            round(float(v), 9) if isinstance(v, (float, int)) and not isinstance(v, bool) and v is not None else v
            for v in r
        )

    assert sorted(map(norm, got_rows), key=repr) == sorted(
        (norm(tuple(r[c] for c in COLS)) for r in want_rows), key=repr
    )
    counts = engine.fetch(
        f"select count(*), sum(case when n = 1 then 1 else 0 end) from (select count(*) as n from {full} group by {', '.join(q(c) for c in QI)}) g",
    )[0]
    r = qar_sql.whatif(
        source, table=table, treatments=str(path), drop_null=True, risk=False, only=[" + ".join(release)]
    )
    s = r.scenarios[-1]
    assert (int(counts[0]), int(counts[1])) == (s.distinct, s.singletons) == (want["distinct"], want["singletons"])


def test_emit_sql_for_other_dialects(duck, tmp_path):
    data, towns = make_data(n=20)
    source, table, path, toml, lookup = _load(duck, tmp_path, data, towns)
    for dialect, quote in (("snowflake", '"'), ("bigquery", "`")):
        res = _emit_sql(source, table, path, "--apply", "age_mean,town_lookup,kids_top", "--dialect", dialect)
        assert res.exit_code == 0, res.output
        assert f"create view {quote}the " in res.output
        assert f"from {quote}look up{quote}" in res.output
        if dialect == "bigquery":
            assert "double precision" not in res.output and "float64" in res.output


def test_cli_text_json_markdown(duck, tmp_path):
    data, towns = make_data()
    source, table, path, toml, lookup = _load(duck, tmp_path, data, towns)
    runner = CliRunner()
    base = ["whatif", source, "-t", table, "-T", str(path), "--only", "town_prov", "--only", "sex_local + town_local"]
    js = runner.invoke(cli, base + ["-f", "json", "-c", ",".join(COLS), "-p", "2", "--pi-u", "0.2"])
    assert js.exit_code == 0, js.output
    out = json.loads(js.output)
    assert [s["name"] for s in out["scenarios"]] == ["original", "town_prov", "sex_local + town_local"]
    assert out["qid"] == QI and out["risk_before"] == out["scenarios"][0]["risk"]
    assert set(out["scenarios"][1]) >= {
        "singletons",
        "singleton_share",
        "modified_rows",
        "distinct",
        "risk",
        "risk_change",
    }
    text = runner.invoke(cli, base + ["--no-risk"])
    assert text.exit_code == 0 and "MR" in text.output and "town_prov" in text.output
    md = runner.invoke(cli, base + ["--no-risk", "-f", "markdown", "--qid", f"{AGE},{SEX}"])
    assert md.exit_code == 0 and "### scenarios" in md.output and "| name | town\\_prov |" in md.output
    assert runner.invoke(cli, base + ["--no-risk", "--view", "x"]).exit_code == 2


def test_example_file_fits_the_demo_population(tmp_path):
    from conftest import REPO

    from qar_sql.demo import write_population

    path = str(tmp_path / "demo.duckdb")
    con = duckdb.connect(path)
    write_population(con, n=3000, seed=3)
    con.close()
    example = REPO / "examples" / "treatments.toml"
    plan = parse(example.read_text(), str(example))
    r = qar_sql.whatif(path, table="population", treatments=str(example), risk=False)
    assert len(r.scenarios) == 1 + len(plan.treatments) + len(plan.combinations)
    assert r.scenario("postcode_to_region").singletons < r.original.singletons
    res = CliRunner().invoke(cli, ["whatif", path, "-t", "population", "-T", str(example), "--emit-sql"])
    assert res.exit_code == 0 and "create view" in res.output


def test_hierarchy_from_a_lookup_file_equals_lookup_table(duck, tmp_path):
    data, towns = make_data()
    source, table, path, toml, lookup = _load(duck, tmp_path, data, towns)
    csv = tmp_path / "look up.csv"
    csv.write_text("mun cipality,prov 'x'\n" + "".join(f"{k},{v}\n" for k, v in lookup.items()), encoding="utf-8")
    by_file = toml.replace('table = "look up"', f"file = {json.dumps(str(csv))}")
    assert by_file != toml
    a = qar_sql.whatif(source, table=table, treatments=toml, only=["town_lookup"], risk=False, loss=False)
    b = qar_sql.whatif(source, table=table, treatments=by_file, only=["town_lookup"], risk=False, loss=False)
    assert a.scenarios[1:] == b.scenarios[1:] and a.scenarios[1].modified_rows > 0
