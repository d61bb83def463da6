"""Anonymization search: the cheapest full-domain generalization (one hierarchy level per
quasi-identifier) plus record suppression that meets privacy models, searched inside the database.

* :mod:`.hierarchy` — generalization hierarchies (ARX's CSV files, numeric intervals);
* :mod:`.metrics` — ARX's loss metrics, pure numpy;
* :mod:`.evaluate` — node evaluation as GROUP BYs in the database (only counts come back);
* :mod:`.models` — privacy models (k-anonymity, l-diversity, t-closeness, no singletons);
* :mod:`.search` — the lattice, exhaustive and Flash-style search, :func:`.search.anonymize_session`.
"""

import importlib as _importlib
import sys as _sys
import types as _types


class _Package(_types.ModuleType):
    """``qar_sql.anonymize`` is both this package and the API function ``qar_sql.anonymize(...)``
    (:func:`qar_sql.commands.anonymize.anonymize`): importing a module of the package makes the
    package the attribute ``qar_sql.anonymize``, so the package, called, is the function."""

    def __call__(self, *args, **kwargs):
        # by name, as qar_sql.__getattr__ resolves it: the command sits above this package
        return _importlib.import_module("qar_sql.commands.anonymize").anonymize(*args, **kwargs)


_sys.modules[__name__].__class__ = _Package
