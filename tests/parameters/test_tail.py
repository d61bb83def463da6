"""qar audit, sql, demo and config in the one shape (issue 25): AuditParams is the one home of the
audit's defaults and option rules (the click options, ``qar config``, ``qar demo`` and
``qar_sql.audit`` read them from it), ``run(session, params)`` gives the API's numbers, and the
renderers live in ``qar_sql/output``."""

from __future__ import annotations

import dataclasses
import inspect
import json

import pytest

import qar_sql
from qar_sql import config_file as qar_config
from qar_sql.commands import audit as audit_command
from qar_sql.commands import demo as demo_command
from qar_sql.commands import settings as config_command
from qar_sql.commands import sql as sql_command
from qar_sql.demo import DEMO_COLUMNS
from qar_sql.engines.source import session_of
from qar_sql.errors import ParameterError
from qar_sql.measures import audit as measures_audit
from qar_sql.output.render import render, to_json
from qar_sql.output.render_audit import render_audit
from qar_sql.output.render_demo import next_steps, render_demo
from qar_sql.parameters.tail import DEFAULTS, AuditParams, DemoParams, SqlParams
from qar_sql.pushdown.showsql import show_one_statement, show_sql
from qar_sql.results import AuditResult
from qar_sql.stats import evt
from qar_sql.stats import interval as tail_interval


def test_every_default_is_read_from_audit_params():
    # (qar audit's options and qar_sql.audit's keywords are made from AuditParams:
    # tests/commands/test_command_protocol.py)
    for name in ("p", "alpha", "pi_u", "pwm", "k", "fail_above"):
        assert qar_config.KEYS[name] == DEFAULTS[name], name
    for name in ("p", "alpha", "pi_u", "pwm"):
        assert getattr(DemoParams(), name) == DEFAULTS[name]
        assert getattr(SqlParams(), name, DEFAULTS[name]) == DEFAULTS[name]
        assert getattr(measures_audit.Options(), name) == DEFAULTS[name]
    assert measures_audit.Options().jobs == DEFAULTS["jobs"]


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"alpha": 1.5}, "alpha = 1.5 is outside (0, 1)"),
        ({"pwm": "nope"}, "--pwm 'nope' is unknown"),
        ({"interval_level": 1.0}, "--interval-level 1.0 is not a probability"),
        ({"bootstrap": 5}, "--bootstrap 5 is not a number of resamples"),
        ({"prune": "maybe"}, "--prune 'maybe' is unknown"),
        ({"prune": "auto", "group_size": 10}, "--group-size needs every QI's class sizes"),
        ({"k": 1}, "--k 1 is not a whole number of at least 2"),
        ({"group_size": 1}, "group"),
        ({"min_exceedances": 0}, "--min-exceedances 0 is not a number of exceedances"),
        ({"fail_above": 1.5}, "--fail-above 1.5 must be a risk between 0 and 1"),
        # the first rule broken is the one named, in the audit's order: tail, then the rest
        ({"alpha": 1.5, "k": 1}, "alpha = 1.5"),
    ],
)
def test_audit_params_refuse_bad_values_when_made(given, message):
    with pytest.raises(ParameterError, match=message.replace("(", r"\(").replace(")", r"\)")):
        AuditParams(**given)


def test_the_prune_mode():
    assert AuditParams(p=3).prune_mode == "off"
    assert AuditParams(p=4).prune_mode == "auto"
    assert AuditParams(p=4, prune="off").prune_mode == "off"
    assert AuditParams(p=2, prune="auto").prune_mode == "auto"
    assert AuditParams(p=4, group_size=10).prune_mode == "off"  # the birthday measures need every QI


def test_params_are_frozen_and_keyword_only():
    with pytest.raises(TypeError):
        AuditParams(["a"])  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        AuditParams().p = 2  # type: ignore[misc]


