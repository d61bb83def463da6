"""The parameters of ``qar whatif`` and ``qar anonymize``."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from qar_sql import rules
from qar_sql.errors import ParameterError
from qar_sql.parameters import fields
from qar_sql.parameters.fields import check_fields, option
from qar_sql.parameters.needs import Needs
from qar_sql.parameters.tail import THETA_MEASURES, TailParams

# --- whatif -----------------------------------------------------------------------------------------


def _combinations(combine: Sequence[Sequence[str] | str] | None) -> tuple[tuple[str, ...], ...] | None:
    """``combine`` as tuples of names: a text is its names, comma-separated (``--combine a,b``)."""
    if combine is None:
        return None
    return tuple(
        tuple(x.strip() for x in c.split(",") if x.strip()) if isinstance(c, str) else tuple(c) for c in combine
    )


@dataclass(frozen=True, kw_only=True)
class WhatIfParams(TailParams):
    """The parameters of ``qar whatif`` (:mod:`qar_sql.commands.whatif`). Checked when made,
    before any connection.

    ``treatments``: a path, TOML text, a dict or a :class:`~qar_sql.treat.treatments.Plan`;
    ``combine``: combinations of treatments, each a sequence of names or a text of names
    separated by commas; ``risk``: T̂(p, α) before and after over the audit columns
    (``columns``/``exclude``)."""

    treatments: Any = option(
        dataclasses.MISSING,
        help="TOML file of treatments (schema: docs/treatments.md).",
        flags=("--treatments", "-T"),
        kind="path",
        required=True,
    )
    qid: Sequence[str] | str | None = option(
        None,
        help="Quasi-identifier to count singletons on: columns, comma-separated, or a name from the file's [qis] "
        "(default: the file's qid).",
        flags=("--qid",),
        kind="names",
    )
    combine: Sequence[Sequence[str] | str] | None = option(
        None,
        help="Also try these treatments together, comma-separated, in order (repeatable); adds to the file's "
        "combinations.",
        flags=("--combine",),
        multiple=True,
    )
    only: Sequence[str] | None = option(
        None,
        help="Only this treatment or combination (names joined by '+'); repeatable.",
        flags=("--only",),
        multiple=True,
    )
    drop_null: bool = option(
        False,
        help="Drop rows with NULL in the QID first (how Pastore et al. count).",
        flags=("--drop-null",),
        kind="flag",
    )
    risk: bool = option(
        True, help="Skip T̂ before and after (one full audit per scenario).", flags=("--no-risk",), kind="off"
    )
    key: str | None = option(
        None,
        help="Column that identifies rows, for the perturbative treatments' draws (default: the file's key; "
        "without one, each row's rank over all columns).",
        flags=("--key",),
    )
    loss: bool = option(
        True,
        help="Skip the information-loss report (IL1s, correlations, utility).",
        flags=("--no-loss",),
        kind="off",
    )
    batch_size: int | None = fields.batch_size()
    jobs: int = fields.jobs()

    def __post_init__(self) -> None:
        if self.risk:
            rules.check_tail(self.p, self.alpha, self.pi_u)
        object.__setattr__(self, "combine", _combinations(self.combine))


# --- anonymize -------------------------------------------------------------------------------------

#: The loss metrics ``--metric`` may minimise (ARX's; ``entropy`` with ``--no-monotonic`` is its
#: non-monotonic variant).
METRICS = ("entropy", "loss", "precision", "discernibility", "aecs")
L_KINDS = ("distinct", "entropy", "recursive")
T_KINDS = ("equal", "hierarchical")
THETAS = THETA_MEASURES


def parse_hierarchy(items: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """``--hierarchy age=age.csv`` (repeatable) → (("age", "age.csv"), …); a TOML file alone
    (``--hierarchy levels.toml``) gives every column it defines: ("", path)."""
    out = []
    for item in items or ():
        column, sep, path = item.partition("=")
        if not sep:
            if item.lower().endswith(".toml"):
                out.append(("", item))
                continue
            raise ParameterError(
                f"{item!r} names no column; write --hierarchy COLUMN=FILE (e.g. age=age.csv), or give a TOML file "
                "of [hierarchies.<column>] tables"
            )
        if not column.strip() or not path.strip():
            raise ParameterError(f"{item!r} must be COLUMN=FILE, e.g. age=age_hierarchy.csv")
        out.append((column.strip(), path.strip()))
    return _once(out)


def _once(pairs: Sequence[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """``pairs`` with no column given two files (one was silently dropped)."""
    seen: dict[str, str] = {}
    for column, path in pairs:
        if column and column in seen and seen[column] != path:
            raise ParameterError(
                f"--hierarchy gives column {column!r} two files ({seen[column]!r} and {path!r}); give one"
            )
        seen.setdefault(column, path)
    return tuple(pairs)


def _hierarchy_pairs(items: Any) -> tuple[tuple[str, str], ...]:
    """``hierarchy`` given as pairs or as the command line's texts (one text alone too) → pairs."""
    out: list[tuple[str, str]] = []
    for item in [items] if isinstance(items, str | PurePath) else items:
        if isinstance(item, str | PurePath):
            out.extend(parse_hierarchy([str(item)]))
        elif isinstance(item, Sequence) and len(item) == 2 and all(isinstance(v, str | PurePath) for v in item):
            out.append((str(item[0]), str(item[1])))
        else:
            raise ParameterError(
                f"--hierarchy {item!r} must be COLUMN=FILE (e.g. 'age=age.csv'), a (column, file) pair or a TOML file"
            )
    return _once(out)


