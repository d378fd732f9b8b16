"""The accuracy side of amplification: frequency estimation with a shuffled local randomizer.

``n`` users hold ``x_i`` in ``[k]``; each sends ``Y_i = R(x_i)`` through the shuffler; the analyst
estimates the frequencies ``f_v = #{i : x_i = v} / n``. Every estimator here is *linear and
unbiased*: ``f̂_v = (1/n) sum_i a_v(Y_i)`` with ``E[a_v(R(x))] = 1[x = v]`` for every input ``x``,
so (the reports are independent given the dataset)

    Var(f̂_v) = (1/n^2) sum_x c_x s2(x, v),    s2(x, v) = Var(a_v(R(x))),
    E||f̂ - f||_2^2 = (1/n^2) sum_x c_x sum_v s2(x, v),

exactly (``c_x`` the counts). Shuffling does not change the estimator (it only uses the multiset
of reports), so this is the error of the protocol whose central privacy :mod:`.api` bounds.

Estimators
----------
*Support estimators* (Wang, Blocki, Li, Jha, "Locally Differentially Private Protocols for
Frequency Estimation", USENIX Security 2017, Section 3 "pure" protocols): a report ``y`` supports a
set ``S(y)`` of values, ``P[v in S(R(x))] = p*`` if ``x = v`` and ``q*`` otherwise, and
``a_v(y) = (1[v in S(y)] - q*) / (p* - q*)``. Then ``s2 = p*(1-p*)/(p*-q*)^2`` for the own value and
``q*(1-q*)/(p*-q*)^2`` for every other one, and (Wang et al. Theorem 2, exact here)

    Var(f̂_v) = (f_v p*(1-p*) + (1-f_v) q*(1-q*)) / (n (p*-q*)^2),
    E||f̂ - f||_2^2 = (p*(1-p*) + (k-1) q*(1-q*)) / (n (p*-q*)^2)     (the same for every dataset).

``(p*, q*)``, with ``e = e^eps0`` (the randomizers of :mod:`.randomizers`; every ``p* - q*`` carries
the factor ``e - 1``, computed with ``expm1``):

- k-RR (Kairouz, Oh, Viswanath, NeurIPS 2014): ``S(y) = {y}``, ``p* = e/(e+k-1)``, ``q* = 1/(e+k-1)``.
- SUE / OUE (Wang et al. 2017 §4.3-4.4): ``S(y) = {v : y_v = 1}``, the bit probabilities ``(p, q)``.
- OLH, idealised hash family (Wang et al. 2017 §4.4): ``S(H, y) = {v : H(v) = y}``,
  ``p* = e/(e+g-1)``, ``q* = 1/g`` (``H(v)`` is uniform and independent of ``H(x)``).
- Hadamard response (Acharya, Sun, Zhang, AISTATS 2019, arXiv 1802.04705, §3): ``S(y) = {v : y in
  C_v}``, ``p* = e/(e+1)``, ``q* = 1/2`` (two distinct rows of the Sylvester matrix agree on half
  the columns).
- d-subset selection (Ye, Barg, IEEE T-IT 2018; Wang et al., arXiv 1607.08025): ``S(Z) = Z``,
  ``p* = d e/(d e + k - d)``, ``q* = d((d-1) e + k - d) / ((k-1)(d e + k - d))``.

*A matrix randomizer* ``M`` (rows = inputs, columns = outputs): the least-squares inverse
``a = A[:, y]``, ``A = (M M^T)^{-1} M`` (unbiased: ``A M^T = I``), defined when ``M`` has full row
rank; ``s2(x, v) = sum_y M[x,y] A[v,y]^2 - 1[x = v]``. (It is the unique unbiased linear estimator
when ``M`` is square; otherwise it is unbiased but not always of least variance.) For the named
randomizers built as matrices it reproduces the closed forms (tested).

The l_inf bound
---------------
``n f̂_v - c_v = sum_i (a_v(Y_i) - E a_v(Y_i))``: independent terms with variance at most
``s2max_v = max_x s2(x, v)`` and ``|a_v(Y) - E a_v(Y)| <= b_v``, values in an interval of width
``r_v``. Bernstein's inequality (e.g. Boucheron, Lugosi, Massart, "Concentration Inequalities",
2013, Theorem 2.10 / Corollary 2.11) gives ``P[|n f̂_v - c_v| >= s] <= 2 exp(-s^2 / (2(V + b s/3)))``
with ``V = n s2max_v``, and Hoeffding's ``<= 2 exp(-2 s^2 / (n r_v^2))``. With ``L = ln(2k/beta)``
each bin fails with probability at most ``beta/k`` at

    s_v = min( b L/3 + sqrt((b L/3)^2 + 2 V L),  r sqrt(n L / 2) ),

and a union bound over the ``k`` bins gives ``P[max_v |f̂_v - f_v| > max_v s_v / n] <= beta`` for
*every* dataset (the variance is taken at its worst over datasets). The value is rounded up.

Frequency estimation theorem of Feldman, McMillan, Talwar (FOCS 2021, arXiv 2012.12803, §5.1,
Theorem 5.2): the displayed error bound and the eps0 it sets were lost from the copy of the paper
this project works from, and could not be recovered from the stored public pages; it is shown as
a statement (asymptotic, with no constant) and not evaluated (:data:`FMT21_STATEMENT`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import api
from .errors import CertificationError, InvalidParameter
from .numeric.search import NoBracket, monotone_boundary
from .randomizers import (
    KRR,
    MAX_EPS0,
    OLH,
    Hadamard,
    MatrixRandomizer,
    RandomizerFamily,
    Randomizer,
    Subset,
    _UnaryEncoding,
)
from .results import Bound
from .validation import MAX_N, IntRange, RealRange

#: ``beta``: the l_inf bound holds with probability at least ``1 - beta``.
BETA = RealRange("beta", 0.0, 1.0, low_open=True, high_open=True)
#: a target l_inf error of the frequencies (fractions of n).
TARGET_ERROR = RealRange("target-error", 0.0, 1.0, low_open=True, high_open=True)
#: the upper-bound analyses "best" takes the least of, in the order a search tries them
#: (cheapest first; the first one that certifies decides a point)
BEST_ORDER: tuple[str, ...] = ("stronger-clones", "clones", "krr", "blanket")
#: choices of the privacy analysis
METHOD_CHOICES: tuple[str, ...] = ("best", "blanket", "stronger-clones", "clones", "krr")
#: relative rounding charged to closed forms (a few dozen roundings, with margin)
_REL = 1e-12
#: a matrix whose condition number exceeds this is treated as not invertible
MAX_CONDITION = 1e8
#: smallest eps0 the planning searches consider
MIN_EPS0 = 1e-6

CITE_SUPPORT = ("Wang, Blocki, Li, Jha, Locally Differentially Private Protocols for Frequency Estimation, "
                "USENIX Security 2017, Sec. 3 (pure protocols), Theorem 2")
CITE_LS = "least-squares unbiased inverse of the randomizer matrix (A = (M M^T)^-1 M)"
CITE_TAIL = ("Bernstein's and Hoeffding's inequalities (Boucheron, Lugosi, Massart, Concentration Inequalities, "
             "2013, Thm 2.8 and Cor. 2.11), worst-case variance over datasets, union bound over the k bins")
CITE_FMT21 = ("Feldman, McMillan, Talwar, Hiding Among the Clones, FOCS 2021, arXiv 2012.12803, Sec. 5.1, "
              "Theorem 5.2")
#: what could be recovered of FMT21 Theorem 5.2 (the displayed formulas are lost from our copy)
FMT21_STATEMENT = (
    "FMT21 Theorem 5.2 (Sec. 5.1) states that shuffling an asymptotically optimal eps0-LDP frequency protocol "
    "(Hadamard response [ASZ19], or [CKO20]; one message per user) gives an (eps, delta)-DP protocol whose error "
    "matches the optimal central error for distribution estimation up to a factor, plus an additive term "
    "comparable to the statistical error that single-message shuffle protocols need [GGKPV19]. Its displayed "
    "bound, that factor and the eps0 it sets are lost from our copy of the paper and could not be recovered: no "
    "number is computed from it. (A restatement with constants ignored, Canonne, differentialprivacy.org 2022: "
    "total-variation error alpha from n = O(k/alpha^2 + k sqrt(log(1/delta))/(alpha eps)) users.)"
)


# ---------------------------------------------------------------------------------------
# The estimator of a randomizer.
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Estimator:
    """A linear unbiased frequency estimator ``f̂_v = (1/n) sum_i a_v(Y_i)`` (module docstring),
    summarised by what the error needs, per bin ``v`` (arrays of length ``k``, or of length 1
    when every bin is alike):

    ``s2_own[v] = Var(a_v(R(v)))``, ``s2_other_max[v] = max_{x != v} Var(a_v(R(x)))``,
    ``s2_sum[x] = sum_v Var(a_v(R(x)))`` (for ``E||f̂ - f||^2``), ``dev[v]`` bounds
    ``|a_v(Y) - E a_v(Y)|``, ``width[v]`` the range of ``a_v``; ``rel_err`` bounds the relative
    floating-point error of each stored value.
    """

    kind: str  # "support" or "least-squares"
    k: int
    s2_own: np.ndarray
    s2_other_max: np.ndarray
    s2_sum: np.ndarray
    dev: np.ndarray
    width: np.ndarray
    rel_err: float
    citation: str
    support: tuple[float, float] | None = None  # (p*, q*) of a support estimator
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def s2_max(self) -> np.ndarray:
        """Per-bin worst per-user variance over the input."""
        return np.maximum(self.s2_own, self.s2_other_max)


def support_probabilities(r: Randomizer) -> tuple[float, float, float]:
    """``(p*, q*, p* - q*)`` of a named randomizer's support estimator (module docstring); the
    difference is computed without cancellation."""
    e, em1 = math.exp(r.eps0), math.expm1(r.eps0)
    if isinstance(r, KRR):
        w = e + r.k - 1.0
        return e / w, 1.0 / w, em1 / w
    if isinstance(r, _UnaryEncoding):
        p, q, _, _, diff = r.bit_probabilities()
        return p, q, diff
    if isinstance(r, OLH):
        g = float(r.g)  # type: ignore[arg-type]
        w = e + g - 1.0
        return e / w, 1.0 / g, (g - 1.0) * em1 / (g * w)
    if isinstance(r, Hadamard):
        return e / (e + 1.0), 0.5, em1 / (2.0 * (e + 1.0))
    if isinstance(r, Subset):
        k, d = float(r.k), float(r.d)  # type: ignore[arg-type]
        w = d * e + k - d
        return d * e / w, d * ((d - 1.0) * e + k - d) / ((k - 1.0) * w), d * (k - d) * em1 / ((k - 1.0) * w)
    raise InvalidParameter(f"no support estimator for {r.describe()}")


def _support_estimator(r: Randomizer) -> Estimator:
    p, q, diff = support_probabilities(r)
    if not diff > 0.0:
        raise CertificationError(f"{r.describe()}: p* - q* = {diff!r} underflows; eps0 is too small to estimate")
    own = p * (1.0 - p) / diff / diff
    other = q * (1.0 - q) / diff / diff
    if not (math.isfinite(own) and math.isfinite(other) and math.isfinite(own + (r.n_inputs - 1) * other)):
        raise CertificationError(f"{r.describe()}: the estimator's variance overflows double precision "
                                 f"(p* - q* = {diff:.3g}); eps0 is too small to estimate anything")
    k = r.n_inputs
    one = np.ones(1)
    return Estimator(
        "support", k, own * one, other * one, np.array([own + (k - 1) * other]),
        max(p, 1.0 - q) / diff * one, one / diff, _REL, CITE_SUPPORT, (p, q),
        {"p_star": p, "q_star": q},
    )


def _least_squares_estimator(r: Randomizer) -> Estimator:
    m = r.matrix()
    k, outputs = m.shape
    sv = np.linalg.svd(m, compute_uv=False)
    cond = float(sv[0] / sv[-1]) if sv[-1] > 0.0 else math.inf
    if len(sv) < k or not cond <= MAX_CONDITION:
        raise NoEstimator(
            f"{r.describe()}: the matrix does not have full row rank (condition number {cond:.3g} > "
            f"{MAX_CONDITION:g}): no unbiased linear estimator of all {k} frequencies exists"
        )
    a = np.linalg.solve(m @ m.T, m)  # k x outputs, A M^T = I
    # floating-point error of A relative to its size: cond^2 (normal equations) times the work
    rel = 64.0 * (outputs + k) * cond**2 * 2.0**-53
    mean = m @ a.T  # [x, v] = E a_v(R(x)), should be the identity
    bias = float(np.max(np.abs(mean - np.eye(k))))
    if not (rel <= 1e-6 and bias <= 1e-8):
        raise CertificationError(
            f"{r.describe()}: the least-squares inverse is too ill-conditioned to certify (condition number "
            f"{cond:.3g}, largest bias {bias:.2g})"
        )
    second = m @ (a * a).T  # [x, v] = E a_v(R(x))^2
    s2 = np.maximum(second - np.eye(k), 0.0)
    own = np.diag(s2).copy()
    off = s2 + np.diag(np.full(k, -np.inf))
    other = off.max(axis=0)
    dev = np.maximum(np.abs(a).max(axis=1), np.abs(a - 1.0).max(axis=1))
    width = a.max(axis=1) - a.min(axis=1)
    return Estimator("least-squares", k, own, other, s2.sum(axis=1), dev, width, rel + bias, CITE_LS,
                     None, {"condition_number": cond, "largest_bias": bias})


class NoEstimator(InvalidParameter):
    """No unbiased linear estimator exists (a matrix without full row rank): reported as
    ``not applicable`` rows by :func:`frequency_error`, refused (exit 2) by the inverse search."""


def estimator(r: Randomizer) -> Estimator:
    """The standard unbiased frequency estimator of ``r``: the support estimator of a named
    randomizer, the least-squares inverse of a matrix randomizer (module docstring).

    Raises :class:`InvalidParameter` for an unknown randomizer; a matrix without full row rank
    raises :class:`NoEstimator`."""
    if not isinstance(r, Randomizer):
        raise InvalidParameter(f"randomizer must be a shuffle_accountant.randomizers object, got {r!r}")
    if isinstance(r, MatrixRandomizer):
        return _least_squares_estimator(r)
    return _support_estimator(r)


# ---------------------------------------------------------------------------------------
# Errors.
# ---------------------------------------------------------------------------------------


def _check_n(n: object) -> int:
    return IntRange("n", 1, MAX_N).check(n)


def _tail_counts(n: int, k: int, beta: float, s2max: np.ndarray, dev: np.ndarray,
                 width: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-bin deviations (in count units) exceeded with probability <= beta/k each, by
    Bernstein and by Hoeffding (module docstring)."""
    log_term = math.log(2.0 * k) - math.log(beta)
    v = n * s2max
    lin = dev * log_term / 3.0
    bern = lin + np.sqrt(lin * lin + 2.0 * v * log_term)
    hoef = width * math.sqrt(n * log_term / 2.0)
    return bern, hoef


