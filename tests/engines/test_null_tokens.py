"""A missing-value token in a CSV (``NA``) turns a numeric column into text: every command that
reads a CSV says so, naming the token and its rows, and ``--null-token`` reads it as NULL."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import qar_sql
from qar_sql.cli.main import cli
from qar_sql.errors import UsageError

NOTE = "cd496 is numeric except 'NA' in 4 rows and '?' in 1 row"  # rows 0, 13, 26, 39; row 7


@pytest.fixture
def csv_with_na(tmp_path):
    rows = ["id,cd496,sex,age"]
    for i in range(40):
        value = "NA" if i % 13 == 0 else ("?" if i == 7 else str(100 + 7 * i))
        rows.append(f"{i},{value},{'MF'[i % 2]},{20 + i % 9}")
    path = tmp_path / "aids.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return str(path)


def _run(*args):
    out = CliRunner().invoke(cli, [str(a) for a in args])
    assert out.exit_code in (0, 1), out.output
    return out


@pytest.mark.parametrize(
    "command,where",
    [
        (["audit", "-p", "2", "--pi-u", "0.3"], "column_notes"),
        (["risk"], "column_notes"),
        (["uniqueness", "-p", "2", "--group-size", "5"], "warnings"),
        (["discover", "--max-size", "2"], "warnings"),
    ],
)
def test_every_csv_reader_names_the_token(csv_with_na, command, where):
    doc = json.loads(_run(*command[:1], csv_with_na, *command[1:], "-x", "id", "-f", "json", "-q").stdout)
    notes = doc[where]
    assert any(NOTE in n and "--null-token NA --null-token '?'" in n for n in notes), notes
    fixed = json.loads(
        _run(
            *command[:1],
            csv_with_na,
            *command[1:],
            "-x",
            "id",
            "-f",
            "json",
            "-q",
            "--null-token",
            "NA",
            "--null-token",
            "?",
        ).stdout
    )
    assert not any("numeric except" in n for n in fixed[where])


def test_whatif_and_the_api(csv_with_na, tmp_path):
    toml = tmp_path / "t.toml"
    toml.write_text('qid = ["sex", "age"]\n[treatments.a]\ncolumn = "age"\nkind = "top"\nabove = 25\nvalue = 25\n')
    doc = json.loads(
        _run("whatif", csv_with_na, "--treatments", toml, "-x", "id", "-f", "json", "-q", "-p", "2").stdout
    )
    assert any(NOTE in w for w in doc["warnings"])
    r = qar_sql.audit(csv_with_na, exclude=["id"], p=2, pi_u=0.3, null_tokens=["NA", "?"])
    assert not any("numeric except" in n for n in r.column_notes)
    assert any("'cd496' (BIGINT)" in n for n in r.column_notes)


def test_null_token_needs_a_csv(tmp_path):
    path = tmp_path / "t.parquet"
    import duckdb

    duckdb.sql(f"copy (select 1 as a) to '{path}' (format parquet)")
    with pytest.raises(UsageError, match="null_tokens= applies to CSV files"):
        qar_sql.audit(str(path), null_tokens=["NA"], p=1)
    with pytest.raises(UsageError, match="non-empty"):
        qar_sql.audit(str(path), null_tokens=[""], p=1)


def test_a_token_equal_to_a_header_name_keeps_the_column_name(tmp_path):
    """The header is not data: a column named like a token was renamed column1 (DuckDB read the
    header cell as NULL); its name stays, and its 'NA' cells are still NULL."""
    from qar_sql.engines.source import open_source

    path = tmp_path / "t.csv"
    path.write_text('age,NA,"s""ex"\n30,x,F\n31,NA,M\n32,y,NA\n')
    db, relation = open_source(str(path), null_tokens=["NA"])
    try:
        assert relation.columns == ("age", "NA", 's"ex')
        nulls = db.query(f'select count(*) - count("NA"), count(*) - count("s""ex") from {relation.sql}')
        assert [tuple(r) for r in nulls] == [(1, 1)]
    finally:
        db.close()


def test_compare_blames_the_tokens_not_the_column_type(csv_with_na, tmp_path):
    """The original's column is numeric, the treated file writes missing values as NA and ?: the
    message named only the types and suggested --categorical."""
    original = tmp_path / "original.csv"
    original.write_text(
        "id,cd496,sex,age\n" + "".join(f"{i},{100 + 7 * i},{'MF'[i % 2]},{20 + i % 9}\n" for i in range(40))
    )
    out = CliRunner().invoke(cli, ["compare", str(original), csv_with_na, "--aligned", "-x", "id", "-p", "2"])
    assert out.exit_code == 2, out.output
    assert out.output == (
        "Error: column 'cd496' is numeric in the original, but in the treated table it holds 'NA' in 4 rows and "
        "'?' in 1 row, so it is read as text there; read those as NULL with --null-token NA --null-token '?' "
        "(or compare its values as categories with --categorical 'cd496')\n"
    )
    fixed = CliRunner().invoke(
        cli,
        ["compare", str(original), csv_with_na, "--aligned", "-x", "id", "-p", "2", "--null-token", "NA"]
        + ["--null-token", "?", "-f", "json"],
    )
    assert fixed.exit_code == 0, fixed.output
