"""The options of ``qar anonymize``'s search (hierarchies, models, metric), which ``qar report
--anonymize`` takes too: the click options of :class:`~qar_sql.parameters.treat.AnonymizeParams`'
fields."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from qar_sql.command import click_option
from qar_sql.parameters.fields import options_of
from qar_sql.parameters.treat import AnonymizeParams

F = TypeVar("F", bound=Callable)

#: The search's fields, in --help order (``qar anonymize``'s).
SEARCH = (
    "hierarchy", "hierarchies", "qid", "k", "l", "l_kind", "c", "t", "t_kind", "sensitive", "risk_below",
    "no_singletons", "suppression_limit", "metric", "gs_factor", "monotonic", "local", "drop_null",
)  # fmt: skip


def search_options(*, own: bool = True) -> Callable[[F], F]:
    """The options of the search: hierarchies, models, metric. ``own=False`` (``qar report
    --anonymize``) leaves out --k and --sensitive, which the report has already (its k and its
    classic measures' sensitive column serve the search too)."""
    fields = {f.name: (f, meta) for f, meta in options_of(AnonymizeParams)}
    names = [n for n in SEARCH if own or n not in ("k", "sensitive")]

    def decorate(f: F) -> F:
        params = getattr(f, "__click_params__", [])
        params.extend(click_option(n, *fields[n]) for n in reversed(names))
        f.__click_params__ = params  # type: ignore[attr-defined]
        return f

    return decorate
