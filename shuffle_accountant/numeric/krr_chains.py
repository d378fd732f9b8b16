"""Certified k-RR privacy-blanket divergence by *kink chains* of the trinomial form (issue 10).

Spec: ``shared/spec/blanket.md`` §3 (the trinomial form) and :mod:`.blanket_krr` module docstring §1
(its derivation from the blanket decomposition of Balle, Bell, Gascón, Nissim, CRYPTO 2019,
arXiv 1903.02837) and §7 (rounding of ``ε0`` and of the derived constants). Nothing here changes
what is bounded; this is another way to evaluate the same ``δ(ε)``, with its own certificate.

1. The form (*derived* in :mod:`.blanket_krr` §1; re-checked against brute force in the tests)
------------------------------------------------------------------------------------------------
With ``E = e^ε0``, ``g = e^ε``, ``G = g - 1``, ``q = 1/(E + k - 1)``:

    δ(ε) = (1/n) E[S_+],   S = (E - g) A - (E g - 1) B - G O,   (A, B, O) ~ Mult(n; q, q, (k-2) q).

``T = A + B ~ Bin(n, 2q)``, ``A | T = t ~ Bin(t, 1/2)`` and ``O | (A, B) ~ Bin(m, ρ)``, ``m = n - t``,
``ρ = (k-2) q / (1 - 2q)``. For a cell ``(t, a)`` put ``c = K1 a - K2 t`` (``K1 = (E-1)(g+1)``,
``K2 = E g - 1``; indeed ``(E - g) a - (E g - 1)(t - a) = c``) and ``y = c / G``. Then with
``x = floor(y)``, ``F = P[Bin(m, ρ) <= x]``, ``P = P[Bin(m, ρ) = x]``, ``μ = m ρ``:

    I(t, a) = E[(c - G O)_+] = Σ_{o <= x} (c - G o) P(o) = (c - G μ) F + G ρ (m - x) P        (1)

(``E[O 1{O <= x}] = μ P[Bin(m-1) <= x-1]`` and ``P[Bin(m-1) <= x-1] = F - P (1 - x/m)``, from
``P_{m-1}(x-1) = P_m(x) x/(m ρ)`` and ``F_{m-1}(y) = F_m(y) + ρ P_{m-1}(y)``). ``I`` is 1-Lipschitz in
``c`` and ``μ``-Lipschitz in ``G`` (``∂/∂c = P[O < y]``, ``∂/∂G = -E[O; O < y]``).

2. Regions of one total (*derived*)
-----------------------------------
Fix a band ``[x_L(t), x_H(t)]`` of ``O``'s bulk (``μ ∓ Z_O σ``, clipped to ``[0, m]``, ``σ`` the largest sd
over the window). ``y`` increases with ``a`` (``K1 > 0``). Let ``a_L`` (``a_U``) be the least ``a`` whose
computed ``y`` is at least ``x_L`` (``x_H``).

* R1, ``a < a_L``: the computed ``y`` is below ``x_L``, so the *computed* ``c`` is below ``G (x_L + 1)`` (the
  division's rounding is far below 1), and the exact ``c`` is within its rounding error ``e_c`` of it (§3's
  bound, largest at ``a = a_L``; ``e_c / G`` is *not* small at ``ε ~ 1e-10``, review rev103b). ``I`` is
  non-decreasing in ``c`` and ``I(c) <= c P[O <= c / G]``, so with ``c* = G (x_L + 1) + e_c(a_L, t)``:
  ``Σ_{a < a_L} P(a | t) I <= c* P[O <= x_L + 1 + e_c / G]`` (the ``P(a | t)`` sum to at most 1; review rev104:
  adding ``e_c`` flat instead widened the bracket 5x at ``δ ~ 1e-9``), the probability bounded by Bernstein's
  inequality ``P[O - μ <= -d] <= exp(-d² / (2 (v + d/3)))``
  (``v = m ρ (1 - ρ)``; ``O`` a sum of independent Bernoulli variables). Where ``x_L = 0`` the computed ``y`` is
  negative and ``I <= e_c``. Lower end: 0.
* R3, ``a >= a_U``: ``I = c - G μ + G E[(O - y)_+]`` (``(z)_+ = z + (-z)_+``) with
  ``0 <= E[(O - y)_+] <= m P[O >= x_H - 1]`` (Bernstein's upper tail). The sum of ``P(a | t)(c - G μ)``
  over ``a >= a_U`` is the hinge ``K1 E[(A - a_U)_+] + (c(a_U) - G μ) S`` with ``S = P[A >= a_U]``,
  ``P = P[A = a_U]`` and ``E[(A - a)_+] = (t/2 - a) S + (a/2) P`` (from ``E[A; A >= a] = (t/2)
  P[Bin(t-1, 1/2) >= a-1]`` and ``P[Bin(t-1) >= a-1] = S + P_{t-1}(a-1)/2``, ``P_{t-1}(a-1) = P (2a/t)``).
* R2, ``a_L <= a < a_U``: (1) exactly, from the chains below.

Totals outside the window ``t_lo .. t_hi``: ``S_+ <= (E - g) A``, so their part of ``δ`` is at most
``(E - g) E[A 1{T ∉ W}] / n = (E - g) (q2/2) P[Bin(n-1, q2) ∉ [t_lo - 1, t_hi - 1]]`` (``E[T 1{T = t}] =
n q2 P[Bin(n-1) = t - 1]``); lower end 0. Every region is a set of non-negative terms of (1)'s sum,
so the sum of the parts' brackets brackets ``δ``.

3. Kink chains (*derived*)
--------------------------
From ``(t, a)`` to ``(t + 2, a + 1)`` the boundary ``y`` moves by exactly ``-(E + 1)`` (``K1 - 2 K2 =
-(E+1) G``) and ``m`` by ``-2``: cells with one ``κ = 2a - t`` form a chain whose ``x`` drops by
``j ∈ {floor(E+1), ceil(E+1)}`` a step. Along it every value of (1) follows from the previous cell by
exact identities: ``P_m(y-1) = P_m(y) y (1-ρ) / ((m - y + 1) ρ)``, ``P_{m-1}(y) = P_m(y) (m - y) / (m (1-ρ))``,
``F_{m-2}(x') = F_m(x) - Σ_{x' < y <= x} P_m(y) + ρ (P_{m-1}(x') + P_{m-2}(x'))``; the weights
``P(a | t)`` by ``P_{t+2}(a+1) = P_t(a) (t+2)(t+1) / (4 (a+1)(t+1-a))``. Each chain starts from Boost
values (pmf, cdf of ``O``; pmf of ``A | t``) with the budgets of :mod:`.binomial`; the window's
``P(T = t)`` are walked from one Boost pmf at the mode. The cells of R2 with one ``κ`` are consecutive
totals of one parity (the band drifts against the chains by ``G (E + 1 - 2ρ) / K1 > 0`` a step); where
they are not (rounding at the band's clipped edges) the route declines (cost only).

*Errors* (every bound rounded up, charged to both ends). A walked pmf after ``s`` steps of at most
``J`` ratios has relative error at most ``e_0 + s (8J + 16) u`` (each ratio: at most four roundings and
``fl(1 - ρ)``'s, each step's product and the running product one more; ``e_0`` the anchor's budget);
the walked cdf, over a whole chain of ``L`` cells, an absolute error of at most the anchor's ``e_F F_0``, plus
the steps' absolute sums times the pmf's relative error at the chain's end plus ``(8J + 16) u``, plus ``u (L + 1)``
times ``F_0`` plus those absolute sums (each addition of the running sum rounds once). R3's ``S`` and ``P`` at
consecutive totals (``a_U`` steps by 0 or 1) are walked the same way from one Boost pair per
:data:`HINGE_RUN` totals (:meth:`KrrChains._hinge_tails`), else taken from Boost. In (1): ``|Δc| <= a |ΔK1| + t |ΔK2| + 2u (K1 a + K2 t)``,
the floor of a rounded ``y`` is off by at most one where ``y`` is within ``4u y`` of an integer, whose
term is at most ``4u (|c| + G x)``, then the products' roundings and the errors of ``F``, ``P`` and the
weights. A sum of ``N`` terms is charged ``N u`` of its absolute sum.

4. Rounding of ``ε`` and of the constants (*derived*, as :mod:`.blanket_krr` §7)
--------------------------------------------------------------------------------
``E = r'`` is :func:`.blanket_krr.upper_constants`' ``e^ε0`` moved up (``δ`` is non-decreasing in ``r``,
§7 (M)), taken exactly (a float); ``g = fl(exp(ε))`` is within ``dg = 2u g`` of ``e^ε``. Both ends are moved by
``dg`` times a bound on ``|dδ/dg|`` between ``g`` and ``e^ε`` (krr107; before, always the *full* mean below, an
absolute floor of ~2.4e-16 that kept the chains off below ``δ`` ~ 5e-10 at rtol 1e-6):

* ``δ(g) = E[S(g)_+] / n`` is convex and non-increasing in ``g`` (``S`` affine, ``∂S/∂g = -W``, ``W = A + E B + O >= 0``),
  with ``|dδ/dg| = M(g) / n``, ``M(g) = E[W 1{S(g) > 0}]`` non-increasing in ``g`` (``{S(g) > 0}`` shrinks). So
  ``|δ(e^ε) - δ(g)| <= dg M(g_lo) / n`` with ``g_lo = g - dg`` (at most both ``g`` and ``e^ε``).
* :meth:`KrrChains.evaluate` bounds ``M(g_lo)/n`` from above over the same parts as the sum. Per cell
  ``y(g', a) = c(g') / (g' - 1)`` has ``∂y/∂g' = -(E - 1) κ / (g' - 1)²`` (``κ = 2a - t``; ``y = -(E+1) t/2 + K1 κ /
  (2G)``), so ``y(g_lo) <= y(g) + c_y |κ|``, ``c_y = (E - 1) dg / G_lo²`` with ``G_lo = G_e - dg``, ``G_e = G - e_G`` at
  most the exact ``g - 1``; ``S(g_lo) > 0`` needs ``O < y(g_lo)``. R2: the computed ``y`` is within ``e_c / G_e +
  (|c| + e_c) e_G / (G_e G) + 2u |c| / G`` of the exact ``y(g)`` (§3's ``e_c``), so with ``D`` that plus ``c_y |κ|``,
  ``y(g_lo) < x + 1 + D``; where ``D <= 1`` at every cell (checked; else the fallback below) ``O <= x + 1`` and the
  cell's part is at most ``(a + E b + x + 1) P[O <= x + 1]``, ``P[O <= x + 1] <= min(1, F + e_F + P (1 + e_P + 8u)
  (m - x)_+ ρ / ((x + 1)(1 - ρ)))`` (the pmf ratio). R1 (``a < a_L``, ``y`` increasing in ``a`` at every ``g'``): the
  exact ``c(a_L - 1) < G (x_L + 1) + e_c`` (§2), so ``O < X_1 = (G (x_L + 1) + e_c) / G_e + c_y |2 a_L - 2 - t|`` (rounded up)
  and ``W <= E t + O``: at most ``(E t + X_1)`` times Bernstein's ``P[O <= X_1]`` per total (weights of ``a`` sum to
  at most 1). R3: ``W`` itself, ``E[W 1{A >= a}] = S ((E+1) t/2 + μ) - (E-1)(a/2) P <= S (1 + e_S) ((E+1) t/2 + μ)``.
  Totals outside the window: ``W <= E T + O``, ``E[T 1{T ∉ W}] / n = q2 P[Bin(n-1) ∉ [t_lo - 1, t_hi - 1]]`` (§2's
  ``p_out``) and ``E[O 1{T ∉ W}] / n = ρ (1 - q2) P[Bin(n-1) ∉ [t_lo, t_hi]]`` (``E[(n - T) 1{T = t}] = n (1 - q2)
  P[Bin(n-1) = t]``), the latter at most Boost's ``P[<= t_lo - 1] + P[>= t_hi]`` with ``p_out``'s budget. Every term is
  non-negative and taken at the upper end of its error bound; the sum is charged ``(N + 16) u`` and ``1e-9``
  relative (which covers each term's few products, ~10u), the window's ``P(T = t)`` their ``e_pt``.
* Fallback (``G_lo <= 0`` or some ``D > 1``; tiny ``ε`` or huge ``n``): ``M(g_lo) <= E[W] = n ((q2/2)(1 + E) + (1 - q2)
  ρ)`` under the float law (about ``n``). The charge is the least of the two. (Cost only: R2's part of the bound,
  a dozen vector operations a cell, is computed only where the fallback is more than :data:`CHARGE_SKIP` of the bracket's width
  and, given the ``rtol`` of :meth:`KrrChains.bounds`, the bracket with it is wider than half ``rtol``; else the fallback
  stands, as before krr107.)

Measured: the relative charge is 2.6e-28 .. 2.4e-23 at ``δ`` 1e-14 .. 1e-9, ``n`` = 300 / 400 (1.2-1.6x the 40-digit
``dg M(g_lo)/n``, test_krr107_relative_charge), 3e-21 at ``n`` = 1e7, k = 3, ``δ`` = 1e-9 (against ~2.5e-16 before).

The sum is over the float law ``π^`` of one user's class (``q2/2, q2/2,
(1-q2) ρ, (1-q2)(1-ρ)``): the law of §7 for the others, here for all ``n`` users. The upper end moves to
the exact law ``π*`` at ``r'`` by §7's Hölder charge (H) with ``f = S_+/n <= E`` (``S <= (E - g) A``):
``log(E_π*[f]/U) <= min_α [log(E/U)/α + (α-1)/2 · n χ² (1 + x)^α]`` (``χ²`` and ``x`` of the three classes,
:class:`.blanket_krr.KrrUpperConstants`' for ``n - 1`` users scaled to ``n``). The lower end brackets the
float law's sum (as the other engines' lower ends do; no privacy claim). (:class:`.blanket_krr.KrrBlanket` charges
its own §7 factor on top: a second, redundant, upper move of ~1e-10 relative.)

5. ``lower_at`` (*derived*; the search's certified low end without an evaluation)
--------------------------------------------------------------------------------
For any fixed event ``D`` and every ``g``, ``S(g)_+ >= S(g) 1{D}``; take ``D`` = the cells of R2 with ``O <= x`` (their
``x`` at the evaluated ``g0``) and all of R3's cells. ``S`` is affine in ``g`` with ``∂S/∂g = -(A + E B + O)``, so
``δ(g) >= L(g0) + (g0 - g) M`` with ``L(g0)`` the evaluated lower end of the sum over ``D`` (R2's terms (1) and R3's
hinges are exactly ``E[S(g0) 1{D}]`` per cell) and ``M = E[(A + E B + O) 1{D}] / n >= 0``: per R2 cell
``(a + E b) F + μ P[Bin(m-1) <= x-1]``, over R3 ``S ((E+1) t/2 + μ) - (E-1)(a/2) P`` (``(1 - E) E[A; A >= a] + (E t + μ) S``).
For ``g <= g0`` a lower bound on ``M`` keeps the bound (each term taken at the low end of its error bound); above
``g0`` :meth:`KrrChains.lower_at` returns 0. The tangent is taken at the exact ``e^ε`` itself (krr107): ``e^ε <= g +
2u g``, so where ``h = g0 - g - 2u g >= 0`` (rounded down) the low end is ``L(g0) + h M_low``; else §4's absolute
``fl(e^ε)`` shift ``2u g dsdg`` is subtracted at ``g`` (the bound on ``M`` at ``g0`` does not bound it below ``g0``).

6. Cost (measured; the route is a cost decision, :attr:`.blanket_krr._BlanketBackend.use_chains`)
----------------------------------------------------------------------------------------------------
About ``16 sd(T) x 2 Z_O sd(O) / Δ`` cells (``Δ = K1 / G``, ~6-8 per total), each a few dozen vector
operations; Boost only at the ends (one pmf per window, three values per chain, one sf/pmf pair per
:data:`HINGE_RUN` totals of R3, walked between them). Measured cold ``ε(δ)`` (CPU, min of 6 interleaved runs,
δ = 1e-6, ratio to one clones query): ``k = 10``, ``ε0 = 2``: n = 1e3 3.6 -> 2.9, 1e4 4.7 -> 2.6, 1e5 5.1 -> 2.0,
1e6 7.5 -> 3.5 (krr102 report; with the start below, 1.4-2.4). Used (:attr:`.blanket_krr._BlanketBackend.use_chains`)
from :data:`.blanket_krr.CHAINS_MIN_N` to :data:`.blanket_krr.CHAINS_MAX_N` users at an ``ε`` where :func:`cells_estimate`
is at most :data:`.blanket_krr.CHAINS_MAX_CELLS` (window / split routes) or :data:`.blanket_krr.CHAINS_MAX_CELLS_LINES`
(:meth:`.blanket_krr._BlanketBackend.chains_cheap`; n up to 1e9: no step of §3's error budget depends on ``n`` beyond
walk lengths of ~1e5 steps, ~1e-10 relative, and integers below 2^53; brackets overlap the other routes' to 1e9), from
:data:`.blanket_krr.CHAINS_MIN_K` (real ``k`` too: :class:`.blanket_krr.PairKrrBlanket`, unary encoding / local
hashing with ``k = 2``), where :func:`fits` expects a bracket that can close, not for ``e^ε0 + 2 > MAX_J`` (the
chain steps sum ``~E + 1`` pmf terms), and not at an ``ε`` at or above one where the route declined or its bracket
stayed too wide (:attr:`.blanket_krr._BlanketBackend.chains_fail_from`: e.g. ``δ`` ~ 1e-14, where the widest bands'
neglected totals and O's tails are more than the rtol; until krr107 already below ~5e-10, where §4's then absolute
charge for ``fl(e^ε)``, ~2.5e-16, was). The search's start where the chains answer is
:func:`saddle_estimate` (an estimate of the same form, steering only).
"""

