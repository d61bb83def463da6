"""``qar scan --dbt-project``: the warehouse from the dbt profile, dbt's node selection, meta
values checked, and a DuckDB warehouse locked by a running dbt build (no dbt needed: the
committed manifest of tests/fixtures/dbt_project and a warehouse built from it, as test_dbt.py;
tests/integrations/test_dbt_package.py runs the same command after a real dbt build)."""

from __future__ import annotations

import gzip
import json
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from urllib.parse import quote

import pytest
from click.testing import CliRunner
from conftest import PG_URL, require_postgres

import qar_sql
from qar_sql.cli.main import cli
from qar_sql.compliance.dbt_project import read_target, select_nodes
from qar_sql.errors import UsageError
from tests.compliance.test_dbt import FIXTURES, PROJECT, QI, build_warehouse

PROFILES = textwrap.dedent(
    """\
    qar_fixture:
      target: dev
      outputs:
        dev:
          type: duckdb
          path: "{{ env_var('QAR_DBT_PATH', 'warehouse.duckdb') }}"
          threads: 1
        pg:
          type: postgres
          host: db.example.com
          port: "{{ env_var('PG_PORT', '5433') | as_number }}"
          user: analyst
          password: "{{ env_var('PG_PASSWORD') }}"
          dbname: warehouse
          schema: analytics
          threads: 4
        snow:
          type: snowflake
          account: xy12345
          user: me
          password: "p@ss word"
          database: ANALYTICS
          warehouse: WH
          role: R
          schema: S
        spark:
          type: spark
          host: h
    other:
      target: dev
      outputs:
        dev: {type: duckdb, path: other.duckdb}
    """
)


@pytest.fixture
def manifest() -> dict:
    return json.loads(gzip.decompress((FIXTURES / "dbt_manifest.json.gz").read_bytes()))


@pytest.fixture
def project(tmp_path, manifest, monkeypatch) -> Path:
    """The fixture project with its manifest in target/ and a warehouse built from it, the
    profile in ~/.dbt (HOME is a temporary folder); run from elsewhere (no profiles.yml in the
    current folder). The project's own profiles.yml is there but, as for dbt, not read."""
    folder = tmp_path / "project"
    shutil.copytree(PROJECT, folder)
    (tmp_path / "home" / ".dbt").mkdir(parents=True)
    (tmp_path / "home" / ".dbt" / "profiles.yml").write_text(PROFILES)
    (folder / "target").mkdir()
    (folder / "target" / "manifest.json").write_text(json.dumps(manifest))
    warehouse = build_warehouse(manifest, tmp_path)
    monkeypatch.setenv("QAR_DBT_PATH", str(warehouse))
    for var in ("DBT_PROFILES_DIR", "DBT_PROFILE", "DBT_TARGET", "DBT_TARGET_PATH", "PG_PASSWORD", "PG_PORT"):
        monkeypatch.delenv(var, raising=False)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return folder


def scan(*args: str):
    return CliRunner().invoke(cli, ["scan", *args, "--no-store", "-f", "json"])


def test_profile_to_url(project, monkeypatch, tmp_path):
    t = read_target(project)
    assert (t.profile, t.target, t.type) == ("qar_fixture", "dev", "duckdb")
    assert t.url.endswith("warehouse.duckdb") and Path(t.url).is_file()
    monkeypatch.setenv("PG_PASSWORD", "s3cr:t@/x")
    t = read_target(project, target="pg")
    assert t.url == "postgresql+psycopg://analyst:s3cr%3At%40%2Fx@db.example.com:5433/warehouse"
    assert t.display == "postgresql+psycopg://analyst:***@db.example.com:5433/warehouse"
    monkeypatch.setenv("DBT_TARGET", "snow")  # dbt's own variable, as dbt reads it
    t = read_target(project)
    assert t.url == "snowflake://me:p%40ss%20word@xy12345/ANALYTICS?warehouse=WH&role=R"
    assert "p%40ss" not in t.display
    monkeypatch.delenv("DBT_TARGET")
    # a relative duckdb path is the project's
    assert read_target(project, profile="other").url == str(project / "other.duckdb")


