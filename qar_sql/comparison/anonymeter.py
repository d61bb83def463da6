"""``--anonymeter``: anonymeter's singling-out, linkability and inference evaluators beside the
distance metrics (optional extra ``qar-sql[anonymeter]``).

anonymeter (Giomi et al., PoPETs 2023) works on whole pandas DataFrames, so unlike the rest of
the comparison both tables are held in memory here: use it on tables of up to some hundred
thousand rows. No control set (original records kept out of the release) is available to a
comparison, so each risk is the attack's success rate with its confidence interval (anonymeter's
``risk()`` without a control), not the excess over a control attack.

**Reproducible.** The singling-out queries come from anonymeter's own seeded generator. The
linkability and inference evaluators draw their targets with pandas' ``sample``, which reads
numpy's global random state: it is seeded for the call and restored afterwards, so the same
tables give the same risks and the caller's random state is left as it was. With at least as
many attacks as original records every record is attacked and the draw does not matter.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from qar_sql.comparison.projection import category_tokens
from qar_sql.errors import UsageError
from qar_sql.extras import require
from qar_sql.results import AnonymeterRisk


def _frame(batches: Iterable[dict[str, np.ndarray]], cols: Sequence[str], numeric: set[str]):
    import pandas as pd

    parts: dict[str, list[np.ndarray]] = {c: [] for c in cols}
    for batch in batches:
        for c in cols:
            parts[c].append(batch[c])
    data = {}
    for c in cols:
        values = np.concatenate(parts[c]) if parts[c] else np.empty(0)
        # Categories as their canonical text (the "=" of real values dropped), NULL as "NULL".
        data[c] = (
            values.astype(np.float64)
            if c in numeric
            else np.array([t.removeprefix("=") for t in category_tokens(values)], dtype=object)
        )
    return pd.DataFrame(data, columns=list(cols))


def require_anonymeter() -> None:
    """Fail before any work when the optional package is missing."""
    require("anonymeter", "--anonymeter")


def run_anonymeter(
    original: Iterable[dict[str, np.ndarray]],
    treated: Iterable[dict[str, np.ndarray]],
    numeric: set[str],
    cols: Sequence[str],
    attackers: Sequence[str],
    target: str | None,
    *,
    n_attacks: int = 500,
    seed: int = 0,
) -> tuple[AnonymeterRisk, ...]:
    """The three evaluators' risks (95 % confidence intervals)."""
    try:
        from anonymeter.evaluators import InferenceEvaluator, LinkabilityEvaluator, SinglingOutEvaluator
    except ModuleNotFoundError as exc:
        raise UsageError(
            f"--anonymeter needs the anonymeter package ({exc.name} is missing); install it with: "
            "pip install 'qar-sql[anonymeter]'"
        ) from exc
    import warnings

    ori = _frame(original, cols, numeric)
    syn = _frame(treated, cols, numeric)
    n = min(n_attacks, len(ori))
    n_cols = min(3, len(cols))
    out = []
    state = np.random.get_state()  # restored below: the caller's random state is not ours to move
    np.random.seed(seed)
    try:
        with warnings.catch_warnings():
            # anonymeter warns when an attack does no better than its baseline: that is a result.
            warnings.simplefilter("ignore")
            so = SinglingOutEvaluator(ori=ori, syn=syn, n_attacks=n, n_cols=n_cols, seed=seed)
            so.evaluate(mode="multivariate")
            out.append(_risk("singling_out", so.results(), f"{n_cols}-column queries"))

            if len(cols) >= 2:
                first = list(attackers) or list(cols[: len(cols) // 2])
                second = [c for c in cols if c not in first]
                if second:
                    lk = LinkabilityEvaluator(ori=ori, syn=syn, aux_cols=(first, second), n_attacks=n, n_neighbors=1)
                    lk.evaluate(n_jobs=1)
                    out.append(_risk("linkability", lk.results(), f"{', '.join(first)} | {', '.join(second)}"))

            if target is not None:
                aux = [c for c in cols if c != target]
                inf = InferenceEvaluator(
                    ori=ori, syn=syn, aux_cols=aux, secret=target, regression=target in numeric, n_attacks=n
                )
                inf.evaluate(n_jobs=1)
                out.append(_risk("inference", inf.results(), f"secret {target}"))
    finally:
        np.random.set_state(state)
    return tuple(out)


def _risk(name: str, results, detail: str) -> AnonymeterRisk:
    risk = results.risk()
    return AnonymeterRisk(
        evaluator=name, risk=float(risk.value), ci_low=float(risk.ci[0]), ci_high=float(risk.ci[1]),
        attack_rate=float(results.attack_rate.value), baseline_rate=float(results.baseline_rate.value), detail=detail,
    )  # fmt: skip
