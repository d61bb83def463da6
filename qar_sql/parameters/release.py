"""The parameters of the commands about a release: ``qar compare`` (a treated release against its
original) and ``qar report`` (the report a privacy officer signs before a release)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from qar_sql import rules
from qar_sql.errors import ParameterError, UsageError, require_whole, shown
from qar_sql.parameters.tail import TailParams
from qar_sql.parameters.treat import AnonymizeParams
from qar_sql.rules import DEFAULT_JOBS

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

    The session a comparison runs in is the original's (``original``, ``table``, ``delimiter``,
    ``threads``); ``treated`` (and ``treated_table``) say where the treated release is — a
    second source (by default the original's), or, with ``treatments``, the what-if release of
    the original itself. ``fail_below``: the --fail-below thresholds, metric → value (exit 1
    below one)."""

    original: Any = None
    table: str | None = None
    treated: Any = None
    treated_table: str | None = None
    treatments: Any = None
    link: str | None = None
    aligned: bool = False
    categorical: Sequence[str] | None = None
    components: int | str | None = None  # None: 5, or fewer when the columns allow fewer
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
    jobs: int = DEFAULT_JOBS
    figures: bool = False
    fail_below: Mapping[str, float] = field(default_factory=dict)

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
        object.__setattr__(self, "null_tokens", rules.check_null_tokens(self.null_tokens))
        if self.impute not in IMPUTE:
            raise ParameterError(f"--impute {self.impute!r} is unknown; use one of {', '.join(IMPUTE)}")


# --- report ---------------------------------------------------------------------------------------

#: ``--release-kind``: external leaves out every per-record table, key, position and value combination.
RELEASE_KINDS = ("internal", "external")


def check_release_context(threshold: float | None, release_kind: str) -> None:
    """The first page's context, checked: a threshold is a risk in [0, 1] (None: the user set
    none, so no verdict), the release kind one of :data:`RELEASE_KINDS`."""
    rules.check_risk(threshold, "--fail-above", "0.05")
    if release_kind not in RELEASE_KINDS:
        raise ParameterError(f"--release-kind {release_kind!r} is not a release kind; use internal or external")


