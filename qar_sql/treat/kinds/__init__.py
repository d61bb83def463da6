"""The treatment kinds, one module each (as soda-core registers its check types): a module
declares its :class:`~qar_sql.treat.kinds.base.Kind` — its option keys, the check of their shape,
the column type it needs, its table checks and its SQL step — and :data:`KINDS` registers it.
A new kind is one file here and its line below (CONTRIBUTING.md, "A new treatment kind")."""

from __future__ import annotations

from qar_sql.treat.kinds import (
    bands,
    bottom,
    hierarchy,
    maps,
    microaggregation,
    noise,
    pram,
    shuffle,
    suppress,
    suppress_records,
    swap,
    top,
)
from qar_sql.treat.kinds.base import Kind

#: Every treatment kind by name, in the order messages list them: the recodings, then the
#: perturbative kinds.
KINDS: dict[str, Kind] = {
    module.KIND.name: module.KIND
    for module in (
        bands,
        maps,
        hierarchy,
        top,
        bottom,
        suppress,
        suppress_records,
        pram,
        noise,
        microaggregation,
        swap,
        shuffle,
    )
}
