"""Shared fixtures: real engines, no mocks.

``engine`` is parametrised over DuckDB and PostgreSQL. PostgreSQL comes from
``QAR_TEST_PG_URL`` (default: the role qar_test that scripts/test.sh creates, never an existing
role of another name; the script starts the server too); when it cannot be
reached the PostgreSQL tests skip with the reason on a user's machine and FAIL under CI=true.
"""

from __future__ import annotations

import dataclasses
import os
import uuid
from pathlib import Path

import duckdb
import pytest

from qar_sql.engines.dialects import engine_named

REPO = Path(__file__).resolve().parents[1]


def server_url(engine: str) -> str:
    """The URL of ``engine``'s test server, as its unit's recipe says (its environment variable,
    else the default scripts/test.sh sets up)."""
    recipe = engine_named(engine).test_server
    assert recipe is not None, f"{engine} runs in process: it has no test server"
    return recipe.url()


# The anonymization tests' fixtures (tables on every engine, adult): a module, not a second
# conftest.py, whose name would shadow this one for `from conftest import ...` under xdist.
pytest_plugins = ("tests.anonymize.fixtures",)
# Treatment files as a user writes them, on the tests' own column names; a test reads its file as
# text (and may edit it) rather than writing TOML inside Python.
TREATMENTS = REPO / "tests" / "fixtures" / "treatments"
# QAR_SHARED_DATA: a worktree beside others (not beside ../shared) still finds the datasets.
#: A treatments file for the demo population: ages in 10-year bands.
AGE_BANDS_TOML = """
qid = ["age", "sex", "postcode"]
[treatments.age_10y]
column = "age"
kind = "bands"
width = 10
"""
SHARED_DATA = Path(os.environ.get("QAR_SHARED_DATA") or REPO.parent / "shared" / "data")
#: The PostgreSQL engine's test server (its recipe: qar_sql/engines/dialects/postgresql.py).
PG_URL = server_url("postgresql")
IN_CI = os.environ.get("CI", "").lower() == "true"

_pg_state: dict = {}


#: The slow end-to-end runs whose full matrix is marked ``heavy`` (``-m "not heavy"`` skips it, as
#: scripts/test.sh does unless CI=true or QAR_TEST_HEAVY=1; CI runs it): kind -> the one test of
#: the kind that stays in every run. CONTRIBUTING.md says when to mark a new test.
HEAVY_KEEP = {
    "spark": "tests/engines/test_conformance.py::test_audit_equals_duckdb[spark]",
    "clickhouse": "tests/engines/test_conformance.py::test_audit_equals_duckdb[clickhouse]",
    "dbt": "tests/integrations/test_dbt_package.py::test_package_in_a_dbt_build[duckdb]",
    "chromium": "tests/commands/test_report.py::test_the_report_in_headless_chromium",
    # ARX's adult cases on SQLite and PostgreSQL (DuckDB runs them all in the quick loop)
    "anonymize-sqlite": "tests/anonymize/test_arx_adult.py::test_k_anonymity_optimum_as_arx"
    "[5-0.0-levels2-407289.5388925293-sqlite]",
    "anonymize-postgresql": "tests/anonymize/test_arx_adult.py::test_k_anonymity_optimum_as_arx"
    "[5-0.04-levels0-255559.85455731067-postgresql]",
    # every option of the two slowest commands (report: ~100 s) against the run without it
    "ignored-options": "tests/cli/test_ignored_options.py::test_every_option_changes_the_output_or_is_refused[compare-None]",
    # every option's bad values on a PostgreSQL view whose filter raises, one command a test (~20 s each)
    "late-checks-postgresql": "tests/cli/test_checks_before_rows.py::test_every_bad_value_on_postgresql_too[audit]",
    # every option's valid value on SQLite, refused there only before a row is read (one command a test)
    "late-checks-sqlite": "tests/cli/test_checks_before_rows.py::test_an_engine_refuses_a_valid_value_before_the_rows_are_read[audit]",
    # the CI entry points run end to end (a venv with the Action's pip install, pre-commit's clone)
    "ci": "tests/test_ci_entry_points.py::test_the_action_passes_and_fails_with_the_scan",
    # a byte that is not UTF-8 in each of the ~100 text options (one rule, refused in one place)
    "user-text": "tests/output/test_user_text.py::test_a_text_option_that_is_not_utf8_is_refused[report---title]",
}
#: The tests of test_ci_entry_points.py that run an entry point end to end (the others call the hook in-process).
_CI_END_TO_END = ("test_the_action_passes", "test_the_action_splits", "test_pre_commit_try_repo")


