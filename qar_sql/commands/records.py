"""``qar records``: which records carry the risk, by one of three rankings (``--by``).

* a score of the exact contributions — DT, U+, U*, n_unique (:mod:`qar_sql.ranking.records`);
* ``influence``: the first-order stand-in for DT, ranked in the database (:mod:`qar_sql.ranking.influence`);
* ``suda``: SUDA and DIS-SUDA on all the key columns (:func:`qar_sql.measures.classic.suda`).

The shape every command has (``qar_sql/commands/__init__.py``): its parameters
(:class:`~qar_sql.parameters.ranking.RecordsParams`), ``run(session, params, progress) → result``
and the Python API's functions — ``qar_sql.records(...)`` (the exact contributions) with
``.influence`` and ``.suda`` — which open the session and do the same work.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, Unpack

from qar_sql.commands.report import records_summary
from qar_sql.compliance.store import recorded_audit
from qar_sql.engines.session import Session
from qar_sql.engines.source import SourceLike, session_of
from qar_sql.errors import ParameterError
from qar_sql.measures.audit import Options, SourceOptions, split_options
from qar_sql.measures.classic import SudaRecords, suda, write_table
from qar_sql.output.files import written
from qar_sql.output.record_scores import write_influence, write_scores
from qar_sql.parameters.ranking import SCORES, RecordsParams
from qar_sql.parameters.tail import source_keywords
from qar_sql.progress import with_progress
from qar_sql.pushdown.record_keys import ROW_KEY, fetch_keys
from qar_sql.pushdown.scan import Progress
from qar_sql.ranking.influence import Influence
from qar_sql.ranking.influence import compute as influence_of
from qar_sql.ranking.records import Contributions, contributions_of
from qar_sql.results import to_plain
from qar_sql.stats.contributions import correlations

NAME = "records"
Params = RecordsParams


def audit_options(params: RecordsParams, progress: Progress | None = None) -> Options:
    """The audit's options (:class:`~qar_sql.measures.audit.Options`) of ``params``."""
    return Options(
        columns=params.columns, exclude=params.exclude, p=params.p, alpha=params.alpha, pi_u=params.pi_u,
        pwm=params.pwm, jobs=params.jobs, progress=progress,
    )  # fmt: skip


def run(
    session: Session, params: RecordsParams, progress: Progress | None = None
) -> Contributions | Influence | SudaRecords:
    """The records of the session's relation ranked by ``params.by``, with every record's
    scores written to ``params.output`` when given."""
    if params.by == "suda":
        return _suda(session, params)
    started = time.perf_counter()
    opts = audit_options(params, progress)
    if params.by == "influence":
        return _influence(session, params, opts, started)
    c = contributions_of(
        session.db, session.relation, opts, key=params.key, top=params.top, by=params.by,
        all_keys=params.every_key, source=session.label, started=started,
    )  # fmt: skip
    _write_scores(c, params)
    return c


def _write_scores(c: Contributions, params: RecordsParams) -> None:
    if params.output:
        output = str(params.output)
        with written(output, "--output"):
            write_scores(c, output)


def run_recorded(
    where: Mapping[str, Any],
    params: RecordsParams,
    progress: Progress | None = None,
    *,
    store: str,
    hash_keys: bool = False,
    hash_secret: str | None = None,
    store_in_source: bool = False,
) -> Contributions:
    """:func:`run` (exact contributions) recorded in the results ``store``: the run, its QI
    results, the top records by ``params.by`` (their keys hashed with ``hash_keys``) and the
    report's records section (``qar report --from-store``). The session of ``where`` (SOURCE,
    --table, --delimiter, --null-token) is opened once the run is recorded as running, so a
    source that fails to open is a failed run; ``--output`` is written once the run is complete."""
    top, by = params.top or 0, params.by
    computing = replace(params, output=None, all_keys=params.every_key)  # the file: after the run is recorded
    box: dict[str, Contributions] = {}

    def runner():
        with session_of(**source_keywords(where)) as session:
            result = run(session, computing, progress)
        assert isinstance(result, Contributions)  # RecordsParams: --store goes with a score of DT's kind
        box["c"] = c = result
        order = c.order(by)[:top]
        return c.audit, [(", ".join(map(str, c.key_of(r))), float(c.scores(by)[r])) for r in order]

    def sections(_):  # the records section of the report, rebuilt by qar report --from-store
        c = box["c"]
        return {"records": to_plain(records_summary(c, top, hash_secret, c.keys))}

    audit: dict[str, Any] = dict(columns=params.columns, exclude=params.exclude, p=params.p, alpha=params.alpha)
    audit |= dict(pi_u=params.pi_u, pwm=params.pwm)
    recorded_audit(
        store,
        **source_keywords(where),
        **audit,
        runner=runner,
        sections=sections,
        hash_keys=hash_keys,
        hash_secret_value=hash_secret,
        store_in_source=store_in_source,
    )
    _write_scores(box["c"], params)
    return box["c"]


