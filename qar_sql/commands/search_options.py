"""The options of ``qar anonymize``'s search (hierarchies, models, metric), which ``qar report
--anonymize`` takes too: the click options of :class:`~qar_sql.parameters.treat.AnonymizeParams`'
fields."""

from __future__ import annotations

import click

from qar_sql.command import click_option
from qar_sql.parameters.fields import options_of
from qar_sql.parameters.treat import AnonymizeParams

#: The search's fields, in --help order (``qar anonymize``'s).
SEARCH = (
    "hierarchy", "hierarchies", "qid", "k", "l", "l_kind", "c", "t", "t_kind", "sensitive", "risk_below",
    "no_singletons", "suppression_limit", "metric", "gs_factor", "monotonic", "local", "drop_null",
)  # fmt: skip


def report_search_options() -> dict[str, click.Option]:
    """The click options of the search that ``qar report --anonymize`` takes, by field name: all
    but --k and --sensitive, which the report has already (its k and its classic measures'
    sensitive column serve the search too)."""
    fields = {f.name: (f, meta) for f, meta in options_of(AnonymizeParams)}
    return {n: click_option(n, *fields[n]) for n in SEARCH if n not in ("k", "sensitive")}