@pytest.fixture(scope="module")
def demo_file(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("demo") / "demo.duckdb")
    result = demo_command.run(None, DemoParams(path=path, rows=600, p=2))
    return path, result


def test_run_on_a_session_is_the_api(demo_file):
    path, _ = demo_file
    columns = ("age", "sex", "postcode", "region", "marital_status")
    params = AuditParams(columns=columns, p=2, pi_u=0.2, bootstrap=200)
    with session_of(path, table="population") as s:
        ran = audit_command.run(s, params)
    api = qar_sql.audit(path, table="population", columns=columns, p=2, pi_u=0.2, bootstrap=200)
    by_keywords = measures_audit.audit(path, table="population", columns=columns, p=2, pi_u=0.2, bootstrap=200)
    for r in (ran, by_keywords):
        assert r.risk == api.risk
        assert [q.distinct for q in r.qis] == [q.distinct for q in api.qis]
        assert r.intervals == api.intervals
        assert r.source == api.source and r.table == api.table
    # and an independent count: θ of (age, sex) = distinct (age, sex) pairs / rows
    import duckdb

    with duckdb.connect(path, read_only=True) as con:
        pairs, rows = con.execute("select count(distinct (age, sex)), count(*) from population").fetchone()
    assert ran.qis[0].columns == ("age", "sex")
    assert ran.qis[0].distinct == pairs and ran.rows == rows


def test_the_demo_audits_its_columns_and_says_what_to_try(demo_file):
    path, result = demo_file
    assert result.columns == list(DEMO_COLUMNS) or tuple(result.columns) == DEMO_COLUMNS
    assert result.p == 2 and result.rows == 600
    assert result.path == path
    text = render(result, "text")
    assert text == render_demo(result, "text") and text.endswith(next_steps(path))
    assert f"qar audit {path} --table population --exclude person_id --format json\n" in text
    # JSON and Markdown are the audit's (its to_dict and renderer, along the class hierarchy)
    assert render(result, "json") == to_json(AuditResult.to_dict(result)) + "\n"
    assert next_steps(path) not in render(result, "json")
    json.loads(render(result, "json"))
    assert render(result, "markdown") == render_audit(result, "markdown")


def test_demo_params_check_the_tail_before_writing(tmp_path):
    with pytest.raises(ParameterError, match="pi_u"):
        DemoParams(path=str(tmp_path / "d.duckdb"), alpha=0.1, pi_u=0.05)
    assert not (tmp_path / "d.duckdb").exists()


def test_sql_run_is_show_sql_and_the_tail_needs_one_statement():
    where = {"source": "x.duckdb", "table": "people", "columns": ("a", "b", "c", "d", "e", "f")}
    assert sql_command.run(SqlParams(**where, p=2)) == show_sql(
        "x.duckdb", table="people", columns=where["columns"], p=2
    )
    one = sql_command.run(SqlParams(**where, one_statement=True, alpha=0.02))
    assert one == show_one_statement("x.duckdb", table="people", columns=where["columns"], alpha=0.02)


def test_config_json_keeps_its_ascii_escapes_and_refuses_nan(tmp_path):
    (tmp_path / "qar.toml").write_text("[defaults]\np = 2\n")
    found = qar_config.find(tmp_path, environ={"QAR_STORE": "é.duckdb"})
    result = config_command.run(None, config_command.ConfigParams(config=found))
    assert result.config is found
    # resolve() reads os.environ; the rendering of a non-ASCII value is what is checked here
    settings = tuple(dataclasses.replace(s, value="é.duckdb") if s.name == "store" else s for s in result.settings)
    text = render(dataclasses.replace(result, settings=settings), "json")
    assert "\\u00e9.duckdb" in text
    assert json.loads(text)["settings"]["p"]["value"] == 2
    bad = tuple(dataclasses.replace(s, value=float("nan")) if s.name == "alpha" else s for s in result.settings)
    with pytest.raises(ValueError):
        render(dataclasses.replace(result, settings=bad), "json")