def linf_bound(est: Estimator, n: int, beta: float) -> tuple[float, str]:
    """An upper bound on ``max_v |f̂_v - f_v|`` holding with probability at least ``1 - beta``
    for every dataset of ``n`` users, and the inequality that gave it (module docstring)."""
    n = _check_n(n)
    beta = BETA.check(beta)
    bern, hoef = _tail_counts(n, est.k, beta, est.s2_max, est.dev, est.width)
    per_bin = np.minimum(bern, hoef)
    worst = float(per_bin.max()) if per_bin.size else 0.0
    which = "Bernstein" if float(bern.max()) <= float(hoef.max()) else "Hoeffding"
    value = worst / n * (1.0 + est.rel_err + 1e-12)
    return value, which


@dataclass(frozen=True)
class FrequencyError:
    """The error of the estimator at ``n`` users: each entry is a :class:`Bound` (frequency
    units, i.e. fractions of ``n``)."""

    estimator: str
    variance_empty_bin: Bound
    variance_worst_bin: Bound
    l2_squared: Bound
    l2: Bound
    linf: Bound

    def bounds(self) -> tuple[Bound, ...]:
        return (self.variance_empty_bin, self.variance_worst_bin, self.l2_squared, self.l2, self.linf)


def _na(quantity: str, why: str, inputs: dict[str, Any]) -> Bound:
    return Bound(quantity, None, "not applicable", "estimator", CITE_LS, inputs, why)