def test_profiles_dir_resolution(project, monkeypatch, tmp_path):
    """dbt's order: --profiles-dir, $DBT_PROFILES_DIR, the current folder, ~/.dbt; never the
    project folder (dbt does not read it either, so qar would connect where dbt does not)."""
    home = tmp_path / "home" / ".dbt"
    assert read_target(project).profiles_yml == home / "profiles.yml"
    (home / "profiles.yml").unlink()
    assert (project / "profiles.yml").is_file()
    with pytest.raises(UsageError, match=r"no profiles.yml in the current folder or in ~/.dbt \(.* has one, which dbt"):
        read_target(project)
    (home / "profiles.yml").write_text(PROFILES.replace("warehouse.duckdb", "home.duckdb"))
    # the current folder comes before ~/.dbt, $DBT_PROFILES_DIR before it, --profiles-dir first
    here = Path.cwd()
    (here / "profiles.yml").write_text(PROFILES)
    assert read_target(project).profiles_yml == here / "profiles.yml"
    env = tmp_path / "env"
    env.mkdir()
    (env / "profiles.yml").write_text(PROFILES)
    monkeypatch.setenv("DBT_PROFILES_DIR", str(env))
    assert read_target(project).profiles_yml == env / "profiles.yml"
    assert read_target(project, profiles=home).profiles_yml == home / "profiles.yml"
    # run from the project folder (as dbt users do): its profiles.yml is the current folder's
    monkeypatch.delenv("DBT_PROFILES_DIR")
    monkeypatch.chdir(project)
    assert read_target(project).profiles_yml == project / "profiles.yml"


def _profile_with(tmp_path: Path, **values: str) -> Path:
    """A profiles.yml whose dev output (duckdb) has these extra values; returns its folder."""
    folder = tmp_path / "hostile"
    folder.mkdir(exist_ok=True)
    extra = "".join(f"      {k}: {json.dumps(v)}\n" for k, v in values.items())
    (folder / "profiles.yml").write_text(
        "qar_fixture:\n  target: dev\n  outputs:\n    dev:\n      type: duckdb\n"
        "      path: \"{{ env_var('QAR_DBT_PATH') }}\"\n" + extra
    )
    return folder


@pytest.mark.parametrize(
    "template,why",
    [
        ("{{ cycler.__init__.__globals__.os.popen('touch PWNED; echo 127.0.0.1').read().strip() }}", "sandbox refuses"),
        ("{{ lipsum.__globals__['os'].popen('touch PWNED').read() }}", "sandbox refuses"),
        ("{{ ''.__class__.__mro__[1].__subclasses__() }}", "sandbox refuses"),
        ("{{ self.__init__.__globals__ }}", "sandbox refuses"),
        ("{{ config.items() }}", "uses a name outside what qar renders"),
        ("{{ os.popen('touch PWNED') }}", "uses a name outside what qar renders"),
        ("{{ [].append(1) }}", "sandbox refuses"),
    ],
)
def test_profile_runs_no_code(project, tmp_path, template, why):
    """A profile value is rendered in dbt's sandbox: no attribute of Python's internals, no name
    outside dbt's profile context; refused with one sentence naming the key, exit 2, nothing run."""
    folder = _profile_with(tmp_path, host=template)
    r = CliRunner().invoke(
        cli, ["scan", "--dbt-project", str(project), "--profiles-dir", str(folder), "--no-store", "--select", "people"]
    )
    assert r.exit_code == 2, r.output
    assert "key outputs.dev.host " in r.output and why in r.output, r.output
    assert len(r.output.strip().splitlines()) == 1 and "Traceback" not in r.output
    assert not list(tmp_path.rglob("PWNED")) and not (Path.cwd() / "PWNED").exists()


