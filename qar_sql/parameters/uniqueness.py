"""The parameters of ``qar uniqueness`` (:func:`qar_sql.uniqueness`, :mod:`qar_sql.commands.uniqueness`)."""

from __future__ import annotations

import importlib
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from qar_sql.errors import ParameterError, shown


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
    jobs: int = 2

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> str | int:
        """What can be checked before connecting; returns the parsed domain. (numpy and the
        formulas are loaded here, not when ``qar --help`` reads the defaults.)"""
        birthday = importlib.import_module("qar_sql.measures.birthday")
        koot = importlib.import_module("qar_sql.stats.koot")
        birthday.check_group_size(self.group_size)
        koot.check_target(self.target)
        monte_carlo, seed = self.monte_carlo, self.seed
        if isinstance(monte_carlo, bool) or not isinstance(monte_carlo, numbers.Integral) or monte_carlo < 0:
            raise ParameterError(
                f"--monte-carlo {shown(monte_carlo)} must be 0 (off) or a number of draws such as 10000"
            )
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0):
            # numpy's SeedSequence takes whole numbers 0 or more; anything else was "unexpected"
            raise ParameterError(f"--seed {shown(seed)} must be a whole number 0 or more, e.g. --seed 7")
        return koot.parse_domain(self.domain)