def frequency_error(r: Randomizer, n: int, beta: float = 0.05) -> FrequencyError:
    """Exact variance and l2 error, and a certified l_inf bound at ``1 - beta``, of the
    standard unbiased frequency estimator of ``r`` with ``n`` users (module docstring)."""
    n = _check_n(n)
    beta = BETA.check(beta)
    inputs = {"randomizer": r.describe(), "n": n, "beta": beta}
    try:
        est = estimator(r)
    except NoEstimator as exc:
        why = str(exc)
        return FrequencyError("none", *(_na(q, why, inputs) for q in (
            "variance (empty bin)", "variance (worst bin)", "E l2^2", "E l2", "l_inf")))
    return _error_from(est, n, beta, inputs)


def _error_from(est: Estimator, n: int, beta: float, inputs: dict[str, Any]) -> FrequencyError:
    name = f"{est.kind} estimator"
    cite = est.citation
    det = dict(est.details)
    if est.kind == "support":
        empty = float(est.s2_other_max[0]) / n
        worst = float(est.s2_max[0]) / n
        l2sq = float(est.s2_sum[0]) / n  # (1/n^2) * (n users) * (per-user sum over the bins)
        how_l2 = "the same for every dataset"
    else:
        empty = float(np.max(est.s2_other_max)) / n
        worst = float(np.max(est.s2_max)) / n
        l2sq = float(np.max(est.s2_sum)) / n
        how_l2 = "worst case over datasets: every user holding the worst input"
        det["worst_input"] = int(np.argmax(est.s2_sum)) + 1
    up = 1.0 + est.rel_err + 1e-12
    linf, which = linf_bound(est, n, beta)
    if not all(math.isfinite(x) for x in (empty, worst, l2sq, linf)):
        raise CertificationError(f"{inputs['randomizer']}: the error overflows double precision at n = {n}")
    return FrequencyError(
        name,
        Bound("variance (empty bin)", empty, "exact", name, cite, inputs,
              "Var(f̂_v) for a value no user holds (f_v = 0; worst over the other inputs for a matrix)", (), det),
        Bound("variance (worst bin)", worst, "exact", name, cite, inputs,
              "largest Var(f̂_v) over datasets (f_v = 0 or 1)", (), det),
        Bound("E l2^2", l2sq, "exact", name, cite, inputs, f"E||f̂ - f||_2^2, {how_l2}", (), det),
        Bound("E l2", math.sqrt(l2sq) * up, "upper", name, cite, inputs,
              "E||f̂ - f||_2 <= sqrt(E||f̂ - f||_2^2) (Jensen)", (), det),
        Bound("l_inf", linf, "upper", f"{which} + union bound", CITE_TAIL, inputs,
              f"max_v |f̂_v - f_v| <= this with probability >= 1 - beta = {1.0 - beta:g}, for every dataset", (),
              {**det, "tail_bound": which}),
    )