@dataclass(frozen=True, kw_only=True)
class ReportParams(TailParams):
    """The parameters of ``qar report`` (:mod:`qar_sql.commands.report`): the audit's (columns,
    p, α, π_u, PWM: :class:`~qar_sql.parameters.tail.TailParams`), the sections, the release
    context, and the rules between them, the one place they live; the click options and
    :func:`qar_sql.report` take their defaults from here. Checked when made, before any file is
    read or database opened."""

    k: int = 5
    #: The key columns that order the records (default: a file's row order).
    key: Sequence[str] | None = None
    top: int = 10
    #: Hashes the record keys of the records section (``--hash-secret-file``).
    hash_secret: str | None = field(default=None, repr=False)
    #: The records and elimination sections: None when the source has a record order, False
    #: left out (they cost a second pass), True asked for.
    records: bool | None = None
    eliminate_step: int | None = None
    greedy: bool = True
    treatments: Any = None
    #: The history section's results store ("": the default store).
    store: str | None = None
    group_size: int | None = None
    #: The treated release (``--compare``) and how its records are linked to the original's.
    compare: Any = None
    treated_table: str | None = None
    link: str | None = None
    aligned: bool = False
    #: The classic measures (on by default; ``--no-classic``): True with the options below, or
    #: :func:`qar_sql.risk`'s keywords as a mapping.
    classic: bool | Mapping[str, Any] = True
    weight: str | None = None
    sensitive: Sequence[str] = ()
    population: int | None = None
    sampling_fraction: float | None = None
    #: The risk the verdict compares T̂ with, only one the user set (None: no verdict), and
    #: where it came from.
    threshold: float | None = None
    threshold_source: str | None = None
    #: Rebuild a recorded run's report (``--from-store`` with ``--run``) instead of reading SOURCE.
    from_store: str | None = None
    run_id: str | None = None
    title: str | None = None
    owner: str | None = None
    purpose: str | None = None
    release_kind: str = "internal"
    #: The command line shown in the reproducibility block (its secrets masked).
    command: str | None = None
    #: The file hash_secret is read from (``--hash-secret-file``; else $QAR_HASH_SECRET).
    hash_secret_file: str | None = None
    #: Where the report goes (``-o``; ``-``: stdout) and as what (html, md or csv; None: from
    #: the suffix of ``output``, else html).
    output: str | None = None
    format: str | None = None
    interval_level: float | None = None
    bootstrap: int | None = None
    jobs: int = DEFAULT_JOBS
    #: The anonymization section (``--anonymize``): an :class:`~qar_sql.parameters.treat.AnonymizeParams`
    #: or a mapping of :func:`qar_sql.anonymize`'s keywords; its audit columns and tail are the report's.
    anonymize: Any = None

    def __post_init__(self) -> None:
        if self.anonymize is not None:
            if self.from_store is not None:
                raise UsageError("--anonymize searches SOURCE, which --from-store does not read; leave one out")
            object.__setattr__(self, "anonymize", anonymize_params(self.anonymize, self))
        check_release_context(self.threshold, self.release_kind)
        require_whole(self.top, 1, f"--top {self.top!r} must be a whole number of at least 1, e.g. 10")
        self.validate()
        if (self.from_store is None) != (self.run_id is None):
            raise UsageError("--from-store and --run go together: give both to rebuild a recorded run's report")
        for opt, value in (("--treated-table", self.treated_table), ("--link", self.link), ("--aligned", self.aligned)):
            if value and self.compare is None:
                raise UsageError(f"{opt} goes with --compare TREATED; add --compare or leave {opt} out")
        for name, value in self.classic_options.items():
            if value and not self.classic:
                opt = "--" + name.replace("_", "-")
                raise UsageError(f"{opt} goes with the classic measures; leave out --no-classic or leave {opt} out")

    @property
    def classic_options(self) -> dict[str, Any]:
        """The options of the classic measures, as :func:`qar_sql.risk` takes them."""
        options = {"weight": self.weight, "sensitive": tuple(self.sensitive), "population": self.population}
        return options | {"sampling_fraction": self.sampling_fraction}

    @property
    def classic_keywords(self) -> dict[str, Any] | None:
        """:func:`qar_sql.risk`'s keywords of the classic section (None: left out): the mapping
        given as ``classic``, else :attr:`classic_options`."""
        if not self.classic:
            return None
        return dict(self.classic) if isinstance(self.classic, Mapping) else self.classic_options

    @property
    def context(self) -> dict[str, Any]:
        """The release context of the first page and the sign-off."""
        return {"title": self.title, "owner": self.owner, "purpose": self.purpose, "release_kind": self.release_kind}


def anonymize_params(given: Any, report: ReportParams) -> Any:
    """The parameters of the report's anonymization section, checked before any connection:
    ``given`` (AnonymizeParams or its keywords) with the report's audit columns, p, α, π_u and
    PWM, T̂ of the release always measured."""
    tail: dict[str, Any] = {"columns": report.columns, "exclude": report.exclude, "p": report.p, "alpha": report.alpha}
    tail |= {"pi_u": report.pi_u, "pwm": report.pwm, "risk": True, "jobs": report.jobs}
    if isinstance(given, AnonymizeParams):
        return dataclasses.replace(given, **tail)
    if isinstance(given, Mapping):
        unknown = sorted(set(given) - {f.name for f in dataclasses.fields(AnonymizeParams)})
        if unknown:
            raise ParameterError(f"anonymize: {unknown[0]!r} is no option of qar_sql.anonymize's search; leave it out")
        return AnonymizeParams(**{**given, **tail})
    raise ParameterError(
        f"anonymize={given!r} is neither AnonymizeParams nor a mapping of qar_sql.anonymize's keywords, "
        "e.g. {'hierarchy': {'age': 'age.toml'}, 'k': 5}"
    )