def test_profile_context_is_dbts(project, tmp_path, monkeypatch):
    """What dbt's profile context offers still renders: env_var with and without a default, var()
    with a default, the as_* filters, Jinja's own statements."""
    monkeypatch.setenv("QAR_PORT", "6543")
    folder = _profile_with(tmp_path, threads="{{ env_var('QAR_PORT') | as_number }}")
    assert read_target(project, profiles=folder).type == "duckdb"
    (folder / "profiles.yml").write_text(
        PROFILES.replace("host: db.example.com", "host: \"{% if true %}{{ var('h', 'db.example.com') }}{% endif %}\"")
        .replace("'PG_PORT', '5433'", "'QAR_PORT'")
        .replace("{{ env_var('PG_PASSWORD') }}", "{{ env_var('PG_PASSWORD') | as_text }}")
    )
    monkeypatch.setenv("PG_PASSWORD", "pw")
    t = read_target(project, profiles=folder, target="pg")
    assert t.url == "postgresql+psycopg://analyst:pw@db.example.com:6543/warehouse"
    with pytest.raises(UsageError, match=r"key outputs.dev.threads uses var\('x'\) without a default"):
        read_target(project, profiles=_profile_with(tmp_path, threads="{{ var('x') }}"))


@pytest.mark.parametrize("template", ["{{ modules.datetime.date.today() }}", "{{ tojson([1]) }}", "{{ log('x') }}"])
def test_dbt_names_qar_does_not_render_are_not_called_undefined_by_dbt(project, tmp_path, template):
    """dbt's profile context also has modules, tojson, log, ... (dbt debug renders them); qar
    refuses them, saying what it renders, not that dbt does not define them."""
    folder = _profile_with(tmp_path, schema=template)
    with pytest.raises(UsageError) as err:
        read_target(project, profiles=folder)
    message = str(err.value)
    assert "key outputs.dev.schema uses a name outside what qar renders" in message, message
    assert "does not define" not in message and "(not its modules, tojson, log, ...)" in message, message


@pytest.mark.parametrize("secret", ["pa{{ss}}Word-LEAK1", "pa{%ss%}Word-LEAK1", "pa{{ss Word-LEAK1", "{{ 1/0 }}LEAK1"])
def test_unrenderable_password_is_never_printed(project, tmp_path, secret):
    """A password holding {{ or {% that does not render: the key is named, the value (or any piece
    of it: Jinja's messages quote them) never, on any channel: text, JSON, JUnit, log file."""
    folder = _profile_with(tmp_path, password=secret)
    junit = tmp_path / "j.xml"
    for fmt in ("text", "json"):
        r = CliRunner().invoke(
            cli,
            ["--log-level", "debug", "scan", "--dbt-project", str(project), "--profiles-dir", str(folder),
             "--no-store", "-f", fmt, "--junit", str(junit)],
        )  # fmt: skip
        assert r.exit_code == 2, r.output
        assert "key outputs.dev.password " in r.output, r.output
        written = r.output + (junit.read_text() if junit.exists() else "")
        for piece in ("LEAK1", "Word", "'ss'", "division"):
            assert piece not in written, written


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"target": "pg"}, "uses env_var('PG_PASSWORD'), which is not set"),
        ({"target": "nope"}, "target 'nope' is not an output of profile 'qar_fixture'"),
        ({"profile": "nope"}, "profile 'nope' is not in"),
        ({"target": "spark"}, "is a 'spark' target, which qar cannot turn into a connection"),
        ({"profiles": "/nonexistent"}, "holds no profiles.yml"),
    ],
)
def test_profile_errors(project, kwargs, message):
    with pytest.raises(UsageError, match=message.replace("(", r"\(").replace(")", r"\)")):
        read_target(project, **kwargs)


def test_scan_dbt_project_reads_the_profile(project):
    r = scan("--dbt-project", str(project))
    assert r.exit_code == 0, r.output
    (s,) = json.loads(r.stdout)["scans"]
    expected = qar_sql.audit(read_target(project).url, table="main.people", columns=QI, p=2, pi_u=0.4).risk
    assert s["name"] == "people" and s["risk"] == pytest.approx(expected, rel=1e-12)
    # --url still wins over the profile; another target that cannot connect fails as it should
    r = scan("--dbt-project", str(project), "--target", "pg")
    assert r.exit_code == 2 and "PG_PASSWORD" in r.output


