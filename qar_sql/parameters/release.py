"""The parameters of the commands about a release: ``qar compare`` (a treated release against its
original) and ``qar report`` (the report a privacy officer signs before a release)."""

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


# --- report ---------------------------------------------------------------------------------------

#: ``--release-kind``: external leaves out every per-record table, key, position and value combination.
RELEASE_KINDS = ("internal", "external")


@dataclass(frozen=True, kw_only=True)
class ReportParams:
    """The sections and release context of ``qar report`` and the rules between its options, the
    one place they live (checked when made, before any file is read or database opened). The
    audit's own parameters are :class:`~qar_sql.parameters.tail.TailParams`; the report passes
    them on to :func:`qar_sql.report`."""

    top: int = 10
    treatments: str | None = None
    group_size: int | None = None
    #: The treated release (``--compare``) and how its records are linked to the original's.
    compare: str | None = None
    treated_table: str | None = None
    link: str | None = None
    aligned: bool = False
    #: The classic measures (on by default; ``--no-classic``) and their options.
    classic: bool = True
    weight: str | None = None
    sensitive: Sequence[str] = ()
    population: int | None = None
    sampling_fraction: float | None = None
    records: bool = True
    #: Rebuild a recorded run's report (``--from-store`` with ``--run``) instead of reading SOURCE.
    from_store: str | None = None
    run_id: str | None = None
    title: str | None = None
    owner: str | None = None
    purpose: str | None = None
    release_kind: str = "internal"

    def __post_init__(self) -> None:
        if (self.from_store is None) != (self.run_id is None):
            raise UsageError("--from-store and --run go together: give both to rebuild a recorded run's report")
        for opt, value in (("--treated-table", self.treated_table), ("--link", self.link), ("--aligned", self.aligned)):
            if value and self.compare is None:
                raise UsageError(f"{opt} goes with --compare TREATED; add --compare or leave {opt} out")
        for name, value in self.classic_options.items():
            if value and not self.classic:
                opt = "--" + name.replace("_", "-")
                raise UsageError(f"{opt} goes with the classic measures; leave out --no-classic or leave {opt} out")
        if self.release_kind not in RELEASE_KINDS:
            raise UsageError(f"--release-kind {self.release_kind!r} is unknown; use internal or external")

    @property
    def classic_options(self) -> dict[str, Any]:
        """The options of the classic measures, as :func:`qar_sql.risk` takes them."""
        options = {"weight": self.weight, "sensitive": tuple(self.sensitive), "population": self.population}
        return options | {"sampling_fraction": self.sampling_fraction}

    @property
    def comparison(self) -> dict[str, Any]:
        return {
            "compare": self.compare,
            "treated_table": self.treated_table,
            "link": self.link,
            "aligned": self.aligned,
        }

    @property
    def context(self) -> dict[str, Any]:
        """The release context of the first page and the sign-off."""
        return {"title": self.title, "owner": self.owner, "purpose": self.purpose, "release_kind": self.release_kind}
