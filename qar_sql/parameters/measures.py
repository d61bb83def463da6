"""The parameters of the measuring commands beside the audit: ``qar risk``, ``qar uniqueness`` and ``qar discover``."""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from qar_sql import rules
from qar_sql.errors import ParameterError, require_whole, shown
from qar_sql.parameters import fields
from qar_sql.parameters.fields import check_fields, option
from qar_sql.rules import DEFAULT_JOBS

# --- risk -------------------------------------------------------------------------------------------


#: The two conventions for a NULL key value (``--missing``).
MISSING = ("value", "wildcard")


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
    jobs: int = DEFAULT_JOBS

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
            rules.check_sampling_fraction(sampling_fraction)
        if population is not None:
            rules.check_population(population)


# --- uniqueness -------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class UniquenessParams:
    """The parameters of ``qar uniqueness`` (:mod:`qar_sql.commands.uniqueness`): the one place
    their defaults and the rules between them live; the click options and
    :func:`qar_sql.uniqueness` take their defaults from here. Checked when made, before any
    connection (a treated release is measured with the same class, its extras switched off)."""

    group_size: int
    columns: Sequence[str] | None = None
    exclude: Sequence[str] | None = None
    qid: Sequence[str] | None = None
    p: int = 3
    target: float = 0.5
    domain: str | int = "observed"
    from_marginals: bool = False
    monte_carlo: int = 0
    seed: int | None = None
    #: A what-if file (path, TOML text, dict or :class:`~qar_sql.treat.treatments.Plan`).
    treatments: Any = None
    exposed: int = 5
    exposed_qis: int = 1
    batch_size: int | None = None
    jobs: int = DEFAULT_JOBS

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> str | int:
        """What can be checked before connecting; returns the parsed domain. (numpy and the
        formulas are loaded here, not when ``qar --help`` reads the defaults.)"""
        rules.check_group_size(self.group_size)
        rules.check_target(self.target)
        monte_carlo, seed = self.monte_carlo, self.seed
        if isinstance(monte_carlo, bool) or not isinstance(monte_carlo, numbers.Integral) or monte_carlo < 0:
            raise ParameterError(
                f"--monte-carlo {shown(monte_carlo)} must be 0 (off) or a number of draws such as 10000"
            )
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0):
            # numpy's SeedSequence takes whole numbers 0 or more; anything else was "unexpected"
            raise ParameterError(f"--seed {shown(seed)} must be a whole number 0 or more, e.g. --seed 7")
        return rules.parse_domain(self.domain)


# --- discover ---------------------------------------------------------------------------------------


def _check_max_size(max_size: object) -> None:
    if not isinstance(max_size, int) or isinstance(max_size, bool) or max_size < 1:
        raise ParameterError(f"--max-size {shown(max_size)} must be a whole number of at least 1, e.g. 3")


def _check_batch_size(batch_size: int | None) -> None:
    if batch_size is not None and batch_size < 1:
        raise ParameterError(f"--batch-size {batch_size} must be at least 1")


@dataclass(frozen=True, kw_only=True)
class DiscoverParams:
    """The parameters of ``qar discover`` (:mod:`qar_sql.commands.discover`): the one place
    their defaults, their options and the rules between them live. Checked when made, before any
    connection."""

    columns: Sequence[str] | None = fields.columns()
    exclude: Sequence[str] | None = fields.exclude()
    max_size: int = option(
        3,
        help="Largest combination of columns to count.",
        flags=("--max-size", "-s"),
        kind="int",
        minimum=1,
        check=_check_max_size,
    )
    drop_null: bool = option(
        False,
        help="Leave rows with NULL in a combination's columns out of that combination (how Pastore et al. "
        "count); by default NULL is a value of its own.",
        flags=("--drop-null",),
        kind="flag",
    )
    batch_size: int | None = fields.batch_size()
    jobs: int = fields.jobs()

    def __post_init__(self) -> None:
        check_fields(self)
        _check_batch_size(self.batch_size)  # (the API's; the option's range says the same)