@pytest.mark.postgres
def test_profile_tls_settings_reach_the_connection(project, tmp_path, monkeypatch):
    """A postgres target's sslmode and sslrootcert are passed on as dbt passes them: dropped,
    `verify-full` became libpq's `prefer`, and qar sent the password to a server whose certificate
    it never checked (here: no TLS at all, or no root certificate), where dbt refuses to connect."""
    from sqlalchemy import create_engine
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import OperationalError

    require_postgres()
    u = make_url(PG_URL)
    monkeypatch.setenv("QAR_TLS_PASSWORD", u.password or "")
    folder = tmp_path / "tls"
    folder.mkdir()

    def target(sslmode: str) -> str:
        (folder / "profiles.yml").write_text(
            f"qar_fixture:\n  target: pg\n  outputs:\n    pg:\n      type: postgres\n      host: {u.host}\n"
            f"      port: {u.port or 5432}\n      user: {u.username}\n"
            "      password: \"{{ env_var('QAR_TLS_PASSWORD') }}\"\n"
            f"      dbname: {u.database}\n      schema: public\n      sslmode: {sslmode}\n"
            f"      sslrootcert: {tmp_path / 'no such root.crt'}\n"
        )
        return read_target(project, profiles=folder).url

    url = target("verify-full")
    assert url.endswith(f"?sslmode=verify-full&sslrootcert={quote(str(tmp_path / 'no such root.crt'), safe='')}")
    with pytest.raises(OperationalError):
        create_engine(url).connect().close()
    # the same profile without the requirement connects: the URL itself is sound
    with create_engine(target("disable")).connect() as c:
        assert c.exec_driver_sql("select 1").scalar() == 1


def test_select(project, manifest):
    assert select_nodes(manifest, ["people"]) == {"model.qar_fixture.people"}
    assert select_nodes(manifest, ["path:models"]) == {"model.qar_fixture.people", "model.qar_fixture.people_by_zip"}
    assert select_nodes(manifest, ["path:models/people.sql people_raw"]) == {
        "model.qar_fixture.people",
        "seed.qar_fixture.people_raw",
    }
    assert select_nodes(manifest, ["people*,path:models/people_by_zip.sql"]) == {"model.qar_fixture.people_by_zip"}
    tagged = json.loads(json.dumps(manifest))
    tagged["nodes"]["model.qar_fixture.people"]["tags"] = ["pii"]
    assert select_nodes(tagged, ["tag:pii"]) == {"model.qar_fixture.people"}
    r = scan("--dbt-project", str(project), "--select", "people")
    assert r.exit_code == 0, r.output
    assert [s["name"] for s in json.loads(r.stdout)["scans"]] == ["people"]
    for bad, message in (
        ("tag:nothing", "--select 'tag:nothing' matches no model"),
        ("people_by_zip", "picks model 'people_by_zip', which has no column with meta"),
        ("people+", "graph operator"),
        ("config:x", "the method 'config', which qar does not know"),
    ):
        r = scan("--dbt-project", str(project), "--select", bad)
        assert r.exit_code == 2 and message in r.output, (bad, r.output)


def test_select_reads_a_selector_without_a_method_as_dbt_does(project, manifest):
    """dbt reads a selector with a slash as a path, one ending in .sql/.py/.csv as a file name and
    one with a dot as a qualified name (the project's name picks all of it); qar read each as a
    model name and said 'matches no model' of models dbt selects."""
    both = {"model.qar_fixture.people", "model.qar_fixture.people_by_zip"}
    for selector, chosen in (
        ("qar_fixture.people", {"model.qar_fixture.people"}),
        ("qar_fixture.people_*", {"model.qar_fixture.people_by_zip", "seed.qar_fixture.people_raw"}),
        ("qar_fixture", both | {"seed.qar_fixture.people_raw"}),
        ("people.sql", {"model.qar_fixture.people"}),
        ("people_raw.csv", {"seed.qar_fixture.people_raw"}),
        ("models/people.sql", {"model.qar_fixture.people"}),
        ("./models/", both),
    ):
        assert select_nodes(manifest, [selector]) == chosen, selector
    for selector in ("qar_fixture.people", "people.sql", "models/people.sql"):
        r = scan("--dbt-project", str(project), "--select", selector)
        assert r.exit_code == 0 and [s["name"] for s in json.loads(r.stdout)["scans"]] == ["people"], r.output
    # A model picked alone, by any of its names, must be tagged (as by its plain name).
    for selector in ("qar_fixture.people_by_zip", "people_by_zip.sql", "path:models/people_by_zip.sql"):
        r = scan("--dbt-project", str(project), "--select", selector)
        assert r.exit_code == 2 and "picks model 'people_by_zip', which has no column with meta" in r.output, r.output
    for bad, message in (("/etc", "is an absolute path"), ("../x", "points outside the project folder")):
        r = scan("--dbt-project", str(project), "--select", bad)
        assert r.exit_code == 2 and message in r.output, (bad, r.output)


