"""``qar discover``, ``whatif``, ``uniqueness`` and ``compare`` in the one shape (issue 25): each
command's frozen, keyword-only parameter dataclass is the one home of its defaults (the Python
API's and the click options' are its values), checks the options before any connection, and
``run(session, params)`` on one open session gives the API function's numbers, leaving no temp
table behind."""

from __future__ import annotations

import dataclasses
import inspect
import json
import random

import pytest

import qar_sql
from qar_sql.cli.main import cli
from qar_sql.commands import compare as compare_command
from qar_sql.commands import discover as discover_command
from qar_sql.commands import uniqueness as uniqueness_command
from qar_sql.commands import whatif as whatif_command
from qar_sql.errors import ParameterError, UsageError
from qar_sql.parameters.fields import meta_of

COMMANDS = [discover_command, whatif_command, uniqueness_command, compare_command]

# The treatments of the session test: age in bands of 10 and the town map (hostile names kept).
AGE, SEX, TOWN = 'age "y"', "sex", "town; drop"
TREATMENTS = (  # (a JSON string is a TOML basic string)
    f"qid = {json.dumps([AGE, SEX, TOWN])}\n"
    f'[treatments.age10]\ncolumn = {json.dumps(AGE)}\nkind = "bands"\nwidth = 10\n'
    f'[treatments.towns]\ncolumn = {json.dumps(TOWN)}\nkind = "map"\nmap = {{ T0 = "T0-1", T1 = "T0-1" }}\n'
)


def people(n: int = 80, seed: int = 3) -> dict[str, list]:
    rng = random.Random(seed)
    return {
        AGE: [rng.randrange(18, 90) for _ in range(n)],
        SEX: [rng.choice(["F", "M", None]) for _ in range(n)],
        TOWN: [rng.choice(["T0", "T1", "T2", "T3"]) for _ in range(n)],
        "id": list(range(n)),
    }


@pytest.mark.parametrize("module", COMMANDS, ids=lambda m: m.NAME)
def test_parameters_are_frozen_keyword_only_and_hold_the_apis_defaults(module):
    cls = module.Params
    assert cls.__dataclass_params__.frozen
    with pytest.raises(TypeError):
        cls(2)  # keyword-only
    api = inspect.signature(getattr(qar_sql, module.NAME)).parameters
    shared = [
        f
        for f in dataclasses.fields(cls)
        if f.name in api and f.default is not dataclasses.MISSING and api[f.name].default is not inspect.Parameter.empty
    ]  # (an argument the API requires, such as compare's original, has no default to differ)
    assert shared, "the API function takes the parameters by the fields' names"
    for f in shared:
        assert api[f.name].default == f.default, f"qar_sql.{module.NAME}({f.name}=…) differs from {cls.__name__}"


@pytest.mark.parametrize("module", COMMANDS, ids=lambda m: m.NAME)
def test_the_click_options_show_the_parameters_defaults(module):
    fields = {f.name: f.default for f in dataclasses.fields(module.Params)}
    # An "off" flag (--no-risk) is unset by default: the field's default is its negation.
    off = {f.name for f in dataclasses.fields(module.Params) if getattr(meta_of(f), "kind", None) == "off"}
    given = (bool, int, float, str)  # (not None, (), nor click's UNSET: no default to compare)
    options = [o for o in cli.commands[module.NAME].params if o.name in fields and isinstance(o.default, given)]
    assert options
    for option in options:
        expected = not fields[option.name] if option.name in off else fields[option.name]
        assert option.default == expected, f"qar {module.NAME} --{option.name}"


def test_options_are_checked_before_any_connection(tmp_path):
    missing = str(tmp_path / "no such file.csv")  # opening it would be a SourceNotFound
    with pytest.raises(ParameterError, match="max_size=0 is not a whole number of at least 1"):
        qar_sql.discover(missing, max_size=0)
    with pytest.raises(ParameterError, match="batch_size=0 is not a whole number from 1 to 100000"):
        qar_sql.discover(missing, batch_size=0)
    with pytest.raises(ParameterError):
        qar_sql.uniqueness(missing, group_size=1)
    with pytest.raises(ParameterError, match="p = 0"):
        qar_sql.whatif(missing, treatments=TREATMENTS, p=0)
    with pytest.raises(UsageError, match="link= and aligned=True"):
        qar_sql.compare(missing, missing, link="id", aligned=True)
    with pytest.raises(ParameterError, match="impute='median' is unknown"):
        qar_sql.compare(missing, missing, impute="median")


def test_one_session_serves_every_command_with_the_api_numbers(duck):
    source, table = duck.load("people", people())
    cols = [AGE, SEX, TOWN]
    with qar_sql.connect(source, table=table) as session:
        d = discover_command.run(session, discover_command.Params(columns=cols, max_size=2))
        u = uniqueness_command.run(session, uniqueness_command.Params(columns=cols, p=2, group_size=2))
        w = whatif_command.run(session, whatif_command.Params(treatments=TREATMENTS, risk=False, loss=False))
        compared = compare_command.Params(
            treatments=TREATMENTS, columns=cols, categorical=[AGE], components=2, risk=False
        )
        c = compare_command.run(session, compare_command.prepare(compared))
        # discover's coded columns and whatif's releases were temp tables, dropped on the way out
        left = session.db.query("select table_name from duckdb_tables() where temporary")
        assert left == []
        session.db.query("select count(*) from people")  # still open for its owner
    assert d.combinations == qar_sql.discover(source, table=table, columns=cols, max_size=2).combinations
    assert u.qis == qar_sql.uniqueness(source, table=table, columns=cols, p=2, group_size=2).qis
    api_w = qar_sql.whatif(source, table=table, treatments=TREATMENTS, risk=False, loss=False)
    assert w.scenarios == api_w.scenarios
    api_c = qar_sql.compare(
        source, table=table, treatments=TREATMENTS, columns=cols, categorical=[AGE], components=2, risk=False
    )
    assert (c.dtc, c.cdr, c.hidden_rate, c.local_cloaking) == (
        api_c.dtc,
        api_c.cdr,
        api_c.hidden_rate,
        api_c.local_cloaking,
    )
