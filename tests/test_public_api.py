"""The public API (issue 14, items 2 and 3): the ten functions at the package root with stable,
typed signatures; ``import qar_sql`` cheap (no scipy, no pandas); every result a table with a
short ``repr`` and a small notebook view, for every result type the API returns."""

from __future__ import annotations

import inspect
import json
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import qar_sql
from qar_sql.demo import generate_population

ROOT = Path(__file__).resolve().parents[1]

#: The functions of issue 14, item 3, with the positional parameters each takes (everything
#: after them is keyword-only): changing one is an API change, made here on purpose.
API = {
    "audit": ["source"],
    "records": ["source"],
    "eliminate": ["source"],
    "discover": ["source"],
    "whatif": ["source"],
    "uniqueness": ["source"],
    "compare": ["original", "treated"],
    "risk": ["source"],
    "report": ["source"],
    "scan": ["config"],
}


def test_all_names_resolve_and_match_the_lazy_table():
    from qar_sql import _NAMES, _SUBPACKAGES

    assert set(qar_sql.__all__) == {*_NAMES, *_SUBPACKAGES, "__version__"}
    for name in qar_sql.__all__:
        assert getattr(qar_sql, name) is not None, name
    assert set(API) <= set(qar_sql.__all__)
    # Every subpackage but the CLI is named on the root and loads its own modules on first use.
    packages = {p.name for p in (ROOT / "qar_sql").iterdir() if (p / "__init__.py").is_file()}
    assert _SUBPACKAGES == packages - {"cli"}
    assert callable(qar_sql.anonymize) and qar_sql.anonymization.__name__ == "qar_sql.anonymization"
    for name in _SUBPACKAGES:
        assert callable(getattr(getattr(qar_sql, name), "__getattr__", None)), name
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        qar_sql.nope  # noqa: B018


def test_dir_lists_the_public_names_not_the_helpers_imported():
    shown = {name for name in dir(qar_sql) if not name.startswith("__")}
    assert shown == set(qar_sql.__all__) - {"__version__"}
    assert "__version__" in dir(qar_sql)
    assert not {"Any", "TYPE_CHECKING", "annotations", "importlib"} & set(dir(qar_sql))


@pytest.mark.parametrize("name", list(API))
def test_signatures_are_stable_and_typed(name):
    sig = inspect.signature(getattr(qar_sql, name))
    params = list(sig.parameters.values())
    positional = [p.name for p in params if p.kind is p.POSITIONAL_OR_KEYWORD]
    assert positional == API[name]
    assert all(p.kind in (p.KEYWORD_ONLY, p.VAR_KEYWORD) for p in params[len(positional) :])
    assert sig.return_annotation is not inspect.Signature.empty
    assert [p.name for p in params if p.annotation is inspect.Parameter.empty] == []


def test_the_package_is_typed():
    assert (ROOT / "qar_sql" / "py.typed").is_file()


def _fresh(code: str) -> dict:
    """Run ``code`` in a new interpreter importing this checkout; it prints one JSON object."""
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True, timeout=120
    ).stdout
    return json.loads(out.splitlines()[-1])


def test_import_is_light_and_dotted_paths_work_after_a_plain_import():
    got = _fresh(
        "import json, sys, time\n"
        "t = time.perf_counter()\n"
        "import qar_sql\n"
        "seconds = time.perf_counter() - t\n"
        "heavy = sorted(m for m in ('scipy', 'pandas', 'polars', 'pyarrow', 'duckdb', 'numpy', 'sqlalchemy') if m in sys.modules)\n"
        "same = qar_sql.records.contributions is qar_sql.commands.records.contributions\n"
        "suda = qar_sql.records.suda.__module__\n"
        "store = qar_sql.compliance.store.runs.__name__\n"
        "print(json.dumps({'heavy': heavy, 'seconds': seconds, 'same': same, 'suda': suda, 'store': store}))\n"
    )
    assert got["heavy"] == []
    assert got["same"] and got["suda"] == "qar_sql.measures.classic" and got["store"] == "runs"


def test_a_subpackage_imported_first_still_loads_its_other_modules():
    # Found in a fresh virtual environment: once ``qar_sql.ranking`` is imported for one module,
    # the package's own __getattr__ (not the root's) must load the others.
    got = _fresh(
        "import json\nfrom qar_sql.ranking.records import compute\nimport qar_sql\n"
        "print(json.dumps([qar_sql.ranking.influence.gradient.__name__, qar_sql.stats.evt.qar_risk.__name__]))"
    )
    assert got == ["gradient", "qar_risk"]


def test_the_command_line_does_not_load_scipy():
    # `qar --help`, `qar sql` and `qar config` never need scipy: only the measures that use it load it.
    got = _fresh(
        "import json, sys\nfrom qar_sql.cli.main import cli\nimport qar_sql\nqar_sql.audit\n"
        "print(json.dumps({'scipy': 'scipy' in sys.modules}))"
    )
    assert got == {"scipy": False}


def test_qar_help_loads_no_heavy_package():
    # `qar --help` stays fast (bench/bench_startup.py): the commands' implementations, and numpy,
    # jinja2 or a database driver with them, load only when a command runs.
    got = _fresh(
        "import contextlib, io, json, sys\nfrom qar_sql.cli.main import cli\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        "    cli(['--help'], prog_name='qar')\n"
        "heavy = ('numpy', 'scipy', 'pandas', 'pyarrow', 'jinja2', 'duckdb', 'sqlalchemy', 'matplotlib', 'saiph')\n"
        "print(json.dumps(sorted(m for m in heavy if m in sys.modules)))"
    )
    assert got == []


