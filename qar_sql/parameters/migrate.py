"""The parameters of ``qar migrate`` (:mod:`qar_sql.commands.migrate`)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class MigrateParams:
    """The parameters of ``qar migrate``: the one place their defaults live.

    ``store``: the results store (None: ``$QAR_STORE``, else ``qar_results.duckdb``);
    ``status``: only report which migrations are applied or pending (writes nothing); ``to``:
    apply the migrations up to this version only (checked against the migration files when run)."""

    store: str | None = None
    status: bool = False
    to: str | None = None
