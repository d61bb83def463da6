"""Privacy models for the anonymization search, as ARX defines them (``criteria/*.java``).

A model judges one equivalence class (the records sharing a generalized QI combination). The
search suppresses the records of every class that violates any model; a node (level vector) is
**anonymous** when those records are at most ``suppression_limit × rows`` (ARX's semantics).

Each model gives the SQL condition under which a class violates it, over the class aggregates
that :mod:`.evaluate` computes (aliases in :data:`AGGREGATES`):

* ``size`` — records in the class;
* ``ds`` — distinct sensitive values; ``nln`` — Σ f·ln f over the sensitive values' counts f;
* ``r1`` — the largest sensitive count; ``tail_<l>`` — the sensitive counts ranked ``l`` and
  below, summed (ARX's ``r_l + … + r_m`` of recursive (c, l)-diversity);
* ``t_<L>`` — Σ over the sensitive values ``w`` present in the class at hierarchy level ``L`` of
  ``|p_w − q_w / size| − p_w`` (``p_w`` the share of all records with ``w``, ``q_w`` the class's count).

Models and monotonicity (ARX's flags; "monotone" = if a node is anonymous, so is every
generalization of it, which lets the search tag nodes it never evaluates):

========================  ==========================================  =====================
model                     violates when                               monotone
========================  ==========================================  =====================
k-anonymity (k)           size < k                                    yes, with suppression
no singletons             size < 2 (Pastore's target: k = 2)          yes, with suppression
distinct l-diversity      ds < l                                      yes, with suppression
entropy l-diversity       ds < ⌈l⌉ or Σ f ln f > size (ln size − ln l)  only without suppression
recursive (c,l)-diversity ds < l or r1 ≥ c · tail_l                   only without suppression
t-closeness, equal        EMD = (1 + t_0) / 2 > t                     only without suppression
t-closeness, hierarchical EMD = (H + Σ_L<H t_L) / (2H) > t            only without suppression
========================  ==========================================  =====================

The hierarchical EMD is ARX's tree distance (``HierarchicalDistanceTCloseness``) in closed form:
with the sensitive hierarchy of height ``H`` (levels 0..H), the cost Σ over inner nodes of
level/H · min(positive, negative flow) equals (1/H) Σ_{L<H} of the equal-distance EMD of the
values generalized to level L; the equal distance is the case H = 1.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from qar_sql.anonymization.hierarchy import Hierarchy
from qar_sql.errors import ParameterError, require_whole

#: Class aggregates a model's condition may read (see the module docstring).
AGGREGATES = ("size", "ds", "nln", "r1", "tail_<l>", "t_<L>")


def _num(x: float) -> str:
    """A float literal SQL reads back as the same double."""
    return repr(float(x))


@dataclass(frozen=True, kw_only=True)
class Model:
    """Base of the privacy models: ``violates_sql()`` is the class condition, ``monotone(limit)``
    whether predictive tagging is sound for it under the given suppression limit."""

    @property
    def name(self) -> str:  # pragma: no cover - interface
        raise NotImplementedError

    #: The sensitive column the model reads (None: the QIs only).
    sensitive: str | None = None

    def violates_sql(self) -> str:  # pragma: no cover - interface
        raise NotImplementedError

    def monotone(self, suppression_limit: float) -> bool:
        return True

    #: The ``l`` of a ``tail_<l>`` aggregate the model reads (recursive l-diversity).
    tail: int | None = field(default=None, init=False)
    #: Whether it reads the ``t_<L>`` aggregates (t-closeness), and of which kind.
    t_kind: str | None = field(default=None, init=False)


@dataclass(frozen=True, kw_only=True)
class KAnonymity(Model):
    """Every class holds at least ``k`` records (ARX's ``KAnonymity``)."""

    k: int = 2

    def __post_init__(self) -> None:
        require_whole(self.k, 1, f"k = {self.k!r} must be a whole number of at least 1, e.g. 5")

    @property
    def name(self) -> str:
        return f"{self.k}-anonymity"

    def violates_sql(self) -> str:
        return f"size < {self.k}"


@dataclass(frozen=True, kw_only=True)
class NoSingletons(KAnonymity):
    """Pastore's target: no record alone on its QI combination — k-anonymity with k = 2."""

    k: int = 2

    @property
    def name(self) -> str:
        return "no singletons (2-anonymity)"


def _check_sensitive(sensitive: str | None, what: str) -> None:
    if not isinstance(sensitive, str) or not sensitive:
        raise ParameterError(f"{what} needs a sensitive column; name it (--sensitive COLUMN)")


@dataclass(frozen=True, kw_only=True)
class DistinctLDiversity(Model):
    """Each class holds at least ``l`` distinct sensitive values (ARX's ``DistinctLDiversity``)."""

    l: int = 2  # noqa: E741 - the model's name for it

    def __post_init__(self) -> None:
        _check_sensitive(self.sensitive, "l-diversity")
        require_whole(self.l, 1, f"l = {self.l!r} must be a whole number of at least 1, e.g. 2")

    @property
    def name(self) -> str:
        return f"distinct {self.l}-diversity on {self.sensitive}"

    def violates_sql(self) -> str:
        return f"ds < {self.l}"


@dataclass(frozen=True, kw_only=True)
class EntropyLDiversity(Model):
    """The sensitive values' Shannon entropy in each class (natural log) is at least ln l
    (ARX's ``EntropyLDiversity`` with the Shannon estimator): with counts f summing to n,
    ``Σ f ln f ≤ n (ln n − ln l)``, and at least ⌈l⌉ distinct values."""

    l: float = 2.0  # noqa: E741

    def __post_init__(self) -> None:
        _check_sensitive(self.sensitive, "l-diversity")
        if isinstance(self.l, bool) or not isinstance(self.l, int | float) or not self.l >= 1:
            raise ParameterError(f"l = {self.l!r} must be a number of at least 1, e.g. 2")

    @property
    def name(self) -> str:
        return f"entropy {self.l:g}-diversity on {self.sensitive}"

    def violates_sql(self) -> str:
        return f"ds < {math.ceil(self.l)} or nln > size * (ln(size) - {_num(math.log(self.l))})"

    def monotone(self, suppression_limit: float) -> bool:
        return suppression_limit == 0


@dataclass(frozen=True, kw_only=True)
class RecursiveCLDiversity(Model):
    """Recursive (c, l)-diversity (ARX's ``RecursiveCLDiversity``): with the class's sensitive
    counts sorted r1 ≥ r2 ≥ … ≥ rm, at least l values and ``r1 < c (r_l + … + r_m)``."""

    c: float = 1.0
    l: int = 2  # noqa: E741

    def __post_init__(self) -> None:
        _check_sensitive(self.sensitive, "l-diversity")
        require_whole(self.l, 1, f"l = {self.l!r} must be a whole number of at least 1, e.g. 2")
        if isinstance(self.c, bool) or not isinstance(self.c, int | float) or not self.c > 0:
            raise ParameterError(f"c = {self.c!r} must be a positive number, e.g. 3")
        object.__setattr__(self, "tail", self.l)

    @property
    def name(self) -> str:
        return f"recursive ({self.c:g}, {self.l})-diversity on {self.sensitive}"

    def violates_sql(self) -> str:
        return f"ds < {self.l} or r1 >= {_num(self.c)} * tail_{self.l}"

    def monotone(self, suppression_limit: float) -> bool:
        return suppression_limit == 0


@dataclass(frozen=True, kw_only=True)
class TCloseness(Model):
    """t-closeness (ARX's ``EqualDistanceTCloseness``, ``kind="equal"``, or
    ``HierarchicalDistanceTCloseness``, ``kind="hierarchical"``, which needs the sensitive
    column's hierarchy): the earth mover's distance between the class's sensitive distribution
    and the whole table's is at most ``t``."""

    t: float = 0.2
    kind: str = "equal"
    #: The sensitive column's hierarchy (``hierarchical`` only).
    hierarchy: Hierarchy | None = None

    def __post_init__(self) -> None:
        _check_sensitive(self.sensitive, "t-closeness")
        if self.kind not in ("equal", "hierarchical"):
            raise ParameterError(f"t-closeness kind {self.kind!r} is unknown; use equal or hierarchical")
        if isinstance(self.t, bool) or not isinstance(self.t, int | float) or not 0 <= self.t <= 1:
            raise ParameterError(f"t = {self.t!r} must be a number from 0 to 1, e.g. 0.2")
        if self.kind == "hierarchical" and (self.hierarchy is None or self.hierarchy.height < 2):
            raise ParameterError(
                f"hierarchical t-closeness needs a hierarchy of the sensitive column {self.sensitive!r} with two "
                "levels or more; give one, or use the equal distance"
            )
        object.__setattr__(self, "t_kind", self.kind)

    @property
    def height(self) -> int:
        """The sensitive hierarchy's height H (levels − 1); 1 for the equal distance."""
        return 1 if self.hierarchy is None or self.kind == "equal" else self.hierarchy.height - 1

    @property
    def name(self) -> str:
        return f"{self.t:g}-closeness ({self.kind} distance) on {self.sensitive}"

    def levels(self) -> range:
        """The sensitive hierarchy levels whose ``t_<L>`` the distance reads."""
        return range(self.height)

    def violates_sql(self) -> str:
        h = self.height
        terms = " + ".join(f"t_{L}" for L in self.levels())
        # EMD > t, written without a division so rounding matches ARX's val <= t test
        return f"({h} + {terms}) / {_num(2 * h)} > {_num(self.t)}"

    def monotone(self, suppression_limit: float) -> bool:
        return suppression_limit == 0


def monotone(models: Sequence[Model], suppression_limit: float) -> bool:
    """All models monotone under the suppression limit: predictive tagging is sound."""
    return all(m.monotone(suppression_limit) for m in models)


def sensitive_of(models: Sequence[Model]) -> str | None:
    """The one sensitive column the models read (None if none does)."""
    names = {m.sensitive for m in models if m.sensitive is not None}
    if len(names) > 1:
        raise ParameterError(f"the models read several sensitive columns ({', '.join(sorted(names))}); use one")
    return next(iter(names), None)
