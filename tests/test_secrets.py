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
from conftest import PG_URL, Loader, quote
from sqlalchemy.engine import make_url

from qar_sql.cli.main import cli
from qar_sql.compliance import store as S
from qar_sql.engines.secrets import mask_source, scrub, secret_values

# Fixed, distinctive values (a leak is found by searching for them); fixed, not drawn per
# process, so that every pytest-xdist worker collects the same test ids.
PW = "Hunter2-83e49312"
#: The test database of QAR_TEST_PG_URL, which the secret roles connect to.
DB = make_url(PG_URL).database if PG_URL else "qar_test"


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
    # qar's own setting holds CSV cell texts, never a secret: a message quoting it stays readable
    assert scrub('e.g. null_tokens = ["NA"]') == 'e.g. null_tokens = ["NA"]'
    assert scrub("access_tokens = abc") == "access_tokens = ***"


def test_scrub_is_linear_in_a_long_word_and_masks_keys_inside_runs():
    """A 100,000-character `qar report --title` took over ten minutes in the masking of the
    command line: the key and scheme patterns were retried at every position of the word."""
    import time

    start = time.process_time()  # CPU seconds: a loaded machine's wall clock runs 20 times slower
    assert scrub("--title " + "T" * 200_000) == "--title " + "T" * 200_000
    assert scrub("s" * 200_000 + "://") == "s" * 200_000 + "://"
    assert time.process_time() - start < 5  # quadratic, it takes over half an hour
    # a key or scheme that begins with a digit or a dash is still masked whole
    out = scrub(f"1postgresql://a:{PW}@h/d 1password={PW} --password={PW} a.token={PW}")
    assert PW not in out and "1password=***" in out and "--password=***" in out and "a.token=***" in out


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
        return f"postgresql+psycopg://{role}@localhost:5432/{DB}?password={PW}"
    return f"postgresql+psycopg://{role}:{PW}@localhost:5432/{DB}"


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
        f"@localhost:5432/{DB}" + ("?password=***" if form == "query" else "")
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


# Issue 31, item 1: a password holding an unencoded "?" or "@". SQLAlchemy (and so the driver)
# ends the password at its first "@" and the host at "/", ":" or "?"; qar's mask must cover the
# whole password however it is read, and every piece a driver may echo (its host "Secret@…").
QPW = "pa?ss2260c58e"  # cut at the "?" before this fix: the whole URL was shown
APW = "Qp@Secretf99f4b4a"  # "Secret…@127.0.0.1" is the host SQLAlchemy reads


def _pieces(pw: str) -> list[str]:
    """The password and every part of it of three characters or more (what scrub() replaces)."""
    return [pw] + [p for p in pw.replace("?", "@").split("@") if len(p) >= 3]


@pytest.mark.parametrize(
    "source, shown",
    [
        (f"postgresql+psycopg://u:{QPW}@127.0.0.1:1/db", "postgresql+psycopg://u:***@127.0.0.1:1/db"),
        (f"postgresql+psycopg://u:{APW}@127.0.0.1:1/db", "postgresql+psycopg://u:***@127.0.0.1:1/db"),
        ("postgresql://u:Qp@Se/cret@host/db", "postgresql://u:***@host/db"),
        ("postgresql://u:Qp@Se?cret@host/db", "postgresql://u:***@host/db"),
        ("postgresql://u:Qp@Sec:ret@host/db", "postgresql://u:***@host/db"),
        ("postgresql://u:pa/ss?w:rd@[::1]:5432/db?sslmode=require", "postgresql://u:***@[::1]:5432/db?sslmode=require"),
        ("postgresql://u:pw@h/d?application_name=a@b", "postgresql://u:***@h/d?application_name=a@b"),
        ("postgresql://me@corp.com:pw@host/db", "postgresql://me@corp.com:***@host/db"),
        ("postgresql://u:pw@/db?host=/tmp", "postgresql://u:***@/db?host=/tmp"),
        ("sc://h:443/;token=abcdef;user_id=me@corp.com", "sc://h:443/;token=***;user_id=me@corp.com"),
        ("duckdb:///data/x@y.duckdb", "duckdb:///data/x@y.duckdb"),
    ],
)
def test_password_with_question_mark_or_at_is_masked(source, shown):
    assert mask_source(source) == shown


