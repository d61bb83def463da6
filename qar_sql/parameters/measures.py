"""The parameters of the measuring commands beside the audit: ``qar risk``, ``qar uniqueness`` and ``qar discover``."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from qar_sql import rules
from qar_sql.errors import ParameterError
from qar_sql.parameters import fields
from qar_sql.parameters.fields import check_fields, option
from qar_sql.parameters.needs import Needs

#: The options of the rows --per-record writes (the summary has no record).
PER_RECORD = Needs(needs=("per_record",), why="it shapes the rows of --per-record")

# --- risk -------------------------------------------------------------------------------------------


RISK_THRESHOLD, L_THRESHOLD, T_THRESHOLD = 0.2, 2, 0.2


@dataclass(frozen=True, kw_only=True)
class RiskParams:
    """The parameters of ``qar risk`` (:mod:`qar_sql.commands.risk`), :func:`qar_sql.risk` and
    the report. Checked when made, before any connection.

    ``p`` is not the QaR p: its default is every key column, one QI; its long flag --qi-size
    gives it the variable QAR_QI_SIZE, so QAR_P and a config's p, meant for the audits, leave it
    alone (--p is still accepted)."""

    columns: Sequence[str] | None = fields.columns()
    exclude: Sequence[str] | None = fields.exclude()
    p: int | None = option(
        None,
        help="Quasi-identifier size: every set of p key columns (default: all of them, one QI).",
        flags=("-p", "--qi-size", "--p"),
        kind="int",
    )
    weight: str | None = option(
        None,
        help="Column with each record's sampling weight (people it stands for): Fk, the Benedetti–Franconi risk, "
        "journalist and marketer risk.",
        flags=("--weight", "-w"),
    )
    sensitive: Sequence[str] = option(
        (),
        help="Sensitive column(s) for l-diversity and t-closeness, comma-separated; never a key column.",
        flags=("--sensitive", "-s"),
        kind="names",
    )
    ordered: Sequence[str] = option(
        (),
        help="Sensitive column(s) whose values are ordered (ordinal text): t-closeness uses the ordered distance, "
        "in the database's sort order. Numbers, dates and times always are.",
        flags=("--ordered",),
        kind="names",
    )
    missing: str = fields.missing()
    sampling_fraction: float | None = fields.sampling_fraction()
    population: int | None = fields.population()
    risk_threshold: float = option(
        RISK_THRESHOLD,
        help=f"A record is at risk when its re-identification probability is above this (default {RISK_THRESHOLD}).",
        flags=("--risk-threshold",),
        kind="float",
        check=lambda v: rules.check_unit(v, "--risk-threshold", ", e.g. 0.2 (one in five)"),
    )
    l_threshold: int = option(
        L_THRESHOLD,
        help=f"Classes with distinct l-diversity below this fail (default {L_THRESHOLD}).",
        flags=("--l",),
        kind="int",
        minimum=1,
        only=Needs(needs=("sensitive",), why="the l-diversity of the sensitive columns"),
    )
    t_threshold: float = option(
        T_THRESHOLD,
        help="Classes farther than this from the table's sensitive distribution fail "
        f"(t-closeness, default {T_THRESHOLD}).",
        flags=("--t",),
        kind="float",
        check=lambda v: rules.check_unit(v, "--t", ", e.g. 0.2"),
        only=Needs(needs=("sensitive",), why="the t-closeness of the sensitive columns"),
    )
    per_record: str | os.PathLike | None = option(
        None,
        help="Write one row per record (fk, Fk, risk, l_distinct, l_entropy, suda, dis_suda) to this .csv or "
        ".parquet file.",
        flags=("--per-record",),
        kind="path",
    )
    key: Sequence[str] | None = fields.key(only=PER_RECORD)
    suda_max_size: int | None = option(
        None,
        help="SUDA: minimal sample uniques of up to this many columns (default: all, capped at 5,000 column sets).",
        flags=("--suda-max-size",),
        kind="int",
        only=PER_RECORD,
        minimum=1,
    )
    jobs: int = fields.jobs()

    def __post_init__(self) -> None:
        if self.population is not None and self.sampling_fraction is not None:
            raise ParameterError("give either --population or --sampling-fraction, not both")
        check_fields(self)


# --- uniqueness -------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class UniquenessParams:
    """The parameters of ``qar uniqueness`` (:mod:`qar_sql.commands.uniqueness`). Checked when
    made, before any connection (a treated release is measured with the same class, its extras
    switched off)."""

    group_size: int = fields.group_size(
        dataclasses.MISSING, "k: how many people reveal the columns (at least 2, at most the number of rows). Required."
    )
    columns: Sequence[str] | None = fields.columns()
    exclude: Sequence[str] | None = fields.exclude()
    qid: Sequence[str] | None = option(
        None,
        help="One quasi-identifier, comma-separated columns, instead of every p-subset of --columns.",
        flags=("--qid",),
        kind="names",
    )
    p: int = fields.p()
    target: float = option(
        0.5,
        help="k_at is the largest k whose probability that all k are unique is at least this (strictly between 0 "
        "and 1).",
        flags=("--target",),
        kind="float",
        check=rules.check_target,
        # (not QAR_TARGET: compare's --target is a column, scan's a dbt target)
        envvar="QAR_UNIQUENESS_TARGET",
    )
    domain: str | int = option(
        "observed",
        help="M, the number of possible values of a QI: observed (values seen), product (product of its columns' "
        "value counts) or a whole number.",
        flags=("--domain",),
        check=rules.parse_domain,
    )
    from_marginals: bool = option(
        False,
        help="Also the independence model: p from the product of one-column distributions (the paper's section 4.2).",
        flags=("--from-marginals",),
        kind="flag",
    )
    monte_carlo: int = option(
        0,
        help="Simulate this many groups of k per QI and report the share with all k unique and its 95% interval.",
        flags=("--monte-carlo",),
        kind="int",
        minimum=0,
    )
    seed: int | None = option(
        None,
        help="Random seed for --monte-carlo (the same seed gives the same draws).",
        flags=("--seed",),
        kind="int",
        minimum=0,  # numpy's SeedSequence takes whole numbers 0 or more
        only=Needs(needs=("monte_carlo",), why="it seeds the draws of --monte-carlo"),
    )
    #: A what-if file (path, TOML text, dict or :class:`~qar_sql.treat.treatments.Plan`).
    treatments: Any = option(
        None,
        help="What-if TOML file: κ and π on each treated release too (each treatment and combination).",
        flags=("--treatments", "-T"),
        kind="path",
    )
    exposed: int = option(
        5,
        help="Most exposed value combinations (smallest classes) listed per QI (0: none).",
        flags=("--exposed",),
        kind="int",
        minimum=0,
    )
    exposed_qis: int = option(
        1,
        help="How many of the riskiest QIs get the --exposed list (one small GROUP BY each).",
        flags=("--exposed-qis",),
        kind="int",
        minimum=0,
    )
    batch_size: int | None = fields.batch_size()
    jobs: int = fields.jobs()

    def __post_init__(self) -> None:
        check_fields(self)


# --- discover ---------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class DiscoverParams:
    """The parameters of ``qar discover`` (:mod:`qar_sql.commands.discover`). Checked when made."""

    columns: Sequence[str] | None = fields.columns()
    exclude: Sequence[str] | None = fields.exclude()
    max_size: int = option(
        3,
        help="Largest combination of columns to count.",
        flags=("--max-size", "-s"),
        kind="int",
        minimum=1,
    )
    drop_null: bool = option(
        False,
        help="Leave rows with NULL in a combination's columns out of that combination (how Pastore et al. "
        "count); by default NULL is a value of its own.",
        flags=("--drop-null",),
        kind="flag",
    )
    batch_size: int | None = fields.batch_size()
    jobs: int = fields.jobs()

    def __post_init__(self) -> None:
        check_fields(self)
