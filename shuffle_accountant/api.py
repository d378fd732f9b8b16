"""The Python API: one function per question, each returning labelled records.

Mirrors the CLI (``shuffle-acct epsilon`` / ``delta`` / ``methods``)::

    >>> from shuffle_accountant import api
    >>> b = api.epsilon(eps0=3, n=10_000)            # certified upper bound, FMT21 clones
    >>> b.kind, b.method
    ('upper', 'clones')

Every number is certified in the direction its ``kind`` says: an ``upper`` value is at
least the exact value of its analysis, a ``lower`` value at most the exact value of the
mechanism that attains it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

from . import comparators as _comparators
from .analyses import DEFAULT_METHODS, METHODS, Method, get_method, profile_for
from .errors import InvalidParameter
from .numeric.search import epsilon_for_delta
from .numeric.profile import UNDERFLOW_FLOOR
from .results import Bound
from .validation import check_int, check_positive, check_probability_open, check_real

#: Largest eps0 accepted from users (e^eps0 stays finite in double precision).
MAX_EPS0 = 700.0
#: Smallest delta reported; a certified upper bound below it is reported as this value.
TINY_DELTA = UNDERFLOW_FLOOR


# ---------------------------------------------------------------------------------------
# validation
# ---------------------------------------------------------------------------------------


def _common(eps0: float, n: int, k: int | None, delta0: float) -> tuple[float, int, int | None, float]:
    eps0 = check_real("eps0", eps0, low=0.0, high=MAX_EPS0, low_open=True)
    n = check_int("n", n)
    if k is not None:
        k = check_int("k", k, low=2, high=10**9)
    delta0 = check_real("delta0", delta0, low=0.0, high=1.0, high_open=True)
    return eps0, n, k, delta0


def _rtol(rtol: float) -> float:
    return check_real("rtol", rtol, low=1e-12, high=1e-2)


# ---------------------------------------------------------------------------------------
# FMT21 Theorem 3.1 (closed form) and Theorem 3.8 (approximate-DP local randomizers)
# ---------------------------------------------------------------------------------------


def closed_form_regime(eps0: float, n: int, delta: float) -> bool:
    """FMT21 Theorem 3.1 applies when ``eps0 <= log(n / (16 log(2/delta)))``."""
    return eps0 <= math.log(n / (16.0 * math.log(2.0 / delta)))


def closed_form_epsilon(eps0: float, n: int, delta: float) -> float:
    """FMT21 Theorem 3.1, rounded up:
    ``log(1 + (e^eps0 - 1)/(e^eps0 + 1) (8 sqrt(e^eps0 log(4/delta) / n) + 8 e^eps0 / n))``.
    Callers check :func:`closed_form_regime` first."""
    e = math.exp(eps0)
    x = (e - 1.0) / (e + 1.0) * (8.0 * math.sqrt(e * math.log(4.0 / delta) / n) + 8.0 * e / n)
    return math.log1p(x) * (1.0 + 1e-13)


def closed_form_delta(eps0: float, n: int, eps: float) -> float | None:
    """The smallest delta for which FMT21 Theorem 3.1 gives ``eps`` (rounded up), or
    ``None`` when no delta in (0, 1) reaches ``eps`` inside the theorem's regime.

    The theorem's eps decreases in delta, and its regime ``eps0 <= log(n/(16 log(2/delta)))``
    is ``delta >= 2 exp(-n e^{-eps0} / 16)``; so the answer is the larger of the delta that
    solves the formula and the regime's smallest delta.
    """
    e = math.exp(eps0)
    x = math.expm1(eps) * (e + 1.0) / (e - 1.0) - 8.0 * e / n
    if x <= 0.0:
        return None
    log_4_over_delta = n * x * x / (64.0 * e)
    delta = 4.0 * math.exp(-log_4_over_delta) * (1.0 + 1e-12)
    regime_floor = 2.0 * math.exp(-n / (16.0 * e)) * (1.0 + 1e-12)
    # below 1e-300 the value is reported as 1e-300, still an upper bound
    delta = max(delta, regime_floor, TINY_DELTA)
    if not 0.0 < delta < 1.0 or not closed_form_regime(eps0, n, delta):
        return None
    return delta


def delta0_penalty(eps0: float, n: int, delta0: float) -> Callable[[float], float]:
    """FMT21 Theorem 3.8: with (eps0, delta0)-DP local randomizers the shuffled output is
    ``(eps, delta + (e^eps + 1)(1 + e^{-eps0}/2) n delta0)``-DP, where (eps, delta) is the
    pure-eps0 guarantee. Returns ``eps -> extra delta`` (affine in ``e^eps``)."""
    c = (1.0 + 0.5 * math.exp(-eps0)) * n * delta0 * (1.0 + 1e-15)
    return lambda eps: (math.exp(eps) + 1.0) * c


# ---------------------------------------------------------------------------------------
# single-method questions
# ---------------------------------------------------------------------------------------


def _inputs(eps0: float, n: int, k: int | None, delta0: float, **more: float) -> dict:
    d = {"eps0": eps0, "n": n}
    if k is not None:
        d["k"] = k
    if delta0:
        d["delta0"] = delta0
    d.update(more)
    return d


def _not_applicable(m: Method, quantity: str, inputs: dict, why: str) -> Bound:
    return Bound(quantity, None, "not applicable", m.name, m.citation, inputs, why)


def epsilon(
    eps0: float,
    n: int,
    delta: float = 1e-6,
    method: str = "clones",
    k: int | None = None,
    delta0: float = 0.0,
    rtol: float = 1e-6,
) -> Bound:
    """The central eps at ``delta`` of shuffling ``n`` reports of an ``eps0``-DP local
    randomizer, by ``method`` (see :data:`~shuffle_accountant.analyses.METHODS`).

    Numerical methods return the end of a certified bracket ``[lower, upper]`` on their
    pair's exact eps (``details``): ``upper`` for upper-bound methods, ``lower`` for
    lower-bound methods; ``rtol`` is the bracket's target relative width.
    """
    eps0, n, k, delta0 = _common(eps0, n, k, delta0)
    delta = check_probability_open("delta", delta)
    rtol = _rtol(rtol)
    m = get_method(method)
    inputs = _inputs(eps0, n, k, delta0, delta=delta)
    warnings = _delta_warnings(n, delta)
    if m.needs_k and k is None:
        raise InvalidParameter(f"method {method!r} needs k (the alphabet size, an integer >= 2)")
    if m.name == "krr-lower" and k is not None and k < 2:
        raise InvalidParameter("k must be >= 2")
    if delta0 and m.kind == "upper" and not m.supports_delta0:
        return _not_applicable(m, "epsilon", inputs, f"{m.name} assumes pure eps0-DP randomizers (delta0 = 0)")
    if m.name in _comparators.COMPARATOR_METHODS:
        out = _comparators.comparator_epsilon(m.name, eps0, n, delta, k, rtol)
        return _comparator_bound(m, "epsilon", out, inputs, warnings)
    if not m.numerical:
        return _closed_form_epsilon_bound(m, eps0, n, delta, delta0, inputs, warnings)
    profile = profile_for(m.name, eps0, n, k)
    extra = delta0_penalty(eps0, n, delta0) if (delta0 and m.kind == "upper") else None
    br = epsilon_for_delta(profile, delta, rtol, extra)
    value_lo, value_hi, evaluations = br.lower, br.upper, br.evaluations
    width = (value_hi - value_lo) / value_hi if value_hi > 0 else 0.0
    if width > rtol:
        warnings.append(
            f"bracket relative width {width:.2g} exceeds rtol {rtol:g}: floating point limits the resolution here"
        )
    value = value_hi if m.kind == "upper" else value_lo
    if m.kind == "upper" and value > eps0:
        # every method here analyses eps0-DP randomizers, and shuffling is post-processing,
        # so eps0 itself is always a valid bound (this only trims ulp-level rounding)
        value = eps0
    return Bound(
        "epsilon",
        value,
        m.kind,  # type: ignore[arg-type]
        m.name,
        m.citation,
        inputs,
        m.assumes,
        tuple(warnings),
        {"bracket": [value_lo, value_hi], "rtol": rtol, "evaluations": evaluations},
    )


def _comparator_bound(m: Method, quantity: str, out: _comparators.Outcome, inputs: dict,
                      warnings: list[str]) -> Bound:
    """A published comparator's answer as a Bound (an ``upper`` bound of that analysis)."""
    if out.value is None:
        return _not_applicable(m, quantity, inputs, out.reason)
    return Bound(quantity, out.value, "upper", m.name, m.citation, inputs, m.assumes, tuple(warnings),
                 out.details or {})


