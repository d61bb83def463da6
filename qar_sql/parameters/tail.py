"""The parameters of the audit and of the commands built on its tail fit: ``qar audit`` (:func:`qar_sql.audit`), ``qar sql`` and ``qar demo``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from dataclasses import fields as dataclass_fields
from typing import Any

from qar_sql import rules
from qar_sql.errors import ParameterError
from qar_sql.parameters import fields
from qar_sql.parameters.fields import check_fields, option

# --- audit ------------------------------------------------------------------------------------------


#: ``--theta``: the θ the tail is fitted to: H/L, distinct combinations per record (the paper's),
#: or S/L, the share of records unique on the QI (docs/method.md, "The unique measure").
THETA_MEASURES = ("distinct", "unique")


def check_theta(theta: str) -> None:
    """A known θ measure, or a ParameterError naming the bad one."""
    rules.check_choice("--theta", theta, THETA_MEASURES)


def check_row_subsamples(shares: Sequence[float]) -> tuple[float, ...]:
    """Shares of the rows in (0, 1), ascending and distinct, or a ParameterError naming the bad one."""
    out = []
    for share in shares:
        if isinstance(share, bool) or not isinstance(share, int | float) or not 0.0 < float(share) < 1.0:
            raise ParameterError(f"--row-subsamples {share!r} is not a share of the rows in (0, 1); use e.g. 0.25,0.5")
        out.append(float(share))
    return tuple(sorted(set(out)))


def check_tail(p: int, alpha: float, pi_u: float, pwm: str = "plotting") -> None:
    """p ≥ 1, 0 < α < π_u < 1 and a known PWM estimator, or a ParameterError naming the bad one."""
    rules.check_tail(p, alpha, pi_u)
    rules.check_choice("--pwm", pwm, rules.PWM_METHODS)


#: The keywords of the shared source options (SOURCE, --table, --delimiter, --null-token) that
#: say where the data is — the session's; the others (--columns, --exclude) are parameters.
SOURCE_KEYS = ("source", "table", "delimiter", "null_tokens")


def source_keywords(where: Mapping[str, Any]) -> dict[str, Any]:
    """The keywords of ``where`` (the parsed source options) that open a session."""
    return {k: where[k] for k in SOURCE_KEYS if k in where}


@dataclass(frozen=True, kw_only=True)
class TailParams:
    """What an audit's figures depend on: the QI columns, p, α, π_u and the PWM estimator.
    :class:`AuditParams` adds how ``qar audit`` runs and judges; the libraries' ``Options``
    (:mod:`qar_sql.measures.audit`) how a computation built on the audit runs; a ``qar.toml``
    scan (``compliance.scans.ScanSpec``) where it runs and its thresholds. Not checked when
    made: each computation checks it when it runs (:meth:`validate`), as before."""

    columns: Sequence[str] | None = fields.columns()
    exclude: Sequence[str] | None = fields.exclude()
    p: int = fields.p()
    alpha: float = fields.alpha()
    pi_u: float = fields.pi_u()
    pwm: str = fields.pwm()

    def validate(self) -> None:
        check_tail(self.p, self.alpha, self.pi_u, self.pwm)


@dataclass(frozen=True, kw_only=True)
class AuditParams(TailParams):
    """The parameters of ``qar audit`` (:mod:`qar_sql.commands.audit`). Checked when made, before
    any connection.

    ``prune``: None means ``auto`` at p ≥ 4 and ``off`` below, and off with ``group_size``
    (:attr:`prune_mode`). ``min_exceedances`` and ``fail_above`` are the command's verdict on the
    result (exit 2 and exit 1); the audit itself does not read them."""

    k: int = fields.k()
    batch_size: int | None = fields.batch_size()
    jobs: int = fields.jobs()
    group_size: int | None = fields.group_size(
        None,
        "Also every QI's uniqueness probability for groups of this many people (see qar uniqueness): a "
        "uniqueness block in JSON, a section in text.",
    )
    interval_level: float = fields.interval_level()
    bootstrap: int = fields.bootstrap()
    prune: str | None = option(
        None,
        help="auto: group only the QIs that can reach the tail, bounded by the QIs of size p - 1 "
        "(same T̂, u, ξ, β and exceedances; the other QIs get θ bounds); off: group every QI. "
        "Default: auto at p >= 4, off below.",
        flags=("--prune",),
        kind="choice",
        choices=rules.PRUNE_MODES,
    )
    min_exceedances: int | None = option(
        None,
        help="Refuse (exit 2) a T̂ fitted to fewer exceedances of u than this, e.g. 3; T̂ is still shown.",
        flags=("--min-exceedances",),
        kind="int",
        check=rules.check_min_exceedances,
    )
    fail_above: float | None = option(
        None,
        help="Exit 1 when the risk T̂ is above this value.",
        flags=("--fail-above",),
        kind="float",
        check=lambda value: rules.check_risk(value, "--fail-above", "0.05"),
    )
    #: the θ the tail is fitted to (THETA_MEASURES); ``risk`` and ``fail_above`` are of this one
    theta: str = option(
        "distinct",
        help="The θ the tail is fitted to: distinct (H/L, distinct combinations per record, the paper's) or "
        "unique (S/L, the share of records unique on the QI); T̂ and --fail-above are of this one.",
        flags=("--theta",),
        kind="choice",
        choices=THETA_MEASURES,
    )
    #: T̂ at p − 1 and p + 1 as well (their scans; p − 1 comes free with a pruned audit)
    sensitivity: bool = option(
        False,
        help="Also T̂ at p - 1 and p + 1 (a scan each; p - 1 comes free with a pruned audit): risk_by_p in JSON.",
        flags=("--sensitivity",),
        kind="flag",
    )
    #: T̂ on nested subsamples of the rows of these shares (one scan each): the L-dependence
    row_subsamples: Sequence[float] = option(
        (),
        help="Also T̂ on nested subsamples of the rows, without replacement, of these shares, "
        "e.g. 0.25,0.5 (a scan each): risk_by_rows in JSON.",
        flags=("--row-subsamples",),
        kind="shares",
        check=check_row_subsamples,
    )

    def __post_init__(self) -> None:
        self.validate()
        check_fields(self)
        object.__setattr__(self, "row_subsamples", tuple(self.row_subsamples))  # (a list from the API)
        if self.group_size is not None and self.prune == "auto":
            raise ParameterError(
                "--group-size needs every QI's class sizes, which --prune auto does not count; "
                "drop --prune auto (or use --prune off)"
            )

    @property
    def prune_mode(self) -> str:
        """The mode the audit groups with: ``prune`` as given, else auto at p ≥ 4 and off below;
        always off with ``group_size`` (which needs every QI's classes)."""
        mode = rules.resolve_prune(self.prune, self.p)
        return "off" if self.group_size is not None else mode


#: Every field's built-in default, by name: what the click options, ``qar config`` and ``qar
#: demo`` show and use.
DEFAULTS: dict[str, Any] = {f.name: f.default for f in dataclass_fields(AuditParams)}


# --- sql --------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class SqlParams:
    """What ``qar sql`` renders: where the data would be read (nothing is), the QI columns and p,
    the engine's batching, and with ``one_statement`` the whole audit's tail fit (α, π_u), which
    only it uses (``qar sql``'s relations refuse them without it). ``source``, ``table`` and
    ``delimiter`` are the command line's source options."""

    source: str | None = option(None, help="The file or database URL the audit would read.", cli=False)
    table: str | None = option(None, help="The table the audit would read.", cli=False)
    columns: Sequence[str] | None = option(
        None,
        help="Quasi-identifier columns, comma-separated (required: nothing is read).",
        flags=("--columns", "-c"),
        kind="names",
        required=True,
    )
    p: int = fields.p()
    delimiter: str | None = option(None, help="The CSV delimiter the audit would read with.", cli=False)
    null_tokens: Sequence[str] = option((), help="The CSV cell texts the audit would read as NULL.", cli=False)
    dialect: str | None = option(
        None, help="SQL dialect (default: from SOURCE; duckdb for files).", flags=("--dialect", "-d"), kind="dialect"
    )
    batch_size: int | None = fields.batch_size()
    jobs: int = fields.jobs()  # as the audit's, so the batches shown are the batches run
    one_statement: bool = option(
        False,
        help="Print instead the whole audit (θ, u, the GPD fit, T̂) as one SELECT the warehouse runs by itself "
        "(the dbt package's SQL).",
        flags=("--one-statement",),
        kind="flag",
    )
    alpha: float = fields.alpha()
    pi_u: float = fields.pi_u()


# --- demo -------------------------------------------------------------------------------------------


#: How many people the demo generates, at least and at most (``--rows``).
MIN_ROWS, MAX_ROWS = 2, 5_000_000


@dataclass(frozen=True, kw_only=True)
class DemoParams:
    """Where the population goes (``path``, a DuckDB file; ``overwrite`` a file that holds other
    tables), how many people and from which seed, and the audit's p, α, π_u and PWM estimator.
    Checked when made."""

    path: str = option(
        "qar_demo.duckdb",
        help="DuckDB file to write the population to (table 'population'); an existing file only if it holds "
        "nothing but an earlier demo, or with --overwrite.",
        flags=("--path",),
        kind="path",
    )
    rows: int = option(
        100_000,
        help="How many people to generate.",
        flags=("--rows", "-n"),
        kind="int",
        minimum=MIN_ROWS,
        maximum=MAX_ROWS,
    )
    seed: int = option(
        20261122, help="Random seed (the same seed gives the same people).", flags=("--seed",), kind="int"
    )
    overwrite: bool = option(
        False,
        help="Write into an existing DuckDB file that holds other tables, replacing its table 'population'.",
        flags=("--overwrite",),
        kind="flag",
    )
    p: int = fields.p()
    alpha: float = fields.alpha()
    pi_u: float = fields.pi_u()
    pwm: str = fields.pwm()

    def __post_init__(self) -> None:
        check_tail(self.p, self.alpha, self.pi_u, self.pwm)