# ---------------------------------------------------------------------------------------
# Privacy (through the api) and the two planning searches.
# ---------------------------------------------------------------------------------------


def _methods(method: str, r: Randomizer) -> list[str]:
    if method not in METHOD_CHOICES:
        raise InvalidParameter(f"method: {method!r} is not one of {', '.join(METHOD_CHOICES)}")
    if method != "best":
        if method == "krr" and not isinstance(r, KRR):
            raise InvalidParameter(f"method 'krr' analyses k-ary randomized response only, not {r.describe()}")
        return [method]
    return [m for m in BEST_ORDER if m != "krr" or isinstance(r, KRR)]


def central_epsilon(r: Randomizer, n: int, delta: float, method: str = "best") -> Bound:
    """The central eps at ``delta`` of shuffling ``n`` reports of ``r``: ``api.epsilon`` of
    ``method``, or with ``"best"`` the least certified upper bound of the analyses that apply
    (blanket, stronger-clones, clones, and krr for k-RR). ``details["all"]`` has every value."""
    bounds = [api.epsilon(r.eps0, n, delta, m, randomizer=r) for m in _methods(method, r)]
    ok = [b for b in bounds if b.value is not None and b.kind == "upper"]
    if not ok:
        raise CertificationError("no analysis certified an epsilon: " + "; ".join(b.validity for b in bounds))
    best = min(ok, key=lambda b: b.value)  # type: ignore[arg-type, return-value]
    others = {b.method: b.value for b in bounds}
    return Bound(best.quantity, best.value, best.kind, best.method, best.citation, best.inputs, best.validity,
                 best.warnings, {**dict(best.details), "all": others})


