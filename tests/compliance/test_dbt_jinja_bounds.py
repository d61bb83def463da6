"""A profiles.yml value's loops are bounded: nested range() loops (10^10 items) are refused at once."""

from __future__ import annotations

import time

import pytest

from qar_sql.compliance.dbt_jinja import render_value
from qar_sql.errors import UsageError


def test_nested_loops_are_refused_quickly():
    value = "{% for i in range(100000) %}{% for j in range(100000) %}x{% endfor %}{% endfor %}"
    started = time.perf_counter()
    with pytest.raises(UsageError, match="loops over more than 10,000 items"):
        render_value(value, "outputs.dev.path", "profiles.yml")
    assert time.perf_counter() - started < 5


def test_a_small_loop_still_renders():
    assert render_value("{% for i in range(3) %}{{ i }}{% endfor %}", "k", "profiles.yml") == "012"
