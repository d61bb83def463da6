"""``qar records``: which records carry the risk, by one of three rankings (``--by``).

* a score of the exact contributions — DT, U+, U*, n_unique (:mod:`qar_sql.ranking.records`);
* ``influence``: the first-order stand-in for DT, ranked in the database (:mod:`qar_sql.ranking.influence`);
* ``suda``: SUDA and DIS-SUDA on all the key columns (:func:`qar_sql.measures.classic.suda`).

``qar_sql.records.contributions``, ``.influence`` and ``.suda`` are its rankings one by one; its
work is :mod:`qar_sql.commands.record_runs` (loaded when it runs).
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any

import click

from qar_sql import cli_options
from qar_sql.command import SOURCE_ORDER, TAIL_ORDER, Command, Extras, api_function, lazy, run_on
from qar_sql.commands import checks
from qar_sql.errors import ParameterError, UsageError
from qar_sql.guard import guard_files
from qar_sql.output.files import check_writable
from qar_sql.parameters.needs import Needs
from qar_sql.parameters.ranking import SCORES, SUDA, RecordsParams

if TYPE_CHECKING:  # numpy-backed: loaded when the command runs, not when `qar --help` loads
    from qar_sql.engines.session import Session
    from qar_sql.engines.source import SourceLike
    from qar_sql.measures.classic import SudaRecords
    from qar_sql.pushdown.scan import Progress
    from qar_sql.ranking.influence import Influence
    from qar_sql.ranking.records import Contributions

NAME = "records"
Params = RecordsParams


def prepare(params: RecordsParams) -> RecordsParams:
    """An --output that could not be written is refused before any work."""
    if params.output:
        check_writable(str(params.output), "--output")
    return params


def run(
    session: Session, params: RecordsParams, progress: Progress | None = None
) -> Contributions | Influence | SudaRecords:
    """The records of the session's relation ranked by ``params.by``, with every record's
    scores written to ``params.output`` when given."""
    from qar_sql.commands.record_runs import rank

    return rank(session, params, progress)


def _run(where: dict[str, Any], params: RecordsParams, progress: Progress | None, out: dict[str, Any]) -> Any:
    """The command line's run: the output options checked against the parameters before any work
    (the secret of --hash-keys read), then :func:`run`, or :func:`~qar_sql.commands.record_runs.recorded` with ``--store``."""
    from qar_sql.commands.record_runs import recorded
    from qar_sql.compliance.store import hash_secret, resolve_store

    fmt, store, by, secret_file = out["fmt"], out["store"], params.by, out["hash_secret_file"]
    store_file = resolve_store(store or None) if store is not None else None
    guard_files([("--output", params.output)], where, store_file, secret_file)
    out["hash_secret"] = secret = hash_secret(secret_file) if out["hash_keys"] else None  # refused before any work
    if by in ("suda", "influence") and fmt == "html":
        raise UsageError(f"--format html shows exact contributions; use --by dt (the default) with it, not --by {by}")
    if store is not None and by == "suda":
        raise UsageError("--by suda ranks by SUDA score: --store, --compare-dt and --refine do not apply")
    if store is not None and by == "influence":
        raise UsageError("--store records exact contributions; use --by dt with --store")
    if store is None:
        return run_on(where, COMMAND, params, progress)
    # the run, its QI results and the top records by DT go to the results store
    kept = dict(store=store, hash_keys=out["hash_keys"], hash_secret=secret, store_in_source=out["store_in_source"])
    return recorded(where, params, progress, **kept)


def _report(c: Contributions, params: RecordsParams, extras: Extras) -> str:
    """``--format html``: the report's audit and records sections (docs/report.md)."""
    from qar_sql.commands.record_runs import report_html

    return report_html(c, params, extras)


ORDER = (
    *SOURCE_ORDER, *TAIL_ORDER, "key", "top", "by", "max_size", "missing", "sampling_fraction", "population",
    "all_text", "compare_dt", "refine", "all_records", "output", "store", "store_in_source", "hash_keys",
    "hash_secret_file", "fmt", "jobs", "quiet",
)  # fmt: skip


