"""``qar risk``: the classic disclosure-risk measures (sdcMicro, ARX) of every quasi-identifier.

The shape every command has (``qar_sql/commands/__init__.py``): its parameters
(:class:`~qar_sql.parameters.measures.RiskParams`), ``run(session, params, progress) → result``, and
the Python API's function, which opens the session and calls ``run``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence

from qar_sql.engines.session import Session
from qar_sql.engines.source import SourceLike, session_of
from qar_sql.measures.classic import RiskResult, check_not_source, output_kind, risk_relation
from qar_sql.parameters.measures import RiskParams
from qar_sql.progress import with_progress
from qar_sql.pushdown.scan import Progress
from qar_sql.rules import DEFAULT_JOBS

NAME = "risk"
Params = RiskParams


def run(session: Session, params: RiskParams, progress: Progress | None = None) -> RiskResult:
    """The classic measures of the session's relation for every p-subset of the key columns."""
    return risk_relation(session, params, progress)


@with_progress("risk")
def risk(
    source: SourceLike = None,
    *,
    table: str | None = None,
    columns: Sequence[str] | None = None,
    exclude: Sequence[str] | None = None,
    p: int | None = None,
    weight: str | None = None,
    sensitive: Sequence[str] = (),
    ordered: Sequence[str] = (),
    missing: str = "value",
    sampling_fraction: float | None = None,
    population: int | None = None,
    risk_threshold: float = 0.2,
    l_threshold: int = 2,
    t_threshold: float = 0.2,
    per_record: str | os.PathLike | None = None,
    key: Sequence[str] | None = None,
    suda_max_size: int | None = None,
    delimiter: str | None = None,
    all_text: bool = False,
    jobs: int = DEFAULT_JOBS,
    progress: Progress | None = None,
    null_tokens: Sequence[str] = (),
) -> RiskResult:
    """The classic disclosure-risk measures (sdcMicro, ARX) of every p-subset of the key
    columns, computed in the database. See :mod:`qar_sql.measures.classic` and docs/risk-measures.md."""
    params = RiskParams(
        columns=columns, exclude=exclude, p=p, weight=weight, sensitive=sensitive, ordered=ordered, missing=missing,
        sampling_fraction=sampling_fraction, population=population, risk_threshold=risk_threshold,
        l_threshold=l_threshold, t_threshold=t_threshold, per_record=per_record, key=key,
        suda_max_size=suda_max_size, jobs=jobs,
    )  # fmt: skip
    if per_record is not None:
        output_kind(str(per_record))
        check_not_source(per_record, source, "--per-record")
    started = time.perf_counter()
    with session_of(source, table=table, delimiter=delimiter, all_text=all_text, null_tokens=null_tokens) as session:
        return risk_relation(session, params, progress, started=started)
