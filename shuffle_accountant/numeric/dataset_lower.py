"""Attained lower bounds for shuffled finite randomizers other than k-RR (issue 10,
method ``dataset-lower``): the hockey-stick divergence of the shuffled outputs of concrete
neighbouring datasets, certified from below, the largest over a small family.

Spec: ``shared/spec/blanket.md`` §4. k-ary randomized response has its own, richer family in
:class:`~.blanket_krr.KrrDatasetLower`; this module serves unary encoding (SUE, OUE), optimized
local hashing, Hadamard response, subset selection and matrix randomizers
(:mod:`shuffle_accountant.randomizers`).

1. The identity every family here rests on (exact)
----------------------------------------------------
Let the first user hold ``x1`` (dataset ``D``) or ``x1'`` (dataset ``D'``) and let the other
``n - 1`` users' reports be i.i.d. with law ``mu`` (e.g. all of them hold one input ``x3``, then
``mu = R(x3)``). Write ``s = R(x1)``, ``s' = R(x1')`` and ``W_n`` for the law of the histogram
``h`` of ``n`` i.i.d. ``mu`` reports. Since ``W_{n-1}(h - e_y) = W_n(h) h_y / (n mu(y))``,

    P_D(h) = sum_y s(y) W_{n-1}(h - e_y) = W_n(h) (1/n) sum_y h_y s(y) / mu(y),

and likewise for ``D'`` (``mu(y) > 0`` wherever ``s(y) > 0``: pure LDP). Hence, for ``eps >= 0``,

    delta_{D||D'}(eps) = sum_h (P_D(h) - e^eps P_D'(h))_+
                      = (1/n) E[(sum_j c_j N_j)_+],   c_j = (s_j - e^eps s'_j) / mu_j,

where the outputs are grouped into *classes* ``j`` on which ``s/mu`` and ``s'/mu`` are constant
and ``(N_j) ~ Multinomial(n; mu_j)`` counts the reports per class (all ``n`` reports, drawn
from ``mu``). The other direction swaps ``s`` and ``s'``; we report the larger. This is the
form of the privacy-blanket bound (Balle, Bell, Gascón, Nissim, CRYPTO 2019, arXiv 1903.02837,
§3) with the blanket replaced by a real user's law, and the same identity applies verbatim
to any *post-processing* that maps every report to a coarser class (the projected reports are
still independent, the others' still i.i.d.): the coarse classes give a value that is a lower
bound on the dataset's exact divergence (data processing), and equal to it when the coarse
classes still carry constant ratios ``s/mu``, ``s'/mu`` (then they are sufficient).

2. The families
---------------
For the named randomizers an output ``y`` *hits* an input ``x`` when ``R(x)(y)`` takes the high
value (unary encoding: bit ``x`` is 1; local hashing ``(H, v)``: ``H(x) = v``; Hadamard: ``y`` in
``C_x``; subset selection: ``x`` in the subset), and ``R(x)(y) / R(x')(y) = e^{eps0 (hit_x -
hit_x')}``. Two datasets, both directions:

* **"all others hold x1"** (``mu = R(x1)``): ``s/mu = 1`` and ``s'/mu = e^{-eps0}, e^{eps0}, 1``
  on "hits x1 only", "hits x1' only", the rest. Three classes, *exact* (sufficient); their
  ``R(x1)``-masses in closed form (:func:`_hit_masses`; under ``R(x1')`` the first two swap), or,
  for any other randomizer, from its :class:`~shuffle_accountant.randomizers.PairStructure`
  (class ``j`` has ``R(x1)``-mass ``a_j p_j`` and ratio ``s'/s = b_j / a_j``). By the
  relabelling ``x1 <-> x1'`` (a symmetry of every named randomizer) "all others hold x1'" has the
  same value.
* **"all others hold a third value x3"**, projected on the reports' hit pattern at ``(x1, x1')``
  (a lower bound on that dataset's exact value: the exact value also sees, e.g., the bit at
  ``x3``, which the first user sets less often than the others). For unary encoding, local
  hashing (idealised family) and Hadamard response (``x3 + 1`` outside the span of ``x1 + 1``,
  ``x1' + 1``, possible for ``k >= 4``) the two hit indicators are independent under every
  user's law: the others' are ``Bern(q)`` each, the first user's ``Bern(p)`` at its own input
  and ``Bern(q)`` at the other, with ``(p, q)`` = ``(p, q)`` of the bits (SUE/OUE), ``(e^eps0 /
  (e^eps0 + g - 1), 1/g)`` (OLH) and ``(e^eps0 / (e^eps0 + 1), 1/2)`` (Hadamard). Then the ratio
  of a pattern ``(u, v)`` is ``alpha(u)`` under ``D`` and ``alpha(v)`` under ``D'`` with
  ``alpha(1) = p/q``, ``alpha(0) = (1-p)/(1-q)``, so the column counts ``C1, C2`` (i.i.d.
  ``Bin(n, q)`` under ``mu``) are sufficient for the patterns and

      delta = (1/n) E[((alpha(1) - alpha(0)) (C1 - e^eps C2) + alpha(0) n (1 - e^eps))_+]

  (symmetric in the directions). Subset selection, and Hadamard response with ``x3 + 1 = (x1 +
  1) xor (x1' + 1)`` (every ``k >= 3``; under ``x3`` the hits of ``x1`` and ``x1'`` coincide unless
  the report falls outside ``C_x3``): the three classes "hits x1 only", "hits x1' only", the rest,
  with hypergeometric / closed-form pattern laws.

  What the projection loses (measured, ``k = 10``, ``delta = 1e-6``): for Hadamard the
  ``xor`` dataset is within 0.01 % of the blanket bound in ``eps`` (``eps0 = 1``, ``n = 1e5``);
  for OUE, SUE and OLH the blanket is 1.11-1.13x this lower bound at ``eps0 = 0.5``,
  1.21-1.24x at ``eps0 = 1``, 1.30-1.36x at 2 and 1.27-1.44x at 4 (``n = 1e3 .. 1e6``, growing
  with ``n``; subset selection 1.22x at ``eps0 = 1``, ``n = 1e5``). Most of that is the
  projection: an ``x3`` holder sets the bit (hash hit, ...) of ``x3`` with probability ``p``,
  the first user with ``q``, so the exact value of the third-value dataset discounts the
  reports that hit ``x3``; a normal-approximation count of that information says about half of
  the gap at ``eps0 = 1`` (signal-to-noise 1.21 vs 1 for OUE). Its exact sufficient statistic
  is four binomial counts (hits of ``x1`` / ``x1'`` among reports that do / do not hit ``x3``)
  -- not evaluated here.
* **"all others hold a third value x3", the reports that hit x3 lumped** (:class:`LumpedThirdDataset`;
  the same randomizers as the independent-hits projection above): each report is mapped to
  "hits ``x3``" or to its hit pattern at ``(x1, x1')``, a post-processing that keeps the ``x3``
  information the projection drops and loses the hits of ``x1, x1'`` among the reports that hit
  ``x3``. Three counts (``m`` reports miss ``x3``; ``C1, C2`` of them hit ``x1, x1'``), so one
  evaluation sums ``(2 (12 sd + 40))^2`` closed forms, and it is offered only up to
  :data:`LUMPED_MAX_POINTS` of them (about ``n <= 300 .. 1000``). Neither dataset dominates: the
  profile takes the larger. Blanket ``eps`` over the attained one (``k = 10``, ``delta =
  1e-6``; before / with it): OUE and OLH ``eps0 = 4`` 1.23-1.39 / 1.01 (``n = 100 .. 1000``),
  ``eps0 = 2`` 1.29-1.31 / 1.08-1.11 (``n = 100 .. 300``); SUE ``eps0 = 4`` 1.27-1.59 / 1.16-1.30;
  ``eps0 <= 1`` unchanged (up to 1.196 -> 1.172), where it is skipped by its estimate
  (:data:`LUMPED_GATE`).
* **Matrix randomizers**: every ordered pair and every ``x3`` (including ``x1`` and ``x1'``),
  classes of equal ratios read from the matrix. Exact when there are at most three classes or
  when ``n`` is small enough to enumerate every count vector (:data:`ENUMERATE_MAX`); otherwise
  the classes are merged into "``s > s'``", "``s < s'``" and "``s = s'``" (a projection, so a
  lower bound). At most :data:`MAX_CANDIDATES` datasets are kept, the ones with the largest
  normal-approximation value at ``eps0 / 4`` (any choice is a valid lower bound).

3. Evaluation (certified)
-------------------------
Both kernels are ``(1/n) sum_i P(i) E[(alpha_i + beta B_i)_+]`` with ``i`` binomial (``N_A``, or
``C1``) over a window of ``mean +- 12 sd`` (the mass outside is computed and, times the largest
value ``max_j c_j`` of the integrand, added to the upper end only) and ``B_i`` binomial (``N_B``
given ``N_A``, i.e. ``Bin(n - i, mu_B / (mu_B + mu_C))``, or ``C2``), summed in closed form:
``E[(alpha - beta B)_+] = alpha F_m(t) - beta m pi F_{m-1}(t - 1)`` (``t = floor(alpha /
beta)``) when ``t`` lies below the mean of ``B`` and ``(alpha - beta m pi) + beta m pi S_{m-1}(t
- 1) - alpha S_m(t)`` above it, so the binomial tails that enter are the small ones. Error
accounting: the Boost budgets of :mod:`.binomial` on every pmf / cdf / sf value, a few ulps per
operation, a misplaced threshold ``t`` (a term of a few ulps of ``alpha``), the coefficients'
error (the integrand ``(sum_j c_j N_j)_+`` is non-decreasing in every ``c_j``, so the lower end is
evaluated at coefficients rounded down and the upper end at coefficients rounded up; ``alpha``
likewise), and the error ``eta`` of the class probabilities: every count vector's probability
is within ``(1 +- eta)^n`` of the exact one and the integrand is non-negative, so the exact value
lies in ``[value / (1 + eta)^n, value / (1 - eta)^n]``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from ..errors import InvalidParameter, NotApplicable
from ..randomizers import KRR, OLH, Hadamard, MatrixRandomizer, Randomizer, Subset, _UnaryEncoding
from . import binomial as bn
from .arrays import ragged
from .profile import DeltaBounds

_U = 2.0**-53
#: relative error charged to each closed-form class probability of this module: each is a
#: product / quotient of at most six correctly rounded operations on ``exp(eps0)`` or
#: ``expm1(eps0)`` (libm: below 1 ulp) and the integers ``k, d, g`` -- below 8 ulps; charged 32
_PROB_REL = 32 * _U
#: half-width of the outer window in standard deviations (plus :data:`_MIN_HALF` points)
_Z = 12.0
_MIN_HALF = 40
#: largest number of count vectors enumerated exactly (matrix randomizers, small n)
ENUMERATE_MAX = 200_000
#: largest n for the exact enumeration (factorials as doubles)
ENUMERATE_MAX_N = 170
#: at most this many datasets of a matrix randomizer are evaluated
MAX_CANDIDATES = 24
#: Largest estimated count of outer points (binomial tail pairs) one evaluation of all the datasets may take: each
#: three-class dataset sums over ``mean +- (12 sd + 40)`` of its outer count, about ``12 sqrt(n) + 80`` points at
#: worst; beyond, the method answers "not applicable" (measured: SUE k = 10 at n = 1e9, ~7.6e5 points, 19 s a query;
#: 1e10 94 s; a 3 x 3 matrix at n = 1e8, ~1.1e6 points, 22 s; at n = 1e12 none finished: review rev94m)
MAX_WINDOW_POINTS = 2_000_000
#: Largest number of ``(m, C1)`` points (closed forms, ~0.2 us each) one evaluation of a
#: :class:`LumpedThirdDataset` may take; beyond, only the projection is offered (OUE k = 10:
#: about n <= 400 at eps0 <= 1, n <= 1000 at eps0 = 4)
LUMPED_MAX_POINTS = 80_000
#: :class:`LumpedThirdDataset` is evaluated at an ``eps`` only where its normal-approximation
#: estimate is at least ``1 / LUMPED_GATE`` of its projection twin's (eps0 = 0.5: never better)
LUMPED_GATE = 2.0
#: evaluations remembered per profile
_MEMO = 64
#: ratios within this relative distance form one class (the spread is charged as error)
_GROUP_RTOL = 1e-12


def _inflate(rel: float, n: float) -> float:
    """``(1 + rel)^n - 1``, rounded up (``rel * n`` small or not)."""
    return math.expm1(n * math.log1p(rel)) * (1.0 + 1e-12) + 4 * _U


# ---------------------------------------------------------------------------------------
# The kernel: (1/n) sum_i P(i) E[(alpha_i + beta B_i)_+].
# ---------------------------------------------------------------------------------------


def _window(size: np.ndarray, pi: float) -> tuple[np.ndarray, np.ndarray]:
    """The outer windows ``mean +- (12 sd + 40)`` of ``Bin(size, pi)`` clipped to ``[0, size]``: their ends (floats)."""
    mean = size * pi
    half = _Z * np.sqrt(size * pi * max(1.0 - pi, 0.0)) + _MIN_HALF
    return np.maximum(np.floor(mean - half), 0.0), np.minimum(np.ceil(mean + half), size)


def _inner(alpha: np.ndarray, scale: np.ndarray, m: np.ndarray, beta: float, pi: float, pi_c: float,
           want: str) -> tuple[np.ndarray, np.ndarray]:
    """``E[(alpha + beta B)_+]`` for ``B ~ Bin(m, pi)`` elementwise (``pi_c = 1 - pi``,
    computed without cancellation), and an absolute error bound on the value returned.

    ``alpha`` was computed with an absolute error below ``2 ulps * scale``; the integrand is
    non-decreasing in ``alpha``, so ``alpha`` is first pushed 4 ulps of ``scale`` down
    (``want = "lower"``) or up, and likewise after the reflection ``alpha + beta m`` used when
    ``beta > 0``. The error bound then covers the Boost budgets of the tails (module docstring
    §3), the roundings of the closed forms, and a threshold ``t`` misplaced by the rounding of
    ``alpha / beta`` (the term moved is a few ulps of ``alpha`` times one pmf value, below
    ``16 ulps * alpha * F(t)``)."""
    sign = -1.0 if want == "lower" else 1.0
    alpha = alpha + sign * 4 * _U * scale
    # the tails of B ~ Bin(m, pi) go to Boost with the smaller of pi, pi_c only: Boost forms 1 - p from the p it is
    # given, which for p near 1 loses u / (1 - p) relative (review rev94m: pi_c = 1 - e^-35 after the reflection below
    # gave 5.6 % and an attained delta above 1); for p > 1/2, P[B <= x] = P[Bin(m, pi_c) >= m - x]
    flip = pi > 0.5
    if beta > 0.0:  # B = m - B', B' ~ Bin(m, 1 - pi)
        alpha = alpha + beta * m
        alpha = alpha + sign * 4 * _U * (np.abs(alpha) + 2 * beta * m)
        beta, pi, pi_c = -beta, pi_c, pi
        flip = not flip
    p_boost = pi_c if flip else pi

    def tail(x: np.ndarray, size: np.ndarray, upper: bool) -> tuple[np.ndarray, np.ndarray]:
        """``P[Bin(size, pi) > x]`` (``upper``) or ``<= x``, and its relative error budget."""
        if flip:
            x = size - x - 1.0  # P[B > x] = P[Bin(size, pi_c) <= size - x - 1], and the mirror
            upper = not upper
        val = bn.sf(x, size, p_boost) if upper else bn.cdf(x, size, p_boost)
        return val, bn.tail_error_budget(x, size, p_boost)

    if beta == 0.0 or pi == 0.0:
        return np.maximum(alpha, 0.0), np.zeros(alpha.shape)
    b = -beta
    with np.errstate(over="ignore", invalid="ignore"):
        t = np.floor(alpha / b)
    full = t >= m
    out = np.where(full, np.maximum(alpha - b * m * pi, 0.0), 0.0)
    err = np.where(full, 4 * _U * (np.abs(alpha) + b * m * pi), 0.0)
    live = (t >= 0.0) & (t < m)
    if not np.any(live):
        return out, err
    a, mm, tt = alpha[live], m[live], t[live]
    low = tt < mm * pi
    val = np.empty(a.shape)
    e = np.empty(a.shape)
    if np.any(low):  # sum_{j <= t} (alpha - b j) P(j), lower tails
        al, ml, tl = a[low], mm[low], tt[low]
        (f1, r1), (f2, r2) = tail(tl, ml, False), tail(tl - 1.0, ml - 1.0, False)
        t1 = al * f1
        t2 = b * ml * pi * f2
        r = r1 + r2
        val[low] = t1 - t2
        e[low] = (r + 16 * _U) * (t1 + t2)
    high = ~low
    if np.any(high):  # the mean minus sum_{j > t} (alpha - b j) P(j), upper tails
        ah, mh, th = a[high], mm[high], tt[high]
        mu = b * mh * pi
        (g1, r1), (g2, r2) = tail(th - 1.0, mh - 1.0, True), tail(th, mh, True)
        u1 = mu * g1
        u2 = ah * g2
        r = r1 + r2
        val[high] = (ah - mu) + u1 - u2
        e[high] = (r + 16 * _U) * (u1 + u2) + 16 * _U * (ah + mu)
    out[live] = np.maximum(val, 0.0)
    err[live] = e
    return out, err


@dataclass(frozen=True)
class _Kernel:
    """``(1/n) E[(a0 + a1 I + beta J)_+]`` with ``I ~ Bin(n_out, pi_out)`` and, given ``I = i``,
    ``J ~ Bin(m0 - step * i, pi_in)``, for coefficients taken as exact; ``eta`` is the relative
    error of the probabilities (module docstring §3)."""

    n: int
    n_out: int
    pi_out: float
    m0: int
    step: int
    pi_in: float
    pi_in_c: float
    eta: float

    def window(self) -> np.ndarray:
        lo, hi = _window(np.array([float(self.n_out)]), self.pi_out)
        return np.arange(lo[0], hi[0] + 1.0)

    def bracket(self, a0: float, a1: float, beta: float, cap: float, want: str) -> float:
        """The lower (``want = "lower"``) or upper end; ``cap`` bounds the integrand ``(...)_+ /
        n`` everywhere (it multiplies the mass outside the window in the upper end)."""
        i = self.window()
        n_out = float(self.n_out)
        alpha = a0 + a1 * i
        val, err = _inner(alpha, abs(a0) + np.abs(a1 * i), self.m0 - self.step * i, beta, self.pi_in, self.pi_in_c,
                          want)
        w = bn.pmf(i, n_out, self.pi_out)
        w_rel = bn.pmf_error_budget(max(self.n_out, 2))
        s = float(np.sum(w * val))
        e = float(np.sum(w * err)) * (1.0 + w_rel) + (w_rel + 4 * _U * len(i)) * s
        n = float(self.n)
        infl = _inflate(self.eta, n)
        if want == "lower":
            return max((s - e) / n / (1.0 + infl), 0.0) * (1.0 - 8 * _U)
        ends = np.array([i[0] - 1.0, i[-1]])
        tail = float(bn.cdf(ends[:1], n_out, self.pi_out)[0] + bn.sf(ends[1:], n_out, self.pi_out)[0])
        tail *= 1.0 + float(np.max(bn.tail_error_budget(ends, n_out, self.pi_out)))
        return ((s + e + n * tail * max(cap, 0.0)) / n / max(1.0 - infl, 0.5)) * (1.0 + 8 * _U)


# ---------------------------------------------------------------------------------------
# Datasets.
# ---------------------------------------------------------------------------------------


class _Dataset:
    """A neighbouring pair of datasets with a certified bracket on its (possibly projected)
    hockey-stick divergence, both directions."""

    n: int
    label: str
    exact: bool

    def bracket(self, eps: float) -> tuple[float, float]:
        raise NotImplementedError

    def points(self) -> float:
        """Estimated binomial tail pairs of one evaluation (the outer window, ``12 sqrt(n) + 80`` at most)."""
        return 12.0 * math.sqrt(self.n) + 80.0

    def worth(self, eps: float) -> bool:
        """Whether to evaluate this dataset at ``eps`` (cost only: any subset of datasets gives a lower bound)."""
        return True

    def estimate(self, eps: float) -> float:
        """A normal-approximation estimate (ranking only, never reported)."""
        raise NotImplementedError


def _normal_positive_part(mean: float, sd: float) -> float:
    if sd <= 0.0:
        return max(mean, 0.0)
    z = mean / sd
    return sd * math.exp(-0.5 * z * z) / math.sqrt(2 * math.pi) + mean * 0.5 * math.erfc(-z / math.sqrt(2))


class ClassDataset(_Dataset):
    """Others i.i.d. with class law ``mu``; the first user's class laws ``s`` (``x1``) and
    ``s2`` (``x1'``); probabilities known to relative ``eta``. Exact evaluation for at most
    three classes (trinomial kernel) or, for small ``n``, by enumerating every count vector;
    otherwise the classes are merged into three by the sign of ``s - s2`` (a projection)."""

    def __init__(self, n: int, mu: Sequence[float] | np.ndarray, s: Sequence[float] | np.ndarray,
                 s2: Sequence[float] | np.ndarray, eta: float,
                 label: str, exact: bool) -> None:
        keep = [j for j in range(len(mu)) if mu[j] > 0.0]
        self.n = n
        self.mu = np.array([mu[j] for j in keep], dtype=float)
        self.s = np.array([s[j] for j in keep], dtype=float)
        self.s2 = np.array([s2[j] for j in keep], dtype=float)
        self.eta = eta
        self.label = label
        self.exact = exact
        r = len(keep)
        self._enumerate = r > 3 and n <= ENUMERATE_MAX_N and math.comb(n + r - 1, r - 1) <= ENUMERATE_MAX
        if r > 3 and not self._enumerate:
            groups = [self.s > self.s2 * (1 + 1e-9), self.s2 > self.s * (1 + 1e-9)]
            groups.append(~(groups[0] | groups[1]))
            merged = [(float(np.sum(self.mu[g])), float(np.sum(self.s[g])), float(np.sum(self.s2[g]))) for g in groups]
            merged = [x for x in merged if x[0] > 0.0]
            self.mu = np.array([x[0] for x in merged])
            self.s = np.array([x[1] for x in merged])
            self.s2 = np.array([x[2] for x in merged])
            # sums of r non-negative terms: r more roundings
            self.eta = eta + (r + 2) * _U
            self.exact = False
            self.label = label + " (projected on the classes s > s', s < s', s = s')"
        self._counts: np.ndarray | None = None
        self._logw: np.ndarray | None = None
        self._w_rel: np.ndarray = np.zeros(0)

    def _coefficients(self, s: np.ndarray, s2: np.ndarray, eps: float) -> tuple[np.ndarray, np.ndarray]:
        """``c_j = (s_j - e^eps s2_j) / mu_j`` rounded down and up: ``s, s2, mu`` carry relative
        ``eta`` each, ``e^eps`` 1 ulp, product, difference and quotient one rounding each. The
        integrand ``(sum_j c_j N_j)_+`` is non-decreasing in every ``c_j`` (``N_j >= 0``), so
        the value at the lowered (raised) coefficients is below (above) the exact one."""
        g = math.exp(eps)
        c = (s - g * s2) / self.mu
        dc = (3 * self.eta + 8 * _U) * (s + g * s2) / self.mu
        return c - dc, c + dc

    # the three-class kernel --------------------------------------------------------------
    def _trinomial_end(self, c: np.ndarray, cap: float, want: str) -> float:
        r = len(self.mu)
        if r == 1:
            return max(float(c[0]), 0.0)
        # outer: the lightest class (so 1 - mu_outer loses nothing), inner: the lighter of the
        # other two given the outer count (conditional probability <= 1/2), rest: the heaviest
        order = np.argsort(self.mu, kind="stable")
        if r == 2:
            mu0, c0, c2 = float(self.mu[order[0]]), float(c[order[0]]), float(c[order[1]])
            k = _Kernel(self.n, self.n, mu0, self.n, 1, 0.0, 1.0, 2 * self.eta + 4 * _U)
            return k.bracket(c2 * self.n, c0 - c2, 0.0, cap, want)
        mu0, mu1, mu2 = (float(self.mu[j]) for j in order)
        c0, c1, c2 = (float(c[j]) for j in order)
        k = _Kernel(self.n, self.n, mu0, self.n, 1, mu1 / (mu1 + mu2), mu2 / (mu1 + mu2), 4 * self.eta + 8 * _U)
        return k.bracket(c2 * self.n, c0 - c2, c1 - c2, cap, want)

    def _trinomial(self, s: np.ndarray, s2: np.ndarray, eps: float) -> tuple[float, float]:
        c_lo, c_hi = self._coefficients(s, s2, eps)
        cap = float(np.max(c_hi))
        if cap <= 0.0:
            return 0.0, 0.0
        # the kernel works with a0 = c2 n, a1 = c0 - c2, beta = c1 - c2, each rounded: the
        # effective class coefficients (a0/n + a1, a0/n + beta, a0/n) are within 2 ulps of
        # |c0| + |c2| of the intended ones, so a further shift by 4 ulps of max|c| keeps the
        # direction
        shift = 4 * _U * float(np.max(np.abs(c_hi)) + np.max(np.abs(c_lo)))
        return (self._trinomial_end(c_lo - shift, cap, "lower"),
                self._trinomial_end(c_hi + shift, cap + shift, "upper"))

    # exact enumeration of every count vector -------------------------------------------------
    def _enumerated_end(self, c: np.ndarray, cap: float, want: str) -> float:
        r = len(self.mu)
        if self._counts is None:
            cnt = _count_vectors(self.n, r)
            logfact = np.array([math.log(math.factorial(j)) for j in range(self.n + 1)])
            logmu = np.log(self.mu)
            terms = np.abs(logfact[cnt]).sum(axis=1) + cnt @ np.abs(logmu) + abs(logfact[self.n])
            logw = logfact[self.n] - logfact[cnt].sum(axis=1) + cnt @ logmu
            # log: 1 ulp each, sums of at most 2 r + 1 terms; then exp (1 ulp)
            self._w_rel = np.expm1(8 * (r + 4) * _U * terms) + 4 * _U
            self._counts, self._logw = cnt, np.exp(logw)
        assert self._logw is not None
        w, cnt = self._logw, self._counts
        vals = np.maximum(cnt @ c, 0.0)
        tot = float(np.sum(w * vals))
        # each value: a dot product of r terms; the sum over count vectors: len(w) roundings
        e = float(np.sum(w * (self._w_rel * vals + (r + 2) * _U * (cnt @ np.abs(c))))) + len(w) * 2 * _U * tot
        n = float(self.n)
        infl = _inflate(self.eta, n)
        if want == "lower":
            return max((tot - e) / n / (1 + infl), 0.0) * (1 - 4 * _U)
        # weights that underflowed (each below 1e-300) times the largest value n cap
        e += len(w) * 1e-300 * n * cap
        return ((tot + e) / n / max(1 - infl, 0.5)) * (1 + 4 * _U)

    def _enumerated(self, s: np.ndarray, s2: np.ndarray, eps: float) -> tuple[float, float]:
        c_lo, c_hi = self._coefficients(s, s2, eps)
        cap = max(float(np.max(c_hi)), 0.0)
        if cap <= 0.0:
            return 0.0, 0.0
        return self._enumerated_end(c_lo, cap, "lower"), self._enumerated_end(c_hi, cap, "upper")

    def bracket(self, eps: float) -> tuple[float, float]:
        lo, hi = 0.0, 0.0
        for s, s2 in ((self.s, self.s2), (self.s2, self.s)):
            a, b = self._enumerated(s, s2, eps) if self._enumerate else self._trinomial(s, s2, eps)
            lo, hi = max(lo, a), max(hi, b)
        return lo, max(hi, lo)

    def estimate(self, eps: float) -> float:
        g = math.exp(eps)
        best = 0.0
        for s, s2 in ((self.s, self.s2), (self.s2, self.s)):
            c = (s - g * s2) / self.mu
            mean = float(np.sum(c * self.mu))
            var = float(np.sum(c * c * self.mu)) - mean * mean
            best = max(best, _normal_positive_part(self.n * mean, math.sqrt(max(self.n * var, 0.0))) / self.n)
        return best


def _count_vectors(n: int, r: int) -> np.ndarray:
    """Every vector of ``r`` non-negative integers summing to ``n`` (rows)."""
    rows = [c for c in combinations(range(n + r - 1), r - 1)]
    bars = np.array(rows, dtype=np.int64).reshape(len(rows), r - 1)
    edges = np.concatenate((np.full((len(rows), 1), -1), bars, np.full((len(rows), 1), n + r - 1)), axis=1)
    return np.diff(edges, axis=1) - 1


class ProductDataset(_Dataset):
    """"All others hold a third value", projected on the two hit indicators when these are
    independent ``Bern(q)`` under the others' law and ``Bern(p)``, ``Bern(q)`` under the first
    user's (module docstring §2): ``delta = (1/n) E[(d (C1 - e^eps C2) + alpha0 n (1 - e^eps))_+]``
    with ``d = alpha1 - alpha0 = (p - q) / (q (1 - q))``, ``alpha0 = (1 - p) / (1 - q)`` and ``C1,
    C2`` i.i.d. ``Bin(n, q)``; the same value in both directions. ``p, q, 1 - p, 1 - q, p - q``
    are given without cancellation, each to relative ``eta``; ``q <= 1/2``."""

    def __init__(self, n: int, p: float, q: float, p_c: float, q_c: float, diff: float, eta: float,
                 label: str) -> None:
        if not (0.0 < q <= 0.5 and q < p < 1.0 and diff > 0.0):
            raise ValueError("ProductDataset needs 0 < q <= 1/2 and q < p < 1")
        self.n, self.q, self.q_c, self.eta = n, q, q_c, eta
        self.label = label
        self.exact = False
        self.alpha0 = p_c / q_c
        self.diff = diff / (q * q_c)
        self._kernel = _Kernel(n, n, q, n, 0, q, q_c, 2 * eta + 4 * _U)

    def bracket(self, eps: float) -> tuple[float, float]:
        g = math.exp(eps)
        n = float(self.n)
        d, a0 = self.diff, self.alpha0
        # d and a0 are quotients of values known to relative eta: relative 3 eta + 4 ulps.
        # (d (C1 - g C2) + a0 n (1 - g))_+ is non-decreasing in d >= 0 (it is 0 unless C1 > g C2)
        # and non-increasing in a0 (1 - g <= 0): lower end at (d down, a0 up), upper end at
        # (d up, a0 down). The kernel's rounded a0 n (1 - g) and g d: a few ulps of d (1 + g) +
        # a0 g per unit of n, charged absolutely.
        rel = 3 * self.eta + 4 * _U
        d_lo, d_hi, a_lo, a_hi = d * (1 - rel), d * (1 + rel), a0 * (1 - rel), a0 * (1 + rel)
        cap = d_hi + a_lo * (1 - g)  # at C1 = n, C2 = 0
        if cap <= 0.0:
            return 0.0, 0.0
        # the kernel's constant a0 n (1 - g) and slope g d are products of 2-3 rounded factors:
        # pushed 8 ulps in the direction that lowers (raises) the integrand
        m1 = -math.expm1(eps) * n
        lo = self._kernel.bracket(a_hi * m1 * (1 + 8 * _U), d_lo, -g * d_lo * (1 + 8 * _U), cap, "lower")
        hi = self._kernel.bracket(a_lo * m1 * (1 - 8 * _U), d_hi, -g * d_hi * (1 - 8 * _U), cap, "upper")
        return lo, hi

    def estimate(self, eps: float) -> float:
        g = math.exp(eps)
        n = float(self.n)
        mean = self.diff * n * self.q * (1 - g) + self.alpha0 * n * (1 - g)
        sd = self.diff * math.sqrt(n * self.q * self.q_c * (1 + g * g))
        return _normal_positive_part(mean, sd) / n


class LumpedThirdDataset(_Dataset):
    """"All others hold a third value ``x3``", each report mapped to "hits ``x3``" or, if it
    does not, to its hit pattern at ``(x1, x1')`` (module docstring §2): a post-processing
    of every report, so a lower bound on that dataset's exact value, and one that keeps the
    information :class:`ProductDataset` drops (an ``x3`` holder hits ``x3`` with probability
    ``p``, the first user with ``q``).

    Needs the three hit indicators of ``x1, x1', x3`` to be independent under every user's
    law: the first user's ``Bern(p), Bern(q), Bern(q)``, the others' ``Bern(q), Bern(q),
    Bern(p)`` (unary encoding: independent bits; local hashing with the idealised family;
    Hadamard response with ``x3 + 1`` outside the span of ``x1 + 1, x1' + 1``). Classes and
    ratios (``mu`` = the others' law, ``s``, ``s'`` the first user's under ``D``, ``D'``):
    "hits x3": ``mu = p``, ``s = s' = q``; "misses x3, pattern (b1, b2)": ``s/mu = beta0
    alpha(b1)``, ``s'/mu = beta0 alpha(b2)`` with ``alpha(1) = p/q``, ``alpha(0) = (1-p)/(1-q)``,
    ``beta0 = (1-q)/(1-p)`` (so ``beta0 alpha(0) = 1``). By the identity of §1, with ``m`` the
    number of reports that miss ``x3`` and ``C1, C2`` their hits of ``x1, x1'``,

        delta = (1/n) E[((1 - e^eps) (n q/p + m (p - q)/p) + D (C1 - e^eps C2))_+],
        m ~ Bin(n, 1 - p),  C1, C2 | m  i.i.d. Bin(m, q),  D = (p - q) / (q (1 - p)),

    the same in both directions (``C1, C2`` exchangeable). The integrand is non-decreasing in
    ``D`` (it is 0 unless ``C1 > e^eps C2``, the constant being <= 0) and in the constant.

    Evaluation (certified, as :class:`_Kernel`): ``m`` over ``mean +- (12 sd + 40)``, ``C1``
    given ``m`` likewise, ``E[(alpha + beta C2)_+]`` in closed form (:func:`_inner`) for all
    ``(m, C1)`` in one vectorised call; weights ``Bin(n, 1-p)(m) Bin(m, q)(C1)`` with their Boost
    budgets; the mass outside the windows times the integrand's largest value ``(1 - e^eps) + D``
    (at ``m = n, C1 = n, C2 = 0``) added to the upper end only; the probabilities' relative error
    ``eta`` (of ``p, q, 1-p, 1-q``) through the factor ``(1 +- eta)^{3n}`` (every ``(m, C1, C2)``
    has probability ``Bin(n)(m) Bin(m)(C1) Bin(m)(C2)``, at most ``3n`` factors).

    Cost: ``4 (12 sd_m + 40)(12 sd_C + 40)`` closed forms per evaluation, so it is offered only up
    to :data:`LUMPED_MAX_POINTS` of them. Measured against the projection (OUE ``k = 10``,
    ``delta = 1e-6``, independent double-precision sums): the attained ``eps`` rises from
    ``1.7554`` to ``2.137`` at ``eps0 = 4, n = 100`` (blanket ``2.164``) and from ``0.2059`` to
    ``0.2517`` at ``eps0 = 2, n = 1000`` (blanket ``0.2701``); at ``eps0 = 0.5`` it is below the
    projection (the hits of ``x1, x1'`` among the reports that hit ``x3`` carry the signal there)."""

    def __init__(self, n: int, p: float, q: float, p_c: float, q_c: float, diff: float, eta: float,
                 label: str, twin: _Dataset | None = None) -> None:
        """``twin``: the projection of the same dataset; where its normal-approximation estimate
        exceeds this one's by more than :data:`LUMPED_GATE`, :meth:`worth` says to skip this
        dataset at that ``eps`` (cost only: every dataset evaluated gives a valid lower bound)."""
        if not (0.0 < q <= 0.5 and q < p < 1.0 and diff > 0.0 and p_c > 0.0):
            raise ValueError("LumpedThirdDataset needs 0 < q <= 1/2 and q < p < 1")
        self.n, self.p, self.q, self.p_c, self.q_c, self.eta = n, p, q, p_c, q_c, eta
        self.twin = twin
        self.label = label
        self.exact = False
        # D = diff / (q p_c), share = diff / p and q / p, quotients of values known to relative eta: 3 eta + 4 ulps
        self.slope = diff / (q * p_c)
        self.share = diff / p
        self.ratio = q / p
        self._pairs: tuple[np.ndarray, np.ndarray, np.ndarray, float, float] | None = None

    @staticmethod
    def _pmf(k: np.ndarray, size: np.ndarray | float, pi: float, pi_c: float) -> np.ndarray:
        """``Bin(size, pi)`` pmf, through the smaller of ``pi, 1 - pi`` (Boost forms ``1 - p``)."""
        return bn.pmf(size - k, size, pi_c) if pi > 0.5 else bn.pmf(k, size, pi)

    @staticmethod
    def _outside(lo: np.ndarray, hi: np.ndarray, size: np.ndarray, pi: float, pi_c: float) -> np.ndarray:
        """``P[Bin(size, pi) < lo] + P[Bin(size, pi) > hi]``, rounded up."""
        if pi > 0.5:  # X = size - X', X' ~ Bin(size, pi_c)
            lo, hi, pi = size - hi, size - lo, pi_c
        ends = (lo - 1.0, hi)
        out = bn.cdf(ends[0], size, pi) + bn.sf(ends[1], size, pi)
        budget = np.maximum(bn.tail_error_budget(ends[0], size, pi), bn.tail_error_budget(ends[1], size, pi))
        return out * (1.0 + budget) * (1.0 + 4 * _U)

    def points(self) -> float:
        """Estimated number of ``(m, C1)`` points of one evaluation."""
        sd_m = math.sqrt(self.n * self.p * self.p_c)
        sd_c = math.sqrt(self.n * self.p_c * self.q * self.q_c)
        return min(2 * (_Z * sd_m + _MIN_HALF), self.n + 1.0) * min(2 * (_Z * sd_c + _MIN_HALF), self.n + 1.0)

    def _grid(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, float]:
        """The flattened ``(m, C1)`` points, their weights, the weights' relative budget and the
        mass outside the windows (rounded up); cached (nothing here depends on ``eps``)."""
        if self._pairs is None:
            n = float(self.n)
            lo, hi = _window(np.array([n]), self.p_c)
            m = np.arange(lo[0], hi[0] + 1.0)
            w_m = self._pmf(m, n, self.p_c, self.p)
            c_lo, c_hi = _window(m, self.q)
            rows, c1 = ragged(c_lo, c_hi - c_lo + 1.0)
            mm = m[rows]
            w = w_m[rows] * self._pmf(c1, mm, self.q, self.q_c)
            r_m, r_c = bn.pmf_error_budget(max(n, 2.0)), bn.pmf_error_budget(max(float(hi[0]), 2.0))
            w_rel = r_m + r_c + r_m * r_c + 2 * _U
            outside = float(self._outside(lo, hi, np.array([n]), self.p_c, self.p)[0])
            inside = self._outside(c_lo, c_hi, m, self.q, self.q_c)
            outside += float(np.sum(w_m * inside)) * (1.0 + r_m + 4 * _U * len(m))
            self._pairs = (mm, c1, w, w_rel, outside)
        return self._pairs

    def _end(self, eps: float, want: str) -> float:
        mm, c1, w, w_rel, outside = self._grid()
        n = float(self.n)
        g = math.exp(eps)
        one_minus_g = -math.expm1(eps)  # <= 0, within 1 ulp
        rel = 3 * self.eta + 4 * _U
        lower = want == "lower"
        sign = -1.0 if lower else 1.0
        # the integrand is non-decreasing in D and in the constant (1 - g)(n q/p + m (p - q)/p), whose factors q/p and
        # share = (p - q)/p enter as two separately rounded values (exactly q/p + share = 1, but the sum n q/p + m share
        # of non-negative terms has no cancellation, unlike n - (n - m) share: review rev101d, OUE at eps0 >= 35): the
        # lower end takes D down and q/p, share, |1 - g| up (the constant down), the upper end the reverse (1 - g: one
        # ulp from expm1, one more for safety)
        slope = self.slope * (1.0 + sign * rel)
        share = self.share * (1.0 - sign * rel)
        ratio = self.ratio * (1.0 - sign * rel)
        omg = one_minus_g * (1.0 - sign * 2 * _U)
        base = n * ratio + mm * share  # = n q/p + m (p - q)/p >= 0
        # const: four roundings of non-negative terms, below 4 ulps of |1 - g| base; pushed by that
        const = omg * base + sign * 4 * _U * abs(omg) * base
        alpha = const + slope * c1  # two more roundings: below 2 ulps of the scale passed to _inner
        beta = -g * slope * (1.0 - sign * 8 * _U)  # more negative for the lower end
        val, err = _inner(alpha, np.abs(const) + slope * c1, mm, beta, self.q, self.q_c, want)
        s = float(np.sum(w * val))
        e = float(np.sum(w * err)) * (1.0 + w_rel) + (w_rel + 4 * _U * len(w)) * s
        infl = _inflate(3 * self.eta + 6 * _U, n)
        if lower:
            return max((s - e) / n / (1.0 + infl), 0.0) * (1.0 - 8 * _U)
        cap = max(omg + slope, 0.0) * (1.0 + 4 * _U)  # the integrand / n at m = n, C1 = n, C2 = 0: its largest
        return ((s + e + n * outside * cap) / n / max(1.0 - infl, 0.5)) * (1.0 + 8 * _U)

    def bracket(self, eps: float) -> tuple[float, float]:
        lo, hi = self._end(eps, "lower"), self._end(eps, "upper")
        return lo, max(hi, lo)

    def worth(self, eps: float) -> bool:
        """Whether to evaluate this dataset at ``eps`` (see ``twin``)."""
        return self.twin is None or self.estimate(eps) * LUMPED_GATE >= self.twin.estimate(eps)

    def estimate(self, eps: float) -> float:
        g = math.exp(eps)
        n = float(self.n)
        mean_m = n * self.p_c
        mean = (1 - g) * (n - (n - mean_m) * self.share) + self.slope * mean_m * self.q * (1 - g)
        var = self.slope**2 * mean_m * self.q * self.q_c * (1 + g * g) \
            + ((1 - g) * self.share + self.slope * self.q * (1 - g)) ** 2 * n * self.p * self.p_c
        return _normal_positive_part(mean, math.sqrt(max(var, 0.0))) / n


# ---------------------------------------------------------------------------------------
# The families of each randomizer.
# ---------------------------------------------------------------------------------------


def _ratio_groups(values: np.ndarray) -> tuple[np.ndarray, float]:
    """Labels grouping values equal within relative :data:`_GROUP_RTOL` (sorted sweep), and
    the largest relative spread of a group."""
    order = np.argsort(values, kind="stable")
    v = values[order]
    labels = np.zeros(len(v), dtype=np.int64)
    start, spread = 0, 0.0
    for i in range(1, len(v)):
        if v[i] > v[start] * (1.0 + _GROUP_RTOL):
            start = i
            labels[i] = labels[i - 1] + 1
        else:
            labels[i] = labels[i - 1]
            spread = max(spread, (v[i] - v[start]) / v[start])
    out = np.empty(len(v), dtype=np.int64)
    out[order] = labels
    return out, spread


def all_hold_x1(randomizer: Randomizer, n: int, x1: int = 0, x2: int = 1) -> ClassDataset:
    """"All other users hold ``x1``", exact, from the pair structure of ``(x1, x2)`` (module
    docstring §2): class masses ``a_j p_j`` under ``R(x1)``, ratio ``s'/s = b_j / a_j``."""
    st = randomizer.pair_structure(x1, x2)
    a, b, p = np.asarray(st.a), np.asarray(st.b), np.asarray(st.mass)
    ratio = b / a
    labels, spread = _ratio_groups(ratio)
    mu = np.zeros(int(labels.max()) + 1)
    s2 = np.zeros_like(mu)
    np.add.at(mu, labels, a * p)
    np.add.at(s2, labels, b * p)
    r = len(a)
    eta = 2 * st.rel_err + (r + 4) * _U + spread
    return ClassDataset(n, mu, mu, s2, eta, f"first user x1 vs x1', all {n - 1} other users hold x1", True)


def _param(v: int | None) -> int:
    """A parameter the randomizer's constructor has filled in (``g`` of OLH, ``d`` of subset)."""
    if v is None:  # pragma: no cover - set in __post_init__
        raise ValueError("randomizer parameter not set")
    return v


def _hit_masses(randomizer: Randomizer) -> tuple[float, float, float] | None:
    """``(mu_A, mu_B, mu_C)``: the law under ``R(x1)`` of "hits x1 only", "hits x1' only" and
    the rest, in closed form (module docstring §2), for the named randomizers; None otherwise.
    Under ``R(x1')`` the law is ``(mu_B, mu_A, mu_C)`` (relabelling symmetry)."""

    e = math.exp(randomizer.eps0)
    if isinstance(randomizer, _UnaryEncoding):
        p, q, pc, qc, _ = randomizer.bit_probabilities()
        return p * qc, pc * q, p * q + pc * qc
    if isinstance(randomizer, OLH):
        g = float(_param(randomizer.g))
        z = e + g - 1.0
        return e / z * (g - 1.0) / g, (g - 1.0) / (z * g), (e + (g - 1.0) ** 2) / (z * g)
    if isinstance(randomizer, Hadamard):
        return 0.5 * e / (e + 1.0), 0.5 / (e + 1.0), 0.5
    if isinstance(randomizer, Subset):
        k, d = float(randomizer.k), float(_param(randomizer.d))
        w = d * e + (k - d)
        return d * e * (k - d) / (w * (k - 1.0)), d * (k - d) / (w * (k - 1.0)), \
            (d * e * (d - 1.0) + (k - d) * (k - 1.0 - d)) / (w * (k - 1.0))
    return None


def _all_hold_x1_named(randomizer: Randomizer, n: int) -> ClassDataset:
    """"All other users hold ``x1``" from :func:`_hit_masses` (exact: sufficient classes)."""
    masses = _hit_masses(randomizer)
    if masses is None:
        return all_hold_x1(randomizer, n)
    a, b, c = masses
    return ClassDataset(n, [a, b, c], [a, b, c], [b, a, c], _PROB_REL,
                        f"first user x1 vs x1', all {n - 1} other users hold x1", True)


def _subset_third(randomizer: Subset, n: int) -> ClassDataset:
    """Subset selection, "all others hold x3", hit patterns of ``(x1, x1')`` merged into three
    classes (hypergeometric laws; module docstring §2)."""
    k, d = float(randomizer.k), float(_param(randomizer.d))
    e = math.exp(randomizer.eps0)
    w = d * e + (k - d)
    p_in, p_out = d * e / w, (k - d) / w  # P[x in Z] for the holder of x, and its complement
    km1, km2 = k - 1.0, k - 2.0
    # first user holding x1: x1 in Z w.p. p_in; the other d - 1 (or d) members uniform over k - 1
    s_a = p_in * (k - d) / km1  # x1 in, x1' out
    s_b = p_out * d / km1  # x1 out, x1' in
    s_r = p_in * (d - 1.0) / km1 + p_out * (k - 1.0 - d) / km1
    # holder of x3: (x1, x1') among the k - 1 others of x3, d - 1 (x3 in) or d (x3 out) chosen
    o_a = (p_in * (d - 1.0) * (k - d) + p_out * d * (k - 1.0 - d)) / (km1 * km2)
    o_r = (p_in * ((d - 1.0) * (d - 2.0) + (k - d) * (k - d - 1.0))
           + p_out * (d * (d - 1.0) + (k - 1.0 - d) * (k - 2.0 - d))) / (km1 * km2)
    return ClassDataset(n, [o_a, o_a, o_r], [s_a, s_b, s_r], [s_b, s_a, s_r], _PROB_REL,
                        f"first user x1 vs x1', all {n - 1} other users hold a third value x3", False)


def _hadamard_dependent_third(randomizer: Randomizer, n: int) -> ClassDataset:
    """Hadamard response, ``x3 + 1 = (x1 + 1) xor (x1' + 1)`` (exists for every ``k >= 3``): under ``x3`` the
    patterns 11 / 00 have probability ``e^eps0 / (2 (e^eps0 + 1))`` each, 10 / 01 ``1 / (2 (e^eps0
    + 1))``; the first user's ``(hit x1, hit x1')`` is ``Bern(e^eps0/(e^eps0+1))`` x ``Bern(1/2)``."""
    e = math.exp(randomizer.eps0)
    hi, lo = e / (e + 1.0), 1.0 / (e + 1.0)
    return ClassDataset(n, [0.5 * lo, 0.5 * lo, hi], [0.5 * hi, 0.5 * lo, 0.5], [0.5 * lo, 0.5 * hi, 0.5], _PROB_REL,
                        f"first user x1 vs x1', all {n - 1} other users hold x3 with x3 + 1 = (x1 + 1) xor (x1' + 1) "
                        "(projected on the hits of x1, x1')", False)


def _independent_hits(n: int, p: float, q: float, p_c: float, q_c: float, diff: float, label: str) -> list[_Dataset]:
    """The third-value datasets of a randomizer whose hits of ``x1, x1', x3`` are independent
    (own input ``Bern(p)``, any other ``Bern(q)``): the projection on the hits of ``(x1, x1')``
    and, where one evaluation takes at most :data:`LUMPED_MAX_POINTS` closed forms, the reports
    that hit ``x3`` lumped (:class:`LumpedThirdDataset`). Neither dominates the other (module
    docstring §2); the profile takes the larger."""
    if not (0.0 < q <= 0.5 and q < p < 1.0 and diff > 0.0 and p_c > 0.0):
        # p rounds to 1 (Hadamard / local hashing at eps0 >~ 36.7 + log(g - 1); review rev101d: a ValueError before):
        # no third-value dataset, the "all others hold x1" one answers (fewer datasets: still a lower bound)
        return []
    projected = ProductDataset(n, p, q, p_c, q_c, diff, _PROB_REL, label)
    out: list[_Dataset] = [projected]
    lumped = LumpedThirdDataset(n, p, q, p_c, q_c, diff, _PROB_REL,
                                f"first user x1 vs x1', all {n - 1} other users hold a third value x3 (reports that "
                                "hit x3 lumped, the others' hits of x1, x1' kept)", twin=projected)
    if lumped.points() <= LUMPED_MAX_POINTS:
        out.append(lumped)
    return out


def _third_value(randomizer: Randomizer, n: int) -> list[_Dataset]:
    """The projected third-value datasets of a named randomizer (none when ``k < 3``)."""
    if getattr(randomizer, "k", 0) < 3:
        return []
    label = f"first user x1 vs x1', all {n - 1} other users hold a third value x3 (projected on the hits of x1, x1')"
    e = math.exp(randomizer.eps0)
    if isinstance(randomizer, _UnaryEncoding):
        return _independent_hits(n, *randomizer.bit_probabilities(), label)
    if isinstance(randomizer, OLH):
        g = float(_param(randomizer.g))
        z = e + g - 1.0
        return _independent_hits(n, e / z, 1.0 / g, (g - 1.0) / z, (g - 1.0) / g,
                                 (g - 1.0) * math.expm1(randomizer.eps0) / (g * z), label)
    if isinstance(randomizer, Hadamard):
        # x3 + 1 = (x1 + 1) xor (x1' + 1) always exists; an x3 + 1 outside their span needs k >= 4
        out: list[_Dataset] = [_hadamard_dependent_third(randomizer, n)]
        if randomizer.k >= 4:
            out += _independent_hits(n, e / (e + 1.0), 0.5, 1.0 / (e + 1.0), 0.5,
                                     0.5 * math.expm1(randomizer.eps0) / (e + 1.0), label)
        return out

    if isinstance(randomizer, Subset):
        return [_subset_third(randomizer, n)]
    return []


def _matrix_candidates(randomizer: MatrixRandomizer, n: int) -> list[_Dataset]:
    """Every (unordered pair, x3) dataset of a matrix randomizer, the most promising
    :data:`MAX_CANDIDATES` kept (module docstring §2)."""
    randomizer.check_pairwise_size("the attained lower bound")
    m = randomizer.matrix()
    rows = m / m.sum(axis=1, keepdims=True)
    used = rows.max(axis=0) > 0.0
    rows = rows[:, used]
    rel = randomizer.rel_err
    out: list[_Dataset] = []
    k = rows.shape[0]
    for x1, x2 in combinations(range(k), 2):
        for x3 in range(k):
            mu = rows[x3]
            ra, rb = rows[x1] / mu, rows[x2] / mu
            la, sa = _ratio_groups(ra)
            lb, sb = _ratio_groups(rb)
            keys, inv = np.unique(np.stack((la, lb), axis=1), axis=0, return_inverse=True)
            inv = inv.ravel()
            cm = np.zeros(len(keys))
            cs = np.zeros(len(keys))
            cs2 = np.zeros(len(keys))
            np.add.at(cm, inv, mu)
            np.add.at(cs, inv, rows[x1])
            np.add.at(cs2, inv, rows[x2])
            eta = 2 * rel + (rows.shape[1] + 8) * _U + max(sa, sb)
            who = {x1: "x1", x2: "x1'"}.get(x3, f"input {x3 + 1}")
            label = f"first user input {x1 + 1} vs {x2 + 1}, all {n - 1} other users hold {who}"
            out.append(ClassDataset(n, cm, cs, cs2, eta, label, True))
    if len(out) > MAX_CANDIDATES:
        eps = 0.25 * randomizer.eps0
        out.sort(key=lambda d: -d.estimate(eps))
        out = out[:MAX_CANDIDATES]
    return out


# ---------------------------------------------------------------------------------------
# The profile.
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AttainedValue:
    """The best dataset found at one ``eps``: ``lower`` is certified below that dataset's exact
    ``delta(eps)`` (hence below the worst case of the shuffled randomizer)."""

    eps: float
    lower: float
    upper: float
    dataset: str


class DatasetLowerProfile:
    """Attained lower bound of a shuffled finite randomizer (not k-RR): the largest certified
    value over the datasets of module docstring §2, as a
    :class:`~.profile.PrivacyProfile`. ``bounds(eps).lower`` is certified below the exact
    divergence of a concrete neighbouring pair; ``bounds(eps).upper`` bounds the value of every
    dataset evaluated (the profile is the maximum of their, possibly projected, values)."""

    def __init__(self, randomizer: Randomizer, n: int) -> None:

        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise InvalidParameter(f"n must be an integer >= 1, got {n!r}")
        if isinstance(randomizer, KRR):
            raise InvalidParameter("k-RR has its own attained family (blanket_krr.KrrDatasetLower)")
        self.randomizer = randomizer
        self.n = int(n)
        self.datasets: list[_Dataset]
        if isinstance(randomizer, MatrixRandomizer):
            self.datasets = _matrix_candidates(randomizer, self.n)
            # eps0 of a matrix is computed from rounded logs: a margin keeps delta = 0 beyond it
            self._max_log = randomizer.eps0 * (1 + 1e-12) + 4 * randomizer.rel_err + 1e-15
        else:
            self.datasets = [_all_hold_x1_named(randomizer, self.n), *_third_value(randomizer, self.n)]
            self._max_log = randomizer.eps0
        # each dataset's own count (review rev101d: the lumped one counted as 12 sqrt(n) + 80 made OLH eps0 = 30,
        # n = 4e9 "not applicable", where n (1 - p) is tiny and it has a few thousand points)
        points = sum(d.points() for d in self.datasets)
        if self.n > ENUMERATE_MAX_N and points > MAX_WINDOW_POINTS:
            raise NotApplicable(f"n = {self.n:g} is too large for the exact evaluation of concrete datasets here (about "
                                f"{points:.2g} binomial tails per evaluation, minutes to hours); the upper bounds answer")
        # the bracket does not depend on rtol (each dataset is evaluated to floating-point
        # resolution): a search asking again at the same eps with a smaller rtol gets the memo
        self._memo: dict[float, AttainedValue] = {}

    @property
    def max_log_ratio(self) -> float:
        return self._max_log

    def evaluate(self, eps: float) -> AttainedValue:
        """The best dataset at ``eps`` (largest certified lower end), its bracket, and the
        largest upper end over the datasets evaluated in ``upper``."""
        if not (math.isfinite(eps) and eps >= 0.0):
            raise InvalidParameter(f"eps must be finite and >= 0, got {eps!r}")
        if eps >= self._max_log:
            return AttainedValue(eps, 0.0, 0.0, "eps >= eps0: every dataset has delta = 0")
        if eps in self._memo:
            return self._memo[eps]
        best = AttainedValue(eps, -1.0, 0.0, "none")
        hi_all = 0.0
        for d in self.datasets:
            if not d.worth(eps):
                continue
            lo, hi = d.bracket(eps)
            hi_all = max(hi_all, hi)
            if lo > best.lower:
                best = AttainedValue(eps, lo, hi, d.label)
        out = AttainedValue(eps, max(best.lower, 0.0), max(hi_all, best.lower, 0.0), best.dataset)
        if len(self._memo) >= _MEMO:
            self._memo.pop(next(iter(self._memo)))
        self._memo[eps] = out
        return out

    def surrogate(self, eps: np.ndarray) -> np.ndarray:
        """Normal-approximation estimate of the profile on an array of ``eps`` (only a
        starting point for the search; never reported)."""
        e = np.atleast_1d(np.asarray(eps, dtype=float))
        out = np.array([max(d.estimate(float(x)) for d in self.datasets) if x < self._max_log else 0.0 for x in e])
        return out.reshape(np.shape(eps))

    def bounds(self, eps: float, rtol: float = 1e-9) -> DeltaBounds:
        r = self.evaluate(eps)
        return DeltaBounds(eps, r.lower, r.upper, len(self.datasets), r.upper - r.lower <= rtol * r.lower)