def certify(r: Randomizer, n: int, eps: float, delta: float, method: str = "best") -> tuple[bool, Bound | None]:
    """Whether an analysis certifies ``(eps, delta)`` for ``n`` shuffled reports of ``r``
    (``api.delta <= delta``), trying the analyses cheapest first; returns the deciding bound
    (the certifying one, or the least delta when none certifies)."""
    least: Bound | None = None
    for m in _methods(method, r):
        b = api.delta(r.eps0, n, eps, m, randomizer=r)
        if b.value is None or b.kind != "upper":
            continue
        if b.value <= delta:
            return True, b
        if least is None or b.value < least.value:  # type: ignore[operator]
            least = b
    return False, least


def _max_eps0(factory: Callable[[float], Randomizer]) -> float:
    """The largest eps0 (up to :data:`MAX_EPS0`) the family accepts: OLH's default hash range
    ``g = round(e^eps0 + 1)`` must stay <= 1e9 (its validity is monotone in eps0)."""

    def valid(e0: float) -> bool:
        try:
            factory(e0)
        except InvalidParameter:
            return False
        return True

    if valid(MAX_EPS0):
        return MAX_EPS0
    lo, hi = MIN_EPS0, MAX_EPS0
    if not valid(lo):
        raise InvalidParameter(f"the randomizer accepts no eps0 in [{MIN_EPS0:g}, {MAX_EPS0:g}]")
    while hi - lo > 1e-9 * hi:
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if valid(mid) else (lo, mid)
    return lo


