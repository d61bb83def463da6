"""The optional extras of qar-sql and the one check that an extra a command needs is installed.

The base install is what the audit, records, discover, whatif, risk, uniqueness, scan and the HTML
report need; compare's projection, the figures, Arrow, the PLS predictor, the progress
bar and each database driver are extras. A command that needs one calls :func:`require` before
any work, so a missing package is one sentence naming the extra to install (exit 2), never an
ImportError halfway through a scan. The check uses ``importlib.util.find_spec``: nothing is
imported, so it costs nothing when the package is there.
"""

from __future__ import annotations

import importlib.util

from qar_sql.errors import UsageError
from qar_sql.version import __version__

#: Extra → the top-level modules it installs that qar imports, in the order a message names them.
#: pyproject.toml's [project.optional-dependencies] is the list of pins; tests/test_base_install.py
#: checks that both name the same extras.
MODULES: dict[str, tuple[str, ...]] = {
    "compare": ("saiph", "pandas", "pyarrow", "threadpoolctl"),
    "anonymeter": ("anonymeter",),
    "plot": ("matplotlib",),
    "pls": ("sklearn",),
    "arrow": ("pyarrow",),
    "progress": ("tqdm",),
    "postgres": ("psycopg",),
    "mysql": ("pymysql",),
    "snowflake": ("snowflake.sqlalchemy",),
    "bigquery": ("sqlalchemy_bigquery",),
    "spark": ("pyspark",),
    "clickhouse": ("chdb",),
    "dbt": ("dbt",),
    "docs": ("mkdocs", "mkdocstrings"),
}


def _found(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a dotted name whose parent is missing
        return False


def missing(extra: str) -> list[str]:
    """The modules of ``extra`` that cannot be imported here (empty: the extra is installed)."""
    return [m for m in MODULES[extra] if not _found(m)]


def installed(extra: str) -> bool:
    return not missing(extra)


def install_hint(extra: str) -> str:
    return f"pip install 'qar-sql[{extra}]'"


def require(extra: str, what: str, *, alternative: str = "") -> None:
    """Raise UsageError (exit 2) when ``extra`` is not installed: "``what`` needs saiph and
    pandas, which are not installed; install them with: pip install 'qar-sql[compare]'", then
    ``alternative`` (e.g. " (or leave --plot out)")."""
    gone = missing(extra)
    if not gone:
        return
    names = " and ".join(gone) if len(gone) < 3 else ", ".join(gone[:-1]) + " and " + gone[-1]
    verb, pronoun = ("is", "it") if len(gone) == 1 else ("are", "them")
    raise UsageError(
        f"{what} needs {names}, which {verb} not installed; install {pronoun} with: {install_hint(extra)}{alternative}"
    )


#: Extra → the distributions whose versions matter in a bug report (``qar --version``), the
#: driver extras first. mariadb: the MariaDB Connector/Python, an alternative driver.
DISTRIBUTIONS: dict[str, tuple[str, ...]] = {
    "postgres": ("psycopg",),
    "mysql": ("pymysql", "mariadb"),
    "snowflake": ("snowflake-sqlalchemy",),
    "bigquery": ("sqlalchemy-bigquery",),
    "spark": ("pyspark",),
    "clickhouse": ("chdb",),
    "compare": ("saiph", "pandas", "pyarrow"),
    "anonymeter": ("anonymeter",),
    "plot": ("matplotlib",),
    "pls": ("scikit-learn",),
    "arrow": ("pyarrow",),
    "progress": ("tqdm",),
    "dbt": ("dbt-core",),
}


def _version(dist: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def version_lines() -> list[str]:
    """What ``qar --version`` prints: qar, Python, DuckDB, SQLAlchemy, then each extra with any
    of its packages installed (from the installed metadata: nothing is imported, so it is fast
    and works when a package is broken)."""
    import platform
    import sys

    lines = [
        f"qar {__version__}",
        f"Python {platform.python_version()} ({platform.python_implementation()}, {sys.platform} {platform.machine()})",
        f"DuckDB {_version('duckdb') or 'not installed'}",
        f"SQLAlchemy {_version('sqlalchemy') or 'not installed'}",
    ]
    installed_extras = []
    for extra, dists in DISTRIBUTIONS.items():
        found = [f"{d} {v}" for d in dists if (v := _version(d))]
        if found:
            installed_extras.append(f"  {extra}: {', '.join(found)}")
    lines.append("extras:" if installed_extras else "extras: none (pip install 'qar-sql[postgres]', … adds them)")
    return lines + installed_extras
