"""The parameters of ``qar demo`` (:mod:`qar_sql.commands.demo`): the synthetic population it
writes and the audit it runs on it, with the audit's defaults
(:class:`~qar_sql.parameters.audit.AuditParams`)."""

from __future__ import annotations

from dataclasses import dataclass

from qar_sql.parameters.audit import DEFAULTS, check_tail

#: How many people the demo generates, at least and at most (``--rows``).
MIN_ROWS, MAX_ROWS = 2, 5_000_000


@dataclass(frozen=True, kw_only=True)
class DemoParams:
    """Where the population goes (``path``, a DuckDB file; ``overwrite`` a file that holds other
    tables), how many people and from which seed, and the audit's p, α, π_u and PWM estimator.
    Checked when made."""

    path: str = "qar_demo.duckdb"
    rows: int = 100_000
    seed: int = 20261122
    overwrite: bool = False
    p: int = DEFAULTS["p"]
    alpha: float = DEFAULTS["alpha"]
    pi_u: float = DEFAULTS["pi_u"]
    pwm: str = DEFAULTS["pwm"]

    def __post_init__(self) -> None:
        check_tail(self.p, self.alpha, self.pi_u, self.pwm)
