"""``qar scan``: every scan of a ``qar.toml`` and/or every tagged model of a dbt project, judged
against its thresholds and recorded in the results store where one is asked for (docs/compliance.md).

The shape of every command (``qar_sql/commands/__init__.py``), with one difference: a scan opens
no one session — each scan reads its own source (:func:`qar_sql.compliance.scans.run_scans`), so
``run`` takes the parameters alone. :func:`plan` is the scans it will run, read before any
database is opened, so that the command line can guard its output files against them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from qar_sql.compliance.dbt import load_manifest, manifest_scans
from qar_sql.compliance.dbt_project import project_scans, select_nodes
from qar_sql.compliance.scans import (
    ScanConfig,
    ScanOutcome,
    apply_settings,
    combine,
    load_config,
    parse_config,
    run_scans,
)
from qar_sql.errors import UsageError
from qar_sql.parameters.store import ScanParams
from qar_sql.results import ScanReport
from qar_sql.rules import DEFAULT_JOBS

NAME = "scan"
Params = ScanParams

#: A scan's progress: (the scan's name, done, total).
ScanProgress = Callable[[str, int, int], None]


def read_config(config: Any, environ: Mapping[str, str] | None = None) -> ScanConfig:
    """``config`` as a :class:`ScanConfig`: a ``qar.toml`` path, a parsed dict or one already."""
    if isinstance(config, (str, Path)):
        return load_config(config, environ=environ)
    if isinstance(config, ScanConfig):
        return config
    return parse_config(config, environ=environ)


def plan(params: ScanParams) -> ScanConfig:
    """The scans of ``params``: its config's, then the tagged models of its dbt manifest or
    project (nothing is connected; the thresholds given from outside are applied by :func:`run`)."""
    cfg = read_config(params.config, params.environ) if params.config is not None else ScanConfig(())
    if params.dbt_manifest:
        only = select_nodes(load_manifest(params.dbt_manifest), params.select) if params.select else None
        extra = manifest_scans(params.dbt_manifest, params.url, only=only)  # type: ignore[arg-type]
        if not extra:
            raise UsageError(
                f"no model, seed or snapshot in {params.dbt_manifest} has a column with meta {{qar: quasi_identifier}}; "
                "tag the quasi-identifier columns in the model's YAML"
            )
        cfg = combine(cfg, extra)
    if params.dbt_project:
        specs, _ = project_scans(
            params.dbt_project,
            url=params.project_url,
            profile=params.profile,
            target=params.target,
            profiles=params.profiles_dir,
            select=params.select,
        )
        if not specs:
            raise UsageError(
                f"no model of the dbt project {params.dbt_project!r} has a column with meta "
                "{qar: quasi_identifier}; tag the quasi-identifier columns in the model's YAML"
            )
        cfg = combine(cfg, specs)
    return cfg


def run(
    params: ScanParams,
    progress: ScanProgress | None = None,
    *,
    config: ScanConfig | None = None,
    on_outcome: Callable[[ScanOutcome], None] | None = None,
) -> ScanReport:
    """Run the scans of ``params`` (``config``: its :func:`plan`, when already read) with the
    thresholds given from outside the files applied by :func:`qar_sql.precedence.choose`."""
    cfg = apply_settings(plan(params) if config is None else config, params.thresholds)
    return run_scans(
        cfg, store=params.store, record=params.record, jobs=params.jobs, progress=progress, on_outcome=on_outcome
    )


def scan_config(
    config: str | Path | ScanConfig | Mapping[str, Any],
    *,
    store: str | None = None,
    record: bool | None = None,
    jobs: int = DEFAULT_JOBS,
    environ: Mapping[str, str] | None = None,
    progress: ScanProgress | None = None,
    on_outcome: Callable[[ScanOutcome], None] | None = None,
) -> ScanReport:
    """Run every scan of ``config`` (a ``qar.toml`` path, a parsed dict or a :class:`ScanConfig`).

    Runs are recorded only where a store is asked for: ``store`` (``""``: ``$QAR_STORE``, else
    ``qar_results.duckdb``), else the config's ``[store]``; ``record=True`` records even with
    neither (as ``""``), ``record=False`` never. One scan failing does not stop the
    others; Ctrl-C stops them all (the current run is recorded as ``interrupted``) and raises
    :class:`~qar_sql.compliance.scans.ScanInterrupted`, a KeyboardInterrupt carrying the report so far.
    """
    params = ScanParams(config=config, store=store, record=record, jobs=jobs, environ=environ)
    return run(params, progress, on_outcome=on_outcome)