def _influence(session: Session, params: RecordsParams, opts: Options, started: float) -> Influence:
    """``--by influence``: the top records by I(i); with ``compare_dt`` exact DT's correlation."""
    db, relation = session.db, session.relation
    top = params.top if params.top is not None else 100
    want_all = bool(params.output or params.all_records or params.compare_dt)  # (--format csv: the top, as the JSON)
    inf = influence_of(
        db, relation, opts, key=params.key, top=top, all_scores=want_all, source=session.label, started=started,
        refine=params.refine,
    )  # fmt: skip
    if params.compare_dt:
        exact = contributions_of(db, relation, replace(opts, progress=None), key=params.key, top=0)
        assert inf.scores is not None  # all_scores with compare_dt
        inf = replace(inf, correlation_with_dt=correlations(inf.scores, exact.dt))
    if params.output:
        output = str(params.output)
        rows = inf.audit.rows
        with written(output, "--output"):
            if inf.key == (ROW_KEY,):
                keys = {r: (r + 1,) for r in range(rows)}
            else:
                keys = fetch_keys(db, relation, inf.key, None)
            write_influence(inf, keys, output)
    return inf


def _suda(session: Session, params: RecordsParams) -> SudaRecords:
    """``--by suda``: every record's SUDA and DIS-SUDA score (sdcMicro's suda2)."""
    found = suda(
        session, columns=params.columns, exclude=params.exclude, key=params.key, max_size=params.max_size,
        missing=params.missing, sampling_fraction=params.sampling_fraction, population=params.population,
        all_keys=params.every_key, jobs=params.jobs,
    )  # fmt: skip
    if params.output:
        import numpy as np

        output = str(params.output)
        result, keys = found.suda, found.keys
        data = {name: np.array([keys[r][i] for r in range(result.score.size)]) for i, name in enumerate(found.key)}
        data.update(suda=result.score, dis_suda=result.dis_score)
        for k in range(result.max_size):
            data[f"msu_{k + 1}"] = result.msu_counts[:, k]
        write_table(data, output, "parquet" if output.lower().endswith(".parquet") else "csv")
    return found


@with_progress("records")
def contributions(
    source: SourceLike = None,
    *,
    key: Sequence[str] | None = None,
    top: int | None = 100,
    by: str = "dt",
    all_keys: bool = False,
    **options: Unpack[SourceOptions],
) -> Contributions:
    """Exact DT, U+, U*, n_unique for every record of a table, computed in the database.

    Key values are fetched for the ``top`` records by ``by`` (all records with ``all_keys``).
    ``options``: ``table``, ``columns``, ``exclude``, ``p``, ``alpha``, ``pi_u``, ``pwm``,
    ``delimiter``, ``jobs``, ``progress`` as :func:`qar_sql.audit` (:class:`SourceOptions`).
    """
    opts, where = split_options(options)
    opts.validate()
    if by not in SCORES:
        raise ParameterError(f"--by {by!r} is not a record score; use one of {', '.join(SCORES)}")
    params = RecordsParams(
        columns=opts.columns, exclude=opts.exclude, p=opts.p, alpha=opts.alpha, pi_u=opts.pi_u, pwm=opts.pwm,
        key=key, top=top, by=by, all_keys=all_keys, jobs=opts.jobs,
    )  # fmt: skip
    started = time.perf_counter()
    with session_of(source, **where) as session:
        return contributions_of(
            session.db, session.relation, opts, key=params.key, top=params.top, by=params.by,
            all_keys=params.every_key, source=session.label, started=started,
        )  # fmt: skip


@with_progress("influence")
def influence(
    source: SourceLike = None,
    *,
    key: Sequence[str] | None = None,
    top: int = 100,
    all_scores: bool = False,
    refine: int = 0,
    **options: Unpack[SourceOptions],
) -> Influence:
    """Top records by influence score I(i), computed in the database (no exact DT needed).
    With ``refine=N``, exact DT of the top N records by I as well (``Influence.refined``).
    ``options``: the source and audit keywords of :func:`qar_sql.audit` (:class:`SourceOptions`)."""
    opts, where = split_options(options)
    opts.validate()
    params = RecordsParams(
        columns=opts.columns, exclude=opts.exclude, p=opts.p, alpha=opts.alpha, pi_u=opts.pi_u, pwm=opts.pwm,
        key=key, top=top, by="influence", refine=refine, jobs=opts.jobs,
    )  # fmt: skip
    started = time.perf_counter()
    with session_of(source, **where) as session:
        return influence_of(
            session.db, session.relation, opts, key=params.key, top=top, all_scores=all_scores,
            source=session.label, started=started, refine=params.refine,
        )  # fmt: skip


class Records:
    """``qar_sql.records(source, key=…, …)`` is :func:`contributions` (exact DT, U+, U*,
    n_unique per record); ``qar_sql.records.contributions``, ``.influence`` (``qar records --by
    influence``) and ``.suda`` (``--by suda``, a :class:`~qar_sql.measures.classic.SudaRecords`)
    are the functions themselves, as ``qar records`` is one command with three rankings."""

    # The function itself as __call__: one signature, typed once (contributions'), and shown
    # whole by inspect/help (which would otherwise drop ``source`` as if it were ``self``).
    __call__ = staticmethod(contributions)
    __signature__ = inspect.signature(contributions)
    contributions = staticmethod(contributions)
    influence = staticmethod(influence)
    suda = staticmethod(suda)

    def __repr__(self) -> str:
        return "<qar_sql.records: records(source, key=...), .contributions, .influence, .suda>"


records = Records()
