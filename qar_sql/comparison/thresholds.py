"""``qar compare --fail-below``: the thresholds parsed, checked against what the options can
produce before any work, and the breaches of a result (exit 1)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from qar_sql.errors import ParameterError, UsageError
from qar_sql.results import THRESHOLD_METRICS, CompareResult


def parse_thresholds(items: Sequence[str] | None) -> dict[str, float]:
    """``["hidden_rate=0.9", "cdr=0.5,dtc=0.1"]`` → {name: value}."""
    out: dict[str, float] = {}
    for item in items or ():
        for part in item.split(","):
            part = part.strip()
            if not part:
                continue
            name, sep, value = part.partition("=")
            name = name.strip()
            if not sep or name not in THRESHOLD_METRICS:
                raise ParameterError(
                    f"--fail-below {part!r} must be METRIC=VALUE with METRIC one of {', '.join(THRESHOLD_METRICS)}, "
                    "e.g. hidden_rate=0.9"
                )
            try:
                out[name] = float(value)
            except ValueError:
                raise ParameterError(f"--fail-below {part!r}: {value!r} is not a number") from None
            if not math.isfinite(out[name]):
                raise ParameterError(f"--fail-below {part!r}: give a finite number")
    return out


#: What each metric needs besides the two tables (for the --fail-below messages).
NEEDS = {
    "hidden_rate": "a link: --link KEY, --aligned or --treatments",
    "local_cloaking": "a link: --link KEY, --aligned or --treatments",
    "local_cloaking_ties": "a link: --link KEY, --aligned or --treatments",
    "correlation_protection_rate": "--attacker-columns and a link (--link KEY, --aligned or --treatments)",
    "mae": "a numeric --target",
}


def check_thresholds(
    thresholds: dict[str, float], *, linked: bool, attacker_columns: Sequence[str] | None, target: str | None
) -> None:
    """Reject, before any work, a threshold on a metric the options cannot produce."""
    for name, limit in thresholds.items():
        missing = (
            (name in ("hidden_rate", "local_cloaking", "local_cloaking_ties") and not linked)
            or (name == "correlation_protection_rate" and not (linked and attacker_columns))
            or (name == "mae" and target is None)
        )
        if missing:
            raise UsageError(f"--fail-below {name}={limit:g} cannot be checked: {name} needs {NEEDS[name]}")


def check_computed(result: CompareResult, thresholds: dict[str, float]) -> None:
    """A threshold on a metric that was not computed is a usage error: it cannot pass or fail
    (a categorical --target has an accuracy, not an mae)."""
    for name, limit in thresholds.items():
        if result.metric(name) is None:
            raise UsageError(
                f"--fail-below {name}={limit:g}: {name} was not computed (it needs {NEEDS.get(name, 'a link')})"
            )


def below_thresholds(result: CompareResult, thresholds: dict[str, float]) -> list[str]:
    """One sentence per breached threshold (of the metrics computed: :func:`check_computed`)."""
    breaches = []
    for name, limit in thresholds.items():
        value = result.metric(name)
        if value is not None and value < limit:
            breaches.append(f"{name} {value:.6g} is below the threshold {limit:g}")
    return breaches
