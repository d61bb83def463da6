"""The same table through every kind of source gives the same AuditResult numbers.

One random table (NULLs, ties, hostile names) is written as a DuckDB database file, a CSV file
(read in place; an empty field is NULL), a Parquet file and a PostgreSQL table. Each audit must
equal the plain-Python oracle and all of them must be identical, whatever the batching and the
number of connections.
"""

from __future__ import annotations

import csv
import uuid
from pathlib import Path

import duckdb
import pytest
from conftest import Loader, quote

import qar_sql
from tests.measures.test_audit import HOSTILE_TABLE, as_columns, check_against_oracle, random_table

P, ALPHA, PI_U = 2, 0.01, 0.2


def numbers(result) -> tuple:
    """Everything an audit computes; not where it ran or how long it took."""
    return (
        result.rows,
        tuple(result.columns),
        result.p,
        result.alpha,
        result.pi_u,
        result.pwm,
        result.qis,
        result.fit,
        result.warnings,
        result.n_keys,
        result.min_class_size,
    )


def _csv_text(v) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def write_csv(path: Path, names, rows, delimiter: str = ",") -> Path:
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, delimiter=delimiter, quoting=csv.QUOTE_MINIMAL)
        w.writerow(names)
        w.writerows([[_csv_text(v) for v in r] for r in rows])
    return path


def write_parquet(duckdb_file: str, table: str, path: Path) -> Path:
    con = duckdb.connect(duckdb_file, read_only=True)
    try:
        target = str(path).replace("'", "''")
        con.execute(f"copy (select * from {quote(table)}) to '{target}' (format parquet)")
    finally:
        con.close()
    return path


@pytest.fixture
def table_data():
    # No '' values: in a CSV an empty field is NULL, so '' could not survive the round trip.
    return random_table(31, 70, empty_string=False)


@pytest.fixture
def sources(tmp_path, table_data):
    """{kind: (source, table)} for the same rows: a DuckDB file, a CSV and a Parquet file
    (names with a quote and a semicolon)."""
    names, rows, types = table_data
    duck = Loader("duckdb", tmp_path)
    out = {"duckdb": duck.load(HOSTILE_TABLE, as_columns(names, rows), types)}
    out["csv"] = (str(write_csv(tmp_path / "it's; a file.csv", names, rows)), None)
    out["parquet"] = (str(write_parquet(duck.path, HOSTILE_TABLE, tmp_path / "it's.parquet")), None)
    return out


def test_file_sources_equal_oracle_and_each_other(sources, table_data):
    names, rows, _ = table_data
    results = {}
    for kind, (source, table) in sources.items():
        r = qar_sql.audit(source, table=table, p=P, alpha=ALPHA, pi_u=PI_U)
        assert r.engine == "duckdb"
        fit = check_against_oracle(r, names, rows, P, alpha=ALPHA, pi_u=PI_U)
        results[kind] = numbers(r)
    assert fit is not None and fit.n_exceedances >= 3
    assert results["csv"] == results["duckdb"] == results["parquet"]


def test_postgresql_equals_duckdb(pg, tmp_path, sources, table_data):
    names, rows, types = table_data
    loader = Loader("postgresql", tmp_path)
    try:
        source, table = loader.load(HOSTILE_TABLE, as_columns(names, rows), types)
        assert table.startswith("t_") and table.endswith(HOSTILE_TABLE)  # schema.table
        r = qar_sql.audit(source, table=table, p=P, alpha=ALPHA, pi_u=PI_U)
        assert r.engine == "postgresql"
        check_against_oracle(r, names, rows, P, alpha=ALPHA, pi_u=PI_U)
        duck_source, duck_table = sources["duckdb"]
        duck = qar_sql.audit(duck_source, table=duck_table, p=P, alpha=ALPHA, pi_u=PI_U)
        assert numbers(r) == numbers(duck)
        # batching and concurrency change how the work is split, never the numbers
        for batch_size, jobs in ((1, 1), (1, 4), (3, 3), (1000, 2)):
            again = qar_sql.audit(source, table=table, p=P, alpha=ALPHA, pi_u=PI_U, batch_size=batch_size, jobs=jobs)
            assert numbers(again) == numbers(r), (batch_size, jobs)
    finally:
        loader.cleanup()


@pytest.mark.parametrize("batch_size", [1, 4, 1000])
def test_duckdb_batching_does_not_change_numbers(sources, table_data, batch_size):
    names, rows, _ = table_data
    source, table = sources["duckdb"]
    r = qar_sql.audit(source, table=table, p=3, alpha=ALPHA, pi_u=PI_U, batch_size=batch_size)
    check_against_oracle(r, names, rows, 3, alpha=ALPHA, pi_u=PI_U)


@pytest.mark.parametrize("delimiter,suffix", [(";", ".csv"), ("\t", ".tsv"), ("|", ".txt")])
def test_csv_delimiters_detected_and_overridden(tmp_path, table_data, delimiter, suffix):
    names, rows, _ = table_data
    path = write_csv(tmp_path / f"data{suffix}", names, rows, delimiter)
    detected = qar_sql.audit(str(path), p=P, alpha=ALPHA, pi_u=PI_U)
    check_against_oracle(detected, names, rows, P, alpha=ALPHA, pi_u=PI_U)
    given = qar_sql.audit(str(path), p=P, alpha=ALPHA, pi_u=PI_U, delimiter=delimiter)
    assert numbers(given) == numbers(detected)


