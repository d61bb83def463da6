"""The parameters of ``qar risk`` (:func:`qar_sql.risk`, :mod:`qar_sql.commands.risk`)."""

from __future__ import annotations

import importlib
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass

from qar_sql.errors import ParameterError, require_whole, shown

#: The two conventions for a NULL key value (``--missing``).
MISSING = ("value", "wildcard")


def popmodels():
    """The population models (scipy: loaded only when a population is checked, not by ``qar --help``)."""
    return importlib.import_module("qar_sql.stats.population")


@dataclass(frozen=True, kw_only=True)
class RiskParams:
    """The parameters of ``qar risk`` (:mod:`qar_sql.commands.risk`): the one place their defaults
    and the rules between them live; the click options, :func:`qar_sql.risk` and the report take
    their defaults from here. Checked when made (:meth:`validate`), before any connection."""

    columns: Sequence[str] | None = None
    exclude: Sequence[str] | None = None
    p: int | None = None
    weight: str | None = None
    sensitive: Sequence[str] = ()
    ordered: Sequence[str] = ()
    missing: str = "value"
    sampling_fraction: float | None = None
    population: int | None = None
    risk_threshold: float = 0.2
    l_threshold: int = 2
    t_threshold: float = 0.2
    per_record: str | os.PathLike | None = None
    key: Sequence[str] | None = None
    suda_max_size: int | None = None
    jobs: int = 2

    def __post_init__(self) -> None:
        self.validate()
        if self.suda_max_size is not None and self.suda_max_size < 1:
            raise ParameterError(
                f"--suda-max-size {self.suda_max_size} must be at least 1 (columns in a minimal sample unique)"
            )

    def validate(self) -> None:
        """What can be checked before connecting."""
        missing, risk_threshold, l_threshold, t_threshold = (
            self.missing, self.risk_threshold, self.l_threshold, self.t_threshold
        )  # fmt: skip
        population, sampling_fraction = self.population, self.sampling_fraction
        if missing not in MISSING:
            raise ParameterError(
                f"--missing {missing!r} is not a convention; use value (NULL is a value of its own) "
                "or wildcard (NULL matches any value, as sdcMicro)"
            )
        if not (0.0 <= risk_threshold <= 1.0) or math.isnan(risk_threshold):
            raise ParameterError(f"--risk-threshold {shown(risk_threshold)} must be in [0, 1], e.g. 0.2 (one in five)")
        require_whole(l_threshold, 1, f"--l {shown(l_threshold)} must be a whole number of at least 1, e.g. 2")
        if not (0.0 <= t_threshold <= 1.0) or math.isnan(t_threshold):
            raise ParameterError(f"--t {shown(t_threshold)} must be in [0, 1], e.g. 0.2")
        if population is not None and sampling_fraction is not None:
            raise ParameterError("give either --population or --sampling-fraction, not both")
        if sampling_fraction is not None:
            popmodels().population_size(1, sampling_fraction=sampling_fraction)  # range check
        if population is not None:
            popmodels().check_population(population)
