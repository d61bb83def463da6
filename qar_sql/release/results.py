"""What :func:`qar_sql.compare` returns: frozen dataclasses. The JSON document (the issue's
contract) is :func:`qar_sql.output.compare.compare_dict`."""

from __future__ import annotations

from dataclasses import dataclass, field
import numpy as np

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
