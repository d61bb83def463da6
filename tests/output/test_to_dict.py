"""Every result owns its data: ``to_dict()`` is the JSON object ``--format json`` prints
(``render(result, "json")`` is ``to_json(result.to_dict())``, written nowhere else), for every
result type a command's ``run`` returns, checked on a real result of each command on a small
table, on DuckDB and PostgreSQL.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
from pathlib import Path

import pytest

import qar_sql
import qar_sql.commands
from qar_sql.output.registry import RENDERERS
from qar_sql.output.render import render, to_json
from tests.output.test_render import returned_types

REPO = Path(__file__).resolve().parents[2]
TREATMENTS = str(REPO / "examples" / "treatments.toml")

#: 40 rows, a key and four quasi-identifier columns: every command runs on it in well under a second.
TABLE = {
    "id": list(range(1, 41)),
    "age": [20 + (i * 7) % 23 for i in range(40)],
    "sex": ["f" if i % 3 else "m" for i in range(40)],
    "zip": [f"1{(i * 5) % 9}" for i in range(40)],
    "job": ["a", "b", "c", "d", "e"] * 8,
}
COLUMNS = ["age", "sex", "zip", "job"]

#: The commands whose run returns no result to render: qar sql prints SQL, and qar report
#: writes its page (html, md or csv, never JSON) from its inputs (output/html.py).
NOT_RENDERED = {"sql", "report"}


def run_types() -> dict[str, set[type]]:
    """Command module → the result types its ``run`` returns (its return annotation)."""
    found = {}
    for info in pkgutil.iter_modules(qar_sql.commands.__path__):
        module = importlib.import_module(f"qar_sql.commands.{info.name}")
        if hasattr(module, "run") and info.name not in NOT_RENDERED:
            found[info.name] = returned_types(module)
    return found


def test_every_result_a_command_returns_has_to_dict():
    types = {t for ts in run_types().values() for t in ts}
    assert len(types) >= 16, types
    for t in types:
        assert callable(getattr(t, "to_dict", None)), f"{t.__qualname__} has no to_dict()"


def test_no_renderer_writes_json():
    """JSON is generic: no ``@renders`` registers it."""
    for info in pkgutil.iter_modules(qar_sql.output.__path__):
        importlib.import_module(f"qar_sql.output.{info.name}")
    assert not [name for (name, fmt) in RENDERERS if fmt == "json" and name.startswith("qar_sql.")]


def same(result, **options) -> dict:
    """The JSON ``render`` prints for ``result`` equals its ``to_dict()`` (given the same
    options, JSON-normalised), and is exactly its :func:`to_json`."""
    taken = {k: v for k, v in options.items() if k in ("histograms", "params")}
    want = result.to_dict(**taken)
    text = render(result, "json", top=3, **options)
    assert text == to_json(want, ascii_only=getattr(result, "ascii_json", False)) + "\n"
    got = json.loads(text)
    assert got == json.loads(json.dumps(want)), type(result).__qualname__
    return got


@pytest.fixture
def loaded(engine):
    source, table = engine.load("people", TABLE)
    return dict(source=source, table=table)


def test_table_commands(loaded, engine, tmp_path):
    from qar_sql.commands import records
    from qar_sql.engines.source import session_of
    from qar_sql.parameters.ranking import RecordsParams

    where = dict(loaded, columns=COLUMNS, p=2, pi_u=0.5)
    seen = set()

    def check(result, **options):
        seen.add(type(result).__name__)
        return same(result, **options)

    audit = qar_sql.audit(**where)
    d = check(audit, histograms=True)
    assert d["rows"] == 40 and d["n_qi"] == 6 and "class_sizes" in d["qis"][0]
    assert "class_sizes" not in check(audit)["qis"][0]

    for by in ("dt", "influence", "suda"):
        for every in (False, True):
            rp = RecordsParams(key=["id"], by=by, top=5, all_records=every, columns=COLUMNS, p=2, pi_u=0.5)
            with session_of(loaded["source"], table=loaded["table"]) as session:
                found = records.run(session, rp)
            assert len(check(found, params=rp)["records"]) == (40 if every else 5)

    check(qar_sql.eliminate(**loaded, columns=COLUMNS, key=["id"], by=("dt", "random"), step=5, p=2, pi_u=0.5))
    check(qar_sql.discover(**loaded, columns=COLUMNS, max_size=2))
    check(
        qar_sql.whatif(
            **loaded,
            treatments={"treatments": {"age_10y": {"column": "age", "kind": "bands", "width": 10}}},
            qid=COLUMNS,
        )
    )
    check(qar_sql.risk(**loaded, columns=COLUMNS, p=2))
    check(qar_sql.uniqueness(**loaded, columns=COLUMNS, p=2, group_size=5))
    check(
        qar_sql.compare(
            loaded["source"],
            loaded["source"],
            table=loaded["table"],
            treated_table=loaded["table"],
            columns=COLUMNS,
            p=2,
            pi_u=0.5,
        )
    )
    check(qar_sql.anonymize(**loaded, intervals={"age": {"widths": [10, 20]}}, qid=["age"], k=2))
    assert seen >= {"AuditResult", "Contributions", "Influence", "SudaRecords", "Elimination", "DiscoverResult"}


def test_store_and_setting_commands(tmp_path, monkeypatch):
    """scan, history, migrate, config and demo: their results' JSON is their to_dict() too."""
    from qar_sql.commands import demo, history, migrate, settings
    from qar_sql.parameters.store import HistoryParams, MigrateParams
    from qar_sql.parameters.tail import DemoParams

    monkeypatch.chdir(tmp_path)
    demo_result = demo.run(None, DemoParams(path=str(tmp_path / "demo.duckdb"), rows=200, p=2))
    assert same(demo_result)["rows"] == 200
    store = str(tmp_path / "store.duckdb")
    assert same(migrate.run(None, MigrateParams(store=store)))["applied"]
    config = {
        "sources": {"demo": {"url": str(tmp_path / "demo.duckdb")}},
        "scan": [{"name": "demo", "source": "demo", "table": "population", "exclude": ["person_id"], "p": 2}],
    }
    report = qar_sql.scan_config(config, store=store)
    assert same(report)["scans"][0]["name"] == "demo"
    assert same(history.run(None, HistoryParams(store=store)))["series"]
    assert "settings" in same(settings.run(None, settings.ConfigParams()))
