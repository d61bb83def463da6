"""The rules a value keeps wherever it comes from — the command line, the Python API, a
``qar.toml`` scan — each written once.

The ground floor of the package: it imports only :mod:`qar_sql.errors` and
:mod:`qar_sql.user_text` (which characters a text may hold; it imports nothing of qar), so the parameter
dataclasses (``qar_sql/parameters``), the statistics (``qar_sql/stats``) and the scans
(``qar_sql/compliance``) all read it directly, and ``qar --help`` loads neither numpy nor scipy
to know a default or check a value. A rule written here is not restated anywhere else.
"""

from __future__ import annotations

import decimal
import math
import numbers
import re
from collections.abc import Sequence

from qar_sql.errors import ParameterError, UsageError, require_whole, shown
from qar_sql.user_text import reads_as_number, unsafe_character

#: Threads (connections) a command may use when ``jobs`` is not given.
DEFAULT_JOBS = 2

PWM_METHODS = ("plotting", "unbiased")
"""PWM variants: ``"plotting"`` uses the plotting positions p_k = (k − 0.35)/n (the default, as
evir and fExtremes); ``"unbiased"`` uses the unbiased estimator b1 = (1/n) Σ (k − 1)/(n − 1) x_(k)
and a1 = a0 − b1 (Hosking & Wallis 1987)."""

#: The largest population N: floats must hold it (N and n/f enter every model as a float).
MAX_POPULATION = 10**308

DEFAULT_LEVEL = 0.95
"""Nominal level of the tail-fit bands unless ``--interval-level`` says otherwise: the bootstrap
quantiles they are read at, not a measured coverage (docs/uncertainty.md)."""

DEFAULT_RESAMPLES = 1000
"""Bootstrap resamples B unless ``--bootstrap`` says otherwise: about 1,000 is the usual minimum
for percentile-type bounds, whose tails rest on the 25 most extreme resamples each at 95%
(Efron & Tibshirani 1993)."""


DOMAIN_MODES = ("observed", "product")

#: The modes of ``--prune``: ``auto`` groups only the QIs that can reach the tail, ``off`` all.
PRUNE_MODES = ("auto", "off")
#: ``auto`` by default from this p on; below it every QI is grouped (p = 3 keeps its per-QI
#: output whole: it is cheap, and the classic per-QI figures need every QI's classes).
PRUNE_FROM_P = 4


def resolve_prune(prune: str | None, p: int) -> str:
    """The prune mode an audit at size p runs with: ``None`` means ``auto`` at p ≥ 4, else off."""
    if prune is None:
        return "auto" if p >= PRUNE_FROM_P else "off"
    check_choice("--prune", prune, PRUNE_MODES)
    return prune


def check_tail(p: int | None, alpha: float, pi_u: float) -> None:
    """Check p ≥ 1 (if given), 0 < α < 1, 0 < π_u < 1 and α < π_u.

    α < π_u is needed because T̂ extrapolates beyond the threshold u, which is exceeded with
    probability π_u; α ≥ π_u would ask for a quantile at or below u.

    Raises
    ------
    ParameterError : with one sentence naming the bad value and how to fix it.
    """
    if isinstance(p, str) and p.strip().isdigit():  # (p: "3" in a YAML or TOML file: quoted, so text)
        raise text_error("p =", p, f"write it without quotes, as a whole number of columns, e.g. p = {p.strip()}.")
    if p is not None:
        require_whole(p, 1, f"p = {shown(p)} is not a valid QI size; use a whole number of columns, at least 1.")
    for name, value, usual in (("alpha", alpha, "0.01"), ("pi_u", pi_u, "0.05")):
        v = _float(value)
        if isinstance(value, str):
            raise text_error(f"{name} =", value, f"pass a number such as {usual}.")
        if isinstance(value, bool) or not isinstance(value, numbers.Real):  # (true, [], {}: no number at all)
            raise ParameterError(f"{name} = {shown(value)} is not a number; use a probability such as {usual}.")
        if not 0.0 < v < 1.0:
            raise ParameterError(f"{name} = {shown(value)} is outside (0, 1); use a probability such as {usual}.")
    if not float(alpha) < float(pi_u):
        # Suggest values that work with the other one as given: alpha = pi_u / 5, pi_u = 5 alpha
        # (or halfway to 1 when that is not below 1).
        a, pu = float(alpha), float(pi_u)
        new_pi_u = 5 * a if 5 * a < 1 else (a + 1) / 2
        raise ParameterError(
            f"alpha = {shown(alpha)} must be smaller than pi_u = {shown(pi_u)}; "
            f"lower alpha below {pu:g} (e.g. {pu / 5:.2g}) or raise pi_u above {a:g} (e.g. {new_pi_u:.2g})."
        )


def check_choice(flag: str, value: object, allowed: Sequence[str]) -> None:
    """``value`` one of ``allowed`` (the choices of ``flag``), else a ParameterError naming it."""
    if value not in allowed:
        raise ParameterError(f"{flag} {shown(value)} is unknown; use one of {', '.join(allowed)}")