COMMAND: Command[RecordsParams, Any] = Command(
    name=NAME,
    Params=RecordsParams,
    run=run,
    help="The records that carry the risk: exact DT, U+, U* and n_unique per record.",
    doc="""The records of a table that carry the risk, ranked by ``by``: a score of the exact
    contributions (``dt``, ``u_plus``, ``u_star``, ``n_unique``: a
    :class:`~qar_sql.ranking.records.Contributions`), ``influence`` (an
    :class:`~qar_sql.ranking.influence.Influence`) or ``suda`` (a
    :class:`~qar_sql.measures.classic.SudaRecords`). Key values are fetched for the ``top``
    records (every record's with ``all_keys``, ``all_records`` or ``output``).""",
    source=("source", "table", "delimiter", "null_tokens", "threads"),
    session_params=("all_text",),
    outputs={
        "store": cli_options.store("records"),
        "store_in_source": cli_options.store_in_source,
        "hash_keys": click.option(
            "--hash-keys",
            is_flag=True,
            help="With --store: store the top records' keys as HMAC-SHA256, not in clear; needs a secret "
            "($QAR_HASH_SECRET or --hash-secret-file).",
        ),
        "hash_secret_file": cli_options.file_option(
            "--hash-secret-file",
            envvar="QAR_HASH_SECRET_FILE",
            help="File holding the secret for --hash-keys (instead of $QAR_HASH_SECRET).",
        ),
        "fmt": cli_options.fmt_html,
        "quiet": cli_options.quiet,
    },
    emits=("params",),
    order=ORDER,
    only={
        "store_in_source": Needs(needs=("store",), why="it lets --store be the audited file"),
        **{name: SUDA for name in ("missing", "sampling_fraction", "population")},  # (shared with qar risk)
        "hash_keys": Needs(needs=("store",), why="it says how the top records are stored"),
        "hash_secret_file": Needs(needs=("hash_keys",), why="the secret of the hashed keys"),
        # (the text lists the top records; every other format and the store take --all)
        "all_records": Needs(unused_with=("fmt=text",), why="the text lists the top records"),
    },
    prepare=prepare,
    check=lazy(checks, "records"),
    runner=_run,
    html=_report,
)

ranked = api_function(COMMAND)
_SIGNATURE = inspect.signature(ranked)


def contributions(source: SourceLike = None, **keywords: Any) -> Contributions:
    """Exact DT, U+, U*, n_unique for every record of a table, computed in the database:
    :func:`ranked` with ``by`` one of these scores."""
    by = keywords.get("by", "dt")
    if by not in SCORES:
        raise ParameterError(f"--by {by!r} is not a record score; use one of {', '.join(SCORES)}")
    if keywords.get("top") == 0:  # (here: every record's scores, no key fetched; top=None says so too)
        keywords["top"] = None
    return ranked(source, **keywords)


def influence(source: SourceLike = None, *, all_scores: bool = False, **keywords: Any) -> Influence:
    """Top records by influence score I(i), computed in the database (no exact DT needed):
    :func:`ranked` with ``by="influence"``; ``all_scores`` keeps every record's score. With
    ``refine=N``, exact DT of the top N records by I as well (``Influence.refined``)."""
    return ranked(source, by="influence", all_records=all_scores, **keywords)


def _without(names: tuple[str, ...], *extra: inspect.Parameter) -> inspect.Signature:
    kept = [p for p in _SIGNATURE.parameters.values() if p.name not in names]
    return _SIGNATURE.replace(parameters=[*kept[:-1], *extra, kept[-1]])  # (progress last)


contributions.__signature__ = _SIGNATURE.replace(return_annotation="Contributions")  # type: ignore[attr-defined]
influence.__signature__ = _without(  # type: ignore[attr-defined]
    ("by", "all_records"),
    inspect.Parameter("all_scores", inspect.Parameter.KEYWORD_ONLY, default=False, annotation="bool"),
).replace(return_annotation="Influence")


class Records:
    """``qar_sql.records(source, key=…, by=…, …)`` is ``qar records`` (:func:`ranked`);
    ``qar_sql.records.contributions``, ``.influence`` (``--by influence``) and ``.suda`` (``--by
    suda``, a :class:`~qar_sql.measures.classic.SudaRecords` of an open session) are the rankings one by one."""

    # The function itself as __call__, shown whole by inspect/help (which would otherwise drop
    # ``source`` as if it were ``self``).
    __call__ = staticmethod(ranked)
    __signature__ = _SIGNATURE
    contributions = staticmethod(contributions)
    influence = staticmethod(influence)

    @property
    def suda(self) -> Any:
        from qar_sql.measures.classic import suda

        return suda

    def __repr__(self) -> str:
        return "<qar_sql.records: records(source, key=...), .contributions, .influence, .suda>"


records = Records()