from __future__ import annotations

import math

import numpy as np

from . import binomial as bn
from .arrays import ragged
from .profile import DeltaBounds

_U = 1.2e-16  # unit roundoff with a little slack
#: half-width of the window of totals (sd of T) and of O's band (largest sd of O over the window)
Z_T = 8.5
Z_O = 8.5
#: the route declines when a chain step drops x by more than this (``E + 1`` large: cost only; each step is a loop
#: of J vector operations). 24 (eps0 <= 3.09) until the lead measured 64 (eps0 <= 4.13): cold eps(1e-6), CPU min of
#: 3, eps0 = 4, k = 3/10/100, old routes -> chains: n = 1e3 8.6/4.6/5.0 -> 3.2/3.0/3.9 ms, 1e5 8.2/9.5/8.9 ->
#: 2.5/3.0/2.6, 1e6 19.5/21.1/12.2 -> 3.8/4.9/3.9 (eps0 = 5, J ~ 150: 1e4 4.4 -> 4.7, so not further); brackets
#: overlap the old routes' on 343 cells (n 300 .. 1e7, k 3 .. 1000, eps0 3.2 .. 4.1, eps(1e-3/1e-6/1e-9))
MAX_J = 64
#: R3's tails at consecutive totals are walked in runs of this many from one Boost anchor each
HINGE_RUN = 256
#: :meth:`KrrChains.evaluate` bounds ``|dδ/dg|`` (the relative ``fl(e^ε)`` charge, module docstring §4) only where the
#: absolute charge is more than this share of the bracket's width (cost only: R2's part, a dozen vector operations a cell)
CHARGE_SKIP = 1e-3
#: :meth:`KrrChains._widths`: each neglected part (totals outside the window; O outside its band) is aimed at this
#: share of ``rtol`` times half the estimate of ``δ`` (cost only)
WIDTH_SHARE = 0.05
#: ... from this many totals in the window (n ~ 2e5 at k = 3; below, the rule before: the choice costs ~0.3 ms, a
#: third of an evaluation at n = 1e4)
WIDTH_MIN_TOTALS = 4000