def _closed_form_epsilon_bound(
    m: Method, eps0: float, n: int, delta: float, delta0: float, inputs: dict, warnings: list[str]
) -> Bound:
    if not delta0:
        if not closed_form_regime(eps0, n, delta):
            return _not_applicable(m, "epsilon", inputs, "outside Theorem 3.1's regime eps0 <= log(n / (16 log(2/delta)))")
        value = closed_form_epsilon(eps0, n, delta)
        return Bound("epsilon", value, "upper", m.name, m.citation, inputs, m.assumes, tuple(warnings))
    # Theorem 3.8: split delta between the pure part and the delta0 penalty (bisection
    # on the pure part; eps decreases in it while the penalty increases with eps).
    extra = delta0_penalty(eps0, n, delta0)
    lo, hi = 0.0, delta
    best: float | None = None
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if mid <= 0.0 or not closed_form_regime(eps0, n, mid):
            lo = mid
            continue
        eps = closed_form_epsilon(eps0, n, mid)
        if mid + extra(eps) <= delta:
            best = eps if best is None else min(best, eps)
            lo = mid
        else:
            hi = mid
    if best is None:
        return _not_applicable(m, "epsilon", inputs, "no split of delta satisfies Theorems 3.1 and 3.8 here")
    return Bound("epsilon", best, "upper", m.name, m.citation + "; Theorem 3.8", inputs, m.assumes, tuple(warnings))