def test_select_a_folder_or_wildcard_scans_the_tagged_models_in_it(project):
    """path:models (or path:., or people*) picks people (tagged) and people_by_zip (no tagged
    column): the tagged one is scanned, as --dbt-manifest does; the whole selection was refused,
    so a folder holding any untagged model (most projects) could not be scanned. A model picked
    by its own name must still be tagged."""
    for selector in ("path:models", "path:.", "people*"):
        r = scan("--dbt-project", str(project), "--select", selector)
        assert r.exit_code == 0, (selector, r.output)
        assert [s["name"] for s in json.loads(r.stdout)["scans"]] == ["people"], selector
    r = scan("--dbt-project", str(project), "--select", "path:models people_by_zip")
    assert r.exit_code == 2 and "picks model 'people_by_zip', which has no column with meta" in r.output


def test_select_with_manifest(project):
    manifest = project / "target" / "manifest.json"
    r = scan("--dbt-manifest", str(manifest), "--url", read_target(project).url, "--select", "people")
    assert r.exit_code == 0, r.output
    r = scan("--dbt-manifest", str(manifest), "--url", read_target(project).url, "--select", "nothing")
    assert r.exit_code == 2 and "matches no model" in r.output


def test_options_that_would_be_ignored(project, monkeypatch):
    # a $QAR_PROFILE, $QAR_DBT_TARGET, $QAR_PROFILES_DIR set for dbt's own runs sets no scan's profile:
    # refused only typed (it was "--profile chooses the dbt profile of --dbt-project", exit 2)
    config = project / "qar_env.toml"
    config.write_text('[sources.f]\nurl = "f.duckdb"\n[[scan]]\ntable = "t"\n')
    for variable in ("QAR_PROFILE", "QAR_DBT_TARGET", "QAR_PROFILES_DIR"):
        with monkeypatch.context() as env:
            env.setenv(variable, str(project))
            r = CliRunner().invoke(cli, ["scan", str(config), "--no-store"])
        assert "has no effect" not in r.output and "chooses" not in r.output, (variable, r.output)
    for args, message in (
        (["qar.toml", "--profile", "x"], "--profile has no effect without --dbt-project (it chooses the dbt profile"),
        (["qar.toml", "--target", "x"], "--target has no effect without --dbt-project"),
        (["qar.toml", "--profiles-dir", "x"], "--profiles-dir has no effect without --dbt-project"),
        (["qar.toml", "--select", "people"], "--select has no effect without --dbt-project or --dbt-manifest"),
        (["--dbt-project", str(project), "--dbt-manifest", "m.json"], "not both"),
    ):
        r = CliRunner().invoke(cli, ["scan", *args, "--no-store"])
        assert r.exit_code == 2 and message in r.output, (args, r.output)


@pytest.mark.parametrize("value", ["quasi_identifer", "QI", ["quasi_identifier", "sensitiv"]])
def test_misspelt_meta_value_is_an_error(project, manifest, value):
    """56 → 35 QIs and still "OK" was the bug: a value qar does not know drops nothing silently."""
    node = manifest["nodes"]["model.qar_fixture.people"]
    node["columns"]["job"]["meta"] = {"qar": value}
    (project / "target" / "manifest.json").write_text(json.dumps(manifest))
    r = scan("--dbt-project", str(project))
    bad = value if isinstance(value, str) else value[1]
    assert r.exit_code == 2
    assert f"column 'job' has meta qar: {bad!r}, which qar does not know" in r.output
    assert "quasi_identifier, identifier, sensitive, ignore" in r.output