def test_the_copies_of_the_defaults_outside_parameters_agree():
    """Where the audit's defaults are still written out — in modules that may not import
    ``qar_sql.parameters`` (statistics) or are not yet converted (compare, the one-statement SQL) — they equal AuditParams' (drift shows here)."""
    from qar_sql.commands.release import compare
    from qar_sql.pushdown import insql

    for function in (evt.qar_risk, evt.qar_risk_gradient, tail_interval.bootstrap_intervals, insql.risk_sql, compare):
        defaults = {n: p.default for n, p in inspect.signature(function).parameters.items()}
        for name in ("alpha", "pi_u", "pwm"):
            if name in defaults:
                assert defaults[name] == DEFAULTS[name], (function.__name__, name)


def test_the_keyword_audit_refuses_an_unknown_keyword():
    with pytest.raises(TypeError, match="nope"):
        measures_audit.audit("x.csv", nope=1)


def test_a_store_records_the_parameters_of_audit_params(demo_file, tmp_path):
    """``qar audit --store`` runs through commands.audit.recorded: the run and its parameters are
    in the store, and a source that cannot be read is a failed run (the session opens inside it)."""
    from qar_sql.compliance import store as S

    path, _ = demo_file
    store = str(tmp_path / "store.duckdb")
    params = AuditParams(columns=("age", "sex", "postcode", "region"), p=2, pi_u=0.2, bootstrap=0)
    result = audit_command.recorded(store, params, source=path, table="population")
    with pytest.raises(Exception, match="no_such_table|does not exist|not found"):
        audit_command.recorded(store, params, source=path, table="no_such_table")
    runs = S.runs(store)
    assert sorted(r.status for r in runs) == ["complete", "failed"]
    done = next(r for r in runs if r.status == "complete")
    assert done.risk == result.risk
    assert done.parameters == {"p": 2, "alpha": 0.01, "pi_u": 0.2, "pwm": "plotting", "k": 5}
    assert done.columns == ("age", "sex", "postcode", "region") and done.table == "population"
    assert result.prune == "off"  # the store keeps every QI's θ


def test_the_parameter_modules_load_no_numpy():
    """click reads the defaults when ``qar --help`` loads: the parameters stay light."""
    import subprocess
    import sys

    code = (
        "import sys; import qar_sql.parameters.tail, qar_sql.parameters.tail, qar_sql.parameters.tail; "
        "print(sorted(m for m in ('numpy', 'scipy', 'duckdb', 'sqlalchemy') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_store_records_audit_params_defaults_for_keywords_left_out(demo_file, tmp_path):
    """compliance/store.py still writes the defaults it records beside the keywords a caller
    leaves out (a scan passes them all); they must be AuditParams'."""
    from qar_sql.compliance import store as S

    path, _ = demo_file
    store = str(tmp_path / "store.duckdb")
    columns = ("age", "sex", "postcode", "region", "marital_status")
    S.recorded_audit(store, path, table="population", columns=columns, pi_u=0.2, bootstrap=0)
    (run,) = S.runs(store)
    assert run.parameters == {name: DEFAULTS[name] for name in ("p", "alpha", "pwm", "k")} | {"pi_u": 0.2}


def test_none_is_a_value_only_where_the_option_declares_it():
    """check_value let None through wherever the annotation's text held "None" (``int | None``):
    the option's metadata says it (``none=True``: records' top=None, every record)."""
    from qar_sql.parameters.fields import check_fields, option

    @dataclasses.dataclass(frozen=True)
    class Declared:
        top: int | None = option(100, help="h", flags=("--top",), kind="int", minimum=1, none=True)

    @dataclasses.dataclass(frozen=True)
    class Annotated:
        top: int | None = option(100, help="h", flags=("--top",), kind="int", minimum=1)

    check_fields(Declared(top=None))
    with pytest.raises(ParameterError, match="--top None is not a whole number of at least 1"):
        check_fields(Annotated(top=None))
