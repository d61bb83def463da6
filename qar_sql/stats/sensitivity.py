"""How T̂ moves with the pool of columns: leave-one-column-out, from the θ already in hand (no
database). Pure numpy.

T̂ without column c is the same estimator (:func:`qar_sql.stats.evt.qar_risk`: same α, π_u, PWM)
on the θ of the C(N − 1, p) QIs that avoid c. Every column is avoided by as many QIs, so the
tail width W' is one number, and T̂ reads only the W' largest θ of those QIs: the rows of one
:func:`~qar_sql.stats.evt.qar_risk_batch` call hold just those.

A pruned audit knows θ exactly only at the top (the other QIs stand at an upper bound below
it). Without c, the top W' is exact when none of its W' values is a pruned QI's bound (a QI
grouped ranks before a pruned one of the same value: the pruned one's θ is at most that, so
the W' largest *values* are the same); otherwise the column gets no number and a reason.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from qar_sql.errors import DataError
from qar_sql.stats import evt


@dataclass(frozen=True)
class ColumnOut:
    """T̂ of the QIs that avoid ``column`` (None with ``reason`` when it cannot be given)."""

    column: str
    risk: float | None
    n_qi: int  # C(N − 1, p): the QIs that avoid the column
    reason: str | None = None


def leave_one_column_out(
    theta: np.ndarray,
    combos: np.ndarray,
    columns: tuple[str, ...] | list[str],
    rows: int,
    *,
    alpha: float,
    pi_u: float,
    pwm: str,
    exact: np.ndarray | None = None,
) -> tuple[ColumnOut, ...]:
    """T̂ without each column. ``theta``: the fit's θ of every QI (QI order; a pruned QI at its
    upper bound); ``combos``: each QI's column indices; ``exact``: which θ are exact (default all)."""
    theta = np.asarray(theta, dtype=float)
    n_cols, (n_qi, p) = len(columns), combos.shape
    n_avoid = math.comb(n_cols - 1, p) if n_cols > p else 0
    exact = np.ones(n_qi, dtype=bool) if exact is None else np.asarray(exact, dtype=bool)
    try:
        width = evt.tail_width(n_avoid, pi_u) if n_avoid else 0
    except DataError:  # N_p too small for π_u
        width = 0
    if width < 2:  # none left, or no two order statistics around the quantile for u to interpolate
        why = f"the {n_avoid:,} QIs without it are too few for pi_u = {pi_u:g}"
        return tuple(ColumnOut(c, None, n_avoid, why) for c in columns)
    # largest θ first; at equal θ a grouped QI before a pruned one (see the module doc)
    order = np.lexsort((~exact, -theta))
    # a prefix of that order holding the W' largest θ avoiding every column
    take = min(n_qi, 2 * width + 64)
    while True:
        prefix = order[:take]
        hits = np.zeros((len(prefix), n_cols), dtype=bool)
        hits[np.arange(len(prefix))[:, None], combos[prefix]] = True
        if take == n_qi or (len(prefix) - hits.sum(axis=0)).min() >= width:
            break
        take = min(n_qi, 2 * take)
    tops = np.empty((n_cols, width))
    pruned_in = np.zeros(n_cols, dtype=bool)
    for c in range(n_cols):
        picked = prefix[~hits[:, c]][:width]
        tops[c] = theta[picked]
        pruned_in[c] = not exact[picked].all()
    risk = evt.qar_risk_batch(tops, rows, alpha=alpha, pi_u=pi_u, pwm=pwm, n_qi=n_avoid)  # in chunks
    out = []
    for c, name in enumerate(columns):
        if pruned_in[c]:
            out.append(ColumnOut(name, None, n_avoid, "pruned QIs reach the tail without it (--prune off gives it)"))
        elif not math.isfinite(risk[c]):
            out.append(ColumnOut(name, None, n_avoid, "no tail without it: no θ exceeds u"))
        else:
            out.append(ColumnOut(name, float(risk[c]), n_avoid))
    return tuple(out)
