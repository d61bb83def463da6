"""An engine is one unit (CONTRIBUTING.md's recipe "a new engine"): its module in
qar_sql/engines/dialects/ declares its dialect and its ``Engine`` record, and qar finds it by the
URL's scheme. Checked three ways: every registered unit is complete; nothing outside
qar_sql/engines/ names an engine (but the listed exceptions, each for its reason); and a
throwaway unit, defined and registered in this test alone (DuckDB under a scheme of its own,
opened by an adapter of its own), is opened, audited, conformance-checked against DuckDB,
masked and guarded with no other file touched.
"""

from __future__ import annotations

import ast
import importlib
import tomllib
from pathlib import Path

import pytest
from conftest import REPO
from engine_registry import ENGINES as TEST_ENGINES
from engine_registry import DuckDB

import qar_sql
import tests.engines.test_conformance as conformance
from qar_sql.engines import dialects
from qar_sql.engines.dialects import DIALECTS, ENGINES, Engine, engine_of
from qar_sql.engines.drivers import driver_hint
from qar_sql.engines.secrets import mask_source, secret_values
from qar_sql.engines.source import open_duckdb_url
from qar_sql.guard import local_file

PACKAGE = REPO / "qar_sql"


def test_every_unit_is_complete():
    extras = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    schemes = [s for e in ENGINES for s in e.schemes]
    assert len(schemes) == len(set(schemes)), "a URL scheme belongs to one engine"
    tested = {cls.engine_name for cls in TEST_ENGINES.values()}
    for e in ENGINES:
        assert DIALECTS[e.name] is e.dialect
        assert e.url_reading in ("sqlalchemy", "plain"), e.name
        assert all(s == s.lower() and "+" not in s for s in e.schemes), e.name
        if e.extra is not None:
            assert e.extra in extras and e.modules and e.distributions, e.name
        if e.url_forms:
            assert {f.split("+")[0] for f in e.url_forms} <= set(e.schemes), e.name
        if e.opener:
            module, _, function = e.opener.partition(":")
            assert callable(getattr(importlib.import_module(module), function)), e.opener
        if e.test_server is not None:
            assert e.test_server.env.startswith("QAR_TEST_") and (REPO / e.test_server.script).is_file(), e.name
        # An engine qar runs has its conformance registration (tests/engine_registry.py).
        assert not e.dialect.executable or e.name in tested, f"{e.name} runs but no test registers it"
    folders = {p.name for p in (REPO / "templates").iterdir() if p.is_dir()} - {"default", "report"}
    assert folders <= set(DIALECTS), f"template folders of no engine: {folders - set(DIALECTS)}"


#: The modules outside qar_sql/engines/ that may name an engine, and why.
NAMED_ELSEWHERE = {
    # The results store runs on its own two backends, DuckDB and PostgreSQL.
    "compliance/store.py",
    # dbt's adapter types ("postgres", "snowflake") mapped to the URL each profile means.
    "compliance/dbt_project.py",
    # Files are read by DuckDB: its dialect is the default for a file, and its SQL runs a
    # treated file as a view where other engines get a subquery.
    "pushdown/showsql.py",
    "treat/treatments.py",
    "treat/whatif.py",
    # BigQuery's missing % operator (a dialect flag's worth, named where the PRNG needs it).
    "treat/prng.py",
}


def test_nothing_outside_engines_names_an_engine():
    names = set(DIALECTS) | {s for e in ENGINES for s in e.schemes}
    found = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        if PACKAGE / "engines" in path.parents:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                v = node.value.lower()
                if v in names or any(v.startswith((f"{s}://", f"{s}+")) for s in names):
                    found.add(path.relative_to(PACKAGE).as_posix())
    assert found <= NAMED_ELSEWHERE, f"engines named outside qar_sql/engines/: {sorted(found - NAMED_ELSEWHERE)}"
    assert found == NAMED_ELSEWHERE, f"no longer name an engine (drop them here): {NAMED_ELSEWHERE - found}"


# --- a throwaway engine unit -------------------------------------------------------------------

SCHEME = "duckcopy"


def open_duckcopy(url: str, table: str | None, threads: int | None = None):
    """The throwaway unit's native adapter: ``duckcopy:///file`` is the DuckDB file."""
    return open_duckdb_url("duckdb" + url[len(SCHEME) :], table, threads)


def _local(url: str) -> str | None:
    return url[len(f"{SCHEME}:///") :] or None


UNIT = Engine(
    DIALECTS["duckdb"],
    schemes=(SCHEME,),
    url_forms=(f"{SCHEME}+native",),
    extra="clickhouse",  # any extra of pyproject: what the hint names
    modules=("chdb",),
    distributions=("chdb",),
    url_reading="plain",
    opener=f"{__name__}:open_duckcopy",
    local_file=_local,
)


class DuckCopy(DuckDB):
    """The conformance registration of the throwaway unit: DuckDB's tables, read through its URL."""

    name = SCHEME

    @property
    def source(self) -> str:
        return f"{SCHEME}:///{self.path}"


@pytest.fixture
def registered(monkeypatch):
    monkeypatch.setattr(dialects, "ENGINES", (*ENGINES, UNIT))
    return UNIT


def test_a_throwaway_unit_is_found_by_its_scheme(registered):
    assert engine_of(f"{SCHEME}:///x") is UNIT and engine_of(f"{SCHEME.upper()}+native://h") is UNIT


def test_a_throwaway_unit_runs_the_conformance_checks(registered, tmp_path: Path):
    conformance.test_audit_equals_duckdb(DuckCopy(tmp_path), DuckDB(tmp_path))
    conformance.test_text_is_compared_by_code_points(DuckCopy(tmp_path), DuckDB(tmp_path))
    conformance.test_records_exact_equals_brute_force(DuckCopy(tmp_path))
    source, table = DuckCopy(tmp_path).load("t", ["a", "b"], [(1, "x"), (1, "y"), (2, "x")])
    assert source.startswith(f"{SCHEME}:///") and qar_sql.audit(source, table=table, p=1, pi_u=0.5).rows == 3


def test_a_throwaway_unit_says_how_its_urls_are_masked_guarded_and_installed(registered):
    url = f"{SCHEME}://h:443/;token=abcdef;user_id=me@corp.com"
    # Read plainly: the authority ends at the first '/', so "me@corp.com" is no userinfo.
    assert mask_source(url) == f"{SCHEME}://h:443/;token=***;user_id=me@corp.com"
    assert secret_values(url) == ["abcdef"]
    assert local_file(f"{SCHEME}:///data/x.duckdb") == "data/x.duckdb"
    assert driver_hint(f"{SCHEME}://h/d") == (
        f"; install it with: pip install 'qar-sql[clickhouse]' and write the URL as {SCHEME}+native://…"
    )


def test_unregistered_the_scheme_is_an_unknown_url(tmp_path):
    url = f"{SCHEME}://h:443/;token=abcdef;user_id=me@corp.com"
    assert engine_of(url) is None and local_file(f"{SCHEME}:///x.duckdb") is None
    assert mask_source(url) != f"{SCHEME}://h:443/;token=***;user_id=me@corp.com"  # read as SQLAlchemy would
