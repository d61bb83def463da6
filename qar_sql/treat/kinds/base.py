"""What a treatment kind is (:class:`Kind`) and the shape checks its options share.

A kind is one module of this package declaring one :class:`Kind`: its option keys, the check of
their shape (no table needed), the column type it needs, its table checks and its SQL step. The
registry (:data:`qar_sql.treat.kinds.KINDS`) lists them; :mod:`qar_sql.treat.treatments` reads a
file and binds it to a table through them, never asking which kind it holds.
"""

from __future__ import annotations

import math
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from qar_sql.errors import shown

#: ``fail(key, message)`` raises the file's error naming ``treatments.NAME.key`` (None: the table).
Fail = Callable[[str | None, str], Any]  # (perturb.Fail too: perturb imports no kind)


@dataclass(frozen=True)
class Kind:
    """One treatment kind.

    ``shape(fail, options, has_column)`` checks the options' types and ranges; ``fits(binder, t,
    column, kind, here)`` refuses a column of the wrong type (``kind``: integer, float, text or
    other where ``t`` runs; ``here``: " here" when earlier treatments changed it); ``check(binder,
    t)`` checks what else needs the table (a lookup, a parent column, data-dependent edges).

    A recoding kind's ``step(binder, t, x, kind, index)`` returns ``(expr, out, join)``: the new
    value of the column ``x`` (of ``kind``), the kind it leaves, an optional LEFT JOIN. A
    perturbative kind's ``step(binder, t, ctx, stats, local, fail)`` returns its CTEs
    (:class:`~qar_sql.treat.perturb.LayeredStep`) from the statistics ``stats`` of the column as
    the treatments before it left it; ``reads(t)`` names the columns those come from."""

    name: str
    keys: frozenset[str]
    shape: Callable[[Fail, dict[str, Any], bool], None]
    step: Callable[..., Any]
    fits: Callable[..., None] | None = None
    check: Callable[..., None] | None = None
    reads: Callable[[Any], set[str]] | None = None
    perturbative: bool = False
    #: Draws random numbers, so it needs a seed (its own or the file's).
    seeded: bool = False
    #: May change several columns at once (``columns = [...]`` instead of ``column``).
    several: bool = False
    #: A recoding kind that removes rows: ``keep(binder, t)`` is the SQL condition (a window
    #: over the rows as the chain left them) of the rows kept.
    keep: Callable[..., str] | None = None


def is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def names(fail: Fail, key: str, value: Any) -> tuple[str, ...]:
    """A perturbative treatment's list of column names (``columns``, ``by``)."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        fail(key, f'= {shown(value)} must be a list of column names, e.g. ["sex"]')
    if len(set(value)) != len(value):
        fail(key, f"= {shown(value)} lists a column twice; list each once")
    return tuple(value)


def check_seed(fail: Fail, kind: Kind, o: dict[str, Any], seed: int | None) -> None:
    """A perturbative treatment's seed: a whole number, and present (its own or the file's) when
    the kind draws random numbers."""
    if "seed" in o and not is_int(o["seed"]):
        fail("seed", f"= {shown(o['seed'])} must be a whole number, e.g. seed = 20240601")
    if kind.seeded and "seed" not in o and seed is None:
        fail(
            "seed",
            f"is missing: {kind.name} draws random numbers, and the same seed gives the same release; add "
            f"seed = {secrets.randbelow(10**9)} at the top of the file (or in this table) and keep it private",
        )


def other(fail: Fail, o: dict[str, Any]) -> None:
    """``other``: the label of a value a map or hierarchy does not cover."""
    if "other" in o and not isinstance(o["other"], str):
        fail("other", f"= {shown(o['other'])} must be a string label for unmapped values")


def threshold(fail: Fail, o: dict[str, Any], key: str) -> None:
    """Top and bottom coding's threshold (``above``/``below``) and replacement ``value``."""
    if key not in o:
        fail(key, f"is missing; add {key} = N, the coding threshold")
    elif not is_number(o[key]):
        fail(key, f"= {shown(o[key])} must be a number (the coding threshold)")
    if "value" in o and not (is_number(o["value"]) or isinstance(o["value"], str)):
        fail("value", f"= {shown(o['value'])} must be a number or a label")


def needs_numbers(binder: Any, t: Any, column: str, kind: str, fix: str, here: str = "") -> None:
    """Refuse a non-numeric column for a kind that computes with numbers."""
    if kind not in ("integer", "float"):
        binder.fail(
            t, "kind", f"= {shown(t.kind)} needs a numeric column, but {column!r} holds {kind} values{here}; {fix}"
        )


def needs_categories(binder: Any, t: Any, column: str, kind: str, here: str = "") -> None:
    """Refuse a decimal column for a kind that maps categories."""
    if kind == "float":
        binder.fail(
            t,
            "kind",
            f'= {shown(t.kind)} needs categories, but {column!r} holds decimal numbers; band it with kind = "bands" first',
        )
