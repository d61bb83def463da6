"""The parameters of the record-level commands: ``qar records`` (every ``--by``) and ``qar eliminate``."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from qar_sql.errors import ParameterError, UsageError, require_whole
from qar_sql.parameters import fields
from qar_sql.parameters.fields import option
from qar_sql.parameters.measures import RiskParams
from qar_sql.parameters.needs import Needs
from qar_sql.parameters.tail import TailParams, check_tail

# --- records ----------------------------------------------------------------------------------------


#: The record scores of the exact contributions (``qar_sql.stats.contributions.SCORES``).
SCORES = ("dt", "u_plus", "u_star", "n_unique")
#: Every ``--by`` of ``qar records``: a score of the exact contributions, or another ranking.
BY = (*SCORES, "influence", "suda")
#: What ``--output`` writes.
OUTPUT_SUFFIXES = (".csv", ".parquet")


#: SUDA's options: --max-size, --missing, --sampling-fraction, --population (qar records').
SUDA = Needs(needs=("by=suda",), why="an option of the SUDA ranking")


@dataclass(frozen=True, kw_only=True)
class RecordsParams(TailParams):
    """The parameters of ``qar records`` (:mod:`qar_sql.commands.records`). ``by`` picks the
    mode: a score of the exact contributions (dt, u_plus, u_star, n_unique), ``influence`` or
    ``suda``. Checked when made, before any connection."""

    key: Sequence[str] | None = fields.key()
    top: int | None = option(
        100, help="How many of the riskiest records to show.", flags=("--top",), kind="int", minimum=1, none=True
    )
    by: str = option(
        "dt",
        help="Ranking score; ties by key order. 'influence' runs in the database without exact DT (any table "
        "size); 'suda' ranks by SUDA score on all the key columns (sdcMicro's suda2).",
        flags=("--by",),
        kind="choice",
        choices=BY,
    )
    all_records: bool = option(
        False, help="List every record in JSON, not only the top.", flags=("--all",), kind="flag"
    )
    all_keys: bool = option(
        False,
        help="Fetch every record's key, not only the top records' (the command line's whole-table formats such "
        "as csv).",
        cli=False,
    )
    compare_dt: bool = option(
        False,
        help="With --by influence: also compute exact DT and report its correlation with the influence score.",
        flags=("--compare-dt",),
        kind="flag",
        only=Needs(needs=("by=influence",), why="it compares the influence score with exact DT"),
    )
    refine: int = option(
        0,
        help="With --by influence: recompute exact DT for the N records with the largest influence score and "
        "rank those by it (settles ties near u).",
        flags=("--refine",),
        kind="int",
        minimum=0,
        only=Needs(needs=("by=influence",), why="the other rankings rank every record exactly already"),
    )
    max_size: int | None = option(
        None,
        help="With --by suda: minimal sample uniques of up to this many columns (default: all, capped at 5,000 "
        "column sets).",
        flags=("--max-size",),
        kind="int",
        only=SUDA,
    )
    missing: str = fields.missing()
    sampling_fraction: float | None = fields.sampling_fraction()
    population: int | None = fields.population()
    #: Read every CSV column as text: the session's (every ranking), as qar audit's and qar risk's.
    all_text: bool = fields.source_option("all_text")
    output: str | os.PathLike | None = option(
        None,
        help="Write every record's scores to FILE.csv or FILE.parquet.",
        flags=("--output", "-o"),
        kind="path",
    )
    jobs: int = fields.jobs()

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
        # (--max-size, --missing, --sampling-fraction, --population without --by suda, --compare-dt
        # and --refine without --by influence: their Needs, refused when typed, not from a QAR_ variable)
        if by == "suda":
            # --missing, --sampling-fraction, --population: the rules of qar risk's (SUDA is one of its measures)
            RiskParams(missing=self.missing, sampling_fraction=self.sampling_fraction, population=self.population)
            return
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
    """The parameters of ``qar eliminate`` (:mod:`qar_sql.commands.eliminate`). Checked when
    made (``max_removed`` as a share needs the table's size: checked once it is known)."""

    key: Sequence[str] | None = fields.key()
    #: The rankings, in the order given (a comma-separated text is read as parse_by reads it).
    by: Sequence[str] = option(
        ("dt", "u_plus", "u_star", "random"),
        help="Rankings, comma-separated: dt, u_plus, u_star, n_unique, entropy, pls, random, greedy.",
        flags=("--by",),
        kind="words",
    )
    step: int = option(100, help="Records removed per point.", flags=("--step",), kind="int")
    max_removed: str | int = option(
        "20%", help="Records removed at most: a count or a share of the table such as 20%.", flags=("--max",)
    )
    greedy_steps: int | None = option(
        None,
        help="Greedy steps (default: up to --max).",
        flags=("--greedy-steps",),
        kind="int",
        minimum=1,
        only=Needs(needs=("by~greedy",), why="the steps of the greedy ranking"),
    )
    seed: int = option(
        0,
        help="Seed of the random ranking and of the PLS split.",
        flags=("--seed",),
        kind="int",
        only=Needs(needs=("by~random|by~pls",), why="it seeds the random ranking and the PLS split"),
    )
    #: The value order of nominal columns for the entropy ranking: {column: values}, or the
    #: command line's COLUMN=v1,v2,... texts (read by parse_orders).
    orders: Mapping[str, Sequence] | None = option(
        None,
        help="Value order of a nominal column for entropy: COLUMN=v1,v2,... (repeatable).",
        flags=("--order",),
        multiple=True,
        only=Needs(needs=("by~entropy",), why="the value order of the entropy ranking"),
    )
    plot: str | os.PathLike | None = option(
        None, help="Draw the curves to FILE.png or FILE.svg.", flags=("--plot",), kind="path"
    )
    jobs: int = fields.jobs()

    def __post_init__(self) -> None:
        by = parse_by(self.by) if isinstance(self.by, str) else self.by
        object.__setattr__(self, "by", tuple(dict.fromkeys(by)))  # one ranking once, in the order given
        if self.orders is not None and not isinstance(self.orders, Mapping):
            object.__setattr__(self, "orders", parse_orders(self.orders))
        self.validate()

    def validate(self) -> None:
        for name in self.by:
            if name not in RANKINGS:
                raise ParameterError(f"--by {name!r} is not a ranking; use some of {', '.join(RANKINGS)}")
        require_whole(self.step, 1, f"--step {self.step!r} must be a whole number of records, at least 1")
        check_max(self.max_removed)


def check_max(value: str | int | float) -> float:
    """``--max`` read: its share in percent (``"20%"``: 20.0) or its whole number of records.
    Needs no row, so it is checked before any work."""
    text = str(value).strip()
    try:
        if text.endswith("%"):
            share = float(text[:-1])
            if not 0 < share <= 100:
                raise ParameterError(f"--max {text} must be a share in (0%, 100%], e.g. 20%")
            return share
        int(text)
    except ValueError:
        raise ParameterError(f"--max {text!r} is neither a record count nor a share such as 20%") from None
    return float(text)
