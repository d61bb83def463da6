"""qar-sql: the QaR re-identification risk of a table, computed inside the database."""

from .audit import audit
from .discover import discover
from .errors import ExitCode, QarError
from .results import AuditResult, QIStats, ScanResult
from .whatif import whatif

__version__ = "0.1.0"

# After __version__: the store records it. `scan_config`, not `scan`: qar_sql.scan is the scan module.
from .compliance import scan_config  # noqa: E402
from .history import history  # noqa: E402

__all__ = ["audit", "scan_config", "history", "discover", "whatif", "AuditResult", "QIStats", "ScanResult", "QarError", "ExitCode", "__version__"]