@pytest.mark.parametrize(
    "source, raw",
    [
        (f"postgresql+psycopg://u:{QPW}@127.0.0.1:1/db", QPW),
        ("postgresql://u:pa/ss?w:rd@[::1]:5432/db?sslmode=require", "pa/ss?w:rd"),
        ("postgresql://u:pw@h/d?application_name=a@b", "pw"),
        ("postgresql://me@corp.com:pw@host/db", "pw"),
        ("postgresql://u:pa%40ss@h/d", "pa%40ss"),
    ],
)
def test_the_masked_password_is_the_one_sqlalchemy_reads(source, raw):
    """Where SQLAlchemy's reading is unambiguous, the password qar masks is the driver's."""
    from sqlalchemy.engine import make_url

    assert make_url(source).password in secret_values(source)
    assert mask_source(source) == source.replace(":" + raw + "@", ":***@", 1)


def test_every_piece_of_a_password_with_at_is_scrubbed_from_driver_messages():
    url = f"postgresql+psycopg://u:{APW}@127.0.0.1:1/db"
    message = f"failed to resolve host '{APW.split('@', 1)[1]}@127.0.0.1': [Errno -2] Name or service not known"
    out = scrub(message, secret_values(url))
    assert out == "failed to resolve host '***@127.0.0.1': [Errno -2] Name or service not known"


def _leaks(texts, pw: str) -> list[str]:
    return [piece for piece in _pieces(pw) for text in texts if piece in text]


@pytest.mark.parametrize("pw", [QPW, APW], ids=["question-mark", "at-sign"])
def test_no_piece_of_the_password_on_any_channel_of_a_failing_connection(tmp_path, monkeypatch, pw):
    """Nothing listens on port 1: every command fails to connect, and says so without the password
    on stdout, stderr, JSON, JUnit, Markdown, the --report-dir pages, the store and qar config."""
    url = f"postgresql+psycopg://u:{pw}@127.0.0.1:1/db"
    monkeypatch.chdir(tmp_path)
    run = CliRunner().invoke
    store = str(tmp_path / "results.duckdb")
    texts = []
    for fmt in ("text", "json", "html"):
        r = run(cli, ["audit", url, "-t", "t", "-p", "1", "-f", fmt, "--store", store, "-q"])
        assert r.exit_code == 3, r.output
        texts.append(r.output)
    r = run(cli, ["report", url, "-t", "t", "-p", "1", "--no-records", "-o", str(tmp_path / "r.html"), "-q"])
    assert r.exit_code == 3, r.output
    texts.append(r.output)
    monkeypatch.setenv("QAR_PIECES_URL", url)
    (tmp_path / "qar.toml").write_text(
        '[store]\nurl = "r.duckdb"\n[sources.pg]\nurl = "${QAR_PIECES_URL}"\n'
        '[[scan]]\nname = "people"\nsource = "pg"\ntable = "t"\np = 1\n'
    )
    out = tmp_path / "pages"
    args = ["scan", "qar.toml", "--junit", "j.xml", "--markdown", "s.md", "--report-dir", str(out), "-f", "json"]
    r = run(cli, args)
    assert r.exit_code == 3, r.output
    texts += [r.output, (tmp_path / "j.xml").read_text(), (tmp_path / "s.md").read_text()]
    texts += [page.read_text() for page in out.iterdir()]
    assert texts[-1]
    monkeypatch.setenv("QAR_DATABASE_URL", url)
    for fmt in ("text", "json"):
        r = run(cli, ["config", "-f", fmt])
        assert r.exit_code == 0 and "127.0.0.1" in r.output, r.output
        texts.append(r.output)
    stored = [(x.source, x.error) for x in [*S.runs(store), *S.runs(str(tmp_path / "r.duckdb"))]]
    assert len(stored) == 4 and all(source.endswith(":***@127.0.0.1:1/db") for source, _ in stored)
    texts.append(json.dumps(stored))
    assert _leaks(texts, pw) == []


def test_no_piece_of_the_password_on_stderr_of_a_real_qar_process(tmp_path):
    """The stderr of the installed command (not CliRunner), as the issue ran it."""
    import subprocess
    import sys

    for pw in (QPW, APW):
        url = f"postgresql+psycopg://u:{pw}@127.0.0.1:1/db"
        r = subprocess.run(
            [sys.executable, "-c", "from qar_sql.cli import main; main()", "audit", url, "-t", "t", "-q"],
            capture_output=True,
            text=True,
            cwd=tmp_path,
        )
        assert r.returncode == 3 and r.stderr.startswith(
            "Error: cannot connect to postgresql+psycopg://u:***@127.0.0.1"
        )
        assert _leaks([r.stdout, r.stderr], pw) == []


