"""Secrets never printed or stored, in every form a source can carry them (issue 16, item 1).

The forms: a URL password (also with an unencoded ``@``), a secret query parameter
(``?password=…``, ``&token=…``), a libpq keyword string. The places: JSON ``source``, error
messages, the results store (``source``, ``error``), ``history``, Markdown and JUnit of a scan
(also when the URL comes from ``${VAR}``), and the qar.toml literal-password check.
"""

from __future__ import annotations

import json
import uuid

import pytest
from click.testing import CliRunner
from conftest import Loader, quote

from qar_sql.cli.main import cli
from qar_sql.compliance import store as S
from qar_sql.secrets import mask_source, scrub, secret_values

PW = "Hunter2-" + uuid.uuid4().hex[:8]


@pytest.mark.parametrize(
    "source, shown",
    [
        ("postgresql+psycopg://u:" + PW + "@db.example:5432/x", "postgresql+psycopg://u:***@db.example:5432/x"),
        ("postgresql://u:p@ss" + PW + "@db/x", "postgresql://u:***@db/x"),  # unencoded @ in the password
        ("postgresql://u@db/x?password=" + PW + "&sslmode=require", "postgresql://u@db/x?password=***&sslmode=require"),
        ("snowflake://u@acct/db?token=" + PW, "snowflake://u@acct/db?token=***"),
        ("mysql+pymysql://u@h/d?passwd=" + PW + ";charset=utf8", "mysql+pymysql://u@h/d?passwd=***;charset=utf8"),
        ("bigquery://proj?credentials_base64=" + PW, "bigquery://proj?credentials_base64=***"),
        ("host=db port=5432 password=" + PW + " dbname=x", "host=db port=5432 password=*** dbname=x"),
        ("host=db password='" + PW + " x' dbname=x", "host=db password=*** dbname=x"),
        ("Driver=X;Server=h;UID=u;PWD=" + PW + ";", "Driver=X;Server=h;UID=u;PWD=***;"),
        # Spark Connect (Databricks) carries its token after ';' in the path.
        (
            "sc://adb-1.azuredatabricks.net:443/;token=" + PW + ";x-databricks-cluster-id=0123-abc",
            "sc://adb-1.azuredatabricks.net:443/;token=***;x-databricks-cluster-id=0123-abc",
        ),
        ("data/people.csv", "data/people.csv"),
        ("postgresql://u@db/x", "postgresql://u@db/x"),
    ],
)
def test_every_form_is_masked(source, shown):
    assert mask_source(source) == shown
    assert PW not in mask_source(source)
    if PW in source:
        assert any(PW in v for v in secret_values(source))
        assert PW not in scrub(f"could not connect with {source!r}: refused", secret_values(source))


def test_scrub_masks_urls_and_pairs_in_any_text():
    text = f"error at postgresql://a:{PW}@h/d and password={PW} and token: {PW}"
    out = scrub(text, [PW])
    assert PW not in out and "postgresql://a:***@h/d" in out
    assert scrub("p = 3 is larger than the 2 columns") == "p = 3 is larger than the 2 columns"


@pytest.fixture
def secret_role():
    """A PostgreSQL role with a password that appears nowhere else, SELECT on one table."""
    pg = Loader("postgresql", None)
    pg.load("people", {"age": [30, 31, 32, 30, 31, 40] * 3, "sex": ["F", "M"] * 9, "zip": list(range(18))})
    role = f"qar_secret_{uuid.uuid4().hex[:8]}"
    with pg.eng.begin() as c:
        c.exec_driver_sql(f"create role {role} login password '{PW}'")
        c.exec_driver_sql(f"grant usage on schema {quote(pg.schema)} to {role}")
        c.exec_driver_sql(f"grant select on all tables in schema {quote(pg.schema)} to {role}")
    yield role, pg
    pg.cleanup()  # the schema and with it the role's privileges
    with pg.eng.begin() as c:
        c.exec_driver_sql(f"drop role {role}")


def _url(role: str, *, form: str) -> str:
    if form == "query":
        return f"postgresql+psycopg://{role}@localhost:5432/qar_test?password={PW}"
    return f"postgresql+psycopg://{role}:{PW}@localhost:5432/qar_test"


@pytest.mark.parametrize("form", ["query", "userinfo"])
def test_no_secret_in_output_store_history_or_errors(secret_role, tmp_path, form):
    role, pg = secret_role
    url = _url(role, form=form)
    store = str(tmp_path / "results.duckdb")
    run = CliRunner().invoke
    table = f"{pg.schema}.people"
    outputs = []
    for fmt in ("json", "markdown", "text"):
        r = run(cli, ["audit", url, "-t", table, "-p", "1", "--pi-u", "0.5", "-f", fmt, "--store", store, "-q"])
        assert r.exit_code == 0, r.output
        outputs.append(r.output)
    assert json.loads(outputs[0])["source"].endswith(
        "@localhost:5432/qar_test" + ("?password=***" if form == "query" else "")
    )
    bad = run(cli, ["audit", url, "-t", "no_such_table", "-p", "1", "--store", store, "-q"])
    assert bad.exit_code == 2
    outputs.append(bad.output)
    wrong = url.replace(PW, PW + "x")  # authentication fails: the driver's message is shown
    r = run(cli, ["audit", wrong, "-t", table, "-p", "1", "--store", store, "-q"])
    assert r.exit_code == 3
    outputs.append(r.output)
    h = run(cli, ["history", "--store", store, "-f", "json"])
    assert h.exit_code == 0, h.output
    outputs.append(h.output)
    stored = [(x.source, x.error) for x in S.runs(store)]
    assert len(stored) == 5
    for text in [*outputs, json.dumps(stored)]:
        assert PW not in text


def test_scan_junit_and_markdown_mask_query_secrets_from_env(secret_role, tmp_path, monkeypatch):
    role, pg = secret_role
    monkeypatch.setenv("QAR_SECRET_URL", _url(role, form="query"))
    cfg = tmp_path / "qar.toml"
    cfg.write_text(
        '[store]\nurl = "r.duckdb"\n[sources.pg]\nurl = "${QAR_SECRET_URL}"\n'
        f'[[scan]]\nname = "people"\nsource = "pg"\ntable = "{pg.schema}.people"\np = 1\npi_u = 0.5\n'
    )
    junit, md = tmp_path / "j.xml", tmp_path / "s.md"
    r = CliRunner().invoke(cli, ["scan", str(cfg), "--junit", str(junit), "--markdown", str(md), "-f", "json"])
    assert r.exit_code == 0, r.output
    stored = [(x.source, x.error) for x in S.runs(str(tmp_path / "r.duckdb"))]
    for text in (r.output, junit.read_text(), md.read_text(), json.dumps(stored)):
        assert PW not in text


@pytest.mark.parametrize(
    "url",
    [
        f"postgresql://u@h/d?password={PW}",
        f"postgresql://u:{PW}@h/d",
        f"host=h password={PW} dbname=d",
    ],
)
def test_literal_secret_in_qar_toml_is_refused(tmp_path, url):
    cfg = tmp_path / "qar.toml"
    cfg.write_text(f'[sources.pg]\nurl = "{url}"\n[[scan]]\nsource = "pg"\ntable = "t"\n')
    r = CliRunner().invoke(cli, ["scan", str(cfg), "--no-store"])
    assert r.exit_code == 2 and "contains a password" in r.output and PW not in r.output
