"""qar-sql: the QaR re-identification risk of a table, computed inside the database.

The public API. Subpackages hold the work, by concern: ``engines`` (files, URLs, dialects, SQL
templates), ``pushdown`` (the passes that run as SQL), ``stats`` (pure numpy/scipy), ``measures``
(the audit, the classic measures of ``risk``), ``ranking`` (record contributions), ``treat``
(treatments, what-if), ``comparison`` (a treated table against its original), ``compliance``
(results store, scans, history, dbt), ``commands`` (one ``run`` per command: its parameters, its
session, its result), ``output`` (text, Markdown, JSON, CSV, HTML), ``cli``.

Every name is imported on first use (PEP 562 ``__getattr__``): ``import qar_sql`` stays fast
and loads neither scipy nor pandas, which a command such as ``qar sql`` or ``qar config`` never
needs. Each subpackage loads its modules the same way (``qar_sql/lazy.py``), so a dotted path
such as ``qar_sql.commands.records.contributions(...)`` works after a plain ``import qar_sql``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from qar_sql.version import __version__

if TYPE_CHECKING:  # the names below, typed for mypy and editors; loaded by __getattr__ at run time
    from qar_sql import (
        commands,
        comparison,
        compliance,
        engines,
        measures,
        output,
        parameters,
        pushdown,
        ranking,
        stats,
        treat,
    )
    from qar_sql.anonymization.outcome import AnonymizeResult
    from qar_sql.commands.anonymize import anonymize
    from qar_sql.commands.audit import audit
    from qar_sql.commands.discover import discover
    from qar_sql.commands.eliminate import eliminate
    from qar_sql.commands.history import history
    from qar_sql.commands.records import records
    from qar_sql.commands.release import compare, report
    from qar_sql.commands.risk import risk
    from qar_sql.commands.scan import scan_config
    from qar_sql.commands.scan import scan_config as scan
    from qar_sql.commands.uniqueness import uniqueness
    from qar_sql.commands.whatif import whatif
    from qar_sql.engines.source import Source, connect
    from qar_sql.errors import ExitCode, QarError
    from qar_sql.measures.classic import RiskResult, SudaRecords
    from qar_sql.measures.discovery import DiscoverResult
    from qar_sql.ranking.eliminate import Elimination
    from qar_sql.ranking.influence import Influence
    from qar_sql.ranking.records import Contributions
    from qar_sql.results import (
        AuditResult,
        CompareResult,
        QIStats,
        QIUniqueness,
        ScanReport,
        ScanResult,
        UniquenessResult,
    )
    from qar_sql.treat.whatif import WhatIfResult

#: Public name → "module:attribute" it is loaded from (the notation of entry points).
_NAMES = {
    **{n: f"qar_sql.commands.{n}:{n}" for n in ("audit", "records", "eliminate", "discover", "whatif", "anonymize")},
    **{n: f"qar_sql.commands.{n}:{n}" for n in ("uniqueness", "risk", "history")},
    **{n: f"qar_sql.commands.release:{n}" for n in ("compare", "report")},
    **{n: "qar_sql.commands.scan:scan_config" for n in ("scan", "scan_config")},
    **{n: f"qar_sql.engines.source:{n}" for n in ("connect", "Source")},
    **{n: f"qar_sql.results:{n}" for n in ("AuditResult", "QIStats", "ScanResult", "CompareResult", "ScanReport")},
    **{n: f"qar_sql.results:{n}" for n in ("UniquenessResult", "QIUniqueness")},
    **{n: f"qar_sql.measures.classic:{n}" for n in ("RiskResult", "SudaRecords")},
    "Contributions": "qar_sql.ranking.records:Contributions",
    "Influence": "qar_sql.ranking.influence:Influence",
    "Elimination": "qar_sql.ranking.eliminate:Elimination",
    "DiscoverResult": "qar_sql.measures.discovery:DiscoverResult",
    "WhatIfResult": "qar_sql.treat.whatif:WhatIfResult",
    "AnonymizeResult": "qar_sql.anonymization.outcome:AnonymizeResult",
    **{n: f"qar_sql.errors:{n}" for n in ("QarError", "ExitCode")},
}

# Literal, so linters and type checkers read it (tests/test_public_api.py checks it against
# _NAMES and the subpackages on disk).
__all__ = [
    "audit", "records", "eliminate", "discover", "whatif", "anonymize", "uniqueness", "compare", "risk", "report",
    "scan", "scan_config", "history", "connect", "Source", "AuditResult", "QIStats", "ScanResult", "CompareResult",
    "UniquenessResult", "QIUniqueness", "RiskResult", "Contributions", "Influence", "SudaRecords", "Elimination",
    "DiscoverResult", "WhatIfResult", "AnonymizeResult", "ScanReport", "QarError", "ExitCode", "compliance",
    "engines", "measures", "output", "pushdown", "ranking", "comparison", "commands", "parameters", "stats", "treat",
    "anonymization", "__version__",
]  # fmt: skip
#: The subpackages in __all__: the names __getattr__ imports as packages.
_SUBPACKAGES = frozenset(__all__) - set(_NAMES) - {"__version__"}


def __getattr__(name: str) -> Any:
    if name in _NAMES:
        module, _, attribute = _NAMES[name].partition(":")
        value = getattr(importlib.import_module(module), attribute)
    elif name in _SUBPACKAGES:  # whose own __getattr__ loads its modules (qar_sql/lazy.py)
        value = importlib.import_module(f"{__name__}.{name}")
    else:
        raise AttributeError(f"module 'qar_sql' has no attribute {name!r}")
    globals()[name] = value  # once: later lookups do not come here
    return value


def __dir__() -> list[str]:
    # The public names and the module's dunders; not the helpers this file imports (importlib, Any).
    return sorted({*__all__, *(name for name in globals() if name.startswith("__"))})