#: The options of qar anonymize's audit of the release (T̂ over the audit columns), which only
#: --risk-below or -p asks for (the API's risk=True too).
RISK_OF_RELEASE = Needs(needs=("risk_below|p|risk",), why="it is an option of the release's T̂")


@dataclass(frozen=True, kw_only=True)
class AnonymizeParams(TailParams):
    """The parameters of ``qar anonymize`` (:mod:`qar_sql.commands.anonymize`) and of ``qar
    report --anonymize``'s search. Checked when made, before any connection.

    ``hierarchy``: column → an ARX hierarchy CSV, or a TOML file of interval levels (its
    ``[hierarchies.<column>]`` table); ``hierarchies``: a directory of ARX's
    ``<name>_hierarchy_<column>.csv`` files. ``columns``/``exclude``/``p``/``alpha``/``pi_u``/
    ``pwm``/``theta``: the audit of ``risk_below`` (as ``qar audit``)."""

    hierarchy: Mapping[str, str] | Sequence[tuple[str, str]] = option(
        (),
        help="COLUMN=FILE: the column's ARX hierarchy CSV (';'-separated, one row per value, level i in field i), "
        "or a TOML file of interval levels ([hierarchies.COLUMN] widths = [5, 10, 20]); repeatable.",
        flags=("--hierarchy",),
        multiple=True,
        parse=parse_hierarchy,
    )
    hierarchies: str | None = option(
        None,
        help="Directory of ARX's <name>_hierarchy_<column>.csv files, one per QI column.",
        flags=("--hierarchies",),
        kind="dir",
    )
    #: Interval levels for numeric columns without a file: column → {widths, bottom?, top?, origin?}.
    intervals: Mapping[str, Mapping[str, Any]] | None = option(
        None, help="Column → {widths, bottom?, top?, origin?}: interval levels without a file.", cli=False
    )
    qid: Sequence[str] | None = option(
        None,
        help="The QI columns, in order (default: every column given a hierarchy).",
        flags=("--qid",),
        kind="names",
    )
    k: int | None = option(
        None, help="k-anonymity: every class of the release has k records.", flags=("--k",), kind="int", minimum=2
    )
    l: int | None = option(  # noqa: E741 - ARX's and the literature's name
        None, help="l-diversity of --sensitive in every class.", flags=("--l",), kind="int", minimum=2
    )
    l_kind: str = option(
        "distinct",
        help="Which l-diversity.",
        flags=("--l-kind",),
        kind="choice",
        choices=L_KINDS,
        only=Needs(needs=("l",), why="the kind of l-diversity"),
    )
    c: float | None = option(
        None,
        help="c of recursive (c, l)-diversity.",
        flags=("--c",),
        kind="float",
        only=Needs(needs=("l_kind=recursive",), why="recursive (c, l)-diversity's c"),
    )
    t: float | None = option(
        None, help="t-closeness of --sensitive in every class.", flags=("--t",), kind="float", minimum=0, maximum=1
    )
    t_kind: str = option(
        "equal",
        help="Distance of t-closeness.",
        flags=("--t-kind",),
        kind="choice",
        choices=T_KINDS,
        only=Needs(needs=("t",), why="the distance of t-closeness"),
    )
    sensitive: str | None = option(
        None, help="The sensitive column of --l and --t (never a QI column).", flags=("--sensitive",)
    )
    risk_below: float | None = option(
        None,
        help="The QaR target: T̂(p, α) of the release at most this, over the audit columns (--columns/--exclude, "
        "generalized where they have a hierarchy).",
        flags=("--risk-below",),
        kind="float",
        check=rules.check_risk_below,
    )
    #: ``risk_below``'s p was given (-p): T̂ of the release is reported even without a target.
    risk: bool = option(
        False, help="Report T̂(p, α) of the release without a target (-p given on the command line).", cli=False
    )
    no_singletons: bool = option(
        False, help="Pastore's target: no record unique on the QID.", flags=("--no-singletons",), kind="flag"
    )
    suppression_limit: float = option(
        0.0,
        help="Share of records that may be suppressed (removed) to meet the models, e.g. 0.04.",
        flags=("--suppression-limit",),
        kind="float",
    )
    metric: str = option(
        "entropy",
        help="The loss minimised (ARX's).",
        flags=("--metric",),
        kind="choice",
        choices=METRICS,
    )
    gs_factor: float = option(
        0.5,
        help="ARX's generalization/suppression factor: 0.5 weighs both the same, 0 only suppression, 1 only "
        "generalization.",
        flags=("--gs-factor",),
        kind="float",
        minimum=0,
        maximum=1,
    )
    monotonic: bool = option(
        True,
        help="The monotonic variant of the entropy metric (ARX's: suppressed records add no loss).",
        flags=("--monotonic/--no-monotonic",),
        kind="flag",
        # (the two variants differ only in what suppressed records add)
        only=Needs(needs=("metric=entropy", "suppression_limit"), why="a variant of the entropy metric"),
    )
    local: bool = option(
        False,
        help="Also Pastore's local recoding: the chosen levels applied only to the records unique on the QID, "
        "compared with the global release.",
        flags=("--local",),
        kind="flag",
    )
    drop_null: bool = option(
        False,
        help="Leave out the rows with NULL in a QI column first (how Pastore et al. count).",
        flags=("--drop-null",),
        kind="flag",
    )
    theta: str = option(
        "distinct",
        help="θ of --risk-below, as qar audit's.",
        flags=("--theta",),
        kind="choice",
        choices=THETAS,
        only=RISK_OF_RELEASE,
    )
    jobs: int = fields.jobs()
    batch_size: int | None = fields.batch_size()

    def __post_init__(self) -> None:
        if not isinstance(self.hierarchy, Mapping):  # the API's "age=age.csv" texts, as the command line's
            object.__setattr__(self, "hierarchy", _hierarchy_pairs(self.hierarchy))
        if all(x is None for x in (self.k, self.l, self.t, self.risk_below)) and not self.no_singletons:
            raise ParameterError(
                "no privacy model given; add one or more of --k 5, --l 2 --sensitive COLUMN, --t 0.2 --sensitive "
                "COLUMN, --risk-below 0.2 or --no-singletons"
            )
        check_fields(self)
        for opt, value in (("--l", self.l), ("--t", self.t)):
            if value is not None and not self.sensitive:
                raise ParameterError(f"{opt} needs the sensitive column; add --sensitive COLUMN")
        if self.l_kind == "recursive" and self.l is not None and (self.c is None or self.c <= 0):
            raise ParameterError("--l-kind recursive needs --c, a positive number (e.g. --c 3)")
        if not (isinstance(self.suppression_limit, int | float) and 0 <= self.suppression_limit < 1):
            raise ParameterError(
                f"--suppression-limit {self.suppression_limit!r} must be a share of rows in [0, 1), e.g. 0.04"
            )
        if self.sensitive and self.qid and self.sensitive in self.qid:
            raise ParameterError(f"--sensitive {self.sensitive!r} is in --qid; a sensitive column is never a QI")
        if self.measures_risk:
            self.validate()

    @property
    def hierarchy_items(self) -> Sequence[tuple[str, str]]:
        """(column, file) of ``hierarchy``, given as a mapping or as pairs ("" for a TOML file of
        every column it defines)."""
        h = self.hierarchy
        return list(h.items()) if isinstance(h, Mapping) else list(h)

    @property
    def measures_risk(self) -> bool:
        """Whether T̂ of the release is computed (``--risk-below`` or ``-p`` given)."""
        return self.risk_below is not None or self.risk

    @property
    def smallest(self) -> int:
        """The smallest class the class-size models allow (k, 2 for no singletons, else 1)."""
        return max(self.k or 1, 2 if self.no_singletons else 1)
