"""Published comparators: looser amplification bounds users ask about.

These are *published* upper bounds of older, looser analyses, offered next to the tight
clone-pair numbers so users can see how much the newer analyses buy. Spec:
``docs/math/amplification.md`` §3 (formulas) and §4 (reference points).

* **Erlingsson et al., SODA 2019** (arXiv 1811.12469): for ``eps0 <= 1/2`` the shuffled
  output is ``(eps, delta)``-DP with ``eps = 12 eps0 sqrt(log(1/delta) / n)``; the
  constants hold for ``n >= 1000`` and ``delta <= 1/100`` and the result is only useful
  when ``eps <= eps0``. Outside that regime we report "not applicable".
* **The privacy blanket, Balle, Bell, Gascón, Nissim, CRYPTO 2019** (arXiv 1903.02837),
  Section 5: each randomizer's output is decomposed as ``gamma * (blanket) + (1 - gamma)
  * (input-dependent part)``; delta is bounded by ``1/(gamma n)`` times the expectation
  of the positive part of the sum of the "privacy amplification random variables" of the
  ``M ~ Bin(n, gamma)`` users that fall into the blanket, which is then bounded with
  Hoeffding's or Bennett's inequality. The bound needs, per randomizer class, the blanket
  mass ``gamma`` and the range ``b``, maximum ``b+`` and variance ``c`` of that random
  variable; we use the generic values valid for every ``eps0``-DP randomizer, and the
  exact values for k-ary randomized response and for the Laplace mechanism on ``[0, 1]``
  as given in the paper and its public code (``BorjaBalle/amplification-by-shuffling``).
  Both bounds are explicit ``delta(eps)`` formulas; ``eps(delta)`` is found by a
  bisection that returns the end of its bracket at which ``delta(eps) <= delta`` was
  verified, so the reported eps is always a valid guarantee of the published bound.

The Bennett bound's expectation over ``M ~ Bin(n, gamma)`` (``M >= 1``) of
``exp(-M x)`` is evaluated in closed form, ``(1 - gamma + gamma e^{-x})^n - (1-gamma)^n``,
instead of the reference code's truncated numerical sum (the two agree to ~1e-10).
All evaluations run in log space (so nothing underflows at n = 1e9) and carry a relative
slack of :data:`SLACK` toward the pessimistic side for floating-point error.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from .numeric.search import monotone_boundary

#: Relative floating-point slack added to every delta (pessimistic direction).
SLACK = 1e-10
#: Smallest delta reported (an upper bound for anything smaller).
TINY = 1e-300

ERLINGSSON19 = (
    "Erlingsson, Feldman, Mironov, Raghunathan, Talwar, Thakurta, SODA 2019 (arXiv 1811.12469): "
    "eps = 12 eps0 sqrt(log(1/delta)/n) for eps0 <= 1/2, n >= 1000, delta <= 1/100"
)
BLANKET19 = "Balle, Bell, Gascón, Nissim, CRYPTO 2019 (arXiv 1903.02837), Section 5 privacy-blanket bound"

#: Randomizer classes of the blanket bounds.
RANDOMIZERS = ("generic", "krr", "laplace")


@dataclass(frozen=True)
class BlanketParams:
    """What the blanket bounds need to know about a randomizer at a target ``eps``.

    ``gamma``: blanket mass (a lower bound on it for the generic class), ``gamma_hi``: an
    upper bound on it, ``b_range``: range of the amplification random variable,
    ``b_max``: its maximum, ``var``: a bound on its variance.
    """

    gamma: float
    gamma_hi: float
    b_range: float
    b_max: float
    var: float


def blanket_params(randomizer: str, eps0: float, eps: float, k: int | None = None) -> BlanketParams:
    """Blanket parameters of a randomizer class (Balle et al. 2019, Section 5 and its
    specialisations to k-RR and to the Laplace mechanism on ``[0, 1]``).

    * generic ``eps0``-DP randomizer: ``gamma >= e^{-eps0}``;
    * k-ary randomized response: ``gamma = k / (e^{eps0} + k - 1)``;
    * Laplace mechanism with inputs in ``[0, 1]`` and scale ``1/eps0``: ``gamma = e^{-eps0/2}``.
    """
    e0 = math.exp(eps0)
    ee = math.exp(eps)
    if randomizer == "generic":
        g_lo, g_hi = 1.0 / e0, 1.0
        b_max = g_hi * e0 * -math.expm1(eps - 2.0 * eps0)
        b_range = g_hi * (ee + 1.0) * (e0 - 1.0 / e0)
        var = g_hi * (e0 * (ee * ee + 1.0) - 2.0 * g_lo * math.exp(eps - 2.0 * eps0))
        return BlanketParams(g_lo, g_hi, b_range, b_max, var)
    if randomizer == "laplace":
        g = math.exp(-eps0 / 2.0)
        b_max = math.exp(eps0 / 2.0) * -math.expm1(eps - eps0)
        b_range = (ee + 1.0) * 2.0 * math.sinh(eps0 / 2.0)
        var = (ee * ee + 1.0) / 3.0 * (2.0 * math.exp(eps0 / 2.0) + 1.0 / e0) - 2.0 * ee * (2.0 * g - 1.0 / e0)
        return BlanketParams(g, g, b_range, b_max, var)
    if randomizer == "krr":
        if k is None or k < 2:
            raise ValueError("the k-RR blanket bound needs an alphabet size k >= 2")
        g = k / (e0 + k - 1.0)
        b_max = g * -math.expm1(eps) + (1.0 - g) * k
        b_range = (1.0 - g) * k * (ee + 1.0)
        var = g * (2.0 - g) * math.expm1(eps) ** 2 + (1.0 - g) ** 2 * k * (ee * ee + 1.0)
        return BlanketParams(g, g, b_range, b_max, var)
    raise ValueError(f"unknown randomizer class {randomizer!r}; choose from {', '.join(RANDOMIZERS)}")


def _log1m(x: float) -> float:
    """``log(1 - x)`` for ``x`` in ``[0, 1]``."""
    return math.log1p(-x) if x < 1.0 else -math.inf


def _bennett_phi(u: float) -> float:
    """Bennett's function ``(1+u) log(1+u) - u`` for ``u >= 0``, accurate near 0 (and
    never rounded up: a smaller phi gives a larger, i.e. pessimistic, delta)."""
    if u < 1e-4:
        return u * u * (0.5 - u / 6.0 + u * u / 12.0) * (1.0 - 1e-12)
    return ((1.0 + u) * math.log1p(u) - u) * (1.0 - 1e-14)


def log_delta_hoeffding(randomizer: str, eps0: float, n: int, eps: float, k: int | None = None) -> float:
    """``log delta`` of the blanket bound with Hoeffding's inequality (Balle et al. 2019,
    Section 5, Hoeffding variant):

    ``delta = 1/(gamma n) * b^2/(4a) * (1 - gamma (1 - exp(-2 a^2 / b^2)))^n``,
    with ``a = e^eps - 1`` and ``b`` the range of the amplification variable.
    ``-inf`` (delta = 0) once ``eps >= eps0``: the shuffled output is ``eps0``-DP.
    """
    if eps >= eps0:
        return -math.inf
    if eps <= 0.0:
        return math.inf
    p = blanket_params(randomizer, eps0, eps, k)
    a = math.expm1(eps)
    b = p.b_range
    inner = p.gamma * -math.expm1(-2.0 * a * a / (b * b))
    return math.log(b * b / (4.0 * a)) - math.log(p.gamma * n) + n * _log1m(inner)


def log_delta_bennett(randomizer: str, eps0: float, n: int, eps: float, k: int | None = None) -> float:
    """``log delta`` of the blanket bound with Bennett's inequality (Balle et al. 2019,
    Section 5, Bennett variant):

    ``delta = 1/(gamma n) * b+ / log(1 + beta) * E_{M ~ Bin(n, gamma)}[1{M >= 1} e^{-M alpha phi(beta)}]``
    with ``alpha = c / b+^2``, ``beta = a b+ / c``, ``phi(u) = (1+u) log(1+u) - u``,
    ``a = e^eps - 1``, ``b+`` the maximum and ``c`` the variance bound of the amplification
    variable. The expectation is ``(1 - gamma + gamma e^{-x})^n - (1 - gamma)^n``.
    """
    if eps >= eps0:
        return -math.inf
    if eps <= 0.0:
        return math.inf
    p = blanket_params(randomizer, eps0, eps, k)
    if p.b_max <= 0.0:  # the amplification variable is never positive: delta = 0
        return -math.inf
    a = math.expm1(eps)
    alpha = p.var / (p.b_max * p.b_max)
    beta = a * p.b_max / p.var
    x = alpha * _bennett_phi(beta)
    g = p.gamma
    log_all = n * _log1m(g * -math.expm1(-x))  # log E[e^{-M x}] over all M >= 0
    log_zero = n * _log1m(g)  # the M = 0 term, excluded
    if log_zero == -math.inf or log_zero < log_all - 40.0:
        log_e = log_all
    else:
        diff = log_zero - log_all  # <= 0
        log_e = log_all + (_log1m(math.exp(diff)) if diff < 0.0 else -math.inf)
    return log_e + math.log(p.b_max) - math.log(math.log1p(beta)) - math.log(g * n)


BOUNDS: dict[str, Callable[..., float]] = {"hoeffding": log_delta_hoeffding, "bennett": log_delta_bennett}


def blanket_delta(inequality: str, randomizer: str, eps0: float, n: int, eps: float, k: int | None = None) -> float:
    """The published blanket delta at ``eps`` (rounded up, capped at 1)."""
    log_d = BOUNDS[inequality](randomizer, eps0, n, eps, k)
    if log_d == -math.inf:
        return 0.0
    if log_d >= 0.0:
        return 1.0
    # below 1e-300 we report 1e-300 (still an upper bound) rather than an underflowed 0
    return min(1.0, max(math.exp(log_d) * (1.0 + SLACK), TINY))


@dataclass(frozen=True)
class Search:
    """Result of the eps search: ``upper`` satisfies the bound (verified), ``lower`` does
    not; ``value`` is ``upper`` (the pessimistic end). ``None`` when the bound never
    reaches ``delta`` below ``eps0``."""

    value: float | None
    lower: float
    upper: float
    evaluations: int


def blanket_epsilon(
    inequality: str,
    randomizer: str,
    eps0: float,
    n: int,
    delta: float,
    k: int | None = None,
    rtol: float = 1e-10,
) -> Search:
    """Smallest eps (up to ``rtol``) at which the published blanket bound gives ``delta``.

    :func:`.numeric.search.monotone_boundary` on ``(0, eps0)``: the returned value is an
    end at which ``delta(eps) <= delta`` was checked (with the pessimistic slack), so it is
    a valid guarantee even where ``delta(eps)`` is not monotone. Returns ``value=None`` when
    no ``eps < eps0`` satisfies the bound (the trivial guarantee is then ``eps0`` itself).
    """
    f = BOUNDS[inequality]
    log_target = math.log(delta)

    def ok(e: float) -> bool:
        return f(randomizer, eps0, n, e, k) + SLACK <= log_target

    top = eps0 * (1.0 - 1e-15)
    if not ok(top):
        return Search(None, 0.0, eps0, 1)
    found = monotone_boundary(ok, top, feasible_side="high", low=top * 1e-12, high=top, rtol=rtol)
    lower = 0.0 if found.infeasible is None else found.infeasible
    return Search(found.feasible, lower, found.feasible, found.evaluations + 1)


# ---------------------------------------------------------------------------------------
# Erlingsson et al. SODA 2019
# ---------------------------------------------------------------------------------------

ERLINGSSON_MAX_EPS0 = 0.5
ERLINGSSON_MIN_N = 1000
ERLINGSSON_MAX_DELTA = 0.01


def erlingsson_regime(eps0: float, n: int, delta: float | None = None) -> str | None:
    """``None`` inside the regime of Erlingsson et al.'s constants, else the reason."""
    if eps0 > ERLINGSSON_MAX_EPS0:
        return "Erlingsson et al. (SODA'19) holds only for eps0 <= 1/2"
    if n < ERLINGSSON_MIN_N:
        return "Erlingsson et al. (SODA'19) holds only for n >= 1000"
    if delta is not None and delta > ERLINGSSON_MAX_DELTA:
        return "Erlingsson et al. (SODA'19) holds only for delta <= 1/100"
    return None