def test_accepted_meta_values_leave_the_column_out(project, manifest):
    node = manifest["nodes"]["model.qar_fixture.people"]
    node["columns"]["job"]["meta"] = {"qar": "sensitive"}
    (project / "target" / "manifest.json").write_text(json.dumps(manifest))
    r = scan("--dbt-project", str(project))
    (scan_,) = json.loads(r.stdout)["scans"]
    assert scan_["n_qi"] == 3  # C(3, 2): job is left out (C(4, 2) = 6 with it), nothing else
    assert "which qar does not know" not in r.output


def test_locked_warehouse_is_one_sentence(project):
    """A DuckDB file held by another process for writing (dbt build does that): exit 3, one
    sentence saying so, for qar scan and any other command."""
    warehouse = read_target(project).url
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            # held until the test closes stdin, not for a fixed time a loaded machine may outlast
            f"import duckdb, sys; c = duckdb.connect({warehouse!r}); print('held', flush=True); sys.stdin.read()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        want = f"DuckDB database {warehouse!r} is locked by another process (a running dbt build?); retry after it ends"
        r = CliRunner().invoke(cli, ["scan", "--dbt-project", str(project), "--no-store"])
        assert r.exit_code == 3 and want in r.output, r.output
        r = CliRunner().invoke(cli, ["audit", warehouse, "-t", "people", "-p", "2", "--pi-u", "0.4"])
        assert r.exit_code == 3 and want in r.output and "Traceback" not in r.output, r.output
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)


@pytest.mark.parametrize(
    "select,message",
    [
        ("", "--select '' names no model"),
        ("  ", "names no model"),
        ("x,", "--select 'x,' has an empty selector beside a comma"),
        (",people", "has an empty selector beside a comma"),
        ("people,,tag:x", "has an empty selector beside a comma"),
        ("2+people", "--select '2+people' uses a graph operator"),
        ("people+1", "uses a graph operator"),
        ("+people", "uses a graph operator"),
        ("@people", "uses a graph operator"),
        ("path:", "--select 'path:' names no path"),
        ("path:/", "--select 'path:/' is an absolute path"),
        ("path:/etc", "is an absolute path"),
        ("path:../elsewhere", "points outside the project folder"),
        ("path:models/../..", "points outside the project folder"),
        ("tag:", "names no tag"),
    ],
)
def test_select_edge_cases(project, manifest, select, message):
    """Each of these selected everything, nothing or misled (a '2+x' graph operator read as a
    name, 'x,' as a graph operator, 'path:' and 'path:/' as the whole project): now one sentence
    each, exit 2, before anything is connected."""
    with pytest.raises(UsageError, match=re.escape(message)):
        select_nodes(manifest, [select])
    r = scan("--dbt-project", str(project), "--select", select)
    assert r.exit_code == 2 and message in r.output and len(r.output.strip().splitlines()) == 1, r.output


def test_select_paths_as_dbt(manifest):
    """path: is relative to the project folder, '..' resolved inside it, a trailing / ignored."""
    models = {"model.qar_fixture.people", "model.qar_fixture.people_by_zip"}
    for path in ("models", "models/", "models/../models", "./models", "models/./"):
        assert select_nodes(manifest, [f"path:{path}"]) == models, path
    assert select_nodes(manifest, ["path:."]) == set(manifest["nodes"])
    assert select_nodes(manifest, ["path:models/people.sql"]) == {"model.qar_fixture.people"}
    assert select_nodes(manifest, ["path:models/*.sql"]) == models
    with pytest.raises(UsageError, match="matches no model"):
        select_nodes(manifest, ["path:model"])  # a folder's prefix is not the folder


