"""Validation of user-facing parameters, shared by the API and the plug-ins.

Every check raises :class:`~shuffle_accountant.errors.InvalidParameter` with one line
that names the parameter, the accepted range and the value received.
"""

from __future__ import annotations

import math
from numbers import Integral, Real

from .errors import InvalidParameter

#: Largest number of users (or trials) the accountant supports.
MAX_N = 10**12


def _describe(value: object) -> str:
    return repr(value) if not isinstance(value, float) else f"{value!r}"


def check_real(
    name: str,
    value: object,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    """Return ``value`` as a finite float inside the given interval, or raise."""
    lo_s = "" if low is None else f"{low:g} {'<' if low_open else '<='} "
    hi_s = "" if high is None else f" {'<' if high_open else '<='} {high:g}"
    accepted = f"{lo_s}{name}{hi_s}" if (low is not None or high is not None) else f"finite {name}"
    if isinstance(value, bool) or not isinstance(value, Real):
        raise InvalidParameter(f"{name} must be a finite number ({accepted}), got {_describe(value)}")
    x = float(value)
    if not math.isfinite(x):
        raise InvalidParameter(f"{name} must be finite ({accepted}), got {x!r}")
    if low is not None and (x < low or (low_open and x == low)):
        raise InvalidParameter(f"{name} out of range: need {accepted}, got {x!r}")
    if high is not None and (x > high or (high_open and x == high)):
        raise InvalidParameter(f"{name} out of range: need {accepted}, got {x!r}")
    return x


def check_positive(name: str, value: object) -> float:
    """A finite number > 0 (ε, ε0, σ, ...)."""
    return check_real(name, value, low=0.0, low_open=True)


def check_probability_open(name: str, value: object) -> float:
    """A number in the open interval (0, 1), e.g. δ."""
    return check_real(name, value, low=0.0, high=1.0, low_open=True, high_open=True)


def check_int(name: str, value: object, *, low: int = 1, high: int = MAX_N) -> int:
    """An integer in ``[low, high]``; integral floats such as ``1e6`` are accepted."""
    if isinstance(value, bool):
        raise InvalidParameter(f"{name} must be an integer in [{low}, {high:g}], got {value!r}")
    if isinstance(value, Integral):
        k = int(value)
    elif isinstance(value, Real) and math.isfinite(float(value)) and float(value).is_integer():
        k = int(value)
    else:
        raise InvalidParameter(f"{name} must be an integer in [{low}, {high:g}], got {_describe(value)}")
    if not low <= k <= high:
        raise InvalidParameter(f"{name} out of range: need {low} <= {name} <= {high:g}, got {k}")
    return k
