"""``qar anonymize``: the cheapest full-domain generalization (and record suppression) of a table
that meets privacy models — k-anonymity, l-diversity, t-closeness, no singletons, and the QaR
target T̂(p, α) ≤ τ — searched inside the database; the algorithm is :mod:`qar_sql.anonymize`.

The shape every command has (``qar_sql/commands/__init__.py``): its parameters
(:class:`~qar_sql.parameters.treat.AnonymizeParams`), ``run(session, params, progress) →
result``, and the Python API's function, which opens the session and calls ``run``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from qar_sql.anonymization.choose import choose
from qar_sql.anonymization.export import treatments_toml
from qar_sql.anonymization.outcome import AnonymizeResult
from qar_sql.engines.session import Session
from qar_sql.engines.source import SourceLike, session_of
from qar_sql.errors import UsageError
from qar_sql.parameters.treat import AnonymizeParams
from qar_sql.progress import with_progress
from qar_sql.pushdown.scan import Progress

NAME = "anonymize"
Params = AnonymizeParams


def run(session: Session, params: AnonymizeParams, progress: Progress | None = None) -> AnonymizeResult:
    """The least-loss node of the session's relation that meets ``params``' models and targets."""
    return choose(session, params, progress)


def treatments_text(result: AnonymizeResult) -> str:
    """The chosen node as a treatments file (``-o FILE.toml``) for ``qar whatif``, ``qar compare
    --treatments`` and ``qar report --treatments``."""
    if result.chosen is None:
        raise UsageError("no node meets every target, so there is no treatment to write; relax a target")
    if not result.treatments:
        raise UsageError(
            "the chosen node is the table as it is (every level 0, nothing suppressed); there is no treatment to write"
        )
    labels = ", ".join(f"{c} = {v}" for c, v in (result.levels or {}).items())
    header = (
        f"qar anonymize of {result.table or result.source}: levels {labels}; "
        f"{result.chosen.suppressed:,} records suppressed; k = {result.chosen.k}"
        + (f"; T̂ = {result.risk:.6g}" if result.risk is not None else "")
        + "\nCheck it with: qar whatif SOURCE -T THIS_FILE"
    )
    return treatments_toml(result.qi, result.treatments, header=header)


@with_progress("anonymize")
def anonymize(
    source: SourceLike = None,
    *,
    table: str | None = None,
    delimiter: str | None = None,
    null_tokens: Sequence[str] = (),
    hierarchy: Mapping[str, str] | Sequence[tuple[str, str]] = (),
    hierarchies: str | None = None,
    intervals: Mapping[str, Mapping[str, Any]] | None = None,
    qid: Sequence[str] | None = None,
    k: int | None = None,
    l: int | None = None,  # noqa: E741
    l_kind: str = AnonymizeParams.l_kind,
    c: float | None = None,
    t: float | None = None,
    t_kind: str = AnonymizeParams.t_kind,
    sensitive: str | None = None,
    risk_below: float | None = None,
    risk: bool = False,
    no_singletons: bool = False,
    suppression_limit: float = AnonymizeParams.suppression_limit,
    metric: str = AnonymizeParams.metric,
    gs_factor: float = AnonymizeParams.gs_factor,
    monotonic: bool = AnonymizeParams.monotonic,
    local: bool = False,
    drop_null: bool = False,
    columns: Sequence[str] | None = None,
    exclude: Sequence[str] | None = None,
    p: int = AnonymizeParams.p,
    alpha: float = AnonymizeParams.alpha,
    pi_u: float = AnonymizeParams.pi_u,
    pwm: str = AnonymizeParams.pwm,
    theta: str = AnonymizeParams.theta,
    jobs: int = AnonymizeParams.jobs,
    batch_size: int | None = None,
    threads: int | None = None,
    progress: Progress | None = None,
) -> AnonymizeResult:
    """The cheapest generalization of one table that meets the privacy models (docs/anonymize.md).

    ``hierarchy``: column → an ARX hierarchy CSV or a TOML file of interval levels;
    ``hierarchies``: a directory of ARX's ``<name>_hierarchy_<column>.csv`` files; ``intervals``:
    column → ``{"widths": [...], "bottom": ..., "top": ...}``. Models: ``k``, ``l`` (with
    ``sensitive``, ``l_kind``, ``c``), ``t`` (with ``sensitive``, ``t_kind``), ``no_singletons``,
    and the QaR target ``risk_below`` (T̂(p, α) of the release over ``columns``/``exclude``;
    ``risk=True`` reports T̂ without a target). ``metric`` is minimised; the result reports all."""
    params = AnonymizeParams(
        hierarchy=hierarchy, hierarchies=hierarchies, intervals=intervals, qid=qid, k=k, l=l, l_kind=l_kind, c=c,
        t=t, t_kind=t_kind, sensitive=sensitive, risk_below=risk_below, risk=risk, no_singletons=no_singletons,
        suppression_limit=suppression_limit, metric=metric, gs_factor=gs_factor, monotonic=monotonic, local=local, drop_null=drop_null,
        columns=columns, exclude=exclude, p=p, alpha=alpha, pi_u=pi_u, pwm=pwm, theta=theta, jobs=jobs,
        batch_size=batch_size,
    )  # fmt: skip
    with session_of(source, table=table, delimiter=delimiter, null_tokens=null_tokens, threads=threads) as session:
        return run(session, params, progress)