def _heavy_kind(item) -> str | None:
    """Which slow end-to-end run ``item`` belongs to, if any."""
    params = getattr(item, "callspec", None)
    values = [v for v in params.params.values() if isinstance(v, str)] if params is not None else []
    path = item.nodeid.split("::", 1)[0]
    for engine in ("spark", "clickhouse"):
        if engine in values:
            return engine
    if path.startswith("tests/anonymize/") and "sqlite" in values:
        return "anonymize-sqlite"
    if path.startswith("tests/anonymize/test_arx_") and "postgresql" in values:
        return "anonymize-postgresql"
    if path == "tests/test_ci_entry_points.py" and item.name.startswith(_CI_END_TO_END):
        return "ci"
    if path == "tests/output/test_user_text.py" and item.name.startswith("test_a_text_option_that_is_not_utf8"):
        return "user-text"
    if path == "tests/integrations/test_dbt_package.py" and (
        "postgresql" in item.nodeid
        or item.name.startswith("test_installs_from_git")
        or "integration" in getattr(item, "fixturenames", ())
    ):
        # a dbt build of its own: on PostgreSQL, from git, or of the package's integration_tests
        # project (the tests on the fixture project's duckdb build share one, which stays)
        return "dbt"
    if "chromium" in item.name:
        return "chromium"
    if path == "tests/cli/test_ignored_options.py" and values and values[0] in ("compare", "report"):
        return "ignored-options"
    if path == "tests/cli/test_checks_before_rows.py" and item.name.startswith("test_every_bad_value_on_postgresql"):
        return "late-checks-postgresql"
    if path == "tests/cli/test_checks_before_rows.py" and item.name.startswith("test_an_engine_refuses_a_valid"):
        return "late-checks-sqlite"
    return None


@pytest.fixture(autouse=True)
def _no_qar_settings(monkeypatch):
    """Every test starts from qar's built-in settings: a QAR_ variable of the shell that runs the
    suite (QAR_P=3, QAR_STORE=…: click reads QAR_<OPTION> for every option) failed tests that
    pass elsewhere. The suite's own QAR_TEST_* and QAR_SHARED_DATA stay."""
    for key in [k for k in os.environ if k.startswith("QAR_") and not k.startswith("QAR_TEST_")]:
        if key != "QAR_SHARED_DATA":
            monkeypatch.delenv(key)


@pytest.fixture(autouse=True)
def _no_stage_lines(monkeypatch):
    """No "12:01:03  risk: measuring started, 10 s" line unless a test asks for one (tests/
    test_progress.py gives its own interval): a command that ran past Progress.interval on a
    loaded machine wrote it to stderr, which CliRunner's output holds too, and the JSON or text
    the test read was no longer what the command printed."""
    from qar_sql.progress import Progress

    monkeypatch.setattr(Progress, "interval", 1e6)


#: The files that run longest in the default run (seconds of one worker on the 2-core machine of
#: issue 37, scaled from a run under load): pytest-xdist (``--dist loadfile``) hands the files out in collection
#: order, so these go first and the short ones fill in at the end, where both workers then
#: finish together. Its own order (most tests first) put a one-test file of half a minute last,
#: with the other worker idle. An estimate, not a contract: a file missing here only runs later.
SLOW_FILES = {
    "tests/commands/test_report.py": 175,
    "tests/test_parsed_inputs.py": 127,  # (measured alone, 2026-11-29, 729 tests)
    "tests/cli/test_snapshots.py": 100,
    "tests/test_ci_entry_points.py": 70,
    "tests/pushdown/test_wide_tables.py": 65,
    "tests/cli/test_interrupts.py": 52,
    "tests/integrations/test_dbt_package.py": 51,
    "tests/engines/test_conformance.py": 49,
    "tests/pushdown/test_prune.py": 48,
    "tests/output/test_user_text.py": 38,
    "tests/test_progress.py": 33,
    "tests/commands/test_compare_anonymeter.py": 31,
    "tests/anonymize/test_arx_utility_metrics.py": 25,
    "tests/docs/test_shown_output.py": 22,
    "tests/compliance/test_scan_gates.py": 20,
    "tests/anonymize/test_arx_adult.py": 16,
}


