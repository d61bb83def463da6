"""``qar report``: one self-contained HTML report of a table (:func:`qar_sql.report`).

The hooks of the command :data:`qar_sql.commands.release.REPORT` (``qar report`` and
:func:`qar_sql.report` are made from it): its parameters
(:class:`~qar_sql.parameters.release.ReportParams`), :func:`prepare`, :func:`files` (the output
guard's), ``run(session, params, progress) → result``, :func:`write` and :func:`verdict`. Its ``run`` is the one
that runs other commands: on one session, the audit and the per-record contributions in one
fused scan, then the elimination curves; the what-if, uniqueness, comparison and classic
sections are those commands' ``run`` on the same session, the history a results store's.
Rendering and the result types are :mod:`qar_sql.output.html`, from these result objects alone.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from qar_sql.anonymization.choose import refuse_impossible
from qar_sql.command import TAIL_ORDER
from qar_sql.commands import anonymize, compare, whatif
from qar_sql.commands.catalog_checks import audited
from qar_sql.commands.page import command_line, html, report_inputs, sql_text  # noqa: F401 (html: the commands' pages)
from qar_sql.comparison.tables import check_link
from qar_sql.compliance.history import history
from qar_sql.compliance.store import (
    HASH_SECRET_ENV,
    check_store,
    hash_key,
    hash_secret,
    stored_audit,
    stored_results,
    stored_section,
    stored_top_records,
)
from qar_sql.engines.dialects import refuse_unsafe_columns
from qar_sql.engines.secrets import mask_source, scrub, secret_values
from qar_sql.engines.session import Session
from qar_sql.engines.source import SourceLike, is_url, resolve_source, select_columns
from qar_sql.errors import QarError, SourceNotFound, UsageError
from qar_sql.extras import require
from qar_sql.guard import check_not_input
from qar_sql.measures.audit import Options, audit_relation, with_sensitivity
from qar_sql.measures.classic import check_exist, check_roles, output_kind, risk_relation
from qar_sql.output.files import check_writable
from qar_sql.output.html import (
    RecordRow,
    RecordsSummary,
    ReportInputs,
    render_index,
    render_report,
    write_report,
)
from qar_sql.parameters.measures import RiskParams, UniquenessParams
from qar_sql.parameters.release import CompareParams, ReportParams, check_release_context
from qar_sql.parameters.treat import WhatIfParams
from qar_sql.pushdown.cells import rows_and_population
from qar_sql.pushdown.record_keys import ROW_KEY, fetch_keys
from qar_sql.pushdown.scan import Progress
from qar_sql.pushdown.showsql import show_sql
from qar_sql.ranking import eliminate as E
from qar_sql.ranking.greedy import greedy_elimination
from qar_sql.ranking.records import compute
from qar_sql.results import AuditResult, History, pick
from qar_sql.rules import DEFAULT_JOBS
from qar_sql.stats import interval as tail_interval
from qar_sql.treat.release_uniqueness import uniqueness_session, with_plan
from qar_sql.treat.treatments import load as load_treatments
from qar_sql.treat.whatif import check_names as whatif_names
from qar_sql.user_text import one_line

NAME = "report"
Params = ReportParams


def records_summary(contrib, top: int, hash_secret: str | None, keys: Mapping[int, tuple] | None = None):
    """The top records by DT of a :class:`~qar_sql.ranking.records.Contributions`, by position
    and, with a secret, hashed key (``keys``: record position → key values; default the row
    number). Raw keys never go into the summary."""
    rows = []
    for r in contrib.order("dt")[:top]:
        hashed = None
        if hash_secret:
            kv = (keys or {}).get(int(r), (int(r) + 1,) if contrib.key == (ROW_KEY,) else None)
            hashed = None if kv is None else hash_key(", ".join(map(str, kv)), hash_secret)
        dt = float(contrib.dt[r])
        scores = float(contrib.u_plus[r]), float(contrib.u_star[r]), int(contrib.n_unique[r])
        rows.append(RecordRow(int(r) + 1, hashed, None if dt != dt else dt, *scores))
    none = contrib.patterns.counts[0]  # records unique on no QI
    share = float(none / contrib.rows)
    return RecordsSummary(
        contrib.key, bool(hash_secret), tuple(rows), share, contrib.warnings, unique_on_no_qi=int(none)
    )


def prepared(params: ReportParams, columns: Sequence[str] | None = None, display: str = "") -> ReportParams:
    """``params`` checked before the first query: the treatments file read (a bad one fails here,
    not after the audit; the result holds the :class:`~qar_sql.treat.treatments.Plan`) and,
    given the relation's ``columns`` (named ``display``), the file's QID, treated columns and key
    among them, --link among them, and the ``--sensitive`` and ``--weight`` columns among them but not among the
    audited ones (the audit takes every column but ``--exclude``, so the classic measures could not)."""
    if params.treatments is not None:
        params = dataclasses.replace(params, treatments=load_treatments(params.treatments))
        if columns is not None:
            whatif_names(params.treatments, columns, display)
    if columns is not None and params.compare is not None:
        check_link(columns, params.link)
    if columns is not None and (params.treatments is not None or params.anonymize is not None):
        refuse_unsafe_columns(columns, "a treated release")  # not after the audit and records passes
    keywords = params.classic_keywords
    if columns is not None and keywords:
        check_exist(columns, keywords.get("weight"), keywords.get("sensitive") or ())
        qi = select_columns(columns, params.columns, params.exclude)
        check_roles(qi, keywords.get("weight"), keywords.get("sensitive") or (), excluded=not params.columns)
    return params


def check(params: ReportParams, relation: Any) -> None:
    """The treatments file's QID and columns, --link, --sensitive and --weight (:func:`prepared`
    on the columns) and the audit's settings (:attr:`qar_sql.command.Command.check`); a report of
    a recorded run reads no table and is not checked here."""
    prepared(params, relation.columns, relation.display)
    audited(params, relation)


def run(session: Session | None, params: ReportParams, progress: Progress | None = None) -> ReportInputs:
    """What the report shows of the session's relation. The records and elimination sections
    need a record order: ``params.key`` for a database table, the row order of a file; the other
    sections are their commands' ``run`` on the same session (what-if, uniqueness, original vs
    treated, classic measures), each with the statements it rendered; the history is read from
    the results store. ``progress`` follows the audit's scan. With ``params.from_store`` the
    report is a recorded run's (:func:`stored`) and ``session`` is None: no source is read."""
    if params.from_store is not None:
        return stored(params)
    assert session is not None, "a report of SOURCE runs in its session"
    started = time.perf_counter()
    records = params.records
    if records is None:
        records = bool(params.key) or session.relation.row_order is not None
    if records:  # (the elimination section's engine, before a query reads a row)
        E.check_block(session.db, "or leave the records and elimination sections out with --no-records")
    population = (params.classic_keywords or {}).get("population")
    if population is not None:  # compared with the rows: one count, not after the audit's passes
        rows_and_population(session.db, session.relation, population, None)
    if params.anonymize is not None:  # a target no release can meet (--k above the rows): not after the passes
        refuse_impossible(session, dataclasses.replace(params.anonymize, drop_null=False))
    opts = Options.of(params, progress)
    rec = elim = None
    if records:
        result, rec, elim = _records(session, params, opts, started)
    else:
        iv: dict[str, Any] = {"interval_level": params.interval_level, "bootstrap": params.bootstrap}
        iv = {name: v for name, v in iv.items() if v is not None}
        result = audit_relation(
            session.db, session.relation, opts, k=params.k, started=started, source=session.label, **iv
        )
    if result.k != params.k:
        result = dataclasses.replace(result, k=params.k)
    result = with_sensitivity(result)  # the unique measure and T̂ without each column: no query
    ran: dict[str, list[str]] = {}  # the other sections' statements, as rendered while they ran
    found: dict[str, Any] = {"records": rec, "elimination": elim}
    for field, title, section in SECTIONS:
        value = section(params, result.columns, session.where)
        if value is None:
            found[field] = None
            continue
        run, settings = value
        start = len(session.sql_log)
        with session.logging_sql():
            found[field] = run(session, settings)
        ran[title] = session.sql_log[start:]
    found["history"] = read_history(params.store, result.table) if params.store is not None else None
    where = session.where
    resolved, table = where.get("source", session.label), where.get("table")
    audit_sql = _sql(resolved, table, result, where.get("delimiter"), params.jobs)
    sql = "\n".join(filter(None, [audit_sql, *map(sql_text, ran, ran.values())]))
    parameters = _parameters(
        result, table, key=list(params.key) if params.key else None, top=params.top, threshold=params.threshold,
        treatments=getattr(params.treatments, "path", None), **_store_parameter(params.store),
        hashed_keys=bool(params.hash_secret), group_size=params.group_size,
        compare=mask_source(params.compare) if params.compare else None, treated_table=params.treated_table,
        link=params.link or ("aligned" if params.aligned else None),
        classic=params.classic_keywords if params.classic_keywords is not None else False,
    )  # fmt: skip
    secrets = secret_values(resolved) + secret_values(params.compare)
    secrets += [params.hash_secret] if params.hash_secret else []
    found |= release_context(params.threshold, params.threshold_source, **params.context)
    return report_inputs(result, parameters, sql=sql, command=params.command, secrets=secrets, **found)