def delta(
    eps0: float,
    n: int,
    eps: float,
    method: str = "clones",
    k: int | None = None,
    delta0: float = 0.0,
    rtol: float = 1e-9,
) -> Bound:
    """The delta at which shuffling is ``(eps, delta)``-DP by ``method``: a certified upper
    bound (lower for lower-bound methods); ``details`` holds the certified bracket."""
    eps0, n, k, delta0 = _common(eps0, n, k, delta0)
    eps = check_real("eps", eps, low=0.0)
    rtol = _rtol(rtol)
    m = get_method(method)
    inputs = _inputs(eps0, n, k, delta0, eps=eps)
    if m.needs_k and k is None:
        raise InvalidParameter(f"method {method!r} needs k (the alphabet size, an integer >= 2)")
    if delta0 and m.kind == "upper" and not m.supports_delta0:
        return _not_applicable(m, "delta", inputs, f"{m.name} assumes pure eps0-DP randomizers (delta0 = 0)")
    extra = delta0_penalty(eps0, n, delta0)(eps) if (delta0 and m.kind == "upper") else 0.0
    warnings: list[str] = []
    if m.name in _comparators.COMPARATOR_METHODS:
        out = _comparators.comparator_delta(m.name, eps0, n, eps, k)
        return _comparator_bound(m, "delta", out, inputs, _delta_warnings(n, out.value) if out.value else [])
    if not m.numerical:
        if eps >= eps0:  # an eps0-DP protocol is (eps, 0)-DP for every eps >= eps0
            return Bound("delta", 0.0, "upper", m.name, m.citation, inputs,
                         "eps >= eps0: (eps0, 0)-DP already holds (shuffling is post-processing)")
        d = closed_form_delta(eps0, n, eps)
        if d is None:
            return _not_applicable(m, "delta", inputs, "Theorem 3.1 reaches this eps with no delta < 1 inside its regime")
        value = min(d + extra, 1.0)
        return Bound("delta", value, "upper", m.name, m.citation, inputs, m.assumes, tuple(warnings))
    b = profile_for(m.name, eps0, n, k).bounds(eps, rtol)
    lower, upper = b.lower, b.upper
    if not b.converged:
        warnings.append(f"floating point limits the bracket to relative width {(b.upper - b.lower) / max(b.lower, 1e-300):.2g}")
    value = min(upper + extra, 1.0) if m.kind == "upper" else lower
    if m.kind == "upper" and 0.0 < value <= TINY_DELTA * (1.0 + 1e-12):
        value = TINY_DELTA
        warnings.append(f"{m.name}: delta is below 1e-300; reported as the upper bound 1e-300")
    if m.kind == "upper" and value >= 1.0:
        warnings.append(f"{m.name}: delta >= 1 at this eps: the analysis gives no guarantee")
    warnings += _delta_warnings(n, value) if m.kind == "upper" and value > 0 else []
    return Bound(
        "delta", value, m.kind, m.name, m.citation, inputs, m.assumes, tuple(warnings),  # type: ignore[arg-type]
        {"bracket": [min(lower + extra, 1.0) if m.kind == "upper" else lower, min(upper + extra, 1.0)],
         "blocks": b.blocks},
    )


