"""The parameters of the record-level commands: ``qar records`` (every ``--by``) and ``qar eliminate``."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from qar_sql.errors import ParameterError, UsageError, require_whole
from qar_sql.parameters.measures import RiskParams
from qar_sql.parameters.tail import TailParams, check_tail
from qar_sql.rules import DEFAULT_JOBS

# --- records ----------------------------------------------------------------------------------------


#: The record scores of the exact contributions (``qar_sql.stats.contributions.SCORES``).
SCORES = ("dt", "u_plus", "u_star", "n_unique")
#: Every ``--by`` of ``qar records``: a score of the exact contributions, or another ranking.
BY = (*SCORES, "influence", "suda")
#: What ``--output`` writes.
OUTPUT_SUFFIXES = (".csv", ".parquet")


@dataclass(frozen=True, kw_only=True)
class RecordsParams(TailParams):
    """The parameters of ``qar records`` (:mod:`qar_sql.commands.records`): the one place their
    defaults and the rules between them live. ``by`` picks the mode: a score of the exact
    contributions (dt, u_plus, u_star, n_unique), ``influence`` or ``suda``. Checked when made,
    before any connection."""

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
    jobs: int = DEFAULT_JOBS

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
        check_tail(self.p, self.alpha, self.pi_u, self.pwm)
        if by == "influence":
            require_whole(self.top, 1, f"--top {self.top!r} must be a whole number of records, at least 1")
            require_whole(
                self.refine,
                0,
                f"--refine {self.refine!r} must be a whole number of records (0: off), e.g. --refine 200",
            )


# --- eliminate --------------------------------------------------------------------------------------


#: The rankings whose removal order is known up front (one pass over the table each).
BLOCK_RANKINGS = ("dt", "influence", "u_plus", "u_star", "n_unique", "entropy", "pls", "random")
#: Every ranking ``--by`` takes: the block ones and greedy (one record at a time).
RANKINGS = BLOCK_RANKINGS + ("greedy",)


def parse_by(text: str) -> tuple[str, ...]:
    """``--by dt,random`` → ("dt", "random"); a value naming no ranking is refused."""
    names = tuple(b.strip() for b in text.split(",") if b.strip())
    if not names:
        raise UsageError(
            f"--by {text!r} names no ranking; use one or more of dt, u_plus, u_star, n_unique, entropy, pls, "
            "random, greedy, e.g. --by dt,random"
        )
    return names


def parse_orders(items: Iterable[str]) -> dict[str, list[str]] | None:
    """``--order COLUMN=v1,v2,…`` (repeatable) → {column: values}; None when none is given."""
    order_map: dict[str, list[str]] = {}
    for item in items:
        if "=" not in item:
            raise UsageError(f"--order {item!r} must look like COLUMN=v1,v2,v3")
        col, values = item.split("=", 1)
        order_map[col] = [v for v in values.split(",")]
    return order_map or None


@dataclass(frozen=True, kw_only=True)
class EliminateParams(TailParams):
    """The parameters of ``qar eliminate`` (:mod:`qar_sql.commands.eliminate`): the one place
    their defaults and the rules between them live. Checked when made, before any connection
    (``max_removed`` as a share needs the table's size: checked once it is known)."""

    key: Sequence[str] | None = None
    by: Sequence[str] = ("dt", "u_plus", "u_star", "random")
    #: Records removed per point.
    step: int = 100
    #: Records removed at most: a count or a share of the table such as "20%".
    max_removed: str | int = "20%"
    #: Greedy steps (None: up to ``max_removed``).
    greedy_steps: int | None = None
    #: Seed of the random ranking and of the PLS split.
    seed: int = 0
    #: The value order of nominal columns for the entropy ranking: {column: values}.
    orders: Mapping[str, Sequence] | None = None
    #: Draw the curves to this PNG or SVG file.
    plot: str | os.PathLike | None = None
    jobs: int = DEFAULT_JOBS

    def __post_init__(self) -> None:
        # one ranking once, in the order given
        object.__setattr__(self, "by", tuple(dict.fromkeys(self.by)))
        self.validate()

    def validate(self) -> None:
        for name in self.by:
            if name not in RANKINGS:
                raise ParameterError(f"--by {name!r} is not a ranking; use some of {', '.join(RANKINGS)}")
        require_whole(self.step, 1, f"--step {self.step!r} must be a whole number of records, at least 1")
