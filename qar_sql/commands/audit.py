"""``qar audit``: the QaR risk T̂(p, α) of a table over every set of p quasi-identifier columns.

The shape every command has (``qar_sql/commands/__init__.py``): its parameters
(:class:`~qar_sql.parameters.tail.AuditParams`), ``run(session, params, progress) → result``, and
the Python API's function, which opens the session and calls ``run``. :func:`recorded` is ``run``
with the run kept in the results store (``--store``).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence

from qar_sql.compliance.store import Store, recorded_audit
from qar_sql.engines.session import Session
from qar_sql.engines.source import SourceLike, session_of
from qar_sql.measures.audit import audit_session
from qar_sql.parameters.tail import AuditParams
from qar_sql.progress import with_progress
from qar_sql.pushdown.scan import Progress
from qar_sql.results import AuditResult, pick

NAME = "audit"
Params = AuditParams

#: The parameters a results store records with a run (compliance/store.py).
RECORDED = ("p", "alpha", "pi_u", "pwm", "k")


def run(session: Session, params: AuditParams, progress: Progress | None = None) -> AuditResult:
    """The audit of the session's relation: profile → pushed-down scan → tail fit."""
    return audit_session(session, params, progress)


def recorded(
    store: str | Store,
    params: AuditParams,
    progress: Progress | None = None,
    *,
    source: SourceLike = None,
    table: str | None = None,
    delimiter: str | None = None,
    null_tokens: Sequence[str] = (),
    all_text: bool = False,
    store_in_source: bool = False,
    scan_name: str | None = None,
    secrets: Sequence[str] = (),
) -> AuditResult:
    """:func:`run` with the run recorded in the results store ``store`` (docs/compliance.md): the
    store opens first (a store that is the audited file is refused unless ``store_in_source``),
    then the session, inside the recorded run, so that a source which cannot be read is a
    ``failed`` run. The store keeps every QI's θ: the audit groups every QI unless --prune auto
    is asked for. ``scan_name`` and ``secrets`` (values masked in what is stored): a scan's."""
    if params.prune is None:
        params = dataclasses.replace(params, prune="off")

    def runner() -> tuple[AuditResult, None]:
        with session_of(source, table=table, delimiter=delimiter, all_text=all_text, null_tokens=null_tokens) as s:
            return run(s, params, progress), None

    return recorded_audit(
        store,
        source,
        store_in_source=store_in_source,
        scan_name=scan_name,
        secrets=secrets,
        runner=runner,
        table=table,
        columns=params.columns,
        **pick(params, RECORDED),
    )


@with_progress("audit")
def audit(
    source: SourceLike = None,
    *,
    table: str | None = None,
    columns: Sequence[str] | None = None,
    exclude: Sequence[str] | None = None,
    p: int = AuditParams.p,
    alpha: float = AuditParams.alpha,
    pi_u: float = AuditParams.pi_u,
    pwm: str = AuditParams.pwm,
    delimiter: str | None = None,
    k: int = AuditParams.k,
    batch_size: int | None = None,
    jobs: int = AuditParams.jobs,
    threads: int | None = None,
    progress: Progress | None = None,
    all_text: bool = False,
    group_size: int | None = None,
    null_tokens: Sequence[str] = (),
    interval_level: float = AuditParams.interval_level,
    bootstrap: int = AuditParams.bootstrap,
    prune: str | None = None,
    theta: str = AuditParams.theta,
    sensitivity: bool = False,
    row_subsamples: Sequence[float] = (),
) -> AuditResult:
    """Audit one table: its QaR risk T̂(p, α) over all C(N, p) quasi-identifiers.

    ``source`` is a CSV/Parquet/DuckDB file or a SQLAlchemy URL (default ``$QAR_DATABASE_URL``);
    ``columns`` the QI columns (default: all but ``exclude``). The counting runs in the
    database; only per-QI class-size histograms come back. With ``group_size`` k, the result
    also holds every QI's uniqueness probability for groups of k (``result.uniqueness``), from
    the same histograms. ``interval_level`` and ``bootstrap`` (resamples; 0: none) set the
    intervals of ``result.intervals`` (docs/uncertainty.md).

    ``prune``: ``"auto"`` groups only the QIs of size p that can reach the tail, found from the
    counts of size p − 1 (T̂, u, ξ̂, β̂ and the exceedances are those of the full audit, bit for
    bit; the other QIs carry θ bounds); ``"off"`` groups every QI. Default: ``"auto"`` at p ≥ 4,
    ``"off"`` below, and always off with ``group_size`` (which needs every QI's classes).

    ``theta``: ``"distinct"`` (θ = H/L, the paper's) or ``"unique"`` (θ = S/L, the share of
    records unique on the QI, fitted by the same tail); ``result.risk`` is of that measure.
    ``result.leave_one_column_out`` gives T̂ without each column (from the θ in hand);
    ``sensitivity`` adds T̂ at p − 1 and p + 1 (``result.risk_by_p``, their scans) and
    ``row_subsamples`` (shares such as ``(0.25, 0.5)``) T̂ on nested subsamples of the rows
    (``result.risk_by_rows``, a scan each). docs/uncertainty.md, "Sensitivity".
    """
    params = AuditParams(
        columns=columns, exclude=exclude, p=p, alpha=alpha, pi_u=pi_u, pwm=pwm, k=k, batch_size=batch_size,
        jobs=jobs, group_size=group_size, interval_level=interval_level, bootstrap=bootstrap, prune=prune,
        theta=theta, sensitivity=sensitivity, row_subsamples=tuple(row_subsamples),
    )  # fmt: skip
    started = time.perf_counter()
    with session_of(
        source, table=table, delimiter=delimiter, threads=threads, all_text=all_text, null_tokens=null_tokens
    ) as session:
        return audit_session(session, params, progress, started=started)
