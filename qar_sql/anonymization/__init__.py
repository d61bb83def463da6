"""Anonymization search: the cheapest full-domain generalization (one hierarchy level per
quasi-identifier) plus record suppression that meets privacy models, searched inside the database.

* :mod:`.hierarchy` — generalization hierarchies (ARX's CSV files, numeric intervals);
* :mod:`.metrics` — ARX's loss metrics, pure numpy;
* :mod:`.evaluate` — node evaluation as GROUP BYs in the database (only counts come back);
* :mod:`.models` — privacy models (k-anonymity, l-diversity, t-closeness, no singletons);
* :mod:`.search` — the lattice, exhaustive and Flash-style search, :func:`.search.anonymize_session`.
"""

from typing import TYPE_CHECKING

from qar_sql.lazy import submodules

if not TYPE_CHECKING:  # to mypy, a module __getattr__ would make every name valid, typos too
    __getattr__ = submodules(__name__)  # qar_sql.<package>.<module> after a plain import qar_sql
