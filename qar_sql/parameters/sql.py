"""The parameters of ``qar sql`` (and ``qar audit --show-sql``): the SQL an audit runs, rendered
without connecting (:mod:`qar_sql.commands.sql`). The audit's defaults are
:class:`~qar_sql.parameters.audit.AuditParams`'s."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from qar_sql.errors import UsageError
from qar_sql.parameters.audit import DEFAULTS


@dataclass(frozen=True, kw_only=True)
class SqlParams:
    """What ``qar sql`` renders: where the data would be read (nothing is), the QI columns and p,
    the engine's batching, and with ``one_statement`` the whole audit's tail fit (α, π_u).
    ``tail_given``: the tail options given on the command line, which only ``one_statement``
    uses (refused without it)."""

    source: str | None = None
    table: str | None = None
    columns: Sequence[str] | None = None
    p: int = DEFAULTS["p"]
    delimiter: str | None = None
    null_tokens: Sequence[str] = ()
    dialect: str | None = None
    batch_size: int | None = None
    jobs: int = DEFAULTS["jobs"]  # as the audit's, so the batches shown are the batches run
    one_statement: bool = False
    alpha: float = DEFAULTS["alpha"]
    pi_u: float = DEFAULTS["pi_u"]
    tail_given: Sequence[str] = ()

    def __post_init__(self) -> None:
        if self.tail_given and not self.one_statement:
            raise UsageError(
                f"--{self.tail_given[0].replace('_', '-')} sets the tail fit of --one-statement; "
                "the audit's scan SQL does not use it"
            )