#: A number with an exponent but without a '.' and a signed exponent (1e-3, 5E-1): YAML 1.1 (dbt's
#: YAML, PyYAML) reads it as text even without quotes.
_YAML_TEXT_EXPONENT = re.compile(r"\s*[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)[eE][-+]?[0-9]+\s*")


def text_error(where: str, value: str, fix: str) -> ParameterError:
    """The one sentence for a number given as text (``where``, e.g. ``alpha =`` or ``--k``, and the
    text): quoted in a TOML or YAML file, ``fix`` (write it without quotes, or pass a number); in an
    exponent form, how to write it and why it is text."""
    if _YAML_TEXT_EXPONENT.fullmatch(value):
        # (true of every file: a TOML file's '1e-3' is text because it is quoted, and "YAML reads ..."
        # alone named a reader the TOML file does not go through)
        fix = (
            f"write it as a decimal: {float(value)!r} (a quoted number is text, and YAML reads a number with an "
            "exponent as text even unquoted unless it has a '.' and a signed exponent: 1.0e-3)"
        )
    return ParameterError(f"{where} {value!r} is text; {fix}")


def _float(value: object) -> float:
    """``value`` as a float, NaN when it is none."""
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):  # (OverflowError: an int of 400 digits, from a file)
        return math.nan


def check_risk(value: object, where: str, example: str) -> None:
    """A risk threshold (``--fail-above``, ``fail_above``, ``warn_above``, ``--threshold``): None
    or a number between 0 and 1, else a ParameterError naming ``where`` the bad risk came from
    (``"--fail-above"``, ``"x.toml: fail_above ="``) and an ``example`` value. The one wording of
    the rule."""
    if value is None:
        return
    if isinstance(value, str) and reads_as_number(value):  # ("0.5" in a TOML or YAML file: quoted, so text)
        raise text_error(where, value, f"write it without quotes, as a number: a risk between 0 and 1, e.g. {example}")
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0.0 <= _float(value) <= 1.0:
        raise ParameterError(f"{where} {shown(value)} must be a risk between 0 and 1, e.g. {example}")


def check_warning(warn: float | None, fail: float | None, warn_name: str, fail_name: str) -> None:
    """A warning threshold not above the failure's (``warn_above``, ``fail_above``), each named as
    its caller gave it (``warn_above =``, ``--warn-above``): above it, the warning never shows."""
    if warn is not None and fail is not None and warn > fail:
        raise ParameterError(
            f"{warn_name} {warn:g} is above {fail_name} {fail:g}; a warning must come before the failure, so make "
            f"{warn_name.removesuffix(' =')} the smaller"
        )


def check_null_tokens(tokens: Sequence[str] | str | None) -> tuple[str, ...]:
    """``--null-token`` values as a tuple, each a non-empty string (the empty cell is NULL
    already), duplicates dropped."""
    if tokens is None:
        return ()
    if isinstance(tokens, str):
        tokens = (tokens,)
    out: list[str] = []
    for t in tokens:
        if not isinstance(t, str) or not t:
            raise UsageError(
                f"--null-token {t!r} must be a non-empty text token such as NA (an empty cell is NULL already)"
            )
        if (
            bad := unsafe_character(t, allow="\t")
        ) is not None:  # (else refused as a "text value" whose fix named a file)
            raise UsageError(
                f"--null-token {t!r} holds the character U+{ord(bad):04X} (a line break, control or direction "
                "character); give the token as it is written in a cell, such as NA"
            )
        if t not in out:
            out.append(t)
    return tuple(out)


def check_group_size(k: object, rows: int | None = None) -> None:
    """k people drawn from a table of ``rows`` people: 2 ≤ k (≤ rows when the rows are known)."""
    require_whole(k, 2, f"group size k = {shown(k)} must be a whole number of at least 2, e.g. --group-size 30")
    if rows is not None and int(k) > rows:  # type: ignore[call-overload]
        raise ParameterError(
            f"group size k = {shown(k)} is larger than the table's {rows} rows; use --group-size {rows} or less"
        )


def check_target(target: object) -> None:
    """A target probability strictly between 0 and 1 (``qar uniqueness --target``)."""
    if isinstance(target, str):
        raise text_error("target probability", target, "pass a number strictly between 0 and 1, e.g. 0.5")
    if not isinstance(target, (int, float)) or not 0.0 < _float(target) < 1.0:
        raise ParameterError(f"target probability {shown(target)} must lie strictly between 0 and 1, e.g. --target 0.5")


