"""What every command's body is made of: its parameters from the parsed options, the session it
runs in, and the result emitted in the chosen format — so that a command is options and
``emit(run(…))``, with no rendering, file writing or connection of its own.

    params = build(RiskParams, options)
    with session(where) as s, Progress("measuring", quiet) as bar:
        result = run(s, params, bar)
    emit(result, fmt, top=top, html=report)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

import click

from qar_sql.output.render import render
from qar_sql.parameters.tail import source_keywords

if TYPE_CHECKING:  # numpy-backed: loaded when a command runs, not when ``qar --help`` loads
    from qar_sql.engines.session import Session

P = TypeVar("P")


def build(cls: type[P], options: Mapping[str, Any], **more: Any) -> P:
    """The command's parameter dataclass from the parsed ``options`` (and ``more``): the
    options of ``cls``'s fields only, an option left unset (None) taking the field's default —
    the dataclass is where defaults live."""
    names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    given = {k: v for k, v in {**options, **more}.items() if k in names and v is not None}
    return cls(**given)


@contextmanager
def session(where: Mapping[str, Any], **source_options: Any) -> Iterator[Session]:
    """The session of ``where`` (SOURCE, --table, --delimiter, --null-token; ``source_options``
    such as ``all_text``), closed on exit."""
    from qar_sql.engines.source import session_of

    with session_of(**source_keywords(where), **source_options) as s:
        yield s


def emit(result: object, fmt: str, html: Callable[[], str] | None = None, **options: Any) -> None:
    """``result`` on stdout in ``fmt``, by the renderer its type registered
    (:func:`qar_sql.output.render.render`, given ``options`` such as ``top``); ``html``: the
    command's report, which it builds from its run."""
    click.echo(render(result, fmt, html=html, **options), nl=False)
