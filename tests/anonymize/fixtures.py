"""Fixtures of the anonymization tests: a table as an open session on DuckDB, PostgreSQL or
SQLite (real engines), and ARX's adult data set with its nine hierarchies."""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path

import duckdb
import pytest

import qar_sql
from tests.conftest import PG_URL, SHARED_DATA, duck_insert, pg_copy, quote, require_postgres

ENGINES = ("duckdb", "postgresql", "sqlite")
ADULT = SHARED_DATA / "arx" / "adult.csv"
ADULT_HIERARCHIES = SHARED_DATA / "arx" / "hierarchies"
#: ARX's QI order for adult (file order).
ADULT_QI = (
    "sex",
    "age",
    "race",
    "marital-status",
    "education",
    "native-country",
    "workclass",
    "occupation",
    "salary-class",
)


def need_adult() -> None:
    if not ADULT.is_file() or not ADULT_HIERARCHIES.is_dir():
        pytest.skip(f"{ADULT} is absent (the shared public datasets are not on this machine)")


def _types(data: dict[str, list]) -> dict[str, str]:
    out = {}
    for c, values in data.items():
        v = next((x for x in values if x is not None), "")
        out[c] = "bigint" if isinstance(v, int) and not isinstance(v, bool) else "text"
    return out


class Tables:
    """Loads column dicts into one engine and opens them as qar sessions; cleans up after."""

    def __init__(self, engine: str, tmp: Path):
        self.engine, self.tmp = engine, tmp
        self.schema: str | None = None
        self.sessions: list = []
        if engine == "postgresql":
            self.pg = require_postgres()
            self.schema = f"anon_{uuid.uuid4().hex[:10]}"
            with self.pg.begin() as c:
                c.exec_driver_sql(f"create schema {quote(self.schema)}")
        self.path = tmp / f"{engine}_{uuid.uuid4().hex[:6]}.db"

    def load(self, table: str, data: dict[str, list], types: dict[str, str] | None = None):
        cols = list(data)
        types = {**_types(data), **(types or {})}
        rows = list(zip(*[data[c] for c in cols]))
        ddl = ", ".join(f"{quote(c)} {types[c]}" for c in cols)
        if self.engine == "postgresql":
            pg_copy(self.pg, f"{quote(self.schema)}.{quote(table)}", ddl, rows)  # type: ignore[arg-type]
            source, name = PG_URL, f"{self.schema}.{table}"
        elif self.engine == "sqlite":
            with closing(sqlite3.connect(self.path)) as con:
                con.execute(f"create table {quote(table)} ({ddl.replace('bigint', 'integer')})")
                con.executemany(f"insert into {quote(table)} values ({', '.join(['?'] * len(cols))})", rows)
                con.commit()
            source, name = f"sqlite:///{self.path}", table
        else:
            with duckdb.connect(str(self.path)) as con:
                con.execute(f"create table {quote(table)} ({ddl})")
                duck_insert(con, quote(table), rows, len(cols))
            source, name = str(self.path), table
        s = qar_sql.connect(source, table=name)
        self.sessions.append(s)
        return s

    def cleanup(self) -> None:
        for s in self.sessions:
            s.close()
        if self.schema is not None:
            with self.pg.begin() as c:
                c.exec_driver_sql(f"drop schema {quote(self.schema)} cascade")


@pytest.fixture(params=ENGINES)
def tables(request, tmp_path) -> Iterator[Tables]:
    """A :class:`Tables` on each engine in turn."""
    t = Tables(request.param, tmp_path)
    yield t
    t.cleanup()


def _adult_columns() -> dict[str, list]:
    con = duckdb.connect()
    rel = f"read_csv('{ADULT}', header = true, delim = ';', all_varchar = true)"
    rows = con.execute(f"select * from {rel}").fetchall()
    names = [d[0] for d in con.execute(f"describe select * from {rel}").fetchall()]
    con.close()
    data = {n: [r[i] for r in rows] for i, n in enumerate(names)}
    data["age"] = [int(x) for x in data["age"]]
    return data


@pytest.fixture(scope="session")
def adult(tmp_path_factory) -> Iterator[Callable[[str], object]]:
    """``adult(engine)``: ARX's adult table as an open session on that engine (loaded once)."""
    need_adult()
    made: dict[str, object] = {}
    keep: list[Tables] = []
    data: dict[str, list] = {}

    def get(engine: str):
        if engine not in made:
            if engine == "duckdb":
                made[engine] = qar_sql.connect(str(ADULT), delimiter=";")
            else:
                if not data:
                    data.update(_adult_columns())
                t = Tables(engine, tmp_path_factory.mktemp("adult"))
                keep.append(t)
                made[engine] = t.load("adult", data)
        return made[engine]

    yield get
    for e, s in made.items():
        if e == "duckdb":
            s.close()  # type: ignore[attr-defined]
    for t in keep:
        t.cleanup()