def pytest_configure(config):
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False  # pytest-xdist keeps the order below


def pytest_collection_modifyitems(config, items):
    for item in items:
        kind = _heavy_kind(item)
        if kind is not None and item.nodeid != HEAVY_KEEP[kind]:
            item.add_marker(pytest.mark.heavy)
    # The slow files first (SLOW_FILES), then the others by their number of tests, as pytest-xdist
    # orders them by itself; a file's tests keep their order.
    path = [item.nodeid.split("::", 1)[0] for item in items]
    count: dict[str, int] = {}
    for p in path:
        count[p] = count.get(p, 0) + 1
    rank = sorted(range(len(items)), key=lambda i: (-SLOW_FILES.get(path[i], 0), -count[path[i]]))
    items[:] = [items[i] for i in rank]


def server_engine(url: str, name: str, state: dict):
    """(SQLAlchemy engine, None) for the server at ``url``, or (None, why it is unreachable);
    checked once, the answer kept in ``state`` for the rest of the run."""
    if not state:
        try:
            import sqlalchemy as sa

            eng = sa.create_engine(url, poolclass=sa.pool.NullPool)
            with eng.connect() as c:
                c.exec_driver_sql("select 1")
            state["engine"] = eng
        except Exception as exc:  # driver missing or server down
            state["error"] = f"{name} at {url} is unreachable: {str(exc).splitlines()[0]}"
    return state.get("engine"), state.get("error")


def require_server(name: str, reason: str | None) -> None:
    """Skip the test (on a user's machine) or fail it (CI=true) when the server ``name`` cannot
    be used, ``reason`` saying why; None: it can."""
    if reason:
        if IN_CI:
            pytest.fail(f"{reason} (CI=true: {name} tests must run)")
        pytest.skip(reason)


def _pg_engine():
    """A SQLAlchemy engine for the test server, or the reason it is unreachable."""
    return server_engine(PG_URL, "PostgreSQL", _pg_state)


def require_postgres():
    eng, err = _pg_engine()
    require_server("PostgreSQL", err)
    return eng


def cleaned_up(resource):
    """A fixture's ``yield from``: ``resource`` to the test, then its ``cleanup()``."""
    yield resource
    resource.cleanup()


@pytest.fixture
def pg():
    """The test server's SQLAlchemy engine (admin role of the test database)."""
    return require_postgres()


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"{SHARED_DATA} is absent (the shared public datasets are not on this machine)")
    return SHARED_DATA


def _duck_type(values):
    for v in values:
        if v is None:
            continue
        if isinstance(v, bool):
            return "boolean"
        if isinstance(v, int):
            return "bigint"
        if isinstance(v, float):
            return "double precision"
        return "text"
    return "text"


def duck_insert(con, full: str, rows: list[tuple], width: int) -> None:
    """``rows`` into DuckDB's table ``full`` (quoted) in one statement, through an Arrow table
    (DuckDB's executemany runs a statement per row: seconds per thousand rows); the values are
    cast to the table's column types on insert. Rows Arrow cannot type (mixed kinds in a column)
    go row by row."""
    import pyarrow as pa  # a [dev] dependency

    columns = list(zip(*rows, strict=True)) if rows else [()] * width
    try:
        frame = pa.table({f"c{i}": pa.array(list(values)) for i, values in enumerate(columns)})
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        con.executemany(f"insert into {full} values ({', '.join(['?'] * width)})", rows)
        return
    con.register("qar_test_rows", frame)
    con.execute(f"insert into {full} select * from qar_test_rows")
    con.unregister("qar_test_rows")


