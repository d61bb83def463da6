"""The optional extras of qar-sql and the one check that an extra a command needs is installed.

The base install is what the audit, records, discover, whatif, risk, uniqueness, scan and the HTML
report need; compare's projection, the figures, Arrow, the PLS predictor, the progress
bar and each database driver are extras (a driver's extra is its engine's to name:
``Engine.extra`` in qar_sql/engines/dialects/). A command that needs one calls :func:`require` before
any work, so a missing package is one sentence naming the extra to install (exit 2), never an
ImportError halfway through a scan. The check uses ``importlib.util.find_spec``: nothing is
imported, so it costs nothing when the package is there.
"""

from __future__ import annotations

import importlib.util

from qar_sql.errors import UsageError

#: Extra → the top-level modules it installs that qar imports, in the order a message names them.
#: pyproject.toml's [project.optional-dependencies] is the list of pins; tests/test_base_install.py
#: checks that it names these extras and the engines' driver extras.
MODULES: dict[str, tuple[str, ...]] = {
    "compare": ("saiph", "pandas", "pyarrow", "threadpoolctl"),
    "anonymeter": ("anonymeter",),
    "plot": ("matplotlib",),
    "pls": ("sklearn",),
    "arrow": ("pyarrow",),
    "progress": ("tqdm",),
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


#: Extra → the distributions whose versions matter in a bug report (``qar --version``, after the
#: engines' drivers: qar_sql/engines/drivers.py).
DISTRIBUTIONS: dict[str, tuple[str, ...]] = {
    "compare": ("saiph", "pandas", "pyarrow"),
    "anonymeter": ("anonymeter",),
    "plot": ("matplotlib",),
    "pls": ("scikit-learn",),
    "arrow": ("pyarrow",),
    "progress": ("tqdm",),
    "dbt": ("dbt-core",),
}