def test_no_module_loads_scipy_pandas_or_pyarrow_when_imported():
    # Heavy third-party packages are imported inside the functions that use them (stats/,
    # comparison/), so that importing a command's module, which the CLI does when the command
    # runs, costs numpy and qar's own modules only (issue 25).
    got = _fresh(
        "import importlib, json, pkgutil, sys\nimport qar_sql\n"
        "names = [m.name for m in pkgutil.walk_packages(qar_sql.__path__, 'qar_sql.') if m.name != 'qar_sql.__main__']\n"
        "for name in names:\n"
        "    importlib.import_module(name)\n"
        "heavy = ('scipy', 'pandas', 'pyarrow', 'matplotlib', 'saiph', 'sklearn')\n"
        "print(json.dumps({'modules': len(names), 'heavy': sorted(m for m in heavy if m in sys.modules)}))"
    )
    assert got["modules"] > 100 and got["heavy"] == []


@pytest.fixture(scope="module")
def people():
    return pd.DataFrame(generate_population(2_000, seed=3))


@pytest.fixture(scope="module")
def results(people, tmp_path_factory):
    """One result of every type the API returns, on the demo population."""
    cols = [c for c in people.columns if c != "person_id"][:7]
    plan = {"treatments": {"age_band": {"column": "age", "kind": "bands", "width": 5}}}
    folder = tmp_path_factory.mktemp("scan")
    people[cols].to_csv(folder / "people.csv", index=False)
    (folder / "qar.toml").write_text(
        '[sources.people]\nurl = "people.csv"\n[[scan]]\nname = "people"\nsource = "people"\n'
    )
    store = str(folder / "store.duckdb")
    kw = {"columns": cols, "p": 2}
    return {
        "audit": qar_sql.audit(people, **kw),
        "risk": qar_sql.risk(people, **kw),
        "uniqueness": qar_sql.uniqueness(people, group_size=50, **kw),
        "records": qar_sql.records(people, key=["person_id"], **kw),
        "influence": qar_sql.records.influence(people, key=["person_id"], **kw),
        "suda": qar_sql.records.suda(people, key=["person_id"], columns=cols[:4]),
        "eliminate": qar_sql.eliminate(people, key=["person_id"], step=200, **kw),
        "discover": qar_sql.discover(people, columns=cols, max_size=2),
        "whatif": qar_sql.whatif(people, treatments=plan, qid=cols[:4], **kw),
        "compare": qar_sql.compare(people, treatments=plan, categorical=["age"], **kw),
        "report": qar_sql.report(people, **kw),
        "scan": qar_sql.scan(folder / "qar.toml", store=store),
        "history": qar_sql.history(store),
    }


@pytest.mark.parametrize(
    "name",
    [
        "audit",
        "risk",
        "uniqueness",
        "records",
        "influence",
        "suda",
        "eliminate",
        "discover",
        "whatif",
        "compare",
        "report",
        "scan",
        "history",
    ],
)
def test_every_result_is_a_table_with_a_short_repr_and_small_html(results, name):
    html5lib = pytest.importorskip("html5lib")
    result = results[name]
    text = repr(result)
    assert "\n" not in text and len(text) < 300, text
    assert text.startswith(f"<{type(result).__name__} ")
    df = result.to_pandas()
    assert len(df) > 0
    assert result.to_arrow().num_rows == len(df)
    assert list(result.to_arrow().column_names) == list(df.columns)
    pl = pytest.importorskip("polars")
    assert isinstance(result.to_polars(), pl.DataFrame) and result.to_polars().height == len(df)
    page = result._repr_html_()
    assert len(page.encode()) < 50_000
    html5lib.HTMLParser(strict=True).parseFragment(page)


def test_the_tables_hold_the_results_numbers(results):
    """Each table against the result's own fields (computed independently of table_columns)."""
    suda = results["suda"]
    df = suda.to_pandas()
    assert df["suda"].is_monotonic_decreasing
    order = [int(r) for r in suda.order()[: len(df)]]  # its JSON's records: the top 100
    assert [suda.keys[r][0] for r in order] == [int(k) for k in df["key"]] and len(df) == 100
    assert df["suda"].tolist() == [float(suda.suda.score[r]) for r in order]
    compare = results["compare"]
    df = compare.to_pandas()
    assert df["theta_treated"].tolist() == [q.theta_treated for q in compare.qis]
    assert df["theta_original"].tolist() == [q.theta_original for q in compare.qis]
    scan = results["scan"]
    assert scan.to_pandas()["risk"].tolist() == [o.risk for o in scan.outcomes]
    history = results["history"]
    assert history.to_pandas()["risk"].tolist() == [pt.risk for s in history.series for pt in s.points]
    assert history.to_pandas()["risk"].tolist() == scan.to_pandas()["risk"].tolist()
    report = results["report"]
    assert report.to_pandas().equals(report.audit.to_pandas())
    # The notebook view of risk lists the QIs riskiest first (its table is in QI order).
    risk = results["risk"]
    cells = re.findall(r"<tr><td>\d+</td><td>([^<]*)</td>", risk._repr_html_())
    assert cells == [", ".join(q.columns) for q in risk.riskiest(len(cells))] and len(cells) == 10
