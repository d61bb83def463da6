"""A plain-Python oracle of the anonymization search: generalize every row of a small table,
count its classes, judge them with ARX's criteria as written in its Java sources (the
hierarchical t-closeness by ARX's tree walk, not by qar's closed form) and score the release
with ARX's metrics computed from the generalized rows themselves."""

from __future__ import annotations

import itertools
import math
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence

from qar_sql.anonymization.hierarchy import CsvHierarchy, Hierarchy
from qar_sql.anonymization.risk import lattice, order_key


def _emd_hierarchical(p: Counter, q: Counter, h: Hierarchy, values: list[str]) -> float:
    """ARX's HierarchicalDistanceTCloseness tree walk: leaves' extra p_i Q − q_i P, each inner
    node's positive and negative extras from its children, cost Σ level/H · min(pos, neg)."""
    P, Q = sum(p.values()), sum(q.values())
    height = h.height - 1
    extra = {("leaf", v): p[v] * Q - q[v] * P for v in values}
    total = 0.0
    children_of_prev = {v: ("leaf", v) for v in values}
    for level in range(1, h.height):
        groups: dict[str, list] = defaultdict(list)
        for v in values:
            groups[h.generalize(v, level)].append(children_of_prev[v])
        nxt = {}
        for g, kids in groups.items():
            kids = list(dict.fromkeys(kids))
            pos = sum(extra[k] for k in kids if extra[k] > 0)
            neg = sum(-extra[k] for k in kids if extra[k] < 0)
            extra[(level, g)] = pos - neg
            total += level / height * min(pos, neg)
        for v in values:
            nxt[v] = (level, h.generalize(v, level))
        children_of_prev = nxt
    return total / (P * Q)


def violates(model: dict, size: int, sens: Counter, everyone: Counter, sh: Hierarchy | None, svalues) -> bool:
    kind = model["kind"]
    if kind == "k":
        return size < model["k"]
    if kind == "distinct":
        return len(sens) < model["l"]
    if kind == "entropy":
        if len(sens) < math.ceil(model["l"]):
            return True
        c = size * (math.log(size) - math.log(model["l"]))
        return sum(f * math.log(f) for f in sens.values()) > c
    if kind == "recursive":
        f = sorted(sens.values())
        if len(f) < model["l"]:
            return True
        threshold = sum(f[: len(f) - model["l"] + 1]) * model["c"]
        return not f[-1] < threshold
    if kind == "t_equal":
        n = sum(everyone.values())
        val = 1.0
        for v, c in sens.items():
            val += abs(everyone[v] / n - c / size) - everyone[v] / n
        return val / 2 > model["t"]
    if kind == "t_hier":
        return _emd_hierarchical(everyone, sens, sh, svalues) > model["t"]  # type: ignore[arg-type]
    raise AssertionError(kind)


def factors(gs: float) -> tuple[float, float]:
    return (1.0 if gs <= 0.5 else 1 - 2 * (gs - 0.5)), (2 * gs if gs < 0.5 else 1.0)


def node_stats(rows, qi, hs, levels, models, sensitive, sh, gs=0.5):
    """(violating records, {metric: value}, smallest kept class) of one node, from the rows."""
    g_f, s_f = factors(gs)
    n = len(rows)
    keys = [tuple(hs[c].generalize(r[c], lv) for c, lv in zip(qi, levels)) for r in rows]
    sizes = Counter(keys)
    sens: dict[tuple, Counter] = defaultdict(Counter)
    everyone: Counter = Counter()
    if sensitive:
        for k, r in zip(keys, rows):
            sens[k][r[sensitive]] += 1
            everyone[r[sensitive]] += 1
    svalues = sorted(everyone)
    bad = {k for k, sz in sizes.items() if any(violates(m, sz, sens[k], everyone, sh, svalues) for m in models)}
    supp_rows = [i for i, k in enumerate(keys) if k in bad]
    suppressed = len(supp_rows)
    kept = [sz for k, sz in sizes.items() if k not in bad]
    scores = {}
    # entropy (monotonic): per column gFactor Σ a log2(b/a), counts over all rows
    ent = []
    for c, lv in zip(qi, levels):
        a = Counter(r[c] for r in rows)
        b = Counter(hs[c].generalize(r[c], lv) for r in rows)
        raw = sum(cnt * math.log2(cnt / b[hs[c].generalize(v, lv)]) for v, cnt in a.items()) * g_f
        ent.append(raw)
    scores["entropy"] = sum(math.floor(-x * 1e10) / 1e10 for x in ent)
    nm = list(ent)
    if suppressed:
        for j in range(len(qi)):
            cnt = Counter(keys[i][j] for i in supp_rows)
            nm[j] += sum(v * math.log2(v / suppressed) * s_f for v in cnt.values())
    scores["entropy_nm"] = sum(math.floor(-x * 1e10) / 1e10 for x in nm)
    # loss
    losses = []
    for j, (c, lv) in enumerate(zip(qi, levels)):
        h = hs[c]
        domain = [r[0] for r in h.rows] if isinstance(h, CsvHierarchy) else sorted({r[c] for r in rows})
        under = Counter(h.generalize(v, lv) for v in domain)
        x = 0.0
        for k in keys:
            share = under[k[j]] / len(domain)
            if k in bad:
                x += 1.0 if s_f == 1 else share + s_f * (1 - share)
            else:
                x += share * g_f
        lo = g_f * n / len(domain)
        losses.append(math.floor(max((x - lo) / (n - lo), 0.0) * 1e10) / 1e10)
    r = 1.0
    for v in losses:
        r *= (v + 1) ** (1 / len(losses))
    scores["loss"] = r - 1
    prec = 0.0
    for c, lv in zip(qi, levels):
        height = hs[c].height - 1
        prec += ((n - suppressed) * (lv / height if height else 0) * g_f + suppressed * s_f) / n / len(qi)
    scores["precision"] = prec
    scores["discernibility"] = float(sum(s * s for s in kept) + n * suppressed)
    groups = len(kept) * s_f + (g_f if suppressed else 0)
    scores["aecs"] = n / groups if groups else math.inf
    return suppressed, scores, min(kept) if kept else 0


def optimum(rows, qi, hs, models, sensitive, sh, limit, metric, gs=0.5):
    """(levels, score) of the best anonymous node by brute force, or None."""
    found = []
    for levels in itertools.product(*[range(hs[c].height) for c in qi]):
        suppressed, scores, _ = node_stats(rows, qi, hs, levels, models, sensitive, sh, gs)
        if suppressed <= limit * len(rows):
            found.append((scores[metric], sum(levels), levels))
    if not found:
        return None
    low = min(f[0] for f in found)
    # scores equal but for the order of a float sum tie; the lowest level sum wins
    best = min(f for f in found if abs(f[0] - low) <= 1e-12 * max(abs(low), abs(f[0])))
    return best[2], best[0]


def exhaustive(
    maxima: Sequence[int],
    evaluate: Callable[[list[tuple[int, ...]]], list[tuple[bool, float]]],
    meets_risk: Callable[[tuple[int, ...]], bool],
) -> tuple[int, ...] | None:
    """The same choice as :func:`~qar_sql.anonymization.risk.best_first`, by evaluating every node
    and measuring every node that passes the models."""
    best = None
    for levels in lattice(maxima):
        ((ok, loss),) = evaluate([levels])
        if ok and meets_risk(levels):
            key = order_key(loss, levels)
            if best is None or key < best[0]:
                best = (key, levels)
    return None if best is None else best[1]
