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

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

from . import closed_forms
from .analyses import DEFAULT_METHODS, Method, Query, all_methods, applies_to, get_method
from .comparators import Outcome
from .errors import InvalidParameter, NotApplicable
from .numeric.profile import UNDERFLOW_FLOOR, MaxProfile, PrivacyProfile
from .numeric.search import EpsilonBracket, epsilon_for_delta
from .results import Bound
from .validation import check_int, check_probability_open, check_real

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


# FMT21 Theorems 3.1 / 3.8 live in closed_forms.py; re-exported here for API users.
closed_form_regime = closed_forms.closed_form_regime
closed_form_epsilon = closed_forms.closed_form_epsilon
closed_form_delta = closed_forms.closed_form_delta
delta0_penalty = closed_forms.delta0_penalty


# ---------------------------------------------------------------------------------------
# single-method questions
# ---------------------------------------------------------------------------------------


def _inputs(eps0: float, n: int, k: int | None, delta0: float, randomizer: Any = None, **more: float) -> dict:
    d: dict[str, Any] = {"eps0": eps0, "n": n}
    if randomizer is not None:
        d["randomizer"] = randomizer.describe()
    if k is not None:
        d["k"] = k
    if delta0:
        d["delta0"] = delta0
    d.update(more)
    return d


def _not_applicable(m: Method, quantity: str, inputs: dict, why: str) -> Bound:
    return Bound(quantity, None, "not applicable", m.name, m.citation, inputs, why)


def _query(m: Method, eps0: float, n: int, k: int | None, delta0: float, randomizer: Any) -> Query:
    """Check that ``m`` has what it needs (k, a randomizer) and applies to the randomizer."""
    if randomizer is not None:
        from .randomizers import Randomizer, krr_alphabet, randomizer_at

        if not isinstance(randomizer, Randomizer):
            raise InvalidParameter(f"randomizer must be a shuffle_accountant.randomizers object, got {randomizer!r}")
        randomizer_at(randomizer, eps0)  # its eps0 must be the query's
        k = krr_alphabet(randomizer, k)
    if randomizer is not None and not applies_to(m, randomizer):
        raise NotApplicable(f"{m.name} analyses k-ary randomized response only, not {randomizer.describe()}")
    if m.needs_k and k is None:
        raise InvalidParameter(f"method {m.name!r} needs k (the alphabet size, an integer >= 2)")
    if m.needs_randomizer and randomizer is None:
        raise InvalidParameter(f"method {m.name!r} needs a randomizer (--randomizer NAME or --randomizer-file F)")
    return Query(eps0, n, k, delta0, randomizer)


def _prepare(m: Method, quantity: str, inputs: dict, eps0: float, n: int, k: int | None, delta0: float,
             randomizer: Any) -> tuple[Query, Any] | Bound:
    """The query and (for numerical methods) the privacy profile of ``m``, or the
    ``not applicable`` row when ``m`` does not answer for these inputs."""
    try:
        q = _query(m, eps0, n, k, delta0, randomizer)
        if bool(delta0) and m.kind == "upper" and not m.supports_delta0:
            raise NotApplicable(f"{m.name} assumes pure eps0-DP randomizers (delta0 = 0)")
        return q, (m.profile(q) if m.profile is not None else None)
    except NotApplicable as exc:
        return _not_applicable(m, quantity, inputs, str(exc))


def _outcome_bound(m: Method, quantity: str, out: Outcome, inputs: dict, warnings: list[str]) -> Bound:
    """A closed form's answer as a Bound (an ``upper`` bound of that analysis)."""
    if out.value is None:
        return _not_applicable(m, quantity, inputs, out.reason)
    details = dict(out.details or {})
    note = details.pop("note", None)
    return Bound(quantity, out.value, "upper", m.name, m.citation, inputs, note or m.assumes, tuple(warnings), details)


