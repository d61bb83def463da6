"""qar-sql: the QaR re-identification risk of a table, computed inside the database."""

from .audit import audit
from .errors import ExitCode, QarError
from .results import AuditResult, QIStats, ScanResult

__version__ = "0.1.0"

__all__ = ["audit", "AuditResult", "QIStats", "ScanResult", "QarError", "ExitCode", "__version__"]