def _factory_check(factory: Callable[[float], Randomizer]) -> Randomizer:
    r = factory(1.0)
    if isinstance(r, MatrixRandomizer):
        raise InvalidParameter("a randomizer file has a fixed eps0: give --eps0 (or nothing), not a target --eps")
    return r


def largest_eps0(factory: Callable[[float], Randomizer], n: int, eps: float, delta: float,
                 method: str = "best", rtol: float = 1e-4) -> Bound:
    """The largest eps0 (to relative resolution ``rtol``) at which ``n`` shuffled reports of
    ``factory(eps0)`` are certified ``(eps, delta)``-DP, verified by the forward computation
    (kind ``lower``: the analysis admits at least this eps0, and did not certify
    ``eps0 (1 + rtol)``). The search runs :func:`monotone_boundary` first with the cheapest
    analysis, then (for ``"best"``) upward from its answer with every analysis."""
    n = _check_n(n)
    _factory_check(factory)
    rtol = RealRange("rtol", 1e-8, 1e-2).check(rtol)

    high = _max_eps0(factory)

    def ok_cheap(e0: float) -> bool:
        return certify(factory(e0), n, eps, delta, "stronger-clones")[0]

    def ok_all(e0: float) -> bool:
        return certify(factory(e0), n, eps, delta, method)[0]

    fail = f"no eps0 in [{MIN_EPS0:g}, {high:g}] is certified (eps={eps:g}, delta={delta:g}) at n={n}"
    start = min(max(eps, MIN_EPS0), high)
    try:
        if method == "best":
            try:
                first = monotone_boundary(ok_cheap, start, feasible_side="low", low=MIN_EPS0, high=high, rtol=rtol)
                start = first.feasible
                found = monotone_boundary(ok_all, start, feasible_side="low", low=start, high=high, rtol=rtol)
            except NoBracket:
                found = monotone_boundary(ok_all, start, feasible_side="low", low=MIN_EPS0, high=high, rtol=rtol)
        else:
            found = monotone_boundary(ok_all, start, feasible_side="low", low=MIN_EPS0, high=high, rtol=rtol)
    except NoBracket:
        raise NoBracket(fail) from None
    e0 = found.feasible
    r = factory(e0)
    feasible, b = certify(r, n, eps, delta, method)
    if not feasible or b is None:  # pragma: no cover - monotone_boundary returns evaluated feasible points
        raise CertificationError("the eps0 search's answer failed its forward re-check")
    details: dict[str, Any] = {"certified_delta": b.value, "certified_by": b.method, "rtol": rtol,
                               "randomizer": r.describe()}
    warnings: list[str] = []
    if found.infeasible is None:
        warnings.append(f"every eps0 up to the largest this randomizer family accepts ({high:g}) meets the target")
    else:
        _, nb = certify(factory(found.infeasible), n, eps, delta, method)
        details.update(next_eps0=found.infeasible, next_delta=nb.value if nb is not None else None)
    return Bound("eps0", e0, "lower", b.method, b.citation, {"n": n, "eps": eps, "delta": delta, "method": method},
                 "largest eps0 certified by the forward computation (the analysis admits at least this eps0)",
                 tuple(warnings), details)


