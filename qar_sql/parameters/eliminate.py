"""The parameters of ``qar eliminate`` (:mod:`qar_sql.commands.eliminate`, :func:`qar_sql.eliminate`)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from qar_sql.errors import ParameterError, UsageError, require_whole

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
class EliminateParams:
    """The parameters of ``qar eliminate`` (:mod:`qar_sql.commands.eliminate`): the one place
    their defaults and the rules between them live. Checked when made, before any connection
    (``max_removed`` as a share needs the table's size: checked once it is known)."""

    columns: Sequence[str] | None = None
    exclude: Sequence[str] | None = None
    p: int = 3
    alpha: float = 0.01
    pi_u: float = 0.05
    pwm: str = "plotting"
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
    jobs: int = 2

    def __post_init__(self) -> None:
        # one ranking once, in the order given
        object.__setattr__(self, "by", tuple(dict.fromkeys(self.by)))
        self.validate()

    def validate(self) -> None:
        for name in self.by:
            if name not in RANKINGS:
                raise ParameterError(f"--by {name!r} is not a ranking; use some of {', '.join(RANKINGS)}")
        require_whole(self.step, 1, f"--step {self.step!r} must be a whole number of records, at least 1")
