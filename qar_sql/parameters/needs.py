"""Options that would be ignored are errors (docs/limits.md): which option has an effect only
with another, or not beside another, declared once, and the one check of it.

A field declares its relation in its option metadata (``option(..., only=Needs(...))``,
:mod:`qar_sql.parameters.fields`); a command declares those of its command-line-only options
(--format, --emit-sql, --store-in-source, ...) and of the options it shares with others in
``Command.only``. :func:`check_needs` runs once for every command, on the command line and in
the Python API, before any file is read or any connection made (:mod:`qar_sql.command`).

``concurrent``: the option has an effect only where the run's statements go to concurrent
connections (``--jobs`` on a server database); refused, with the engine's reason, on a source
whose engine runs them one at a time (DuckDB's files and frames, chdb, Spark Connect: the
``one_at_a_time`` its caller finds, :func:`qar_sql.engines.source.one_at_a_time`).

An entry names an option by its field (or click parameter) name; ``name=value`` holds when the
option has that value (its default included: ``metric=entropy``), ``name~value`` when its list
holds that value (``by~greedy``); ``a|b`` holds when either does.
Ground floor: no click here."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

from qar_sql.errors import UsageError


@dataclass(frozen=True)
class Needs:
    """``needs``: entries that must all hold for the option to have an effect (each ``a|b``: one
    of them); ``unused_with``: entries any of which leaves it without one; ``why``: what the
    option does, the clause that tells the user why (``"it caps the text's lists"``); ``concurrent``:
    it has no effect where the source's engine runs the statements one at a time."""

    needs: tuple[str, ...] = ()
    unused_with: tuple[str, ...] = ()
    why: str = ""
    concurrent: bool = False

    def within(self, names: Collection[str]) -> Needs:
        """The relation among the options ``names`` only (the Python API has no --format)."""

        def known(entry: str) -> bool:
            return all(re.split("[=~]", a)[0] in names for a in entry.split("|"))

        needs = tuple(e for e in self.needs if known(e))
        return Needs(needs, tuple(e for e in self.unused_with if known(e)), self.why, self.concurrent)


def _holds(entry: str, given: Callable[[str], bool], value: Callable[[str], Any]) -> bool:
    if "~" in entry:
        name, _, wanted = entry.partition("~")
        listed = value(name)
        return wanted in (listed.split(",") if isinstance(listed, str) else listed or ())
    name, is_value, wanted = entry.partition("=")
    if is_value:
        return str(value(name)) == wanted
    return given(name)


def _keyword(value: str) -> str:
    """An entry's value as a Python caller writes it: ``classic=False``, ``l_kind='recursive'``."""
    return value if value in ("True", "False", "None") else repr(value)


def _named(entry: str, flag: Callable[[str], str | None]) -> str:
    """``a|b=v`` as the user types it: ``--a or --b v`` (an alternative the caller has no flag
    for, as a keyword of the API only, is left out)."""
    parts = []
    for alternative in entry.split("|"):
        name, is_value, wanted = alternative.replace("~", "=").partition("=")
        shown = flag(name)
        if shown is not None:
            # (a flag and its value as typed, a keyword as passed: l_kind='recursive')
            parts.append(
                (f"{shown} {wanted}" if shown.startswith("-") else f"{shown}={_keyword(wanted)}") if is_value else shown
            )
    return " or ".join(parts)


def check_needs(
    relations: Mapping[str, Needs],
    typed: Callable[[str], bool],
    given: Callable[[str], bool],
    value: Callable[[str], Any],
    flag: Callable[[str], str | None],
    one_at_a_time: Callable[[], str | None] = lambda: None,
) -> None:
    """Refuse (exit 2) the first option ``typed`` by the user whose relation says it would be
    ignored: one sentence naming it, the option it needs or the one beside which it does nothing,
    and the fix. ``given(name)``: the option has a value other than its default (typed, a
    variable or a config file); ``value(name)``: its value; ``flag(name)``: its flag (None: the
    caller has no such option); ``one_at_a_time()``: why the source's engine runs the statements
    one at a time (None: it does not, or there is no source)."""
    for name, relation in relations.items():
        if not typed(name) or flag(name) is None:
            continue
        why = f" ({relation.why})" if relation.why else ""
        for entry in relation.needs:
            if not any(_holds(a, given, value) for a in entry.split("|")):
                needed = _named(entry, flag)
                raise UsageError(
                    f"{flag(name)} has no effect without {needed}{why}; add {needed} or leave {flag(name)} out"
                )
        for entry in relation.unused_with:
            if _holds(entry, given, value):
                raise UsageError(f"{flag(name)} has no effect with {_named(entry, flag)}{why}; leave {flag(name)} out")
        if relation.concurrent and (serial := one_at_a_time()) is not None:
            raise UsageError(f"{flag(name)} has no effect on {serial}; leave {flag(name)} out")
