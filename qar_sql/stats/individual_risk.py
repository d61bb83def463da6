"""Record-level re-identification risk from class sizes: sdcMicro's individual risk and
global risk, and ARX's prosecutor, journalist and marketer risks. Pure numpy.

Every function takes the records grouped by what their risk depends on: ``fk`` (the number of
sample records that match the record on the quasi-identifier — its class size, or with
wildcard matching of missing values the number of records it cannot be told apart from),
``Fk`` (the sum of the sampling weights of those records: the estimated number of people in
the population who match it; Fk = fk without weights) and ``records`` (how many records share
that (fk, Fk)). Without overlap (NULL a value of its own) Σ records/fk is the number of
classes.

Sources:

* sdcMicro ``R/indivRisk.R`` (``method = "approx"``, the default used by ``measure_risk``,
  ``R/measure_risk.R``): with weights (``survey = TRUE``), pk = fk/Fk and the
  Benedetti–Franconi approximation

  - fk = 1: r = pk/(1 − pk) · ln(1/pk)
  - fk = 2: r = pk/(1 − pk) − (pk/(1 − pk))² · ln(1/pk)
  - fk > 2: r = pk/(fk − (1 − pk))

  and r = 1/fk wherever fk = Fk (the class is the whole population class); without weights,
  r = 1/fk. The expected number of re-identifications is Σ r over records and the global risk
  that sum divided by the number of records (``global_risk_ER``, ``global_risk``). The
  ``individual`` summary gives the highest r, its mean (the global risk) and the share of
  records with r strictly above the threshold — with weights the record risks sdcMicro's
  ``localSuppr`` and risk plots work from; without, the prosecutor summary.
* ARX ``risk/RiskModelSampleSummary.java`` (El Emam's measures): prosecutor risk of a record
  1/fk; highest = 1/min fk, average ("success rate") = classes/records, records at risk = the
  share of records with 1/fk strictly above the threshold. Journalist risk uses the
  population class size instead (here Fk, the weighted estimate; = prosecutor without
  weights): highest 1/min Fk, records at risk with 1/Fk above the threshold, and average
  max(classes/Σ_classes Fk, Σ_classes (fk/Fk)/records). Marketer risk is the average
  Σ_classes (fk/Fk)/records (= classes/records without weights).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from qar_sql.errors import ParameterError
from qar_sql.rules import check_unit

__all__ = [
    "AttackerRisk",
    "ReidentificationRisks",
    "benedetti_franconi",
    "individual_risk",
    "reidentification_risks",
    "violations",
]


def _arrays(fk, Fk=None, records=None):
    f = np.asarray(fk, dtype=np.float64)
    F = f.copy() if Fk is None else np.asarray(Fk, dtype=np.float64)
    m = np.ones_like(f) if records is None else np.asarray(records, dtype=np.float64)
    if f.shape != F.shape or f.shape != m.shape or f.ndim != 1:
        raise ParameterError("fk, Fk and record counts must be vectors of the same length")
    if f.size and (f.min() < 1 or np.any(f != np.floor(f))):
        raise ParameterError("every fk must be a whole number of at least 1 (the record itself)")
    return f, F, m


def benedetti_franconi(fk, Fk) -> np.ndarray:
    """The individual risk of each record as sdcMicro's ``indivRisk(method = "approx")``
    computes it with weights (see the module docstring). Needs Fk > 0."""
    f, F, _ = _arrays(fk, Fk)
    if F.size and not np.all(F > 0):
        raise ParameterError("every Fk (sum of weights) must be positive; check the weight column")
    with np.errstate(divide="ignore", invalid="ignore"):
        pk = f / F
        odds = pk / (1.0 - pk)
        log_inv = np.log(1.0 / pk)
        r = np.where(
            f > 2,
            pk / (f - (1.0 - pk)),
            np.where(f == 2, odds - odds * odds * log_inv, odds * log_inv),
        )
    return np.where(f == F, 1.0 / f, r)


def individual_risk(fk, Fk=None) -> np.ndarray:
    """sdcMicro's record risk: Benedetti–Franconi with weights (``Fk`` given), 1/fk without
    (Fk = fk: each class the whole population class, where Benedetti–Franconi is 1/fk)."""
    return benedetti_franconi(fk, fk if Fk is None else Fk)


def violations(fk, records=None, ks=(2, 3, 5)) -> dict[str, int]:
    """{"k": records with fk < k} — the records violating k-anonymity, for each k."""
    f, _, m = _arrays(fk, None, records)
    return {str(k): round(float(m[f < k].sum())) for k in ks}


@dataclass(frozen=True)
class AttackerRisk:
    """One attacker model's risk summary (ARX ``RiskSummary``): the highest record risk, the
    average (the expected share of records re-identified) and the share of records whose risk
    is strictly above the threshold. None when there are no records."""

    highest: float | None
    average: float | None
    records_at_risk: float | None


@dataclass(frozen=True)
class ReidentificationRisks:
    """sdcMicro's expected re-identifications and global risk with ARX's three attackers."""

    records: int
    expected_reidentifications: float
    global_risk: float | None
    prosecutor: AttackerRisk
    journalist: AttackerRisk
    marketer: float | None
    individual: AttackerRisk = AttackerRisk(None, None, None)  # sdcMicro's record risk r: max, mean, share > threshold


def reidentification_risks(fk, Fk=None, records=None, *, threshold: float = 0.2) -> ReidentificationRisks:
    """All record-level summaries of one QI from its (fk, Fk, records) groups; the expected
    re-identifications by Benedetti–Franconi when ``Fk`` is given, by 1/fk otherwise."""
    check_unit(threshold, "--risk-threshold", ", e.g. 0.2 (one in five)")
    f, F, m = _arrays(fk, Fk, records)
    n = float(m.sum())
    if n == 0:
        none = AttackerRisk(None, None, None)
        return ReidentificationRisks(0, 0.0, None, none, none, None)
    r = individual_risk(f, F)  # (F = f without weights: 1/fk)
    expected = float(np.dot(m, r))
    classes = float(np.dot(m, 1.0 / f))
    prosecutor = AttackerRisk(
        highest=float(1.0 / f.min()),
        average=classes / n,
        records_at_risk=float(m[1.0 / f > threshold].sum()) / n,
    )
    share = float(np.dot(m, 1.0 / F)) / n  # Σ_classes (fk/Fk) / records
    journalist = AttackerRisk(
        highest=float(1.0 / F.min()),
        average=max(classes / float(np.dot(m, F / f)), share),
        records_at_risk=float(m[1.0 / F > threshold].sum()) / n,
    )
    individual = AttackerRisk(
        highest=float(r[m > 0].max()),
        average=expected / n,
        records_at_risk=float(m[r > threshold].sum()) / n,
    )
    return ReidentificationRisks(
        records=round(n),
        expected_reidentifications=expected,
        global_risk=expected / n,
        prosecutor=prosecutor,
        journalist=journalist,
        marketer=share,
        individual=individual,
    )
