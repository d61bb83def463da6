"""The engines' drivers: the hint when one is missing, and what ``qar --version`` reports (qar,
Python, DuckDB, SQLAlchemy, then each extra with any of its packages installed, the engines'
drivers first). Each engine names its own extra and packages (``Engine`` in dialects/)."""

from __future__ import annotations

from qar_sql.engines.dialects import ENGINES, engine_of, scheme_of
from qar_sql.extras import DISTRIBUTIONS, install_hint
from qar_sql.version import __version__


def driver_distributions() -> dict[str, tuple[str, ...]]:
    """Driver extra → its distributions, in the engines' order."""
    out: dict[str, tuple[str, ...]] = {}
    for e in ENGINES:
        if e.extra:
            out[e.extra] = out.get(e.extra, ()) + e.distributions
    return out


def driver_hint(url: str) -> str:
    """'; install it with: pip install 'qar-sql[mysql]' and write the URL as mysql+pymysql://…'
    for an engine with a driver extra, else ''."""
    engine = engine_of(url)
    if engine is None or engine.extra is None or not engine.url_forms:
        return ""
    scheme, backend = url.split("://", 1)[0].lower(), scheme_of(url)
    wanted = next((f for f in engine.url_forms if scheme_of(f + "://") == backend), engine.url_forms[0])
    write = "" if scheme == wanted else f" and write the URL as {wanted}://…"
    return f"; install it with: {install_hint(engine.extra)}{write}"


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
    for extra, dists in (driver_distributions() | DISTRIBUTIONS).items():
        found = [f"{d} {v}" for d in dists if (v := _version(d))]
        if found:
            installed_extras.append(f"  {extra}: {', '.join(found)}")
    lines.append("extras:" if installed_extras else "extras: none (pip install 'qar-sql[postgres]', … adds them)")
    return lines + installed_extras
