"""The work of ``qar records`` and ``qar eliminate`` (:mod:`qar_sql.commands.records`,
:mod:`qar_sql.commands.eliminate`): numpy-backed, loaded when one of them runs, not when
``qar --help`` loads their options."""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from qar_sql.command import Extras
from qar_sql.commands.page import given
from qar_sql.commands.report import audit_html, records_summary
from qar_sql.compliance.store import HASH_SECRET_ENV, recorded_audit
from qar_sql.compliance.store import hash_secret as read_secret
from qar_sql.engines.session import Session
from qar_sql.engines.source import session_of
from qar_sql.measures.audit import Options
from qar_sql.measures.classic import SudaRecords, suda, write_table
from qar_sql.output.render_records import plot_elimination
from qar_sql.parameters.ranking import EliminateParams, RecordsParams
from qar_sql.parameters.tail import source_keywords
from qar_sql.pushdown.record_keys import ROW_KEY, fetch_keys
from qar_sql.pushdown.scan import Progress
from qar_sql.ranking.eliminate import Elimination, eliminate_relation
from qar_sql.ranking.influence import Influence
from qar_sql.ranking.influence import compute as influence_of
from qar_sql.ranking.records import Contributions, contributions_of, key_columns
from qar_sql.results import pick, to_plain
from qar_sql.stats.contributions import correlations

# --- qar records ----------------------------------------------------------------------------------


def rank(
    session: Session, params: RecordsParams, progress: Progress | None = None
) -> Contributions | Influence | SudaRecords:
    """The records of the session's relation ranked by ``params.by``, with every record's
    scores written to ``params.output`` when given."""
    if params.by == "suda":
        return by_suda(session, params)
    started = time.perf_counter()
    opts = Options.of(params, progress)
    if params.by == "influence":
        return by_influence(session, params, opts, started)
    c = contributions_of(
        session.db,
        session.relation,
        opts,
        **pick(params, ("key", "top", "by")),
        all_keys=params.every_key,
        source=session.label,
        started=started,
    )
    write_scores_of(c, params)
    return c


def write_scores_of(c: Contributions, params: RecordsParams) -> None:
    """Every record's key (``c`` has every key fetched), DT, U+, U* and n_unique, in key order."""
    if params.output:
        columns = key_columns(c.key, [c.key_of(r) for r in range(c.rows)])
        scores = {"dt": c.dt, "u_plus": c.u_plus, "u_star": c.u_star, "n_unique": c.n_unique}
        write_table(columns | scores, str(params.output), "--output")


def recorded(
    where: Mapping[str, Any],
    params: RecordsParams,
    progress: Progress | None = None,
    *,
    store: str,
    hash_keys: bool = False,
    hash_secret: str | None = None,
    store_in_source: bool = False,
) -> Contributions:
    """:func:`rank` (exact contributions) recorded in the results ``store``: the run, its QI
    results, the top records by ``params.by`` (their keys hashed with ``hash_keys``) and the
    report's records section (``qar report --from-store``). The session of ``where`` (SOURCE,
    --table, --delimiter, --null-token) is opened once the run is recorded as running, so a
    source that fails to open is a failed run; ``--output`` is written once the run is complete."""
    top, by = params.top or 0, params.by
    computing = replace(params, output=None, all_keys=params.every_key)  # the file: after the run is recorded
    box: dict[str, Contributions] = {}

    def runner():
        with session_of(**source_keywords(where)) as session:
            result = rank(session, computing, progress)
        assert isinstance(result, Contributions)  # RecordsParams: --store goes with a score of DT's kind
        box["c"] = c = result
        order = c.order(by)[:top]
        return c.audit, [(", ".join(map(str, c.key_of(r))), float(c.scores(by)[r])) for r in order]

    def sections(_):  # the records section of the report, rebuilt by qar report --from-store
        c = box["c"]
        return {"records": to_plain(records_summary(c, top, hash_secret, c.keys))}

    audit = pick(params, ("columns", "exclude", "p", "alpha", "pi_u", "pwm"))
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
    write_scores_of(box["c"], params)
    return box["c"]


def by_influence(session: Session, params: RecordsParams, opts: Options, started: float) -> Influence:
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
        rows = inf.audit.rows
        keys = {r: (r + 1,) for r in range(rows)} if inf.key == (ROW_KEY,) else fetch_keys(db, relation, inf.key, None)
        columns = key_columns(inf.key, [keys[r] for r in range(rows)])
        write_table(columns | {"influence": inf.scores}, str(params.output), "--output")
    return inf


def by_suda(session: Session, params: RecordsParams) -> SudaRecords:
    """``--by suda``: every record's SUDA and DIS-SUDA score (sdcMicro's suda2)."""
    shared = ("columns", "exclude", "key", "max_size", "missing", "sampling_fraction", "population", "jobs")
    found = suda(session, **pick(params, shared), all_keys=params.every_key)
    if params.output:
        result, keys = found.suda, found.keys
        data: dict[str, Any] = key_columns(found.key, [keys[r] for r in range(result.score.size)])
        data.update(suda=result.score, dis_suda=result.dis_score)
        for k in range(result.max_size):
            data[f"msu_{k + 1}"] = result.msu_counts[:, k]
        write_table(data, str(params.output), "--output")
    return found


def report_html(c: Contributions, params: RecordsParams, extras: Extras) -> str:
    """``--format html``: the report's audit and records sections (docs/report.md)."""
    secret = extras.out.get("hash_secret")
    if secret is None and os.environ.get(HASH_SECRET_ENV):
        secret = read_secret()
    where = given(extras.where, params, "source table columns exclude delimiter null_tokens")
    summary = records_summary(c, params.top or 0, secret, c.keys)
    return audit_html(
        c.audit, where, [secret] if secret else [], jobs=params.jobs, records=summary, store=extras.out["store"]
    )


# --- qar eliminate --------------------------------------------------------------------------------


def curves(session: Session, params: EliminateParams, progress: Progress | None = None) -> Elimination:
    """The elimination curves of the session's relation for every ranking of ``params.by``, drawn
    to ``params.plot`` when given."""
    result = eliminate_relation(session, params, progress)
    if params.plot:
        plot_elimination(result, str(params.plot))
    return result