def _tag_seed(manifest: dict) -> dict:
    seed = manifest["nodes"]["seed.qar_fixture.people_raw"]
    seed["columns"] = {
        c: {"name": c, "meta": {"qar": "quasi_identifier"}, "config": {"meta": {"qar": "quasi_identifier"}}} for c in QI
    }
    seed["meta"] = seed["config"]["meta"] = {"qar": {"p": 2, "pi_u": 0.4}}
    return manifest


def test_seeds_are_scanned(project, manifest):
    """A seed (or snapshot) with tagged columns is a table in the warehouse, scanned as a model
    is (qar.risk_below accepts seeds; qar scan skipped them)."""
    (project / "target" / "manifest.json").write_text(json.dumps(_tag_seed(manifest)))
    r = scan("--dbt-project", str(project))
    assert r.exit_code == 0, r.output
    scans = {s["name"]: s for s in json.loads(r.stdout)["scans"]}
    assert sorted(scans) == ["people", "people_raw"]
    want = qar_sql.audit(read_target(project).url, table="main.people_raw", columns=QI, p=2, pi_u=0.4).risk
    assert scans["people_raw"]["table"] == "main.people_raw"
    assert scans["people_raw"]["risk"] == pytest.approx(want, rel=1e-12)
    r = scan("--dbt-project", str(project), "--select", "people_raw")
    assert [s["name"] for s in json.loads(r.stdout)["scans"]] == ["people_raw"]
    # an untagged seed picked by --select is named as a seed
    manifest["nodes"]["seed.qar_fixture.people_raw"]["columns"] = {}
    (project / "target" / "manifest.json").write_text(json.dumps(manifest))
    r = scan("--dbt-project", str(project), "--select", "people_raw")
    assert r.exit_code == 2 and "picks seed 'people_raw', which has no column" in r.output, r.output


def test_manifest_of_another_adapter(project, monkeypatch):
    """--target pg after a parse for the duckdb target: the manifest's schemas are DuckDB's, so
    qar refuses before connecting anywhere, saying which parse to run."""
    monkeypatch.setenv("PG_PASSWORD", "never-printed")
    r = scan("--dbt-project", str(project), "--target", "pg")
    assert r.exit_code == 2, r.output
    assert (
        "target/manifest.json was written by dbt for a duckdb target, but target 'pg' is postgres" in r.output
        and "run dbt parse --target pg first" in r.output
    ), r.output
    assert "never-printed" not in r.output


def _damage(manifest: dict, how: str) -> dict:
    nodes = manifest["nodes"]
    people = nodes["model.qar_fixture.people"]
    if how == "node":
        nodes["model.qar_fixture.people"] = "people"
    elif how == "columns":
        people["columns"] = ["age", "sex"]
    elif how == "column":
        people["columns"]["age"] = "quasi_identifier"
    elif how == "meta":
        people["meta"] = ["qar"]
    elif how == "column meta":
        people["columns"]["age"]["meta"] = "qar"
    elif how == "config":
        people["config"] = "table"
    elif how == "tags":
        people["tags"] = {"pii": True}
    elif how == "metadata":
        manifest["metadata"] = ["duckdb"]
    elif how == "name":
        people["name"] = 7
    return manifest


@pytest.mark.parametrize(
    "how,message",
    [
        ("node", "node 'model.qar_fixture.people' has its entry of type str"),
        ("columns", "node 'model.qar_fixture.people' has columns of type list"),
        ("column", "column 'age' of node 'model.qar_fixture.people' has its entry of type str"),
        ("meta", "has meta of type list"),
        ("column meta", "column 'age' of node 'model.qar_fixture.people' has meta of type str"),
        ("config", "has config of type str"),
        ("tags", "has tags of type dict"),
        ("metadata", "the manifest has metadata of type list"),
        ("name", "has name of type int"),
    ],
)
def test_malformed_manifest_is_one_sentence(project, manifest, tmp_path, how, message):
    """A damaged manifest was 'unexpected AttributeError' (exit 3): now one sentence naming the
    node and field, exit 2, through --dbt-project and --dbt-manifest."""
    path = project / "target" / "manifest.json"
    path.write_text(json.dumps(_damage(manifest, how)))
    for args in (["--dbt-project", str(project), "--select", "people"], ["--dbt-manifest", str(path)]):
        r = scan(*args, "--url", read_target(project).url) if "--dbt-manifest" in args else scan(*args)
        assert r.exit_code == 2, r.output
        assert message in r.output and "run dbt parse" in r.output, r.output
        assert "unexpected" not in r.output and len(r.output.strip().splitlines()) == 1, r.output


