"""A profiles.yml value's work is bounded: nested range() loops (10^10 items), lipsum(10**7),
'a' * 10**10 and 2 ** (10**9) are refused at once, with one budget of 10,000 items per value."""

from __future__ import annotations

import time

import pytest

from qar_sql.compliance.dbt_jinja import render_value
from qar_sql.errors import UsageError


@pytest.mark.parametrize(
    "value",
    [
        "{% for i in range(100000) %}{% for j in range(100000) %}x{% endfor %}{% endfor %}",
        "{{ lipsum(10**7) }}",
        "{{ 'a' * 10**10 }}",
        "{{ 10**10 * ['a'] }}",
        "{{ 2 ** (10**9) }}",
    ],
)
def test_unbounded_work_is_refused_quickly(value):
    started = time.process_time()  # CPU seconds: the wall clock of a loaded machine is no bound
    with pytest.raises(UsageError, match=r"key outputs.dev.path asks for more than 10,000 items in all"):
        render_value(value, "outputs.dev.path", "profiles.yml")
    assert time.process_time() - started < 5


@pytest.mark.parametrize(
    "value,rendered",
    [
        ("{% for i in range(3) %}{{ i }}{% endfor %}", "012"),
        ("{{ 'ab' * 3 }}", "ababab"),
        ("{{ 2 ** 10 }}", "1024"),
        ("{{ 6 * 7 }}", "42"),
        ("{{ (lipsum(2) | length) > 0 }}", "True"),
    ],
)
def test_small_work_still_renders(value, rendered):
    assert render_value(value, "k", "profiles.yml") == rendered


def test_a_billion_laughs_of_yaml_aliases_is_refused_quickly():
    """Nine levels of lists of ten aliases: 10^9 values from a 600-byte file; rendering walked
    them for minutes."""
    import yaml

    levels = ['a: &a ["x","x","x","x","x","x","x","x","x","x"]']
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        levels.append(f"{name}: &{name} [{', '.join([f'*{prev}'] * 10)}]")
    data = yaml.safe_load("\n".join(levels) + "\ndev: {type: duckdb, extra: *i}\n")
    started = time.process_time()
    with pytest.raises(UsageError, match=r"key outputs.dev holds more than 100,000 values \(YAML aliases"):
        render_value(data["dev"], "outputs.dev", "profiles.yml")
    assert time.process_time() - started < 5
    assert render_value({"a": [1, {"b": "{{ 'x' }}"}]}, "outputs.dev", "profiles.yml") == {"a": [1, {"b": "x"}]}


@pytest.mark.parametrize(
    "value,why",
    [
        # A width or a repetition the item budget cannot see: each filled the memory (10 GB) or
        # ran for minutes inside qar. The values render in a child process with 1 GB and 5 s of CPU.
        ("{{ 'a'.ljust(100000 * 100000) }}", "needs more than 1 GB of memory"),
        ("{{ 'a'|center(100000 * 100000) }}", "needs more than 1 GB of memory"),
        ("{{ 'a'.zfill(100000 * 100000) }}", "needs more than 1 GB of memory"),
        ("{{ '%10000000000s' % 'a' }}", "needs more than 1 GB of memory"),
        ("{{ '{:10000000000}'.format('a') }}", "needs more than 1 GB of memory"),
        (
            "{{ ('a' * 99)|replace('', 'b' * 99)|replace('', 'c' * 99)|replace('', 'd' * 99)|replace('', 'e') }}",
            "(1 GB|100,000 characters)",
        ),
        ("{{ 'a'.ljust(1000 * 1000) }}", "renders to more than 100,000 characters"),
        (
            "{% set a = 'x' * 2000 %}{% for i in a %}{% for j in a %}{% for k in a %}{% endfor %}{% endfor %}{% endfor %}",
            "needs more than 1 GB of memory or 5 s of CPU time",
        ),
    ],
)
def test_work_the_budget_cannot_see_is_bounded_by_the_rendering_process(value, why):
    started = time.monotonic()
    with pytest.raises(
        UsageError, match=rf"^profiles.yml: key outputs.dev.host [^;]*{why}[^;]*, so qar does not use it;"
    ):
        render_value({"host": value, "port": 5432}, "outputs.dev", "profiles.yml")
    assert time.monotonic() - started < 90


def test_every_value_of_a_target_renders_in_one_process(monkeypatch):
    monkeypatch.setenv("QAR_TEST_HOST", "db.example")
    target = {"host": "{{ env_var('QAR_TEST_HOST') }}", "port": "{{ 5432 | as_number }}", "list": ["{{ 'a' }}", 3]}
    assert render_value(target, "outputs.dev", "profiles.yml") == {
        "host": "db.example",
        "port": "5432",
        "list": ["a", 3],
    }


@pytest.mark.parametrize("module", ["json", "jinja2", "qar_sql"])
def test_the_render_process_runs_no_file_of_the_working_folder(tmp_path, monkeypatch, module):
    """The child that renders a profile's values ran `python -c`, which puts the working folder
    first on sys.path: a json.py (or jinja2.py, or a qar_sql folder) in the dbt project qar scan
    runs in was imported and run, from a profile holding only env_var()."""
    marker = tmp_path / "ran"
    code = f"open({str(marker)!r}, 'w').write('ran')\n"
    if module == "qar_sql":
        (tmp_path / "qar_sql").mkdir()
        (tmp_path / "qar_sql" / "__init__.py").write_text(code)
    else:
        (tmp_path / f"{module}.py").write_text(code)
    monkeypatch.chdir(tmp_path)
    assert render_value("{{ env_var('QAR_NO_SUCH_VAR_X', 'w.duckdb') }}", "outputs.dev.path", "profiles.yml") == (
        "w.duckdb"
    )
    assert not marker.exists()


def test_the_do_statement_renders_as_in_dbt():
    """dbt's Jinja has the do extension: {% do %} in a profile was "not a valid Jinja template"."""
    assert render_value("{% do range(2) %}w.duckdb", "outputs.dev.path", "profiles.yml") == "w.duckdb"
    with pytest.raises(UsageError, match="reaches an attribute that dbt's sandbox refuses"):
        render_value("{% set l = [] %}{% do l.append(1) %}{{ l }}", "outputs.dev.path", "profiles.yml")