def _epsilon_bracket(profile: PrivacyProfile, delta: float, rtol: float,
                     extra: Callable[[float], float] | None) -> EpsilonBracket:
    """:func:`.search.epsilon_for_delta`, with a :class:`.profile.MaxProfile` searched part by
    part: ``max_i delta_i(eps) + extra(eps) <= delta`` holds exactly when it holds for every
    part, so the feasible set is the intersection of the parts' and its left end is the
    largest of theirs; the bracket ``[max lower_i, max upper_i]`` contains it and is no wider
    (relative) than the widest part's. One search per part evaluates each part only where it
    decides (a search on the max evaluates every part at every step)."""
    if not isinstance(profile, MaxProfile):
        return epsilon_for_delta(profile, delta, rtol, extra)
    parts = [_epsilon_bracket(part, delta, rtol, extra) for part in profile.parts]
    return EpsilonBracket(delta, max(b.lower for b in parts), max(b.upper for b in parts),
                          sum(b.evaluations for b in parts))


def epsilon(
    eps0: float,
    n: int,
    delta: float = 1e-6,
    method: str = "clones",
    k: int | None = None,
    delta0: float = 0.0,
    rtol: float = 1e-6,
    randomizer: Any = None,
) -> Bound:
    """The central eps at ``delta`` of shuffling ``n`` reports of an ``eps0``-DP local
    randomizer, by ``method`` (see :func:`~shuffle_accountant.analyses.all_methods`).

    Numerical methods return the end of a certified bracket ``[lower, upper]`` on their
    analysis' exact eps (``details``): ``upper`` for upper-bound methods, ``lower`` for
    lower-bound methods; ``rtol`` is the bracket's target relative width. ``randomizer``
    (a :mod:`shuffle_accountant.randomizers` object) is what mechanism-aware methods
    analyse.
    """
    eps0, n, k, delta0 = _common(eps0, n, k, delta0)
    delta = check_probability_open("delta", delta)
    rtol = _rtol(rtol)
    m = get_method(method)
    inputs = _inputs(eps0, n, k, delta0, randomizer, delta=delta)
    prepared = _prepare(m, "epsilon", inputs, eps0, n, k, delta0, randomizer)
    if isinstance(prepared, Bound):
        return prepared
    q, profile = prepared
    warnings = _delta_warnings(n, delta)
    if profile is None:
        assert m.closed_epsilon is not None
        return _outcome_bound(m, "epsilon", m.closed_epsilon(q, delta, rtol), inputs, warnings)
    extra = delta0_penalty(eps0, n, delta0) if (delta0 and m.kind == "upper") else None
    br = _epsilon_bracket(profile, delta, rtol, extra)
    value_lo, value_hi, evaluations = br.lower, br.upper, br.evaluations
    width = (value_hi - value_lo) / value_hi if value_hi > 0 else 0.0
    if width > rtol:
        warnings.append(
            f"{m.name}: bracket relative width {width:.2g} exceeds rtol {rtol:g}: floating point limits the resolution here"
        )
    value = value_hi if m.kind == "upper" else value_lo
    if m.kind == "upper" and value > eps0:
        # every method here analyses eps0-DP randomizers, and shuffling is post-processing, so the
        # randomizer's eps0 is always a valid bound (this only trims ulp-level rounding): the stated
        # eps0, or a matrix randomizer's computed eps0 rounded up (its float eps0 may lie below the
        # exact one, and a caller's eps0 may differ from it by 1e-12 relative: review rev94m)
        cap = eps0
        if randomizer is not None:
            from .randomizers import randomizer_at

            cap = max(eps0, randomizer_at(randomizer, eps0).eps0_upper)
        value = min(value, cap)
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


