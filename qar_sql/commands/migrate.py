"""``qar migrate``: create or upgrade the results store (docs/compliance.md).

The shape of every command (``qar_sql/commands/__init__.py``); its session is the results store,
which :func:`qar_sql.compliance.store.migrate` and :func:`~qar_sql.compliance.store.status` open
and close themselves, so ``run`` takes the parameters alone.
"""

from __future__ import annotations

from qar_sql.compliance.store import MigrateResult, migrate, status
from qar_sql.parameters.store import MigrateParams

NAME = "migrate"
Params = MigrateParams


def run(params: MigrateParams, progress: object = None) -> MigrateResult:
    """The store's migrations after applying the pending ones (up to ``params.to``), or only
    their state with ``params.status`` (nothing written)."""
    return status(params.store) if params.status else migrate(params.store, to=params.to)