def _delta_warnings(n: int, delta: float) -> list[str]:
    if delta >= 1.0 / n:
        return [f"delta = {delta:.3g} >= 1/n = {1.0 / n:.3g}: a mechanism that publishes one random user's data meets this delta"]
    return []


# ---------------------------------------------------------------------------------------
# comparisons across methods (what the CLI prints)
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Comparison:
    """Several methods answering the same question, with the gap between the best
    generic upper bound and the generic lower bound."""

    quantity: str
    bounds: tuple[Bound, ...]
    best_upper: Bound | None
    best_lower: Bound | None
    warnings: tuple[str, ...]

    @property
    def gap_ratio(self) -> float | None:
        if self.best_upper is None or self.best_lower is None or not self.best_lower.value:
            return None
        return self.best_upper.value / self.best_lower.value  # type: ignore[operator]

    def to_dict(self) -> dict:
        return {
            "quantity": self.quantity,
            "results": [b.to_dict() for b in self.bounds],
            "best_upper": self.best_upper.method if self.best_upper else None,
            "best_lower": self.best_lower.method if self.best_lower else None,
            "gap_ratio": self.gap_ratio,
            "warnings": list(self.warnings),
        }


def _compare(quantity: str, bounds: Sequence[Bound]) -> Comparison:
    generic = [b for b in bounds if b.value is not None and METHODS[b.method].generic]
    uppers = [b for b in generic if b.kind == "upper"]
    lowers = [b for b in generic if b.kind == "lower"]
    best_upper = min(uppers, key=lambda b: b.value) if uppers else None  # type: ignore[arg-type, return-value]
    best_lower = max(lowers, key=lambda b: b.value) if lowers else None  # type: ignore[arg-type, return-value]
    warnings: list[str] = []
    for b in bounds:
        for w in b.warnings:
            if w not in warnings:
                warnings.append(w)
    return Comparison(quantity, tuple(bounds), best_upper, best_lower, tuple(warnings))


def _method_list(methods: Iterable[str] | None, k: int | None) -> list[str]:
    if methods:
        names = list(dict.fromkeys(methods))
        for name in names:
            get_method(name)
        return names
    names = list(DEFAULT_METHODS)
    if k is not None:
        names[2:2] = ["krr", "krr-lower"]
    return names


def compare_epsilon(
    eps0: float,
    n: int,
    delta: float = 1e-6,
    methods: Iterable[str] | None = None,
    k: int | None = None,
    delta0: float = 0.0,
    rtol: float = 1e-6,
) -> Comparison:
    """:func:`epsilon` for several methods (default: clones, stronger-clones, closed-form,
    binary-rr-lower, plus krr/krr-lower when ``k`` is given)."""
    return _compare("epsilon", [epsilon(eps0, n, delta, m, k, delta0, rtol) for m in _method_list(methods, k)])


def compare_delta(
    eps0: float,
    n: int,
    eps: float,
    methods: Iterable[str] | None = None,
    k: int | None = None,
    delta0: float = 0.0,
    rtol: float = 1e-9,
) -> Comparison:
    """:func:`delta` for several methods."""
    return _compare("delta", [delta(eps0, n, eps, m, k, delta0, rtol) for m in _method_list(methods, k)])


def methods() -> tuple[Method, ...]:
    """Every analysis, with what it assumes and its citation."""
    return tuple(METHODS.values())