def erlingsson_epsilon(eps0: float, n: int, delta: float) -> float:
    """``12 eps0 sqrt(log(1/delta) / n)`` rounded up (callers check the regime and that
    the result does not exceed ``eps0``)."""
    return 12.0 * eps0 * math.sqrt(-math.log(delta) / n) * (1.0 + 1e-14)


def erlingsson_delta(eps0: float, n: int, eps: float) -> float:
    """The inverse, ``exp(-n (eps / (12 eps0))^2)``, rounded up."""
    return min(1.0, math.exp(-n * (eps / (12.0 * eps0)) ** 2) * (1.0 + 1e-14))


# ---------------------------------------------------------------------------------------
# dispatch by method name (used by api.epsilon / api.delta)
# ---------------------------------------------------------------------------------------

#: Registry names of the comparators -> (inequality, randomizer class); Erlingsson is ``None``.
COMPARATOR_METHODS: dict[str, tuple[str, str] | None] = {"erlingsson": None}
for _rand in RANDOMIZERS:
    for _ineq in BOUNDS:
        COMPARATOR_METHODS[f"blanket-{_ineq}{'' if _rand == 'generic' else '-' + _rand}"] = (_ineq, _rand)


@dataclass(frozen=True)
class Outcome:
    """A comparator's answer: ``value`` (``None`` = not applicable, with ``reason``)."""

    value: float | None
    reason: str = ""
    details: dict | None = None


