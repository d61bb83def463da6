"""The QaR audit of both tables of ``qar compare`` (in the database, over the same columns and p)
and what the result reports of it: T̂ of each side and θ before and after per QI."""

from __future__ import annotations

from typing import Any

from qar_sql.comparison import tables
from qar_sql.errors import DataError, ParameterError
from qar_sql.measures.audit import Options, audit_relation
from qar_sql.results import ThetaChange
from qar_sql.treat.whatif import release


def audit_release(db, rel, plan, cols, p, alpha, pi_u, pwm, jobs):
    """The QaR audit of the plan's release, read as ``qar whatif`` reads it (a DuckDB temp
    table, a CTE elsewhere)."""
    with release(db, tables.release_sql(db, rel, plan)[1], rel) as (runner, treated):
        return audit_side(runner, treated, cols, p, alpha, pi_u, pwm, jobs)


def audit_side(db, rel, cols, p, alpha, pi_u, pwm, jobs):
    """(AuditResult, None) or (None, why not): a comparison still reports its metrics when the
    QaR risk cannot be estimated (too few columns for p, no tail, ...)."""
    try:
        result = audit_relation(db, rel, Options(columns=cols, p=p, alpha=alpha, pi_u=pi_u, pwm=pwm, jobs=jobs))
    except (DataError, ParameterError) as exc:
        return None, str(exc)
    if result.fit is None:
        return result, "; ".join(result.warnings) or "no tail to fit"
    return result, None


def risks(res_o, note_o, res_t, note_t, notes: list[str]) -> dict[str, Any]:
    """The result's QaR fields from the two audits; why an audit has no risk goes to ``notes``."""
    for which, note in (("original", note_o), ("treated table", note_t)):
        if note:
            notes.append(f"QaR risk of the {which} not computed: {note}")
    both = res_o is not None and res_t is not None
    return {
        "risk_original": res_o.risk if res_o is not None else None,
        "risk_treated": res_t.risk if res_t is not None else None,
        "qis": theta_changes(res_o, res_t) if both else (),
    }


def theta_changes(before, after) -> tuple[ThetaChange, ...]:
    theta_after = {q.columns: q.theta for q in after.qis}
    return tuple(
        ThetaChange(q.columns, float(q.theta), float(theta_after[q.columns]))
        for q in before.qis
        if q.columns in theta_after
    )
