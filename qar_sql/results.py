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
