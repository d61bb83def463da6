"""Result types. Frozen dataclasses: ``dataclasses.asdict`` serves JSON, the store and tests."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from qar_sql.stats.evt import TailFit


@dataclass(frozen=True)
class QIStats:
    """Counts for one quasi-identifier (a set of p columns) over the L rows."""

    index: int
    columns: tuple[str, ...]
    distinct: int  # H(j): distinct value combinations, NULL a value of its own
    singletons: int  # S(j): classes of size 1 = records unique on j
    min_class_size: int  # smallest equivalence class (k of k-anonymity); 0 for an empty table
    class_sizes: tuple[tuple[int, int], ...]  # (class size, number of classes), ascending
    rows: int  # L

    @property
    def theta(self) -> float:
        """θ(j) = H(j) / L."""
        return self.distinct / self.rows if self.rows else float("nan")

    def records_below(self, k: int) -> int:
        """Records in classes smaller than k (those violating k-anonymity on this QI)."""
        return sum(size * n for size, n in self.class_sizes if size < k)

    @property
    def is_key(self) -> bool:
        return self.rows > 0 and self.distinct == self.rows


@dataclass(frozen=True)
class ScanResult:
    """What the pushed-down scan brings back: L and per-QI counts."""

    rows: int
    columns: tuple[str, ...]
    p: int
    qis: tuple[QIStats, ...]

    @property
    def theta(self) -> np.ndarray:
        return np.array([q.distinct for q in self.qis], dtype=float) / self.rows

    @property
    def distinct(self) -> np.ndarray:
        return np.array([q.distinct for q in self.qis], dtype=np.int64)


@dataclass(frozen=True)
class AuditResult:
    """The QaR audit of one table. ``risk`` is T̂(p, α); it is None when there is no tail."""

    source: str  # passwords masked
    table: str | None
    engine: str
    engine_version: str
    rows: int
    columns: tuple[str, ...]
    p: int
    alpha: float
    pi_u: float
    pwm: str
    qis: tuple[QIStats, ...]
    fit: TailFit | None
    warnings: tuple[str, ...]
    seconds: float
    k: int = 5  # the k used for the k-anonymity summary
    column_notes: tuple[str, ...] = field(default=())

    @property
    def risk(self) -> float | None:
        return self.fit.risk if self.fit else None

    @property
    def theta(self) -> np.ndarray:
        return np.array([q.distinct for q in self.qis], dtype=float) / self.rows

    @property
    def n_qi(self) -> int:
        return len(self.qis)

    def riskiest(self, n: int = 10) -> list[QIStats]:
        """The n QIs with the largest θ (ties: more singletons first, then QI order)."""
        return sorted(self.qis, key=lambda q: (-q.distinct, -q.singletons, q.index))[:n]

    @property
    def min_class_size(self) -> int:
        return min((q.min_class_size for q in self.qis), default=0)

    @property
    def n_keys(self) -> int:
        return sum(q.is_key for q in self.qis)


# -- qar compare (qar_sql.release) ------------------------------------------------------------

#: Metrics a ``--fail-below`` threshold may name (higher is more protective for each).
THRESHOLD_METRICS = ("dtc", "cdr", "hidden_rate", "local_cloaking", "correlation_protection_rate", "mae")


@dataclass(frozen=True)
class Inference:
    """The inference attack on one target column."""

    target: str
    kind: str  # "accuracy" (categorical target) or "mae" (numeric target)
    value: float | None  # None when no record has a target value on both sides
    components: int  # axes of the projection on the other columns


@dataclass(frozen=True)
class ThetaChange:
    """One quasi-identifier's θ = distinct combinations / rows, before and after."""

    columns: tuple[str, ...]
    theta_original: float
    theta_treated: float

    @property
    def change(self) -> float:
        return self.theta_treated - self.theta_original


@dataclass(frozen=True)
class AnonymeterRisk:
    """One anonymeter evaluator's risk with its confidence interval."""

    evaluator: str  # "singling_out", "linkability", "inference"
    risk: float
    ci_low: float
    ci_high: float
    attack_rate: float
    baseline_rate: float
    detail: str = ""


@dataclass(frozen=True, eq=False)
class Distributions:
    """Per-record values behind the medians, and the first two axes, for the figures."""

    dcr: np.ndarray  # per treated record
    nndr: np.ndarray  # per treated record
    local_cloaking: np.ndarray | None  # per original record
    original_xy: np.ndarray  # (rows × 2) first two axes (a sample when the table is large)
    treated_xy: np.ndarray


@dataclass(frozen=True)
class CompareResult:
    """The privacy metrics of a treated table against its original (definitions in
    docs/compare.md). Rates are fractions 0–1; None where a metric needs what was not given."""

    original: str
    treated: str
    engine_original: str
    engine_treated: str
    rows_original: int
    rows_treated: int
    columns: tuple[str, ...]
    categorical: tuple[str, ...]
    method: str  # saiph's method: famd, pca or mca
    components: int
    explained_variance: float  # share of the total variance the kept axes carry
    link: str | None  # "key:<column>", "aligned", "treatments" or None
    dtc: float
    cdr: float
    hidden_rate: float | None
    local_cloaking: float | None
    correlation_protection_rate: float | None
    attacker_columns: tuple[str, ...]
    attacker_components: int | None
    inference: Inference | None
    p: int
    risk_original: float | None
    risk_treated: float | None
    qis: tuple[ThetaChange, ...]
    anonymeter: tuple[AnonymeterRisk, ...] | None
    notes: tuple[str, ...]
    seconds: float
    distributions: Distributions | None = field(default=None, repr=False, compare=False)

    def metric(self, name: str) -> float | None:
        """A metric by its ``--fail-below`` name."""
        if name == "mae":
            return self.inference.value if self.inference and self.inference.kind == "mae" else None
        return getattr(self, name)
