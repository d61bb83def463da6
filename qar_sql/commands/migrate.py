"""``qar migrate``: create or upgrade the results store (docs/compliance.md).

Without a SOURCE or an API function (:func:`qar_sql.compliance.store.migrate` is the library's,
and opens the store itself).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from qar_sql.command import Command, Verdict
from qar_sql.errors import ExitCode
from qar_sql.output.render import format_option
from qar_sql.parameters.store import MigrateParams

if TYPE_CHECKING:
    from qar_sql.compliance.store import MigrateResult

NAME = "migrate"
Params = MigrateParams


def run(session: None, params: MigrateParams, progress: object = None) -> MigrateResult:
    """The store's migrations after applying the pending ones (up to ``params.to``), or only
    their state with ``params.status`` (nothing written)."""
    from qar_sql.compliance.store import migrate, status

    return status(params.store) if params.status else migrate(params.store, to=params.to)


def verdict(result: MigrateResult, params: MigrateParams) -> int:
    """3 when ``--status`` finds a migration changed or unknown: the store cannot be written."""
    bad = [m for m in result.migrations if m.state in ("changed", "unknown")]
    if params.status and bad:
        reason = f"Migration {bad[0].name} is {bad[0].state}; the store cannot be written until it is fixed."
        return Verdict(int(ExitCode.RUNTIME), reason)
    return 0


COMMAND: Command[MigrateParams, MigrateResult] = Command(
    name=NAME,
    Params=MigrateParams,
    run=run,
    help="""Create or upgrade the results store: apply the pending migrations, each with its tracking
    row in one transaction.""",
    source=(),
    arguments=(),
    # No csv: the migrations are the store's state, not a result with a table.
    outputs={"fmt": format_option(own=("text", "json", "markdown"))},
    emits=("params",),
    order=("store", "status", "to", "fmt"),
    verdict=verdict,
)
