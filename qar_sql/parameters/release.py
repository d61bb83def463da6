"""The parameters of ``qar compare`` (a treated release against its original)."""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from qar_sql.errors import ParameterError, UsageError, require_whole, shown
from qar_sql.parameters.tail import TailParams

# --- compare ----------------------------------------------------------------------------------------


#: Rows per batch read from either table: 64 Ki rows × 20 columns is a few MB, and numpy's
#: per-call overhead is small.
BATCH_ROWS = 65_536

#: How a missing number enters the projection (--impute).
IMPUTE = ("none", "mean")


@dataclass(frozen=True, kw_only=True)
class CompareParams(TailParams):
    """The parameters of ``qar compare`` (:mod:`qar_sql.commands.compare`): the one place their
    defaults and the rules between them live; the click options and :func:`qar_sql.compare`
    take their defaults from here. Checked when made, before any connection.

    The session a comparison runs in is the original's; ``treated`` (and ``treated_table``,
    ``delimiter``, ``threads``) say where the treated release is — a second source, or, with
    ``treatments``, the what-if release of the original itself."""

    treated: Any = None
    treated_table: str | None = None
    treatments: Any = None
    link: str | None = None
    aligned: bool = False
    categorical: Sequence[str] | None = None
    components: int | str = 5
    attacker_columns: Sequence[str] | None = None
    target: str | None = None
    risk: bool = True
    cloaking: bool = True
    anonymeter: bool = False
    anonymeter_attacks: int = 500
    delimiter: str | None = None
    null_tokens: Sequence[str] = ()
    impute: str = "none"
    batch_rows: int = BATCH_ROWS
    threads: int | None = None
    jobs: int = 2
    figures: bool = False

    def __post_init__(self) -> None:
        treated, treatments, link, aligned = self.treated, self.treatments, self.link, self.aligned
        if link and aligned:
            raise UsageError("--link and --aligned both say how records are linked; give one of them")
        if treatments is not None:
            if treated is not None or self.treated_table:
                raise UsageError(
                    "--treatments builds the treated table from the original; drop TREATED / --treated-table"
                )
            if link or aligned:
                raise UsageError(
                    "--treatments links each record to the row made from it already; drop --link / --aligned"
                )
        require_whole(self.p, 1, f"-p {shown(self.p)} must be a whole number of at least 1, e.g. 3")
        if self.batch_rows < 1:
            raise ParameterError(f"batch_rows {shown(self.batch_rows)} must be at least 1")
        # The tokens as the engines take them (the module is loaded here, not by `qar --help`).
        source = importlib.import_module("qar_sql.engines.source")
        object.__setattr__(self, "null_tokens", source.check_null_tokens(self.null_tokens))
        if self.impute not in IMPUTE:
            raise ParameterError(f"--impute {self.impute!r} is unknown; use one of {', '.join(IMPUTE)}")