@pytest.fixture
def question_role():
    """A PostgreSQL role whose password holds an unencoded "?" (SQLAlchemy passes it whole)."""
    pg = Loader("postgresql", None)
    pg.load("people", {"age": [30, 31, 32, 30, 31, 40] * 3, "sex": ["F", "M"] * 9, "zip": list(range(18))})
    role = f"qar_q_{uuid.uuid4().hex[:8]}"
    with pg.eng.begin() as c:
        c.exec_driver_sql(f"create role {role} login password '{QPW}'")
        c.exec_driver_sql(f"grant usage on schema {quote(pg.schema)} to {role}")
        c.exec_driver_sql(f"grant select on all tables in schema {quote(pg.schema)} to {role}")
    yield role, pg
    pg.cleanup()
    with pg.eng.begin() as c:
        c.exec_driver_sql(f"drop role {role}")


@pytest.mark.postgres
def test_no_piece_of_a_question_mark_password_on_any_channel_of_a_real_audit(question_role, tmp_path, monkeypatch):
    """The audit succeeds: stdout (text, JSON source, HTML), qar report's page, qar records, a scan's
    JSON, JUnit, Markdown and --report-dir pages, the store's qar_runs.source and qar config."""
    role, pg = question_role
    url = f"postgresql+psycopg://{role}:{QPW}@localhost:5432/{DB}"
    table = f"{pg.schema}.people"
    monkeypatch.chdir(tmp_path)
    run = CliRunner().invoke
    common = ["-t", table, "-p", "1", "--pi-u", "0.5", "-q"]
    texts = []
    for fmt in ("text", "json", "markdown", "html"):
        r = run(cli, ["audit", url, *common, "-f", fmt, "--store", "s.duckdb"])
        assert r.exit_code == 0, r.output
        texts.append(r.output)
    assert json.loads(texts[1])["source"] == f"postgresql+psycopg://{role}:***@localhost:5432/{DB}"
    r = run(cli, ["report", url, *common, "--no-records", "-o", "r.html"])
    assert r.exit_code == 0, r.output
    texts += [r.output, (tmp_path / "r.html").read_text()]
    for fmt in ("json", "html"):
        r = run(cli, ["records", url, *common, "--key", "zip", "-f", fmt])
        assert r.exit_code == 0, r.output
        texts.append(r.output)
    monkeypatch.setenv("QAR_Q_URL", url)
    (tmp_path / "qar.toml").write_text(
        '[store]\nurl = "r.duckdb"\n[sources.pg]\nurl = "${QAR_Q_URL}"\n'
        f'[[scan]]\nname = "people"\nsource = "pg"\ntable = "{table}"\np = 1\npi_u = 0.5\n'
    )
    args = ["scan", "qar.toml", "--junit", "j.xml", "--markdown", "s.md", "--report-dir", "pages", "-f", "json"]
    r = run(cli, args)
    assert r.exit_code == 0, r.output
    texts += [r.output, (tmp_path / "j.xml").read_text(), (tmp_path / "s.md").read_text()]
    texts += [page.read_text() for page in (tmp_path / "pages").iterdir()]
    monkeypatch.setenv("QAR_DATABASE_URL", url)
    r = run(cli, ["config", "-f", "json"])
    texts.append(r.output)
    stored = [x.source for x in [*S.runs(str(tmp_path / "s.duckdb")), *S.runs(str(tmp_path / "r.duckdb"))]]
    assert len(stored) == 5 and all(s.endswith(f":***@localhost:5432/{DB}") for s in stored)
    texts.append(json.dumps(stored))
    assert _leaks(texts, QPW) == []


@pytest.mark.parametrize("pw", ["S3cr%40et?x@y#z", "a@b@c@Qwe", "Qx@y#z:Wv5"])
def test_the_run_after_an_unencoded_at_is_scrubbed_though_its_pieces_are_short(tmp_path, pw):
    """SQLAlchemy reads what follows the password's first @ as the host; the driver's "failed to
    resolve host" echoes it. Its pieces between # and @ are under three characters (not scrubbed
    alone), so the run itself is: 'y#z@127.0.0.1' and 'b@c@***@127.0.0.1' showed them."""
    url = f"postgresql+psycopg://u:{pw}@127.0.0.1:1/db"
    r = CliRunner().invoke(cli, ["audit", url, "-t", "t", "-q"])
    assert r.exit_code in (2, 3), r.output
    host = pw.split("@", 1)[1]
    assert host.split(":")[0] not in r.output and host.split("@")[0] + "@" not in r.output, r.output