def test_csv_empty_field_is_null(tmp_path):
    """An empty field is NULL: it groups with other empty fields, apart from every value."""
    path = tmp_path / "nulls.csv"
    lines = ["a,b,c,d,e,f"] + [
        ",1,x,,u,1",
        ",1,x,,v,2",
        "2,,y,,u,3",
        "2,1,,,w,4",
        ",,,,,5",
    ]
    path.write_text("\n".join(lines) + "\n")
    rows = [
        (None, 1, "x", None, "u", 1),
        (None, 1, "x", None, "v", 2),
        (2, None, "y", None, "u", 3),
        (2, 1, None, None, "w", 4),
        (None, None, None, None, None, 5),
    ]
    r = qar_sql.audit(str(path), p=2, pi_u=0.2)
    check_against_oracle(r, list("abcdef"), rows, 2, pi_u=0.2)
    assert any("'d'" in w and "entirely NULL" in w for w in r.warnings)


def test_duckdb_table_in_a_hostile_schema(tmp_path, table_data):
    """``schema.table`` in a DuckDB file, both parts hostile, the table name with a dot."""
    names, rows, types = table_data
    path = str(tmp_path / "schemas.duckdb")
    con = duckdb.connect(path)
    schema = 'sch;"ema'
    full = f"{quote(schema)}.{quote(HOSTILE_TABLE)}"
    con.execute(f"create schema {quote(schema)}")
    ddl = ", ".join(f"{quote(n)} {types[n].replace('double precision', 'double')}" for n in names)
    con.execute(f"create table {full} ({ddl})")
    con.executemany(f"insert into {full} values ({', '.join('?' * len(names))})", rows)
    con.close()
    r = qar_sql.audit(path, table=f"{schema}.{HOSTILE_TABLE}", p=P, alpha=ALPHA, pi_u=PI_U)
    assert r.table == f"{schema}.{HOSTILE_TABLE}"
    check_against_oracle(r, names, rows, P, alpha=ALPHA, pi_u=PI_U)


@pytest.mark.parametrize("engine", ["duckdb", pytest.param("postgresql", marks=pytest.mark.postgres)])
def test_a_schema_with_a_dot(tmp_path, table_data, engine):
    """``schema.table`` where the schema holds a dot (dbt writes a custom schema ``x.y`` as
    ``<target schema>_x.y``): the name split at its first dot only, so the table was "not found;
    did you mean" the very name given, and no spelling reached it."""
    import sqlalchemy

    names, rows, types = table_data
    schema = f"t_{uuid.uuid4().hex[:10]}_s.x"  # tmp_path's name is the same in every run
    full = f"{quote(schema)}.{quote('people')}"
    if engine == "duckdb":
        source = str(tmp_path / "dotted.duckdb")
        con = duckdb.connect(source)
        types = {n: t.replace("double precision", "double") for n, t in types.items()}
    else:
        from conftest import PG_URL, require_postgres

        source, eng = PG_URL, require_postgres()
        con = eng.raw_connection()
    try:
        cur = con.cursor()
        cur.execute(f"create schema {quote(schema)}")
        cur.execute(f"create table {full} ({', '.join(f'{quote(n)} {types[n]}' for n in names)})")
        mark = "?" if engine == "duckdb" else "%s"
        cur.executemany(f"insert into {full} values ({', '.join([mark] * len(names))})", rows)
        con.commit()
        con.close()
        r = qar_sql.audit(source, table=f"{schema}.people", p=P, alpha=ALPHA, pi_u=PI_U)
        check_against_oracle(r, names, rows, P, alpha=ALPHA, pi_u=PI_U)
    finally:
        con.close()
        if engine == "postgresql":
            with eng.begin() as c:
                c.execute(sqlalchemy.text(f"drop schema if exists {quote(schema)} cascade"))


@pytest.mark.parametrize(
    "header, said",
    [
        ("Age,age,sex", "has columns 'Age' and 'age', one name to the database (its names ignore case)"),
        ("age;age;sex", "has two columns named 'age'; rename one in the file, e.g. to 'age_2'"),
    ],
)
def test_a_csv_header_with_one_name_twice_to_the_database_is_refused(tmp_path, header, said):
    """DuckDB's names ignore case, so it read the second of ``Age,age`` as ``age_1``, a column the
    file never had (as for a frame). A header that really says ``age_1`` is read as written."""
    from click.testing import CliRunner

    from qar_sql.cli.main import cli

    sep = header[3]
    path = tmp_path / "t.csv"
    path.write_text(header + "\n" + "\n".join(sep.join(("1", str(i), "M")) for i in range(6)) + "\n", encoding="utf-8")
    r = CliRunner().invoke(cli, ["audit", str(path), "-p", "1", "--pi-u", "0.5", "-q"])
    assert r.exit_code == 2, r.output
    assert said in r.stderr, r.stderr
    path.write_text("age,age_1,sex\n" + "\n".join(f"1,{i},M" for i in range(6)) + "\n", encoding="utf-8")
    assert qar_sql.audit(str(path), p=1, pi_u=0.5).columns == ("age", "age_1", "sex")
