"""A package's modules loaded on first use (PEP 562), so that a dotted path such as
``qar_sql.commands.records.contributions(...)`` works after a plain ``import qar_sql`` without
``import qar_sql`` loading every module (and scipy, pandas) up front. Imports nothing of qar_sql:
every subpackage, ``stats`` included, may use it."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def submodules(package: str) -> Callable[[str], Any]:
    """The module ``__getattr__`` of ``package``: an unknown attribute is its submodule of that
    name, imported now; anything else is the usual AttributeError."""

    def __getattr__(name: str) -> Any:
        if not name.startswith("__"):  # dunders are probes (copy, inspect, pytest), never modules
            try:
                return importlib.import_module(f"{package}.{name}")
            except ModuleNotFoundError as exc:
                if exc.name != f"{package}.{name}":
                    raise  # the submodule exists but imports something missing: say so
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