def pg_copy(eng, full: str, ddl: str, rows) -> None:
    """Create PostgreSQL's table ``full`` (quoted) with columns ``ddl`` and fill it with ``rows``
    through COPY: one round trip, not a statement per row."""
    raw = eng.raw_connection()
    try:
        cur = raw.cursor()
        cur.execute(f"create table {full} ({ddl})")
        with cur.copy(f"copy {full} from stdin") as cp:
            for r in rows:
                cp.write_row(r)
        raw.commit()
    finally:
        raw.close()


def quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def duckdb_file(path, *statements: str) -> str:
    """A DuckDB file at ``path`` made by running ``statements`` (each a CREATE …); its path as text."""
    con = duckdb.connect(str(path))
    try:
        for sql in statements:
            con.execute(sql)
    finally:
        con.close()
    return str(path)


class Loader:
    """Loads small column dicts (or a CSV through DuckDB) into one engine as a real table and
    returns (source, table) for ``qar_sql.measures.audit``. Values land with the same types on both."""

    def __init__(self, name: str, tmp_path: Path):
        self.name = name
        self.tmp_path = tmp_path
        self.schema = None
        if name == "postgresql":
            self.eng = require_postgres()
            self.schema = f"t_{uuid.uuid4().hex[:10]}"
            with self.eng.begin() as c:
                c.exec_driver_sql(f"create schema {quote(self.schema)}")
        else:
            self.path = str(tmp_path / "data.duckdb")

    @property
    def source(self) -> str:
        return PG_URL if self.name == "postgresql" else self.path

    def table_name(self, table: str) -> str:
        return f"{self.schema}.{table}" if self.schema else table

    def load(self, table: str, data: dict[str, list], types: dict[str, str] | None = None):
        cols = list(data)
        n = len(data[cols[0]]) if cols else 0
        types = dict(types or {})
        for c in cols:
            types.setdefault(c, _duck_type(data[c]))
        rows = [tuple(data[c][i] for c in cols) for i in range(n)]
        ddl = ", ".join(f"{quote(c)} {types[c]}" for c in cols)
        if self.name == "postgresql":
            pg_copy(self.eng, f"{quote(self.schema)}.{quote(table)}", ddl, rows)
        else:
            con = duckdb.connect(self.path)
            try:
                con.execute(f"create table {quote(table)} ({ddl.replace('double precision', 'double')})")
                if rows:
                    duck_insert(con, quote(table), rows, len(cols))
            finally:
                con.close()
        return self.source, self.table_name(table)

    def load_csv(self, table: str, csv_path: Path, delimiter: str | None = None):
        """Read a CSV with DuckDB (as qar does) and load the same typed rows into the engine."""
        con = duckdb.connect()
        opts = f", delim = '{delimiter}'" if delimiter else ""
        rel = f"read_csv('{csv_path}', header = true, nullstr = ''{opts})"
        desc = con.execute(f"describe select * from {rel}").fetchall()
        mapping = {
            "BIGINT": "bigint",
            "INTEGER": "bigint",
            "DOUBLE": "double precision",
            "DATE": "date",
            "BOOLEAN": "boolean",
        }
        cols = [d[0] for d in desc]
        types = {d[0]: mapping.get(d[1], "text") for d in desc}
        if self.name != "postgresql":  # DuckDB reads the file itself, cast to the same types
            con.close()
            ddl = ", ".join(f"{quote(c)} {types[c].replace('double precision', 'double')}" for c in cols)
            picked = ", ".join(f"cast({quote(c)} as {types[c].replace('double precision', 'double')})" for c in cols)
            with duckdb.connect(self.path) as into:
                into.execute(f"create table {quote(table)} ({ddl})")
                into.execute(f"insert into {quote(table)} select {picked} from {rel}")
            return self.source, self.table_name(table)
        values = con.execute(f"select * from {rel}").fetchall()
        con.close()
        data = {c: [r[i] for r in values] for i, c in enumerate(cols)}
        if self.name == "postgresql":
            ddl = ", ".join(f"{quote(c)} {types[c]}" for c in cols)
            pg_copy(self.eng, f"{quote(self.schema)}.{quote(table)}", ddl, values)
            return self.source, self.table_name(table)
        return self.load(table, data, {c: types[c].replace("double precision", "double") for c in cols})

    def execute(self, sql: str) -> None:
        """Run one statement (a view's DDL, say) as it is: no parameters, so a '%' stays a '%'."""
        if self.name == "postgresql":
            with self.eng.begin() as c:
                c.exec_driver_sql(sql, execution_options={"no_parameters": True})
        else:
            with duckdb.connect(self.path) as con:
                con.execute(sql)

    def fetch(self, sql: str) -> list[tuple]:
        """The rows of one query, read the way a user would read the release."""
        if self.name == "postgresql":
            with self.eng.connect() as c:
                return [tuple(r) for r in c.exec_driver_sql(sql).fetchall()]
        with duckdb.connect(self.path, read_only=True) as con:
            return con.execute(sql).fetchall()

    def cleanup(self):
        if self.name == "postgresql":
            with self.eng.begin() as c:
                c.exec_driver_sql(f"drop schema {quote(self.schema)} cascade")


