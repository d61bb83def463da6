"""Which function writes a result type in a format: the registry each ``output/render_<command>.py``
fills with :func:`renders` and :func:`qar_sql.output.render.render` reads. Apart from
render.py so that the renderer modules, which render.py loads when a result is first written,
do not import it back."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

Renderer = Callable[..., str]
R = TypeVar("R", bound=Renderer)

#: (result type's dotted name, format) → its renderer, filled by :func:`renders`.
RENDERERS: dict[tuple[str, str], Renderer] = {}


def type_name(cls: type) -> str:
    """A class's dotted name, the registry's key: a type is named where output/ may not import
    it (treat/ and ranking/ are above output/)."""
    return f"{cls.__module__}.{cls.__qualname__}"


def renders(result_type: type | str, *formats: str) -> Callable[[R], R]:
    """Register the decorated function as ``result_type``'s renderer (a class, or its dotted
    name) in each of ``formats``."""
    name = result_type if isinstance(result_type, str) else type_name(result_type)

    def register(fn: R) -> R:
        for fmt in formats:
            RENDERERS[name, fmt] = fn
        return fn

    return register
