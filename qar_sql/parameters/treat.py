"""The parameters of ``qar whatif``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from qar_sql import rules
from qar_sql.parameters.tail import TailParams
from qar_sql.rules import DEFAULT_JOBS

# --- whatif -----------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class WhatIfParams(TailParams):
    """The parameters of ``qar whatif`` (:func:`qar_sql.treat.whatif.whatif_relation`): the one
    place their defaults and the rules between them live; :func:`qar_sql.whatif` and the click
    options take their defaults from here. Checked when made, before any connection."""

    #: The treatments file: a path, TOML text, a dict or a :class:`~qar_sql.treat.treatments.Plan`.
    treatments: Any
    qid: Sequence[str] | str | None = None
    combine: Sequence[Sequence[str]] | None = None
    only: Sequence[str] | None = None
    drop_null: bool = False
    #: T̂(p, α) before and after over the audit columns (``columns``/``exclude``).
    risk: bool = True
    key: str | None = None
    loss: bool = True
    batch_size: int | None = None
    jobs: int = DEFAULT_JOBS

    def __post_init__(self) -> None:
        if self.risk:
            rules.check_tail(self.p, self.alpha, self.pi_u)
