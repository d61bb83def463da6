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
