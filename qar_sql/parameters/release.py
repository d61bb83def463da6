"""The parameters of the commands about a release: ``qar compare`` (a treated release against its
original) and ``qar report`` (the report a privacy officer signs before a release)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from qar_sql import rules
from qar_sql.errors import ParameterError, UsageError, require_whole, shown
from qar_sql.parameters import fields
from qar_sql.parameters.fields import Option, check_fields, option
from qar_sql.parameters.needs import Needs
from qar_sql.parameters.tail import TailParams
from qar_sql.parameters.treat import AnonymizeParams

# --- compare ----------------------------------------------------------------------------------------


#: Rows per batch read from either table: 64 Ki rows × 20 columns is a few MB, and numpy's
#: per-call overhead is small.
BATCH_ROWS = 65_536

#: How a missing number enters the projection (--impute).
IMPUTE = ("none", "mean")


@dataclass(frozen=True, kw_only=True)
class CompareParams(TailParams):
    """The parameters of ``qar compare`` (:mod:`qar_sql.commands.compare`) and
    :func:`qar_sql.compare`. Checked when made, before any connection.

    The session a comparison runs in is the original's (``original``, ``table``, ``delimiter``,
    ``threads``); ``treated`` (and ``treated_table``) say where the treated release is — a
    second source (by default the original's), or, with ``treatments``, the what-if release of
    the original itself. ``fail_below``: the --fail-below thresholds, metric → value (exit 1
    below one)."""

    original: Any = option(
        None, help="The original: a CSV/Parquet/DuckDB file, a SQLAlchemy URL or an open Source.", cli=False
    )
    table: str | None = fields.source_option("table")
    treated: Any = option(
        None, help="The treated release: a file or a database URL (default: the original's source).", cli=False
    )
    treated_table: str | None = option(
        None, help="Table of the treated release (default: --table).", flags=("--treated-table",)
    )
    treatments: Any = option(
        None,
        help="What-if TOML file: build the treated table from ORIGINAL (its release), linked by row.",
        flags=("--treatments", "-T"),
        kind="path",
    )
    link: str | None = option(
        None, help="Key column linking each original record to the treated record made from it.", flags=("--link",)
    )
    aligned: bool = option(
        False,
        help="Link row i of ORIGINAL to row i of TREATED (files and DuckDB tables).",
        flags=("--aligned",),
        kind="flag",
    )
    categorical: Sequence[str] | None = option(
        None,
        help="Columns to compare as categories although their type is numeric, comma-separated.",
        flags=("--categorical",),
        kind="names",
    )
    components: int | str | None = option(
        None,
        help="Axes of the projection: a number or 'all'.  [default: 5, or fewer when the columns allow fewer]",
        flags=("--components",),
    )
    attacker_columns: Sequence[str] | None = option(
        None,
        help="Columns an attacker holds from an external source (correlation protection rate).",
        flags=("--attacker-columns",),
        kind="names",
    )
    target: str | None = option(
        None, help="Column the inference attack tries to read off the nearest treated record.", flags=("--target",)
    )
    risk: bool = option(True, help="The QaR audits of both tables (--no-risk: skip them).", cli=False)
    cloaking: bool = option(True, help="The local cloaking of every linked record.", cli=False)
    anonymeter: bool = option(
        False,
        help="Also run anonymeter's three evaluators (pip install 'qar-sql[anonymeter]').",
        flags=("--anonymeter",),
        kind="flag",
    )
    anonymeter_attacks: int = option(
        500,
        help="Attacks per anonymeter evaluator.",
        flags=("--anonymeter-attacks",),
        kind="int",
        minimum=10,
        only=Needs(needs=("anonymeter",), why="anonymeter's evaluators attack"),
    )
    delimiter: str | None = fields.source_option("delimiter")
    null_tokens: Sequence[str] = fields.source_option("null_tokens")
    impute: str = option(
        "none",
        help="A missing number: none standardises on the present values (NULL at the centre); mean imputes the "
        "mean first, then standardises (the Avatar paper).",
        flags=("--impute",),
        kind="choice",
        choices=IMPUTE,
    )
    batch_rows: int = option(
        BATCH_ROWS, help="Rows per batch read from either table.", cli=False, kind="int", minimum=1
    )
    threads: int | None = fields.source_option("threads")
    jobs: int = fields.jobs()
    figures: bool = option(
        False, help="Keep the per-record distributions for qar_sql.output.render_compare.plot_compare.", cli=False
    )
    fail_below: Mapping[str, float] = option(
        None,
        help="Exit 1 when a metric is below a value, e.g. hidden_rate=0.9 (dtc, cdr, hidden_rate, local_cloaking, "
        "local_cloaking_ties, correlation_protection_rate, mae).",
        flags=("--fail-below",),
        multiple=True,
    )

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
        check_fields(self)
        object.__setattr__(self, "null_tokens", rules.check_null_tokens(self.null_tokens))
        object.__setattr__(self, "fail_below", dict(self.fail_below or {}))
        object.__setattr__(self, "components", _components(self.components))


def _components(value: int | str | None) -> int | str | None:
    """--components as text (the command line): a number of at least 1, or 'all' in any case;
    its upper bound is the projection's to check, which knows the columns."""
    if isinstance(value, str):
        if value.strip().lower() == "all":
            return "all"
        try:
            value = int(value)
        except ValueError:
            raise ParameterError(
                f"--components {value!r} is neither a number nor 'all'; give a positive integer or 'all'"
            ) from None
    if isinstance(value, int) and value < 1:  # (no column is needed to know: refused before any row)
        raise ParameterError(f"--components {value} must be at least 1; give a positive integer or 'all'")
    return value


# --- report ---------------------------------------------------------------------------------------

#: ``--release-kind``: external leaves out every per-record table, key, position and value combination.
RELEASE_KINDS = ("internal", "external")

#: ``--format`` of the report: the page, its Markdown, and the generic table formats of the
#: output (``FORMATS`` with a table: csv).
REPORT_FORMATS = ("html", "md", "csv")


def check_release_context(threshold: float | None, release_kind: str) -> None:
    """The first page's context, checked: a threshold is a risk in [0, 1] (None: the user set
    none, so no verdict), the release kind one of :data:`RELEASE_KINDS`."""
    rules.check_risk(threshold, "--fail-above", "0.05")
    if release_kind not in RELEASE_KINDS:
        raise ParameterError(f"--release-kind {release_kind!r} is not a release kind; use internal or external")


#: The report's options of its original vs treated section.
WITH_COMPARE = Needs(needs=("compare",), why="an option of the original vs treated section")


@dataclass(frozen=True, kw_only=True)
class ReportParams(TailParams):
    """The parameters of ``qar report`` (:mod:`qar_sql.commands.report`): the audit's (columns,
    p, α, π_u, PWM: :class:`~qar_sql.parameters.tail.TailParams`), the sections, the release
    context, and the rules between them, the one place they live; the click options and
    :func:`qar_sql.report` take their defaults from here. Checked when made, before any file is
    read or database opened."""

    k: int = fields.k()
    key: Sequence[str] | None = fields.key()
    top: int = option(
        10,
        help="How many of the riskiest records the report lists.",
        flags=("--top",),
        kind="int",
        minimum=1,
        maximum=1000,
    )
    hash_secret: str | None = dataclasses.field(
        default=None, repr=False, metadata={fields.KEY: Option(help="The secret that hashes record keys.", cli=False)}
    )
    records: bool | None = option(
        None,
        help="The records and elimination sections (a second pass): None when the source has a record order, "
        "False left out (--no-records), True asked for.",
        cli=False,
    )
    eliminate_step: int | None = option(None, help="Records removed per step of the elimination curves.", cli=False)
    greedy: bool = option(True, help="The greedy elimination curve.", cli=False)
    treatments: Any = option(
        None, help="A treatments TOML file: adds the what-if section.", flags=("--treatments", "-T"), kind="path"
    )
    #: The history section's results store ("": the default store).
    store: str | None = fields.store("report")
    group_size: int | None = fields.group_size(
        None, "Group size k, at least 2: adds the uniqueness section (the chance that k people are all unique)."
    )
    compare: Any = option(
        None,
        help="A treated release of SOURCE (a file, or a DuckDB file or URL with --treated-table): adds the original "
        "vs treated section.",
        flags=("--compare",),
    )
    treated_table: str | None = option(
        None,
        help="With --compare: the treated table (default: --table).",
        flags=("--treated-table",),
        only=WITH_COMPARE,
    )
    link: str | None = option(
        None,
        help="With --compare: the key column linking each original record to its treated record.",
        flags=("--link",),
        only=WITH_COMPARE,
    )
    aligned: bool = option(
        False,
        help="With --compare: link row i of SOURCE to row i of the treated release.",
        flags=("--aligned",),
        kind="flag",
        only=WITH_COMPARE,
    )
    classic: bool | Mapping[str, Any] = option(
        True,
        help="The classic measures: True with the options below, False (--no-classic), or qar_sql.risk's keywords.",
        cli=False,
    )
    weight: str | None = option(
        None,
        help="With --classic: the sampling-weight column (journalist, marketer, individual risk).",
        flags=("--weight",),
    )
    sensitive: Sequence[str] = option(
        (),
        help="With --classic: sensitive column(s) for l-diversity and t-closeness, comma-separated.",
        flags=("--sensitive",),
        kind="names",
    )
    population: int | None = fields.population()
    sampling_fraction: float | None = fields.sampling_fraction()
    threshold: float | None = option(
        None,
        help="The risk the first page's verdict compares T̂ with (--fail-above), only one the user set (None: no verdict).",
        cli=False,
    )
    threshold_source: str | None = option(None, help="Where the threshold came from.", cli=False)
    from_store: str | None = option(
        None,
        help="Rebuild the report of a recorded run from this results store (alone: $QAR_STORE, else "
        "qar_results.duckdb), with --run; SOURCE is not read.",
        flags=("--from-store",),
        flag_value="",
    )
    run_id: str | None = option(
        None, help="With --from-store: the run id (qar history --format json lists them).", flags=("--run",)
    )
    title: str | None = option(None, help="The report's title (first page and <title>).", flags=("--title",))
    owner: str | None = option(None, help="Who owns the release (first page and sign-off).", flags=("--owner",))
    purpose: str | None = option(None, help="What the release is for (first page and sign-off).", flags=("--purpose",))
    release_kind: str = option(
        "internal",
        help="external: leave out every per-record table, record key, record position and value combination.",
        flags=("--release-kind",),
        kind="choice",
        choices=RELEASE_KINDS,
    )
    command: str | None = option(None, help="The command line the reproducibility block shows.", cli=False)
    hash_secret_file: str | None = fields.hash_secret_file(
        "that hashes record keys (else $QAR_HASH_SECRET; without one, positions are shown)"
    )
    format: str | None = option(
        None,
        help="html: one self-contained page; md: the same report as Markdown; csv: the audit's QIs, one row each "
        "(as qar audit --format csv). Default: from -o's suffix (.md, .markdown, .csv), else html; a suffix "
        "that names another format is refused.",
        flags=("--format", "-f"),
        kind="choice",
        choices=REPORT_FORMATS,
    )
    output: str | None = option(
        None, help="The file to write; - for stdout.", flags=("--output", "-o"), kind="path", required=True
    )
    interval_level: float | None = fields.interval_level(none=True)  # (None: the audit's own)
    bootstrap: int | None = fields.bootstrap(none=True)
    jobs: int = fields.jobs()
    anonymize: Any = option(
        None,
        help="The anonymization section (--anonymize), on the report's columns and tail: AnonymizeParams or "
        "qar_sql.anonymize's keywords, e.g. {'hierarchy': {'age': 'age.toml'}, 'k': 5}.",
        cli=False,
    )

    def __post_init__(self) -> None:
        if self.anonymize is not None:
            if self.from_store is not None:
                raise UsageError("--anonymize searches SOURCE, which --from-store does not read; leave one out")
            object.__setattr__(self, "anonymize", anonymize_params(self.anonymize, self))
        check_release_context(self.threshold, self.release_kind)
        check_fields(self)
        self.validate()
        if (self.from_store is None) != (self.run_id is None):
            raise UsageError("--from-store and --run go together: give both to rebuild a recorded run's report")
        # (--treated-table, --link, --aligned without --compare: WITH_COMPARE, refused when typed; a
        # QAR_LINK set for qar compare is no mistake here. --weight and the classic measures' other
        # options with --no-classic: commands.release.CLASSIC_ONLY, the same way)

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