#: Eight rows, four small columns (``duck.load("t", SMALL_TABLE)``): enough for an audit with
#: -p 2 --pi-u 0.5, for the tests of what surrounds the audit (configuration, logging).
SMALL_TABLE = {
    "a": [1, 1, 2, 2, 3, 3, 4, 5],
    "b": ["x", "y", "x", "y", "x", "y", "z", "z"],
    "c": [1, 2, 1, 2, 1, 2, 1, 2],
    "d": [1, 1, 1, 2, 2, 2, 3, 3],
}


def on_both_engines(tmp_path: Path, run):
    """[run(loader) on DuckDB, run(loader) on PostgreSQL]: for the tests that compare the two
    engines' results with each other; each loader's tables are dropped after its run."""
    out = []
    for name in ("duckdb", "postgresql"):
        loader = Loader(name, tmp_path)
        try:
            out.append(run(loader))
        finally:
            loader.cleanup()
    return out


@pytest.fixture(params=["duckdb", "postgresql"])
def engine(request, tmp_path):
    """A Loader for each real engine: the same test runs on DuckDB and on PostgreSQL."""
    yield from cleaned_up(Loader(request.param, tmp_path))


@pytest.fixture
def duck(tmp_path):
    return Loader("duckdb", tmp_path)


def table_args(command, source, table, columns, *extra, key="id", p=2, pi_u=0.2):
    """``COMMAND SOURCE --table T --columns a,b [--key K] -p P --pi-u Π EXTRA…``: the arguments
    the record-level command-line tests share (``key=None`` leaves --key out)."""
    args = [command, source, "--table", table, "--columns", ",".join(columns)]
    if key:
        args += ["--key", key]
    return args + ["-p", str(p), "--pi-u", str(pi_u), *extra]


def assert_close(got, want, rel: float = 1e-12, path: str = "") -> None:
    """Equal, except that floats may differ in the last digits: sums the engine computes in SQL
    (χ² of information loss, say) add the same terms in whatever order the rows arrive."""
    if dataclasses.is_dataclass(got) and not isinstance(got, type):
        assert type(got) is type(want), path
        for f in dataclasses.fields(got):
            assert_close(getattr(got, f.name), getattr(want, f.name), rel, f"{path}.{f.name}")
    elif isinstance(got, dict):
        assert got.keys() == want.keys(), path
        for k in got:
            assert_close(got[k], want[k], rel, f"{path}[{k!r}]")
    elif isinstance(got, (list, tuple)):
        assert len(got) == len(want), path
        for i, (g, w) in enumerate(zip(got, want)):
            assert_close(g, w, rel, f"{path}[{i}]")
    elif isinstance(got, float) and isinstance(want, float):
        assert got == pytest.approx(want, rel=rel, abs=1e-15), path
    else:
        assert got == want, path
