"""``qar demo``'s output: the audit of the population (:func:`~qar_sql.output.render_audit.render_audit`,
which a :class:`~qar_sql.results.DemoResult` is) and, in text, where the population is and what
to try on it next."""

from __future__ import annotations

from qar_sql.output.registry import renders
from qar_sql.output.render_audit import render_audit
from qar_sql.results import DemoResult


def next_steps(path: str, table: str = "population") -> str:
    """The lines after the demo's text: where the population is, and two commands to try on it."""
    return (
        f"\nThe population is in {path} (table '{table}'). Try:\n"
        f"  qar audit {path} --table {table} --exclude person_id --format json\n"
        f"  qar sql {path} --table {table} --columns age,sex,postcode\n"
    )


@renders(DemoResult, "text")
def render_demo(result: DemoResult, fmt: str) -> str:
    """The demo's audit in text, then :func:`next_steps` (its JSON and Markdown are the audit's)."""
    return render_audit(result, fmt) + next_steps(result.path)