def _smallest_eps0_for_error(factory: Callable[[float], Randomizer], n: int, beta: float,
                             target: float) -> float | None:
    """The least eps0 (to 1e-6 relative) whose l_inf bound at ``n`` is <= ``target``
    (verified), or ``None`` when even the largest eps0 misses it."""

    def ok(e0: float) -> bool:
        return linf_bound(estimator(factory(e0)), n, beta)[0] <= target

    high = _max_eps0(factory)
    try:
        return monotone_boundary(ok, min(1.0, high), feasible_side="high", low=MIN_EPS0, high=high,
                                 rtol=1e-6).feasible
    except NoBracket:
        return None


def smallest_n(factory: Callable[[float], Randomizer], target_error: float, eps: float, delta: float,
               beta: float = 0.05, method: str = "best", eps0: float | None = None) -> Bound:
    """The smallest number of users for which the l_inf bound at ``1 - beta`` is at most
    ``target_error`` *and* the shuffled protocol is certified ``(eps, delta)``-DP, verified by
    the forward computation (kind ``upper``: the optimum is at most this n).

    With ``eps0`` fixed, n must meet both (each is monotone in n). Otherwise eps0 is chosen per
    n: the least eps0 meeting the error target (the error falls with eps0, the privacy loss
    grows with it), so each n costs one privacy check. For a :class:`.randomizers.RandomizerFamily` whose
    defaults step with eps0 (``details["eps0_stepped_defaults"]``, e.g. subset's ``d``) the
    error is not monotone in eps0: the eps0 found meets the target but may not be the least,
    so ``n - 1`` (and fewer) may be feasible with another eps0 -- the answer is still an upper
    bound (measured: subset, k = 100, target 0.2, eps = 5: n = 293 while 242 is feasible). :func:`monotone_boundary` over the
    integers; the answer and the neighbour ``n - 1`` are both evaluated.
    """
    target_error = TARGET_ERROR.check(target_error)
    beta = BETA.check(beta)
    if eps0 is not None:
        fixed = factory(eps0)
        est_fixed = estimator(fixed)  # no estimator: raised here (the caller reports it)

        def plan(n_: int) -> tuple[bool, float | None, Bound | None, float]:
            err = linf_bound(est_fixed, n_, beta)[0]
            if err > target_error:
                return False, fixed.eps0, None, err
            ok, b = certify(fixed, n_, eps, delta, method)
            return ok, fixed.eps0, b, err
    else:
        _factory_check(factory)

        def plan(n_: int) -> tuple[bool, float | None, Bound | None, float]:
            e0 = _smallest_eps0_for_error(factory, n_, beta, target_error)
            if e0 is None:
                return False, None, None, math.inf
            r = factory(e0)
            ok, b = certify(r, n_, eps, delta, method)
            return ok, e0, b, linf_bound(estimator(r), n_, beta)[0]

    cache: dict[int, tuple[bool, float | None, Bound | None, float]] = {}

    def ok(x: float) -> bool:
        n_ = int(x)
        if n_ not in cache:
            cache[n_] = plan(n_)
        return cache[n_][0]

    try:
        found = monotone_boundary(ok, 1000.0, feasible_side="high", low=1.0, high=float(MAX_N), integer=True)
    except NoBracket:
        raise NoBracket(f"no n <= {MAX_N:g} meets l_inf error {target_error:g} (beta={beta:g}) together with "
                        f"(eps={eps:g}, delta={delta:g})") from None
    n_best = int(found.feasible)
    feasible, e0, b, err = plan(n_best)  # forward re-check, from scratch
    if not feasible or b is None or e0 is None:  # pragma: no cover - the search returns evaluated feasible points
        raise CertificationError("the n search's answer failed its forward re-check")
    details: dict[str, Any] = {"eps0": e0, "linf_error": err, "certified_delta": b.value, "certified_by": b.method,
                               "randomizer": factory(e0).describe(),
                               "eps0_stepped_defaults": list(getattr(factory, "stepped", ())) if eps0 is None else []}
    if n_best > 1:
        prev = cache.get(n_best - 1) or plan(n_best - 1)
        details.update(previous_n=n_best - 1, previous_eps0=prev[1], previous_linf_error=prev[3],
                       previous_delta=prev[2].value if prev[2] is not None else None)
    inputs: dict[str, Any] = {"target_error": target_error, "eps": eps, "delta": delta, "beta": beta,
                              "method": method}
    if eps0 is not None:
        inputs["eps0"] = eps0
    return Bound("n", n_best, "upper", b.method, f"{b.citation}; {CITE_TAIL}", inputs,
                 "smallest n whose l_inf bound and privacy were certified by the forward computation "
                 "(the optimum is at most this n)", (), details)


