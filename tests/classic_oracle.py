"""Plain-Python oracles for the classic risk measures (sdcMicro / ARX), record by record, with no
numpy: loops over the rows exactly as the definitions read, for tests to compare against.

``rows`` is a list of dicts; a missing value is None. ``missing`` is "value" (None equals None,
SQL GROUP BY) or "wildcard" (sdcMicro: None matches anything).
"""

from __future__ import annotations

import itertools
import math
import struct


def agree(a, b, missing: str) -> bool:
    if missing == "wildcard" and (a is None or b is None):
        return True
    return a == b


def matches(rows, i, cols, missing):
    """Indices of the records that record i cannot be told apart from on ``cols``."""
    return [j for j, r in enumerate(rows) if all(agree(rows[i][c], r[c], missing) for c in cols)]


def frequencies(rows, cols, missing="value", weight=None):
    """[(fk, Fk)] per record (sdcMicro's freqCalc)."""
    out = []
    for i in range(len(rows)):
        m = matches(rows, i, cols, missing)
        out.append((len(m), sum(rows[j][weight] for j in m) if weight else float(len(m))))
    return out


def bf_risk(fk, Fk):
    """sdcMicro R/indivRisk.R, method "approx", one record."""
    if fk == Fk:
        return 1.0 / fk
    pk = fk / Fk
    if fk > 2:
        return pk / (fk - (1 - pk))
    if fk == 2:
        return pk / (1 - pk) - (pk / (1 - pk)) ** 2 * math.log(1 / pk)
    return pk / (1 - pk) * math.log(1 / pk)


def ldiversity(values, c=2.0):
    """(distinct, entropy, recursive) of one class's sensitive values (None = missing), as
    sdcMicro's compute_group_ldiversity."""
    n = len(values)
    counts = {}
    for v in values:
        if v is not None:
            counts[v] = counts.get(v, 0) + 1
    missing = sum(v is None for v in values)
    distinct = len(counts) + (1 if missing and counts else 0)
    h = 0.0
    for k in counts.values():
        h -= k / n * math.log(k / n)
    if missing and counts:
        h -= missing / n * math.log(missing / n)
    r = sorted(counts.values(), reverse=True)
    if not r:
        rec = 0
    else:
        rec = 1
        for ell in range(2, len(r) + 1):
            if r[0] < c * sum(r[ell - 1 :]):
                rec = ell
            else:
                break
    return distinct, math.exp(h), rec


def emd(class_values, all_values, ordered: bool):
    """Li et al.'s EMD between a class's values and the table's (None left out of both)."""
    vals = sorted({v for v in all_values if v is not None})
    cls = [v for v in class_values if v is not None]
    tot = [v for v in all_values if v is not None]
    if not cls:
        return math.nan
    p = [cls.count(v) / len(cls) for v in vals]
    q = [tot.count(v) / len(tot) for v in vals]
    if not ordered:
        return 0.5 * sum(abs(a - b) for a, b in zip(p, q))
    m = len(vals)
    if m == 1:
        return 0.0
    acc, s = 0.0, 0.0
    for a, b in zip(p, q):
        acc += a - b
        s += abs(acc)
    return s / (m - 1)


def unique_sets(rows, i, cols, max_size, missing="value"):
    """Bit masks (over positions in ``cols``) of the column sets of size ≤ max_size on which
    record i is unique and has no missing value."""
    out = set()
    for k in range(1, max_size + 1):
        for combo in itertools.combinations(range(len(cols)), k):
            cs = [cols[c] for c in combo]
            if any(rows[i][c] is None for c in cs):
                continue
            if len(matches(rows, i, cs, missing)) == 1:
                out.add(sum(1 << c for c in combo))
    return out


def suda(rows, cols, max_size=None, missing="value", dis_fraction=0.01):
    """(SUDA score, DIS-SUDA score) per record, by brute force and sdcMicro's formulas."""
    m_cols = len(cols)
    max_size = max_size or m_cols
    mm = max(m_cols, 3)
    scores = []
    for i in range(len(rows)):
        sets = unique_sets(rows, i, cols, max_size, missing)
        s = 0.0
        for mask in sets:
            size = mask.bit_count()
            if size == 1 or all((mask & ~(1 << c)) not in sets for c in range(m_cols) if mask >> c & 1):
                s += math.factorial(mm - size)
        scores.append(s)
    fk = [len(matches(rows, i, cols, missing)) for i in range(len(rows))]
    u = sum(f == 1 for f in fk)
    pairs = sum(f == 2 for f in fk)

    def f32(x):
        return struct.unpack("f", struct.pack("f", x))[0]

    if not any(scores):  # no record unique anywhere (then U = 0 and sdcMicro's DIS is 0/0)
        return scores, [0.0] * len(scores)
    f = f32(dis_fraction)
    dis = f32(f32(f32(u * f) / f32(f32(u * f) + f32(pairs * f32(1.0 - f)))))
    excess = f32(f32(u / dis) - u)
    q = f32(1.0 + f32(f32(8.0 - mm) / 20.0))
    adj = sum(1.0 / s**q for s in scores if s)
    out = [1.0 / (1.0 + excess / (s**q * adj)) if s else 0.0 for s in scores]
    return scores, out


def prosecutor(fks, threshold):
    """ARX RiskModelSampleSummary.getProsecutorRisk over the classes (one fk per record)."""
    n = len(fks)
    return {
        "highest": 1.0 / min(fks),
        "average": sum(1.0 / f for f in fks) / n,
        "records_at_risk": sum(1 for f in fks if 1.0 / f > threshold) / n,
    }
