"""qar-sql: the QaR re-identification risk of a table, computed inside the database.

The public API. Subpackages hold the work, by concern: ``engines`` (files, URLs, dialects, SQL
templates), ``pushdown`` (the passes that run as SQL), ``stats`` (pure numpy/scipy), ``measures``
(the audit, the classic measures of ``risk``), ``ranking`` (record contributions), ``treat``
(what-if, discover), ``release`` (a treated table against its original), ``compliance`` (results
store, scans, history, dbt), ``output`` (text, Markdown, JSON), ``cli``.
"""

# The subpackages, so that ``qar_sql.ranking.records.contributions(...)`` works after a plain
# ``import qar_sql``.
import qar_sql.ranking.eliminate  # noqa: F401
import qar_sql.ranking.influence  # noqa: F401
import qar_sql.ranking.records  # noqa: F401
from qar_sql import compliance, engines, measures, output, pushdown, ranking, stats, treat  # noqa: F401
from qar_sql.compliance.history import history
from qar_sql.compliance.scans import scan_config
from qar_sql.engines.source import Source, connect
from qar_sql.errors import ExitCode, QarError
from qar_sql.measures.audit import audit
from qar_sql.measures.classic import RiskResult, risk
from qar_sql.release.compare import compare
from qar_sql.reporting.collect import report
from qar_sql.results import AuditResult, CompareResult, QIStats, QIUniqueness, ScanResult, UniquenessResult
from qar_sql.treat.discover import discover
from qar_sql.treat.uniqueness import uniqueness
from qar_sql.treat.whatif import whatif
from qar_sql.version import __version__

__all__ = [
    "audit",
    "risk",
    "report",
    "connect",
    "Source",
    "compare",
    "CompareResult",
    "scan_config",
    "history",
    "discover",
    "whatif",
    "uniqueness",
    "UniquenessResult",
    "QIUniqueness",
    "AuditResult",
    "RiskResult",
    "QIStats",
    "ScanResult",
    "QarError",
    "ExitCode",
    "__version__",
]
