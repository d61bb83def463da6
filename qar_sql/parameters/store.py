"""The parameters of the commands of the results store and the compliance scans: ``qar scan``, ``qar history`` and ``qar migrate``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from qar_sql.errors import UsageError
from qar_sql.parameters import fields
from qar_sql.parameters.fields import option
from qar_sql.precedence import Chosen
from qar_sql.rules import DEFAULT_JOBS

_STORE_HELP = (
    "Results store: a .duckdb file or a database URL (given alone or left out: $QAR_STORE, else "
    "qar_results.duckdb). An audit records its run only when --store is given."
)

# --- scan -------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class ScanParams:
    """The parameters of ``qar scan``: the one place their defaults and the rules between its
    options live (checked when made, before any file is read or database opened).

    What to scan: ``config`` (a ``qar.toml`` path; from Python also a parsed dict or a
    :class:`~qar_sql.compliance.scans.ScanConfig`), ``dbt_manifest`` with ``url`` (its warehouse),
    ``dbt_project`` with ``profile``, ``target``, ``profiles_dir``; ``select`` picks dbt models.
    ``thresholds``: ``fail_above``, ``warn_above``, ``min_exceedances`` given from outside the
    scan files, each at its level of :mod:`qar_sql.precedence` (typed, they replace every scan's
    own; from a ``QAR_`` variable or a discovered config they only fill in). ``given``: the
    options typed on the command line — a ``--url`` or ``--store`` from the environment or a
    config file is no mistake where a typed one is. ``junit``, ``markdown``, ``report_dir``:
    the files the scans write."""

    config: Any = None  # str | os.PathLike | Mapping | ScanConfig (typed loosely: parameters import no library)
    dbt_manifest: str | None = None
    url: str | None = None
    dbt_project: str | None = None
    profile: str | None = None
    target: str | None = None
    profiles_dir: str | None = None
    select: Sequence[str] = ()
    thresholds: Mapping[str, Chosen] = field(default_factory=dict)
    store: str | None = None
    #: None: record only where a store is given (--store) or configured ([store]); False: never
    #: (``--no-store``); True: always (the default store at worst).
    record: bool | None = None
    junit: str | None = None
    markdown: str | None = None
    report_dir: str | None = None
    jobs: int = DEFAULT_JOBS
    environ: Mapping[str, str] | None = None  # for ${VAR} in the config; None: os.environ
    given: frozenset[str] = frozenset()
    #: The format the summary is printed in: stderr carries what it leaves out; html (the pages
    #: of report_dir) needs report_dir.
    format: str = "text"

    def __post_init__(self) -> None:
        self.check_dbt()
        if self.config is None and self.dbt_manifest is None and not self.dbt_project:
            raise UsageError(
                "name a scan config (qar scan qar.toml) or a dbt manifest (--dbt-manifest target/manifest.json)"
            )
        # An option that would be ignored is an error, not a silent no-op (a CI gate must not
        # pass because of a misplaced flag). $QAR_DATABASE_URL alone is no mistake.
        if not self.dbt_manifest and not self.dbt_project and "url" in self.given:
            raise UsageError(
                "--url names the warehouse of --dbt-manifest, and there is no --dbt-manifest; a scan config "
                'names its databases in [sources.NAME] url = "..."'
            )
        # Only a --store typed on the command line contradicts --no-store (a default from qar.toml does not).
        if self.record is False and "store" in self.given:
            raise UsageError("--store and --no-store contradict each other; give one of them")
        if self.format == "html" and not self.report_dir:
            raise UsageError(
                "--format html writes one report per table and an index: name their folder with --report-dir"
            )

    def check_dbt(self) -> None:
        """Refuse the dbt options that would be ignored (a CI gate must not pass on a misplaced flag)."""
        if self.dbt_project and self.dbt_manifest:
            raise UsageError(
                "--dbt-project reads the project's own manifest; give --dbt-project or --dbt-manifest, not both"
            )
        if not self.dbt_project:
            for key in ("profile", "target", "profiles_dir"):
                if getattr(self, key):
                    raise UsageError(
                        f"--{key.replace('_', '-')} chooses the dbt profile of --dbt-project, and there is no "
                        "--dbt-project"
                    )
            if self.select and not self.dbt_manifest:
                raise UsageError("--select picks dbt models, and there is neither --dbt-project nor --dbt-manifest")

    @property
    def project_url(self) -> str | None:
        """The warehouse replacing the dbt profile's: ``url`` when typed (not from $QAR_DATABASE_URL)."""
        return self.url if "url" in self.given else None


# --- history ----------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class HistoryParams:
    """The parameters of ``qar history`` and :func:`qar_sql.history`: the one place their
    options, defaults and help live.

    ``store``: the results store (None: ``$QAR_STORE``, else ``qar_results.duckdb``); ``table``:
    only the series of this table or scan name. (The trend plot, ``--plot``, is the command
    line's output; the Python API returns the history, whose ``plot()`` draws it.)"""

    store: str | None = fields.store(_STORE_HELP)
    table: str | None = option(None, help="Only this table (or scan name).", flags=("--table", "-t"))


# --- migrate ----------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class MigrateParams:
    """The parameters of ``qar migrate``: the one place their options, defaults and help live.

    ``store``: the results store (None: ``$QAR_STORE``, else ``qar_results.duckdb``);
    ``status``: only report which migrations are applied or pending (writes nothing); ``to``:
    apply the migrations up to this version only (checked against the migration files when run)."""

    store: str | None = fields.store(_STORE_HELP)
    status: bool = option(
        False,
        help="Only show which migrations are applied or pending (writes nothing).",
        flags=("--status",),
        kind="flag",
    )
    to: str | None = option(
        None, help="Apply migrations up to this version only (e.g. 0001).", flags=("--to",), metavar="VERSION"
    )
