"""``qar demo``: a synthetic population written into a DuckDB file (:mod:`qar_sql.demo`), then
audited over its quasi-identifier columns.

The command's shape: its parameters (:class:`~qar_sql.parameters.tail.DemoParams`) and
``run(params, progress) → result``; the session is the file it has just written.
"""

from __future__ import annotations

from qar_sql.commands import audit
from qar_sql.demo import DEMO_COLUMNS, DEMO_TABLE, write_demo
from qar_sql.engines.source import session_of
from qar_sql.parameters.tail import AuditParams, DemoParams
from qar_sql.pushdown.scan import Progress
from qar_sql.results import DemoResult, pick

NAME = "demo"
Params = DemoParams


def run(params: DemoParams, progress: Progress | None = None) -> DemoResult:
    """Write the population to ``params.path`` (table ``population``) and audit it over
    :data:`~qar_sql.demo.DEMO_COLUMNS`. An existing file is written only if it holds nothing but
    an earlier demo population, or with ``overwrite``."""
    write_demo(params.path, rows=params.rows, seed=params.seed, overwrite=params.overwrite)
    settings = AuditParams(columns=DEMO_COLUMNS, **pick(params, ("p", "alpha", "pi_u", "pwm")))
    with session_of(params.path, table=DEMO_TABLE) as session:
        return DemoResult.of(audit.run(session, settings, progress), params.path)
