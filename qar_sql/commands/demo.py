"""``qar demo``: a synthetic population written into a DuckDB file (:mod:`qar_sql.demo`), then
audited over its quasi-identifier columns.

Without a SOURCE: ``run`` opens the file it has just written.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from qar_sql import cli_options
from qar_sql.command import Command
from qar_sql.parameters.tail import AuditParams, DemoParams

if TYPE_CHECKING:  # numpy-backed: loaded when the demo runs, not when `qar --help` loads
    from qar_sql.pushdown.scan import Progress
    from qar_sql.results import DemoResult

NAME = "demo"
Params = DemoParams


def run(session: None, params: DemoParams, progress: Progress | None = None) -> DemoResult:
    """Write the population to ``params.path`` (table ``population``) and audit it over
    :data:`~qar_sql.demo.DEMO_COLUMNS`. An existing file is written only if it holds nothing but
    an earlier demo population, or with ``overwrite``. ``session``: None (the demo opens its file)."""
    from qar_sql.commands import audit
    from qar_sql.demo import DEMO_COLUMNS, DEMO_TABLE, write_demo
    from qar_sql.engines.source import session_of
    from qar_sql.results import DemoResult, pick

    write_demo(params.path, rows=params.rows, seed=params.seed, overwrite=params.overwrite)
    settings = AuditParams(columns=DEMO_COLUMNS, **pick(params, ("p", "alpha", "pi_u", "pwm")))
    with session_of(params.path, table=DEMO_TABLE) as opened:
        return DemoResult.of(audit.run(opened, settings, progress), params.path)


COMMAND: Command[DemoParams, DemoResult] = Command(
    name=NAME,
    Params=DemoParams,
    run=run,
    help="Generate a synthetic population into DuckDB and audit it.",
    source=(),
    arguments=(),
    outputs={"fmt": cli_options.fmt, "quiet": cli_options.quiet},
    order=("rows", "seed", "path", "overwrite", "p", "alpha", "pi_u", "pwm", "fmt", "quiet"),
)