def check_sampling_fraction(sampling_fraction: object, rows: int = 1) -> float:
    """f in (0, 1], the share of the population the table holds, small enough that n/f is a
    number; returns it as a float."""
    f = _float(sampling_fraction)
    if isinstance(sampling_fraction, (bool, str)) or not (0.0 < f <= 1.0) or math.isnan(f):
        raise ParameterError(
            f"--sampling-fraction {shown(sampling_fraction)} must be in (0, 1]: the share of the "
            "population the table holds, e.g. 0.01 for a 1% sample"
        )
    if not rows / f < MAX_POPULATION:
        raise ParameterError(
            f"--sampling-fraction {shown(sampling_fraction)} is too small: the population n/f would "
            f"exceed 1e+308 people; give a larger fraction or --population N"
        )
    return f


def check_population(population: object, rows: int = 1) -> None:
    """``population`` is a whole number of people, at least ``rows`` and at most
    :data:`MAX_POPULATION` (a whole float such as 1e9 counts)."""
    if isinstance(population, float) and population.is_integer():
        population = int(population)
    whole = isinstance(population, numbers.Integral) and not isinstance(population, bool)
    if not whole or int(population) < 1:  # type: ignore[call-overload]
        raise ParameterError(f"--population {shown(population)} must be a whole number of people, e.g. 1000000")
    n = int(population)  # type: ignore[call-overload]
    if n > MAX_POPULATION:
        raise ParameterError(
            f"--population {shown(population)} is larger than 1e+308, the largest number the models "
            "can hold; give the size of the population the table was drawn from"
        )
    if n < rows:
        raise ParameterError(
            f"--population {shown(population)} must be a whole number at least the number of rows "
            f"({rows}); the table is a sample of the population"
        )


def check_level(level: object) -> float:
    """0 < level < 1, else a ParameterError naming it."""
    v = _float(level)
    if isinstance(level, bool) or not 0.0 < v < 1.0:
        raise ParameterError(f"--interval-level {level!r} is not a probability in (0, 1); use e.g. 0.95")
    return v


def check_resamples(resamples: object) -> int:
    """0 (no resampling) or a whole number of at least 100 (fewer make the bounds noise)."""
    if (
        isinstance(resamples, bool)
        or not isinstance(resamples, numbers.Integral)
        or not (int(resamples) == 0 or int(resamples) >= 100)
    ):
        raise ParameterError(
            f"--bootstrap {resamples!r} is not a number of resamples; use a whole number of at least 100 "
            "(e.g. 1000), or 0 for no interval"
        )
    return int(resamples)


def check_min_exceedances(minimum: object) -> int | None:
    """None (no gate) or a whole number of at least 1, else a ParameterError naming it."""
    if minimum is None:
        return None
    message = (
        f"--min-exceedances {shown(minimum)} is not a number of exceedances; use a whole number of at least 1, e.g. 3"
    )
    require_whole(minimum, 1, message)
    return int(minimum)  # type: ignore[call-overload]


def parse_domain(domain: str | float) -> str | int:
    """``"observed"``, ``"product"`` or a whole number of possible values (as a string from
    the command line, or a number)."""
    if isinstance(domain, str):
        text = domain.strip().lower()
        if text in DOMAIN_MODES:
            return text
        try:
            # Decimal, not float: --domain 1e40 is 10^40 exactly, not the nearest double's digits
            value = decimal.Decimal(text.replace("_", ""))
        except decimal.InvalidOperation:
            raise ParameterError(
                f"domain {shown(domain)} is unknown; use --domain observed, --domain product or a whole number such as --domain 95"
            ) from None
    elif isinstance(domain, bool) or not isinstance(domain, numbers.Real):
        raise ParameterError(
            f"domain {shown(domain)} is unknown; use 'observed', 'product' or a whole number such as 95"
        )
    elif isinstance(domain, numbers.Integral):
        value = decimal.Decimal(int(domain))
    else:
        value = decimal.Decimal(repr(float(domain)))  # the shortest digits: 1e+40, not its binary value
    if not value.is_finite() or value < 1 or value != value.to_integral_value():
        raise ParameterError(
            f"domain {shown(domain)} must be a whole number of possible values of at least 1, e.g. --domain 95"
        )
    if value > decimal.Decimal("1e308"):  # the formulas take M as a float
        raise ParameterError(f"domain {shown(domain)} is larger than 1e+308; give a smaller number of possible values")
    return int(value)


def check_unit(value: float, flag: str, advice: str) -> None:
    """``value`` in [0, 1] (``--risk-threshold``, ``--t``, ``--gs-factor``), else a
    ParameterError naming it, then ``advice`` (an example or what the bounds mean)."""
    if not (0.0 <= value <= 1.0):  # (NaN fails both comparisons)
        raise ParameterError(f"{flag} {shown(value)} must be between 0 and 1{advice}")


def check_risk_below(value: object) -> None:
    """A risk target strictly between 0 and 1 (``--risk-below``: T̂ = 0 or 1 is no target)."""
    if value is not None and not (isinstance(value, int | float) and not isinstance(value, bool) and 0 < value < 1):
        raise ParameterError(f"--risk-below {value!r} must be strictly between 0 and 1, e.g. 0.2")