def _records(
    session: Session, params: ReportParams, opts: Options, started: float
) -> tuple[AuditResult, RecordsSummary, Any]:
    """(the audit, the records section, the elimination section) from one fused pass: the audit
    and the per-record contributions, then the elimination curves (block by DT, random and,
    with ``params.greedy``, greedy)."""

    db, relation, top = session.db, session.relation, params.top
    contrib, order_by = compute(db, relation, opts, key=params.key, source=session.label, started=started)
    result = with_intervals(contrib.audit, params.interval_level, params.bootstrap)
    keys: dict[int, tuple] = {}
    if params.hash_secret and contrib.key != (ROW_KEY,):
        keys = fetch_keys(db, relation, contrib.key, [int(r) for r in contrib.order("dt")[:top]])
    rec = records_summary(contrib, top, params.hash_secret, keys)
    risk0 = result.risk
    assert risk0 is not None  # compute() refuses a table without a tail
    step = params.eliminate_step or max(1, contrib.rows // 200)
    kmax = E.parse_max("10%", contrib.rows, step)
    curves = E.block_curves(contrib, db, relation, order_by, opts, ("dt", "random"), step, kmax, seed=0)
    notes: tuple[str, ...] = ()
    if params.greedy:
        curves["greedy"], notes = greedy_curve(db, relation, result.columns, order_by, kmax, step, risk0, opts)
    seconds = time.perf_counter() - started
    return result, rec, E.Elimination(risk0, contrib.rows, step, kmax, curves, notes=notes, seconds=seconds)


# -- the sections that are other commands' results -------------------------------------------------
# Each: (the command's module, its parameters) for the audited columns, or None when the section
# is not asked for. The commands run on the report's session, in this order.


def _whatif(params: ReportParams, columns: Sequence[str], where: Mapping[str, Any]) -> tuple[Any, Any] | None:
    if params.treatments is None:
        return None

    settings = WhatIfParams(treatments=params.treatments, columns=columns, jobs=params.jobs, **pick(params, TAIL_ORDER))
    return whatif.run, whatif.prepare(settings)


def _uniqueness(params: ReportParams, columns: Sequence[str], where: Mapping[str, Any]) -> tuple[Any, Any] | None:
    if params.group_size is None:
        return None

    # exposed=0: the most exposed value combinations are the rare values themselves; a report
    # handed on must not carry them.
    settings = UniquenessParams(group_size=params.group_size, exposed=0, columns=columns, p=params.p, jobs=params.jobs)
    return uniqueness_session, with_plan(settings)


def _compare(params: ReportParams, columns: Sequence[str], where: Mapping[str, Any]) -> tuple[Any, Any] | None:
    if params.compare is None:
        return None

    # The treated release is read as the original is: its --delimiter and --null-token, and
    # the original's --table where TREATED is a database too.
    settings = CompareParams(
        table=where.get("table"),
        treated=params.compare,
        columns=columns,
        delimiter=where.get("delimiter"),
        null_tokens=where.get("null_tokens", ()),
        **pick(params, ("treated_table", "link", "aligned", "jobs", *TAIL_ORDER)),
    )
    return compare.run, compare.prepare(settings)


def _classic(params: ReportParams, columns: Sequence[str], where: Mapping[str, Any]) -> tuple[Any, Any] | None:
    keywords = params.classic_keywords
    if keywords is None:
        return None

    if keywords.get("per_record") is not None:  # as qar_sql.risk checks it
        output_kind(str(keywords["per_record"]))
        check_not_input([("--per-record", keywords["per_record"])], [("the source file itself", where.get("source"))])
    return risk_relation, RiskParams(columns=columns, p=params.p, jobs=params.jobs, **keywords)


def _anonymize(params: ReportParams, columns: Sequence[str], where: Mapping[str, Any]) -> tuple[Any, Any] | None:
    if params.anonymize is None:
        return None

    # T̂ of the release over the audited columns, with the report's p, α, π_u (always shown)
    settings = dataclasses.replace(
        params.anonymize, columns=list(columns), exclude=None, risk=True, **pick(params, TAIL_ORDER)
    )
    return anonymize.run, settings


#: The sections that are other commands' results: (the ReportInputs field, the title of its
#: statements in the SQL block, its run(session, parameters) and parameters or None).
SECTIONS = (
    ("whatif", "what-if", _whatif),
    ("uniqueness", "uniqueness", _uniqueness),
    ("compare", "original vs treated", _compare),
    ("anonymize", "anonymization", _anonymize),
    ("classic", "classic measures", _classic),
)


def with_intervals(result: AuditResult, level: float | None, resamples: int | None) -> AuditResult:
    """``result`` with the bootstrap intervals of its tail fit (the records pass audits without
    them, for speed; the first page states them): as :func:`qar_sql.audit` computes them, from
    the θ in memory. A pruned audit, one without a tail or ``resamples`` 0 keeps none."""
    level = tail_interval.check_level(tail_interval.DEFAULT_LEVEL if level is None else level)
    resamples = tail_interval.check_resamples(tail_interval.DEFAULT_RESAMPLES if resamples is None else resamples)
    if result.fit is None or result.n_pruned or not resamples or result.intervals is not None:
        return result
    tail = pick(result, ("alpha", "pi_u", "pwm"))
    intervals = tail_interval.bootstrap_intervals(
        result.theta, result.rows, result.fit, **tail, level=level, resamples=resamples
    )
    return dataclasses.replace(result, intervals=intervals)


def release_context(
    threshold: float | None, threshold_source: str | None = None, title: str | None = None,
    owner: str | None = None, purpose: str | None = None, release_kind: str = "internal",
) -> dict[str, Any]:  # fmt: skip
    """The :class:`ReportInputs` fields of the first page's context, checked: a threshold is a
    risk in [0, 1] (None: the user set none, so no verdict), the release kind one of
    :data:`RELEASE_KINDS`."""
    check_release_context(threshold, release_kind)
    given: dict[str, Any] = {"threshold": None if threshold is None else float(threshold)}
    given["threshold_source"] = None if threshold is None else (threshold_source or "the threshold argument")
    return given | {"title": title, "owner": owner, "purpose": purpose, "release_kind": release_kind}


#: The greedy elimination of the report removes at most this many records (one step each, every
#: class updated: on a large table the block curve's 10% would take minutes).
GREEDY_STEPS = 5000


def greedy_curve(db, relation, columns, order_by, kmax: int, step: int, risk0: float, opts) -> tuple:
    """The greedy elimination's points every ``step`` records up to ``kmax`` (it re-ranks after
    each removal, :mod:`qar_sql.ranking.greedy`), and a note instead when the table is too large
    for it (it holds every record's class on every QI in memory)."""

    steps = min(kmax, GREEDY_STEPS)
    try:
        g = greedy_elimination(
            db, relation, columns, opts.p, order_by, steps=steps, alpha=opts.alpha, pi_u=opts.pi_u, pwm=opts.pwm
        )
    except QarError as exc:
        return (), (f"the greedy elimination curve is left out: {exc}",)
    notes = tuple(g.warnings)
    if steps < kmax:
        notes += (f"the greedy curve stops at {steps:,} records removed (qar eliminate --by greedy goes further)",)
    return E.greedy_points(g, step, steps, risk0), notes


def read_history(store: str | None, table: str | None) -> Any:
    """The history section's :class:`~qar_sql.results.History`: the runs of ``table``
    (every run without one) in ``store`` ("": the default store); none yet is an empty history."""

    try:
        return history(store or None, table=table) if table else history(store or None)
    except UsageError as exc:  # no earlier runs of this table: the section says so
        if "no runs of table" not in str(exc):
            raise
        return History(mask_source(store) if store else "the default store", ())


def audit_inputs(
    result: AuditResult,
    where: Mapping[str, Any],
    *,
    threshold: float | None = None,
    threshold_source: str | None = None,
    command: str | None = None,
    jobs: int = DEFAULT_JOBS,
    records: RecordsSummary | None = None,
    store: str | None = None,
) -> ReportInputs:
    """The report of an audit already run (``qar audit --format html``; ``qar records --format
    html`` adds ``records``): those sections and the reproducibility block, no other pass; with
    ``store`` (``--store``, where the run was just recorded) the history of its table there. The
    unique measure's T̂ and T̂ without each column come from the counts in hand (no query; a
    pruned audit keeps what it has)."""
    result = with_sensitivity(result)
    source = where.get("source")
    resolved = resolve_source(source)
    sql = _sql(resolved, where.get("table"), result, where.get("delimiter"), jobs)
    secrets = secret_values(resolved)
    parameters = _parameters(result, where.get("table"), threshold=threshold, **_store_parameter(store))
    hist = read_history(store, result.table) if store is not None else None
    found = {"records": records, "history": hist, **release_context(threshold, threshold_source)}
    return report_inputs(result, parameters, sql=sql, command=command, secrets=secrets, **found)


def audit_html(result: AuditResult, where: Mapping[str, Any], secrets: Sequence[str] = (), **keywords: Any) -> str:
    """``--format html`` of ``qar audit`` and ``qar records``: the report of the audit ``result``
    (:func:`audit_inputs` with ``keywords``), with the command line as typed, ``secrets`` masked."""
    return audit_inputs(result, where, command=command_line(secrets), **keywords).to_html()


def from_store(
    store: str | None,
    run_id: str,
    *,
    threshold: float | None = None,
    threshold_source: str | None = None,
    history: bool = True,
    command: str | None = None,
) -> ReportInputs:
    """The report of a run recorded in a results store, from the stored results alone (no
    source is read): the sections of the live report of that run (``qar audit/records --format
    html``: summary, θ and tail fit, the riskiest QIs, k-anonymity with its histograms, the
    uniqueness of ``--group-size``, the top records), the SQL the run's options give, and the
    history of its table in that store. A run recorded before migration 0004 kept fewer
    numbers: no histograms, and its top records by rank, hashed key and DT only."""

    result = with_sensitivity(stored_audit(store, run_id))  # from the stored H and S: as live
    stored = stored_results(store, run_id)
    if stored.get("records") is not None:
        rec = stored_section(stored, "records", RecordsSummary, run_id)
    else:
        top = stored_top_records(store, run_id)
        hashed = bool(top) and all(h for _, _, h, _ in top)
        # A key stored in clear never reaches the report: such records are shown by rank only.
        rows = tuple(RecordRow(rank, key if h else None, dt, None, None, None) for rank, key, h, dt in top)
        rec = RecordsSummary((), hashed, rows, None, stored=True) if rows else None
    hist = read_history(store, result.table) if history and result.table else None
    parameters = _parameters(result, result.table, threshold=threshold, **_store_parameter(store or ""), run=run_id)
    sql = _sql(result.source, result.table, result, None, 2)
    found = {"records": rec, "history": hist, "stored_run": run_id, **release_context(threshold, threshold_source)}
    return report_inputs(result, parameters, sql=sql, command=command, **found)


def _sql(resolved: str, table, result: AuditResult, delimiter, jobs) -> str | None:
    try:
        return show_sql(resolved, table=table, columns=result.columns, p=result.p, delimiter=delimiter, jobs=jobs)
    except QarError:  # e.g. a dialect show_sql cannot render offline: the report says so
        return None


def _store_parameter(store: str | None) -> dict[str, str]:
    """The ``store`` parameter of a report that read a results store (masked), else nothing."""
    return {} if store is None else {"store": mask_source(store) if store else "the default store"}


def _parameters(result: AuditResult, table, **more: Any) -> dict[str, Any]:
    shown = {"source": result.source, "table": result.table or table, "columns": list(result.columns)}
    return shown | pick(result, (*TAIL_ORDER, "k")) | more


#: The format each suffix of -o names.
SUFFIX_FORMATS = {".html": "html", ".htm": "html", ".md": "md", ".markdown": "md", ".csv": "csv"}
#: Suffixes of formats the report is not: -o report.pdf wrote an HTML page into report.pdf.
OTHER_SUFFIXES = frozenset(
    (".pdf", ".json", ".txt", ".xml", ".png", ".svg", ".parquet", ".duckdb", ".toml", ".yml", ".yaml")
)


def report_format(fmt: str | None, output: str) -> str:
    """The format of the report: ``fmt`` when given, else the one -o's suffix names, else html. A
    given format that -o's suffix contradicts is refused (-f md -o x.html wrote Markdown into
    an .html file)."""
    suffix = os.path.splitext(output)[1].lower() if output != "-" else ""
    named = SUFFIX_FORMATS.get(suffix)
    if suffix in OTHER_SUFFIXES:  # html would be written under a name that promises another format
        stem = os.path.splitext(output)[0]
        raise UsageError(
            f"-o {output!r} ends in {suffix}, a format qar report does not write; name the file {stem}.html "
            f"(or .md, .csv){' and print the HTML to PDF from a browser' if suffix == '.pdf' else ''}"
        )
    if fmt is None:
        return named or "html"
    if named is not None and named != fmt:
        stem = os.path.splitext(output)[0]
        ext = next(s for s, f in SUFFIX_FORMATS.items() if f == fmt) if fmt in SUFFIX_FORMATS.values() else ""
        fix = f"name the file {stem}{ext} or " if ext else ""
        raise UsageError(f"-o {output!r} ends in {suffix} but --format is {fmt}; {fix}give --format {named}")
    return fmt


def prepare(params: ReportParams) -> ReportParams:
    """Everything read and checked before the first query: the format (from -o's suffix), the
    comparison's extra, -o writable, the treatments file (:func:`prepared`), the hash secret
    (``hash_secret_file``, else $QAR_HASH_SECRET), masked in the command line the report shows."""
    fmt = report_format(params.format, params.output or "-")
    if params.compare is not None:  # before any work: the comparison needs the [compare] extra
        require("compare", "the report's comparison (--compare)")
        treated = os.fspath(params.compare) if isinstance(params.compare, str | os.PathLike) else None
        if treated is not None and not is_url(treated) and not Path(treated).is_file():
            if not Path(treated).exists():
                raise SourceNotFound(f"--compare file {treated!r} does not exist; check the path")
            raise SourceNotFound(f"--compare {treated!r} is not a file; name a CSV, Parquet or DuckDB file")
    if params.output not in (None, "-"):
        check_writable(params.output, "--output")
    if params.store is not None:  # (read for the history section, after every other)
        check_store(params.store)
    params = prepared(params)
    secret = params.hash_secret
    if params.hash_secret_file or os.environ.get(HASH_SECRET_ENV):
        secret = hash_secret(params.hash_secret_file)
    command = scrub(params.command, [secret]) if params.command and secret else params.command
    return dataclasses.replace(params, format=fmt, hash_secret=secret, command=command)


def files(params: ReportParams, source: SourceLike) -> tuple[list[tuple[str, Any]], list[tuple[str, Any]]]:
    """(option, path) of the file the report writes and (what, path) of those it reads (of
    SOURCE, the treated release, the treatments and hash secret files, the stores): -o may be
    none of them. ``params`` as given, before :func:`prepare` reads any of them."""
    from qar_sql.compliance.store import resolve_store

    if params.output in (None, "-"):
        return [], []
    reads = [("the treated release", params.compare), ("the treatments file", params.treatments)]
    reads += [("the hash secret file", params.hash_secret_file)]
    if params.from_store is None:
        reads.append(("the source file itself", source))
    for given in (params.store, params.from_store):
        if given is not None:
            reads.append(("the results store", resolve_store(given or None)))
    return [("--output", params.output)], reads


def write(inputs: ReportInputs, params: ReportParams) -> None:
    """The report to -o in its format (``-``: stdout)."""
    fmt = params.format or "html"
    if params.output == "-":
        sys.stdout.write(render_report(inputs, fmt))
        sys.stdout.flush()
    elif params.output is not None:
        write_report(inputs, params.output, fmt)


def verdict(inputs: ReportInputs, params: ReportParams) -> int:
    """0: the report states its verdict and still exits 0 (qar audit --fail-above and qar scan
    fail a CI job); stderr says where it went and T̂."""
    assert inputs.audit is not None  # a report of SOURCE or of a stored run always has its audit
    risk = "undefined (no tail)" if inputs.audit.risk is None else f"{inputs.audit.risk:.6g}"
    where = "the report to stdout" if params.output == "-" else params.output
    print(one_line(f"Wrote {where} (T̂ = {risk})."), file=sys.stderr)
    return 0


def stored(params: ReportParams) -> ReportInputs:
    """The report of the run ``params.run_id`` recorded in the results store ``params.from_store``
    (:func:`from_store`; no source is read), with the release context of ``params``."""
    inputs = from_store(
        params.from_store or None, params.run_id or "", threshold=params.threshold,
        threshold_source=params.threshold_source, command=params.command,
    )  # fmt: skip
    return dataclasses.replace(inputs, **params.context)


def scan_pages(names: Sequence[str]) -> dict[str, str]:
    """The page of each scan in a ``--report-dir`` (``<scan name>.html``; ``index.html`` is the
    index), known before the scans run so that qar scan can check them first."""
    import re

    pages: dict[str, str] = {}
    used = {"index"}
    for scan in names:
        stem = re.sub(r"[^A-Za-z0-9._-]+", "_", scan).strip("._") or "scan"
        name, n = stem, 2
        while name.lower() in used:  # scan names that differ only in case or punctuation
            name, n = f"{stem}-{n}", n + 1
        used.add(name.lower())
        pages[scan] = f"{name}.html"
    return pages


def scan_threshold(outcome: Any) -> tuple[float | None, str | None]:
    """The threshold of a scan's report and where it came from: its fail_above, else its
    warn_above, as :mod:`qar_sql.precedence` chose them ("fail_above from [[scan]]", ...); neither
    set: no threshold, so no verdict."""
    for key in ("fail_above", "warn_above"):
        value = getattr(outcome, key)
        if value is not None:
            chosen = outcome.origins.get(key)
            where = chosen.described if chosen is not None else "the scan config"
            return value, f"{key} of scan {outcome.name!r}, from {where}"
    return None, None


def write_scan_reports(report: Any, folder: str | Path, *, command: str | None = None) -> Path:
    """``qar scan --format html``: one report per scan that produced an audit (``<scan name>.html``,
    the verdict against its fail_above, else its warn_above) and ``index.html`` linking them;
    returns the index's path. ``report`` is a :class:`~qar_sql.results.ScanReport`."""

    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot create the report folder {str(folder)!r}: {exc.strerror}; choose another") from exc
    pages = scan_pages([o.name for o in report.outcomes])
    links: dict[str, str] = {}
    for o in report.outcomes:
        if o.result is None:
            continue
        links[o.name] = pages[o.name]
        threshold, origin = scan_threshold(o)
        where = {"source": o.source, "table": o.table}
        inputs = audit_inputs(o.result, where, threshold=threshold, threshold_source=origin, command=command)
        write_report(inputs, str(folder / links[o.name]))
    write_report(render_index(report.to_dict(), links), str(folder / "index.html"))
    return folder / "index.html"