def _bern(d: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Bernstein's bound on ``P[X - EX >= d]`` (and ``<= -d``) for a sum of independent Bernoulli variables of
    variance ``v``; 1 where ``d <= 0``. The exponent is shrunk by ``1e-9`` relative (its roundings are ~6u)."""
    d = np.asarray(d, dtype=float)
    dd = np.maximum(d, 0.0)
    expo = dd * dd / (2.0 * (v + dd / 3.0) + 1e-300)
    return np.where(d > 0.0, np.exp(-expo * (1.0 - 1e-9)), 1.0)


def _seg_scan(prods: list[np.ndarray], sums: list[np.ndarray], lens: np.ndarray) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Running products (of ``prods``, 1 at each segment's start) and running sums (of ``sums``, 0 there) restarted
    at each segment of consecutive lengths ``lens``: the segments as padded rows, one cumprod / cumsum along them
    (the same sequential roundings as a loop's)."""
    L = int(lens.max())
    starts = np.concatenate(([0], np.cumsum(lens)[:-1]))
    seg = np.repeat(np.arange(lens.size), lens)
    flat = seg * L + (np.arange(int(lens.sum())) - starts[seg])
    out: tuple[list[np.ndarray], list[np.ndarray]] = ([], [])
    for arrs, fill, fn, dst in ((prods, 1.0, np.cumprod, out[0]), (sums, 0.0, np.cumsum, out[1])):
        if not arrs:
            continue
        grid = np.full((len(arrs), lens.size * L), fill)
        for i, x in enumerate(arrs):
            grid[i, flat] = x
        done = fn(grid.reshape(len(arrs), lens.size, L), axis=2).reshape(len(arrs), lens.size * L)
        dst.extend(done[i, flat] for i in range(len(arrs)))
    return out


#: :func:`saddle_estimate`'s Newton steps for the tilt (it converges in ~5 .. 12 from 0; steering only)
SADDLE_STEPS = 60
#: Gauss-Laguerre nodes and weights (40) for :func:`saddle_estimate`'s moments at ``a >= 2``
_LAGUERRE = np.polynomial.laguerre.laggauss(40)


def saddle_estimate(n: int, k: float, eps0: float, eps: np.ndarray) -> np.ndarray:
    """*Estimate* of the blanket ``δ(ε)`` (steering only, never a bound: :attr:`.blanket_krr.KrrBlanket.mixture_surrogate`
    where the chains answer): the trinomial form ``δ = E[S_+] / n``, ``S = Σ X_i`` over ``n`` independent users with ``X``
    ``= E - g, -(E g - 1), -G, 0`` w.p. ``q, q, (k-2) q, (E-1) q`` (module docstring §1), by the saddle point of the
    exponential tilt: ``θ > 0`` with ``E[X e^{θX}] = 0`` (Newton on ``log`` of the positive part against the negative
    part, concave increasing in ``θ``), ``E[S_+] = M(θ)^n E_θ[S_+ e^{-θ S}]`` and the tilted law of ``S/σ`` (mean 0)
    by its Edgeworth expansion to ``1/n`` (``φ (1 + γ3 He3/6 + γ4 He4/24 + γ3² He6/72)``), integrated in closed form
    against ``u e^{-a u}`` (``a = θ σ``; ``I_j = ∫_0^∞ u^j e^{-a u} φ``, ``I_0 = e^{a²/2} Φ(-a)``, ``I_1 = φ(0) - a I_0``,
    ``I_{j+1} = j I_{j-1} - a I_j``; for ``a >= 2`` by Gauss-Laguerre quadrature instead). Measured root against
    the certified ``ε(δ)`` (δ 1e-6 / 1e-12, rtol 1e-7): within
    1.3e-7 relative at k = 3, 0.5 <= ε0 <= 1, n = 300 .. 1e6; k = 10, ε0 = 2: 4.8e-6 at n = 300, 6e-7 at 1e3, 5e-8
    from 1e4; k = 100: up to 3e-3 at n = 300 (a few A and B: the lattice), 2.4e-6 at 1e6. 0 where ``g >= E``."""
    from scipy.special import erfcx  # type: ignore[import-untyped]

    E = math.exp(eps0)
    q = 1.0 / (E + k - 1.0)
    g = np.exp(np.asarray(eps, dtype=float))
    G = g - 1.0
    ok = (g < E) & (G > 0.0)
    v1 = np.where(ok, E - g, 1.0)
    v2 = -(E * g - 1.0)
    v3 = np.where(ok, -G, -1.0)
    lw = (math.log(q), math.log(q), math.log(max((k - 2.0) * q, 1e-300)), math.log(max((E - 1.0) * q, 1e-300)))
    c1, c2, c3 = lw[0] + np.log(v1), lw[1] + np.log(np.maximum(-v2, 1e-300)), lw[2] + np.log(-v3)
    th = np.zeros_like(g)
    with np.errstate(all="ignore"):
        for _ in range(SADDLE_STEPS):
            a2, a3 = c2 + th * v2, c3 + th * v3
            mx = np.maximum(a2, a3)
            w2, w3 = np.exp(a2 - mx), np.exp(a3 - mx)
            f = th * v1 + c1 - (mx + np.log(w2 + w3))
            step = np.where(ok, f / (v1 - (w2 * v2 + w3 * v3) / (w2 + w3)), 0.0)
            th = th - step
            if not np.any(ok & (np.abs(f) > 1e-10)):  # (the balance's log within 1e-10; log M is stationary in θ there)
                break
        vals = np.stack((v1, v2, v3, np.zeros_like(g)))
        ex = np.array(lw)[:, None] + th * vals
        mx = ex.max(axis=0)
        w = np.exp(ex - mx)
        tot = w.sum(axis=0)
        log_m = mx + np.log(tot)
        w /= tot
        dev = vals - (w * vals).sum(axis=0)
        d2 = dev * dev
        mom = ((w * d2).sum(axis=0), (w * d2 * dev).sum(axis=0), (w * d2 * d2).sum(axis=0))
        sig = np.sqrt(n * mom[0])
        a = th * sig
        g3 = n * mom[1] / sig**3
        g4 = n * (mom[2] - 3.0 * mom[0] ** 2) / sig**4
        i_ = [0.5 * erfcx(a / math.sqrt(2.0))]
        i_.append(1.0 / math.sqrt(2.0 * math.pi) - a * i_[0])
        for j in range(1, 7):
            i_.append(j * i_[j - 1] - a * i_[j])
        big = a >= 2.0
        if np.any(big):  # (the recurrence cancels there: I_7 20x off at a = 30; Gauss-Laguerre in v = a u, ~1e-13)
            x, wl = _LAGUERRE
            ab = a[big]
            xa = x[:, None] / ab
            term = np.exp(-0.5 * xa * xa) * (wl[:, None] / math.sqrt(2.0 * math.pi)) / ab  # (x/a)^j w φ(x/a) / a
            for j in range(8):
                i_[j] = np.asarray(i_[j], dtype=float).copy()
                i_[j][big] = term.sum(axis=0)
                term *= xa
        j1 = (
            i_[1]
            + g3 / 6.0 * (i_[4] - 3.0 * i_[2])
            + g4 / 24.0 * (i_[5] - 6.0 * i_[3] + 3.0 * i_[1])
            + g3**2 / 72.0 * (i_[7] - 15.0 * i_[5] + 45.0 * i_[3] - 15.0 * i_[1])
        )
        out = np.exp(n * log_m) * sig * j1 / n
    return np.where(ok & np.isfinite(out), np.maximum(out, 0.0), 0.0)


#: cost rule (:func:`fits`): the route is not tried where the non-O count's mean ``(1 - ρ) m`` is below this many
#: times ``Z_O`` sd of O (the band then reaches ``m`` and R3's Bernstein term stays wide: measured unconverged at
#: n = 1e3, k = 100, eps0 0.5 / 1 and 3e3, 0.5, converged and faster at 3e3, 1 and 1e4, 0.5)
FIT_MARGIN = 0.6


def _window_extent(n: int, q2: float, rho: float) -> tuple[float, float, float, float]:
    """The window of totals ``T ~ Bin(n, q2)`` before rounding to integers, for the cost rules (:func:`fits`,
    :func:`cells_estimate`; :class:`KrrChains` rounds its ends): the mean and sd of ``T``, the largest ``O`` count
    over the window ``n - mean + Z_T sd + 10`` (at least 0) and the largest sd of ``O`` there (``ρ`` its rate)."""
    mean, sd = n * q2, math.sqrt(n * q2 * (1.0 - q2))
    m_hi = max(n - mean + Z_T * sd + 10.0, 0.0)
    return mean, sd, m_hi, math.sqrt(m_hi * rho * (1.0 - rho))


def fits(n: int, k: float, eps0: float) -> bool:
    """Whether the route is expected to give a bracket that closes (a cost decision: it is certified either way)."""
    from .blanket_krr import upper_constants

    c = upper_constants(n, k, eps0)
    rho = c.rho
    mean, sd, _, s_max = _window_extent(n, 2.0 * c.q, rho)
    m_lo = n - min(n, mean + Z_T * sd + 10.0)
    return (1.0 - rho) * m_lo >= FIT_MARGIN * Z_O * s_max


def cells_estimate(n: int, k: float, eps0: float, eps: float) -> float:
    """*Estimate* of the cells of one evaluation at ``eps`` with the widest bands (steering only: the route decision
    :meth:`.blanket_krr._BlanketBackend.chains_cheap`): ``(2 (Z_T sd(T) + 10) + 1)`` totals times ``2 Z_O σ_max / Δ + 1``
    cells a total (``Δ = K1 / G``, the step of ``y`` in ``a``), from unrounded constants. Measured against
    :attr:`KrrChains.last_cells` at ``ε(1e-6)`` (n 1e7 .. 1e9, k 3 .. 1000, ε0 0.5 .. 4): the count is 1.2 .. 2.1
    times this (R3's two terms a total; the band's clipping), 1.2 .. 1.7 where it is above 1e5."""
    E = math.exp(eps0)
    mean, sd, _, s_max = _window_extent(n, 2.0 / (E + k - 1.0), (k - 2.0) / (E + k - 3.0))
    totals = min(float(n), 2.0 * (Z_T * sd + 10.0) + 1.0)
    g = math.exp(eps)
    per = min(2.0 * Z_O * s_max * (g - 1.0) / ((E - 1.0) * (g + 1.0)), mean) + 1.0
    return totals * per


class KrrChains:
    """Certified ``δ(ε)`` bracket of the k-RR blanket (``k >= 3``) by kink chains (module docstring).
    :meth:`bounds` returns None where the route declines (a cost decision; the caller's other routes
    answer)."""

    def __init__(self, n: int, k: float, eps0: float) -> None:
        from .blanket_krr import upper_constants

        c = upper_constants(n, k, eps0)
        self.c = c
        self.n, self.k, self.eps0 = n, k, eps0
        self.E = E = c.e0
        self.q2 = q2 = 2.0 * c.q
        self.rho = rho = c.rho
        self.omr = 1.0 - rho
        mean, sd = _window_extent(n, q2, rho)[:2]
        t_lo = max(1, int(math.floor(mean - Z_T * sd - 10.0)))
        t_hi = min(n, int(math.ceil(mean + Z_T * sd + 10.0)))
        self.t_range = (t_lo, t_hi)
        self.t = t = np.arange(t_lo, t_hi + 1, dtype=float)
        # P(T = t): one Boost pmf at the mode, ratios up and down
        mode = float(min(max(math.floor((n + 1) * q2), t_lo), t_hi))
        i0 = int(mode - t_lo)
        p_mode = float(bn.pmf(np.array([mode]), n, q2)[0])
        up_r = (n - t[i0:-1]) * q2 / ((t[i0:-1] + 1.0) * (1.0 - q2))
        dn_r = t[1 : i0 + 1] * (1.0 - q2) / ((n - t[1 : i0 + 1] + 1.0) * q2)
        pt = np.empty_like(t)
        pt[i0] = p_mode
        pt[i0 + 1 :] = p_mode * np.cumprod(up_r)
        pt[:i0] = (p_mode * np.cumprod(dn_r[::-1]))[::-1]
        self.pt = pt
        self.e_pt = bn.pmf_error_budget(n) + 8.0 * _U * (np.abs(t - mode) + 1.0)
        self.m = m = n - t
        self.mu = m * rho
        self.v = m * rho * self.omr
        self.s_max = math.sqrt(float(np.max(self.v)))
        self.mean_t, self.sd_t = mean, sd
        self._bands: dict[tuple[float, float], tuple] = {}

        # the float law's mean of (A + E B + O)/n (the charge for g = fl(e^eps))
        self.dsdg = ((0.5 * q2) * (1.0 + E) + (1.0 - q2) * rho) * (1.0 + 8.0 * _U)
        # Hölder data for n users: upper_constants' are for n - 1
        self.a_up = c.a_up * (n / max(n - 1, 1)) * (1.0 + 4.0 * _U)
        self.last: dict = {}
        #: (g0, lower end of the sum over D at g0, lower bound on M/n, dsdg) of the last evaluation (lower_at)
        self._tangent: tuple[float, float, float, float] | None = None
        self._last_bracket: DeltaBounds | None = None
        self.last_cells = 0
        #: the last evaluation's charge for g = fl(e^eps) on each end (module docstring §4)
        self.last_charge = math.nan

    def _band(self, z_t: float, z_o: float) -> tuple:
        """The totals ``mean ± (z_t sd + 10)`` (a slice of the window), the mass outside them (rounded up),
        O's band ``μ ∓ z_o σ_max`` clipped to ``[0, m]``, the rounding margin of the Bernstein distances and R3's
        Bernstein tail (eps-free; kept)."""
        key = (z_t, z_o)
        got = self._bands.get(key)
        if got is not None:
            return got
        n, q2 = self.n, self.q2
        t0 = self.t_range[0]
        lo = max(1, int(math.floor(self.mean_t - z_t * self.sd_t - 10.0)), t0)
        hi = min(n, int(math.ceil(self.mean_t + z_t * self.sd_t + 10.0)), self.t_range[1])
        sl = slice(lo - t0, hi - t0 + 1)
        out = float(bn.cdf(np.array([lo - 2.0]), n - 1, q2)[0]) + float(bn.sf(np.array([hi - 1.0]), n - 1, q2)[0])
        p_out = out * (1.0 + 2.0 * bn.relative_error_budget(n)) * (1.0 + 4.0 * _U)
        # P[Bin(n-1, q2) ∉ [lo, hi]] (at most P[<= lo - 1] + P[>= hi]; the O count outside, module docstring §4)
        out2 = float(bn.cdf(np.array([lo - 1.0]), n - 1, q2)[0]) + float(bn.sf(np.array([hi - 1.0]), n - 1, q2)[0])
        p_out2 = out2 * (1.0 + 2.0 * bn.relative_error_budget(n)) * (1.0 + 4.0 * _U)
        m, mu, v = self.m[sl], self.mu[sl], self.v[sl]
        x_lo = np.maximum(mu - z_o * self.s_max, 0.0)
        x_hi = np.minimum(mu + z_o * self.s_max, m)
        # R3: m P[O >= x_H - 1] (Bernstein); marg: the rounding of the Bernstein distances (R1's depends on eps and
        # is taken in evaluate)
        marg = 1e-12 * (mu + 2.0)
        b_hi = m * _bern(x_hi - 1.0 - mu - marg, v)
        got = (sl, p_out, p_out2, x_lo, x_hi, marg, b_hi)
        self._bands[key] = got
        return got

    # -- the sum --------------------------------------------------------------------------------------
    def _y(self, a: np.ndarray, t: np.ndarray, K1: float, K2: float, G: float) -> np.ndarray:
        return (K1 * a - K2 * t) / G

    def _first_at_least(self, t: np.ndarray, target: np.ndarray, K1: float, K2: float, G: float) -> np.ndarray:
        """Least integer ``a`` in ``[0, t + 1]`` with computed ``y(t, a) >= target`` (``t + 1``: none)."""
        a = np.ceil((target * G + K2 * t) / K1)
        a = np.clip(a, 0.0, t + 1.0)
        for _ in range(4):
            lower = (a > 0.0) & (self._y(a - 1.0, t, K1, K2, G) >= target)
            raise_ = (a <= t) & (self._y(a, t, K1, K2, G) < target)
            if not (lower.any() or raise_.any()):
                break
            a = a - lower + raise_
        else:
            return np.full_like(t, -1.0)  # (not settled: decline)
        return a

    @staticmethod
    def _hinge_tails(t3: np.ndarray, a3: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
        """``S = P[Bin(t, 1/2) >= a]``, ``P = P[Bin(t, 1/2) = a]`` and their relative error bounds at R3's first cells.
        Consecutive totals whose ``a`` steps by 0 or 1 are walked from Boost anchors every :data:`HINGE_RUN` totals
        (``P_{t+1}(a) = P_t(a) (t+1) / (2 (t+1-a))``, ``P_{t+1}(a+1) = P_t(a) (t+1) / (2 (a+1))``, ``S_{t+1}(a) = S_t(a)
        + P_t(a) a / (2 (t-a+1))``, ``S_{t+1}(a+1) = S_t(a) - P_t(a) / 2``; each ratio ``<= 5u``, the running sum's
        error as for the chains' cdf); else Boost for each."""
        n3 = t3.size
        da = np.diff(a3)
        eB = bn.pmf_error_budget(float(np.max(t3)))
        if n3 < 2 * HINGE_RUN or np.any(np.diff(t3) != 1.0) or np.any((da != 0.0) & (da != 1.0)):
            S = bn.sf(a3 - 1.0, t3, 0.5)
            P = bn.pmf(a3, t3, 0.5)
            return S, P, bn.tail_error_budget(a3 - 1.0, t3, 0.5), np.full(n3, eB)
        starts = np.arange(0, n3, HINGE_RUN)
        lens = np.diff(np.append(starts, n3))
        seg = np.repeat(np.arange(starts.size), lens)
        pos = np.arange(n3) - starts[seg]
        head = pos == 0
        S0 = bn.sf(a3[starts] - 1.0, t3[starts], 0.5)
        P0 = bn.pmf(a3[starts], t3[starts], 0.5)
        if not (np.all(P0 > 1e-280) and np.all(S0 > 1e-280)):
            return None
        eS0 = bn.tail_error_budget(a3[starts] - 1.0, t3[starts], 0.5)
        tp, ap = t3[:-1], a3[:-1]
        up = da == 1.0
        r = np.ones(n3)
        r[1:] = np.where(up, (tp + 1.0) / (2.0 * (ap + 1.0)), (tp + 1.0) / (2.0 * (tp + 1.0 - ap)))
        (Pr,), _ = _seg_scan([np.where(head, 1.0, r)], [], lens)
        P = Pr * P0[seg]
        eP = (eB + pos * 6.0 * _U) * 1.01
        inc = np.zeros(n3)
        inc[1:] = np.where(up, -0.5 * P[:-1], 0.5 * P[:-1] * ap / (tp - ap + 1.0))
        inc = np.where(head, 0.0, inc)
        absi = np.abs(inc)
        e_prev = np.ones(n3)
        e_prev[1:] = eP[:-1]
        _, (Ss, cumI, eIs) = _seg_scan([], [inc, absi, absi * (e_prev + 8.0 * _U)], lens)
        S = Ss + S0[seg]
        eS_abs = ((eS0 * S0)[seg] + eIs + _U * (pos + 1.0) * (S0[seg] + cumI)) * 1.01
        if not np.all(S > 0.0):
            return None
        return S, P, eS_abs / S * (1.0 + 4.0 * _U), eP

    def evaluate(self, eps: float, z_t: float = Z_T, z_o: float = Z_O, rtol: float = 0.0) -> tuple[float, float, float] | None:
        """``(lower, upper, d log δ/d ε estimate)`` of the float law's ``δ`` at ``g = fl(e^ε)`` plus the
        charge for ``g`` (module docstring §4 first half), or None (the route declines). ``rtol`` (cost only): R2's part
        of the relative charge is skipped where the bracket with the absolute one is within half of it."""
        n, E, rho, omr = self.n, self.E, self.rho, self.omr
        sl, p_out, p_out2, x_lo, x_hi, marg, b_hi = self._band(z_t, z_o)
        t, m, mu = self.t[sl], self.m[sl], self.mu[sl]
        pt, ept = self.pt[sl], self.e_pt[sl]
        g = math.exp(eps)
        G = g - 1.0
        if not G > 0.0:
            return None
        eG = 0.0 if g <= 2.0 else _U * g
        K1 = (E - 1.0) * (g + 1.0)
        K2 = E * g - 1.0
        eK1 = 4.0 * _U * K1
        eK2 = 2.0 * _U * E * g + _U * K2
        aL = self._first_at_least(t, x_lo, K1, K2, G)
        aU = self._first_at_least(t, x_hi, K1, K2, G)
        if (aL < 0.0).any() or (aU < 0.0).any() or (aU < aL).any():
            return None
        lo_sum = hi_sum = err = slope = m_low = m_up = 0.0
        nterms = nm = 0
        r2: tuple | None = None  # (R2's cells, for the slope bound)
        # ---- R1 (upper only)
        # (x_L = 0: the computed y of R1's cells is negative, so c <= its rounding error ec, largest at a = a_L; x_L >
        # 0: the computed c is below G (x_L + 1) and the exact one within ec of it, and I(c) <= c P[O <= c / G], so
        # R1 is at most (G (x_L + 1) + ec) P[O <= x_L + 1 + ec / G] (module docstring §2; reviews rev103b, rev104))
        ec_l = 8.0 * _U * (K1 * aL + K2 * t) + aL * eK1 + t * eK2
        b_lo = np.where(x_lo > 0.0, _bern(mu - x_lo - 1.0 - ec_l / G - marg, self.v[sl]), 1.0)
        r1 = np.where(x_lo > 0.0, (G * (x_lo + 1.0) + ec_l) * b_lo, ec_l) * (aL > 0.0)
        hi_sum += float(np.sum(pt * r1 * (1.0 + ept)))
        # slope bound (module docstring §4): at g_lo, O < X1 on R1's cells, W <= E t + O
        dg, Ge = 2.0 * _U * g, G - eG  # |e^eps - g| <= dg; the exact g - 1 is at least Ge
        G_lo = (Ge - dg) * (1.0 - 2.0 * _U)
        have_m = G_lo > 0.0
        if have_m:
            cy = (E - 1.0) * dg / (G_lo * G_lo) * (1.0 + 8.0 * _U)  # |y(g_lo) - y(g)| <= cy |κ|
            x1 = (G * (x_lo + 1.0) + ec_l) / Ge * (1.0 + 4.0 * _U) + cy * np.abs(2.0 * aL - 2.0 - t)
            r1m = (E * t + x1) * _bern(mu - x1 - marg, self.v[sl]) * (aL > 0.0)
            m_up += float(np.sum(pt * (1.0 + ept) * r1m))
            nm += int(t.size)
        # ---- R3: hinge per total
        has3 = aU <= t
        if has3.any():
            t3, a3, m3, mu3, pt3 = t[has3], aU[has3], m[has3], mu[has3], pt[has3]
            got3 = self._hinge_tails(t3, a3)
            if got3 is None:
                return None
            S, P, eS, eP = got3
            c3 = K1 * a3 - K2 * t3
            ec3 = a3 * eK1 + t3 * eK2 + 2.0 * _U * (K1 * a3 + K2 * t3)
            ex1 = (0.5 * t3 - a3) * S + 0.5 * a3 * P  # E[(A - a)_+]
            e_ex1 = np.abs(0.5 * t3 - a3) * S * (eS + 3.0 * _U) + 0.5 * a3 * P * (eP + 3.0 * _U) + _U * np.abs(ex1)
            lin = c3 - G * mu3
            H = K1 * ex1 + lin * S
            eH = (
                eK1 * np.abs(ex1)
                + K1 * e_ex1
                + (ec3 + eG * mu3 + 3.0 * _U * (np.abs(c3) + G * mu3)) * S
                + np.abs(lin) * S * (eS + _U)
                + 3.0 * _U * (K1 * np.abs(ex1) + np.abs(lin) * S)
            )
            w = pt3 * (1.0 + ept[has3])
            lo_sum += float(np.sum(pt3 * H))
            err += float(np.sum(w * eH + pt3 * np.abs(H) * (ept[has3] + _U)))
            hi_sum += float(np.sum(pt3 * H)) + float(np.sum(w * (G + eG) * S * (1.0 + eS) * b_hi[has3]))
            nterms += 2 * int(t3.size)
            # slope estimate (steering only): E[(A + E B + O) 1{S > 0}] over R3
            ea = 0.5 * t3 * S + 0.5 * a3 * P
            slope += float(np.sum(pt3 * ((1.0 - E) * ea + (E * t3 + mu3) * S)))
            # lower_at (module docstring §5): M over R3 = S ((E+1) t/2 + μ) - (E-1)(a/2) P, from below
            m3 = S * (1.0 - eS) * (0.5 * (E + 1.0) * t3 + mu3) - (E - 1.0) * 0.5 * a3 * P * (1.0 + eP)
            m_low += float(np.sum(pt3 * np.maximum(m3, 0.0))) * (1.0 - float(np.max(ept[has3])) - (t3.size + 16) * _U) * (1.0 - 1e-9)
            # slope bound (module docstring §4): W's mean over R3, at most S ((E+1) t/2 + μ)
            m_up += float(np.sum(w * S * (1.0 + eS) * (0.5 * (E + 1.0) * t3 + mu3)))
            nm += int(t3.size)
        # ---- R2: chains (cells of one κ = 2a - t, consecutive totals of one parity)
        own, a = ragged(aL.astype(np.int64), (aU - aL).astype(np.int64))
        if a.size:
            kap = 2 * a - own - int(t[0])  # 2a - t
            # chain-major order without a sort: per κ its count and first total (the totals of one κ must be
            # consecutive of one parity: checked by every cell landing on its own slot)
            kidx = kap - int(kap.min())
            cnt = np.bincount(kidx)
            used = cnt > 0
            lens = cnt[used]
            first_own = np.bincount(kidx, weights=own.astype(float))[used] / lens - (lens - 1.0)
            cid = np.cumsum(used) - 1
            ch_of = cid[kidx]
            slot = own - first_own[ch_of]
            starts = np.concatenate(([0], np.cumsum(lens)[:-1]))
            if not np.all((slot >= 0.0) & (slot == np.floor(slot)) & (np.mod(slot, 2.0) == 0.0) & (slot < 2.0 * lens[ch_of])):
                return None  # a chain with a gap (cost decision)
            dest = starts[ch_of] + (slot * 0.5).astype(np.int64)
            if not np.all(np.bincount(dest, minlength=a.size) == 1):
                return None
            order = np.empty(a.size, dtype=np.int64)
            order[dest] = np.arange(a.size)
            own, a = own[order], a[order]
            tc = t[own]
            af = a.astype(float)
            chain = np.repeat(np.arange(lens.size), lens)
            pos = (np.arange(a.size) - starts[chain]).astype(float)
            new = pos == 0.0
            mc, muc = m[own], mu[own]
            c = K1 * af - K2 * tc
            x = np.floor(c / G)
            # step from cell i to i + 1 (same chain): x drops by j
            j = np.zeros(a.size)
            j[:-1] = x[:-1] - x[1:]
            j[starts[1:] - 1] = 0.0
            j[-1] = 0.0
            if j.min() < 0.0 or j.max() > MAX_J:
                return None
            J = max(int(j.max()), 1)
            # Q_i / P_s = prod_{l < i} r(m, x - l): Csum = sum_{i < j} Q_i / P_s, Cj = Q_j / P_s
            Cj = np.ones(a.size)
            Csum = np.ones(a.size)
            den = mc + 1.0 - x
            for i in range(J):
                ri = (x - i) * omr / ((den + i) * rho)
                Cj = np.where(i < j, Cj * ri, Cj)
                if i + 1 < J:
                    Csum += np.where(i + 1 < j, Cj, 0.0)
            x1 = x - j
            m1 = (mc - x1) / (mc * omr)
            m2 = (mc - 1.0 - x1) / ((mc - 1.0) * omr)
            stepping = j > 0.0
            tail = rho * Cj * m1 * (1.0 + m2)
            R = np.where(stepping, Cj * m1 * m2, 1.0)
            Dn = np.where(stepping, tail - Csum, 0.0)  # D / P_s
            Da = np.where(stepping, tail + Csum, 0.0)  # |terms| / P_s
            # anchors (first cell of each chain), then running products / sums restarted at each chain
            P0 = bn.pmf(x[starts], mc[starts], rho)
            F0 = bn.cdf(x[starts], mc[starts], rho)
            WA0 = bn.pmf(af[starts], tc[starts], 0.5)
            eP0 = bn.pmf_error_budget(n)
            eF0 = bn.tail_error_budget(x[starts], mc[starts], rho)
            eA0 = bn.pmf_error_budget(float(t[-1]))
            if not (np.all(P0 > 1e-280) and np.all(WA0 > 1e-280)):
                return None
            tn, an = np.roll(tc, 1), np.roll(af, 1)
            rA = np.where(new, 1.0, (tn + 2.0) * (tn + 1.0) / (4.0 * (an + 1.0) * (tn + 1.0 - an)))
            (Pr, WAr), _ = _seg_scan([np.where(new, 1.0, np.roll(R, 1)), rA], [], lens)
            Pc = Pr * P0[chain]
            WAc = WAr * WA0[chain]
            Dprev = np.where(new, 0.0, np.roll(Dn * Pc, 1))
            Aprev = np.where(new, 0.0, np.roll(Da * Pc, 1))
            per = (8.0 * J + 16.0) * _U
            ePc = (eP0 + pos * per) * 1.01
            _, (Ds,) = _seg_scan([], [Dprev], lens)
            Fc = Ds + F0[chain]
            # cdf error, one bound per chain: anchor + the steps' |terms| x (the pmf error at the chain's end + per)
            # + the running sum's roundings (u per addition of at most F0 + the |terms| so far)
            sumA = np.add.reduceat(Aprev, starts)
            eF_ch = (eF0 * F0 + sumA * ((eP0 + lens * per) * 1.01 + per) + _U * (lens + 1.0) * (F0 + sumA)) * 1.01
            eFc = eF_ch[chain]
            eAc = (eA0 + pos * 6.0 * _U) * 1.01
            W = pt[own] * WAc
            eW = ept[own] + eAc + 2.0 * _U
            lin = c - G * muc
            T1 = lin * Fc
            T2 = G * rho * (mc - x) * Pc
            Ival = T1 + T2
            ec = af * eK1 + tc * eK2 + 2.0 * _U * (K1 * af + K2 * tc)
            eI = (
                ec
                + eG * muc
                + 4.0 * _U * (np.abs(c) + G * (muc + x))
                + np.abs(lin) * eFc
                + 2.0 * _U * np.abs(T1)
                + np.abs(T2) * (ePc + 6.0 * _U)
                + 2.0 * _U * np.abs(Ival)
            )
            WI = float(np.sum(W * Ival))
            lo_sum += WI
            hi_sum += WI
            err += float(np.sum(W * ((1.0 + eW) * eI + np.abs(Ival) * eW)))
            nterms += int(a.size)
            ab = af + E * (tc - af)
            Fp = Fc - Pc * (1.0 - x / mc)  # P[Bin(m-1) <= x-1]
            slope += float(np.sum(W * (ab * Fc + muc * Fp)))
            # lower_at (module docstring §5): M = E[(A + E B + O) 1{D}] over the chain cells, from below
            m_lo = np.maximum(ab * (Fc - eFc) + muc * (Fp - eFc - Pc * (ePc + 4.0 * _U)), 0.0)
            m_low += float(np.sum(W * m_lo)) * (1.0 - float(np.max(eW)) - (a.size + 16) * _U) * (1.0 - 1e-9)
            r2 = (af, tc, c, ec, mc, x, Fc, eFc, Pc, ePc, W, eW, ab)
        self.last_cells = nterms
        tot_abs = abs(lo_sum) + abs(hi_sum)
        # (a computed term may be negative by its rounding, within err: sum |terms| <= |sum| + 2 err)
        err = err * (1.0 + 1e-9) + (nterms + 8) * _U * (tot_abs + 2.0 * err)
        lower = (lo_sum - err) / n * (1.0 - 2.0 * _U)
        upper = (hi_sum + err) / n * (1.0 + 2.0 * _U)
        # totals outside the window
        upper += (E - g + 2.0 * _U * g) * 0.5 * self.q2 * p_out * (1.0 + 4.0 * _U)
        # g = fl(e^eps) against e^eps (module docstring §4): dg times a bound on M(g_lo) / n, else the full mean's
        shift = 2.0 * _U * g * self.dsdg
        # (cost only: the bound where the absolute charge matters against the width and, given rtol, against rtol)
        want = have_m and shift > CHARGE_SKIP * (upper - lower) and upper - lower + 2.0 * shift > 0.5 * rtol * lower
        if want and r2 is not None:
            # slope bound over R2 (module docstring §4): y(g_lo) < x + 1 + D, so O <= x + 1 where every D <= 1
            af, tc, c, ec, mc, x, Fc, eFc, Pc, ePc, W, eW, ab = r2
            dist = cy * np.abs(2.0 * af - tc) + ec / Ge + (np.abs(c) + ec) * eG / (Ge * G) + 2.0 * _U * np.abs(c) / G
            want = float(np.max(dist)) * (1.0 + 1e-6) + 1e-12 <= 1.0
            if want:
                rx = np.maximum(mc - x, 0.0) * rho / ((x + 1.0) * omr)  # P_m(x + 1) / P_m(x)
                f_up = np.minimum(Fc + eFc + Pc * (1.0 + ePc + 8.0 * _U) * rx, 1.0)
                m_up += float(np.sum(W * (1.0 + eW) * (ab + x + 1.0) * f_up))
                nm += int(af.size)
        if want:  # (R1, R3 and, where it has cells, R2 summed above)
            m_out = (E * self.q2 * p_out + rho * (1.0 - self.q2) * p_out2) * (1.0 + 4.0 * _U)
            m_up = m_up * (1.0 + (nm + 16) * _U) * (1.0 + 1e-9) / n * (1.0 + 2.0 * _U) + m_out
            shift = min(shift, dg * m_up * (1.0 + 4.0 * _U))
        self.last_charge = shift
        self._tangent = (g, max(lower, 0.0), max(m_low, 0.0) / n * (1.0 - 2.0 * _U), self.dsdg)
        lower, upper = max(lower - shift, 0.0), upper + shift
        mid = 0.5 * (lo_sum + hi_sum) / n
        log_slope = -(slope / n) * g / mid if mid > 0.0 else math.nan
        return lower, upper, log_slope

    def _widths(self, eps: float, rtol: float) -> tuple[float, float] | None:
        """Half-widths (in sd) of the window of totals and of O's band for a bracket of relative width
        ``rtol``: the least of ``5, 5.5, .., Z_T`` (``Z_O``) whose neglected part is at most :data:`WIDTH_SHARE`
        ``rtol`` times half an estimate of ``δ`` (the last evaluation's middle moved to ``eps`` by its slope estimate
        where that lowers it, else :func:`saddle_estimate`): the totals outside, ``(E - g)(q2/2) P[T - 1 ∉ ..]`` (Boost,
        as :meth:`_band`), and O's band, ``G (max m + max μ + 1) / n`` times Bernstein's bound at ``z σ_max - 2`` (about R1's
        and R3's charges per unit weight). A cost decision (krr105; before, and still below
        :data:`WIDTH_MIN_TOTALS` totals, a Gaussian rule against a tenth of the last middle or 1e-10, which gave
        8.5 / 8.5 at every first evaluation): an unconverged bracket is recomputed at the widest. None (from
        :data:`WIDTH_MIN_TOTALS` totals on), where no width is expected to close the bracket and :meth:`bounds` declines
        (cost only: the routes of :mod:`.blanket_krr` answer; above 1e7 users each such query had paid one evaluation at
        the estimated bands and one at the widest, e.g. n = 1e8, k = 10, ε0 = 4.1, δ = 1e-12: 47 -> 75 ms, review
        rev105k): the estimate of ``δ`` times ``rtol`` is below the fallback floor ``4 u g dsdg`` (the absolute fl(e^ε)
        charge on both ends, module docstring §4) and the relative charge is not expected to be available and small
        (:meth:`_slope_floor_fits`), or (krr107) below the widest bands' estimated neglected parts."""
        g = math.exp(eps)
        if self.t.size < WIDTH_MIN_TOTALS:  # (the rule before krr105: Gaussian tails against a tenth of the last middle)
            target = max(0.02 * rtol * (self.last.get("mid", 1e-10) * 0.1), 1e-300)
            z_t = math.sqrt(2.0 * math.log(max((self.E - g) * 0.5 * self.q2 / target, 2.0))) + 0.5
            z_o = math.sqrt(2.0 * math.log(max((g - 1.0) * float(np.max(self.m)) / self.n / target, 2.0))) + 0.5
            z_o *= 1.0 + z_o / (6.0 * max(self.s_max, 1e-3))
            return min(math.ceil(2.0 * z_t) / 2.0, Z_T), min(math.ceil(2.0 * z_o) / 2.0, Z_O)
        last = self.last
        if last.get("mid", 0.0) > 0.0 and math.isfinite(last.get("slope", math.nan)):
            guess = last["mid"] * math.exp(min(last["slope"] * (eps - last["eps"]), 0.0))
        else:
            guess = float(saddle_estimate(self.n, self.k, self.eps0, np.array([eps]))[0])
        if 4.0 * _U * g * self.dsdg > rtol * guess and not self._slope_floor_fits(eps, rtol, guess):
            return None  # (review rev105k: the bracket's floor, twice the fl(e^eps) shift, is wider than rtol delta)
        target = WIDTH_SHARE * rtol * 0.5 * guess
        if not (target > 0.0 and math.isfinite(target) and g < self.E):
            return Z_T, Z_O
        zs = np.arange(5.0, max(Z_T, Z_O) + 0.25, 0.5)
        n, q2 = self.n, self.q2
        t0, t1 = self.t_range
        lo = np.maximum(np.floor(self.mean_t - zs * self.sd_t - 10.0), t0)
        hi = np.minimum(np.ceil(self.mean_t + zs * self.sd_t + 10.0), t1)
        with np.errstate(all="ignore"):
            out = bn.cdf(lo - 2.0, n - 1, q2) + bn.sf(hi - 1.0, n - 1, q2)
        ok_t = (self.E - g) * 0.5 * q2 * out <= target
        scale = (g - 1.0) * (float(np.max(self.m)) + float(np.max(self.mu)) + 1.0) / n
        part_o = scale * _bern(zs * self.s_max - 2.0, np.full(zs.size, self.s_max**2))
        ok_o = part_o <= target
        if (self.E - g) * 0.5 * q2 * out[-1] + part_o[-1] > rtol * guess:
            return None  # (the widest bands' neglected parts alone are expected wider than rtol delta: decline)
        z_t = float(zs[np.argmax(ok_t)]) if ok_t.any() else Z_T
        z_o = float(zs[np.argmax(ok_o)]) if ok_o.any() else Z_O
        return min(z_t, Z_T), min(z_o, Z_O)

    def _slope_floor_fits(self, eps: float, rtol: float, guess: float) -> bool:
        """Whether :meth:`evaluate`'s relative ``fl(e^ε)`` charge (module docstring §4) is expected to be available and
        below ``rtol guess`` on both ends (steering only): ``G`` at least ``20 u n E g`` (the distance ``D`` of §4 about
        ``u n E g / G`` at most) and ``4 u g`` times four times ``|dδ/dg|``, estimated from the last evaluation's slope
        (scaled up by ``ε / ε_last`` above it) or :func:`saddle_estimate`'s difference quotient."""
        g = math.exp(eps)
        if not g - 1.0 >= 20.0 * _U * self.n * self.E * g:
            return False
        last = self.last
        sl = last.get("slope", math.nan)
        if math.isfinite(sl) and last.get("eps", 0.0) > 0.0:
            sl *= max(1.0, eps / last["eps"])
        else:
            est = saddle_estimate(self.n, self.k, self.eps0, np.array([eps, eps * 1.01]))
            if not (est[0] > 0.0 and est[1] > 0.0):
                return False
            sl = math.log(est[1] / est[0]) / (0.01 * eps)
        return 16.0 * _U * abs(sl) * guess <= rtol * guess

    def bounds(self, eps: float, rtol: float) -> DeltaBounds | None:
        """Certified bracket of the blanket ``δ(ε)`` (upper end charged to the exact law, module docstring
        §4), or None where the route declines."""
        kept = self._last_bracket
        if kept is not None and kept.eps == eps and (kept.upper - kept.lower <= rtol * kept.lower or kept.upper <= 1e-300):
            return DeltaBounds(eps, kept.lower, kept.upper, 0, True)
        widths = self._widths(eps, rtol)
        if widths is None:
            return None
        z_t, z_o = widths
        for _attempt in range(2):
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                got = self.evaluate(eps, z_t, z_o, rtol)
            if got is None:
                return None
            lower, upper, slope = got
            upper = self.charge_up(upper)
            converged = upper - lower <= rtol * lower or upper <= 1e-300
            if converged or (z_t, z_o) == (Z_T, Z_O):
                break
            z_t, z_o = Z_T, Z_O
        self.last = {"eps": eps, "slope": slope, "mid": 0.5 * (lower + upper)}
        if lower > upper:
            from ..errors import CertificationError

            raise CertificationError(f"inconsistent chains bracket [{lower!r}, {upper!r}] at eps = {eps!r}")
        self._last_bracket = DeltaBounds(eps, lower, upper, self.last_cells, converged)
        return self._last_bracket

    def lower_at(self, eps: float) -> float:
        """Certified lower bound on the float law's ``δ(ε)`` for ``ε`` at most the last evaluated one (module
        docstring §5; 0 above it and before any evaluation): no Boost call, a few float operations."""
        tan = self._tangent
        if tan is None or not 0.0 <= eps < self.eps0:
            return 0.0
        g0, low0, m_lo, dsdg = tan
        g = math.exp(eps)
        if not g <= g0:
            return 0.0
        h = (g0 - g) * (1.0 - 2.0 * _U) - 2.5 * _U * g  # (g0 - e^eps, from below: e^eps <= g + 2u g)
        if h >= 0.0:  # the tangent at the exact e^eps (module docstring §5)
            val = (low0 + h * m_lo) * (1.0 - 4.0 * _U)
        else:
            val = (low0 + (g0 - g) * m_lo) * (1.0 - 4.0 * _U) - 2.0 * _U * g * dsdg
        return max(val, 0.0)

    def charge_up(self, upper: float) -> float:
        """Module docstring §4: the float law's upper end moved to the exact law at ``r'`` (Hölder, ``f <= E``)."""
        from .blanket_krr import _charged, _hoelder_log

        if math.isnan(upper):
            return math.inf
        if not upper > 0.0:
            return 0.0
        c = self.c
        ell = math.log(self.E * (1.0 + 4.0 * _U)) - math.log(upper)
        log_charge = _hoelder_log(ell, self.a_up, c.x_up, 1.0, self.n)
        return _charged(upper, log_charge, True, 8.0 * _U)

    def log_slope(self, eps: float) -> float:
        """Estimate of ``d log δ / d ε`` at the last evaluated ``ε`` (steering only), ``nan`` elsewhere."""
        return self.last.get("slope", math.nan) if self.last.get("eps") == eps else math.nan