def test_deeply_nested_manifest_is_one_sentence(project):
    """JSON nested 100,000 deep (200 KB) was "unexpected RecursionError" (exit 3)."""
    path = project / "target" / "manifest.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    for args in (["--dbt-project", str(project)], ["--dbt-manifest", str(path), "--url", read_target(project).url]):
        r = scan(*args)
        assert r.exit_code == 2, r.output
        assert (
            "manifest.json' is not valid JSON: nested too deep to read; point to dbt's target/manifest.json" in r.output
        ), r.output
        assert "unexpected" not in r.output and len(r.output.strip().splitlines()) == 1, r.output


def test_target_path_as_dbt_picks_it(project, manifest, tmp_path, monkeypatch):
    """The manifest is read where dbt writes it: $DBT_TARGET_PATH (dbt's --target-path), else
    target-path of dbt_project.yml, either absolute. $DBT_TARGET_PATH was not read, so qar scanned
    a stale target/manifest.json; an absolute target-path without a manifest was "unexpected
    ValueError" (exit 3)."""
    elsewhere = tmp_path / "dbt-target"
    elsewhere.mkdir()
    stale = project / "target" / "manifest.json"
    stale.write_text(json.dumps({"metadata": {}, "nodes": {}}))  # tags nothing: the stale one
    (elsewhere / "manifest.json").write_text(json.dumps(manifest))
    monkeypatch.setenv("DBT_TARGET_PATH", str(elsewhere))
    r = scan("--dbt-project", str(project))
    assert r.exit_code == 0, r.output
    assert [s["name"] for s in json.loads(r.stdout)["scans"]] == ["people"]
    monkeypatch.delenv("DBT_TARGET_PATH")
    text = (project / "dbt_project.yml").read_text()
    (project / "dbt_project.yml").write_text(text + f"\ntarget-path: {tmp_path / 'no such folder'}\n")
    r = scan("--dbt-project", str(project))
    assert r.exit_code == 2, r.output
    assert f"has no {tmp_path / 'no such folder' / 'manifest.json'}; run dbt parse" in r.output, r.output


def test_a_profile_or_target_that_is_no_name(project, tmp_path, monkeypatch):
    """profile: [a] in dbt_project.yml or target: [dev] in profiles.yml was "unexpected TypeError:
    unhashable type" (exit 3); a name from $DBT_TARGET or $DBT_PROFILE is said to come from there."""
    text = (project / "dbt_project.yml").read_text()
    (project / "dbt_project.yml").write_text(re.sub(r"(?m)^profile: .*$", "profile: [qar_fixture]", text))
    r = scan("--dbt-project", str(project))
    assert r.exit_code == 2 and "dbt_project.yml: profile is a list, not a name; write profile: NAME" in r.output, (
        r.output
    )
    (project / "dbt_project.yml").write_text(text)
    folder = tmp_path / "listed"
    folder.mkdir()
    (folder / "profiles.yml").write_text(
        PROFILES.replace("qar_fixture:\n  target: dev", "qar_fixture:\n  target: [dev]")
    )
    r = scan("--dbt-project", str(project), "--profiles-dir", str(folder))
    assert r.exit_code == 2 and "target is a list, not a name; write target: NAME" in r.output, r.output
    monkeypatch.setenv("DBT_TARGET", "nope")
    with pytest.raises(UsageError, match=r"target 'nope' \(from \$DBT_TARGET\) is not an output"):
        read_target(project)
    monkeypatch.setenv("DBT_PROFILE", "nope")
    with pytest.raises(UsageError, match=r"profile 'nope' \(from \$DBT_PROFILE\) is not in"):
        read_target(project)
