"""The parameters of the commands of the results store and the compliance scans: ``qar scan``, ``qar history`` and ``qar migrate``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from qar_sql.errors import UsageError
from qar_sql.parameters import fields
from qar_sql.parameters.fields import option
from qar_sql.parameters.needs import Needs
from qar_sql.precedence import Chosen

# --- scan -------------------------------------------------------------------------------------------


#: --profile, --target and --profiles-dir choose the profile of --dbt-project only.
DBT_PROFILE = Needs(needs=("dbt_project",), why="it chooses the dbt profile of --dbt-project")


@dataclass(frozen=True, kw_only=True)
class ScanParams:
    """The parameters of ``qar scan``, checked when made, before any file is read or database opened.

    Besides the options: ``thresholds``: ``fail_above``, ``warn_above``, ``min_exceedances``
    given from outside the scan files, each at its level of :mod:`qar_sql.precedence` (typed,
    they replace every scan's own; from a ``QAR_`` variable or a discovered config they only
    fill in); ``record``; ``environ`` (for ${VAR} in the config; None: os.environ); ``given``:
    the options typed on the command line — a ``--url`` or ``--store`` from the environment or a
    config file is no mistake where a typed one is; ``format``: the format the summary is
    printed in (stderr carries what it leaves out; html, the pages of report_dir, needs
    report_dir)."""

    config: Any = option(  # CONFIG, the argument (typed loosely: parameters import no library)
        None, help="A qar.toml (from Python also a parsed dict or a ScanConfig).", kind="path", cli=False
    )
    dbt_manifest: str | None = option(
        None,
        help="Audit the models of this dbt target/manifest.json whose columns have meta {qar: quasi_identifier}.",
        flags=("--dbt-manifest",),
        kind="path",
    )
    url: str | None = option(
        None,
        help="With --dbt-manifest: the warehouse dbt built (a database URL or DuckDB file; default $QAR_DATABASE_URL).",
        flags=("--url",),
        envvar="QAR_DATABASE_URL",
    )
    dbt_project: str | None = option(
        None,
        help="Audit the tagged models of this dbt project (its target/manifest.json), reading the warehouse from "
        "its dbt profile (--url overrides it).",
        flags=("--dbt-project",),
        kind="dir",
    )
    profile: str | None = option(
        None,
        help="With --dbt-project: the dbt profile (default: $DBT_PROFILE, then dbt_project.yml's).",
        flags=("--profile",),
        only=DBT_PROFILE,
    )
    target: str | None = option(
        None,
        help="With --dbt-project: the profile's target (default: $DBT_TARGET, then the profile's).",
        flags=("--target",),
        # (not QAR_TARGET: compare's --target is a column, uniqueness's a probability)
        envvar="QAR_DBT_TARGET",
        only=DBT_PROFILE,
    )
    profiles_dir: str | None = option(
        None,
        help="With --dbt-project: the folder of profiles.yml (default, as dbt: $DBT_PROFILES_DIR, the current "
        "folder, ~/.dbt).",
        flags=("--profiles-dir",),
        kind="dir",
        only=DBT_PROFILE,
    )
    select: Sequence[str] = option(
        (),
        help="With --dbt-project or --dbt-manifest: only these models, as dbt selects them (names, tag:NAME, "
        "path:FOLDER; space-separated or repeated: any; comma: all).",
        flags=("--select",),
        multiple=True,
        only=Needs(needs=("dbt_project|dbt_manifest",), why="it picks dbt models"),
    )
    thresholds: Mapping[str, Chosen] = field(default_factory=dict)
    store: str | None = fields.store("scan")
    #: None: record only where a store is given (--store) or configured ([store]); False: never
    #: (``--no-store``); True: always (the default store at worst).
    record: bool | None = None
    #: The store of the config found in the working folder (the command line's [tool.qar] store or
    #: a discovered qar.toml's [store]): used where the scan config has no [store] of its own (it
    #: replaced that [store], as if typed).
    found_store: str | None = None
    junit: str | None = option(
        None,
        help="Write a JUnit XML report (one testcase per table) to this file.",
        flags=("--junit",),
        kind="path",
    )
    markdown: str | None = option(
        None, help="Write a Markdown summary to this file.", flags=("--markdown",), kind="path"
    )
    report_dir: str | None = option(
        None,
        help="Write the HTML report of each scan and an index.html linking them to this folder (--format html "
        "needs it).",
        flags=("--report-dir",),
        kind="dir",
    )
    jobs: int = fields.jobs()
    environ: Mapping[str, str] | None = None
    given: frozenset[str] = frozenset()
    format: str = "text"

    def __post_init__(self) -> None:
        # An option that would be ignored is an error, not a silent no-op (a CI gate must not
        # pass because of a misplaced flag).
        if self.dbt_project and self.dbt_manifest:
            raise UsageError(
                "--dbt-project reads the project's own manifest; give --dbt-project or --dbt-manifest, not both"
            )
        # (--profile, --target, --profiles-dir and --select without a dbt project or manifest:
        # their Needs, refused when typed; a $QAR_PROFILE set for dbt's own runs is no mistake)
        if self.config is None and self.dbt_manifest is None and not self.dbt_project:
            raise UsageError(
                "name a scan config (qar scan qar.toml), a dbt project (--dbt-project .) or a dbt manifest "
                "(--dbt-manifest target/manifest.json)"
            )
        # $QAR_DATABASE_URL alone is no mistake.
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

    @property
    def project_url(self) -> str | None:
        """The warehouse replacing the dbt profile's: ``url`` when typed (not from $QAR_DATABASE_URL)."""
        return self.url if "url" in self.given else None


# --- history ----------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class HistoryParams:
    """The parameters of ``qar history`` and :func:`qar_sql.history`.

    ``store``: the results store (None: ``$QAR_STORE``, else ``qar_results.duckdb``); ``table``:
    only the series of this table or scan name. (The trend plot, ``--plot``, is the command
    line's output; the Python API returns the history, whose ``plot()`` draws it.)"""

    store: str | None = fields.store("history")
    table: str | None = option(None, help="Only this table (or scan name).", flags=("--table", "-t"))


# --- migrate ----------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class MigrateParams:
    """The parameters of ``qar migrate``.

    ``store``: the results store (None: ``$QAR_STORE``, else ``qar_results.duckdb``);
    ``status``: only report which migrations are applied or pending (writes nothing); ``to``:
    apply the migrations up to this version only (checked against the migration files when run)."""

    store: str | None = fields.store("migrate")
    status: bool = option(
        False,
        help="Only show which migrations are applied or pending (writes nothing).",
        flags=("--status",),
        kind="flag",
    )
    to: str | None = option(
        None,
        help="Apply migrations up to this version only (e.g. 0001).",
        flags=("--to",),
        metavar="VERSION",
        only=Needs(unused_with=("status",), why="--status applies nothing"),
    )


# --- config -----------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class ConfigParams:
    """The parameters of ``qar config``."""

    check: str | None = option(
        None,
        help="Validate FILE (a qar.toml, or a pyproject.toml's [tool.qar]) as qar scan reads it instead: exit 0 if "
        "valid, else 2 naming every bad key or value.",
        flags=("--check",),
        metavar="FILE",
    )
    config: Any = None  # the config whose defaults apply (the qar group's --config; None: the one found here)
