"""``qar eliminate``: backward elimination, the risk after removing the top records of each ranking.

The shape every command has (``qar_sql/commands/__init__.py``): its parameters
(:class:`~qar_sql.parameters.ranking.EliminateParams`), ``run(session, params, progress) →
result`` (the curves of :mod:`qar_sql.ranking.eliminate`, drawn to ``params.plot`` when given)
and the Python API's function, which opens the session and calls ``run``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Unpack

from qar_sql.engines.session import Session
from qar_sql.engines.source import SourceLike, session_of
from qar_sql.measures.audit import SourceOptions, split_options
from qar_sql.output.files import written
from qar_sql.output.render_records import plot_elimination
from qar_sql.parameters.ranking import EliminateParams
from qar_sql.progress import with_progress
from qar_sql.pushdown.scan import Progress
from qar_sql.ranking.eliminate import Elimination, eliminate_relation

NAME = "eliminate"
Params = EliminateParams


def run(
    session: Session, params: EliminateParams, progress: Progress | None = None, *, started: float | None = None
) -> Elimination:
    """The elimination curves of the session's relation for every ranking of ``params.by``."""
    result = eliminate_relation(session, params, progress, started=started)
    if params.plot:
        path = str(params.plot)
        with written(path, "--plot"):
            plot_elimination(result, path)
    return result


@with_progress("eliminate")
def eliminate(
    source: SourceLike = None,
    *,
    key: Sequence[str] | None = None,
    by: Sequence[str] = ("dt", "u_plus", "u_star", "random"),
    step: int = 100,
    max_removed: str | int = "20%",
    greedy_steps: int | None = None,
    seed: int = 0,
    orders: dict[str, list] | None = None,
    **options: Unpack[SourceOptions],
) -> Elimination:
    """Block elimination curves for each ranking in ``by`` (plus greedy when asked).
    ``options``: the source and audit keywords of :func:`qar_sql.audit` (:class:`SourceOptions`)."""
    opts, where = split_options(options)
    params = EliminateParams(
        columns=opts.columns, exclude=opts.exclude, p=opts.p, alpha=opts.alpha, pi_u=opts.pi_u, pwm=opts.pwm,
        key=key, by=tuple(by), step=step, max_removed=max_removed, greedy_steps=greedy_steps, seed=seed,
        orders=orders, jobs=opts.jobs,
    )  # fmt: skip
    started = time.perf_counter()
    with session_of(source, **where) as session:
        return run(session, params, opts.progress, started=started)
