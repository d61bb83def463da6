"""The whole QaR audit as one SQL statement: θ per quasi-identifier, the type-8 threshold u, the
PWM fit of the GPD and T̂, all computed by the database (templates/default/insql_risk.sql).

These are the templates the dbt package renders too: scripts/make_dbt_macros.py turns them into
the macros of integrations/dbt (``qar.risk``, ``qar.qi_theta``), and a test checks the generated
file is current. The numbers equal :func:`qar_sql.stats.evt.qar_risk` applied to the scan's θ to
rounding (tests/pushdown/test_insql.py checks 1e-12 relative on every oracle case). Where the audit keeps
the class-size histograms and fits in numpy, this statement returns one row and needs no Python:
what a warehouse that qar cannot reach runs through dbt.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from types import SimpleNamespace

from qar_sql.engines.dialects import Dialect
from qar_sql.engines.render import render
from qar_sql.engines.source import listed_once, open_source
from qar_sql.errors import ColumnError
from qar_sql.pushdown.scan import combinations
from qar_sql.stats import evt

__all__ = ["InSqlRisk", "qi_context", "qi_theta_sql", "risk_from_row", "risk_in_database", "risk_sql"]


def _adapter(dialect: Dialect) -> SimpleNamespace:
    """The one piece of dbt's ``adapter`` the templates use, so that they read the same in both."""
    return SimpleNamespace(quote=dialect.quote)


@dataclass(frozen=True)
class InSqlRisk:
    """The row of :func:`risk_sql`. xi, beta and risk are None when no θ exceeds u."""

    rows: int
    n_qi: int
    u: float | None
    xi: float | None
    beta: float | None
    exceedances: int
    risk: float | None


def qi_context(dialect: Dialect, columns: Sequence[str], p: int) -> list[dict]:
    """The quasi-identifiers as the templates take them: position (index in
    ``itertools.combinations`` order), exprs (quoted columns), label (a string literal of the
    column names, ", "-separated)."""
    columns = list(columns)
    if not columns:
        raise ColumnError("no quasi-identifier columns were given; name at least p columns")
    listed_once(columns, "--columns")
    return [
        {
            "position": j,
            "exprs": [dialect.quote(columns[i]) for i in combo],
            "label": dialect.literal(", ".join(columns[i] for i in combo)),
        }
        for j, combo in enumerate(combinations(len(columns), p))
    ]


def risk_sql(
    dialect: Dialect,
    relation_sql: str,
    columns: Sequence[str],
    p: int = 3,
    *,
    alpha: float = 0.01,
    pi_u: float = 0.05,
    theta: str = "distinct",
) -> str:
    """One SELECT returning one row: rows, n_qi, u, xi, beta, exceedances, risk (see the template),
    of θ = H/L (``theta="distinct"``) or S/L (``"unique"``)."""
    evt.validate_parameters(p, alpha, pi_u)
    qis = qi_context(dialect, columns, p)
    evt.check_n_qi(len(qis), pi_u)
    return render(
        "insql_risk.sql",
        dialect,
        adapter=_adapter(dialect),
        relation=relation_sql,
        qis=qis,
        alpha=float(alpha),
        pi_u=float(pi_u),
        double=dialect.double,
        theta=theta,
    )


def qi_theta_sql(dialect: Dialect, relation_sql: str, columns: Sequence[str], p: int = 3) -> str:
    """One SELECT with a row per quasi-identifier: qi, columns, classes, singletons, theta."""
    evt.validate_parameters(p, 0.01, 0.05)
    return render(
        "insql_qi_theta.sql",
        dialect,
        adapter=_adapter(dialect),
        relation=relation_sql,
        qis=qi_context(dialect, columns, p),
        double=dialect.double,
    )


def json_number(x) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def risk_from_row(row: Sequence) -> InSqlRisk:
    """The :class:`InSqlRisk` of the statement's one row (any engine's number types)."""
    rows, n_qi, u, xi, beta, n, risk = row
    return InSqlRisk(
        int(rows), int(n_qi), json_number(u), json_number(xi), json_number(beta), int(n or 0), json_number(risk)
    )


def risk_in_database(
    source,
    *,
    table: str | None = None,
    columns: Sequence[str] | None = None,
    p: int = 3,
    alpha: float = 0.01,
    pi_u: float = 0.05,
    theta: str = "distinct",
) -> InSqlRisk:
    """Run :func:`risk_sql` on ``source`` (anything :func:`qar_sql.audit` reads) and return its
    row: the whole audit as one statement, as the dbt package runs it. ``columns`` default to
    every column of the table."""
    db, relation = open_source(source, table=table)
    with db:  # closed unless an open qar_sql.connect() source owns it
        cols = list(columns) if columns is not None else list(relation.columns)
        (row,) = db.query(risk_sql(db.dialect, relation.sql, cols, p, alpha=alpha, pi_u=pi_u, theta=theta))
    return risk_from_row(row)