#: Below this eps0 the published formulas are evaluated to no useful precision (their
#: parameters cancel to 0 in double precision); such inputs are reported as not applicable.
MIN_COMPARATOR_EPS0 = 1e-6
_TINY_EPS0 = f"the published formulas are evaluated only for eps0 >= {MIN_COMPARATOR_EPS0:g} (they cancel to 0 below)"


def comparator_epsilon(name: str, eps0: float, n: int, delta: float, k: int | None = None,
                       rtol: float = 1e-10) -> Outcome:
    """eps at ``delta`` by the published comparator ``name`` (an upper bound of that analysis)."""
    if eps0 < MIN_COMPARATOR_EPS0:
        return Outcome(None, _TINY_EPS0)
    spec = COMPARATOR_METHODS[name]
    if spec is None:
        why = erlingsson_regime(eps0, n, delta)
        if why:
            return Outcome(None, why)
        eps = erlingsson_epsilon(eps0, n, delta)
        if eps > eps0:
            return Outcome(None, f"Erlingsson et al. give eps = {eps:.4g} > eps0 here: no amplification claimed")
        return Outcome(eps)
    ineq, rand = spec
    s = blanket_epsilon(ineq, rand, eps0, n, delta, k, min(rtol, 1e-10))
    if s.value is None:
        return Outcome(None, f"the blanket {ineq.capitalize()} bound does not reach this delta for any eps < eps0")
    return Outcome(s.value, details={"bracket": [s.lower, s.upper], "evaluations": s.evaluations})


def comparator_delta(name: str, eps0: float, n: int, eps: float, k: int | None = None) -> Outcome:
    """delta at ``eps`` by the published comparator ``name`` (an upper bound of that analysis)."""
    if eps0 < MIN_COMPARATOR_EPS0:
        return Outcome(None, _TINY_EPS0)
    spec = COMPARATOR_METHODS[name]
    if spec is None:
        why = erlingsson_regime(eps0, n)
        if why:
            return Outcome(None, why)
        if eps > eps0:
            return Outcome(None, "Erlingsson et al. claim nothing for eps > eps0")
        d = erlingsson_delta(eps0, n, eps)
        if d > ERLINGSSON_MAX_DELTA:
            return Outcome(None, "Erlingsson et al.'s constants hold only for delta <= 1/100")
        return Outcome(d)
    ineq, rand = spec
    if eps <= 0.0:
        return Outcome(None, "the blanket bounds need eps > 0")
    return Outcome(blanket_delta(ineq, rand, eps0, n, eps, k))
