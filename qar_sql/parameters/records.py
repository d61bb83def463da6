"""The parameters of ``qar records`` (:mod:`qar_sql.commands.records`, :func:`qar_sql.records`)."""

from __future__ import annotations

import importlib
import os
from collections.abc import Sequence
from dataclasses import dataclass

from qar_sql.errors import ParameterError, UsageError, require_whole
from qar_sql.parameters.risk import RiskParams

#: The record scores of the exact contributions (``qar_sql.stats.contributions.SCORES``).
SCORES = ("dt", "u_plus", "u_star", "n_unique")
#: Every ``--by`` of ``qar records``: a score of the exact contributions, or another ranking.
BY = (*SCORES, "influence", "suda")
#: What ``--output`` writes.
OUTPUT_SUFFIXES = (".csv", ".parquet")


def check_audit(p, alpha, pi_u, pwm) -> None:
    """The audit's own checks of p, α, π_u and the PWM estimator (scipy: loaded only when a
    command is run, not by ``qar --help``)."""
    importlib.import_module("qar_sql.measures.audit").validate(p, alpha, pi_u, pwm)


@dataclass(frozen=True, kw_only=True)
class RecordsParams:
    """The parameters of ``qar records`` (:mod:`qar_sql.commands.records`): the one place their
    defaults and the rules between them live. ``by`` picks the mode: a score of the exact
    contributions (dt, u_plus, u_star, n_unique), ``influence`` or ``suda``. Checked when made,
    before any connection."""

    columns: Sequence[str] | None = None
    exclude: Sequence[str] | None = None
    p: int = 3
    alpha: float = 0.01
    pi_u: float = 0.05
    pwm: str = "plotting"
    key: Sequence[str] | None = None
    top: int | None = 100
    by: str = "dt"
    #: Every record in the JSON (``--all``), not only the top.
    all_records: bool = False
    #: Fetch every record's key (a generic ``--format`` such as csv writes the whole table).
    all_keys: bool = False
    #: With ``by="influence"``: exact DT too, and its correlation with the influence score.
    compare_dt: bool = False
    #: With ``by="influence"``: exact DT of this many top records, ranked by it (0: off).
    refine: int = 0
    #: With ``by="suda"``: the largest minimal sample unique (None: every column, capped).
    max_size: int | None = None
    missing: str = "value"
    sampling_fraction: float | None = None
    population: int | None = None
    #: Read every CSV column as text (applied by the session; checked here with ``by="suda"``).
    all_text: bool = False
    #: Every record's scores to this CSV or Parquet file.
    output: str | os.PathLike | None = None
    jobs: int = 2

    def __post_init__(self) -> None:
        self.validate()

    @property
    def every_key(self) -> bool:
        """Whether every record's key is fetched (--output, --all, a whole-table format)."""
        return bool(self.output or self.all_records or self.all_keys)

    def validate(self) -> None:
        """What can be checked before connecting, in the order the command always checked it."""
        output, by = self.output, self.by
        if output is not None and not str(output).lower().endswith(OUTPUT_SUFFIXES):
            raise ParameterError(f"--output {str(output)!r} must end in .csv or .parquet")
        if by not in BY:
            raise ParameterError(f"--by {by!r} is not a record score; use one of {', '.join(BY)}")
        suda_set = self.max_size is not None or self.missing != "value"
        if by != "suda" and (suda_set or self.sampling_fraction or self.population or self.all_text):
            raise UsageError(
                "--max-size, --missing, --sampling-fraction, --population and --all-text go with --by suda"
            )
        if by == "suda":
            if self.compare_dt or self.refine:
                raise UsageError("--by suda ranks by SUDA score: --store, --compare-dt and --refine do not apply")
            # --missing, --sampling-fraction, --population: the rules of qar risk's (SUDA is one of its measures)
            RiskParams(missing=self.missing, sampling_fraction=self.sampling_fraction, population=self.population)
            return
        if self.refine and by != "influence":
            raise UsageError(f"--refine goes with --by influence (--by {by} ranks every record exactly already)")
        if self.compare_dt and by != "influence":
            raise UsageError("--compare-dt goes with --by influence")
        check_audit(self.p, self.alpha, self.pi_u, self.pwm)
        if by == "influence":
            require_whole(self.top, 1, f"--top {self.top!r} must be a whole number of records, at least 1")
            require_whole(
                self.refine,
                0,
                f"--refine {self.refine!r} must be a whole number of records (0: off), e.g. --refine 200",
            )