# ---------------------------------------------------------------------------------------
# Both sides together.
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FrequencyReport:
    """Privacy and accuracy of one shuffled frequency-estimation protocol."""

    randomizer: Randomizer
    n: int
    delta: float
    beta: float
    epsilon: Bound
    error: FrequencyError
    eps0_search: Bound | None = None
    comparator: str = FMT21_STATEMENT

    def bounds(self) -> tuple[Bound, ...]:
        head = (self.eps0_search,) if self.eps0_search is not None else ()
        return (*head, self.epsilon, *self.error.bounds())


def frequency(randomizer: Randomizer | None = None, n: int = 10_000, delta: float = 1e-6, beta: float = 0.05,
              method: str = "best", *, eps: float | None = None,
              factory: Callable[[float], Randomizer] | None = None, rtol: float = 1e-4) -> FrequencyReport:
    """Both sides of the trade-off for ``n`` users: the central eps at ``delta``
    (:func:`central_epsilon`) and the error of the standard unbiased estimator
    (:func:`frequency_error`).

    Give ``randomizer`` (its eps0 is used), or a target ``eps`` and a ``factory`` (eps0 ->
    randomizer): then the largest eps0 meeting ``(eps, delta)`` is found first
    (:func:`largest_eps0`) and used.

    >>> from shuffle_accountant.randomizers import KRR
    >>> rep = frequency(KRR(k=10, eps0=2.0), n=10_000, method="stronger-clones")
    >>> rep.error.linf.kind, rep.epsilon.kind
    ('upper', 'upper')
    """
    n = _check_n(n)
    beta = BETA.check(beta)
    search = None
    if eps is not None:
        if factory is None or randomizer is not None:
            raise InvalidParameter("a target eps needs a randomizer factory (eps0 -> randomizer) and no fixed randomizer")
        search = largest_eps0(factory, n, eps, delta, method, rtol)
        randomizer = factory(search.value)  # type: ignore[arg-type]
    if randomizer is None:
        raise InvalidParameter("give a randomizer, or a target eps with a randomizer factory")
    return FrequencyReport(randomizer, n, delta, beta, central_epsilon(randomizer, n, delta, method),
                           frequency_error(randomizer, n, beta), search)


def named_factory(name: str, **params: Any) -> RandomizerFamily:
    """The family ``eps0 -> make_randomizer(name, eps0, **params)`` for the searches
    (:class:`.randomizers.RandomizerFamily`; its ``stepped`` names the defaults that follow
    eps0 in steps, OLH's ``g`` and subset's ``d``: with them the l_inf bound is *not* monotone
    in eps0, +39 % measured for subset, k = 100, at d = 2 -> 1)."""
    return RandomizerFamily.named(name, **params)


__all__: Sequence[str] = (
    "Estimator", "FrequencyError", "NoEstimator", "FrequencyReport", "central_epsilon", "certify", "estimator", "frequency",
    "frequency_error", "largest_eps0", "linf_bound", "named_factory", "smallest_n", "support_probabilities",
)
