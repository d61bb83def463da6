"""``qar whatif``: what would a treatment buy? Pastore et al.'s Table 1 for each treatment and
combination of a treatments file; the algorithm is :mod:`qar_sql.treat.whatif`.

The shape every command has (``qar_sql/commands/__init__.py``): its parameters
(:class:`~qar_sql.parameters.treat.WhatIfParams`), ``run(session, params, progress) → result``,
and the Python API's function, which opens the session and calls ``run``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Unpack

from qar_sql.engines.session import Session
from qar_sql.engines.source import SourceLike, session_of
from qar_sql.measures.audit import SourceOptions, split_options
from qar_sql.parameters.treat import WhatIfParams
from qar_sql.progress import with_progress
from qar_sql.pushdown.scan import Progress
from qar_sql.treat.treatments import Plan, load
from qar_sql.treat.whatif import WhatIfResult, whatif_relation

NAME = "whatif"
Params = WhatIfParams


def with_plan(params: WhatIfParams) -> WhatIfParams:
    """``params`` with its treatments file read (a bad file fails here, before any connection)."""
    return params if isinstance(params.treatments, Plan) else replace(params, treatments=load(params.treatments))


def run(session: Session, params: WhatIfParams, progress: Progress | None = None) -> WhatIfResult:
    """Every scenario of ``params.treatments`` on the session's relation."""
    return whatif_relation(session, params, progress)


@with_progress("whatif")
def whatif(
    source: SourceLike = None,
    *,
    treatments: str | Path | Plan | Mapping,
    qid: Sequence[str] | str | None = None,
    combine: Sequence[Sequence[str]] | None = None,
    only: Sequence[str] | None = None,
    drop_null: bool = False,
    risk: bool = True,
    batch_size: int | None = None,
    threads: int | None = None,
    key: str | None = None,
    loss: bool = True,
    **options: Unpack[SourceOptions],
) -> WhatIfResult:
    """Table 1 of Pastore et al. for every treatment in ``treatments`` (a TOML path, TOML text,
    a dict or a :class:`~qar_sql.treat.treatments.Plan`) and every combination (the file's
    ``combinations`` plus ``combine``), with T̂(p, α) before and after over the audit columns
    (``columns``/``exclude``; ``risk=False`` skips it). ``only`` keeps just the named
    scenarios (a treatment name, or names joined by ``+``). ``key`` names the column that
    identifies rows for the perturbative treatments' draws (default: the file's ``key``).
    ``loss`` adds the information-loss report of every treated scenario. ``options``: the source
    and audit keywords of :func:`qar_sql.audit` (:class:`SourceOptions`)."""
    started = time.perf_counter()
    opts, where = split_options(options)
    params = WhatIfParams(
        treatments=treatments, qid=qid, combine=combine, only=only, drop_null=drop_null, risk=risk, key=key,
        loss=loss, columns=opts.columns, exclude=opts.exclude, p=opts.p, alpha=opts.alpha, pi_u=opts.pi_u,
        pwm=opts.pwm, batch_size=batch_size, jobs=opts.jobs,
    )  # fmt: skip
    params = with_plan(params)
    with session_of(source, **where, threads=threads) as session:
        return whatif_relation(session, params, opts.progress, started=started)