def delta(
    eps0: float,
    n: int,
    eps: float,
    method: str = "clones",
    k: int | None = None,
    delta0: float = 0.0,
    rtol: float = 1e-9,
    randomizer: Any = None,
) -> Bound:
    """The delta at which shuffling is ``(eps, delta)``-DP by ``method``: a certified upper
    bound (lower for lower-bound methods); ``details`` holds the certified bracket."""
    eps0, n, k, delta0 = _common(eps0, n, k, delta0)
    eps = check_real("eps", eps, low=0.0)
    rtol = _rtol(rtol)
    m = get_method(method)
    inputs = _inputs(eps0, n, k, delta0, randomizer, eps=eps)
    prepared = _prepare(m, "delta", inputs, eps0, n, k, delta0, randomizer)
    if isinstance(prepared, Bound):
        return prepared
    q, profile = prepared
    if profile is None:
        assert m.closed_delta is not None
        out = m.closed_delta(q, eps)
        return _outcome_bound(m, "delta", out, inputs, _delta_warnings(n, out.value) if out.value else [])
    extra = delta0_penalty(eps0, n, delta0)(eps) if (delta0 and m.kind == "upper") else 0.0
    warnings: list[str] = []
    b = profile.bounds(eps, rtol)
    lower, upper = b.lower, b.upper
    if not b.converged:
        warnings.append(f"{m.name}: floating point limits the bracket to relative width "
                        f"{(b.upper - b.lower) / max(b.lower, 1e-300):.2g}")
    value = min(upper + extra, 1.0) if m.kind == "upper" else lower
    if m.kind == "upper" and 0.0 < value <= TINY_DELTA * (1.0 + 1e-12):
        value = TINY_DELTA
        warnings.append(f"{m.name}: delta is below 1e-300; reported as the upper bound 1e-300")
    if m.kind == "upper" and value >= 1.0:
        warnings.append(f"{m.name}: the certified upper bound on delta is 1 at this eps: no guarantee from this analysis")
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


def _compare(quantity: str, bounds: Sequence[Bound], randomizer: Any = None) -> Comparison:
    """Best upper and lower bound among the rows: without a randomizer, the generic ones
    (valid for every eps0-DP randomizer); with one, every upper bound that applies to it and
    the lower bounds attained by *that* randomizer (a generic floor such as binary RR's is
    not a lower bound for another randomizer)."""
    rows = [b for b in bounds if b.value is not None]
    if randomizer is None:
        rows = [b for b in rows if get_method(b.method).generic]
        uppers = [b for b in rows if b.kind == "upper"]
        lowers = [b for b in rows if b.kind == "lower"]
    else:
        uppers = [b for b in rows if b.kind == "upper"]
        lowers = [b for b in rows if b.kind == "lower" and not get_method(b.method).generic]
    best_upper = min(uppers, key=lambda b: b.value) if uppers else None  # type: ignore[arg-type, return-value]
    best_lower = max(lowers, key=lambda b: b.value) if lowers else None  # type: ignore[arg-type, return-value]
    warnings: list[str] = []
    for b in bounds:
        for w in b.warnings:
            if w not in warnings:
                warnings.append(w)
    return Comparison(quantity, tuple(bounds), best_upper, best_lower, tuple(warnings))


#: Methods shown with a randomizer when none are requested (k-RR adds krr and krr-lower).
RANDOMIZER_METHODS: tuple[str, ...] = ("blanket", "dataset-lower", "stronger-clones", "clones")


def _method_list(methods: Iterable[str] | None, k: int | None, randomizer: Any = None) -> list[str]:
    if methods:
        names = list(dict.fromkeys(methods))
        for name in names:
            get_method(name)
        return names
    if randomizer is not None:
        names = list(RANDOMIZER_METHODS)
        if any(applies_to(get_method(m), randomizer) for m in ("krr",)):
            names += ["krr", "krr-lower"]
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
    randomizer: Any = None,
) -> Comparison:
    """:func:`epsilon` for several methods (default: clones, stronger-clones, closed-form,
    the generic attained floor, plus krr/krr-lower when ``k`` is given; with a
    ``randomizer``: blanket, dataset-lower, stronger-clones, clones, plus krr/krr-lower
    for k-RR)."""
    names = _method_list(methods, k, randomizer)
    return _compare("epsilon", [epsilon(eps0, n, delta, m, k, delta0, rtol, randomizer) for m in names], randomizer)


def compare_delta(
    eps0: float,
    n: int,
    eps: float,
    methods: Iterable[str] | None = None,
    k: int | None = None,
    delta0: float = 0.0,
    rtol: float = 1e-9,
    randomizer: Any = None,
) -> Comparison:
    """:func:`delta` for several methods."""
    names = _method_list(methods, k, randomizer)
    return _compare("delta", [delta(eps0, n, eps, m, k, delta0, rtol, randomizer) for m in names], randomizer)


def methods() -> tuple[Method, ...]:
    """Every analysis, with what it assumes and its citation."""
    return tuple(all_methods().values())
