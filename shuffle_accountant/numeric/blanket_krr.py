"""Certified privacy-blanket bound for shuffled k-ary randomized response, and attained
lower bounds from concrete neighbouring datasets.

Spec: ``shared/spec/blanket.md`` (§2, §3, §6) and ``shared/spec/amplification.md`` (§1, §2).

Sources
-------
* Balle, Bell, Gascón, Nissim, "The Privacy Blanket of the Shuffle Model", CRYPTO 2019
  (arXiv 1903.02837), Section 3 (the blanket decomposition ``R(x) = γ ω + (1-γ) ν_x``).
* Feldman, McMillan, Talwar, "Hiding Among the Clones", FOCS 2021 (arXiv 2012.12803),
  Section 4.1 and Appendix F (the clone pair; the kernel's tail structure; Lemma F.2).
* Su, Cheng, Wang, arXiv 2504.07414 (2025): the blanket is the best clone-type
  decomposition (context only; nothing here relies on it).

1. The blanket divergence of k-RR (*derived*; checked against brute force in the tests)
---------------------------------------------------------------------------------------
k-RR with ``k >= 2`` values reports its input with probability ``p = e^ε0 q`` and each other
value with probability ``q = 1/(e^ε0 + k - 1)``. Every report is, independently, a uniform
value with probability ``γ = k q`` (the blanket) and otherwise the user's own value. Take
neighbouring datasets that differ in the first user (``x1`` vs ``x1'``). Reveal to the
adversary which of the other ``n - 1`` users were *not* blanket and what they reported (a
post-processing in the reverse direction: the shuffled histogram is a function of what is
revealed plus the rest, so its divergence is at most that of the revealed view, and the
revealed part has the same law under both datasets). What remains is the histogram of the
first user's report plus ``N ~ Bin(n-1, γ)`` uniform reports. Its likelihood ratio depends on
the counts ``(a, b)`` of ``x1, x1'`` and on ``N`` only (a uniform multinomial has
``U_N(h - e_y) ∝ h_y``), so

    δ_blanket(ε) = Σ_N Bin(n-1, γ)(N) · h_N(ε),   h_N = hockey-stick of the clone pair
                   ClonePair(N + 1, 1/k, 1/k, p, q, (k-2) q)        (spec blanket.md §6)

and, using ``U_{N+1}(h) k h_y / (N+1) = U_N(h - e_y)`` and
``Bin(n-1, γ)(N)/(N+1) = Bin(n, γ)(N+1)/(n γ)``, this equals spec §3's trinomial form
``(1/n) E[((e^ε0 - e^ε) A - (e^{ε0+ε} - 1) B - (e^ε - 1) O)_+]``,
``(A, B, O) ~ Mult(n; q, q, (k-2) q)``. It holds for *every* pair of neighbouring datasets
(the other users' data never entered). Both directions of the hockey-stick divergence are
equal (swap the names ``x1``, ``x1'``). For ``ε >= ε0`` it is 0 (every likelihood ratio is a
ratio of mixtures with weights ``p, q``).

For ``k = 2`` nothing is third, ``γ = 2q`` and the pair is exactly the stronger-clone pair
``ClonePair(n, q, q, p, q, 0)`` (spec blanket.md §6: for k = 2 the blanket coincides with it);
:class:`KrrBlanket` then delegates to :class:`~.clones.HockeyStick`.

2. The (t, j) decomposition used for computation (*derived*)
------------------------------------------------------------
Let ``C ~ Bin(n-1, 2q)`` count the other users whose report is blanket *and* lands on
``{x1, x1'}``, and given ``C = c`` let ``J' ~ Bin(n-1-c, ρ)``, ``ρ = (k-2)q/(1-2q)``, count those
whose blanket report is a third value. The first user is *counted* (reports ``x1`` or
``x1'``) with probability ``1 - p0 = (e^ε0 + 1) q`` and *silent* (reports a third value) with
``p0 = (k-2) q``, under both datasets. With ``T = C + [counted]`` and ``J = J' + [silent]`` the
pair ``(T, J)`` has the same law under both datasets, and given ``(T, J) = (t, j)`` the count
of ``x1`` is the core's kernel pair (:func:`~.clones.kernel_hockey_stick` with ``c = t - 1``
fair clones) with the first user mixed as ``u = 1/2 + λ d``, ``v = 1/2 - λ d``,
``d = (e^ε0 - 1) / (2 (e^ε0 + 1))``, where ``λ = Pr[counted | t, j]``. The multinomial
probabilities give ``Pr[silent, t, j] / Pr[counted, t, j] = κ j / t`` with ``κ = 2/(e^ε0+1)``:

    λ(t, j) = t / (t + κ j),          δ_blanket(ε) = Σ_{t >= 1, j} Pr[T=t, J=j] · h(t-1, λ(t, j)).

Properties of ``h(c, λ)`` (the kernel with ``c`` fair clones), each proved here:

(P1) non-increasing in ``c``: the pair at ``c + 1`` is the pair at ``c`` plus one independent
     clone under both hypotheses (data processing; FMT21 Lemma F.2).
(P2) convex in ``λ`` on ``[0, 1]``: ``(P_λ, Q_λ)`` is affine in ``λ`` and
     ``(P, Q) -> Σ (P - e^ε Q)_+`` is convex (a sum of positive parts of linear maps).
(P3) ``h(c, 0) = 0`` (``u = v``) and ``h >= 0``, so by (P2) ``h(c, λ)/λ`` is non-decreasing:
     ``h`` is non-decreasing in ``λ``.
(P4) for every threshold ``κ'`` (cut), ``h(c, λ) >= A_κ' + λ B_κ'``, the value of the fixed set
     ``{a >= κ'}``: ``A = -(e^ε - 1)(B_c(κ'-1)/2 + S_c(κ'))``, ``B = d (1 + e^ε) B_c(κ'-1) >= 0``
     (``B_c`` = Bin(c, 1/2) pmf, ``S_c`` its tail ``P[Bin >= κ']``); the optimal cut gives equality.
(P5) ``λ(t, j)`` is non-decreasing in ``t`` and convex non-increasing in ``j`` (``t / (t + κ j)``).
     Hence ``G(j) = h(c, λ(t, j))`` is convex and non-increasing in ``j`` (a convex
     non-decreasing function of a convex function).
(P6) given ``C = c``, ``J'`` is ``Bin(n-1-c, ρ)``: stochastically non-increasing in ``c``.

3. Certified sums over blocks of totals (*derived*)
---------------------------------------------------
For a block ``t1 <= t <= t2`` (all ``j``), by (P1, P3, P5):

    h(t2 - 1, λ(t1, j)) <= h(t - 1, λ(t, j)) <= h(t1 - 1, λ(t2, j)) =: G_up(j).

*Upper bound.* ``G_up`` is convex and non-increasing in ``j``; at integer breakpoints
``y_1 < ... < y_m`` its piecewise-linear interpolant (flat after ``y_m``) majorises it at every
integer ``j >= y_1``, and for ``j < y_1`` we bound ``G_up <= 2d`` (the kernel is at most the first
user's total variation ``u - v <= 2d``). Writing the interpolant as an anchor line plus hinges,

    Σ_{t in B, j} Pr[t, j] PL(j) = M g_k + b_k E[(J - y_k); B] + Σ_i Δb_i E[(J - y_i)_+ or (y_i - J)_+; B],

which needs only the block mass ``M`` and hinge expectations (the anchor's first moment is
``E[(J - y_k)_+; B] - E[(y_k - J)_+; B]``, which does not cancel against ``y_k M``). Each hinge
``E[f(J) 1{T in B}]`` with ``f`` monotone is bracketed by (P6): it equals
``Σ_branch weight · Σ_{c} P[C=c] E[f(J) | c]`` and ``E[f(J) | c]`` is monotone in ``c``, so it lies
between the values at the ends of the block's ``c`` range (closed forms:
``E[(X - x)_+] = (mρ - x) P[Bin(m-1) >= x] + x (1-ρ) P[Bin(m-1) = x]`` for ``X ~ Bin(m, ρ)``).
Each term takes the end of its bracket that makes the total larger.

*Lower bound.* By (P4) and (P5), for any tangent point ``ŷ`` and cut ``κ'``,
``h(t2-1, λ(t1, j)) >= A + B (λ(t1, ŷ) + λ'(t1, ŷ)(j - ŷ))`` (a line in ``j``, since ``B >= 0`` and
the tangent of the convex ``λ`` lies below it). A block at least :data:`SHARE_WIDTH` wide takes
``A, B`` at ``t2`` clones instead (by (P1) ``h(t2, ·) <= h(t2 - 1, ·)``, so its lines are minorants
too; one clone more than ``t2 - 1`` changes them by far less than the block's width does, and the
next block's upper values use the same clone count, so the two share one kernel table row). Any assignment of such lines to pieces of the
``j`` axis is a minorant; expanding at the piece boundaries gives the same hinge and tail
functionals, each taken at the end of its bracket that makes the total smaller. The lines come
from the lam-space cut structure, never from differences of computed kernel values; the
rounding error of each line is charged on its own piece (mass and distance bounded by the
same functionals).

The engine (:class:`_Engine`) runs this for any mixture of the form of :class:`_Model`
(``λ(t, z) = t / (t + κ w)`` with ``w`` affine in ``t`` and ``z``; it works in ``v = ±z`` so that
``λ`` falls with ``v``); the blanket is one instance, the third-value dataset another.

For a block of one total (``t1 = t2``) the brackets on the functionals collapse, and with
breakpoints at consecutive integers the interpolant and the lines are exact at the integers.
Breakpoints must stay where ``λ(t2, ·)`` is a convex function with values in ``[0, 1]``
(``w >= 0`` below); a chord reaching past that region is *not* a majorant.

*Computation* (no effect on validity). The breakpoints of all blocks lie on one nested grid
(level ``l``: multiples of ``H / 2^l`` near the block's mean, :func:`_grid_points`), so blocks
share them. The binomial quantities behind the functionals are cached per ``(m, x)``; the tails
``P[Bin(m) <= x]`` / ``P[Bin(m) > x]`` for many ``m`` at one ``x`` come from one Boost value and
the exact recurrences ``P[Bin(m-1) <= x] = P[Bin(m) <= x] + ρ P[Bin(m-1) = x]``
(:func:`_tails_by_runs`: Boost's cdf is slow in the bulk at large ``m``), and the branch shifted
by one (``J = J' + 1``) from the unshifted one by exact identities (:func:`_shifted`). The
kernels of many ``λ`` at one clone count ``c`` come from one Boost pmf and sf and the exact
ratio ``B(a)/B(a-1) = (c-a+1)/a`` (:func:`_kernel_table`, rows kept across the ``ε`` of a
search), and the sf of rows at nearby clone counts is walked from one Boost value per chain by
``S_{c+g}(a) = S_c(a) + Σ_r P[Bin(g, 1/2) >= r] B_c(a-r)`` with its error charged per step
(:func:`_walk_tops`). The gap of each block is split into a part due to its width in ``t`` and a
part due to its breakpoints; a round splits blocks in ``t`` (as many parts as the first-order square-root
rule asks for the goal) and raises levels (0 to 3, by the second-order cube-root rule), so a
search refines in a few rounds. The caches (:class:`_Rows`: kernel table rows; the kernel requests
of the current blocks) hold values computed by the same formulas with
the same error budgets as a fresh computation; the search's estimates (:meth:`KrrBlanket.surrogate`,
:meth:`KrrBlanket.log_slope`) only choose where to evaluate. None of this affects validity: every
partition, every grid and every cached value gives a certified bracket by the arguments above.

*Kink chains* (:mod:`.krr_chains`, its own module docstring and certificate: spec §3's trinomial form summed along
chains of cells ``(t, a) -> (t + 2, a + 1)``, every binomial value walked from a few Boost values per chain). From
:data:`CHAINS_MIN_N` to :data:`CHAINS_MAX_N` users (k from :data:`CHAINS_MIN_K`, ``e^ε0 + 2 <= MAX_J``) they answer
first (:attr:`_BlanketBackend.use_chains`, a cost decision: 0.3-0.8x the routes below, 2026-11-24) at an ``ε`` where
their estimated cells are few enough (:meth:`_BlanketBackend.chains_cheap`, krr105); the routes below
answer where they decline or their bracket stays too wide, and from that ``ε`` on
(:attr:`_BlanketBackend.chains_fail_from`).

*Window of single totals* (:class:`_TotalsWindow`, whose boundaries at large ``n`` lie on a grid
so that their masses come from runs over the sizes, class docstring *Grid*; which route answers is a cost decision,
:attr:`_BlanketBackend.route`: the window alone when ``mean ± (8 sd + 40)`` holds at most
:data:`WINDOW_ALONE_MAX` totals, the split route below while its central window spans at least
:data:`HYBRID_MIN_SD` sd (up to ``n ~ 3e7 .. 1e8``), else the block engine; from ``n = 3e7`` where the
mean clone count is small (large ``k``) the route ``lines`` first (:class:`_LineWindow`: one line and
one chord per total, exact in ``λ`` over *all* ``j``, no cdf of ``J``; the block engine on the other
totals), falling back to the split route or the block engine where its chords would be too loose
(n = 1e9, k = 100: 18.6k blocks, 140 ms -> 22k totals of the line window, 47 ms); the block engine alone
also answers when a window route's bracket is too wide, e.g. for deltas far below 1e-9 where the
totals outside it matter).
Every total of ``mean ± (8 sd + 40)`` is summed on its own, and for each the sum over ``j`` is
done *exactly in* ``λ``: since ``Pr[t, j] λ(t, j) = Pr[counted, t, j]``, a line ``a + b λ`` summed
over a set of ``j`` is ``a`` times a mass plus ``b`` times a counted mass, both binomial cdfs. The
``j`` axis is cut where the optimal cut of the kernel changes (a few kinks per total), so the
chords of the upper bound coincide with the lines of the lower bound: the bracket closes to
rounding (~1e-9 relative) with ~5-9 pieces per total and no refinement rounds. At an ``ε``
within 1e-5 (relative) of the last, kinks within 0.1 sd of a boundary whose masses are cached
are moved onto it (:meth:`_TotalsWindow._snap_kinks`; tightness only, the evaluation is repeated
without it when the bracket gets too wide for the rtol asked).

*Split route* (*derived*; tested against an independent sum with the split where a single total
carries ~1 % of the mass). The sum over ``t >= 1`` is a sum of non-negative terms over disjoint
sets of totals: a central window ``t_lo .. t_hi`` (``mean ± (4 sd + 40)``, at most
:data:`HYBRID_HALF_TOTALS` on each side, :data:`HYBRID_WIDE_TOTALS` where the sd of ``T`` is at least
:data:`HYBRID_WIDE_SD`) summed as above with nothing charged for the totals
outside it, and the block engine whose blocks partition the other totals ``1 .. t_lo - 1`` and
``t_hi + 1 .. n`` (its initial edges include ``t_lo`` and ``t_hi + 1`` and the blocks inside are
dropped; refinement only splits blocks, so no block ever reaches into the window). Each part's
bracket is certified by its own argument, so their sums bracket ``δ``; the two additions are
charged ``2u`` relative. The engine refines until the *whole* bracket meets the request (its
goal counts the window's width and lower end). The window's half-width is a measured cost
balance (near the mean, where the engine alone needs blocks of single totals, a total costs the
window less than the engine; at n = 1e5 .. 1e6 the outer totals hold a few per cent of the mass
and take the engine a few hundred coarse blocks, at 1e7 about a third of it).

*lower_at* (*derived*; :attr:`KrrBlanket.lower_at`, which the search uses to certify the low end
of a bracket without evaluating it). For a fixed cut ``κ'`` the line of (P4) is ``A(ε) + λ B(ε)``
with ``A(ε) = -(e^ε - 1) X``, ``B(ε) = (1 + e^ε) Y``, where ``X = B_c(κ'-1)/2 + S_c(κ') >= 0`` and
``Y = d B_c(κ'-1) >= 0`` do not depend on ``ε``, and (P4) holds at *every* ``ε`` (the value of a
fixed set). So from the last evaluated ``ε_l`` to any ``ε >= 0``: ``A(ε) = r_A A(ε_l)``,
``B(ε) = r_B B(ε_l)`` with ``r_A = (e^ε - 1)/(e^{ε_l} - 1) >= 0`` and ``r_B = (1 + e^ε)/(1 + e^{ε_l})
> 0``. Nothing else the lower bounds use depends on ``ε``: the masses, the functionals and their
brackets, the pieces and breakpoints, the tangent points ``ŷ`` and slopes ``λ'(t1, ŷ)``, the clone
count of each line, the assignment of lines to pieces (chosen at ``ε_l``, but any choice is a valid
minorant). Hence the lower-bound construction of the last evaluation, re-run with every line's
coefficients scaled, is a lower bound at ``ε``: the window sums, per piece, the better of its two
lines and 0 exactly in ``λ``; the engine re-runs its lower assembly on the same blocks, each
functional's bracket taken at the end that makes the total smaller *for the new coefficients* (a
switch coefficient ``ΔA + ΔB(...)`` and the anchor line's value can change sign with ``ε``, so
the ends are picked again, not reused); the split route adds its two parts (disjoint totals, one
addition charged ``2u``). Floating point: a computed coefficient ``x`` with ``|x - x*| <= x_err`` at
``ε_l`` and a computed ratio ``r`` within ``e = 8u`` of the exact one give ``|fl(r x) - r* x*| <=
r ((u + 2e) |x| + (1 + 2e) x_err)`` (:func:`_scaled_line`), charged in place of ``x_err``; the rest
of the assembly charges its roundings as an evaluation does. At ``ε = ε_l`` the ratios are 1 and
only the charges grow, so the result does not exceed the evaluated lower end (tested). No Boost
call: the window's cost is a few vector operations per piece, the engine's about half of one
assembly (5-8 ms at n = 1e9). Answered within :data:`LOWER_AT_REACH` (relative) of ``ε_l`` only
(the lines were chosen for ``ε_l``; the loss against a fresh lower end grows as the shift squared,
measured ~1e-10 relative at a shift of 1e-6, 1e-7 at 1e-4, 4e-6 .. 9e-5 at 9e-4); 0 elsewhere.

*upper_near* (*derived*; :meth:`_TotalsWindow.upper_near`, proof there). For every set ``S`` of counts
the kernel satisfies ``h_{g'} <= h_g - (g' - g) Q(S_{g'})`` (``g = e^ε``; ``S_{g'}`` the optimal set at
``g'``), and a cut whose likelihood ratio is certified above (below) ``g'`` bounds ``Q(S_{g'})`` from below
(above) through the evaluation's kernel table rows. So the window's upper end at an ``ε'`` within
:data:`UPPER_NEAR_REACH` of its last evaluation follows from that evaluation's boundaries, masses and
kernel bounds (the chords re-summed), and the split route adds the tail engine's upper end at the
last ``ε`` for ``ε' > ε`` (non-increasing in ``ε``). :meth:`KrrBlanket.bounds` answers such an ``ε'``
with ``[lower_at, upper_near]`` when that meets the rtol (its width grows by ~8 % of the change of
``δ``: a kink that moved inside a piece leaves its chord above the kernel), from ``n = 1e3`` on:
the search's step next to an evaluation decided infeasible costs ~1.5 ms instead of ~4.5 ms at
``n = 1e5`` (cost only; both ends certified either way).

*Costs* (measured, CPU, cold ``ε(δ)`` queries at ``δ = 1e-6``, rtol 1e-6; cost only, none of it
bears on validity). Where the time goes (k = 3, eps0 = 1): at n = 1e3 two window evaluations of
~1.8 ms (a third is a memo hit), the surrogate ~0.5 ms and the window's set-up ~0.4 ms; at 1e5
(split) the window's first evaluation ~13 ms (boundary masses 7 ms, of which Boost's cdf/sf
~4.2 ms and pmf ~0.6 ms for ~10.6k boundaries; kernels 3 ms), its second ~5.5 ms (kinks snapped
onto cached boundaries) and the block engine on the outer totals ~4-6 ms with its set-up; at 1e7
(split, one evaluation) the window ~16 ms and the engine ~31 ms in three rounds (48 -> 248 -> 1763
blocks, the last 20 ms); at 1e9 (engine) three rounds before this session's changes (two now at
k = 3 and 10), :meth:`_Engine._make_blocks` ~60 % (the hinge functionals' :func:`_tails_by_runs` and the
clone-count masses) and the kernel tables ~25 % (at n = 1e9, k = 100, eps0 = 0.5: 18.6k blocks of
single totals, the kernel rows ~30 ms and the hinge functionals ~27 ms of ~140 ms; the engine's table
rows only 4-17 cuts wide there, a narrower row store (32 or 24 instead of 104) gained 0-7 %: not adopted).
Adopted: :func:`_tails_by_runs` asks Boost for each run's tail on its own side only (it computed
both the cdf and the sf of every run and kept one; bit-identical values): n = 1e9, k = 10, eps0 = 2
30.9 -> 27.7 ms, k = 3, eps0 = 1 21.0 -> 20.3 ms.
Adopted: the block engine's refinement reaches its goal in one round where the 32-fold cap alone
kept it from it (:data:`T_ONE_ROUND`, :data:`ONE_MARGIN`) and splits greedily where little remains to
gain (:data:`GREEDY_NEED`): 54 engine-route queries (n 1e8/3e8/1e9, k 3/10/100, eps0 0.5/1/2, delta
1e-6/1e-9), CPU min of 3 alternating in-process runs: geometric mean 0.90x; n = 1e8 k = 3 delta = 1e-6
28-40 -> 23-26 ms, 3e8 k = 3 23-25 -> 17-18 ms, 1e9 k = 10 28-42 -> 22-35 ms, 1e8 k = 10 delta = 1e-9
101-105 -> 79-84 ms; slower: 1e8 k = 3 eps0 = 1/2 delta = 1e-9 (the v-part emerging after the jump
needs a fix-up round: 29 -> 40, 37 -> 44 ms) and 1e9 k = 3 (the margin's extra blocks: 11-14 -> 13-15 ms).
Not adopted there: 64 (n = 1e9, k = 3 only), 128, 1024 (1e8 k = 10 eps0 = 2 up to 2x slower), no margin
(3e8 k = 10 delta = 1e-9 1.3x slower), margin 0.7, the one-round rule on the split route's outer totals
(n = 3e6 .. 1e7 4-7 % slower), the t-part compensating a capped v-part in every round (at tiny deltas it
met MAX_CELLS unconverged: n = 3e8, k = 3, eps0 = 0.5, eps = 3e-4), two balanced rounds (sqrt of the
reduction each; 1e8 k = 10 eps0 = 2 85 -> 156 ms), 2x/4x finer initial blocks for n >= 1e8 (from 0.7x to
2x by case), coarser initial blocks beyond 6 sd for the split route (within noise). Adopted next: the
t-part's split counts water-filled (blocks cut into single totals keep no t-part, so the goal goes to
the others): n = 1e9, k = 100, eps0 = 0.5 198 -> 137 ms (24178 -> 18576 blocks), 3e8 64 -> 51 ms; the
other queries of n 1e5 .. 1e9 (k 3/10/100, eps0 0.5/1/2, delta 1e-6/1e-9) 139 of 144 the same blocks, the
rest fewer (n = 1e8, k = 100: 3877 -> 2925, 3333 -> 2947; 1e7, k = 10, delta 1e-9: 2581 -> 2446). Adopted
last: the window's boundary grid from n ~ 1e6 (:data:`GRID_LOSS`; n = 1e6 .. 5e6 0.67-0.9x). Timings on
this shared machine vary by ~10 % between runs of one build. Also measured and not adopted, late in
the session: the central window 2500 or 4000 totals wide instead of 1500 with the grid from 1e6 (n 1e6
.. 3e7: geometric mean 1.00x and 1.17x); the one-round rule on the split route with greedy rounds
(1.02x: at n = 1e7, k = 3 the v-part is 30 % of the gap after a 29-fold t-round, so a jump is
followed by a round for it anyway); a better surrogate (its root at n = 1e6 is 3e-6 .. 4e-5 from
eps(delta), so most searches there take two evaluations): 5- and 7-point Gauss-Hermite changed
little, the 3-point Gauss rule of the binomials themselves (Krawtchouk) with the clone count
interpolated between integers brought the median to 1e-6 but only 2 of 24 cases below 4e-7 (the
kernel's kinks, not the quadrature's order, limit it).
Measured and not adopted: (i) the window's boundary masses walked along chains of boundaries of
consecutive totals (a kink's boundary at total ``t`` has a partner within a few units at ``t - 1``
or ``t - 2``; ``F_m(y') = F_{m+1}(y') + ρ P_m(y')`` and pmf sums over the shift, anchors every 128
boundaries, errors charged per step; the anchor pmf's relative error enters as ``rel |x_c - x_0|``,
a common factor): within its error bounds against scipy's tails (a prototype, never in the package), ~65-70 % of the boundaries
walked at n = 1e5 .. 1e6 (walks into a tail lose relative accuracy and fall back to Boost), but
the numpy walk costs ~0.8 µs a walked boundary against ~0.45 µs for Boost's tail and pmf at these
sizes: queries 1.1-1.3x slower (n = 1e5, k = 3: 22.1 -> 27.2 ms; 1e6: 37.9 -> 47.9 ms); (ii) kinks
placed only within a band of the third-value count's mean (±5 .. 7 sd): 3-10 % faster, but brackets
up to ~1000x wider in relative terms and several cases (n = 1e3, k = 3; 1e5, k = 10; 1e6, k = 3,
eps0 = 3) fell back to the block engine at 5-10x the time; (iii) WALK_MIN_C 2e4 or 5e3 instead of
1e5: no change at n = 1e4 .. 3e5 (within noise).
Adopted 2026-11-24: every evaluation runs inside :func:`.blanket_matrix.reused_memory`
(:meth:`KrrBlanket._bounds`; once any engine had fixed glibc's mmap threshold, each large temporary
was a fresh mapping: n = 1e7 cold 62.8 -> 33.0 ms at k = 3, eps0 = 1, 59.1 -> 23.8 ms at k = 10,
eps0 = 2; 1e6 49 -> 21 and 26 -> 16 ms), and int64-key sorts for the runs (2-5 % at n = 1e6 .. 1e7).
Measured then and not adopted (CPU, min of 5-6 interleaved processes): ``np.empty`` for the row
stores' growth (within noise); :data:`HYBRID_HALF_TOTALS` 1000 or 2000 (1000: 1.3x slower at
n = 1e6 .. 3e6, 2000: within noise at 3e6, slower at 1e6); the tail engine's initial blocks 0.25 or
1 sd wide instead of 0.5 (within noise); the route ``lines`` from n = 1e6 (its chords are too loose
there: it falls back); a start estimate summed over every total (three-point rule in ``J`` only):
its root at n = 1e3 is within 1e-6 .. 3e-4 instead of 5e-5 .. 1e-2, but it costs 6-86 ms a search.
Adopted 2026-11-24 (later): the surrogate's Boost pmf and sf once per distinct ``(k, c)`` below
:data:`STEER_MIN_C` (:func:`_per_distinct`; its 70-point look at n = 1e4 asked 1260 tails, 209
distinct: 0.9 -> 0.35 ms a call), and :func:`_tails_by_runs`' rows by a lookup instead of a
``searchsorted``. Bit-identical (grid of 288 queries); CPU min of 5 interleaved processes, cold:
n = 1e4 k = 3 6.85 -> 6.28 ms, k = 10 6.24 -> 5.97 ms; other n within noise.
Then (bit-identical, same grid): the grid test of the window's boundaries by an integer mask instead
of a float ``np.mod`` (~0.3 ms at 22k boundaries), and the engine's anchor moments from the anchor
cells only (were two full-size picks of a coefficient that is 0 off the anchors): n = 1e7 .. 1e9
0.94-0.98x (CPU min of 5 interleaved processes).
Then (bit-identical, same grid): :func:`_tails_by_runs` scatters its values to the requests once
(was per group of runs, with four gathers each), sorts the requests by group with 16-bit keys
(numpy's radix sort) and leaves out a walk no run of a group takes (its products are ones); the
refinement's full assembly takes the parts its quick assembly already has. :func:`_tails_by_runs`
on the calls of four queries (n = 1e6, 1e7, 1e8, 1e9): 19.2 -> 17.5 ms (CPU, sum of mins of 15).
Then: the window walks boundaries near cached ones (:meth:`_TotalsWindow._walk`) only from
:data:`WALK_MIN_N` users on (below, Boost's tails are cheaper than the walk's vector operations): CPU
min of 5 interleaved processes, cold, n = 100 .. 1e3 0.92-0.99x, 1e4 0.96-0.99x, 1e5 within noise; the
grid of 288 queries: 226 identical, the rest overlap the frozen code's brackets (upper ends at most
4.5e-7 relative above, the search's steps differ), converged never worse.
Measured then and not adopted (CPU, min of 4 alternating in-process runs, delta 1e-6 unless said):
the block engine alone aiming its rounds at 0.95 (or 1.0) of the goal instead of GAP_AIM = 0.8 (n 1e8
.. 1e9: 0.89-0.99x at delta 1e-6, but at 1e-9 a missed goal costs a round: 3e8 k = 10 1.40x, k = 3
1.27x); the tail engine's initial blocks 0.125 sd wide within 0.5 or 1 sd of the central window (n = 1e6,
k = 3 0.88-0.90x, but 3e6 .. 1e7 1.06-1.10x, geometric mean 1.02-1.03x); HYBRID_SD 3 (n = 1e5 k = 3
1.36x); GRID_RUN_GAP 32 (within noise); NEAR_MIN_N 10 (1.02x). Profile after these (n = 1e7, k = 3,
one window evaluation and a three-round tail engine): :func:`_tails_by_runs` ~20 % (its Boost anchors
about a quarter of that), kernel table rows ~13 %, the window's own vector sums ~10 %, the engine's
assemblies ~7 %; perf: numpy gathers (``take``/fancy indexing) ~10 %, the interpreter ~10 %, Boost's
ibeta ~4 %: at these sizes the evaluation is bound by the count of numpy calls and gathers, not by
arithmetic.

4. Relation to the clone bounds (spec blanket.md §6; *derived*, tested)
-----------------------------------------------------------------------
*blanket <= krr.* The ``krr`` method is ``(1 - p0) · HS(ClonePair(n, q, q, pa', pb', 0))`` =
``(1 - p0) Σ_c Pr[C = c] h(c, 1)``. By (P2)-(P3), ``h(c, λ) <= λ h(c, 1)``, and
``λ(t, j) Pr[t, j] = Pr[counted, t, j]``; summing over ``j`` and ``t``,
``δ_blanket <= Σ_t (1 - p0) Pr[C = t-1] h(t-1, 1) = δ_krr``.

*blanket <= stronger clones.* Let ``r = 1/(e^ε0+1) >= q`` and ``θ = q/r = 1 - p0``. Start from the
stronger-clone pair (first user ``(pa', pb')``, each other user a clone of either kind with
probability ``r``; observation ``(a, b)``). Post-process: keep each counted report
independently with probability ``θ``; let ``T'`` be the kept total and ``D`` the dropped one; draw
``E ~ Bin(n - T' - D, ψ)`` and output ``(a', b', J = D + E)``. The first user is kept with
probability ``θ = 1 - p0``; each other user is a kept clone with probability ``2rθ = 2q`` and a
dropped one with probability ``2r - 2q``; exactly one of "first kept" / "first dropped" holds, so
``n - T' - D = n - 1 - C - (dropped others)`` (``C`` = kept clones). Given ``C = c``, the dropped
others are ``Bin(n-1-c, φ)``, ``φ = (2r-2q)/(1-2q)``, and with ``ψ = (ρ - φ)/(1 - φ)``
(``0 <= φ = κ ρ <= ρ``) the dropped others plus ``E`` are ``Bin(n-1-c, ρ)``: the output has
exactly the law of the blanket observation ``(a, b, J)`` under each hypothesis. A Markov kernel
applied to both hypotheses cannot increase the hockey-stick divergence, so
``δ_blanket <= δ_stronger-clones``. For ``k = 2`` (``θ = 1``) they are equal.

5. Attained lower bounds (``dataset-lower``; *derived*)
-------------------------------------------------------
See :class:`KrrDatasetLower`: exact hockey-stick divergences of concrete neighbouring datasets
(the full output histogram), certified from below. Measured (``benchmarks/bench_blanket.py``,
``δ = 1e-6``): for ``k >= 3`` the blanket ``ε`` is within 0.1 % of the attained one at
``n = 1e3`` and within 0.01 % from ``n = 1e4``; for ``k = 2`` the blanket is the stronger-clone
pair and stays 10-47 % above binary RR's attained value (the generic gap, not closed here).

6. A real k: three-class blanket pairs (*derived*; tested against the oracle's exact blanket)
------------------------------------------------------------------------------------------------
Spec blanket.md §2 writes the blanket bound of one ordered pair with classes ``j`` (masses ``p_j``,
ratios ``a_j = R(x1)(y)/m(y)``, ``b_j = R(x1')(y)/m(y)``) as ``δ(ε) = (1/n) E[S_+]``, ``S = Σ_j c_j N_j``,
``c_j = a_j - e^ε b_j``, ``(N_j, rest) ~ Mult(n; p_j, 1 - γ)`` (:mod:`.blanket_matrix`, whose
:class:`~.randomizers.PairStructure` this is). Take a pair of exactly three classes
``(P, r, 1)``, ``(P, 1, r)``, ``(O, 1, 1)`` (unary encoding and local hashing with ``k = 2``: the bits /
hash hits at ``x1`` and ``x1'``; spec §4) of a pure LDP randomizer. Every output ``R(x1)`` reaches has
``m(y) > 0``, so ``Σ_j p_j a_j = Σ_y R(x1)(y) = 1``: ``P (r + 1) + O = 1`` exactly. Put
``k = 2 + O/P`` (real, ``> 2``) and ``q = 1/(r + k - 1)``. Then ``q = P/(P (r + 1) + O) = P``,
``O = (k - 2) q``, ``1 - γ = 1 - 2P - O = (r - 1) q``, and the coefficients ``r - e^ε``,
``1 - r e^ε``, ``1 - e^ε`` are those of spec §3 with ``e^ε0 = r``: *the pair's δ is spec §3's trinomial
form at this real k*. Nothing in §1-§3 needs ``k`` to count values once the form is read this way:

* §1's hockey-stick form: ``(1/n) E[S_+] = Σ_h (P(h) - e^ε Q(h))_+`` over class histograms ``h``, with
  ``P`` the first user drawn from ``(r q, q, (k-2) q)`` (on ``x1``, ``x1'``, a third class) and the
  others from ``(q, q, (k-2) q, (r-1) q)``, because ``Mult_{n-1}(h - e_j) = Mult_n(h) h_j / (n p_j)``
  gives ``P(h) - e^ε Q(h) = Mult_n(h) S(h) / n``: an identity of the per-user laws, which are laws
  for every real ``k >= 2`` (non-negative, ``(r + k - 1) q = 1``);
* §2: ``(T, J)`` has one law under both hypotheses and the count of ``x1`` given it is the kernel
  pair; ``Pr[silent, t, j] / Pr[counted, t, j] = (p0 / (1 - p0)) (j / t) (2q / ((k-2) q)) = κ j / t``
  holds for real ``k`` (the multinomial coefficients do not involve ``k``); (P1)-(P6) are about
  binomials in ``c``, ``t``, ``j`` and the convexity in ``λ``;
* §3: every engine sums over totals ``t`` and third-class counts ``j`` (integers in ``0 .. n``) with
  masses from ``Bin(n - 1, 2q)`` and ``Bin(m, ρ)``, ``ρ = (k - 2)/(e^ε0 + k - 3)``.

Where ``k`` enters the upper-bound engines: only through :class:`KrrConstants` (``q``, ``p``,
``p0 = (k - 2) q``, ``ρ``; ``κ``, ``d``, ``pa``, ``pb`` do not involve it), the cache key of
:class:`KrrBlanket` and the test ``k == 2`` (binary RR: the stronger-clone pair; a real ``k`` is
``> 2``). It is never a count, a loop bound or an array size there. It *is* an integer in the
dataset lower bounds (:class:`KrrDatasetLower`: ``k`` values of the other users' data,
``FAMILY_SCAN_MAX_N[min(k, 4)]``) and in the k-RR randomizer: both keep their integer validation;
:class:`KrrBlanket` takes a real ``k`` only with ``real_k=True``.

*Rounding of the parameters* (:class:`PairKrrBlanket`). The engine is given ``ε0`` and
``k^ = fl(2 + fl(O/P))`` from the stored masses. The ratio ``r`` is taken as exactly ``e^ε0`` of the
randomizer's own ``ε0`` (the named randomizers define ``a = e^ε0`` exactly and store ``math.exp(ε0)``,
as :class:`KrrConstants` computes it: the engine's convention for k-RR itself), so only ``k`` differs
from the exact pair's ``k* = 2 + O*/P*``. With the stored masses within ``ε_s`` (the structure's
``rel_err``) of the exact ones, ``|k^ - k*| <= D = u k^ + 1.01 (2 ε_s + u) w`` (``w = fl(O/P)``; one
quotient, one sum). Both per-user laws are of the k-RR form, ``π(k) = (q, q, (k-2) q, (r-1) q)`` with
``q = 1/(r + k - 1)``, and each ratio ``π*_i / π^_i`` and ``π^_i / π*_i`` is at most
``1 + η = (1 + D/(k^ - D))(1 + D/(k^ - 2 - D))`` (``q*/q^ = 1 + (k^ - k*)/(r + k* - 1)``, ``q^/q* = 1 + (k* - k^)/(r + k^ - 1)``
and ``r + k - 1 >= k >= k^ - D`` for both ``k`` as ``r >= 1``;
``(k* - 2)/(k^ - 2)`` and its inverse within ``1 + D/(k^ - 2 - D)``). ``δ = (1/n) Σ_h Mult_n(h; π) S(h)_+``
with ``S(h)`` not depending on ``π`` and ``Mult_n(h; π*) <= (1 + η)^n Mult_n(h; π^)`` term by term
(a product of ``n`` per-user probabilities), so ``δ* <= (1 + η)^n δ^`` and ``δ* >= (1 + η)^-n δ^``: the
engine's upper end is multiplied by ``e^{n η}`` and its lower end divided by it (``η ~ 1e-13`` for the
named randomizers' ``ε_s = 2.8e-14``: ``1e-9`` relative at ``n = 1e4``). Sharper (§7, (H) and (H')):
``δ = E[f]`` over the ``n`` users' product law with ``f = S_+/n <= r`` and every per-user ratio within
``1 + η``, so ``N χ² <= n η²``: a log factor ``~ η sqrt(2 n log(r/δ))`` (2e-9 instead of 1e-6 at
``n = 1e7``); :meth:`PairKrrBlanket._log_charge` takes the smaller. The engine's own treatment
of ``e^ε0`` and of its derived constants is §7's (its ``k^`` taken as exact there).

7. Rounding of ε0 and of the derived constants (issue 10; *derived*, tested)
------------------------------------------------------------------------------
The user states ``ε0``; every upper end must hold for the exact k-RR with ``r* = e^ε0`` (a real number).
The engines take float constants as exact and charge only their own evaluations at those floats.

*Inventory* (the upper-bound engines: :class:`_TotalsWindow`, :class:`_LineWindow`, :class:`_Engine` on
:func:`blanket_model`, all from :func:`upper_constants`; before: :class:`KrrConstants` of ``fl(exp(ε0))``):

* ``r = e^ε0`` (``fl(exp(ε0))``, within an ulp): enters only through the constants below.
* ``q2 = 2q = 2/(r + k - 1)``: the clone count ``C ~ Bin(n-1, q2)`` (the windows' ``pmf_points``, the
  engine's clone masses; the routing's mean and sd). A rate off by ``x`` (relative) moves the log of the
  mass at ``c`` by about ``x (c - mean)/(1 - q2)``: up to ``n x`` at the extreme counts.
* ``ρ = (k-2)/(r + k - 3)``: ``J' | c ~ Bin(n-1-c, ρ)`` in every hinge functional and tail
  (:func:`_tails_by_runs`, :func:`_hinges`, :func:`_branch_cdfs`, the lineage walks). Its complement
  ``1 - ρ`` (the non-blanket others) has a relative error ``~ (u/2)(k-2)/(r-1)``: 7.7e-14 at
  ``k = 100, ε0 = 0.1``.
* ``p0 = (k-2) q`` and ``fl(1 - p0)``: the first user's branch weights (``W0``, ``W1``, the engine's
  branches): one user, a factor that does not grow with ``n``.
* ``κ = 2/(r + 1)``: ``λ(t, j) = t/(t + κ j)`` of every kernel request (the engine's ``λ``; the windows'
  pieces and kinks), while the windows' sums are exact in the ``λ`` the float masses imply,
  ``κ_m = (p0/fl(1 - p0)) q2/((1 - q2) ρ)``, which the windows' 16u slack must cover. It did not always:
  ``fl(1 - p0)`` has the absolute resolution of an ulp of 1, so ``κ_m`` was ``~u p0/(1 - p0)`` off
  (``1.9e-15 = 17u`` at k = 100, ε0 = 0.538; ``5e-8`` at k = 1e9, small ε0). Now ``κ`` is ``κ_m``
  rounded down (within an ulp).
* ``d = (r-1)/(2(r+1))`` and ``pb = 1/(r+1)`` (:class:`FirstUserGap`): the first user's ``u, v`` in every
  kernel; the kernels charge ``u, v`` within ``4u`` of their values at the exact ``d, pb``
  (:func:`_first_user_v`, :func:`_kernel_lines`' budget): not ``n``-fold.

In these terms the engines bound ``F^ = E_π^[f]``, ``f = h(T - 1, λ^(T, J))`` with ``λ^`` from ``κ``
(engine) or ``κ_m`` (windows), over the product law ``π^`` of the first user's branch (weights
``fl(1 - p0)``, ``p0``) and the others' classes (clone ``q2``, third ``(1 - q2) ρ``, rest
``(1 - q2)(1 - ρ)``; these three sum to 1 exactly in real arithmetic).

*Proof of the upper end.* (M) *The blanket δ is non-decreasing in r* (any real ``k >= 2``, fixed): by
§6 it is the hockey-stick divergence of two laws of class histograms (``x1``, ``x1'``, third, rest),
the first user from ``(r q, q, (k-2) q, 0)`` resp. ``(q, r q, (k-2) q, 0)``, the others from
``(q, q, (k-2) q, (r-1) q)``. For ``r' >= r`` (``q' <= q <= 1/k``) the channel that replaces each
report, independently with probability ``s = (q - q')/(1/k - q')``, by a draw from
``(1/k, 1/k, (k-2)/k, 0)`` maps each of the three laws at ``r'`` to the one at ``r`` (the ``x1'`` entry:
``(1 - s) q' + s/k = q``; the third entry follows, the rest shrinks by ``1 - s`` to ``(r-1) q``, the first
entry by the totals). It acts on the histogram (every entry alike), so it is one Markov kernel for both
hypotheses: data processing. (For integer ``k`` this is the garbling k-RR(ε0) = uniform replacement after
k-RR(ε0'), which commutes with the shuffler; the blanket *bound* itself is monotone, not only the exact
shuffled δ.) So ``δ_bl(r*) <= δ_bl(r')`` with ``r' = fl(exp(ε0))`` moved :data:`E0_UP_ULPS` ulps up.
(G) ``δ_bl(r') = E_π*[h(T - 1, λ*(T, J))]`` (§2 at ``r'``; ``π*`` the exact law at ``r'``,
``λ* = t/(t + κ* j)``, ``κ* = 2/(r' + 1)``). :func:`upper_constants` moves ``p0`` down until
``κ_m <= κ*`` and takes ``κ <= κ_m`` (checked in rational arithmetic), so ``λ^ >= λ*`` and by (P3)
``h(λ*) <= f``; ``d, pb`` are those of ``r'``. Hence ``δ_bl(r') <= E_π*[f]``, and ``0 <= f <= 2d < 1``.
(H) *Change of measure* (Hölder). Let ``c1 = max_b π*_1(b)/π^_1(b)`` (first user), ``s1 = fl(1 - p0) + p0``
and ``R = Π_i π*(X_i)/π^(X_i)`` over the ``N = n - 1`` others, ``x_i = π*_i/π^_i - 1`` per class,
``χ² = Σ_i π^_i x_i²``, ``x = max |x_i|``. With ``ν = π^_1 ⊗ π^_others`` (mass ``s1``),
``E_π*[f] <= c1 ∫ R f dν <= c1 (∫ f dν)^{1-1/α} (∫ f R^α dν)^{1/α}`` for every ``α > 1``, and
``∫ f R^α dν <= s1 Π E_π^[r_i^α]``. For ``α >= 2`` Taylor's theorem gives ``(1 + x_i)^α <= 1 + α x_i +
α(α-1)/2 · x_i² (1 + x)^α``, and ``Σ_i π^_i x_i = 0`` (both laws sum to 1), so ``E_π^[r^α] <= 1 +
α(α-1)/2 · χ² (1 + x)^α``. With ``F^ <= U`` (the engines' certified upper end):

    log(E_π*[f] / U) <= log c1 + min over α >= 2 of [ log(s1/U)/α + (α-1)/2 · N χ² (1 + x)^α ],     (H)

about ``sqrt(2 log(1/U) N χ²)`` at the best ``α``; also ``<= log c1 + N log(1 + x)`` (every ratio
pointwise). :meth:`KrrUpperConstants.charge_up` takes the smaller (:func:`_hoelder_log`), with ``c1``,
``s1``, ``N χ²`` and ``x`` computed exactly (``Fraction``) from the floats and rounded up. Measured at
``n = 1e9``, ``U = 1e-9``: ``log`` charge 3.6e-12 (k = 3, ε0 = 4) .. 1.7e-10 (k = 3, ε0 = 0.1) ..
5.1e-10 (k = 100, ε0 = 0.1, the rest class above); the pointwise bound would be 1e-7 .. 1e-4.
So ``δ ≤ δ_bl(r*) <= δ_bl(r') <= E_π*[f] <= charge_up(U)``: :meth:`KrrBlanket.bounds`' upper end.

*Lower ends* of :meth:`KrrBlanket.bounds` and :attr:`KrrBlanket.lower_at` stay the engines' (certified
below ``F^``, not charged): they bracket ``F^``, which lies within (H)'s factor of ``E_π*[f]``, itself an
upper bound on ``δ_bl(r*)`` within a few ulps of ``r`` and ``κ``. They are no privacy claim (the blanket is
an upper bound); ``converged`` says the upper end is within ``rtol`` of them.

*Lower bounds* (:class:`KrrDatasetLower`; a lower end may be loosened, never raised). For a *fixed* pair of
neighbouring datasets the exact shuffled δ is non-decreasing in ``r`` (the garbling above, per report, commutes
with the shuffler). Before, every family but the exhaustive scan took the nearest floats of ``e^ε0`` as exact
(the same ``n``-fold rate error, of either sign, uncharged). Now:

* the scan (:func:`_family_laws`, ``n <= 40``): unchanged; its ``η = 16 (n + 2) u`` covers each user's
  probabilities within ``~5u`` of those of ``e^ε0`` (one ulp of ``exp``, three roundings) plus the additions;
* binary RR, ``k = 3`` with ``a = 0`` and ``a = n - 1``: :func:`lower_rates` gives ``q = M/2^53 >= 1/(r_d + k - 1)``
  (``r_d <= e^ε0``) and ``p = 1 - (k - 1) q``, every probability of these pairs an exact float, so the pairs are
  *exactly* k-RR at ``r'' = p/q <= e^ε0`` (the loss: ``r'' = 1/q - (k - 1)`` is within ``(r + k - 1)^2 2^-53 / r``
  relative of ``r``, 1e-9 at ε0 = 16, k = 3; from ε0 ~ 30 it grows: at ε0 > 36.7 ``r''`` is ``2^53 - k + 1``; and
  with ``k`` large against ``r``: ε0'' = 0.09 for ε0 = 0.1 at k = 1e7, none from k ~ 1e8, review rev93d);
* ``k >= 4``, ``a = 0`` (:func:`dataset_model`, the block engine): the same ``q, p`` (so ``q2``, the first user's
  three branches and ``1 - 2q`` exact), ``κ`` rounded up and ``wz = -(1 - 1/r'')`` toward 0 (the engine's ``λ``
  at most the exact one: ``h`` non-decreasing in ``λ``, (P3)), ``d, pb`` of ``r''``; the float ``ρ`` is charged by
  the mirror image of (H): with ``y_i = π^_i/π*_i - 1``, ``χ'² = Σ π*_i y_i²``, ``F^ = ∫ f R^{-1} dμ <=
  (E_π*[f])^{1-1/α} (Π E_π*[(1 + y)^α])^{1/α}``, so

    log(E_π*[f] / L) >= -min over α >= 2 of [ log(1/L)/(α - 1) + α/2 · N χ'² (1 + y)^α ]            (H')

  for a lower end ``L <= F^`` (or ``-N log(1 + y)``; :func:`dataset_charge_down`). At ε0 = 16, k = 4 the rest
  class ``(1 - q2)(1 - ρ)`` is ``~1e-9`` off (relative): the charge is ``1.2e-8`` at ``n = 1e9``, ``L = 1e-9``
  (``1.1e-11`` at k = 10, ε0 = 1).

The upper ends of these brackets are the engines' (upper bounds on the datasets' δ at ``r''``, not charged).

*k = 2* is the stronger-clone pair of :func:`~shuffle_accountant.analyses.pair_for` (clone rate rounded
down 16 ulps: the rate lemma there; the first user's ``pa, pb`` moved to dominate the exact one: the mixing
lemma there).
:class:`PairKrrBlanket`: ``δ(k*, r*) <= e^{n η} δ(k^, r*)`` (§6, same ``r*``) and ``δ(k^, r*)`` is bounded as
above with ``k^`` exact (§6: (M) holds for real ``k``).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass, field
from fractions import Fraction
from types import EllipsisType
from typing import Callable

import numpy as np
from scipy import special

from ..errors import CertificationError, InvalidParameter
from ..validation import MAX_N
from . import binomial as bn
from .arrays import ragged
from . import fp
from .clones import ClonePair, HockeyStick
from .krr_chains import MAX_J, KrrChains, cells_estimate, saddle_estimate
from .krr_chains import fits as chains_fit
from .profile import DeltaBounds

#: Refinement stops (returning the certified bracket reached) beyond this many cells.
MAX_CELLS = 4_000_000
#: Brackets whose upper end is below this are not refined further (returned as they are).
TINY_DELTA = 1e-40
#: A block does not get a level with more breakpoints than this (its t-range is split instead).
MAX_POINTS_PER_BLOCK = 512
#: Largest reduction of the t-part (V_: the v-part) of the gap that one refinement round aims
#: at (more would overshoot where the first/second-order models of the gap are rough).
T_REDUCTION = 32.0
V_REDUCTION = 16.0
#: ... except that the block engine alone (not the split route's outer totals) lets the t-part go
#: up to T_ONE_ROUND-fold (each block in up to T_ONE_ROUND parts) where the T_REDUCTION cap alone
#: keeps a round from its goal and that meets it together with the v-part's reduction: the
#: first-order model is accurate to ~1.5x there (n = 1e8, k = 3: a 32-fold round left 31x less gap),
#: so one round replaces a 32-fold round and a 2-5-fold one (n = 1e8, k = 3: 50 -> 332 -> 1734 blocks
#: became 50 -> 1616; 1e9, k = 3: 50 -> 332 -> 656 became 50 -> 712). Cost only.
T_ONE_ROUND = 256.0
#: Such a round aims at this fraction of what the v-part leaves of the goal: a v-part hidden in the
#: coarse blocks' t-part emerges in the narrower ones (n = 3e8, k = 10, delta = 1e-9: 11 % of the
#: gap after the jump, which then missed by 4 % and needed another round; aiming at 0.85 it does not).
ONE_MARGIN = 0.85
#: A round whose needed reduction (gap over goal) is below this splits greedily: each block's part
#: count rounded down, then one more part for the blocks that gain most until the model meets the
#: goal (rounding up split nearly every block in two for a 1.3-fold reduction, e.g. after a one-round
#: jump that missed its goal by a few per cent because a v-part emerged in the narrower blocks).
#: Cost only.
GREEDY_NEED = 4.0
#: Blocks at least this wide (t2 - t1) take their lower lines at ``t2`` clones (not ``t2 - 1``).
SHARE_WIDTH = 8
#: From this many users on, the engine sums the clone-count mass of blocks narrower than
#: ENGINE_NARROW term by term (:func:`.binomial.interval_mass`'s ``narrow``: one pmf and exact ratios,
#: an error relative to the block's own mass) instead of differencing two Boost tails, which cost
#: ~30 us each near the mean at n = 1e9 (measured, CPU min of 5: n = 1e9 27.8 -> 22.7 ms (k = 3,
#: eps0 = 1) and 34.2 -> 31.3 ms (k = 10, eps0 = 2), 3e8 27.5 -> 24.0 ms; 1e8 unchanged). Cost only.
ENGINE_NARROW = 256
ENGINE_NARROW_N = 10**8
#: A refinement round aims at this fraction of the requested gap (what the rounding floor leaves
#: of it); the sizing rules tend to over-deliver, so a larger aim rarely costs another round.
GAP_AIM = 0.8
#: Largest refinement level of the breakpoints within a block (see :func:`_grid_points`).
MAX_LEVEL = 40
_U = 1.2e-16  # unit roundoff with a little slack
#: :meth:`KrrBlanket.lower_at` answers within this relative distance of the ``ε`` its state was
#: computed at (the search asks ``0.98 rtol`` below a point it just evaluated); farther, 0.
LOWER_AT_REACH = 1e-3
_RATIO_ERR = 8.0 * _U  # relative error bound of the computed ratios of :func:`_line_ratios`


def _rolled(x: np.ndarray, shift: int) -> np.ndarray:
    """``np.roll(x, shift)`` along the last axis for ``shift`` in ``{1, -1}`` (the same array: pure data
    movement), without ``np.roll``'s per-call overhead (~10 us; the engine and the window call it ~25 times a
    query). Cost only."""
    if shift == -1:
        return np.concatenate((x[..., 1:], x[..., :1]), axis=-1)
    assert shift == 1
    return np.concatenate((x[..., -1:], x[..., :-1]), axis=-1)


def _line_ratios(eps_from: float, eps_to: float) -> tuple[float, float] | None:
    """The factors by which the line of a *fixed* cut (property P4) moves from ``eps_from`` to
    ``eps_to`` (module docstring §3, *lower_at*): ``r_A = (e^{eps_to} - 1)/(e^{eps_from} - 1)`` for
    ``A`` and ``r_B = (1 + e^{eps_to})/(1 + e^{eps_from})`` for ``B``, each computed within
    :data:`_RATIO_ERR` relative (libm's ``exp``/``expm1`` within one ulp, one addition, one
    division). None when ``eps_from <= 0`` or ``eps_to`` is farther than :data:`LOWER_AT_REACH`."""
    if not (eps_from > 0.0 and eps_to >= 0.0 and abs(eps_to - eps_from) <= LOWER_AT_REACH * eps_from):
        return None
    return math.expm1(eps_to) / math.expm1(eps_from), (1.0 + math.exp(eps_to)) / (1.0 + math.exp(eps_from))


def _scaled_line(x: np.ndarray, xerr: np.ndarray, r: float) -> tuple[np.ndarray, np.ndarray]:
    """``fl(r x)`` and an error bound: if ``|x - x*| <= xerr`` and ``r`` is within
    :data:`_RATIO_ERR` (relative) of ``r*``, then ``|fl(r x) - r* x*| <= u r |x| + e r* |x| + r* xerr
    <= r ((u + 2e) |x| + (1 + 2e) xerr)`` (``r* <= r/(1 - e) <= r (1 + 2e)``), the last rounded up."""
    e = _RATIO_ERR
    return r * x, r * ((_U + 2.0 * e) * np.abs(x) + (1.0 + 2.0 * e) * xerr) * (1.0 + 8.0 * _U)


# ---------------------------------------------------------------------------------------
# The kernel with fair clones: values (upper) and supporting lines in lambda (lower).
# ---------------------------------------------------------------------------------------


class FirstUserGap(float):
    """``d = (e^ε0 - 1) / (2 (e^ε0 + 1))`` (a float, used as one) that also carries ``pb = 1/(e^ε0 + 1)
    = 1/2 - d`` computed on its own: the first user's ``v = 1/2 - λ d`` is tiny where ``λ`` is near 1
    and ``ε0`` is large (``v = pb`` at ``λ = 1``), and ``0.5 - lam * d`` loses it to cancellation: an
    absolute error of about one ulp of 1/2, which ``e^ε`` multiplies. Found by a read-only review
    (2026-11-24): k = 3, eps0 = 16, n = 5, delta at eps = 15.99999999984 came out ``[0, 1e-300]``
    against the exact 1.6e-10 (the computed ``u - e^ε v`` fell to <= 0, a live kernel counted as 0).
    :func:`_first_user_v` computes ``v`` from ``pb`` instead."""

    pb: float

    def __new__(cls, d: float, pb: float) -> "FirstUserGap":
        obj = super().__new__(cls, d)
        obj.pb = float(pb)
        return obj

    def __reduce__(self) -> tuple[type, tuple[float, float]]:  # (pickling: both numbers)
        return FirstUserGap, (float(self), self.pb)


def _first_user_v(lam: np.ndarray | float, d: float) -> np.ndarray:
    """``v = 1/2 - λ d`` of the first user, within 4 u relative of its value at the given ``λ``. Where
    ``λ d < 1/4`` (so ``v > 1/4``) as ``0.5 - λ d``: ``λ d`` within 2.5 u relative (``d`` within 2 u:
    ``tanh``, one product), so absolutely within 0.7 u, and the difference within u/2, so within 3.3 u
    relative of ``v``. Elsewhere as ``(1 - λ)/2 + λ pb``: two non-negative terms; ``1 - λ`` is exact
    (Sterbenz: ``λ >= 1/2`` there), ``pb = 1/(e^ε0 + 1)`` within 2.5 u (``exp`` within one ulp, one
    addition, one division), one product and one sum: within 3.5 u. ``pb`` is carried by ``d``
    (:class:`FirstUserGap`); for a plain float ``d`` (tests of the kernel alone) ``pb = 1/2 - d``,
    which is only as accurate as ``d`` is absolutely."""
    pb = getattr(d, "pb", None)
    if pb is None:
        pb = 0.5 - float(d)
    lam = np.asarray(lam, dtype=float)
    x = lam * d
    return np.where(x < 0.25, 0.5 - x, 0.5 * (1.0 - lam) + lam * pb)


def _kernel_lines(
    c: np.ndarray, lam: np.ndarray, d: float, eps: float | np.ndarray, rel: float,
    tail: Callable[[np.ndarray, np.ndarray, float], np.ndarray] = bn.sf,
    pmf: Callable[[np.ndarray, np.ndarray, float], np.ndarray] = bn.pmf,
    value_only: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``h(c, λ)`` of the fair-clone kernel (first user ``u = 1/2 + λ d`` vs ``v = 1/2 - λ d``)
    and, for the cut that attains it, the line ``A + λ' B`` (property P4 of the module
    docstring: valid for every ``λ'`` in ``[0, 1]``, ``B >= 0``). ``rel`` is the pmf budget;
    the tail value is charged its own per-value budget (:func:`.binomial.tail_error_budget`).

    Returns ``(value, value_err, A, A_err, B, B_err)``. The cut is FMT21's closed-form
    threshold, then the best of it and its two neighbours (as in
    :func:`~.clones.kernel_hockey_stick`, whose correction step this reproduces): floating
    point moves the threshold by less than one, so the optimum is among the three and
    ``value + value_err`` is an upper bound on ``h``. Any cut gives a valid line, so the
    lower bounds built from ``(A, B)`` do not depend on that argument at all.

    ``eps`` may be an array of the shape of ``c`` (one ``ε`` per request). ``tail`` computes
    ``P[Bin(c, 1/2) > k]``; anything but Boost's :func:`.binomial.sf` (whose budget is charged)
    makes the results estimates (:func:`_steering_sf`, for the search's surrogate only); ``pmf``
    computes ``P[Bin(c, 1/2) = k]`` (Boost's, or the same values by :func:`_steering_pmf`).
    ``value_only``: ``value`` alone (the same numbers), the other five left at 0 (the surrogate's use:
    no error budgets, no lines; cost only).
    """
    c = np.asarray(c, dtype=float)
    lam = np.asarray(lam, dtype=float)
    g: float | np.ndarray
    gm1: float | np.ndarray
    if np.ndim(eps) == 0:
        g, gm1 = math.exp(eps), math.expm1(eps)  # type: ignore[arg-type]
    else:
        g, gm1 = np.broadcast_to(np.exp(eps), c.shape), np.broadcast_to(np.expm1(eps), c.shape)
    u = 0.5 + lam * d
    v = _first_user_v(lam, d)
    du = 2.0 * lam * d
    coef_b = du - gm1 * v  # u - g v
    shape = c.shape
    value = np.zeros(shape)
    verr = np.zeros(shape)
    A = np.zeros(shape)
    Aerr = np.zeros(shape)
    B = np.zeros(shape)
    Berr = np.zeros(shape)
    live = coef_b > 0.0
    if not np.any(live):
        return value, verr, A, Aerr, B, Berr
    cl, ul, vl, dul, cb = c[live], u[live], v[live], du[live], coef_b[live]
    if np.ndim(gm1):
        g, gm1 = g[live], gm1[live]  # type: ignore[index]
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        rho = (dul + gm1 * (1.0 - vl)) / cb
        astar = rho * (cl + 1.0) / (1.0 + rho)
    astar = np.where(np.isfinite(astar), astar, cl + 1.0)
    k = np.clip(np.floor(astar) + 1.0, 0.0, cl + 1.0)
    # pmf at k-2, k-1, k and the tail S(k) = P[Bin(c, 1/2) >= k]; neighbours by the ratio
    # B(a)/B(a-1) = (c - a + 1)/a (exact up to rounding for the symmetric binomial)
    b1 = pmf(k - 1.0, cl, 0.5)
    with np.errstate(divide="ignore", invalid="ignore"):
        j = k - 1.0
        b0 = np.where((j >= 1.0) & (j <= cl), b1 * (j / (cl - j + 1.0)), 0.0)  # B(k-2)
        b2 = np.where((k >= 1.0) & (k <= cl), b1 * ((cl - k + 1.0) / k), 0.0)  # B(k)
    first = k < 1.0
    if np.any(first):
        b2[first] = pmf(k[first], cl[first], 0.5)
    s1 = tail(k - 1.0, cl, 0.5)  # S(k)
    # candidate cuts k-1, k, k+1: (B(cut-1), S(cut))
    cand_b = np.stack((b0, b1, b2))
    cand_s = np.stack((s1 + b1, s1, np.maximum(s1 - b2, 0.0)))
    cand_v = cb[None, :] * cand_b - gm1 * cand_s
    best = np.argmax(cand_v, axis=0)
    idx = np.arange(cl.size)
    bb, ss, vv = cand_b[best, idx], cand_s[best, idx], cand_v[best, idx]
    if value_only:
        value[live] = np.maximum(vv, 0.0)
        return value, verr, A, Aerr, B, Berr
    rel_s = np.maximum(bn.tail_error_budget(k - 1.0, cl, 0.5), rel)  # per-value tail budget
    # Error budget: Boost's relative error on the anchor pmf/tail, the ratio steps, the few
    # operations here, and the rounding of u, v, du (perturbs P and Q by ~1e-16 per point).
    e_val = ((rel + 16.0 * _U) * cb * bb + (rel_s + 16.0 * _U) * gm1 * ss + 2.0 * rel * gm1 * b1
             + 4.0 * _U * (ul + g * vl) * (b0 + b1 + b2))
    value[live] = np.maximum(vv, 0.0)
    verr[live] = e_val
    A_l = -gm1 * (0.5 * bb + ss)
    B_l = d * (1.0 + g) * bb
    A[live] = A_l
    Aerr[live] = (rel + 16.0 * _U) * gm1 * 0.5 * bb + (rel_s + 16.0 * _U) * gm1 * ss + 2.0 * rel * gm1 * b1
    B[live] = B_l
    Berr[live] = (rel + 16.0 * _U) * B_l
    return value, verr, A, Aerr, B, Berr


#: :func:`_steering_sf` uses the expansion for ``c`` at least this large within ``STEER_Z`` sd
#: of the middle (measured against Boost for z in [-3, 3.5]: relative error 2e-11 at c = 1e6,
#: 1e-11 at 4e8; 2e-7 at 1e4); elsewhere Boost, which is slow only there (25 µs a value at 4e8).
STEER_MIN_C = 1e4
STEER_Z = 3.5


def _steering_sf(k: np.ndarray, c: np.ndarray, p: float) -> np.ndarray:
    """``P[Bin(c, 1/2) > k]`` for steering only (the search's surrogate, never a bound): near
    the middle of a large binomial the continuity-corrected normal tail with the lattice and
    kurtosis terms of the Edgeworth expansion, ``Q(x) - φ(x) ((x³ - 3x)/(12 c) + x/(6 c))``
    with ``x = (k + 1/2 - c/2) / (√c / 2)``; elsewhere Boost (:func:`.binomial.sf`)."""
    assert p == 0.5
    k = np.asarray(k, dtype=float)
    c = np.asarray(c, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        x = (k + 0.5 - 0.5 * c) / (0.5 * np.sqrt(c))
    near = (c >= STEER_MIN_C) & (np.abs(x) <= STEER_Z)
    out = np.empty(k.shape)
    small = c < STEER_MIN_C
    if np.any(small):
        out[small] = _per_distinct(bn.sf, k[small], c[small], 0.5)
    far = ~near & ~small
    if np.any(far):
        out[far] = bn.sf(k[far], c[far], 0.5)
    if np.any(near):
        xn, cn = x[near], c[near]
        phi = np.exp(-0.5 * xn * xn) / math.sqrt(2.0 * math.pi)
        out[near] = 0.5 * special.erfc(xn / math.sqrt(2.0)) - phi * ((xn**3 - 3.0 * xn) / (12.0 * cn) + xn / (6.0 * cn))
    return out


def _packed_keys(*parts: tuple[np.ndarray, int]) -> np.ndarray | None:
    """The int64 keys ``(x_1 << (b_2 + .. + b_r)) | .. | x_r`` of the arrays ``x_i`` given as ``(x_i, b_i)`` (the
    first the most significant, ``b_1 + .. + b_r <= 63``), or None where some ``x_i`` is not integer-valued in
    ``[0, 2^b_i)``: one-to-one, and ordered as the tuples ``(x_1, .., x_r)`` are, so that one sort of them gives a
    ``lexsort``'s order, ties included (cost only: 2-4x faster at 1e4-3e4 keys)."""
    assert sum(bits for _, bits in parts) <= 63
    key = np.zeros(np.shape(parts[0][0]), dtype=np.int64)
    for x, bits in parts:
        if x.size and not (float(x.min()) >= 0.0 and float(x.max()) < 2.0**bits):  # (NaN too: before the cast)
            return None
        xi = x.astype(np.int64)
        if not np.array_equal(xi, x):
            return None
        key <<= bits
        key |= xi
    return key


#: :func:`_per_distinct` sorts out repeated requests from this many on.
DISTINCT_MIN = 256


def _per_distinct(fn: Callable[[np.ndarray, np.ndarray, float], np.ndarray], k: np.ndarray, c: np.ndarray,
                  p: float) -> np.ndarray:
    """``fn(k, c, p)`` for an elementwise ``fn`` (Boost's binomial ufuncs), called once per distinct
    pair ``(k, c)`` of integers ``-1 <= k < 65535``, ``0 <= c < 2^15`` (else called on all): the same
    numbers, fewer calls. The search's
    surrogate asks for one clone count per quadrature node at every ``ε`` of its grid, and its cuts
    repeat across nearby ``ε`` (at n = 1e4 its 70-point look asks 1260 tails, 209 of them distinct;
    Boost's sf costs ~0.8 us a value there; below :data:`DISTINCT_MIN` requests the sort costs more
    than it saves). Cost only."""
    if k.size < DISTINCT_MIN:
        return fn(k, c, p)
    key = c * 65536.0 + k  # exact and one-to-one for integers -1 <= k < 65535, 0 <= c < 2^15 (checked)
    if not (float(k.min()) >= -1.0 and float(k.max()) < 65535.0 and float(c.min()) >= 0.0
            and float(c.max()) < 32768.0 and bool(np.all(key == np.floor(key)))):
        return fn(k, c, p)
    order = np.argsort(key)
    ks, cs, keys = k[order], c[order], key[order]
    first = np.ones(k.size, dtype=bool)
    first[1:] = keys[1:] != keys[:-1]
    inv = np.empty(k.size, dtype=np.int64)
    inv[order] = np.cumsum(first) - 1
    return fn(ks[first], cs[first], p)[inv]


def _steering_pmf(k: np.ndarray, c: np.ndarray, p: float) -> np.ndarray:
    """:func:`.binomial.pmf` (the same values), once per distinct ``(k, c)`` below :data:`STEER_MIN_C`
    (:func:`_per_distinct`; at larger ``c`` Boost's pmf is called directly)."""
    k, c = np.asarray(k, dtype=float), np.asarray(c, dtype=float)
    small = c < STEER_MIN_C
    if not np.any(small):
        return bn.pmf(k, c, p)
    out = np.empty(k.shape)
    out[small] = _per_distinct(bn.pmf, k[small], c[small], p)
    if not np.all(small):
        out[~small] = bn.pmf(k[~small], c[~small], p)
    return out


# ---------------------------------------------------------------------------------------
# Binomial hinge functionals.
# ---------------------------------------------------------------------------------------


@dataclass
class _Hinge:
    """For ``X ~ Bin(m, ρ)`` at integer ``x`` (arrays): ``E[(X-x)_+]``, ``E[(x-X)_+]``,
    ``P[X >= x]``, ``P[X < x]``, ``P[X <= x]``, ``P[X > x]``, each with an absolute error bound
    (``e_*``; relative to the value itself on the side where Boost computes it directly)."""

    fp: np.ndarray
    fm: np.ndarray
    ge: np.ndarray
    lt: np.ndarray
    le: np.ndarray
    gt: np.ndarray
    e_fp: np.ndarray
    e_fm: np.ndarray
    e_ge: np.ndarray
    e_lt: np.ndarray
    e_le: np.ndarray
    e_gt: np.ndarray
    pm1: np.ndarray  # P[Bin(m-1, ρ) = x - 1] (0 where m = 0)


#: Runs of :func:`_tails_by_runs` are cut where consecutive requested sizes differ by more (a
#: walked size costs ~45 ns, a Boost tail at 1e9 ~25 us: 4096 walked long empty gaps between the
#: ends of wide blocks; 512 measured 5-10 ms faster per query at n = 1e8 .. 1e9, cost only).
_RUN_GAP = 512
#: ... where the requests lie within RUN_GAP_Z[0] sd of the size's mean; within RUN_GAP_Z[1] sd the
#: runs are cut at jumps above RUN_GAP_MID, farther out above RUN_GAP_FAR (cost only).
RUN_GAP_Z = (0.75, 1.5)
RUN_GAP_MID = 96
RUN_GAP_FAR = 32


def _order_by_k_side_size(k: np.ndarray, side: np.ndarray, mm: np.ndarray) -> np.ndarray:
    """An order by ``k``, then ``side``, then ``mm`` (the sequence of triples ``np.lexsort((mm, side, k))`` gives;
    equal triples, identical requests, in any order): for integer-valued ``0 <= k, mm < 2^31`` one (unstable)
    sort of their :func:`_packed_keys`, else ``lexsort`` itself. :func:`_tails_by_runs` gives equal requests
    the same numbers whatever their order (its runs, columns and values follow the sorted triples), so the
    tie order has no effect; numpy's stable sort of int64 keys is a merge sort, ~7x slower at 2e4 keys than
    its introsort (cost only)."""
    key = _packed_keys((k, 31), (side, 1), (mm, 31))
    return np.argsort(key) if key is not None else np.lexsort((mm, side, k))


def _tails_by_runs(mm: np.ndarray, k: np.ndarray, rho: float, pmf_out: list[np.ndarray] | None = None,
                   gap: int = _RUN_GAP) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For ``Y ~ Bin(mm, ρ)`` (arrays, ``mm >= 0``, integer ``k``), the smaller-side tail: where
    ``k < mm ρ`` (``below``) ``P[Y <= k]``, else ``P[Y > k]``, with an absolute error bound.
    With ``pmf_out`` (an empty list) also ``P[Y = k]`` and its relative error bound are appended
    to it: the run's walked pmf term at the requested size (the anchor's pmf budget plus ``8u``
    per ratio step from it, each ratio and product being at most four roundings, widened by
    ``1 + 1e-6``), Boost's pmf with its budget outside ``0 <= k < mm``.

    Boost's cdf/sf is slow in the bulk at large sizes (tens of µs at ``1e9``), and the blocks
    need these tails at many sizes ``mm`` for few ``k``. So the requests sharing ``k`` and a side
    are served by one run over the sizes ``j`` between the smallest and the largest requested:
    ``P[Bin(j-1) <= k] = P[Bin(j) <= k] + ρ P[Bin(j-1) = k]`` and ``P[Bin(j+1) > k] =
    P[Bin(j) > k] + ρ P[Bin(j) = k]``, with one Boost cdf (at the largest ``j``) or sf (at the
    smallest), one Boost pmf at the run's largest term and the exact ratios (a run ends where the
    requested sizes jump by more than ``gap``, by default :data:`_RUN_GAP`),
    ``P[Bin(j) = k] / P[Bin(j-1) = k] = j (1-ρ) / (j - k)`` walked away from it (every factor is
    at most 1, so nothing overflows). All summands are positive: a value's relative error is at
    most the larger of the anchor's tail budget and the pmf budget plus ``9 L u`` for a run of
    ``L`` sizes (each walked term: ``8u`` per ratio step, as for the pmf above, over at most ``L``
    steps; the cumulative sum of at most ``L`` positive terms: ``L u``), plus ``4u`` for the product
    by ``ρ`` and the anchor's sum.
    """
    mm = np.asarray(mm, dtype=float)
    k = np.asarray(k, dtype=float)
    n = mm.size
    below = k < mm * rho
    out = np.zeros(n)
    err = np.zeros(n)
    pm, pm_rel = np.zeros(n), np.zeros(n)
    if pmf_out is not None:
        pmf_out += [pm, pm_rel]
    if n == 0:
        return out, err, below
    edge = (k < 0.0) | (k >= mm)  # outside the support: exact values
    out[edge] = np.where(below[edge], (k[edge] >= mm[edge]).astype(float), (k[edge] < 0.0).astype(float))
    rel_pmf = bn.pmf_error_budget(float(max(mm.max(), 2.0)))
    if pmf_out is not None and np.any(edge):
        pm[edge] = bn.pmf(k[edge], mm[edge], rho)
        pm_rel[edge] = rel_pmf
    live = np.nonzero(~edge)[0]
    if live.size == 0:
        return out, err, below
    order = live[_order_by_k_side_size(k[live], below[live], mm[live])]
    ko, bo, mo = k[order], below[order], mm[order]
    # a new run at each new (k, side), and where the sizes jump by more than _RUN_GAP
    # Boost's tail is slow only near the mean (at m ~ 6e8: ~30 us at z = 0, 3 us at |z| = 1, 1 us at
    # |z| = 2; a walked size ~50 ns): away from it, runs are cut at shorter jumps
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.abs(ko - mo * rho) / np.sqrt(mo * rho * (1.0 - rho))
    zp = np.minimum(z[1:], z[:-1])
    cut = np.where(zp < RUN_GAP_Z[0], gap, np.where(zp < RUN_GAP_Z[1], min(gap, RUN_GAP_MID), min(gap, RUN_GAP_FAR)))
    brk = np.nonzero((ko[1:] != ko[:-1]) | (bo[1:] != bo[:-1]) | (mo[1:] - mo[:-1] > cut))[0] + 1
    starts = np.concatenate(([0], brk))
    ends = np.concatenate((brk, [order.size])) - 1
    g_k, g_cdf = ko[starts], bo[starts]
    g_lo, g_hi = mo[starts], mo[ends]
    g_len = (g_hi - g_lo + 1.0).astype(np.int64)
    g_j0 = np.clip(np.floor((g_k + 1.0) / rho), g_lo, g_hi)  # each run's largest pmf term
    p0 = bn.pmf(g_k, g_j0, rho)
    anchor = np.empty(g_k.size)  # each run's Boost tail on its own side only (the other is not used)
    anchor[g_cdf] = bn.cdf(g_k[g_cdf], g_hi[g_cdf], rho)
    anchor[~g_cdf] = bn.sf(g_k[~g_cdf], g_lo[~g_cdf], rho)
    budget = bn.tail_error_budget(g_k, np.where(g_cdf, g_hi, g_lo), rho)
    grp_of = np.repeat(np.arange(starts.size), ends - starts + 1)  # run of each sorted request
    col_of = (mo - g_lo[grp_of]).astype(np.int64)
    # runs of similar lengths and of one side together (padded to the longest of their group: at
    # most 2x the work of each run), long groups in pieces of at most ~4e6 elements
    octave = np.ceil(np.log2(g_len.astype(float))).astype(int)
    runs = []
    for o in np.unique(octave):
        for side in (True, False):
            members = np.nonzero((octave == o) & (g_cdf == side))[0]
            if members.size == 0:
                continue
            width = int(g_len[members].max())
            per = max(4_000_000 // width, 1)
            runs += [(members[i:i + per], width, side) for i in range(0, members.size, per)]
    # the sorted requests of each group of runs, by one stable sort of the requests by group
    run_group = np.empty(starts.size, dtype=np.int64)
    for gi, (gs, _, _) in enumerate(runs):
        run_group[gs] = gi
    req_group = run_group[grp_of]
    # (a stable sort of 16-bit keys is numpy's radix sort: the same order, ~10x faster than its timsort
    # of the int64 keys at ~2e4 requests in scattered groups; cost only)
    by_group = np.argsort(req_group.astype(np.int16) if len(runs) < 2**15 else req_group, kind="stable")
    group_at = np.searchsorted(req_group[by_group], np.arange(len(runs) + 1))
    # each run's row within its group (the groups' members are increasing run indices)
    row_in_group = np.empty(starts.size, dtype=np.int64)
    for gs, _, _ in runs:
        row_in_group[gs] = np.arange(gs.size)
    v_s = np.empty(order.size)  # the values of the sorted requests (scattered once at the end)
    pm_s = np.empty(order.size) if pmf_out is not None else v_s
    for gi, (gs, width, cdf_side) in enumerate(runs):
        col = np.arange(width)[None, :]
        j = g_lo[gs][:, None] + col
        kk = g_k[gs][:, None]
        i0 = (g_j0[gs] - g_lo[gs])[:, None]
        inside = col < g_len[gs][:, None]
        # the ratio walks away from each run's largest term i0: upward over the columns from the
        # least i0 on, downward over those up to the largest i0 (a run of the cdf side starts at
        # or next to its i0, one of the sf side ends at it); elsewhere the products are of ones
        # (exactly 1.0: a walk no run of the group takes is not computed)
        lo_up, hi_dn = int(i0.min()), int(i0.max())
        up = bool(np.any(i0[:, 0] < g_len[gs] - 1.0))
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            # upward: P(j) = P(j-1) j (1-ρ) / (j - k); downward: P(j) = P(j+1) (j+1-k)/((j+1)(1-ρ))
            c_, j_ = col[:, lo_up:], j[:, lo_up:]
            U = (np.cumprod(np.where((c_ > i0) & inside[:, lo_up:], j_ * (1.0 - rho) / (j_ - kk), 1.0), axis=1)
                 if up else np.ones((gs.size, width - lo_up)))
            c_, j_ = col[:, :hi_dn + 1], j[:, :hi_dn + 1]
            D = (np.cumprod(np.where(c_ < i0, (j_ + 1.0 - kk) / ((j_ + 1.0) * (1.0 - rho)), 1.0)[:, ::-1], axis=1)[:, ::-1]
                 if hi_dn > 0 else np.ones((gs.size, hi_dn + 1)))
        # each column from the upward walk where it is at or past the run's i0, else the downward
        # one (left of the least i0 every run walks down, right of the largest every run walks up)
        rel_p = np.empty((gs.size, width))
        rel_p[:, :lo_up] = D[:, :lo_up]
        rel_p[:, lo_up:hi_dn + 1] = np.where(col[:, lo_up:hi_dn + 1] >= i0, U[:, :hi_dn + 1 - lo_up], D[:, lo_up:])
        rel_p[:, hi_dn + 1:] = U[:, hi_dn + 1 - lo_up:]
        P = np.where(inside, p0[gs][:, None] * rel_p, 0.0)
        # cdf side: P[Bin(j) <= k] = anchor + ρ Σ_{i=j}^{hi-1} P(i); sf side: anchor + ρ Σ_{i=lo}^{j-1} P(i)
        if cdf_side:
            last_col = (g_len[gs] - 1)[:, None]
            walked = np.cumsum(np.where(col < last_col, P, 0.0)[:, ::-1], axis=1)[:, ::-1]
        else:
            walked = np.cumsum(P, axis=1) - P
        sel = by_group[group_at[gi]:group_at[gi + 1]]  # (in sorted order, as a mask would give them)
        grp = grp_of[sel]
        row, cs = row_in_group[grp], col_of[sel]
        v_s[sel] = anchor[grp] + rho * walked[row, cs]  # the requested sizes only
        if pmf_out is not None:
            pm_s[sel] = P[row, cs]
    out[order] = np.minimum(v_s, 1.0)
    err[order] = (np.maximum(budget[grp_of], rel_pmf + 9.0 * g_len[grp_of] * _U) + 4.0 * _U) * v_s + 1e-300
    if pmf_out is not None:
        pm[order] = pm_s
        pm_rel[order] = (rel_pmf + 8.0 * _U * (np.abs(col_of - (g_j0 - g_lo)[grp_of]) + 1.0)) * (1.0 + 1e-6)
    return out, err, below


def _hinges(m: np.ndarray, x: np.ndarray, rho: float, runs: bool = False) -> _Hinge:
    """Closed forms (``X' ~ Bin(m-1, ρ)``):

    ``E[(X - x)_+] = (mρ - x) P[X' >= x] + x (1-ρ) P[X' = x]`` (from ``E[X 1{X > x}] =
    mρ P[X' >= x]`` and ``P[X >= x+1] = P[X' >= x] - (1-ρ) P[X' = x]``), likewise
    ``E[(x - X)_+] = (x - mρ) P[X' < x] + x (1-ρ) P[X' = x]``; ``P[X >= x] = P[X' >= x] +
    ρ P[X' = x-1]`` and ``P[X = x] = (1-ρ) P[X' = x] + ρ P[X' = x-1]``. The small one of
    ``P[X' >= x]``, ``P[X' < x]`` comes from Boost (``sf`` or ``cdf``), the other as its
    complement (absolute error ``~1e-16``); every error bound is charged on its own side.
    With ``runs`` the tails come from :func:`_tails_by_runs` instead of one Boost call each.
    """
    m = np.asarray(m, dtype=float)
    x = np.asarray(x, dtype=float)
    m, x = np.broadcast_arrays(m, x)
    shape = m.shape
    names = ("fp", "fm", "ge", "lt", "le", "gt", "e_fp", "e_fm", "e_ge", "e_lt", "e_le", "e_gt", "pm1")
    out = {name: np.zeros(shape) for name in names}
    zero = m <= 0.0
    if np.any(zero):  # X = 0 exactly
        xz = x[zero]
        out["fp"][zero] = np.maximum(-xz, 0.0)
        out["fm"][zero] = np.maximum(xz, 0.0)
        out["ge"][zero] = (xz <= 0.0).astype(float)
        out["lt"][zero] = (xz > 0.0).astype(float)
        out["le"][zero] = (xz >= 0.0).astype(float)
        out["gt"][zero] = (xz < 0.0).astype(float)
    pos = ~zero
    # the usual case (no size 0) indexes whole arrays by ``...`` (views, no masked copies; the same numbers)
    sel: np.ndarray | EllipsisType = ... if not np.any(zero) else pos
    if np.any(pos):
        mp = m[sel]
        mm = mp - 1.0
        xx = x[sel]
        rel = bn.pmf_error_budget(float(np.max(mp)))

        def put(name: str, val: np.ndarray) -> None:
            out[name][sel] = val

        if runs:
            small, e_small, below = _tails_by_runs(mm, xx - 1.0, rho)
        else:
            below = (xx - 1.0) < mm * rho
            small = np.zeros(xx.shape)
            if np.any(below):
                small[below] = bn.cdf(xx[below] - 1.0, mm[below], rho)
            if not np.all(below):
                small[~below] = bn.sf(xx[~below] - 1.0, mm[~below], rho)
            e_small = np.maximum(bn.tail_error_budget(xx - 1.0, mm, rho), rel) * small
        p_ge = np.where(below, 1.0 - small, small)
        p_lt = np.where(below, small, 1.0 - small)
        e_ge0 = np.where(below, e_small + _U, e_small)
        e_lt0 = np.where(below, e_small, e_small + _U)
        pm = bn.pmf(xx, mm, rho)
        # P[X' = x-1] from P[X' = x] by the exact ratio x(1-ρ)/((m-x)ρ) where it is safe
        safe = (xx >= 1.0) & (xx <= mm - 1.0) & (pm > 1e-280)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            pm1 = np.where(safe, pm * (xx * (1.0 - rho)) / ((mm - xx + 1.0) * rho), 0.0)
        if not np.all(safe):
            pm1[~safe] = bn.pmf(xx[~safe] - 1.0, mm[~safe], rho)
        mean = mp * rho
        bterm = xx * (1.0 - rho) * pm
        a_fp = (mean - xx) * p_ge
        a_fm = (xx - mean) * p_lt
        e_b = rel * np.abs(bterm) + 4.0 * _U * np.abs(bterm)
        put("fp", np.maximum(a_fp + bterm, 0.0))
        put("fm", np.maximum(a_fm + bterm, 0.0))
        put("e_fp", (np.abs(mean - xx) * e_ge0 + e_b + 2.0 * _U * mean * p_ge
                     + 8.0 * _U * (np.abs(a_fp) + np.abs(bterm))))
        put("e_fm", (np.abs(xx - mean) * e_lt0 + e_b + 2.0 * _U * mean * p_lt
                     + 8.0 * _U * (np.abs(a_fm) + np.abs(bterm))))
        t1 = rho * pm1
        t0 = (1.0 - rho) * pm
        e_t = rel * (t0 + t1) + 4.0 * _U * (t0 + t1)
        ge = p_ge + t1
        lt = p_lt - t1
        put("ge", np.clip(ge, 0.0, 1.0))
        put("lt", np.clip(lt, 0.0, 1.0))
        put("le", np.clip(lt + t0 + t1, 0.0, 1.0))
        put("gt", np.clip(ge - t0 - t1, 0.0, 1.0))
        put("e_ge", e_ge0 + e_t + 4.0 * _U * ge)
        put("e_lt", e_lt0 + e_t + 4.0 * _U * p_lt)
        put("e_le", e_lt0 + 2.0 * e_t + 4.0 * _U * (p_lt + t0 + t1))
        put("e_gt", e_ge0 + 2.0 * e_t + 4.0 * _U * ge)
        put("pm1", pm1)
        for name in names[6:12]:  # values below ~1e-300 lose relative accuracy (subnormals)
            out[name][sel] += 1e-300
    return _Hinge(**out)


#: Breakpoints of refinement level ``l`` lie on multiples of ``max(H >> l, 1)`` (a grid shared by
#: all blocks, so that their binomial functionals are computed once) within this many standard
#: deviations of the block's mean; beyond the last entry, 4.
_ZREACH = (12.0, 12.0, 8.0, 6.0, 5.0)


def _reach(level: int) -> float:
    return _ZREACH[level] if level < len(_ZREACH) else 4.0


def _grid_points(mean: np.ndarray, sd: np.ndarray, level: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                 H: int) -> tuple[np.ndarray, np.ndarray]:
    """Breakpoints of every block: the union over ``l <= level`` of the multiples of
    ``max(H >> l, 1)`` within ``±_reach(l)`` standard deviations of the block's mean (past the
    level of spacing 1, up to 12), clipped to ``[lo, hi]``, at least two per block. Returns
    ``(count per block, flat sorted y)``."""
    nb = mean.size
    # two points that every block has (shared between blocks): the level-0 grid points
    # enclosing the mean, clipped; where the clipped range is too narrow, its two ends
    g0 = float(H)
    a0 = np.clip(np.floor(mean / g0) * g0, lo, hi)
    b0 = np.clip(a0 + g0, lo, hi)
    b0 = np.where(b0 > a0, b0, np.where(a0 + 1.0 <= hi, a0 + 1.0, a0 - 1.0))
    owners, ys = [np.arange(nb), np.arange(nb)], [a0, b0]
    # the low end of v (large λ, where the divergence lives at very large ε): no crude tail left
    owners.append(np.arange(nb))
    ys.append(lo.astype(float))
    unit = H.bit_length() - 1  # the level whose spacing is 1
    for lev in range(int(level.max(initial=0)) + 1):
        sel = np.nonzero(level >= lev)[0]
        if sel.size == 0:
            break
        h = float(max(H >> lev, 1))
        # past the unit level, further levels widen the all-integer region (skewed tails)
        z = _reach(lev) if lev <= unit else min(12.0, _reach(unit) + 2.0 * (lev - unit))
        # rounded outwards, so the points of every level enclose its window (inside [lo, hi])
        a = np.maximum(np.floor((mean[sel] - z * sd[sel]) / h), np.ceil(lo[sel] / h))
        b = np.minimum(np.ceil((mean[sel] + z * sd[sel]) / h), np.floor(hi[sel] / h))
        own, idx = ragged(a, (b - a + 1.0))
        owners.append(sel[own])
        ys.append(idx * h)
    owner, y = _sorted_distinct(owners, ys)
    return np.bincount(owner, minlength=nb), y


def _sorted_distinct(owners: list[np.ndarray], ys: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The pairs ``(owner, y)`` of the concatenated lists, sorted by owner then ``y``, distinct."""
    owner = np.concatenate(owners)
    y = np.concatenate(ys)
    order = np.lexsort((y, owner))
    owner, y = owner[order], y[order]
    keep = np.ones(y.size, dtype=bool)
    keep[1:] = (owner[1:] != owner[:-1]) | (y[1:] != y[:-1])
    return owner[keep], y[keep]


class _Rows:
    """Append-only rows (one or more float arrays, rows along the first axis) found by a sorted
    key: adding rows copies only the key index (:func:`.binomial.merge_sorted`), never the stored rows (their
    arrays grow by doubling). A key added again points to its new row."""

    def __init__(self, widths: dict[str, int], key_dtype: type = np.float64) -> None:
        self.widths = widths
        self.keys: np.ndarray = np.zeros(0, dtype=key_dtype)
        self.ptr = np.zeros(0, dtype=np.int64)
        self.size = 0
        self.data: dict[str, np.ndarray] = {f: np.zeros((0, w)) if w > 1 else np.zeros(0) for f, w in widths.items()}

    def find(self, uk: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For sorted distinct keys: (row of each, found)."""
        pos = np.searchsorted(self.keys, uk)
        inside = pos < self.keys.size
        found = np.zeros(uk.size, dtype=bool)
        found[inside] = self.keys[pos[inside]] == uk[inside]
        return np.where(found, self.ptr[np.where(inside, pos, 0)] if self.keys.size else 0, -1), found

    def reserve(self, k: int) -> dict[str, np.ndarray]:
        """Views of the next ``k`` rows (room made for them), to be filled in place and then
        indexed by :meth:`add` without ``rows`` (no intermediate arrays: fewer fresh pages)."""
        if self.size + k > next(iter(self.data.values())).shape[0]:
            cap = max(2 * (self.size + k), 1024)
            for f, arr in self.data.items():
                grown = np.zeros((cap,) + arr.shape[1:])
                grown[: self.size] = arr[: self.size]
                self.data[f] = grown
        return {f: arr[self.size: self.size + k] for f, arr in self.data.items()}

    def add(self, uk: np.ndarray, rows: dict[str, np.ndarray] | None = None) -> np.ndarray:
        """Store rows for sorted distinct keys ``uk`` (None: the rows :meth:`reserve` gave, filled
        in place); returns their row numbers."""
        k = uk.size
        views = self.reserve(k)
        if rows is not None:
            for f, v in views.items():
                v[...] = rows[f]
        new_rows = np.arange(self.size, self.size + k)
        self.size += k
        pos = np.searchsorted(self.keys, uk)
        again = self.find(uk)[1]
        self.ptr[pos[again]] = new_rows[again]
        fresh = ~again
        self.keys, (self.ptr,) = bn.merge_sorted(self.keys, uk[fresh], [(self.ptr, new_rows[fresh])])
        return new_rows


class _Hinges:
    """Binomial hinge quantities (:func:`_hinges`) of ``Bin(m, ρ)`` at integer ``x``, plus
    ``P[X = x - 1]`` (for the shift identity), each distinct ``(m, x)`` of one request computed once
    (blocks share grid points, and adjacent totals share ``m``).

    Nothing is kept between calls (krr99). A cache by ``(m, x)`` across calls was here; its key held
    the breakpoints only within ``2^21`` of an origin, i.e. never from ``n ~ 2e6`` on, and where it did
    (smaller ``n``, deep refinements) it saved nothing measurable: removed, CPU min of 3, n = 3e6 .. 1e9,
    k 3/10/100, delta 1e-9 .. 1e-12 the same times within noise; with a key that held every request
    (offsets to ``2^32``) the same queries were 5-40 % slower (the lookups and merges cost more than
    the few repeated requests of later rounds). *Values*: a tail computed in a batch of other requests
    comes from :func:`_tails_by_runs`' runs over that batch, so it may differ in the last bits from the
    same tail computed in another batch; each is certified by the error bound computed with it (the
    run's anchor budget and per-step charges, :func:`_tails_by_runs`), and every bracket built on them
    is certified whatever batch each value came from (module docstring §3: any value within its stated
    bound). Grid of 288 queries (k 2/3/10/100, eps0 0.1 .. 8, n 2 .. 1e9, delta 1e-12 .. 1e-2, and a
    delta at eps0/3 or eps0/4 each) against the cached code: 231 identical, the rest overlap; delta upper
    ends at most 6.8e-11 relative above (all at deltas below 4e-14), eps upper ends (rtol 1e-6) at most
    2.9e-7 relative above (n = 1e3, k = 100, eps0 = 8, delta 1e-12: the search's steps differ), never
    less converged. Review rev99k (434 + 420 cells) found larger moves where neither bracket converges
    (eps just below eps0): delta upper ends up to 5.8e-5 relative above (n = 1e4, k = 3, eps0 = 6, eps =
    5.994, rtol 1e-9; the exact value, 2.0e-24, inside both brackets), eps upper ends up to 4.5e-7
    (n = 30, k = 100, eps0 = 4, delta 1e-9; rtol 1e-6); every bracket overlapped the old one and held the
    oracle's value."""

    _FIELDS = ("fp", "fm", "ge", "lt", "le", "gt", "e_fp", "e_fm", "e_ge", "e_lt", "e_le", "e_gt", "pmx", "e_pmx")

    def __init__(self, rho: float) -> None:
        self.rho = rho

    @staticmethod
    def _compute(m: np.ndarray, x: np.ndarray, rho: float) -> dict[str, np.ndarray]:
        h = _hinges(m, x, rho, runs=True)
        out = {f: getattr(h, f) for f in ("fp", "fm", "ge", "lt", "le", "gt", "e_fp", "e_fm", "e_ge", "e_lt",
                                           "e_le", "e_gt")}
        # P[Bin(m) = x-1] = P[Bin(m-1) = x-1] m(1-ρ)/(m-x+1) (exact ratio) where safe
        safe = (m >= 1.0) & (x - 1.0 >= 0.0) & (x - 1.0 <= m - 1.0) & (h.pm1 > 1e-280)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            pmx = np.where(safe, h.pm1 * (m * (1.0 - rho)) / (m - x + 1.0), 0.0)
        if not np.all(safe):
            pmx[~safe] = bn.pmf(x[~safe] - 1.0, m[~safe], rho)
        out["pmx"] = pmx
        out["e_pmx"] = (bn.pmf_error_budget(float(max(m.max(initial=1.0), 2.0))) + 8.0 * _U) * pmx + 1e-300
        return out

    def get(self, m: np.ndarray, x: np.ndarray) -> dict[str, np.ndarray]:
        m = np.asarray(m, dtype=float)
        x = np.asarray(x, dtype=float)
        order = np.lexsort((x, m))
        ms, xs = m[order], x[order]
        first = np.ones(ms.size, dtype=bool)
        first[1:] = (ms[1:] != ms[:-1]) | (xs[1:] != xs[:-1])
        inv = np.empty(ms.size, dtype=np.int64)
        inv[order] = np.cumsum(first) - 1
        new = self._compute(ms[first], xs[first], self.rho)
        return {f: new[f].take(inv) for f in self._FIELDS}


def _shifted(h: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Hinge quantities at ``x - 1`` from those at ``x`` (same ``m``):
    ``E[(X-x+1)+] = E[(X-x)+] + P[X>=x]``, ``E[(x-1-X)+] = E[(x-X)+] - P[X<x]``,
    ``P[X>=x-1] = P[X>=x] + P[X=x-1]``, ``P[X<x-1] = P[X<x] - P[X=x-1]``, ``P[X<=x-1] = P[X<x]``,
    ``P[X>x-1] = P[X>=x]``."""
    px, e = h["pmx"], h["e_pmx"]
    return {
        "fp": h["fp"] + h["ge"], "e_fp": h["e_fp"] + h["e_ge"] + 2.0 * _U * (h["fp"] + h["ge"]),
        "fm": np.maximum(h["fm"] - h["lt"], 0.0), "e_fm": h["e_fm"] + h["e_lt"] + 2.0 * _U * h["fm"],
        "ge": np.minimum(h["ge"] + px, 1.0), "e_ge": h["e_ge"] + e + 2.0 * _U,
        "lt": np.maximum(h["lt"] - px, 0.0), "e_lt": h["e_lt"] + e + 2.0 * _U * h["lt"],
        "le": h["lt"], "e_le": h["e_lt"], "gt": h["ge"], "e_gt": h["e_ge"],
    }


#: Largest window of cuts tabulated per clone count by :func:`_kernel_table`.
_TABLE_WIDTH = 96
#: Cuts added on each side of a window when its row is (re)computed for :class:`_TableCache`, so
#: that the nearby eps of a search (cuts move by a unit or two, if at all) find their row.
_TABLE_MARGIN = 4
#: Stored row width (every row of a :class:`_TableCache` has at most this many recurrence steps).
_ROW_WIDTH = _TABLE_WIDTH + 2 * _TABLE_MARGIN
#: A :class:`_TableCache` is emptied when it would hold more rows than this.
_TABLE_ROWS = 40_000


#: At most this many rows in a chain of :func:`_walk_tops` (one Boost anchor per chain at least), at
#: least WALK_ROWS_MIN (the length is chosen per call from the bound's estimated growth: cost only).
WALK_ROWS = 1024
WALK_ROWS_MIN = 8
#: :func:`_walk_tops` walks only calls of at least this many rows with a clone count of at least
#: ``WALK_MIN_C`` (Boost's sf costs ~1 µs a value at c = 2e4, 3-8 µs from 2e6; the walk (then a loop over
#: chain positions) ~1 ms a call, measured: below these it cost more than it saved). Cost only.
WALK_MIN_ROWS = 256
WALK_MIN_C = 1e5
#: Largest step of clone counts between consecutive rows of a chain of :func:`_walk_tops` (a step of ``g``
#: costs ``g`` walked pmf values, plus those below the new row's window, ~30 ns each, a new chain one Boost
#: sf: ~4 us at c ~ 2e8 near the mean; farther out the steps are cut at RUN_GAP_MID / RUN_GAP_FAR as the
#: runs of :func:`_tails_by_runs`; cost only).
WALK_GAP = 256


def _pmf_walk(b0: np.ndarray, steps: np.ndarray, ratio: Callable[[np.ndarray, np.ndarray], np.ndarray],
              first: bool) -> tuple[np.ndarray, np.ndarray]:
    """Walked binomial pmf values ``b_j = b0 Π_{l=1}^{j} r_l`` (``j = 0 .. steps``; ``ratio(sel, l)`` the exact
    ratios ``r_l`` of the requests ``sel`` at the steps ``l``, each a quotient of exact integers, so one
    rounding): the sum of ``b_j`` over ``j = 0 .. steps`` (``first``) or ``j = 1 .. steps`` (else), and
    ``b_steps``. Each ``b_j`` is within ``(2 j + 1) u`` (first order) of ``b0``'s exact multiple (the
    quotient, the running product, the factor ``b0``); the sum of at most ``steps + 1`` positive terms
    ``steps`` roundings more. Requests of similar lengths are padded together."""
    total, last = (b0.copy() if first else np.zeros(b0.size)), b0.copy()
    on = steps >= 1
    if not np.any(on):
        return total, last
    octave = np.zeros(steps.size, dtype=np.int64)
    octave[on] = np.ceil(np.log2(steps[on] + 1.0)).astype(np.int64)
    for o in np.unique(octave[on]):
        sel = np.nonzero(on & (octave == o))[0]
        n_sel = steps[sel][:, None]
        ll = np.arange(int(n_sel.max()) + 1, dtype=float)[None, :]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            r = np.where((ll >= 1.0) & (ll <= n_sel), ratio(sel, ll), 1.0)
        vals = b0[sel][:, None] * np.cumprod(r, axis=1)
        keep = (ll <= n_sel) & ((ll >= 0.0) if first else (ll >= 1.0))
        total[sel] = np.sum(np.where(keep, vals, 0.0), axis=1)
        last[sel] = vals[np.arange(sel.size), steps[sel]]
    return total, last


def _column(R: np.ndarray, i: np.ndarray, col: np.ndarray) -> np.ndarray:
    """``R[i, col]`` with columns clipped to ``[0, W]`` and column ``W = R.shape[1]`` (one past the last)
    read as 0 (:func:`_walk_tops`: ``R`` is 0 past each row's top)."""
    W = R.shape[1]
    return np.where(col >= W, 0.0, R[i, np.clip(col, 0, W - 1)])


def _chain_sums(x: np.ndarray, head: np.ndarray) -> np.ndarray:
    """Running sums of ``x`` within each chain of consecutive entries (a chain starts where ``head``,
    which must hold at its first entry): ``out[i] = out[i-1] + x[i]`` in floating point, in order (one
    rounding per entry, as a loop would do; chains of similar lengths padded together)."""
    out = np.empty(x.size)
    starts = np.nonzero(head)[0]
    if starts.size == 0:
        return out
    lens = np.diff(np.append(starts, x.size))
    octave = np.ceil(np.log2(lens)).astype(np.int64)
    for o in np.unique(octave):
        g = np.nonzero(octave == o)[0]
        width = int(lens[g].max())
        idx = starts[g][:, None] + np.arange(width)[None, :]
        inside = np.arange(width)[None, :] < lens[g][:, None]
        sums = np.cumsum(np.where(inside, x[np.minimum(idx, x.size - 1)], 0.0), axis=1)
        out[idx[inside]] = sums[inside]
    return out


def _walk_tops(c: np.ndarray, lo: np.ndarray, hi: np.ndarray, B: np.ndarray, R: np.ndarray,
               walk_rel: float) -> tuple[np.ndarray, np.ndarray]:
    """Top tails ``T_i = S_{c_i}(hi_i + 1) = P[Bin(c_i, 1/2) > hi_i]`` of new kernel-table rows
    (sorted distinct ``c``, windows ``[lo_i, hi_i]``, pmf values ``B_i(a)`` at column ``a - lo_i``,
    ``R_i(a) = Σ_{a <= b <= hi_i} B_i(b)`` at the same columns, 0 for ``a = hi_i + 1``, also where that is
    the column one past ``R``'s last) and a relative error bound for
    each (``|T_i - T*_i| <= budget_i T_i``, ``T_i`` the computed value), with one Boost sf per chain
    of nearby clone counts instead of one per row (*derived*).

    *Identity.* ``Bin(c + 1, 1/2) = Bin(c, 1/2) + Bernoulli(1/2)``, so ``S_{c+1}(a) = S_c(a) + B_c(a-1)/2``
    and, for ``g >= 1``, ``S_{c+g}(a) = S_c(a) + (1/2) Σ_{j=0}^{g-1} B_{c+j}(a-1)``; and ``S_c(a) = S_c(a') +
    Σ_{a <= b < a'} B_c(b)`` for ``a <= a'``. For ``c_i = c_{i-1} + g``, ``1 <= g <=`` :data:`WALK_GAP`, take
    ``a = min(hi_i, hi_{i-1}) + 1``: ``S_{c_{i-1}}(a) = T_{i-1} + R_{i-1}(a)`` (``a <= hi_{i-1} + 1``) and
    ``T_i = S_{c_i}(a) - Σ_{a <= b <= hi_i} B_i(b)``, so

        ``T_i = T_{i-1} + P_i - N_i``,  ``P_i = R_{i-1}(a) + (1/2) Σ_{j=0}^{g-1} B_{c_{i-1}+j}(a-1)``,
        ``N_i = R_i(max(a, lo_i)) + Σ_{a <= b < lo_i} B_i(b)``

    (one of ``R_{i-1}(a)``, ``N_i`` is an empty sum; all terms positive). ``B_{c_{i-1}}(a-1)`` is a value of
    row ``i-1`` (needs ``a - 1 >= lo_{i-1}``), the others of the sum are walked along ``c`` from it by the
    exact ratio ``B_{c+1}(x) / B_c(x) = (c+1) / (2 (c+1-x))`` (``x = a - 1 < c``); the values of row ``i``
    below its window (where the windows of consecutive rows do not overlap, ``a < lo_i``, at most
    :data:`WALK_GAP` of them) are walked down from ``B_i(lo_i)`` by ``B(b-1) / B(b) = b / (c - b + 1)``
    (:func:`_pmf_walk`). A row starts a new chain (Boost's sf, its budget
    :func:`.binomial.tail_error_budget`) when its clone count is more than :data:`WALK_GAP` above
    the previous, a needed column is outside a row, a row reaches ``c`` (``hi >= c``) or holds a
    pmf value below ``1e-280`` (outside the relative error model; the binomial pmf is unimodal in ``a``,
    so a row whose two end values are at least ``1e-279`` holds none: every computed value is within
    its relative budget, far below 0.9, of an exact value at least the smaller exact end; likewise a walk
    whose last value is at least ``1e-279``: ``B_c(x)`` is unimodal in ``c`` and in ``x``), or every
    ``L`` rows (``L`` between :data:`WALK_ROWS_MIN` and :data:`WALK_ROWS`, from the bound's growth per row
    estimated at a normal approximation of ``T``: a cost decision only, every row's bound is checked below).

    *Error* (absolute, ``E_i``). Each ``B`` value is within ``e_B = β + 3 W u`` (relative) of the
    exact pmf (``β`` = Boost's pmf budget at the largest ``c``, one factor per ratio step of a row
    of ``W`` columns, as :func:`_kernel_table` charges); a value walked ``j <= G`` steps from one of them
    within ``e_B + (2 j + 1) u`` (first order; ``G`` the largest gap or walk below a window of the call's
    links). ``P_i`` is a sum of at most ``W`` row values (``W - 1`` roundings) plus half a sum of at most
    ``G`` walked values (``G - 1`` roundings; the halving exact) and one addition; ``N_i`` likewise (``W``
    row values, at most ``G`` walked ones): ``|P - P*| <= e_P P`` with ``e_P = 1.01 (e_B + (W + 3 G + 3) u)``,
    likewise ``N``. ``T_i`` is computed as ``T_{i-1} + (P_i - N_i)`` (the running sums of each chain, in order,
    :func:`_chain_sums`): ``|fl(P - N) - (P - N)| <= u |P - N| <= u (P + N)`` and the addition's rounding is
    at most ``u |T_{i-1} + fl(P - N)| <= u (1 + u) (|T_{i-1}| + P + N)``, together at most ``2.01 u (|T_{i-1}|
    + P + N)``, plus ``1e-300`` for a subnormal result. So ``E_i = E_{i-1} + e_P (P_i + N_i) + 2.01 u
    (|T_{i-1}| + P_i + N_i) + 1e-300`` (also a running sum), ``E`` of an anchor its budget times its value;
    the bound's own roundings (at most ``8 u`` per step, at most :data:`WALK_ROWS` steps) are covered by a
    factor ``1 + 1e-9``. ``budget_i = E_i / T_i`` (rounded up). A walked row is kept where ``T_i > 0`` and
    ``budget_i <= max(walk_rel, 2 x`` Boost's budget there); the others take Boost's sf (a later
    row walked from a dropped one keeps its bound: ``E`` covers the dropped row's computed value
    whatever its size). Calls of fewer than :data:`WALK_MIN_ROWS` rows or below :data:`WALK_MIN_C`
    take Boost's sf for every row."""
    nm = c.size
    tb = np.asarray(bn.tail_error_budget(hi, c, 0.5), dtype=float)
    if nm < max(WALK_MIN_ROWS, 2) or float(np.max(c)) < WALK_MIN_C:
        return bn.sf(hi, c, 0.5), tb
    W = B.shape[1]
    ar = np.arange(nm)
    prev = np.maximum(ar - 1, 0)
    lo_i, hi_i = lo.astype(np.int64), hi.astype(np.int64)
    ends = np.minimum(B[:, 0], B[ar, np.clip(hi_i - lo_i, 0, W - 1)])  # (the pmf is unimodal: the row's least)
    normal = (ends >= 1e-279) & (hi < c)
    gap = np.clip(c - c[prev], 0.0, WALK_GAP + 1.0).astype(np.int64)
    a = np.minimum(hi_i, hi_i[prev]) + 1
    col_p = a - lo_i[prev]  # column of a in row i-1 (B_{i-1}(a - 1) at col_p - 1)
    col_n = a - lo_i  # column of a in row i
    ext = np.maximum(-col_n, 0)  # pmf values of row i below its window, a .. lo_i - 1
    link = (ar >= 1) & (gap >= 1) & (gap <= WALK_GAP) & normal & normal[prev]
    link &= (col_p >= 1) & (ext <= WALK_GAP) & (col_n <= W)
    # (cost only) walks as long as Boost's sf is slow: near the mean (a walked step ~30 ns; Boost's sf at
    # c ~ 2e8 ~4 us at |z| ~ 0.8, ~1.3 us at |z| ~ 1.9), as the runs of :func:`_tails_by_runs` are cut
    far = np.nonzero(link & (gap + ext > RUN_GAP_FAR))[0]
    if far.size:
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.abs(hi[far] + 1.0 - 0.5 * c[far]) / (0.5 * np.sqrt(c[far]))
        link[far] = (gap + ext)[far] <= np.where(z < RUN_GAP_Z[0], WALK_GAP, np.where(z < RUN_GAP_Z[1], RUN_GAP_MID, RUN_GAP_FAR))
    cp = np.where(link, col_p, 1)
    x = (a - 1).astype(float)
    cpv = c[prev]
    # B_{c'}(a - 1) for c' = c_{i-1} .. c_i - 1, walked along c' from row i-1's value (ratio (c' + 1) / (2 (c' + 1 - x)))
    up_sum, up_last = _pmf_walk(B[prev, np.clip(cp - 1, 0, W - 1)], np.where(link, gap - 1, 0),
                                lambda sel, ll: (cpv[sel][:, None] + ll) / (2.0 * (cpv[sel][:, None] + ll - x[sel][:, None])),
                                True)
    # B_{c_i}(b) for b = lo_i - 1 down to a, from row i's first value (ratio B(b - 1) / B(b) = b / (c - b + 1))
    lof = lo_i.astype(float)
    dn_sum, dn_last = _pmf_walk(B[:, 0], np.where(link, ext, 0),
                                lambda sel, ll: (lof[sel][:, None] - ll + 1.0) / (c[sel][:, None] - lof[sel][:, None] + ll),
                                False)
    link &= (up_last >= 1e-279) & (dn_last >= 1e-279)
    G = int(np.max(np.where(link, np.maximum(gap, ext), 1)))
    P = _column(R, prev, cp) + 0.5 * up_sum
    N = _column(R, ar, np.maximum(col_n, 0)) + dn_sum
    e_p = 1.01 * (bn.pmf_error_budget(float(np.max(c))) + 3.0 * W * _U + (W + 3.0 * G + 3.0) * _U)
    # the budget's growth per row at a normal estimate of T (cost only: a row whose bound grew beyond its
    # allowance takes Boost's sf below): a link that alone would use a quarter of the allowance starts a
    # new chain instead (its error would stay with the rest of the chain), and chains of at most L rows
    L = WALK_ROWS_MIN
    slack = max(walk_rel, 2.0 * float(np.min(tb))) - float(np.max(tb))
    if np.any(link) and slack > 0.0:
        with np.errstate(divide="ignore", invalid="ignore"):  # c = 0 rows: t_est = 0, never linked
            t_est = special.ndtr((0.5 * c - hi - 0.5) / (0.5 * np.sqrt(c)))
            ratio = (P + N) / t_est
            growth = e_p * ratio + 2.01 * _U * (1.0 + ratio)
        link &= growth <= 0.25 * slack
        step = float(np.median(growth[link])) if np.any(link) else 0.0
        if step > 0.0:
            L = int(min(max(0.5 * slack / step, WALK_ROWS_MIN), WALK_ROWS))
    start = np.maximum.accumulate(np.where(link, 0, ar))
    pos = (ar - start) % L
    T = np.zeros(nm)
    E = np.zeros(nm)
    anchor = pos == 0
    anchor[0] = True
    T[anchor] = bn.sf(hi[anchor], c[anchor], 0.5)
    E[anchor] = tb[anchor] * T[anchor]
    walked = ~anchor
    # along each chain: T_i = T_{i-1} + (P_i - N_i), E_i = E_{i-1} + x_i (prefix sums in order)
    T = _chain_sums(np.where(anchor, T, P - N), anchor)
    Tp = np.abs(T[np.maximum(ar - 1, 0)])
    E = _chain_sums(np.where(anchor, E, e_p * (P + N) + 2.01 * _U * (Tp + P + N) + 1e-300), anchor)
    with np.errstate(divide="ignore", invalid="ignore"):
        w_budget = E * (1.0 + 1e-9) / T * (1.0 + 4.0 * _U)
    keep = walked & (T > 0.0) & (w_budget <= np.maximum(walk_rel, 2.0 * tb))
    redo = walked & ~keep
    if np.any(redo):
        T[redo] = bn.sf(hi[redo], c[redo], 0.5)
    return T, np.where(keep, w_budget, tb)


#: :func:`_accumulate_rows` goes column by column from this many rows on (cost only).
ACC_COLUMNS_MIN_ROWS = 1024


def _accumulate_rows(op: np.ufunc, src: np.ndarray, out: np.ndarray) -> None:
    """``op.accumulate(src, axis=1, out=out)`` (``np.cumprod`` / ``np.cumsum`` along rows; ``out`` may be
    ``src``): the same operations in the same order, ``out[:, j] = op(out[:, j - 1], src[:, j])``, and so
    the same numbers (an accumulate is sequential; IEEE addition and multiplication are commutative).
    NumPy runs an accumulate along the last axis as one inner loop per row; with many short rows (the
    kernel table's 16k rows of 24 columns on the lines route at n = 1e8) one vector operation per
    column is 2-3x faster (1.4 -> 0.4 ms, krr106). Cost only."""
    if src.shape[0] < ACC_COLUMNS_MIN_ROWS or src.shape[1] < 2:
        op.accumulate(src, axis=1, out=out)
        return
    if out is not src:
        out[:, 0] = src[:, 0]
    for j in range(1, src.shape[1]):
        op(out[:, j - 1], src[:, j], out=out[:, j])


class _TableCache:
    """Rows of :func:`_kernel_table`: for a clone count ``c``, the pmf ``B(a)`` and the tail
    ``S(a) = P[Bin(c, 1/2) >= a]`` for ``a`` in a window ``[lo, hi]`` of cuts. The rows do not
    depend on ``ε`` (only the cut chosen from them does), so an engine keeps them across the
    ``ε`` of a search: the same numbers, computed by the same recurrences from the same Boost
    anchors, with the same error budgets (``tail_budget`` is the anchor's per-value budget;
    every row has at most :data:`_ROW_WIDTH` recurrence steps, which the caller charges)."""

    def __init__(self, table_width: int = _TABLE_WIDTH) -> None:
        #: largest window of cuts served per clone count, and the stored row width (at most
        #: :data:`_ROW_WIDTH`, the recurrence steps :func:`_kernel_table` charges)
        self.table_width = min(table_width, _TABLE_WIDTH)
        self.row_width = self.table_width + 2 * _TABLE_MARGIN
        self.store = _Rows({"lo": 1, "hi": 1, "tail_budget": 1, "B": self.row_width, "S": self.row_width})
        #: how many times the store was replaced (row numbers of an older store are stale; an object's ``id`` may be
        #: reused once it is freed, so callers holding row numbers compare this instead)
        self.generation = 0
        #: the grouping by clone count of the last few request arrays (each kept alive with it):
        #: id -> (requests, live, uc, inv, srt, first)
        self.groups: dict[int, tuple[np.ndarray, ...]] = {}

    def rows(self, c: np.ndarray, lo: np.ndarray, hi: np.ndarray, walk_rel: float = 0.0) -> np.ndarray:
        """Row (in the store) covering ``[lo, hi]`` for each sorted distinct ``c``; rows are
        computed (with :data:`_TABLE_MARGIN` on each side) where none covers it. The top tails of
        new rows at consecutive clone counts are walked from one Boost anchor (:func:`_walk_tops`;
        a walked tail is kept where its error bound is within ``max(walk_rel, 2 x`` Boost's tail
        budget) of its value, which the callers charge anyway)."""
        row, found = self.store.find(c)
        ok = found.copy()
        if np.any(found):
            r = row[found]
            ok[found] = (self.store.data["lo"][r] <= lo[found]) & (self.store.data["hi"][r] >= hi[found])
        miss = np.nonzero(~ok)[0]
        if miss.size:
            if self.store.size + miss.size > _TABLE_ROWS:
                self.store = _Rows(self.store.widths)
                self.generation += 1
                miss = np.arange(c.size)
            cm = c[miss]
            lm = np.maximum(lo[miss] - _TABLE_MARGIN, 0.0)
            W = self.row_width
            hm = np.minimum(hi[miss] + _TABLE_MARGIN, lm + (W - 1.0))
            # the recurrences over the widest window asked (beyond a row's window B = 0, S = its top tail),
            # computed in place in the store's new rows (the same operations, in the same order, as
            # ratios, their products and sums in fresh arrays: fewer pages touched, cost only)
            Wc = int(np.max(hm - lm)) + 1
            a = lm[:, None] + np.arange(Wc, dtype=float)[None, :]
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = cm[:, None] - a  # B(a)/B(a-1) = (c - a + 1)/a inside the row's window, 0 past it
                ratio += 1.0
                ratio /= a
            np.copyto(ratio, 0.0, where=a > np.minimum(hm, cm)[:, None])
            ratio[:, 0] = 1.0
            _accumulate_rows(np.multiply, ratio, ratio)  # cumprod (0 from the first column past the window on)
            new = self.store.reserve(miss.size)
            Bm, Sm = new["B"], new["S"]
            np.multiply(bn.pmf(lm, cm, 0.5)[:, None], ratio, out=Bm[:, :Wc])
            Bm[:, Wc:] = 0.0
            # R(a) = sum_{lo <= a <= b <= hi} B(b) (0 past the row's top), in S's columns until its top tail is added
            _accumulate_rows(np.add, Bm[:, Wc - 1::-1], Sm[:, Wc - 1::-1])  # cumsum from the right
            s_top, t_budget = _walk_tops(cm, lm, hm, Bm[:, :Wc], Sm[:, :Wc], walk_rel)  # S(hi + 1) = P[Bin >= hi + 1]
            Sm[:, :Wc] += s_top[:, None]  # S(a) = P[Bin >= a]
            Sm[:, Wc:] = s_top[:, None]
            new["lo"][:], new["hi"][:], new["tail_budget"][:] = lm, hm, t_budget
            row[miss] = self.store.add(cm)
        return row


def _lines_from_row(
    Brow: np.ndarray, Srow: np.ndarray, r: np.ndarray, j: np.ndarray, kk: np.ndarray, cb: np.ndarray, ul: np.ndarray,
    vl: np.ndarray, tail_budget: np.ndarray, d: float, eps: float, rel: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The values and lines of :func:`_kernel_lines` from tabulated rows: request ``i`` reads row
    ``r[i]`` (pmf ``Brow`` and tail ``Srow`` of ``Bin(c, 1/2)`` over a window of cuts), its
    closed-form cut ``kk[i]`` at column ``j[i]``, ``cb = u - e^ε v``; the best of the cuts
    ``kk - 1 .. kk + 1`` (as :func:`_kernel_lines`). Rows hold at most :data:`_ROW_WIDTH`
    recurrence steps (charged), their tails the anchor's ``tail_budget``."""
    g, gm1 = math.exp(eps), math.expm1(eps)
    jc = j.astype(np.int64)
    if jc.size and (int(jc.min()) < 2 or int(jc.max()) > Brow.shape[1] - 2):  # the callers' contract
        raise CertificationError("kernel table: a cut outside its tabulated row (please report)")
    flat = r * Brow.shape[1] + jc  # row-major positions (one gather per column, within the row)
    Bf, Sf = Brow.reshape(-1), Srow.reshape(-1)
    cb_, cs_ = [], []
    for o in (-1, 0, 1):  # cuts kk - 1, kk, kk + 1: (B(cut - 1), S(cut)); cut - 1 < 0: B = 0
        b_o = Bf.take(flat + (o - 1))
        cb_.append(np.where(kk + (o - 1.0) >= 0.0, b_o, 0.0))
        cs_.append(Sf.take(flat + o))
    v_ = [cb * b_o - gm1 * s_o for b_o, s_o in zip(cb_, cs_)]
    pick1 = v_[1] > v_[0]  # the first best, as np.argmax
    pick2 = v_[2] > np.maximum(v_[0], v_[1])
    bb = np.where(pick2, cb_[2], np.where(pick1, cb_[1], cb_[0]))
    ss = np.where(pick2, cs_[2], np.where(pick1, cs_[1], cs_[0]))
    vv = np.where(pick2, v_[2], np.where(pick1, v_[1], v_[0]))
    erel = rel + 3.0 * _ROW_WIDTH * _U  # pmf values: anchor budget plus the ratio steps
    srel = np.maximum(np.maximum(tail_budget, rel), erel)  # tails: sf at the top plus positive pmf sums
    b1 = cb_[1]
    e_val = ((erel + 16.0 * _U) * cb * bb + (srel + 16.0 * _U) * gm1 * ss + 2.0 * erel * gm1 * b1
             + 4.0 * _U * (ul + g * vl) * (cb_[0] + cb_[1] + cb_[2]))
    e_a = (erel + 16.0 * _U) * gm1 * 0.5 * bb + (srel + 16.0 * _U) * gm1 * ss + 2.0 * erel * gm1 * b1
    B_l = d * (1.0 + g) * bb
    return np.maximum(vv, 0.0), e_val, -gm1 * (0.5 * bb + ss), e_a, B_l, (erel + 16.0 * _U) * B_l


def _group_by_value(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``uc, inv = np.unique(x, return_inverse=True)``, ``srt = np.argsort(inv, kind="stable")`` and the
    start in ``srt`` of each group (``first``), the same arrays, from one stable argsort of ``x`` itself
    (krr106): equal values have equal ``inv``, so both stable orders list each group's positions in
    increasing order, and ``uc`` is the first of each group in that order. NumPy's stable sort of floats
    (timsort) takes the few ascending runs of :func:`_kernel_table`'s clone counts (one per branch or
    block row) in about linear time: 65k requests 4.2 -> 0.4 ms. Arrays with a NaN or a ``-0.0`` (which
    ``np.unique`` may order or merge otherwise) take the ``np.unique`` way. Cost only."""
    if x.size == 0 or bool(np.isnan(x).any()) or bool(np.signbit(x).any()):
        uc, inv = np.unique(x, return_inverse=True)
        srt = np.argsort(inv, kind="stable")
        first = np.concatenate(([0], np.nonzero(np.diff(inv[srt]))[0] + 1))
        return uc, inv, srt, first
    srt = np.argsort(x, kind="stable")
    xs = x[srt]
    step = xs[1:] != xs[:-1]
    first = np.concatenate(([0], np.nonzero(step)[0] + 1))
    group = np.zeros(x.size, dtype=np.intp)
    np.cumsum(step, out=group[1:])
    inv = np.empty(x.size, dtype=np.intp)
    inv[srt] = group
    return xs[first], inv, srt, first


def _kernel_table(
    c: np.ndarray, lam: np.ndarray, d: float, eps: float, rel: float, cache: _TableCache | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_kernel_lines` for many ``λ`` per clone count ``c``: one Boost pmf and one sf per
    distinct ``c`` (at the ends of the window of cuts it needs), the rest by the exact ratio
    ``B(a)/B(a-1) = (c-a+1)/a`` and tail sums ``S(a) = S(a+1) + B(a)`` (all terms positive).
    Requests whose ``c`` needs more than :data:`_TABLE_WIDTH` cuts go to :func:`_kernel_lines`.
    Same return values and error model (plus ``3 W u`` relative for ``W`` recurrence steps,
    charged as ``W =`` :data:`_ROW_WIDTH`). The rows come from ``cache`` (a fresh one if None):
    rows computed for an earlier ``ε`` are the same numbers a fresh call would compute for the
    window they cover (see :class:`_TableCache`)."""
    c = np.asarray(c, dtype=float)
    lam = np.asarray(lam, dtype=float)
    gm1 = math.expm1(eps)
    u = 0.5 + lam * d
    v = _first_user_v(lam, d)
    coef_b = 2.0 * lam * d - gm1 * v
    shape = c.shape
    out = [np.zeros(shape) for _ in range(6)]
    live = np.nonzero(coef_b > 0.0)[0]
    if live.size == 0:
        return tuple(out)  # type: ignore[return-value]
    cl, cb, vl, ul = c[live], coef_b[live], v[live], u[live]
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        rho = (2.0 * lam[live] * d + gm1 * (1.0 - vl)) / cb
        astar = rho * (cl + 1.0) / (1.0 + rho)
    astar = np.where(np.isfinite(astar), astar, cl + 1.0)
    k = np.clip(np.floor(astar) + 1.0, 0.0, cl + 1.0)
    grp = cache.groups.get(id(c)) if cache is not None else None
    if grp is not None and grp[0] is c and np.array_equal(grp[1], live):
        uc, inv, srt, first = grp[2:]  # the same requests as the last call: the same grouping
    else:
        uc, inv, srt, first = _group_by_value(cl)
        if cache is not None:
            if len(cache.groups) >= 4:
                cache.groups.clear()
            cache.groups[id(c)] = (c, live, uc, inv, srt, first)
    k_srt = k[srt]
    kmin = np.minimum.reduceat(k_srt, first)
    kmax = np.maximum.reduceat(k_srt, first)
    # the window ends at the largest cut; requests whose cut falls below it (e.g. λ near 1 at
    # the low end of v) go the direct way, as do tiny cuts (c of a few units)
    table_width = cache.table_width if cache is not None else _TABLE_WIDTH
    kmin = np.maximum(kmin, kmax - (table_width - 3.0))
    lo = np.maximum(kmin - 2.0, 0.0)  # B needed at k-2 .. k, S at k-1 .. k+1
    hi = kmax + 1.0
    width = (hi - lo + 1.0).astype(np.int64)
    tab = width <= table_width
    direct = ~tab[inv] | (k < 2.0) | (k - 2.0 < lo[inv])
    if np.any(direct):
        res = _kernel_lines(cl[direct], lam[live][direct], d, eps, rel)
        for o, r in zip(out, res):
            o[live[direct]] = r
    if not np.any(tab):
        return tuple(out)  # type: ignore[return-value]
    store = cache if cache is not None else _TableCache()
    row_tab = store.rows(uc[tab], lo[tab], hi[tab], rel)  # cache row of each tabulated c
    data = store.store.data
    # requests served by the table
    row_of_c = np.cumsum(tab) - 1
    rq = np.nonzero(~direct)[0]
    r = row_tab[row_of_c[inv[rq]]]
    kk = k[rq]
    res = _lines_from_row(data["B"], data["S"], r, kk - data["lo"][r], kk, cb[rq], ul[rq], vl[rq], data["tail_budget"][r],
                          d, eps, rel)
    tgt = live[rq]
    for o, x in zip(out, res):
        o[tgt] = x
    return tuple(out)  # type: ignore[return-value]


# ---------------------------------------------------------------------------------------
# The engine: sum over (t, z) of Pr[t, z] h(t - 1, λ(t, z)) with certified blocks.
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Model:
    """A mixture of the form of module docstring §2, general enough for the blanket and for
    the "all other users hold one third value" dataset.

    ``C ~ Bin(n-1, q2)`` other users on ``{x1, x1'}`` (fair clones). Given ``C = c``,
    ``Z' ~ Bin(n-1-c, rho)``. The first user takes branch ``b`` with probability
    ``weight_b`` (the same under both hypotheses); then ``T = C + off_b`` (``off_b = 1``:
    counted) and ``Z = Z' + shift_b``. ``λ(t, z) = t / (t + kappa (w0 + wt t + wz z))`` and the
    term is ``h(t - 1, λ)`` with first-user bias ``d``. ``orient`` (±1) is chosen so that
    ``λ`` is non-increasing in ``v = orient · z`` (the engine works in ``v``).
    """

    n: int
    q2: float
    rho: float
    branches: tuple[tuple[float, int, int], ...]
    orient: int
    kappa: float
    w0: float
    wt: float
    wz: float
    d: float

    def lam(self, t: np.ndarray, v: np.ndarray) -> np.ndarray:
        z = self.orient * np.asarray(v, dtype=float)
        w = self.w0 + self.wt * t + self.wz * z
        with np.errstate(divide="ignore", invalid="ignore"):
            lam = t / (t + self.kappa * np.maximum(w, 0.0))
        return np.clip(np.where(np.isfinite(lam), lam, 1.0), 0.0, 1.0)

    def dlam_dv(self, t: np.ndarray, v: np.ndarray) -> np.ndarray:
        z = self.orient * np.asarray(v, dtype=float)
        w = self.w0 + self.wt * t + self.wz * z
        den = t + self.kappa * np.maximum(w, 0.0)
        return -t * self.kappa * self.wz * self.orient / (den * den)

    @property
    def v_support(self) -> tuple[float, float]:
        top = float(self.n - 1 + max(s for _, _, s in self.branches))
        return (0.0, top) if self.orient > 0 else (-top, 0.0)


@dataclass
class _Blocks:
    """Block-level data (eps-independent) and the breakpoints (cells) of every block."""

    t1: np.ndarray
    t2: np.ndarray
    level: np.ndarray
    M: np.ndarray
    M_err: np.ndarray
    mean: np.ndarray  # estimate of E[v | block] (places the breakpoints; never used in a bound)
    sd: np.ndarray
    # cells (breakpoints), grouped by block in increasing y
    start: np.ndarray  # first cell of each block
    count: np.ndarray  # number of cells of each block (>= 2)
    y: np.ndarray
    anchor: np.ndarray  # global cell index of the anchor piece (contains the mean of v)
    # block totals of the functionals at each breakpoint: (upper nominal, lower nominal, error)
    F: dict = field(default_factory=dict)


_FUNCTIONALS = ("fp", "fm", "ge", "lt")  # E[(v-y)+], E[(y-v)+], P[v >= y], P[v < y]
_INCREASING = {"fp": True, "ge": True, "fm": False, "lt": False}
#: For orient = -1 (v = -z) the functionals of v are these functionals of z at x = -y.
_MIRROR = {"fp": "fm", "fm": "fp", "ge": "le", "lt": "gt"}


def _goal(rtol: float, lower: float, base: tuple[float, float]) -> float:
    """The largest width of a part's bracket that keeps the whole (the part plus ``base``, the
    bracket of the rest) within ``rtol`` relative: ``rtol (lower + base_lo) - (base_up - base_lo)``
    (a cost target only; negative when the rest alone is too wide)."""
    return rtol * (lower + base[0]) - (base[1] - base[0])


class _Engine:
    """Certified ``Σ_{t, z} Pr[t, z] h(t - 1, λ(t, z))`` for a :class:`_Model`, refined until the
    bracket is as narrow as requested. Blocks and their functionals persist between calls."""

    def __init__(self, model: _Model, hole: tuple[int, int] | None = None) -> None:
        """``hole = (t_lo, t_hi)``: the totals ``t_lo .. t_hi`` are left out (another part of the
        sum bounds them: :class:`_TotalsWindow`); the blocks cover every other total."""
        self.m = model
        self.hole = hole
        self.N = model.n - 1
        self.rel = bn.pmf_error_budget(max(model.n, 2))  # pmf values; tails charge their own
        self.narrow = ENGINE_NARROW if model.n >= ENGINE_NARROW_N else bn.NARROW
        self.tv = 2.0 * model.d  # h <= u - v <= 2d
        self.vmin, self.vmax = model.v_support
        counted = sum(w for w, off, _ in model.branches if off == 1)
        mu = self.N * model.q2 + counted
        sd = math.sqrt(max(self.N * model.q2 * (1.0 - model.q2), 1.0))
        # the shared breakpoint grid: level 0 spacing ~8-16 sd of the third-value count
        msize = max(self.N - mu, 0.0)
        sd_v = math.sqrt(max(msize * model.rho * (1.0 - model.rho), 0.25))
        self.H = 1 << max(int(math.ceil(math.log2(8.0 * sd_v))), 0)
        self.hinges = _Hinges(model.rho)
        # Boost tails of Bin(N, q2) at block edges asked before (neighbouring blocks, the two
        # branches' shifted ranges and refined blocks share edges): the same numbers, fewer calls
        self.tails = bn.TailMemo(self.N, model.q2)
        inner = np.round(mu + sd * np.linspace(-12.0, 12.0, 49))
        cuts = [1.0, model.n + 1.0] + ([float(hole[0]), float(hole[1]) + 1.0] if hole is not None else [])
        edges = np.unique(np.clip(np.concatenate((cuts, inner)), 1.0, model.n + 1.0))
        t1, t2 = edges[:-1], edges[1:] - 1.0
        if hole is not None:
            outside = (t2 < hole[0]) | (t1 > hole[1])
            t1, t2 = t1[outside], t2[outside]
        self.b = self._make_blocks(t1, t2, np.zeros(t1.shape, dtype=int))
        self.b0 = self.b  # the initial blocks (kept: coarse requests are answered from them)
        self._eps: float | None = None
        self._K: dict = {}
        self._memo: dict[float, DeltaBounds] = {}
        self.tables = _TableCache()  # kernel table rows (eps-independent), kept across eps
        self._reqs: dict[int, tuple[_Blocks, dict]] = {}  # kernel requests of the current / initial blocks
        self._b0_rel = 0.0  # relative width of the initial blocks' last bracket
        self._slope: tuple[float, float] = (math.nan, math.nan)  # (eps, d log delta / d eps estimate)
        #: (eps, blocks, kernels) of the last bracket computed (not a memo hit): :meth:`lower_at`
        self._last: tuple[float, _Blocks, dict] | None = None

    # -- eps-independent data --------------------------------------------------------
    def _branch_ranges(self, t1: np.ndarray, t2: np.ndarray, off: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        lo = np.maximum(t1 - off, 0.0)
        hi = np.minimum(t2 - off, float(self.N))
        return lo, hi, hi >= lo

    def _make_blocks(self, t1: np.ndarray, t2: np.ndarray, level: np.ndarray) -> _Blocks:
        m, N = self.m, self.N
        nb = t1.size
        M = np.zeros(nb)
        M_err = np.zeros(nb)
        EV = np.zeros(nb)
        branch_mass = []  # per branch: Pr[C in its c range] and its error bound, per block
        for w, off, sh in m.branches:
            lo, hi, ok = self._branch_ranges(t1, t2, off)
            mass, merr = np.zeros(nb), np.zeros(nb)
            if np.any(ok):
                mass[ok], merr[ok] = bn.interval_mass(lo[ok], hi[ok], N, m.q2, memo=self.tails, narrow=self.narrow)
            branch_mass.append((mass, merr))
            cmid = 0.5 * (lo + hi)
            M += w * mass
            M_err += w * merr + 4.0 * _U * w * mass
            EV += m.orient * w * mass * ((N - cmid) * m.rho + sh)  # estimate only
        tmid = 0.5 * (t1 + t2)
        msize = np.maximum(N - tmid + 0.5, 0.0)
        sd = np.sqrt(np.maximum(msize * m.rho * (1.0 - m.rho), 0.25))
        with np.errstate(divide="ignore", invalid="ignore"):
            mean = np.where(M > 0.0, EV / M, m.orient * msize * m.rho)
        # λ(t2, ·) is a convex function of v only where w(t2, z) >= 0 (there λ <= 1); breakpoints
        # stay in that region (beyond it the crude tail bound 2d of the interpolant applies)
        slope_w = m.wz * m.orient  # > 0: w increases with v
        vlow = np.maximum(self.vmin, np.ceil(-(m.w0 + m.wt * t2) / slope_w))
        vhigh = np.full(nb, self.vmax + 1.0)  # one point past the support keeps two breakpoints
        count, y = _grid_points(mean, sd, level, vlow, vhigh, self.H)
        start = np.concatenate(([0], np.cumsum(count)[:-1])).astype(int)
        cb = np.repeat(np.arange(nb), count)
        cell = np.arange(y.size)
        left_of_mean = (y <= mean[cb]) & (cell < (start + count - 1)[cb])
        last_left = np.full(nb, -1)
        np.maximum.at(last_left, cb, np.where(left_of_mean, cell, -1))
        anchor = np.where(last_left >= start, last_left, start).astype(int)
        blocks = _Blocks(t1, t2, level.astype(int), M, M_err, mean, sd, start, count, y, anchor)
        blocks.F = self._functionals(t1, t2, count, y, branch_mass)
        return blocks

    def _functionals(self, t1: np.ndarray, t2: np.ndarray, count: np.ndarray, y: np.ndarray,
                     branch_mass: list[tuple[np.ndarray, np.ndarray]]) -> dict:
        """Block totals of the four functionals at every breakpoint, bracketed by (P6).
        ``branch_mass``: per branch of the model, each block's ``Pr[C in its c range]`` and error
        bound (:func:`.binomial.interval_mass`, as :meth:`_make_blocks` computed them)."""
        m, N = self.m, self.N
        cb = np.repeat(np.arange(t1.size), count)
        out = {f: [np.zeros(y.size), np.zeros(y.size), np.zeros(y.size)] for f in _FUNCTIONALS}
        x0 = m.orient * y  # the z-point of v = y for an unshifted branch
        names = {f: (f if m.orient > 0 else _MIRROR[f]) for f in _FUNCTIONALS}
        # The conditional functionals are bracketed by their values at the ends of the block's
        # range of c. One total (t1 = t2): each branch's own c (exact). Wider blocks: the union
        # [t1 - 1, t2] of the branches' ranges, whose ends are shared with the neighbouring
        # blocks (one new m per edge instead of three; a bracket a unit wider).
        row = (t1 == t2)[cb]
        u_lo = np.maximum(t1 - 1.0, 0.0)[cb]
        u_hi = np.minimum(t2, float(N))[cb]
        # every (branch, end) request goes to the cache at once: one pass of the tail runs over
        # the sizes instead of one per request (the requests' sizes overlap almost entirely); the
        # second end only where the block's c range has two ends (not for single totals)
        todo = []
        m_req, x_req = [], []
        for (w, off, sh), (bmass, bmerr) in zip(m.branches, branch_mass):
            if w <= 0.0:
                continue
            blo, bhi, bok = self._branch_ranges(t1, t2, off)
            if not np.any(bok):
                continue
            ok = bok[cb]
            lo = np.where(row, blo[cb], u_lo)
            hi = np.where(row, bhi[cb], u_hi)
            two = np.nonzero(ok & (hi > lo))[0]
            # m = n - 1 - c at the two ends of the block's c range: big m (small c), small m
            todo.append((w, sh, bmass, bmerr, ok, two))
            m_req += [np.where(ok, N - lo, 0.0), N - hi[two]]
            x_req += [x0, x0[two]]
        if not todo:
            return out
        h_all = self.hinges.get(np.concatenate(m_req), np.concatenate(x_req))
        start = 0
        for w, sh, bmass, bmerr, ok, two in todo:
            mass, merr = bmass[cb], bmerr[cb]
            big = {f: v[start: start + y.size] for f, v in h_all.items()}
            if two.size == y.size:  # every cell has two ends (``two`` is 0 .. y.size - 1): views, no copies
                small = {f: v[start + y.size: start + 2 * y.size] for f, v in h_all.items()}
            else:
                small = {f: v.copy() for f, v in big.items()}
                for f, v in h_all.items():
                    small[f][two] = v[start + y.size: start + y.size + two.size]
            start += y.size + two.size
            ends = [_shifted(h) if sh == 1 else h for h in (big, small)]
            h_big, h_small = ends  # big m (small c), small m (large c)
            wm = np.where(ok, w * mass, 0.0)
            for f in _FUNCTIONALS:
                g = names[f]
                vb, vs = h_big[g], h_small[g]
                eb, es = h_big["e_" + g], h_small["e_" + g]
                # increasing functionals of v are largest where v is largest: the small c
                # (large m) if orient > 0, the large c (small m) if orient < 0
                big_is_upper = _INCREASING[f] == (m.orient > 0)
                up, low = (vb, vs) if big_is_upper else (vs, vb)
                out[f][0] += wm * up
                out[f][1] += wm * low
                out[f][2] += np.where(ok, w * merr * np.maximum(up, low) + wm * np.maximum(eb, es)
                                      + 4.0 * _U * wm * np.maximum(up, low), 0.0)
        return out

    # -- per-eps kernels ---------------------------------------------------------------
    def _kernel_requests(self, b: _Blocks) -> dict:
        """The ``ε``-independent part of :meth:`_kernels`: where each cell's kernels are asked
        (clone counts and ``λ``), its tangent point and the cells that need none. Kept for the
        current blocks, so that a new ``ε`` costs only the kernel values."""
        hit = self._reqs.get(id(b))
        if hit is not None and hit[0] is b:
            return hit[1]
        m = self.m
        cb = np.repeat(np.arange(b.t1.size), b.count)
        t1, t2 = b.t1[cb], b.t2[cb]
        last = np.zeros(b.y.size, dtype=bool)
        last[b.start + b.count - 1] = True
        yn = _rolled(b.y, -1)
        # tangent points: one per piece (cell i covers [y_i, y_{i+1})), at the integer below
        # the midpoint; the last cell's line covers [y_last, inf) and touches at y_last
        yhat = np.where(~last, np.floor(0.5 * (b.y + yn)), b.y)
        lam_up = np.minimum(m.lam(t2, b.y) * (1.0 + 4.0 * _U), 1.0)
        lam_lo = m.lam(t1, yhat) * (1.0 - 4.0 * _U)
        slope_lam = m.dlam_dv(t1, yhat)
        wide = b.t2 > b.t1
        a = b.anchor[wide]
        lp = np.minimum(m.lam(b.t2[wide], yhat[a]) * (1.0 + 4.0 * _U), 1.0)
        # A first breakpoint far below the rest (the low end of v) costs no kernel: its value
        # is bounded by 2d (the interpolant through an upper value at a breakpoint still
        # majorises), and its piece uses the next piece's line (any line is a minorant).
        nc = b.y.size
        first = np.zeros(nc, dtype=bool)
        first[b.start] = True
        far = first & ~last & (yn - b.y > 24.0 * b.sd[cb])
        nxt = np.nonzero(far)[0] + 1
        ev = ~far
        # one table per clone count for all three requests (upper values, lines, t-probe)
        # lines of a wide block at t2 clones (P1: h(t2, .) <= h(t - 1, .) for t <= t2), the clone
        # count the next block's upper values use, so neighbours share a kernel table row
        c_line = np.where(t2 - t1 >= SHARE_WIDTH, t2, t2 - 1.0)
        cs = np.concatenate((t1[ev] - 1.0, c_line[ev], b.t1[wide] - 1.0))
        ls = np.concatenate((lam_up[ev], lam_lo[ev], lp))
        lam_up_ev = lam_up[ev]
        for arr in (yhat, lam_lo, slope_lam):
            arr[far] = arr[nxt]
        req = dict(nc=nc, far=far, nxt=nxt, ev=ev, cs=cs, ls=ls, wide=wide, yhat=yhat, lam_lo=lam_lo,
                   slope_lam=slope_lam, lam_up_ev=lam_up_ev)
        if b is self.b or b is self.b0:  # the current and the initial blocks
            self._reqs = {k: v for k, v in self._reqs.items() if v[0] is self.b or v[0] is self.b0}
            self._reqs[id(b)] = (b, req)
        return req

    def _kernels(self, b: _Blocks, eps: float) -> dict:
        m = self.m
        q = self._kernel_requests(b)
        nc, far, nxt, ev, cs, ls, wide = q["nc"], q["far"], q["nxt"], q["ev"], q["cs"], q["ls"], q["wide"]
        yhat, lam_lo, slope_lam = q["yhat"], q["lam_lo"], q["slope_lam"]
        res = _kernel_table(cs, ls, m.d, eps, self.rel, self.tables)
        ne = int(ev.sum())
        full = []
        for part, fill in ((res[0][:ne], self.tv), (res[1][:ne], 0.0)):
            arr = np.full(nc, fill)
            arr[ev] = part
            full.append(arr)
        val, verr = full
        lines = {}
        for key, r in (("A", res[2]), ("Aerr", res[3]), ("B", res[4]), ("Berr", res[5])):
            arr = np.zeros(nc)
            arr[ev] = r[ne:2 * ne]
            arr[far] = arr[nxt]
            lines[key] = arr
        probe = np.zeros(b.t1.size)
        probe[wide] = res[0][2 * ne:]
        # d value / d eps at each upper value, an estimate that only steers the search
        # (:meth:`log_slope`): at the optimal cut the value is (u - g v) B - (g - 1) S, whose
        # derivative with the cut held is -g (v B + S); B and S are read back from that cut's line
        g = math.exp(eps)
        gm1 = math.expm1(eps)
        dval = np.zeros(nc)
        if gm1 > 0.0:
            bb = res[4][:ne] / (m.d * (1.0 + g))
            ss = -res[2][:ne] / gm1 - 0.5 * bb
            dval[ev] = -g * (_first_user_v(q["lam_up_ev"], m.d) * bb + ss)
        return dict(val=val, verr=verr, yhat=yhat, lam=lam_lo, dlam=slope_lam, A=lines["A"], Aerr=lines["Aerr"],
                    B=lines["B"], Berr=lines["Berr"], piece=np.ones(nc, dtype=bool), probe=probe, dval=dval)

    # -- assembly --------------------------------------------------------------------
    def _assemble(self, b: _Blocks, K: dict, dvals: np.ndarray | None = None, quick: bool = False,
                  lower_only: bool = False, have: dict | None = None) -> dict:
        """Per-block certified upper/lower bounds (module docstring §3), their nominal
        (error-free) versions, and the part of the gap due to the width in ``t``. With
        ``dvals`` (estimates of ``d g_i / d ε`` at the breakpoints) also ``U_dnom``: the nominal
        upper interpolant's derivative in ``ε`` (an estimate for :meth:`log_slope`; never a bound).
        ``quick``: the certified bounds and the nominal upper only (what a converged evaluation
        needs; the refinement's nominal/swapped parts are computed when it refines).
        ``lower_only``: the certified lower bound ``L_cert`` alone (:meth:`lower_at`). ``have``: parts
        already assembled for these blocks and kernels (a quick call's), taken as they are."""
        have = have if have is not None else {}
        nb = b.t1.size
        ncell = b.y.size
        idx = np.arange(ncell)
        cb = np.repeat(np.arange(nb), b.count)
        first = idx == b.start[cb]
        last = idx == (b.start + b.count - 1)[cb]
        y = b.y
        F = b.F

        def pick(f: str, coef: np.ndarray, upper: bool, cert: bool, at: np.ndarray | None = None) -> np.ndarray:
            """The certified (``cert``) or else the nominal value of coef * functional f, bounded from above
            or below (at the cells ``at`` only, ``coef`` given there, when ``at`` is given). (Every caller
            uses one of the two: only that one is computed, krr106; the same operations, cost only.)"""
            hi, lo, err = F[f]
            if at is not None:
                hi, lo, err = hi[at], lo[at], err[at]
            use_hi = (coef >= 0.0) == upper
            if cert:
                return coef * np.where(use_hi, hi + err, np.maximum(lo - err, 0.0))
            return coef * np.where(use_hi, hi, lo)

        def seg(x: np.ndarray) -> np.ndarray:
            return np.bincount(cb, weights=x, minlength=nb)

        M_hi, M_lo = b.M + b.M_err, np.maximum(b.M - b.M_err, 0.0)
        a = b.anchor

        def moment(coef: np.ndarray, upper: bool, cert: bool) -> np.ndarray:
            """``coef * E[v - y_a; B] = coef * (E[(v-y_a)+] - E[(y_a-v)+])`` per block, from the
            hinge functionals at the anchor (no cancellation against the mass; certified or nominal as
            ``pick``)."""
            return pick("fp", coef, upper, cert, a) + pick("fm", -coef, upper, cert, a)

        # ---- upper: interpolant of G_up through (y_i, g_i) ----
        out = {}
        right = idx > a[cb]
        modes = ("cert", "nom") + (() if quick else ("swap",)) + (("dnom",) if dvals is not None else ())
        yn = _rolled(y, -1)  # (each breakpoint's successor; the upper modes and the lower lines' reach)
        for mode in () if lower_only else modes:
            if "U_" + mode in have:
                out["U_" + mode] = have["U_" + mode]
                continue
            c = mode == "cert"
            up = mode != "swap"  # "swap": nominal values at the other end of each bracket
            g = dvals if mode == "dnom" and dvals is not None else K["val"] + (K["verr"] if c else 0.0)
            gn = _rolled(g, -1)
            slope = np.where(last, 0.0, (gn - g) / np.where(last, 1.0, yn - y))
            dslope = np.where(first, 0.0, slope - _rolled(slope, 1))
            f_fp = pick("fp", dslope, up, c)
            f_fm = pick("fm", dslope, up, c)
            kink = np.where(first, 0.0, np.where(right, f_fp, f_fm))
            ga, sa = g[a], slope[a]
            mom = moment(sa, up, c)
            anchor = ga * (M_hi if c else b.M) + mom
            s0 = slope[b.start]
            tail_coef = (0.0 if mode == "dnom" else self.tv) + np.maximum(s0, 0.0) * (y[b.start] - self.vmin)
            lt_hi, _, lt_err = F["lt"]
            lt_end = lt_hi if up else F["lt"][1]
            tail = tail_coef * (lt_end[b.start] + (lt_err[b.start] if c else 0.0))
            terms = seg(kink) + anchor + tail
            if c:
                absum = seg(np.abs(kink)) + np.abs(ga * M_hi) + np.abs(mom) + tail
                terms = terms + 8.0 * _U * (b.count + 4.0) * absum
            out["U_" + mode] = terms
        # ---- lower: tangent lines (lam-space cuts) switched at the breakpoints ----
        piece = K["piece"]
        V = K["A"] + K["B"] * K["lam"]
        s = K["B"] * K["dlam"]
        yh = K["yhat"]
        Vp, sp, yhp = _rolled(V, 1), _rolled(s, 1), _rolled(yh, 1)
        switch = ~first  # every breakpoint but the first switches lines
        dsl = np.where(switch, s - sp, 0.0)
        dd = np.where(switch, (V + s * (y - yh)) - (Vp + sp * (y - yhp)), 0.0)
        La = V[a] + s[a] * (y[a] - yh[a])  # anchor line at the anchor breakpoint
        sa = s[a]
        for mode in ("cert",) if quick or lower_only else ("cert", "nom", "swap"):
            if "L_" + mode in have:
                out["L_" + mode] = have["L_" + mode]
                continue
            c = mode == "cert"
            lw = mode == "swap"  # lower bounds take the lower end unless swapped
            r_fp, r_ge = pick("fp", dsl, lw, c), pick("ge", dd, lw, c)
            l_fm, l_lt = pick("fm", dsl, lw, c), pick("lt", -dd, lw, c)
            kink = np.where(switch, np.where(right, r_fp + r_ge, l_fm + l_lt), 0.0)
            mass = np.where(La >= 0.0, M_lo, M_hi) if c else b.M
            mom = moment(sa, lw, c)
            val = seg(kink) + La * mass + mom
            if c:
                # each line is used on its own piece only: charge its error there. Piece i is
                # [y_i, y_{i+1}) (the first from the low end, the last to infinity); its mass is
                # at most P[v >= y_i] and P[v < y_{i+1}], and |v - ŷ_i| is at most the distance to
                # the piece's far end (the last piece: E[(v - y_last)+], its tangent point y_last)
                fp_hi, _, fp_e = F["fp"]
                ge_hi, _, ge_e = F["ge"]
                lt_hi, _, lt_e = F["lt"]
                lt_next = _rolled(lt_hi + lt_e, -1)
                m_piece = np.minimum(M_hi[cb], np.where(first, np.inf, ge_hi + ge_e))
                m_piece = np.minimum(m_piece, np.where(last, np.inf, lt_next))
                y_low = np.where(first, self.vmin, y)
                reach = np.maximum(yh - y_low, np.where(last, 0.0, yn - yh))
                dist = np.where(last, fp_hi + fp_e, reach * m_piece)
                line_err = np.where(piece, K["Aerr"] * m_piece + (K["Berr"] + 4.0 * _U * K["B"])
                                    * (K["lam"] * m_piece + np.abs(K["dlam"]) * dist), 0.0)
                absum = seg(np.abs(kink)) + np.abs(La * mass) + np.abs(mom)
                val = val - seg(line_err) - 8.0 * _U * (b.count + 4.0) * absum
            out["L_" + mode] = val
        out["L_cert"] = np.maximum(out["L_cert"], 0.0)
        if quick or lower_only:
            return out
        a = b.anchor
        # the part of the gap due to the width in t: the kernel corners at the anchor and the
        # brackets of the functionals over the block's range of c
        kern = np.where(b.t2 > b.t1, b.M * np.maximum(K["probe"] - V[a], 0.0), 0.0)
        brackets = np.maximum(out["U_nom"] - out["U_swap"], 0.0) + np.maximum(out["L_swap"] - out["L_nom"], 0.0)
        out["tgap"] = kern + brackets
        return out

    # -- refinement --------------------------------------------------------------------
    def _can_level_up(self, b: _Blocks, want: int, sel: np.ndarray | None = None) -> np.ndarray:
        """How many further levels (at most ``want``) the blocks ``sel`` (all if None) can take:
        each must still add points and stay within :data:`MAX_POINTS_PER_BLOCK` (see
        :func:`_grid_points`) and the largest level."""
        idx = np.arange(b.t1.size) if sel is None else sel
        unit = self.H.bit_length() - 1
        cap = min(unit + 5, MAX_LEVEL)
        out = np.zeros(idx.size, dtype=int)
        for extra in range(1, want + 1):
            nxt = b.level[idx] + extra
            spacing = np.maximum(np.right_shift(self.H, np.minimum(nxt, 62)), 1).astype(float)
            reach = np.array([_reach(int(lv)) if lv <= unit else min(12.0, _reach(unit) + 2.0 * (lv - unit))
                              for lv in nxt])
            new_points = 2.0 * reach * b.sd[idx] / spacing  # points the level would have in its window
            ok = (nxt <= cap) & (new_points <= MAX_POINTS_PER_BLOCK) & (out == extra - 1)
            out[ok] = extra
        return out

    @staticmethod
    def _merge(b: _Blocks, K: dict, keep: np.ndarray, nb: _Blocks, nK: dict) -> tuple[_Blocks, dict]:
        cb = np.repeat(np.arange(b.t1.size), b.count)
        keep_cell = keep[cb]
        count = np.concatenate((b.count[keep], nb.count))
        start = np.concatenate(([0], np.cumsum(count)[:-1])).astype(int)
        old_anchor_off = (b.anchor - b.start)[keep]
        anchor = start + np.concatenate((old_anchor_off, nb.anchor - nb.start))
        F = {f: [np.concatenate((b.F[f][i][keep_cell], nb.F[f][i])) for i in range(3)] for f in _FUNCTIONALS}
        out = _Blocks(
            np.concatenate((b.t1[keep], nb.t1)), np.concatenate((b.t2[keep], nb.t2)),
            np.concatenate((b.level[keep], nb.level)), np.concatenate((b.M[keep], nb.M)),
            np.concatenate((b.M_err[keep], nb.M_err)), np.concatenate((b.mean[keep], nb.mean)),
            np.concatenate((b.sd[keep], nb.sd)),
            start, count, np.concatenate((b.y[keep_cell], nb.y)), anchor, F)
        K2 = {}
        for key, arr in K.items():
            if key == "probe":
                K2[key] = np.concatenate((arr[keep], nK[key]))
            else:
                K2[key] = np.concatenate((arr[keep_cell], nK[key]))
        return out, K2

    @staticmethod
    def _totals(b: _Blocks, R: dict) -> tuple[float, float]:
        """Certified ``(lower, upper)`` from the per-block bounds (summation error charged)."""
        nblk = b.t1.size
        upper = float(np.sum(R["U_cert"])) * (1.0 + 4.0 * _U * nblk)
        lower = max(float(np.sum(R["L_cert"])) * (1.0 - 4.0 * _U * nblk), 0.0)
        return lower, upper

    def bounds(self, eps: float, rtol: float, max_rounds: int = 200,
               base: tuple[float, float] = (0.0, 0.0)) -> DeltaBounds:
        """Certified bracket at ``eps``, ``upper - lower <= rtol * lower`` when floating point
        allows. Answered, in this order, by the narrowest bracket already found at this ``eps``,
        by the initial (coarse, cheap) blocks, or by refining the current blocks. Each of the
        three is a certified bracket of its own; only the cost differs. ``base``: the bracket of
        the rest of the sum (the totals in the hole), whose width and lower end the goal counts:
        ``(upper + base_up) - (lower + base_lo) <= rtol (lower + base_lo)``."""
        hit = self._memo.get(eps)
        if hit is not None and (hit.upper - hit.lower <= _goal(rtol, hit.lower, base) or hit.upper <= 1e-300):
            return hit
        # the initial blocks, unless their last bracket was far wider than this request (a cost
        # decision only: their bracket is certified either way)
        if self.b is not self.b0 and rtol >= 0.05 * self._b0_rel:
            K0 = self._kernels(self.b0, eps)
            lower, upper = self._totals(self.b0, self._assemble(self.b0, K0, quick=True))
            self._b0_rel = (upper - lower) / lower if lower > 0.0 else math.inf
            if lower <= upper and (upper - lower <= _goal(rtol, lower, base) or upper <= 1e-300):
                self._last = (eps, self.b0, K0)
                return self._remember(DeltaBounds(eps, lower, upper, int(self.b0.y.size), True))
        got = self._refine(eps, rtol, max_rounds, base)
        self._last = (eps, self.b, self._K)  # the blocks and kernels that gave ``got``
        return self._remember(got)

    def lower_at(self, eps: float) -> float:
        """Certified lower bound on the engine's sum at ``eps`` from the blocks and kernels of its
        last computed bracket (module docstring §3, *lower_at*): every line rescaled to ``eps``
        (:func:`_line_ratios`, :func:`_scaled_line`) and the lower assembly run again, its
        functional brackets picked by the new coefficients' signs. 0 without a state or farther
        than :data:`LOWER_AT_REACH` from it."""
        if self._last is None:
            return 0.0
        eps_l, b, K = self._last
        r = _line_ratios(eps_l, eps)
        if r is None:
            return 0.0
        K2 = dict(K)
        K2["A"], K2["Aerr"] = _scaled_line(K["A"], K["Aerr"], r[0])
        K2["B"], K2["Berr"] = _scaled_line(K["B"], K["Berr"], r[1])
        low = self._assemble(b, K2, lower_only=True)["L_cert"]
        return max(float(np.sum(low)) * (1.0 - 4.0 * _U * b.t1.size), 0.0)  # as :meth:`_totals`

    def log_slope(self, eps: float) -> float:
        """An *estimate* of ``d log δ / d ε`` at the ``ε`` of the last refinement (``nan`` for any
        other ``ε``): the ``ε``-derivative of the nominal upper interpolant (each breakpoint value's
        derivative with its cut held, ``-e^ε (v B + S)``; the interpolation weights do not depend
        on ``ε``) over its value. Only steers :func:`.search.epsilon_for_delta`; never reported."""
        e, slope = self._slope
        return slope if e == eps and slope < 0.0 else math.nan

    def _remember(self, r: DeltaBounds) -> DeltaBounds:
        old = self._memo.get(r.eps)
        if old is None or r.upper - r.lower < old.upper - old.lower:
            if len(self._memo) >= 256:
                self._memo.clear()
            self._memo[r.eps] = r
        return r

    def _refine(self, eps: float, rtol: float, max_rounds: int = 200,
                base: tuple[float, float] = (0.0, 0.0)) -> DeltaBounds:
        """Refine until ``upper - lower <= rtol * lower`` (with ``base``: see :meth:`bounds`), or
        floating point stops it."""
        if self._eps != eps:
            self._K = self._kernels(self.b, eps)
            self._eps = eps
        history: list[float] = []
        for _ in range(max_rounds):
            b, K = self.b, self._K
            R = self._assemble(b, K, K["dval"], quick=True)
            u_nom = float(np.sum(R["U_nom"]))
            self._slope = (eps, float(np.sum(R["U_dnom"])) / u_nom if u_nom > 0.0 else math.nan)
            nblk = b.t1.size
            lower, upper = self._totals(b, R)
            ncell = int(b.y.size)
            target = _goal(rtol, lower, base)
            if upper < lower:
                raise CertificationError(
                    f"inconsistent blanket bracket [{lower!r}, {upper!r}] at eps = {eps!r} (please report)")
            if upper - lower <= target or upper <= 1e-300:
                return DeltaBounds(eps, lower, upper, ncell, True)
            if base[1] - base[0] > rtol * (upper + base[0]):  # the rest's bracket alone is too wide:
                return DeltaBounds(eps, lower, upper, ncell, False)  # no refinement here can help
            if upper <= TINY_DELTA:
                # far below any delta worth refining for (the bound is certified, perhaps loose:
                # the low end of v is bounded coarsely)
                return DeltaBounds(eps, lower, upper, ncell, False)
            # no progress over the last rounds (e.g. lower = 0 for a value far below anything a
            # search asks about): return the certified bracket as it is
            history.append(upper - lower)
            if len(history) > 4 and history[-1] > 0.5 * history[-5]:
                return DeltaBounds(eps, lower, upper, ncell, False)
            R = self._assemble(b, K, have=R)  # all parts (same certified totals), to steer the refinement
            red = np.maximum(R["U_nom"] - R["L_nom"], 0.0)
            floor = float(np.sum(np.maximum(R["U_cert"] - R["U_nom"], 0.0) + np.maximum(R["L_nom"] - R["L_cert"], 0.0)))
            total_red = float(np.sum(red))
            if floor >= 0.5 * target and total_red <= floor:
                return DeltaBounds(eps, lower, upper, ncell, False)
            width = b.t2 - b.t1 + 1.0
            can_up = self._can_level_up(b, 1) > 0
            # The gap of a block is a part due to its width in t (kernel corners, functional
            # brackets) and a part due to its breakpoints in v; each part is reduced on its own.
            tg = np.where(width > 1.0, np.minimum(R["tgap"], red), 0.0)
            jg = np.where(can_up, red - tg, 0.0)
            keep_total = max(GAP_AIM * target - floor, 0.0)
            parts = max(float(np.sum(tg + jg)), 1e-300)
            # t: a block split m ways keeps about 1/m of its t-part (first order in the width), so
            # the fewest parts for a goal G are m_i = sqrt(r_i) sum_j sqrt(r_j) / G (at most 64, or
            # T_ONE_ROUND in a round that aims at the goal at once; never below width one; at most a
            # T_REDUCTION-fold reduction per round otherwise)
            tot_t = float(np.sum(tg))
            tot_j = float(np.sum(jg))
            goal_j = max(keep_total * tot_j / parts, tot_j / V_REDUCTION)
            goal_t = max(keep_total * tot_t / parts, tot_t / T_REDUCTION)
            room = keep_total - goal_j  # what the v-part leaves of the goal this round
            m_cap = 64.0
            if self.hole is None and tot_t / T_REDUCTION > room > 0.0 and tot_t <= T_ONE_ROUND * room:
                goal_t = room * ONE_MARGIN  # the cap alone keeps the round from the goal: t takes the rest
                m_cap = T_ONE_ROUND
            m_t = np.zeros(nblk)
            if tot_t > goal_t > 0.0:
                root = np.sqrt(tg)
                mr = root * (float(np.sum(root)) / goal_t)
                # a block cut into single totals keeps no t-part at all (not r_i / m_i): the goal is
                # shared by the other blocks only (a few passes of this water-filling; before it, at
                # n = 1e9, k = 100, eps0 = 0.5 a round overshot its goal 8-fold: 24178 blocks, now 18576)
                whole = np.zeros(nblk, dtype=bool)
                for _ in range(4):
                    whole_new = whole | (mr >= width)
                    if np.array_equal(whole_new, whole):
                        break
                    whole = whole_new
                    mr = np.where(whole, width, root * (float(np.sum(root[~whole])) / goal_t))
                cap = np.minimum(width, m_cap)
                m_t = np.minimum(np.ceil(mr), cap)
                if parts < GREEDY_NEED * keep_total:
                    # a small reduction: from each block's count rounded down, one more part only for
                    # the blocks that gain most until the model meets the goal (rounding every count
                    # up split nearly every block in two for a reduction of 1.3x)
                    m_lo = np.clip(np.floor(mr), 1.0, cap)
                    deficit = float(np.sum(tg / m_lo)) - goal_t
                    if deficit > 0.0:
                        gain = tg / m_lo - tg / np.maximum(m_t, m_lo)
                        order = np.argsort(-gain, kind="stable")
                        take = order[: int(np.searchsorted(np.cumsum(gain[order]), deficit)) + 1]
                        m_lo[take] = np.maximum(m_t[take], m_lo[take])
                    m_t = m_lo
            m_t = np.where(m_t >= 2.0, m_t, 0.0)
            # v: a further level keeps about a quarter of a block's v-part (chords and tangents,
            # second order in the spacing) and about doubles its cells. The fewest cells for the
            # goal: multipliers x_i = 2^L_i proportional to (r_i / cells_i)^(1/3), scaled so that
            # sum_i r_i / x_i^2 meets the goal (levels 0 to 3 per round, at most V_REDUCTION-fold)
            raise_lv = np.zeros(nblk, dtype=int)
            if tot_j > goal_j > 0.0:
                cells = b.count.astype(float)
                scale = math.sqrt(float(np.sum(np.cbrt(jg) * cells ** (2.0 / 3.0))) / goal_j)
                x = scale * np.cbrt(jg / cells)
                want = np.clip(np.floor(np.log2(np.maximum(x, 1e-300)) + 0.5), 0, 3).astype(int)
                top = np.nonzero(want > 0)[0]
                if top.size:
                    raise_lv[top] = np.minimum(self._can_level_up(b, 3, top), want[top])
            if not np.any(m_t > 0.0) and not np.any(raise_lv > 0):
                return DeltaBounds(eps, lower, upper, ncell, False)
            chosen = np.nonzero((m_t > 0.0) | (raise_lv > 0))[0]
            split = m_t[chosen] > 0.0
            t_sp, lv_ch = chosen[split], chosen[~split]
            c_lo, c_hi, c_lv = [b.t1[lv_ch]], [b.t2[lv_ch]], [b.level[lv_ch] + raise_lv[lv_ch]]
            if t_sp.size:
                m_sp = m_t[t_sp].astype(np.int64)
                owner, part = ragged(np.zeros(t_sp.size), m_sp)  # part index within its block
                own = t_sp[owner]
                w, mm = width[own], m_sp[owner].astype(float)
                lo_ = b.t1[own] + np.floor(w * part / mm)
                hi_ = b.t1[own] + np.floor(w * (part + 1.0) / mm) - 1.0
                c_lo.append(lo_)
                c_hi.append(hi_)
                c_lv.append(b.level[own] + raise_lv[own])
            n_lo, n_hi, n_lv = np.concatenate(c_lo), np.concatenate(c_hi), np.concatenate(c_lv)
            if ncell + n_lo.size * (MAX_POINTS_PER_BLOCK // 8) > MAX_CELLS:
                # the work limit: return the certified bracket as it is (the search copes)
                return DeltaBounds(eps, lower, upper, ncell, False)
            nb = self._make_blocks(n_lo, n_hi, n_lv)
            nK = self._kernels(nb, eps)
            keep = np.ones(nblk, dtype=bool)
            keep[chosen] = False
            self.b, self._K = self._merge(b, K, keep, nb, nK)
        b, K = self.b, self._K
        lower, upper = self._totals(b, self._assemble(b, K))
        return DeltaBounds(eps, lower, upper, int(b.y.size), False)


# ---------------------------------------------------------------------------------------
# k-RR parameters and the public profiles.
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class KrrConstants:
    """Derived constants of k-RR (module docstring §1-§2), computed without overflow for
    ``eps0 <= 700``: ``q = 1/(e^ε0 + k - 1)``, ``p = e^ε0 q``, ``p0 = (k-2) q``,
    ``ρ = (k-2)/(e^ε0 + k - 3)``, ``κ = 2/(e^ε0 + 1)``, ``d = (e^ε0 - 1)/(2(e^ε0 + 1))``,
    ``pa' = e^ε0/(e^ε0 + 1)``, ``pb' = 1/(e^ε0 + 1)``."""

    n: int
    k: float  # an integer for k-RR; a real k > 2 for a three-class pair (module docstring §6)
    eps0: float

    @property
    def e0(self) -> float:
        return math.exp(self.eps0)

    @property
    def q(self) -> float:
        return 1.0 / (self.e0 + self.k - 1.0)

    @property
    def p(self) -> float:
        return 1.0 / (1.0 + (self.k - 1.0) / self.e0)

    @property
    def p0(self) -> float:
        return (self.k - 2.0) * self.q

    @property
    def rho(self) -> float:
        return (self.k - 2.0) / (self.e0 + self.k - 3.0)

    @property
    def kappa(self) -> float:
        return 2.0 / (self.e0 + 1.0)

    @property
    def d(self) -> FirstUserGap:
        # (e^ε0 - 1) / (2 (e^ε0 + 1)), carrying 1/(e^ε0 + 1) for the first user's v
        return FirstUserGap(0.5 * math.tanh(0.5 * self.eps0), self.pb)

    @property
    def pa(self) -> float:
        return 1.0 / (1.0 + 1.0 / self.e0)

    @property
    def pb(self) -> float:
        return 1.0 / (self.e0 + 1.0)


#: ``math.exp`` is within one ulp of ``e^ε0`` (glibc: below 1 ulp); :func:`upper_constants` starts
#: from ``e^ε0`` moved this many ulps up, so its ``r'`` is ``>= e^ε0`` (tested at 50 digits).
E0_UP_ULPS = 2
#: The first-user weights and every class probability of the others must be within this
#: (relative) of their exact values at ``r'`` for the charge's Taylor bound (else: no charge route).
_CHARGE_MAX_X = 1e-3


def _rel_dev(exact: Fraction, fl: Fraction) -> Fraction:
    """``exact/fl - 1`` (``fl > 0``)."""
    return exact / fl - 1


@dataclass(frozen=True)
class KrrUpperConstants(KrrConstants):
    """The constants the upper-bound engines use (module docstring §7): those of a k-RR whose
    ``e^ε0`` is ``r' = fl(exp(ε0))`` moved :data:`E0_UP_ULPS` ulps up (``r' >= e^ε0``), with ``κ``
    and the implied ``κ`` of the float masses at most ``2/(r' + 1)``, and the data of the measure
    charge (:meth:`charge_up`, :meth:`charge_down`) computed in exact rational arithmetic from
    the floats. Built by :func:`upper_constants` (cached)."""

    e0: float = 1.0  # (these fields take the place of the base class's properties)
    q: float = 0.0
    p0: float = 0.0
    rho: float = 0.0
    kappa: float = 0.0
    pb: float = 0.0
    d_: float = 0.0
    #: first user: the largest ratio exact/float of its two branches (counted, silent), rounded up
    first_up: float = math.inf
    #: total float mass of the first user's branches (``fl(1 - p0) + p0``, at least 1, rounded up)
    first_mass: float = math.inf
    #: the others (classes clone, third, rest): ``N χ²(π*||π^)`` and ``max |π*/π^ - 1|``, rounded up
    a_up: float = math.inf
    x_up: float = math.inf

    @property
    def d(self) -> FirstUserGap:
        return FirstUserGap(self.d_, self.pb)

    def log_charge_up(self, upper: float) -> float:
        """``log`` of the factor by which an upper end ``upper`` of the engine's sum (at the float
        masses) is multiplied to bound the sum at the exact masses (module docstring §7, Hölder)."""
        return _hoelder_log(-math.log(upper) + math.log(self.first_mass), self.a_up, self.x_up,
                            self.first_up, self.n - 1)

    def charge_up(self, upper: float) -> float:
        """``upper`` (an engine's upper end for the float masses) moved to the exact ones (module docstring
        §7): 0 stays 0 (the exact law is absolutely continuous w.r.t. the float one), ``nan`` or a charge
        that overflows gives ``inf`` (certified, uninformative; review rev93k)."""
        if math.isnan(upper):
            return math.inf
        if not upper > 0.0:
            return 0.0
        return _charged(upper, self.log_charge_up(upper), True, 8.0 * _U)


def _charged(end: float, log_charge: float, up: bool, slack: float) -> float:
    """A bracket end ``end > 0`` moved by the factor ``e^{log_charge}`` (module docstring §7 (H), (H'); §6): an
    upper end (``up``) multiplied by it and rounded up by ``1 + slack``, ``inf`` where that overflows; a lower end
    divided by it and rounded down by ``1 - slack``, 0 where the charge is not finite."""
    if up:
        if not log_charge < 700.0:
            return math.inf
        got = end * math.exp(log_charge) * (1.0 + slack)
        return got if math.isfinite(got) else math.inf
    return max(end * math.exp(-log_charge) * (1.0 - slack), 0.0) if math.isfinite(log_charge) else 0.0


def _hoelder_log(ell: float, a: float, x: float, first: float, others: int, shift: int = 0) -> float:
    """An upper bound on ``log first + min(others log(1 + x), min over α >= 2 of (ell / (α - shift) +
    (α - 1 + shift) / 2 · a (1 + x)^α))`` (module docstring §7: ``shift = 0`` (H) for upper ends, ``1``
    (H') for lower ends; and the pointwise bound), with slack for its own rounding; ``ell`` is
    ``log(s1 / end)``, ``a = N χ²``, ``x`` the largest per-class deviation."""
    if not (math.isfinite(first) and first > 0.0 and math.isfinite(x) and x >= 0.0 and math.isfinite(a)):
        return math.inf
    best = others * math.log1p(x) * (1.0 + 1e-9)  # pointwise: every likelihood ratio within (1 + x)^N
    ell = max(ell, 0.0)
    if a > 0.0 and ell > 0.0:
        alpha0 = math.sqrt(2.0 * ell / a) + shift
        for i in range(40):
            alpha = max(alpha0 / 2.0**i, 2.0)
            grow = alpha * math.log1p(x)
            if grow < 50.0:
                val = ell / (alpha - shift) + 0.5 * (alpha - 1.0 + shift) * a * math.exp(grow)
                best = min(best, val * (1.0 + 1e-9))
            if alpha == 2.0:
                break
    elif a == 0.0:
        best = 0.0
    return math.log(first) * (1.0 + 1e-9 if first >= 1.0 else 1.0 - 1e-9) + best + 4.0 * _U


@functools.lru_cache(maxsize=64)
def upper_constants(n: int, k: float, eps0: float) -> KrrUpperConstants:
    """:class:`KrrUpperConstants` of ``(n, k, eps0)`` (``k > 2``; module docstring §7)."""
    e = fp.next_up(math.exp(eps0), E0_UP_ULPS)
    q = 1.0 / (e + k - 1.0)
    rho = (k - 2.0) / (e + k - 3.0)
    pb = 1.0 / (e + 1.0)
    d = 0.5 * ((e - 1.0) / (e + 1.0))
    E, K = Fraction(e), Fraction(k)
    Q = 1 / (E + K - 1)
    kap_x = 2 / (E + 1)  # κ of r'
    Q2, R = Fraction(2.0 * q), Fraction(rho)
    p0 = (k - 2.0) * q
    for _ in range(64):  # the float masses' κ_m (of λ = Pr[counted | t, j]) at most kap_x
        P0, W1 = Fraction(p0), Fraction(1.0 - p0)
        kap_m = P0 * Q2 / (W1 * (1 - Q2) * R)
        if kap_m <= kap_x:
            break
        p0 = math.nextafter(p0, 0.0)
    else:
        raise CertificationError(f"k-RR constants: no p0 for k = {k!r}, eps0 = {eps0!r} (please report)")
    # κ: κ_m rounded down (within an ulp of the λ the windows' sums are exact in; 1 - p0 has an absolute
    # resolution of an ulp of 1, so κ_m may lie ~u p0/(1 - p0) below 2/(r' + 1): 27u at k = 100, ε0 = 0.5)
    kappa = fp.down(kap_m)
    fl_cls = (Q2, (1 - Q2) * R, (1 - Q2) * (1 - R))
    ex_cls = (2 * Q, (K - 2) * Q, (E - 1) * Q)
    first = ((E + 1) * Q, W1), ((K - 2) * Q, P0)
    base = KrrUpperConstants(n, k, eps0, e0=e, q=q, p0=p0, rho=rho, kappa=kappa, pb=pb, d_=d)
    if min(fl_cls) <= 0 or min(f for _, f in first) <= 0:
        return base  # (infinite charges: upper ends inf)
    xs = [_rel_dev(x, f) for x, f in zip(ex_cls, fl_cls)]
    if max(abs(v) for v in xs) > _CHARGE_MAX_X:
        return base
    chi = sum((f * v * v for f, v in zip(fl_cls, xs)), Fraction(0))  # χ²(π*||π^) of one other user
    return dataclasses.replace(
        base, first_up=fp.up(max(x / f for x, f in first)), first_mass=fp.up(max(W1 + P0, Fraction(1))),
        a_up=fp.up((n - 1) * chi), x_up=fp.up(max(abs(v) for v in xs)))


_TWO53 = 2**53


@functools.lru_cache(maxsize=64)
def lower_rates(k: int, eps0: float) -> tuple[float, float] | None:
    """``(q, p)`` of an *exact* k-RR with ``e^ε0'' <= e^ε0`` for the attained lower bounds (module
    docstring §7, *Lower bounds*): ``q = M / 2^53 >= 1/(r_d + k - 1)`` (``r_d`` = ``fl(exp(ε0))`` moved
    :data:`E0_UP_ULPS` ulps down, at most ``e^ε0``), ``p = 1 - (k - 1) q``: ``q``, ``p``, ``(k - 2) q``,
    ``(k - 3) q``, ``p + q`` and ``1 - 2q`` are all exact floats (integers below ``2^53`` over ``2^53``),
    so every per-user law built from them is exactly k-RR's at ``r'' = p / q <= e^ε0``. None when
    ``p <= q`` (the grid is too coarse: ``k`` near ``2^53 q``)."""
    e = fp.next_down(math.exp(eps0), E0_UP_ULPS)
    q_x = 1 / (Fraction(e) + k - 1)
    m = math.ceil(q_x * _TWO53)
    if (k - 1) * m >= _TWO53:
        return None
    q, p = m / _TWO53, (_TWO53 - (k - 1) * m) / _TWO53
    return (q, p) if p > q else None


def _validate(n: int, k: object, eps0: float) -> tuple[int, int, float]:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= n <= MAX_N:
        raise InvalidParameter(f"n must be an integer in [1, {MAX_N:g}], got {n!r}")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 2 <= k <= 10**9:
        raise InvalidParameter(f"k must be an integer in [2, 1e9], got {k!r}")
    if not (isinstance(eps0, (int, float, np.floating)) and math.isfinite(eps0) and 0.0 < eps0 <= 700.0):
        raise InvalidParameter(f"eps0 must be in (0, 700], got {eps0!r}")
    return int(n), int(k), float(eps0)


def _validate_real(n: int, k: float, eps0: float) -> tuple[int, float, float]:
    """:func:`_validate` with a *real* ``k`` in ``(2, 1e9]`` (module docstring §6: the upper-bound
    engine of a three-class pair; the k-RR randomizer and the dataset lower bounds keep an integer)."""
    if isinstance(k, bool) or not isinstance(k, (int, float, np.integer, np.floating)) or not (
            math.isfinite(k) and 2.0 < k <= 1e9):
        raise InvalidParameter(f"k must be a real number in (2, 1e9], got {k!r}")
    n_, _, eps0_ = _validate(n, 3, eps0)
    return n_, float(k), eps0_


# ---------------------------------------------------------------------------------------
# Single totals summed exactly: the window of totals (moderate n).
# ---------------------------------------------------------------------------------------

#: :class:`_TotalsWindow` sums every total ``t`` within ``mean ± (WINDOW_SD sd + 40)`` of ``T``...
WINDOW_SD = 8.0
#: ... when that is at most this many totals (beyond, the block engine answers).
WINDOW_MAX = 9000
#: Half-width of the central window when the block engine bounds the totals outside it
#: (:class:`_BlanketBackend`): ``HYBRID_SD`` sd of ``T``, at most ``HYBRID_HALF_TOTALS`` totals.
HYBRID_SD = 4.0
HYBRID_HALF_TOTALS = 1500.0
#: ... or, where that sd is at least HYBRID_WIDE_SD totals (n >~ 4e6 at k = 3), at most
#: HYBRID_WIDE_TOTALS: the tail engine's blocks next to a narrower window are 2-4 totals wide and
#: cost more per total than the window's single totals (CPU min of 3 interleaved runs, delta 1e-6:
#: n = 1e7 k = 10 eps0 0.5/2 0.73/0.71x, k = 3 eps0 0.5/1 0.87-0.92x; 3e7 k = 10 eps0 = 2 0.85x).
#: The route's split/engine decision keeps the 1500-total rule (its measured boundary). Cost only.
HYBRID_WIDE_SD = 1000.0
HYBRID_WIDE_TOTALS = 2500.0
#: (measured, CPU: 0.5 sd; at 0.75 the engine alone answered n = 2e7 .. 5e7 in 1.7-2.9x the time,
#: at 0.2 the split answered n = 1e8, k = 3 in 2x the engine's)
HYBRID_MIN_SD = 0.5
#: The window of every total of ``mean ± (8 sd + 40)`` answers alone up to this many totals.
WINDOW_ALONE_MAX = 2000
#: Per total, the third-value count is split at the kinks of the kernel within
#: ``[mean - (J_SD_LOW sd + 10), mean + (J_SD sd + 10)]`` of ``J``; beyond, one piece on each side.
J_SD = 7.0
J_SD_LOW = 9.0
#: Kinks are placed for the totals within ``mean ± KINK_SD_T sd`` of ``T`` (the others carry
#: little mass: a piece holding a kink only makes its chord a little loose, never invalid).
KINK_SD_T = 5.5
#: An evaluation places no kinks at all when the cuts between the ends of its totals' ``J`` windows
#: number more than ``KINK_CUTS_MEAN`` per total and more than ``KINK_CUTS_MIN`` in all (krr99; cost
#: only: any partition gives a certified bracket, class docstring of :class:`_TotalsWindow`). That many
#: cuts come only at an ``ε`` far above any ``ε(δ)`` asked (each kink a boundary with a Boost tail, ~2 µs a
#: cut: ``KrrBlanket(1e7, 3, 2).bounds(2/3, 1e-6)``, δ ~ 1e-64, took 8.6 s in the window, 6.8M cuts,
#: whose bracket [0, 5e-20] missed the rtol as the ``J`` windows' tails alone exceed such a δ; the
#: block engine then answered in 7 ms; now 16 ms in all). The window evaluations of ``ε(δ)`` searches
#: (n 1e3 .. 3e7, k 3/10/100, eps0 0.1 .. 8, δ 1e-6 and 1e-12: 446 evaluations, 355 of them within rtol
#: 1e-6) had at most 15.3 cuts per total and 64k in all. Without kinks the window's bracket is wide and
#: the route falls back to the block engine.
KINK_CUTS_MEAN = 64.0
KINK_CUTS_MIN = 200_000
#: Cuts tabulated per clone count for the window (its pieces need only a few neighbouring cuts).
WINDOW_TABLE_WIDTH = 40
#: A window boundary at most this far from a cached one of its total (a kink moved by a new
#: ``ε``) is walked from it by exact sums of the pmf instead of a Boost tail
#: (:meth:`_TotalsWindow._walk`).
WALK_MAX = 24
#: ... from this many users on; below, Boost's tail and pmf at these small sizes (~0.2-0.5 us a
#: boundary) cost less than the walk's vector operations over the few hundred boundaries an
#: evaluation adds (measured, CPU, min of 4 alternating in-process runs, delta 1e-6, n 30 .. 3e5,
#: k 3/10/100, eps0 0.5/1/2/4: 0.85-0.97x at n <= 1e4 for most cases, neutral from 3e4; from 1e6 the
#: walk pays: n = 1e6, k = 10, eps0 = 2, delta = 1e-9 1.16x without it). Cost only: either way each
#: mass carries its own certified error bound.
WALK_MIN_N = 300_000
#: A kink at most this many sd (of the total's third-value count) from a cached boundary of its
#: total is moved onto it (:meth:`_TotalsWindow._snap_kinks`; cost and tightness only) ...
SNAP_SD = 0.1
#: ... where that is at least this many units (smaller windows gain little from it: measured) ...
SNAP_MIN = 8.0
#: ... at an ``ε`` within this relative distance of the last evaluated one (a search's close steps;
#: farther, kinks move by more and the moved ones left brackets too wide: measured) ...
SNAP_STEP = 1e-5
#: ... unless that leaves the bracket wider than this fraction of the requested rtol (then the
#: evaluation is repeated with the kinks where they are).
SNAP_RTOL = 0.2
#: The window's boundaries lie on multiples of a grid spacing ``G`` (kinks moved to the nearest
#: multiple, the window ends outwards; :class:`_TotalsWindow`, cost and tightness only): the
#: largest power of two with ``GRID_K G / s^3 <= GRID_LOSS`` and ``G <= GRID_SD s`` (``s``: sd of
#: the central total's third-value count), where that is at least :data:`GRID_MIN`. The moved kinks
#: widen the window's bracket by about ``0.5 .. 2.4 G / s^3`` relative (measured at n = 1e5 .. 1e7,
#: k 3 .. 100, eps0 0.5 .. 3; 1.3e-9 -> 2.9e-6 at n = 1e5 with G = 8, 7.5e-9 -> 2.2e-8 at n = 1e7
#: with G = 64). GRID_LOSS was 2e-7 (at k = 3 the grid started between n = 5e6 and 1e7); at 4e-6 from ~1e6
#: (k = 3: G = 32 at 1e6, window brackets 3e-9 -> 3.3e-7 relative at delta = 1e-6 and 8e-9 -> 1.2e-6
#: at 1e-9, within the searches' ~4e-6 .. 8e-6 and below the SNAP_RTOL repeat): measured (CPU, 90
#: queries n 3e5 .. 5e6, k 3/10/100, eps0 0.5/1/2, delta 1e-6/1e-9, min of 2 alternating runs)
#: geometric mean 0.94x, n = 1e6 .. 5e6 at k = 3 0.67-0.85x, k = 10 0.72-0.91x; 2e-6 0.96x (at 1e6,
#: k = 3, G = 16 < GRID_MIN: no grid); GRID_MIN 8 with 4e-6 0.95x. Cost and tightness only.
GRID_SD = 0.1
GRID_K = 4.0
GRID_LOSS = 4e-6
GRID_MIN = 32
#: ... and the masses of the boundaries at one grid point come from runs over the sizes
#: (:func:`_tails_by_runs`) cut where the requested sizes jump by more than this (a walked size
#: costs ~50 ns, a Boost tail and pmf at these sizes ~1-2 us).
GRID_RUN_GAP = 16
#: Kinks are moved onto the grid only where their runs hold at least this many boundaries on average.
#: Was 8: at k = 3 the kinks of one cut lineage recur every second total (the cut moves by one per two
#: clone counts), a few units apart, so their runs held 7.6 boundaries on average at n = 1e7, eps0 = 2
#: and none were moved: 9.2k kinks took a Boost cdf/sf and pmf each (~1.6 us at m ~ 8e6) where a run
#: costs one anchor and ~50 ns a walked size. At 2 (measured, CPU min of 2 x 2 interleaved runs, n 1e6
#: .. 3e7, k 3/10/100, eps0 0.5/1/2/4, delta 1e-6): geometric mean 0.96x, n = 1e7, k = 3, eps0 = 2
#: 0.86x, 3e6 k = 10 eps0 = 2 0.73x, none slower beyond noise; the moved kinks' bracket widening stays
#: below SNAP_RTOL of the rtol asked (one repeated evaluation in 144 queries with delta 1e-6/1e-9).
#: Cost and tightness only.
GRID_MIN_RUN = 2


def _line_sum(A_: np.ndarray, Ae: np.ndarray, B_: np.ndarray, Be: np.ndarray, M_hi: np.ndarray, M_lo: np.ndarray,
              Mc_lo: np.ndarray) -> np.ndarray:
    """Lower bound on ``Σ_{j in piece} Pr[t, j] (A* + B* λ(t, j)) = A* M + B* Mc`` for true line
    coefficients ``|A* - A| <= Ae``, ``|B* - B| <= Be`` (``B* >= 0``) and masses ``M <= M_hi``,
    ``M >= M_lo``, ``Mc >= Mc_lo`` (:class:`_TotalsWindow`), each product's rounding charged."""
    A_lo, B_lo = A_ - Ae, np.maximum(B_ - Be, 0.0)
    val = np.where(A_lo <= 0.0, A_lo * M_hi, A_lo * M_lo) + B_lo * Mc_lo
    return val - 4.0 * _U * (np.abs(A_lo) * M_hi + B_lo * Mc_lo)


def _closed_cut(c: np.ndarray, lam: np.ndarray, d: float, gm1: float) -> np.ndarray:
    """FMT21's closed-form cut of the fair-clone kernel (as in :func:`_kernel_lines`, before its
    best-of-three correction; ``c + 1`` where the divergence is 0). Only places piece boundaries."""
    v = _first_user_v(lam, d)
    cb = 2.0 * lam * d - gm1 * v
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        r = (2.0 * lam * d + gm1 * (1.0 - v)) / cb
        astar = r * (c + 1.0) / (1.0 + r)
    astar = np.where(np.isfinite(astar) & (cb > 0.0), astar, c + 1.0)
    return np.clip(np.floor(astar) + 1.0, 0.0, c + 1.0)


def _branch_cdfs(x: np.ndarray, ex: np.ndarray, p: np.ndarray, ep: np.ndarray, below: np.ndarray,
                 rho: float) -> dict[str, np.ndarray]:
    """From the small tail ``x`` of ``Bin(m, ρ)`` at ``y`` (``P[Bin(m) <= y]`` where ``below``, else
    ``P[Bin(m) > y]``) and ``p = P[Bin(m) = y]``, with absolute error bounds ``ex``, ``ep``: the counted
    branch's ``Fc = F_{m+1}(y)`` and the silent one's ``Fs = F_m(y-1)``, their complements ``G`` and
    an absolute error bound for each, by the one-trial identities ``F_{m+1}(y) = F_m(y) - ρ P_m(y)``,
    ``F_m(y-1) = F_m(y) - P_m(y)`` (above the mean their mirrors ``G_{m+1}(y) = G_m(y) + ρ P_m(y)``,
    ``G_m(y-1) = G_m(y) + P_m(y)``); the complement ``1 - x`` is charged one rounding more."""
    sgn = np.where(below, -1.0, 1.0)
    small_c = np.clip(x + sgn * rho * p, 0.0, 1.0)
    small_s = np.clip(x + sgn * p, 0.0, 1.0)
    ec = ex + rho * ep + 4.0 * _U * (x + rho * p)
    es = ex + ep + 4.0 * _U * (x + p)
    return {"Fc": np.where(below, small_c, 1.0 - small_c), "Gc": np.where(below, 1.0 - small_c, small_c),
            "Fs": np.where(below, small_s, 1.0 - small_s), "Gs": np.where(below, 1.0 - small_s, small_s),
            "eFc": np.where(below, ec, ec + _U), "eGc": np.where(below, ec + _U, ec),
            "eFs": np.where(below, es, es + _U), "eGs": np.where(below, es + _U, es)}


def _window_range(c: KrrConstants, half_sd: float) -> tuple[int, int]:
    """The totals ``mean ± (half_sd sd + 40)`` of ``T`` (within ``1 .. n``)."""
    N, q2 = c.n - 1, 2.0 * c.q
    mu = N * q2 + (1.0 - c.p0)
    sd = _t_sd(c)
    t_lo = max(1, int(math.floor(mu - half_sd * sd)) - 40)
    t_hi = min(N + 1, int(math.ceil(mu + half_sd * sd)) + 40)  # t = N + 1: all counted
    return t_lo, t_hi


def _t_sd(c: KrrConstants) -> float:
    """Standard deviation of the clone count ``C ~ Bin(n - 1, 2q)``."""
    return math.sqrt(max((c.n - 1) * 2.0 * c.q * (1.0 - 2.0 * c.q), 0.0))


@dataclass(frozen=True)
class _Chords:
    """The ``ε``-independent part of :class:`_TotalsWindow`'s upper end (its pieces: the boundary at
    each piece's left / right end, whether it has one, the first pieces at ``λ = 1`` with their
    kernel bound, the pieces' ``λ`` ranges, the mass ``M_hi`` and ``D = Σ P (λ - λ_bot)`` bounds)."""

    li: np.ndarray
    ri: np.ndarray
    has_l: np.ndarray
    has_r: np.ndarray
    top0: np.ndarray
    H_top0: np.ndarray
    lam_top: np.ndarray
    lam_bot: np.ndarray
    M_hi: np.ndarray
    D_hi: np.ndarray
    D_lo: np.ndarray
    npc: int


#: :meth:`_TotalsWindow.upper_near` answers within this relative distance of the last evaluated
#: ``ε`` (the set masses are taken at the cut of the new ``ε``, certified by its likelihood ratio;
#: farther, the bound loosens and a fresh evaluation answers): cost only.
UPPER_NEAR_REACH = 1e-4
#: ... and where the relative change of ``δ`` from there (estimated by the window's slope) is at most
#: this many times the rtol asked: the bracket's width grows by ~8 % of that change (a kink that moved
#: inside a piece leaves its chord above the kernel; measured n = 30 .. 1e5; 5 % in some searches), cost
#: only. A try that fails costs ~0.3 ms (n = 1e4) .. 2.5 ms (n = 1e7), a fifth of an evaluation or less:
#: 20 (was 4) answers 43 instead of 21 search steps of 384 queries n = 1e3 .. 1e7 without an evaluation,
#: failed tries 2.3 -> 8.9 ms in all.
NEAR_GAIN = 20.0
#: ... from this many users on (at n = 10 its looser brackets changed a few searches' paths and their
#: eps brackets by up to 5e-7 relative; a window evaluation costs little there anyway): cost only.
NEAR_MIN_N = 1000
#: relative margin of the likelihood-ratio tests of :meth:`_TotalsWindow._set_mass_near` (their
#: computed sides are within ~20 ulps of the exact ones)
LR_MARGIN = 1e-12


def _row_values(store: _Rows, row: np.ndarray, cut: np.ndarray) -> tuple[np.ndarray, ...]:
    """From kernel table rows (:class:`_TableCache`): ``B(cut - 1)`` and ``S(cut)`` of
    ``Bin(c, 1/2)``, their relative error bounds (pmf values: the anchor's budget plus the ratio
    steps; tails: the larger of that and the row's tail budget, as :func:`_lines_from_row`
    charges), and ``ok`` where the row holds both (``row >= 0``, ``1 <= cut - lo <= width - 1``;
    beyond a row's window its stored pmf is 0 and its tail the top tail). ``rel`` is added by the
    caller (returned budgets exclude the pmf budget)."""
    data = store.data
    if store.size == 0:  # no rows at all (every kernel went direct or is 0)
        row = np.full(row.shape, -1, dtype=np.int64)
        data = {f: np.zeros((1,) + a.shape[1:]) for f, a in data.items()}
    rr = np.maximum(row, 0)
    width = data["B"].shape[1]
    col = cut - data["lo"][rr]
    ok = (row >= 0) & (cut >= 1.0) & (col >= 1.0) & (col <= width - 1.0)
    flat = rr * width + np.where(ok, col, 1.0).astype(np.int64)  # row-major positions
    bb = np.where(ok, data["B"].reshape(-1).take(flat - 1), 0.0)  # B(cut - 1)
    ss = np.where(ok, data["S"].reshape(-1).take(flat), 0.0)  # S(cut)
    return bb, ss, data["tail_budget"][rr], data["hi"][rr], ok


#: bits of ``y`` in a boundary's cache key (:meth:`_TotalsWindow._key`)
_KEY_BITS = 40
assert 10**12 < 1 << _KEY_BITS and WINDOW_MAX + 2 < 1 << (63 - _KEY_BITS)


def _by_y_then_t(y: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(y, t)`` sorted by ``y``, then ``t`` (the sequences ``np.lexsort((t, y))`` gives; cost only): one
    sort of the :func:`_packed_keys` of ``y`` (:data:`_KEY_BITS`) and ``t - min t`` (the other ``63 - _KEY_BITS``),
    all integer-valued (a window's boundaries; 3-4x faster than ``lexsort`` at 3e4 of them), else ``lexsort``."""
    sh = 63 - _KEY_BITS
    if y.size:
        t0 = float(t.min())
        key = _packed_keys((y, _KEY_BITS), (t - t0, sh))
        if key is not None:
            key.sort()
            return (key >> sh).astype(float), (key & ((1 << sh) - 1)).astype(float) + t0
    order = np.lexsort((t, y))
    return y[order], t[order]


#: :func:`_lineage_tails` walks the boundaries within this many sd of their size's mean (Boost's cdf / sf
#: costs ~1-2 us a value there at m ~ 1e5 .. 1e6, ~0.2 us beyond 4 sd) ...
LINEAGE_Z = 2.5
#: ... from a boundary of the total two below (the same parity of the clone count: a kink's cut moves by one
#: every second total) at most this far in ``y`` ...
LINEAGE_DY = 32
#: ... in chains of at most this many links from one Boost anchor (cost and tightness only: each walked value
#: carries its own certified bound, and one whose bound exceeds :data:`LINEAGE_ACCEPT` times Boost's pmf
#: budget of its value takes Boost's tail instead)
LINEAGE_LINKS = 64
LINEAGE_ACCEPT = 64.0
#: ... from this many users on (cost only).
LINEAGE_MIN_N = 30_000
#: ... where at least this many boundaries lie in the bulk (cost only).
LINEAGE_MIN_BULK = 512
#: a window whose bracket misses an rtol below this with walked tails in its cache is evaluated again with
#: Boost's tails, and keeps them (:meth:`_TotalsWindow.bounds`; cost only: the walked tails' budgets, up to
#: LINEAGE_ACCEPT pmf budgets, ~4e-10 relative, matter only for brackets that tight, e.g. ``delta(eps)`` at its
#: default rtol 1e-9; the eps(delta) searches ask 1e-6, where windows miss their rtol for other reasons)
LINEAGE_RETRY_RTOL = 1e-7
_LINEAGE_WIDTHS = np.array([2, 4, 6, 8, 10, 12, 14, 16, 20, 24, 28, 32, 48, 64])


def _lineage_tails(t: np.ndarray, y: np.ndarray, N: int, rho: float, p: np.ndarray, rel: float
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Small tails of ``Bin(m, ρ)``, ``m = N - t``, at window boundaries ``(t, y)`` (int64, sorted by ``t`` then
    ``y``, distinct; ``p`` their pmf ``P_m(y)`` with relative error at most ``rel``): ``P[Bin(m) <= y]`` where
    ``y < m ρ`` (``below``), else ``P[Bin(m) > y]``, with an absolute error bound, for the boundaries it walks
    (*derived*; the rest: Boost). Returns ``(done, x, ex)``: ``done`` marks the boundaries answered (anchors by
    Boost's cdf / sf with the budget :meth:`_TotalsWindow._boundary_masses` charges; walked ones as below).

    *Chains.* A kink of the window moves by a few units of ``y`` from one total to the next of the same parity,
    and Boost's tail is slow near the mean. A boundary within :data:`LINEAGE_Z` sd of its mean links to the
    nearest such boundary ``(t - 2, y')`` with ``|y - y'| <=`` :data:`LINEAGE_DY` (one child per parent: the
    nearest); the links form disjoint chains, cut every :data:`LINEAGE_LINKS` links; each chain's first entry
    takes Boost's tail.

    *Identity.* ``Bin(j + 1) = Bin(j) + Bernoulli(ρ)`` gives ``F_j(y) = F_{j+1}(y) + ρ P_j(y)`` (``F`` the cdf,
    ``P`` the pmf), so with ``m' = m + 2`` (the parent's size) and ``D = y - y'``

        F_m(y) = F_{m'}(y') + P_i - N_i,   P_i = ρ (P_{m+1}(y') + P_m(y')) + [D > 0] Σ_{y' < a <= y} P_m(a),
                                           N_i = [D < 0] Σ_{y < a <= y'} P_m(a),

    all terms positive. ``P_m(a)`` is walked from the boundary's own ``P_m(y)`` towards ``y'`` by the exact
    ratios ``P_m(a - 1) / P_m(a) = a (1 - ρ) / ((m - a + 1) ρ)`` and ``P_m(a + 1) / P_m(a) = (m - a) ρ / ((a + 1)
    (1 - ρ))``, ``P_{m+1}(y') = P_m(y') (m + 1)(1 - ρ) / (m + 1 - y')``.

    *Error* (absolute ``E``, as :func:`_walk_tops`). A value walked ``k`` steps is within ``rel + 8 k u``
    (relative, first order: each ratio and product at most 8 roundings, as :meth:`_TotalsWindow._walk` charges)
    of the exact pmf; ``P_i`` and ``N_i`` sum at most ``|D| + 2`` of them (``|D| + 1`` roundings, the product by
    ``ρ`` and one addition): ``|P - P*| <= e_i P`` with ``e_i = 1.01 (rel + 8 (|D| + 1) u + (|D| + 4) u)``, likewise
    ``N``. ``F`` is computed as ``F_{i-1} + (P_i - N_i)`` along each chain in order (:func:`_chain_sums`): the
    two roundings are at most ``2.01 u (|F_{i-1}| + P_i + N_i)``. So ``E_i = E_{i-1} + e_i (P_i + N_i) + 2.01 u
    (|F_{i-1}| + P_i + N_i) + 1e-300`` (a running sum too), ``E`` of an anchor its budget times its ``F`` (``F = 1 -
    x`` above the mean: plus ``u``); the bound's own roundings (at most ``8 u`` per step, at most
    :data:`LINEAGE_LINKS` steps) are covered by a factor ``1 + 1e-9``. The small tail of a walked boundary is
    ``F`` (below) or ``1 - F`` (plus ``u`` of it); it is kept where its bound is at most :data:`LINEAGE_ACCEPT`
    ``rel`` times its value."""
    nb = t.size
    done = np.zeros(nb, dtype=bool)
    x, ex = np.zeros(nb), np.zeros(nb)
    m = (N - t).astype(float)
    yf = y.astype(float)
    with np.errstate(invalid="ignore"):
        z = np.abs(yf - m * rho) / np.sqrt(m * rho * (1.0 - rho))
    bulk = np.nonzero((m >= 2.0) & (z <= LINEAGE_Z) & (p > 1e-250))[0]
    if bulk.size < LINEAGE_MIN_BULK:  # (cost only: below, the vector operations cost more than Boost)
        return done, x, ex
    tb, yb = t[bulk], y[bulk]
    key = ((tb - int(tb.min())) << _KEY_BITS) | yb  # (sorted: the boundaries are)
    q = ((tb - int(tb.min()) - 2) << _KEY_BITS) | yb
    pos = np.searchsorted(key, q)
    par = np.full(bulk.size, -1, dtype=np.int64)
    best = np.full(bulk.size, LINEAGE_DY + 1, dtype=np.int64)
    for cand in (pos - 1, pos):
        cc = np.clip(cand, 0, bulk.size - 1)
        dist = np.abs(yb[cc] - yb)
        ok = (cand >= 0) & (cand < bulk.size) & (tb[cc] == tb - 2) & (dist < best)
        par = np.where(ok, cc, par)
        best = np.where(ok, dist, best)
    # one child per parent: the nearest (ties: the first)
    kids = np.nonzero(par >= 0)[0]
    if kids.size < 0.5 * bulk.size:  # (cost only: few links, little to gain)
        return done, x, ex
    srt = kids[np.lexsort((best[kids], par[kids]))]
    keep = np.ones(srt.size, dtype=bool)
    keep[1:] = par[srt][1:] != par[srt][:-1]
    linked = np.zeros(bulk.size, dtype=bool)
    linked[srt[keep]] = True
    par = np.where(linked, par, np.arange(bulk.size))
    # depth and root of each entry (pointer jumping over the disjoint chains)
    depth = linked.astype(np.int64)
    ptr = par.copy()
    while True:
        nxt = ptr[ptr]
        if np.array_equal(nxt, ptr):
            break
        depth = depth + depth[ptr]
        ptr = nxt
    head = depth % LINEAGE_LINKS == 0
    order = np.lexsort((depth, ptr))  # chains contiguous, in order
    hd = head[order]
    ob = bulk[order]
    # each chain's first entry: Boost's tail, as the caller would compute it
    ha = ob[hd]
    below = yf[ha] < m[ha] * rho
    xa = np.where(below, bn.cdf(yf[ha], m[ha], rho), 0.0)
    xa[~below] = bn.sf(yf[ha][~below], m[ha][~below], rho)
    exa = np.maximum(bn.tail_error_budget(yf[ha], m[ha], rho), rel) * xa + 1e-300
    x[ha], ex[ha] = xa, exa
    F_head = np.where(below, xa, 1.0 - xa)
    E_head = exa + np.where(below, 0.0, _U * F_head)
    # the links' sums (walks of similar lengths together)
    lk = np.nonzero(~hd)[0]
    ci = ob[lk]  # the child (global index)
    pi = bulk[par[order[lk]]]  # its parent
    D = (y[ci] - y[pi]).astype(np.int64)
    steps = np.abs(D)
    mc, yc = m[ci], yf[ci]
    S = np.zeros(lk.size)
    P_at = p[ci].copy()  # P_m(y') at the walk's end
    S[D > 0] = P_at[D > 0]  # (downwards the sum starts at P_m(y) itself)
    c_dn, c_up = (1.0 - rho) / rho, rho / (1.0 - rho)
    group = np.searchsorted(_LINEAGE_WIDTHS, steps)
    for dn in (True, False):
        for gi in np.unique(group[(D > 0) if dn else (D < 0)]):
            sel = np.nonzero((group == gi) & ((D > 0) if dn else (D < 0)))[0]
            st = steps[sel]
            kk = np.arange(1, int(st.max()) + 1, dtype=float)[None, :]
            a, mm = yc[sel][:, None], mc[sel][:, None]
            # step k leaves a - (k - 1) downwards: ratio (a - k + 1)(1 - ρ)/((m - a + k) ρ); upwards it leaves
            # a + k - 1: (m - a - k + 1) ρ/((a + k)(1 - ρ))
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                r = ((a + 1.0) - kk) / ((mm - a) + kk) if dn else ((mm - a + 1.0) - kk) / (a + kk)
                r *= c_dn if dn else c_up
            np.copyto(r, 0.0, where=kk > st[:, None])
            w = np.cumprod(r, axis=1)
            w *= P_at[sel][:, None]  # (still the boundary's own P_m(y) here)
            last = w[np.arange(sel.size), st - 1]
            S[sel] += np.sum(np.where(kk < st[:, None], w, 0.0), axis=1) if dn else np.sum(w, axis=1)
            P_at[sel] = last
    yp = yf[pi]
    P_next = P_at * ((mc + 1.0) * (1.0 - rho) / (mc + 1.0 - yp))
    Pp = rho * (P_next + P_at) + np.where(D > 0, S, 0.0)
    Nn = np.where(D < 0, S, 0.0)
    e_l = 1.01 * (rel + 8.0 * (steps + 1.0) * _U + (steps + 4.0) * _U)
    inc = np.zeros(ob.size)
    inc[hd] = F_head
    inc[lk] = Pp - Nn
    F = _chain_sums(inc, hd)
    Fp = np.abs(F[np.maximum(np.arange(ob.size) - 1, 0)])
    einc = np.zeros(ob.size)
    einc[hd] = E_head
    einc[lk] = e_l * (Pp + Nn) + 2.01 * _U * (Fp[lk] + Pp + Nn) + 1e-300
    E = _chain_sums(einc, hd) * (1.0 + 1e-9)
    wk = ob[lk]
    Fw, Ew = F[lk], E[lk]
    bw = yf[wk] < m[wk] * rho
    xs = np.where(bw, Fw, 1.0 - Fw)
    es = np.where(bw, Ew, Ew + _U * np.abs(xs)) * (1.0 + 4.0 * _U) + 1e-300
    good = (xs > 0.0) & (xs <= 1.0) & (es <= LINEAGE_ACCEPT * rel * xs)
    x[wk[good]], ex[wk[good]] = xs[good], es[good]
    done[ha] = True
    done[wk[good]] = True
    return done, x, ex


class _TotalsWindow:
    """Certified blanket divergence of k-RR (``k >= 3``) with every total ``t`` of a window
    summed on its own and the sum over the third-value count ``j`` done exactly in the mixing
    weight ``λ`` (module docstring §2 notation; *derived* here, tested against the oracle and
    the block engine).

    *Counted mass.* ``Pr[t, j] λ(t, j) = Pr[counted, t, j]`` (the definition of ``λ``), so for
    any line ``a + b λ`` and any set ``I`` of ``j``: ``Σ_{j∈I} Pr[t, j] (a + b λ(t, j)) =
    a Pr[t, J∈I] + b Pr[counted, t, J∈I]``, a closed form in binomial cdfs:
    ``Pr[t, J <= y] = (1-p0) B(t-1) F_{m+1}(y) + p0 B(t) F_m(y-1)``, ``Pr[counted, t, J <= y] =
    (1-p0) B(t-1) F_{m+1}(y)`` with ``B = Bin(n-1, 2q)``, ``m = n-1-t``, ``F_m`` the cdf of
    ``Bin(m, ρ)``; the one-trial identities ``F_{m+1}(y) = F_m(y) - ρ P_m(y)``,
    ``F_m(y-1) = F_m(y) - P_m(y)`` (and their upper-tail mirrors) give both from one Boost tail
    and one pmf. No linearisation in ``j`` is involved.

    *Pieces.* For one total the kernel ``h(t-1, ·)`` is convex and piecewise linear in ``λ``
    (a maximum of the lines of property P4, one per cut), and only a few cuts are optimal while
    ``j`` sweeps its bulk (3-7 measured within ±8 sd, at n = 1e4 .. 1e9). The ``j`` axis is cut
    at the window ``mean ± (J_SD sd + 10)`` and, inside it, where consecutive cuts' lines
    cross (``λ* = (e^ε-1)(B(κ-1) + B(κ)) / (2d(1+e^ε)(B(κ-1) - B(κ)))``). On each piece:

    * upper: ``h <= `` the chord of ``h`` over the piece's ``λ`` range (convexity; the range
      rounded outwards, the end values with their error bounds), a line, summed exactly as above;
      on the first piece (``j`` below the window, ``λ`` up to 1) ``h <= 2d`` (total variation of
      the first user) times its mass, on the last (``j`` above it) ``h <=`` its value at the
      piece's top ``λ`` (P3) times its mass;
    * lower: ``h >= `` the line of the optimal cut at either end of the piece (P4), summed
      exactly, and ``h >= 0``.

    Where the boundaries sit on the kinks the chord *is* the line, so the bracket is closed up to
    rounding; the boundaries only decide tightness, never validity (any partition, any line).

    *Grid* (large ``n``; :data:`GRID_SD` and the constants after it). The window ends are moved
    outwards and the kinks to the nearest multiple of a spacing ``G`` (a kink whose multiple would
    reach a window end stays where it is): a kink moves with ``t`` by a few units per total, so
    the boundaries at one multiple form runs over neighbouring totals, i.e. over consecutive sizes
    ``m``, and each run's small tails and pmf come from one Boost tail and one Boost pmf walked by
    exact recurrences (:func:`_tails_by_runs`, its error bounds; the walked pmf's relative error is
    the anchor's budget plus ``8u`` per ratio step) instead of a Boost tail and pmf per boundary.
    Validity is untouched (any partition: the piece holding a moved kink has a chord above ``h``,
    its ``lam_s`` clipped into its own ``λ`` gap, and lines of any cut below ``h``); the chord over
    the moved kink costs tightness (measured, see :data:`GRID_SD`), and as for
    :meth:`_snap_kinks` an evaluation whose moved kinks left the bracket wider than
    :data:`SNAP_RTOL` times the rtol asked is repeated with every kink in place.

    *Totals outside the window*: ``h <= 2d`` (total variation of the first user; the total 0
    contributes nothing); their masses from Boost's cdf / sf with budgets. The lower bound counts
    them as 0.

    Errors: every mass carries an absolute bound (Boost budgets, the identities' roundings,
    complements ``1 - x`` charged ``u``), the chords and lines their kernel error bounds, each
    product and sum its rounding (``4u`` per operation, widened per piece count).
    """

    def __init__(self, n: int, k: float, eps0: float, half_sd: float = WINDOW_SD, tails_elsewhere: bool = False) -> None:
        """The totals ``mean ± (half_sd sd + 40)``. ``tails_elsewhere``: the totals outside are not
        counted here (0 in both ends; the block engine restricted to them bounds them,
        :class:`_BlanketBackend`), else bounded by ``2d`` times their mass."""
        c = upper_constants(n, k, eps0)
        self.N = N = n - 1
        self.q2, self.rho, self.kappa, self.d, self.p0 = 2.0 * c.q, c.rho, c.kappa, c.d, c.p0
        self.rel = bn.pmf_error_budget(max(n, 2))
        q2, p0 = self.q2, self.p0
        mu, sd = N * q2 + (1.0 - p0), _t_sd(c)
        t_lo, t_hi = self.t_range = _window_range(c, half_sd)
        self.tails_elsewhere = tails_elsewhere
        #: the last evaluation's eps, piece masses and lines (:meth:`lower_at`)
        self._low: tuple[float, np.ndarray, np.ndarray, np.ndarray, list, int] | None = None
        #: ... and its boundaries, kernel upper bounds and chords (:meth:`upper_near`)
        self._up: tuple[float, np.ndarray, np.ndarray, np.ndarray, np.ndarray, _Chords, int] | None = None
        self.applies = n >= 3 and t_hi >= t_lo and t_hi - t_lo + 1 <= WINDOW_MAX
        if not self.applies:
            return
        self.t = np.arange(t_lo, t_hi + 1, dtype=float)
        self.kinked = np.abs(self.t - mu) <= KINK_SD_T * sd + 10.0  # totals whose kinks are placed
        cs = np.arange(t_lo - 1, t_hi + 1, dtype=float)  # clone counts c = t - 1 (counted) and t (silent)
        b, rel_b = bn.pmf_points(cs, N, q2)
        self.W1, self.W0 = (1.0 - p0) * b[:-1], p0 * b[1:]  # weights of the two first-user branches
        self.rW1, self.rW0 = rel_b[:-1] + 4.0 * _U, rel_b[1:] + 4.0 * _U
        # totals below the window: 1 <= T <= t_lo - 1 (counted: C <= t_lo - 2; silent: 1 <= C <= t_lo - 1;
        # T = 0 contributes nothing: no report on x1 or x1', equal laws); above: T >= t_hi + 1
        # (counted: C >= t_hi; silent: C >= t_hi + 1)
        hi_k = np.array([t_hi - 1.0, float(t_hi)])
        above = bn.sf(hi_k, N, q2) * (1.0 + np.maximum(bn.tail_error_budget(hi_k, N, q2), self.rel))
        self.mass_below = 0.0
        if t_lo > 1 and not tails_elsewhere:
            # both branches' ranges in one call (two intervals of one width: each value is computed as
            # a call of its own would, elementwise; cost only)
            m_b, e_b = bn.interval_mass(np.array([0.0, 1.0]), np.array([t_lo - 2.0, t_lo - 1.0]), N, q2)
            self.mass_below = (((1.0 - p0) * float(m_b[0] + e_b[0]) + p0 * float(m_b[1] + e_b[1])) * (1.0 + 8.0 * _U)
                               + 1e-300)
        self.mass_above = 0.0 if tails_elsewhere else ((1.0 - p0) * above[0] + p0 * above[1]) * (1.0 + 8.0 * _U) + 1e-300
        # the third-value window of each total (eps-independent)
        m1 = N - self.t + 1.0  # size of the counted branch's J ~ Bin(m1, rho)
        mj, sj = m1 * self.rho, np.sqrt(m1 * self.rho * (1.0 - self.rho))
        self.ja = np.clip(np.floor(mj - J_SD_LOW * sj) - 10.0, 0.0, m1)
        reach = np.floor(SNAP_SD * sj)  # how far a kink may be moved onto a cached boundary
        self.snap = np.where(reach >= SNAP_MIN, reach, 0.0)
        self.snapping = True  # (:meth:`bounds` turns it off for an evaluation whose bracket it widened)
        self.jb = np.clip(np.ceil(mj + J_SD * sj) + 10.0, 0.0, m1)
        # the boundary grid (class docstring, *Grid*): window ends moved outwards onto it
        sj_mid = float(sj[sj.size // 2])
        g_max = min(GRID_SD * sj_mid, GRID_LOSS * sj_mid**3 / GRID_K)
        g = 1 << int(math.floor(math.log2(g_max))) if g_max >= 1.0 else 1
        self.grid = float(g) if g >= GRID_MIN else 0.0
        if self.grid:
            self.ja = np.floor(self.ja / self.grid) * self.grid
            self.jb = np.minimum(np.ceil(self.jb / self.grid) * self.grid, m1)
        self.tables = _TableCache(WINDOW_TABLE_WIDTH)
        self.masses = self._empty_masses()
        #: bulk tails walked along their kink's lineage (:func:`_lineage_tails`) while True; :meth:`bounds`
        #: turns it off for good (and starts a fresh mass cache) when a bracket built on walked tails misses
        #: the rtol asked: their budgets (up to LINEAGE_ACCEPT pmf budgets) can limit a delta(eps) bracket at
        #: rtol 1e-9 (review of d8b46ef: api.delta, krr k = 5, eps0 = 2, n = 3e4 at eps = 0.04: 4.9e-8 wide)
        self.lineage = True
        self._lineage_used = False
        #: brackets by eps, and whether kinks were moved onto cached boundaries for it
        self._memo: dict[float, tuple[DeltaBounds, bool]] = {}
        self._snapped = False  # (the last evaluation moved a kink: :meth:`_snap_kinks`)
        self._last_eps, self._near_last = math.inf, False  # (kinks are moved only after a small step)
        self._slope: tuple[float, float] = (math.nan, math.nan)

    _MASS_FIELDS = ("Fc", "Gc", "eFc", "eGc", "Fs", "Gs", "eFs", "eGs")
    #: the two entries :meth:`_boundary_masses` appends to each field: the values a piece with no
    #: boundary on its right (``F = 1``, ``G = 0``, exact) and on its left (``F = 0``, ``G = 1``) takes
    _MASS_ENDS = {"F": (1.0, 0.0), "G": (0.0, 1.0), "eF": (0.0, 0.0), "eG": (0.0, 0.0)}
    #: stored with them: ``P_m(y)`` and its absolute error bound (the anchor of :meth:`_walk`)
    _ANCHOR_FIELDS = ("p", "ep")

    def _key(self, t: np.ndarray, y: np.ndarray) -> np.ndarray:
        """The cache key of boundaries ``(t, y)``: ``((t - t_lo) << _KEY_BITS) | y``, ordered by total, then by
        ``y``. ``y <= n <= 1e12 < 2^40`` and ``t - t_lo < WINDOW_MAX + 2 < 2^23``, so the key fits an int64 (it
        was ``(t << 31) | y``, which for ``y >= 2^31`` -- third-value counts from ``n ~ 2e9`` -- spilled into
        the total and decoded the masses of ``y - 2^31``: a CertificationError at n = 4.19e9, k = 933)."""
        t_lo = self.t_range[0]
        return ((np.asarray(t).astype(np.int64) - t_lo) << _KEY_BITS) | np.asarray(y).astype(np.int64)

    def _unkey(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(t, y)`` of cache keys (:meth:`_key`), as int64."""
        return (keys >> _KEY_BITS) + self.t_range[0], keys & ((1 << _KEY_BITS) - 1)

    def _empty_masses(self) -> _Rows:
        """An empty boundary-mass cache (:meth:`_boundary_masses`), keyed by :meth:`_key`."""
        return _Rows({f: 1 for f in self._MASS_FIELDS + self._ANCHOR_FIELDS}, np.int64)

    def _boundary_masses(self, t: np.ndarray, y: np.ndarray) -> dict[str, np.ndarray]:
        """At boundaries ``(t, y)``: ``Fc = F_{m+1}(y)`` (counted branch, ``J <= y``), ``Fs =
        F_m(y-1)`` (silent branch, ``J = 1 + J' <= y``), ``m = N - t``, their complements ``G``
        and an absolute error bound for each (the computed side: Boost's budgets and the identity's
        roundings; its complement ``1 - x`` one rounding more). Cached by ``(t, y)``, each value
        certified with its own bound (a walked value depends on the boundaries computed with it, so a
        fresh computation may differ in the last bits, within both bounds). Each returned field has two
        entries more, at ``t.size`` and ``t.size + 1`` (:data:`_MASS_ENDS`: the exact values for a piece
        without a right / left boundary), so a piece's ends are one gather each. A boundary within :data:`WALK_MAX` of a cached one of
        the same total (a kink that moved with ``ε``) is walked from it (:meth:`_walk`); from
        :data:`LINEAGE_MIN_N` users on, boundaries near their mean are walked along the lineage of their
        kink from a Boost anchor of a total two below (:func:`_lineage_tails`)."""
        key = self._key(t, y)
        if key.size < 2 or bool(np.all(key[1:] > key[:-1])):  # boundaries come sorted and distinct
            uk, inv = key, np.arange(key.size)
        else:
            uk, inv = np.unique(key, return_inverse=True)
        row, found = self.masses.find(uk)
        if not found.all():
            miss = np.nonzero(~found)[0]
            walked = self._walk(uk[miss]) if self.N + 1 >= WALK_MIN_N else None
            if walked is not None:
                near, new_w = walked
                row[miss[near]] = self.masses.add(uk[miss[near]], new_w)
                miss = miss[~near]
        if not found.all() and miss.size:
            t_int, y_int = self._unkey(uk[miss])
            tt, yy = t_int.astype(float), y_int.astype(float)
            m = np.maximum(self.N - tt, 0.0)  # t = N + 1 (m = -1): J = 0, no silent branch (fixed below)
            rho = self.rho
            below = yy < m * rho
            x, ex, p, ep = (np.empty(yy.size) for _ in range(4))
            on = np.zeros(yy.size, dtype=bool)
            if self.grid:
                # boundaries on the grid share their y across many totals: the small tails and the
                # pmf of each run of sizes at one y from one Boost tail and pmf (:func:`_tails_by_runs`)
                # (y >= 0 and the spacing a power of two: np.mod(yy, grid) == 0, without a float mod)
                on = (y_int & (int(self.grid) - 1)) == 0
                pm: list[np.ndarray] = []
                x[on], ex[on], _ = _tails_by_runs(m[on], yy[on], rho, pm, GRID_RUN_GAP)  # (its side: below)
                p[on], ep[on] = pm[0], pm[1] * pm[0] + 1e-300
            off = ~on
            if np.any(off):
                po = bn.pmf(yy[off], m[off], rho)
                p[off], ep[off] = po, self.rel * po + 1e-300
                if self.lineage and self.N + 1 >= LINEAGE_MIN_N:  # bulk boundaries walked along their kink's lineage
                    fo = np.nonzero(off)[0]
                    lin, xl, exl = _lineage_tails(t_int[off], y_int[off], self.N, rho, po, self.rel)
                    x[fo[lin]], ex[fo[lin]] = xl[lin], exl[lin]
                    off[fo[lin]] = False
                    self._lineage_used = self._lineage_used or bool(np.any(lin))
            if np.any(off):
                yo, mo, bo = yy[off], m[off], below[off]
                xo = np.empty(yo.size)  # the small tail at (m, y): Boost's cdf below the mean, its sf above
                xo[bo] = bn.cdf(yo[bo], mo[bo], rho)
                xo[~bo] = bn.sf(yo[~bo], mo[~bo], rho)
                x[off] = xo
                ex[off] = np.maximum(bn.tail_error_budget(yo, mo, rho), self.rel) * xo + 1e-300
            new = _branch_cdfs(x, ex, p, ep, below, rho)
            new["p"], new["ep"] = p, ep
            full = tt > self.N  # Bin(0): F_0(y) = 1 for y >= 0; the silent branch has weight 0
            if np.any(full):  # (only t = N + 1, the last total of a window reaching it)
                for f, v in (("Fc", 1.0), ("Gc", 0.0), ("Fs", 0.0), ("Gs", 1.0), ("p", 0.0)):
                    new[f] = np.where(full, v, new[f])
                for f in ("eFc", "eGc", "eFs", "eGs", "ep"):
                    new[f] = np.where(full, 0.0, new[f])
            row[miss] = self.masses.add(uk[miss], new)
        r = row[inv]
        out: dict[str, np.ndarray] = {}
        for f in self._MASS_FIELDS:  # (with the two end entries: see the docstring)
            col = np.empty(r.size + 2)
            np.take(self.masses.data[f], r, out=col[:-2])
            col[-2:] = self._MASS_ENDS[f[:-1]]
            out[f] = col
        return out

    def _walk(self, keys: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]] | None:
        """Boundaries (sorted keys, none cached) within :data:`WALK_MAX` of a cached boundary
        ``y0`` of the same total, from it by the exact sums (``m = N - t``, ``s = sign(y - y0)``,
        ``[a, b]`` the integers between ``y0`` and ``y``)

            F_m(y-1) = F_m(y0-1) + s Σ_{a <= i < b} P_m(i),
            F_{m+1}(y) = F_{m+1}(y0) + s Σ_{a < i <= b} (ρ P_m(i-1) + (1-ρ) P_m(i))

        (``Bin(m+1) = Bin(m) + Bernoulli(ρ)``), likewise ``G = 1 - F`` with ``-s``, the pmf
        walked from the cached ``P_m(y0)`` by the exact ratio ``P_m(i+1)/P_m(i) = (m-i) ρ / ((i+1)
        (1-ρ))``. Absolute error bounds: the cached ones, plus the sums' (the anchor's relative
        error, ``8u`` per ratio step, ``2u`` per addition, relative to the positive sums) and
        ``2u`` of the new values; a walk is kept only where each branch's smaller side has an error
        bound within ``4x`` Boost's pmf budget of its value (else the key takes Boost's tail).
        Returns (which keys were walked, their rows) or None."""
        store = self.masses
        if store.keys.size == 0 or keys.size == 0:
            return None
        pos = np.searchsorted(store.keys, keys)
        tk, yk = self._unkey(keys)
        best_d = np.full(keys.size, WALK_MAX + 1, dtype=np.int64)
        best_r = np.zeros(keys.size, dtype=np.int64)
        best_y = np.zeros(keys.size, dtype=np.int64)
        for cand in (pos - 1, pos):  # the cached neighbours below and above in key order
            ok = (cand >= 0) & (cand < store.keys.size)
            ck = store.keys[np.clip(cand, 0, store.keys.size - 1)]
            ct, cy = self._unkey(ck)
            ok &= ct == tk
            dist = np.abs(cy - yk)
            r = store.ptr[np.clip(cand, 0, store.keys.size - 1)]
            ok &= (dist < best_d) & (store.data["p"][r] > 1e-280) & (tk <= self.N)
            best_d = np.where(ok, dist, best_d)
            best_r = np.where(ok, r, best_r)
            best_y = np.where(ok, cy, best_y)
        near = best_d <= WALK_MAX
        if not np.any(near):
            return None
        out = {f: np.zeros(int(near.sum())) for f in self._MASS_FIELDS + self._ANCHOR_FIELDS}
        idx = np.nonzero(near)[0]
        lo = 0
        for hi in (2, 4, 8, 16, WALK_MAX):  # walks of similar lengths together (arrays as wide as the longest)
            grp = np.nonzero((best_d[idx] > lo) & (best_d[idx] <= hi))[0]
            lo = hi
            if grp.size:
                part = self._walk_from(best_r[idx[grp]], yk[idx[grp]], best_y[idx[grp]], tk[idx[grp]],
                                       best_d[idx[grp]], hi)
                for f, v in part.items():
                    out[f][grp] = v
        # keep a walk only where both branches' small side is as accurate as a Boost tail would be
        # (a walk outwards into a tail subtracts; its absolute error would dominate a tiny value)
        acc = np.ones(idx.size, dtype=bool)
        for br in ("c", "s"):
            f_small = out["F" + br] <= out["G" + br]
            small = np.where(f_small, out["F" + br], out["G" + br])
            e_small = np.where(f_small, out["eF" + br], out["eG" + br])
            acc &= e_small <= 4.0 * self.rel * small + 1e-300
        if not np.any(acc):
            return None
        near[idx[~acc]] = False
        return near, {f: v[acc] for f, v in out.items()}

    def _walk_from(self, r0: np.ndarray, yk: np.ndarray, y0k: np.ndarray, tk: np.ndarray, dk: np.ndarray,
                   width: int) -> dict[str, np.ndarray]:
        """:meth:`_walk` for walks of at most ``width`` steps from the cached rows ``r0``."""
        store = self.masses
        y, y0 = yk.astype(float), y0k.astype(float)
        m = self.N - tk.astype(float)
        d0 = store.data
        p0, rp = d0["p"][r0], d0["ep"][r0] / d0["p"][r0]
        sgn = np.sign(y - y0)
        steps = np.arange(width + 1, dtype=float)[None, :]
        i = y0[:, None] + sgn[:, None] * steps  # i = y0, y0 + s, ... (towards y)
        rho = self.rho
        r_ = rho / (1.0 - rho)
        mm = m[:, None]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            ratio = np.where(sgn[:, None] > 0, (mm - (i - 1.0)) / i * r_, (i + 1.0) / ((mm - i) * r_))
        ratio[:, 0] = 1.0
        dist = dk[:, None].astype(float)
        ratio = np.where((steps <= dist) & np.isfinite(ratio) & (ratio >= 0.0), ratio, 0.0)
        P = p0[:, None] * np.cumprod(ratio, axis=1)  # P_m(y0 + s k), k = sign, for s <= |y - y0|
        up = sgn[:, None] > 0
        # S_s: i in [a, b) i.e. s = 0 .. d-1 (upward) or s = 1 .. d (downward)
        take_s = np.where(up, steps < dist, (steps >= 1.0) & (steps <= dist))
        S_s = np.sum(np.where(take_s, P, 0.0), axis=1)
        # S_c: i in (a, b]: upward s = 1 .. d with P(i-1) = P[s-1]; downward s = 0 .. d-1 with P(i-1) = P[s+1]
        prev = np.where(up, _rolled(P, 1), _rolled(P, -1))
        take_c = np.where(up, (steps >= 1.0) & (steps <= dist), steps < dist)
        S_c = np.sum(np.where(take_c, rho * prev + (1.0 - rho) * P, 0.0), axis=1)
        d = dk.astype(float)
        R = rp + 8.0 * d * _U + 2.0 * (d + 2.0) * _U  # relative error of the positive sums
        eS_s, eS_c = R * S_s + 1e-300, (R + 4.0 * _U) * S_c + 1e-300
        out: dict[str, np.ndarray] = {}
        for br, S, eS in (("s", S_s, eS_s), ("c", S_c, eS_c)):
            F0, G0 = d0["F" + br][r0], d0["G" + br][r0]
            F = F0 + sgn * S
            G = G0 - sgn * S
            out["F" + br] = np.clip(F, 0.0, 1.0)
            out["G" + br] = np.clip(G, 0.0, 1.0)
            out["eF" + br] = d0["eF" + br][r0] + eS + 2.0 * _U * (F0 + S)
            out["eG" + br] = d0["eG" + br][r0] + eS + 2.0 * _U * (G0 + S)
        pn = P[np.arange(P.shape[0]), dk]
        out["p"] = pn
        out["ep"] = pn * (rp + 8.0 * d * _U) + 1e-300
        return out

    def lower_at(self, eps: float) -> float:
        """Certified lower bound on the window's sum at ``eps`` from the pieces, masses and lines
        of its last evaluation (module docstring §3, *lower_at*): each piece's two lines rescaled
        to ``eps`` and summed exactly in ``λ`` as in :meth:`_evaluate`. 0 without a state or
        farther than :data:`LOWER_AT_REACH` from it."""
        if self._low is None:
            return 0.0
        eps_l, M_hi, M_lo, Mc_lo, lines, npc = self._low
        r = _line_ratios(eps_l, eps)
        if r is None:
            return 0.0
        low = np.zeros(M_hi.size)
        for (A_, Ae, B_, Be), has in lines:
            A2, Ae2 = _scaled_line(A_, Ae, r[0])
            B2, Be2 = _scaled_line(B_, Be, r[1])
            low = np.maximum(low, np.where(has, _line_sum(A2, Ae2, B2, Be2, M_hi, M_lo, Mc_lo), 0.0))
        return max(float(np.sum(low)) * (1.0 - 4.0 * _U * (npc + 2)), 0.0)

    def upper_near(self, eps: float) -> float:
        """Certified upper bound on the window's sum at ``eps`` near the ``ε_l`` of its last evaluation
        (``0 < |eps - ε_l| <= UPPER_NEAR_REACH ε_l``; else ``inf``), from that evaluation's
        boundaries, masses and kernel bounds, without a kernel or mass computation.

        *Derivation.* Write ``g = e^ε``. For one total the kernel is ``h_g(λ) = max_S P_λ(S) -
        g Q_λ(S)`` (``S`` a set of counts ``a`` of ``x1``), attained at ``S_g = {a : P_λ(a) > g Q_λ(a)}``.
        For any ``g'``, ``h_g >= P(S_{g'}) - g Q(S_{g'}) = h_{g'} + (g' - g) Q(S_{g'})``, so

            h_{g'}(λ) <= h_g(λ) - (g' - g) Q_λ(S_{g'}).

        With ``c`` fair clones ``P_λ(a) = u B(a-1) + v B(a)``, ``Q_λ(a) = v B(a-1) + u B(a)`` (``u = 1/2 +
        λ d``, ``v = 1/2 - λ d``, ``B`` the ``Bin(c, 1/2)`` pmf), so for ``1 <= a <= c`` the likelihood
        ratio is ``LR(a) = (u r + v)/(v r + u)`` with ``r = B(a-1)/B(a) = a/(c - a + 1)``, increasing in
        ``a`` (``u >= v``): ``S_{g'} = {a >= cut(g')}``, and ``Q_λ({a >= κ}) = v B(κ-1) + S(κ)`` (``u + v = 1``;
        ``S`` the tail ``P[Bin >= κ]``). *Above* (``g' > g``): any ``κ`` with ``LR(κ) > g'`` lies in
        ``S_{g'}``, so ``Q_λ(S_{g'}) >= Q_λ({a >= κ})``, and ``H' = H - Δg_lo Q_lo >= h_{g'}(λ_s)`` for
        ``Δg_lo <= g' - g``, ``Q_lo <= v B(κ-1) + S(κ)`` (``Q_lo = 0`` where no ``κ`` is certified: ``h`` is
        non-increasing in ``ε``). *Below* (``g' < g``): any ``κ >= 2`` with ``LR(κ - 1) <= g'`` has
        ``κ - 1 ∉ S_{g'}``, so ``S_{g'} ⊆ {a >= κ}`` and ``H' = H + Δg_hi Q_hi >= h_{g'}(λ_s)`` for
        ``Δg_hi >= g - g'``, ``Q_hi >= v B(κ-1) + S(κ)`` (``Q_hi = 1``, a probability, where no ``κ`` is
        certified). Here ``H >= h_g(λ_s)`` is the evaluation's bound at each boundary's ``λ_s``. The
        chords of the convex ``h_{g'}`` through points above it lie above it on their pieces, and the
        first and last pieces' bounds (``2d``; the value at the top ``λ``, P3; the kernel at ``λ = 1``,
        moved likewise with ``Q = 1``) hold at ``g'`` too, so :meth:`_upper_of` with ``H'`` is an upper
        bound at ``eps``: the masses and ``λ`` ranges do not depend on ``ε``.

        *Floating point.* ``|g' - g| = e^{ε_l} |expm1(eps - ε_l)|`` (the difference is exact, Sterbenz;
        ``exp``, ``expm1`` within one ulp, one product), taken times ``1 -+ 8u``. ``κ`` is tried at the
        closed-form cut of ``eps`` and its neighbour (one above, resp. below); the likelihood-ratio
        tests ``u r + v > g' (v r + u)(1 + m)``, resp. ``u r + v <= g' (v r + u)(1 - m)``, with
        ``m =`` :data:`LR_MARGIN` (each side within ~20 ulps). ``B(κ-1)``, ``S(κ)`` come from the
        evaluation's table rows (only where the row holds both) with the budgets
        :func:`_lines_from_row` charges, taken at their low (resp. high) ends, times ``1 -+ 8u``.
        ``H' = fl(H -+ fl(Δg Q)(1 -+ 4u))(1 + 2u)``, floored at 0 (exactly ``h_{g'} >= 0``). Rows
        replaced since the evaluation (a full table store) give ``inf``.
        """
        st = self._up
        if st is None:
            return math.inf
        eps_l, own, lam_s, row_of, H, chords, generation = st
        if not (0.0 < abs(eps - eps_l) <= UPPER_NEAR_REACH * eps_l) or generation != self.tables.generation:
            return math.inf
        above = eps > eps_l
        dg = math.exp(eps_l) * abs(math.expm1(eps - eps_l)) * (1.0 - 8.0 * _U if above else 1.0 + 8.0 * _U)
        q = self._set_mass_near(own, lam_s, row_of[own], eps, above)
        if above:
            H2 = np.maximum((H - dg * q * (1.0 - 4.0 * _U)) * (1.0 + 2.0 * _U), 0.0)
            top0 = chords.H_top0
        else:
            H2 = (H + dg * q * (1.0 + 4.0 * _U)) * (1.0 + 2.0 * _U)
            top0 = (chords.H_top0 + dg * (1.0 + 4.0 * _U)) * (1.0 + 2.0 * _U)
        return self._upper_of(H2, chords, top0)

    def _set_mass_near(self, own: np.ndarray, lam: np.ndarray, row: np.ndarray, eps: float, above: bool) -> np.ndarray:
        """:meth:`upper_near`'s bound on ``Q_λ(S_{g'})`` at each boundary: *above*, a lower bound (the
        largest ``Q_λ({a >= κ})`` over ``κ`` in {closed-form cut of ``eps``, one above} with ``LR(κ) > g'``
        certified, else 0); *below*, an upper bound (the least over ``κ`` in {that cut, one below}
        with ``LR(κ - 1) <= g'`` certified, else 1)."""
        c = self.t[own] - 1.0
        g = math.exp(eps)
        u, v = 0.5 + lam * self.d, _first_user_v(lam, self.d)
        k0 = _closed_cut(c, lam, self.d, math.expm1(eps))
        erel = self.rel + 3.0 * _ROW_WIDTH * _U
        best = np.zeros(own.size) if above else np.ones(own.size)
        sign = -1.0 if above else 1.0  # the budgets' direction
        for cut in (k0 - 1.0, k0, k0 + 1.0):
            a = cut if above else cut - 1.0  # the count whose likelihood ratio decides
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                r = a / (c - a + 1.0)
                if above:
                    certified = (a >= 1.0) & (a <= c) & (u * r + v > g * (v * r + u) * (1.0 + LR_MARGIN))
                else:
                    certified = (a >= 1.0) & (a <= c) & (u * r + v <= g * (v * r + u) * (1.0 - LR_MARGIN))
            bb, ss, t_budget, hi, ok = _row_values(self.tables.store, row, cut)
            srel = np.maximum(np.maximum(t_budget, self.rel), erel)
            ok &= certified & (cut <= hi + 1.0)
            q = (v * bb * (1.0 + sign * erel) + ss * (1.0 + sign * srel)) * (1.0 + sign * 8.0 * _U)
            if above:
                best = np.maximum(best, np.where(ok, np.maximum(q, 0.0), 0.0))
            else:
                best = np.minimum(best, np.where(ok, q, 1.0))
        return best

    def _upper_of(self, H: np.ndarray, ch: _Chords, H_top0: np.ndarray | None = None) -> float:
        """The upper end from upper bounds ``H`` on the kernel at the boundaries' ``lam_s`` (class
        docstring): per piece the chord through its ends' ``(lam_s, H)`` summed exactly in ``λ``
        (``H_bot M + s D``, ``D = Σ P (λ - λ_bot)``), capped by the larger end value times the mass;
        the first pieces ``2d`` (or, at ``{j = 0}``, the chord up to ``λ = 1``), the last ones ``H`` at
        their top end (P3); the totals outside at ``2d``; every rounding charged. ``H_top0``: the
        kernel bound at ``λ = 1`` of the pieces ``{j = 0}`` (default: the evaluation's)."""
        u4, d = 4.0 * _U, self.d
        H_top = np.where(ch.has_l, H[ch.li], 0.0)
        H_top[ch.top0] = ch.H_top0 if H_top0 is None else H_top0
        H_bot = np.where(ch.has_r, H[ch.ri], 0.0)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            s = (H_top - H_bot) / (ch.lam_top - ch.lam_bot)
        finite = np.isfinite(s) & ch.has_r & (ch.lam_top > ch.lam_bot)
        s = np.where(finite, s, 0.0)
        M_hi = ch.M_hi
        chord = H_bot * M_hi + np.where(s >= 0.0, s * ch.D_hi, s * ch.D_lo)
        chord = chord + 2.0 * u4 * (H_bot * M_hi + np.abs(s) * ch.D_hi)
        up = np.minimum(np.where(finite & np.isfinite(chord), chord, np.inf), np.maximum(H_top, H_bot) * M_hi * (1.0 + u4))
        up = np.where(~ch.has_r, H_top * M_hi * (1.0 + u4), up)
        up = np.where(~ch.has_l & ~ch.top0, 2.0 * d * M_hi * (1.0 + u4), up)
        tail_up = (self.mass_below + self.mass_above) * 2.0 * d * (1.0 + u4)
        return (float(np.sum(up)) * (1.0 + u4 * (ch.npc + 2)) + tail_up) * (1.0 + u4)

    def bounds(self, eps: float, rtol: float) -> DeltaBounds:
        """Certified bracket at ``eps`` (``0 <= eps < eps0``); ``converged`` when its relative
        width is at most ``rtol``."""
        def widened(got: tuple[DeltaBounds, bool] | None) -> bool:
            """A bracket computed with moved kinks, wider than SNAP_RTOL times the rtol asked."""
            return got is not None and got[1] and got[0].upper - got[0].lower > SNAP_RTOL * rtol * got[0].lower

        got = self._memo.get(eps)
        if got is None or widened(got):
            self._snapped = False
            self._near_last = abs(eps - self._last_eps) <= SNAP_STEP * eps
            self._last_eps = eps
            got = (self._evaluate(eps), self._snapped)
            if widened(got):
                self.snapping = False  # moved kinks widened it: again with every kink in place
                try:
                    got = (self._evaluate(eps), False)
                finally:
                    self.snapping = True
            wide = got[0].upper - got[0].lower > rtol * got[0].lower and got[0].upper > 1e-300
            if wide and rtol < LINEAGE_RETRY_RTOL and self._lineage_used:  # walked tails may have limited it
                self.lineage, self._lineage_used = False, False
                self.masses = self._empty_masses()
                self._memo.clear()
                got = (self._evaluate(eps), self._snapped)
            if len(self._memo) >= 256:
                self._memo.clear()
            self._memo[eps] = got
        hit = got[0]
        conv = hit.upper - hit.lower <= rtol * hit.lower or hit.upper <= 1e-300
        return DeltaBounds(eps, hit.lower, hit.upper, hit.blocks, conv)

    def log_slope(self, eps: float) -> float:
        """Estimate of ``d log δ / d ε`` at the last evaluated ``eps`` (the lower bound's lines,
        each derivative with its cut held; steering only, never reported)."""
        e, s = self._slope
        return s if e == eps and s < 0.0 else math.nan

    def _pieces(self, gm1: float, g: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Boundaries of every total: the lower window end, the kinks, the upper window end.
        Returns ``(owner, y, cut_left, cut_right)`` sorted by owner then ``y``, distinct: a kink
        boundary ``y = floor(j*)`` between the cuts ``κ`` (optimal for ``j <= y``) and ``κ + 1``
        has ``cut_left = κ``, ``cut_right = κ + 1`` (kinks sharing one ``y``: the outer cuts);
        window ends have -1."""
        t, c, d = self.t, self.t - 1.0, self.d
        nt = t.size
        lam_a = t / (t + self.kappa * self.ja)
        lam_b = t / (t + self.kappa * self.jb)
        ka = _closed_cut(c, lam_a, d, gm1)
        kb = _closed_cut(c, lam_b, d, gm1)
        n_cuts = np.maximum(kb - ka + 2.0, 0.0)
        total_cuts = float(np.sum(n_cuts))
        if total_cuts > max(KINK_CUTS_MEAN * nt, KINK_CUTS_MIN):  # (cost only: no kinks, see KINK_CUTS_MEAN)
            n_cuts = np.zeros(nt)
        owner, kk = ragged(ka - 1.0, n_cuts)
        if owner.size and gm1 > 0.0:
            cc, to = c[owner], t[owner]
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                r = (cc - kk + 1.0) / kk  # B(κ)/B(κ-1) for Bin(c, 1/2)
                lam_star = gm1 * (1.0 + r) / (2.0 * d * (1.0 + g) * (1.0 - r))
                jstar = to * (1.0 / lam_star - 1.0) / self.kappa
            ok = (kk >= 1.0) & (r < 1.0) & np.isfinite(jstar) & self.kinked[owner]
            y = np.floor(np.where(ok, jstar, -1.0))
            if self.grid and self.snapping:  # onto the grid where that stays inside the window
                ys = np.round(y / self.grid) * self.grid
                inside = (ys > self.ja[owner]) & (ys < self.jb[owner]) & ok
                ys = np.where(inside, ys, y)
                if self._long_runs(ys[inside], to[inside]):
                    self._snapped = self._snapped or bool(np.any(ys != y))
                    y = ys
            ok &= (y > self.ja[owner]) & (y < self.jb[owner])
            k_own, k_y, k_cut = owner[ok], y[ok], kk[ok]  # by owner, then kappa: y non-decreasing
        else:
            k_own, k_y, k_cut = np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0)
        # kinks sharing one y: one boundary, the cut left of the first and right of the last
        if k_own.size:
            new = np.ones(k_own.size, dtype=bool)
            new[1:] = (k_own[1:] != k_own[:-1]) | (k_y[1:] != k_y[:-1])
            endg = np.ones(k_own.size, dtype=bool)
            endg[:-1] = new[1:]
            k_cl, k_cr = k_cut[new], k_cut[endg] + 1.0
            k_own, k_y = k_own[new], k_y[new]
        else:
            k_cl = k_cr = k_cut
        # per owner: [ja, kinks..., jb] (ja < kinks < jb; ja == jb only where the window is one point)
        nk = np.bincount(k_own, minlength=nt)
        size = nk + 1 + (self.jb > self.ja)
        start = np.concatenate(([0], np.cumsum(size)[:-1]))
        total = int(size.sum())
        own = np.repeat(np.arange(nt), size)
        yy = np.empty(total)
        cl = np.full(total, -1.0)
        cr = np.full(total, -1.0)
        yy[start] = self.ja
        two = self.jb > self.ja
        yy[(start + size - 1)[two]] = self.jb[two]
        if k_own.size:
            rank = np.arange(k_own.size) - np.repeat(np.cumsum(nk) - nk, nk)
            at = start[k_own] + 1 + rank
            yy[at], cl[at], cr[at] = k_y, k_cl, k_cr
            yy = self._snap_kinks(own, yy, at)
        return own, yy, cl, cr

    @staticmethod
    def _long_runs(y: np.ndarray, t: np.ndarray) -> bool:
        """Whether the boundaries ``(t, y)`` form runs of sizes at one ``y`` (:func:`_tails_by_runs`
        with :data:`GRID_RUN_GAP`) of at least :data:`GRID_MIN_RUN` boundaries on average (kinks
        that drift across the grid faster than that are left where they are: cost only)."""
        if y.size == 0:
            return False
        ys, ts = _by_y_then_t(y, t)
        runs = 1 + int(np.count_nonzero((ys[1:] != ys[:-1]) | (ts[1:] - ts[:-1] > GRID_RUN_GAP)))
        return y.size >= GRID_MIN_RUN * runs

    def _snap_kinks(self, own: np.ndarray, yy: np.ndarray, at: np.ndarray) -> np.ndarray:
        """Kink boundaries ``yy[at]`` moved to a boundary of the same total whose masses are cached
        (a previous ``ε``'s kink) when one lies within :data:`SNAP_SD` sd of its ``J`` and ``ε`` is within
        :data:`SNAP_STEP` (relative) of the last evaluated one, where every total's
        boundaries stay strictly increasing (else that total keeps its kinks). Cost and tightness
        only: any boundaries give a certified bracket (class docstring: the chords and lines are
        valid for any partition; a boundary's ``lam_s`` is clipped into its own ``λ`` gap and every
        cut's line is a minorant). A moved kink leaves the chord of the piece holding it above the
        kernel near the kink: measured at n = 1e6 .. 1e7 (0.1 sd, the second ``ε`` of a search) the
        window's relative width grows from ~1e-8 to ~1e-7; in small windows (a few units per sd) far
        more, hence :data:`SNAP_MIN`, and :meth:`bounds` repeats an evaluation whose bracket the
        moved kinks left wider than :data:`SNAP_RTOL` times the rtol asked. The next search step's
        kinks move by ~5e-5 of ``J`` for a relative step of 5e-6 in ``ε`` (n = 1e7: ~50 units, 0.05
        sd), so most of them find their masses cached instead of a Boost tail each."""
        store = self.masses
        if not self.snapping or store.keys.size == 0 or at.size == 0 or not self._near_last:
            return yy
        tk = self.t[own[at]].astype(np.int64)
        key = self._key(tk, yy[at])
        pos = np.searchsorted(store.keys, key)
        reach = self.snap[own[at]]
        best, best_d = yy[at].copy(), reach + 1.0
        for cand in (pos - 1, pos):
            ck = store.keys[np.clip(cand, 0, store.keys.size - 1)]
            ct, cy_int = self._unkey(ck)
            ok = (cand >= 0) & (cand < store.keys.size) & (ct == tk)
            cy = cy_int.astype(float)
            dist = np.abs(cy - yy[at])
            better = ok & (dist < best_d)
            best = np.where(better, cy, best)
            best_d = np.where(better, dist, best_d)
        if not np.any(best != yy[at]):
            return yy
        out = yy.copy()
        out[at] = best
        # keep a total's snapped kinks only where its boundaries still increase strictly
        bad = np.zeros(self.t.size, dtype=bool)
        same = own[1:] == own[:-1]
        bad[own[1:][same & (out[1:] <= out[:-1])]] = True
        if np.any(bad):
            out = np.where(bad[own], yy, out)
        self._snapped = self._snapped or bool(np.any(out != yy))  # (the grid may have moved kinks already)
        return out

    def _kernels(self, owner: np.ndarray, lam: np.ndarray, eps: float) -> tuple[tuple[np.ndarray, ...], np.ndarray]:
        """:func:`_kernel_lines` at clone count ``t[owner] - 1`` (``owner`` sorted) and mixing
        ``lam``: the same rows and arithmetic as :func:`_kernel_table` (:func:`_lines_from_row`),
        grouped by the window's totals directly (an owner whose cuts spread wider than the table
        goes direct). Also returns each owner's table row (-1: none)."""
        nt = self.t.size
        c = self.t[owner] - 1.0
        d, gm1 = self.d, math.expm1(eps)
        u, v = 0.5 + lam * d, _first_user_v(lam, d)
        cb = 2.0 * lam * d - gm1 * v
        out = [np.zeros(c.size) for _ in range(6)]
        live = cb > 0.0
        k = _closed_cut(c, lam, d, gm1)
        kmin, kmax = np.full(nt, np.inf), np.full(nt, -np.inf)
        lo_own = owner[live]
        if lo_own.size:
            starts = np.concatenate(([0], np.nonzero(np.diff(lo_own))[0] + 1))
            kmin[lo_own[starts]] = np.minimum.reduceat(k[live], starts)
            kmax[lo_own[starts]] = np.maximum.reduceat(k[live], starts)
        has = np.isfinite(kmin)
        # the cuts of the kinks lie between these (a margin of 2 for the lines by cut)
        lo = np.maximum(np.maximum(kmin, kmax - (self.tables.table_width - 5.0)) - 4.0, 0.0)
        hi = kmax + 2.0
        has &= (hi - lo + 1.0) <= self.tables.table_width
        row_of = np.full(nt, -1, dtype=np.int64)
        if np.any(has):
            row_of[has] = self.tables.rows(self.t[has] - 1.0, lo[has], hi[has], self.rel)
        r = row_of[owner]
        data = self.tables.store.data
        tab = live & (r >= 0)
        if np.any(tab):
            tab &= (k >= 2.0) & (k - 2.0 >= data["lo"][np.maximum(r, 0)])
        direct = live & ~tab
        if np.any(direct):
            for o, x in zip(out, _kernel_lines(c[direct], lam[direct], d, eps, self.rel)):
                o[direct] = x
        if np.any(tab):
            rt, kt = r[tab], k[tab]
            res = _lines_from_row(data["B"], data["S"], rt, kt - data["lo"][rt], kt, cb[tab], u[tab], v[tab],
                                  data["tail_budget"][rt], d, eps, self.rel)
            for o, x in zip(out, res):
                o[tab] = x
        return tuple(out), row_of

    def _line_of_cut(self, row: np.ndarray, cut: np.ndarray, eps: float) -> tuple[np.ndarray, ...]:
        """The line ``A + λ B`` of the set ``{a >= cut}`` (property P4: below ``h`` for every
        ``λ``) from table rows, with the error bounds of :func:`_lines_from_row`; ``ok`` marks the
        requests whose row holds the cut (the others: ``A = B = 0``, the trivial line)."""
        bb, ss, t_budget, _, ok = _row_values(self.tables.store, row, cut)
        g, gm1 = math.exp(eps), math.expm1(eps)
        erel = self.rel + 3.0 * _ROW_WIDTH * _U
        srel = np.maximum(np.maximum(t_budget, self.rel), erel)
        e_a = (erel + 16.0 * _U) * gm1 * 0.5 * bb + (srel + 16.0 * _U) * gm1 * ss + 2.0 * erel * gm1 * bb
        B_l = self.d * (1.0 + g) * bb
        return -gm1 * (0.5 * bb + ss), e_a, B_l, (erel + 16.0 * _U) * B_l, ok

    def _evaluate(self, eps: float) -> DeltaBounds:
        g, gm1, d, u4 = math.exp(eps), math.expm1(eps), self.d, 4.0 * _U
        t, kap = self.t, self.kappa
        own, y, cut_l, cut_r = self._pieces(gm1, g)
        nb = own.size
        bm = self._boundary_masses(t[own], y)
        first = np.ones(nb, dtype=bool)
        first[1:] = own[1:] != own[:-1]
        last = np.ones(nb, dtype=bool)
        last[:-1] = own[1:] != own[:-1]
        # One kernel evaluation per boundary, at lam_s between lam(y + 1) and lam(y) (both pieces'
        # lam ranges end there: the piece j <= y lies at lam >= lam(y) >= lam_s, the piece j >= y + 1
        # at lam <= lam(y + 1) <= lam_s). At a kink lam_s is the crossing lam*, where h equals both
        # lines, so both chords are the lines. Rounded inwards by 16u (the quotients' roundings and
        # kappa's, which differs from the 2/(e^eps0 + 1) implied by the rounded q, rho by a few ulps).
        tb = t[own]
        l_hi = tb / (tb + kap * y) * (1.0 - 4.0 * u4)
        l_lo = tb / (tb + kap * (y + 1.0)) * (1.0 + 4.0 * u4)
        if np.any(l_lo >= l_hi):
            raise CertificationError(f"blanket window: adjacent lambdas not separable at eps = {eps!r} (please report)")
        kink = cut_l >= 0.0
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            r = (tb - cut_l) / cut_l  # B(κ)/B(κ-1) of Bin(t - 1, 1/2) at the first kink's cut
            lam_star = gm1 * (1.0 + r) / (2.0 * d * (1.0 + g) * (1.0 - r))
        # window ends: the lower window end serves the interior piece to its right (lam_s at its
        # top), the upper one the interior piece to its left (lam_s at its bottom)
        target = np.where(kink & np.isfinite(lam_star), lam_star, np.where(y <= self.ja[own], l_lo, l_hi))
        lam_s = np.clip(target, l_lo, l_hi)
        (val, verr, A, Aerr, B, Berr), row_of = self._kernels(own, lam_s, eps)
        H = val + verr
        # pieces: one before each boundary (right end = that boundary, left end = the previous one
        # or the top), one after the last boundary of each total; piece i before boundary i sits
        # at i + owner(i), the one after the last boundary of owner o after it
        npc = nb + int(last.sum())
        p_own = np.empty(npc, dtype=np.int64)
        right = np.full(npc, -1, dtype=np.int64)
        left = np.full(npc, -1, dtype=np.int64)
        rank = np.cumsum(first) - 1  # index of the owner among the totals with boundaries
        pos_b = np.arange(nb) + rank
        p_own[pos_b] = own
        right[pos_b] = np.arange(nb)
        left[pos_b] = np.where(first, -1, np.arange(nb) - 1)
        pos_e = np.nonzero(last)[0] + rank[last] + 1
        p_own[pos_e] = own[last]
        left[pos_e] = np.nonzero(last)[0]
        tp = t[p_own]
        has_l, has_r = left >= 0, right >= 0
        li, ri = np.maximum(left, 0), np.maximum(right, 0)

        masses = {}
        rx, lx = np.where(has_r, right, nb), np.where(has_l, left, nb + 1)  # (no boundary: the end entries)
        for br in ("c", "s"):
            F_r, F_l = bm["F" + br][rx], bm["F" + br][lx]
            use_f = F_r <= 0.5
            G, eF, eG = bm["G" + br], bm["eF" + br], bm["eG" + br]
            dm = np.where(use_f, F_r - F_l, G[lx] - G[rx])
            e = np.where(use_f, eF[rx] + eF[lx], eG[rx] + eG[lx])
            masses[br] = (np.maximum(dm, 0.0), e + 2.0 * _U * np.where(use_f, F_r, 1.0 - F_l))
        (dc, edc), (ds, eds) = masses["c"], masses["s"]
        W1, W0 = self.W1[p_own], self.W0[p_own]
        Mc = W1 * dc
        eMc = W1 * (edc + self.rW1[p_own] * dc) + u4 * Mc
        M = Mc + W0 * ds
        eM = eMc + W0 * (eds + self.rW0[p_own] * ds) + u4 * M
        M_hi = M + eM
        Mc_lo, M_lo = np.maximum(Mc - eMc, 0.0), np.maximum(M - eM, 0.0)

        # upper: the chord through the two ends' (lam_s, H); first pieces: 2d (j below a window not
        # starting at 0) or the chord up to lam = 1; last pieces: H at their top end (P3)
        lam_top = np.where(has_l, lam_s[li], 1.0)
        H_top = np.where(has_l, H[li], 0.0)
        top0 = ~has_l & (self.ja[p_own] <= 0.0)  # the first piece is {j = 0}: lam = 1 exactly
        k1 = [np.zeros(0)] * 6
        if np.any(top0):
            k1 = list(_kernel_lines(tp[top0] - 1.0, np.ones(int(top0.sum())), d, eps, self.rel))
            H_top[top0] = k1[0] + k1[1]
        lam_bot = np.where(has_r, lam_s[ri], 0.0)
        D = Mc - lam_bot * M  # sum over the piece of P (lam - lam_bot) >= 0
        eD = eMc + lam_bot * eM + u4 * (Mc + lam_bot * M)
        D_hi, D_lo = np.maximum(D, 0.0) + eD, np.maximum(D - eD, 0.0)
        chords = _Chords(li, ri, has_l, has_r, top0, H_top[top0], lam_top, lam_bot, M_hi, D_hi, D_lo, npc)
        self._up = (eps, own, lam_s, row_of, H, chords, self.tables.generation)

        # lower: the lines of the cuts the piece's ends name (left kink: its right cut; right kink:
        # its left cut), else the best line at the end's lam_s; the better of the two, and 0
        lows, lines, owns = [], [], []
        for idx, has, cuts in ((li, has_l, cut_r), (ri, has_r, cut_l)):
            use_cut = has & (cuts[idx] >= 0.0)
            lA, lAe, lB, lBe, ok = self._line_of_cut(np.where(use_cut, row_of[p_own], -1), cuts[idx], eps)
            ok &= use_cut
            ln = (np.where(ok, lA, A[idx]), np.where(ok, lAe, Aerr[idx]), np.where(ok, lB, B[idx]),
                  np.where(ok, lBe, Berr[idx]))
            if idx is li and np.any(top0):  # the piece {j = 0}: the line of the best cut at lam = 1
                ln = tuple(x.copy() for x in ln)
                for x, v in zip(ln, (k1[2], k1[3], k1[4], k1[5])):
                    x[top0] = v
                has = has | top0
            lines.append(ln)
            owns.append(has)
            lows.append(np.where(has, _line_sum(*ln, M_hi, M_lo, Mc_lo), 0.0))
        use_left = lows[0] >= lows[1]
        low = np.maximum(np.maximum(lows[0], lows[1]), 0.0)
        self._low = (eps, M_hi, M_lo, Mc_lo, list(zip(lines, owns)), npc)
        upper = self._upper_of(H, chords)
        lower = max(float(np.sum(low)) * (1.0 - u4 * (npc + 2)), 0.0)
        if upper < lower:
            raise CertificationError(f"inconsistent blanket window bracket [{lower!r}, {upper!r}] at eps = {eps!r}")
        # steering: d/d eps of the lower bound's lines (cut held): -g (B_c/2 + S) M + d g B_c Mc
        slope = math.nan
        if gm1 > 0.0 and lower > 0.0:
            lA = np.where(use_left, lines[0][0], lines[1][0])
            lB = np.where(use_left, lines[0][2], lines[1][2])
            bc = lB / (d * (1.0 + g))
            S = -lA / gm1 - 0.5 * bc
            dl = np.where(low > 0.0, -g * (0.5 * bc + S) * M + d * g * bc * Mc, 0.0)
            slope = float(np.sum(dl)) / float(np.sum(low))
        self._slope = (eps, slope)
        return DeltaBounds(eps, lower, max(upper, lower), int(npc), True)


#: The route ``lines`` (:class:`_LineWindow` on the central totals, the block engine on the others)
#: is taken from this many users on (where one chord per total over the bulk of ``J`` is tight:
#: measured on the central total, the chord's relative excess is ~1e-11 at n = 1e9, k = 100, ~2e-8 at
#: n = 1e9, k 3/10, ~1e-5 at n = 1e7, too wide there for the rtol the searches ask; from 1e6 the
#: failed tries cost up to 1.8x at n = 1e6 .. 3e6, k = 100; from 3e7: n = 3e7, k = 100, eps0 = 0.5
#: 26 -> 14 ms, eps0 = 2 24 -> 19 ms, the other n = 3e7 cases within noise) ...
LINES_MIN_N = 3 * 10**7
#: ... where the mean clone count ``(n - 1) 2q`` is at most this (small clone counts: the block engine
#: needs blocks of single totals there, e.g. 17.5k of them at n = 1e9, k = 100, eps0 = 0.5; at larger
#: clone counts its blocks are wide and it was as fast or faster: n = 1e9, k = 10, eps0 = 4, mean
#: 3.1e7: 20 -> 34 ms with the line window). Cost decision only.
LINES_MAX_T = 2.5e7
#: The line window's totals: ``mean ± LINES_SD sd`` of ``T``, at most ``LINES_HALF_TOTALS`` on each
#: side (each total costs ~1-2 us, mostly its kernel table row; the block engine bounds the others).
#: Measured (CPU, n 1e8 .. 1e9): 2.5 sd / 12k totals and 3 sd / 20k totals within noise of each other.
LINES_SD = 2.5
LINES_HALF_TOTALS = 12_000.0
#: Cuts tabulated per clone count for the line window (its three kernels per total are a few cuts apart).
LINES_TABLE_WIDTH = 16
#: Each total's chord spans ``J`` within ``LINES_Z`` sd of the means of its chunk of totals ...
LINES_Z = 9.0
#: ... chunks of totals over which the mean of ``J`` moves by at most this many sd (one pair of Boost
#: tails per chunk bounds the mass beyond the chord's range for all its totals).
LINES_CHUNK_SD = 0.25
#: The route ``lines`` sends an evaluation to its fallback route where the line window's chord excess
#: (:meth:`_LineWindow.chord_excess`, an overestimate of the central total's) is above this fraction of
#: the rtol asked (cost only). 0.6 rather than 0.3 (CPU min of 2x2 interleaved runs, n 3e7 .. 3e8, k 10/100,
#: eps0 0.5/1/2/4, delta 1e-6: geometric mean 0.90x; n = 3e8, k = 100, eps0 = 4 58 -> 22 ms, 1e8 k = 100
#: eps0 = 2 41 -> 15 ms, 1e8 k = 10 eps0 = 1 50 -> 34 ms; delta 1e-9 and n 3e7 .. 1e9, k 3/10/100: 1.01x,
#: within this machine's noise); 1.0 let windows too wide for the rtol be tried (up to 1.2x slower).
LINES_AIM = 0.6
#: ... and where ``w = rtol t / (1.5 - λ̄)`` is above this (``t``: the mean clone count, ``λ̄``: the mean
#: ``λ`` of the central total). The block engine's relative t-gap grows by about ``(1/2 + 1 - λ) / t`` per
#: unit of a block's width (the clone count's part and ``λ``'s), so ``w`` is about the width of the blocks
#: it needs, and wide blocks are few: n = 1e8, k = 3, eps0 = 2 (w ~ 120): 23 ms alone, 32 ms with the line
#: window; 3e8, k = 3, eps0 = 4 (w ~ 81): 21 -> 25 ms; the wins measured lie at w ~ 1 .. 73 (e.g. n = 1e9,
#: k = 100, eps0 = 0.5, delta = 1e-9, w ~ 73: 55 -> 38 ms; 3e8, k = 10, eps0 = 4, w ~ 59: 42 -> 23 ms).
#: Cost only.
LINES_RT = 75.0


class _LineWindow:
    """Certified sum over the totals ``t_lo .. t_hi`` of ``Σ_j Pr[t, j] h(t-1, λ(t, j))`` for the
    k-RR blanket (``k >= 3``; module docstring §2 notation) with one line and one chord per total
    and no binomial cdf of ``J`` at all but a pair of far tails per chunk of totals (*derived*
    here; tested against the oracle's exact sum and an independent float sum).

    *Counted mass* (as :class:`_TotalsWindow`). ``Pr[t, j] λ(t, j) = Pr[counted, t, j]``, so for
    any line ``a + b λ`` summed over *all* ``j``: ``Σ_j Pr[t, j] (a + b λ(t, j)) = a M_t + b W1_t``,
    ``M_t = Pr[T = t] = W1_t + W0_t``, ``W1_t = (1-p0) Pr[C = t-1]`` (counted),
    ``W0_t = p0 Pr[C = t]`` (silent): two binomial pmf values per total.

    *Lower.* For any cut the line ``A + λ B`` of property P4 lies below ``h(t-1, ·)`` on ``[0, 1]``,
    so ``A M_t + B W1_t`` is a lower bound (the cut: the optimal one at ``λ̄ = W1_t / M_t``, the mean
    of ``λ`` over ``j``), and so is 0 (``h >= 0``).

    *Upper.* Let ``J ∈ [y_a, y_b]`` hold the bulk (``y_a``, ``y_b``: ``LINES_Z`` sd below/above the
    means of ``J`` over the total's chunk), ``λ_lo = λ(t, y_b) <= λ(t, j) <= λ_hi = λ(t, y_a)`` there
    (``λ`` falls with ``j``; both rounded outwards) and ``ℓ`` the chord of ``H`` (certified upper
    values of ``h(t-1, ·)`` at ``λ_lo``, ``λ_hi``), slope ``s``. By convexity (P2) ``h <= ℓ`` on
    ``[λ_lo, λ_hi]``. For ``j > y_b`` (``λ < λ_lo``): ``h(λ) <= h(λ_lo) <= H_lo`` (P3) and
    ``H_lo - ℓ(λ) = s (λ_lo - λ) <= |s|``. For ``j < y_a``: ``h <= 2d`` (total variation of the
    first user) and ``2d - ℓ(λ) <= 2d + H_lo + |s|`` (``|ℓ| <= H_lo + |s|`` on ``[0, 1]``). So

        Σ_j Pr[t, j] h <= H_lo M_t + s (W1_t - λ_lo M_t) + (2d + H_lo + |s|) Pr[t, J < y_a]
                          + |s| Pr[t, J > y_b].

    The tails: ``J`` is ``Bin(m1, ρ)`` (counted, ``m1 = N - t + 1``) or ``1 + Bin(m0, ρ)`` (silent,
    ``m0 = N - t``), both stochastically between ``Bin(m0, ρ)`` and ``1 + Bin(m1, ρ)``, so
    ``Pr[t, J < y_a] <= M_t F_{m0}(y_a - 1)`` and ``Pr[t, J > y_b] <= M_t P[Bin(m1, ρ) >= y_b]``;
    ``F_m(y)`` falls and ``P[Bin(m) >= y]`` rises with ``m``, so the chunk's smallest ``m0`` and
    largest ``m1`` bound them for all its totals (one Boost cdf and sf per chunk, their budgets
    charged). Any ``y_a <= y_b`` gives a valid bound; the bulk only makes it tight.

    *Two chords* (:attr:`split`, where one is too loose: the kinks of ``h`` in the bulk). Split the
    ``j`` axis at ``y_m`` (between ``y_a`` and ``y_b``, one per chunk) and take ``λ_s`` between
    ``λ(t, y_m + 1)`` and ``λ(t, y_m)`` (rounded inwards, checked separable): chord ``ℓ_A`` of ``H`` over
    ``[λ_s, λ_hi]`` holds ``h`` for ``y_a <= j <= y_m``, chord ``ℓ_B`` over ``[λ_lo, λ_s]`` for
    ``y_m < j <= y_b``; each is summed exactly in ``λ`` over its side of ``y_m`` (the side's mass and
    counted mass, ``Pr[t, J <= y] = W1 F_{m+1}(y) + W0 F_m(y-1)`` and ``W1 F_{m+1}(y)``, ``m = N - t``,
    from one run of tails per chunk, :func:`_tails_by_runs`, :func:`_branch_cdfs`, their error bounds),
    and the tails are charged as above with ``ℓ_A``'s ``H_s + |s_A|`` below ``y_a`` and ``ℓ_B``'s
    ``|s_B|`` above ``y_b``. Which of the two answers is a cost decision (:meth:`chord_excess`).

    *Tightness* (measured, cost only): where no kink of ``h(t-1, ·)`` lies in ``[λ_lo, λ_hi]`` the
    chord is the line and the bracket closes to rounding (n = 1e9, k = 100: ~1e-11 relative); with
    the 3-7 kinks of the bulk the chord's excess is ~2e-8 at n = 1e9 (k = 3, 10), ~1e-5 at n = 1e7
    (hence :data:`LINES_MIN_N`; a bracket too wide for the rtol asked goes to the block engine).

    Errors: the masses carry the pmf budgets (:func:`.binomial.pmf_points`), the kernels theirs
    (:func:`_kernel_table`), the chord's slope and each product and sum their roundings (``4u`` per
    operation, as :class:`_TotalsWindow`); the totals outside the window are left to the block
    engine (:class:`_BlanketBackend`, route ``lines``).
    """

    def __init__(self, n: int, k: float, eps0: float, half_sd: float = LINES_SD,
                 half_totals: float = LINES_HALF_TOTALS) -> None:
        """The totals ``mean ± min(half_sd sd, half_totals)`` of ``T`` (within ``1 .. n - 1``)."""
        c = upper_constants(n, k, eps0)
        self.N = N = n - 1
        q2, rho, self.kappa, self.d, p0 = 2.0 * c.q, c.rho, c.kappa, c.d, c.p0
        self.rho = rho
        self.rel = bn.pmf_error_budget(max(n, 2))
        mu, sd = N * q2 + (1.0 - p0), _t_sd(c)
        half = min(half_sd * sd, half_totals)
        t_lo = max(1, int(math.floor(mu - half)))
        t_hi = min(N, int(math.ceil(mu + half)))
        self.t_range = (t_lo, t_hi)
        t = np.arange(t_lo, t_hi + 1, dtype=float)
        self.t = t
        b, rel_b = bn.pmf_points(np.arange(t_lo - 1, t_hi + 1, dtype=float), N, q2)
        W1, W0 = (1.0 - p0) * b[:-1], p0 * b[1:]
        u4 = 4.0 * _U
        eW1 = W1 * (rel_b[:-1] + u4)
        M = W1 + W0
        eM = eW1 + W0 * (rel_b[1:] + u4) + u4 * M
        self.M_hi, self.M_lo = M + eM, np.maximum(M - eM, 0.0)
        self.Mc, self.eMc, self.M, self.eM = W1, eW1, M, eM
        self.Mc_lo = np.maximum(W1 - eW1, 0.0)
        # chunks of totals (the mean of J moves by rho per total) and their J ranges
        m0, m1 = N - t, N - t + 1.0
        sd_j = math.sqrt(max((N - mu) * rho * (1.0 - rho), 1.0))
        size = max(int(LINES_CHUNK_SD * sd_j / rho), 1)
        chunk = ((t - t_lo) // size).astype(np.int64)
        nch = int(chunk[-1]) + 1
        starts = np.searchsorted(chunk, np.arange(nch))
        ends = np.concatenate((starts[1:], [t.size])) - 1
        # J's means: counted m1 rho, silent 1 + m0 rho; the chunk's lowest at its largest t (its end)
        ya = np.maximum(np.floor(m0[ends] * rho - LINES_Z * sd_j), 0.0)
        yb = np.minimum(np.ceil(m1[starts] * rho + 1.0 + LINES_Z * sd_j), m1[starts] + 1.0)
        # P[Bin(m0_min) <= ya - 1] and P[Bin(m1_max) >= yb] with their budgets, rounded up
        p_low = np.zeros(nch)
        low = ya >= 1.0
        if np.any(low):
            x = bn.cdf(ya[low] - 1.0, m0[ends][low], rho)
            p_low[low] = x * (1.0 + np.maximum(bn.tail_error_budget(ya[low] - 1.0, m0[ends][low], rho), self.rel)
                              + u4) + 1e-300
        x = bn.sf(yb - 1.0, m1[starts], rho)
        p_high = x * (1.0 + np.maximum(bn.tail_error_budget(yb - 1.0, m1[starts], rho), self.rel) + u4) + 1e-300
        self.p_low, self.p_high = p_low[chunk], p_high[chunk]
        y_a, y_b = ya[chunk], yb[chunk]
        # the chords' ends (rounded outwards by 16u, as the window's) and the line's lambda
        kap = self.kappa
        self.lam_hi = np.where(y_a <= 0.0, 1.0, np.minimum(t / (t + kap * y_a) * (1.0 + 16.0 * _U), 1.0))
        self.lam_lo = t / (t + kap * y_b) * (1.0 - 16.0 * _U)
        # the split point y_m (one per chunk: the masses of J <= y_m over its totals' sizes come from one
        # run of :func:`_tails_by_runs`) and lam_s between lam(y_m + 1) and lam(y_m) (rounded inwards)
        self.y_m = np.floor(0.5 * (ya + yb))[chunk]
        self.lam_s = t / (t + kap * self.y_m) * (1.0 - 16.0 * _U)
        sep = t / (t + kap * (self.y_m + 1.0)) * (1.0 + 16.0 * _U) < self.lam_s
        #: two chords (split at y_m) possible, and whether the next evaluation uses them (set by the caller)
        self.can_split = bool(np.all(sep & (self.lam_s > self.lam_lo) & (self.lam_s < self.lam_hi)))
        self.split = False
        self._W = (W1, W0, rel_b[:-1] + u4, rel_b[1:] + u4, m0)
        self._piece: list[tuple[np.ndarray, ...]] | None = None
        with np.errstate(divide="ignore", invalid="ignore"):
            lam_bar = np.where(M > 0.0, W1 / M, 0.5)
        nt = t.size
        # the kernel requests with one chord and with two (one array object each: the table's grouping is kept)
        self._req = {False: (np.concatenate((t - 1.0,) * 3), np.concatenate((self.lam_lo, self.lam_hi, lam_bar))),
                     True: (np.concatenate((t - 1.0,) * 4),
                            np.concatenate((self.lam_lo, self.lam_hi, lam_bar, self.lam_s)))}
        self._lam_bar = lam_bar
        self.nt = nt
        self.tables = _TableCache(LINES_TABLE_WIDTH)
        self._memo: dict[tuple[float, bool], DeltaBounds] = {}
        self._low: tuple[float, tuple[np.ndarray, ...]] | None = None
        self._slope: tuple[float, float] = (math.nan, math.nan)

    @property
    def piece(self) -> list[tuple[np.ndarray, ...]]:
        """``(M_hi, Mc, eMc, M, eM)`` of ``J <= y_m`` and of ``J > y_m`` for every total (built on first
        use): ``Pr[t, J <= y] = W1 F_{m+1}(y) + W0 F_m(y-1)``, its counted part ``W1 F_{m+1}(y)``
        (``m = N - t``; class docstring), the cdfs from one run of :func:`_tails_by_runs` per chunk
        (:func:`_branch_cdfs`, their error bounds), the complements likewise."""
        if self._piece is None:
            W1, W0, rW1, rW0, m0 = self._W
            pm: list[np.ndarray] = []
            x, ex, below = _tails_by_runs(m0, self.y_m, self.rho, pm, GRID_RUN_GAP)
            self._bm = bm = _branch_cdfs(x, ex, pm[0], pm[1] * pm[0] + 1e-300, below, self.rho)
            u4 = 4.0 * _U
            self._piece = []
            for f in ("F", "G"):
                Mc_p = W1 * bm[f + "c"]
                eMc_p = W1 * (bm["e" + f + "c"] + rW1 * bm[f + "c"]) + u4 * Mc_p
                M_p = Mc_p + W0 * bm[f + "s"]
                eM_p = eMc_p + W0 * (bm["e" + f + "s"] + rW0 * bm[f + "s"]) + u4 * M_p
                self._piece.append((M_p + eM_p, Mc_p, eMc_p, M_p, eM_p))
        return self._piece

    def bounds(self, eps: float, rtol: float) -> DeltaBounds:
        """Certified bracket at ``eps`` (``0 <= eps < eps0``) with one chord per total, or two where
        :attr:`split` is set; ``converged`` when its relative width is at most ``rtol``."""
        two = self.split and self.can_split
        hit = self._memo.get((eps, two))
        if hit is None:
            hit = self._evaluate(eps, two)
            if len(self._memo) >= 256:
                self._memo.clear()
            self._memo[(eps, two)] = hit
        conv = hit.upper - hit.lower <= rtol * hit.lower or hit.upper <= 1e-300
        return DeltaBounds(eps, hit.lower, hit.upper, hit.blocks, conv)

    def log_slope(self, eps: float) -> float:
        """Estimate of ``d log δ / d ε`` at the last evaluated ``eps`` (steering only)."""
        e, s = self._slope
        return s if e == eps and s < 0.0 else math.nan

    def chord_excess(self, eps: float, two: bool = False) -> float:
        """An *estimate* of the bracket's relative width at ``eps`` before computing it (a cost
        decision only): at the most likely total, the excess of each chord over the kernel, relative to
        the kernel there: one chord at the mean ``λ`` (``ℓ - h`` is concave on the chord's range, so by
        Jensen this bounds that total's mean excess, for exact values), two chords (split at ``y_m``) at
        the middle of each one's range."""
        i = int(np.argmax(self.M))
        if two and not self.can_split:
            return math.inf
        lo, s_, hi, bar = self.lam_lo[i], self.lam_s[i], self.lam_hi[i], self._lam_bar[i]
        # (one chord: at the mean lambda, as the mean excess; two: at each chord's middle)
        ends = [(lo, s_, 0.5 * (lo + s_)), (s_, hi, 0.5 * (s_ + hi))] if two else [(lo, hi, bar)]
        worst = 0.0
        for a, b, at in ends:
            lam = np.array([a, b, at])
            v = _kernel_lines(np.full(3, self.t[i] - 1.0), lam, self.d, eps, self.rel)[0]
            if not (v[2] > 0.0 and b > a):
                return math.inf
            worst = max(worst, float((v[0] + (v[1] - v[0]) * (at - a) / (b - a) - v[2]) / v[2]))
        return worst

    def lower_at(self, eps: float) -> float:
        """Certified lower bound at ``eps`` from the lines of the last evaluation, rescaled
        (module docstring §3, *lower_at*; the masses do not depend on ``ε``)."""
        if self._low is None:
            return 0.0
        eps_l, (A_, Ae, B_, Be) = self._low
        r = _line_ratios(eps_l, eps)
        if r is None:
            return 0.0
        A2, Ae2 = _scaled_line(A_, Ae, r[0])
        B2, Be2 = _scaled_line(B_, Be, r[1])
        low = np.maximum(_line_sum(A2, Ae2, B2, Be2, self.M_hi, self.M_lo, self.Mc_lo), 0.0)
        return max(float(np.sum(low)) * (1.0 - 4.0 * _U * (self.nt + 2)), 0.0)

    @staticmethod
    def _slope_of(h_a: np.ndarray, h_b: np.ndarray, lam_a: np.ndarray, lam_b: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
        """The chord's slope through ``(lam_a, h_a)``, ``(lam_b, h_b)`` (0 where ``lam_b <= lam_a``) and
        an upper bound on the exact quotient's magnitude."""
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            s = (h_b - h_a) / (lam_b - lam_a)
        s = np.where(np.isfinite(s) & (lam_b > lam_a), s, 0.0)
        return s, np.abs(s) * (1.0 + 4.0 * _U)

    @staticmethod
    def _chord_sum(h_0: np.ndarray, s: np.ndarray, abs_s: np.ndarray, lam_0: np.ndarray, M_hi: np.ndarray,
                   Mc: np.ndarray, eMc: np.ndarray, M: np.ndarray, eM: np.ndarray) -> np.ndarray:
        """Upper bound on ``Σ_j Pr[t, j] (h_0 + s* (λ(t, j) - lam_0)) = h_0 M* + s* (Mc* - lam_0 M*)`` over a
        set of ``j`` with mass ``M*`` (``|M* - M| <= eM``, ``M* <= M_hi``) and counted mass ``Mc*``
        (``|Mc* - Mc| <= eMc``), ``h_0 >= 0``, ``s*`` the exact slope (``|s*| <= abs_s``, ``s`` its
        rounding, of the same sign); ``D = Mc - lam_0 M`` of any sign; the products' and sums' roundings
        charged ``8u`` of the terms' magnitudes."""
        u4 = 4.0 * _U
        D = Mc - lam_0 * M
        eD = eMc + lam_0 * eM + u4 * (Mc + lam_0 * M)
        out = h_0 * M_hi + np.where(s >= 0.0, s * (D + eD), s * (D - eD))
        return out + 2.0 * u4 * (h_0 * M_hi + abs_s * (np.abs(D) + eD))

    def _evaluate(self, eps: float, two: bool) -> DeltaBounds:
        u4, d, nt = 4.0 * _U, self.d, self.nt
        val, verr, A, Aerr, B, Berr = _kernel_table(*self._req[two], d, eps, self.rel, self.tables)
        H = val + verr
        H_lo, H_hi, H_s = H[:nt], H[nt:2 * nt], H[3 * nt:]
        A_, Ae, B_, Be = A[2 * nt:3 * nt], Aerr[2 * nt:3 * nt], B[2 * nt:3 * nt], Berr[2 * nt:3 * nt]
        if two:  # chord A over [lam_s, lam_hi] on J <= y_m, chord B over [lam_lo, lam_s] on J > y_m
            sA, absA = self._slope_of(H_s, H_hi, self.lam_s, self.lam_hi)
            sB, absB = self._slope_of(H_lo, H_s, self.lam_lo, self.lam_s)
            (MaH, Mca, eMca, Ma, eMa), (MbH, Mcb, eMcb, Mb, eMb) = self.piece
            chord = (self._chord_sum(H_s, sA, absA, self.lam_s, MaH, Mca, eMca, Ma, eMa)
                     + self._chord_sum(H_lo, sB, absB, self.lam_lo, MbH, Mcb, eMcb, Mb, eMb))
            tails = ((2.0 * d + H_s + absA) * self.p_low + absB * self.p_high) * self.M_hi * (1.0 + u4)
        else:  # one chord over [lam_lo, lam_hi] on every j
            s1, abs1 = self._slope_of(H_lo, H_hi, self.lam_lo, self.lam_hi)
            chord = self._chord_sum(H_lo, s1, abs1, self.lam_lo, self.M_hi, self.Mc, self.eMc, self.M, self.eM)
            tails = ((2.0 * d + H_lo + abs1) * self.p_low + abs1 * self.p_high) * self.M_hi * (1.0 + u4)
        flat = ~(self.lam_hi > self.lam_lo)  # (no chord: h <= 2d)
        up = np.where(flat, 2.0 * d * self.M_hi * (1.0 + u4), chord + tails)
        # (the summation's rounding relative to the sum of |terms|: a chord's term is not signed a priori)
        upper = float(np.sum(up)) + u4 * (nt + 2) * float(np.sum(np.abs(up)))
        low = np.maximum(_line_sum(A_, Ae, B_, Be, self.M_hi, self.M_lo, self.Mc_lo), 0.0)
        lower = max(float(np.sum(low)) * (1.0 - u4 * (nt + 2)), 0.0)
        if upper < lower:
            raise CertificationError(f"inconsistent blanket line-window bracket [{lower!r}, {upper!r}] at eps = {eps!r}")
        self._low = (eps, (A_, Ae, B_, Be))
        # steering: d/d eps of the lines (cut held), as the window's
        g, gm1 = math.exp(eps), math.expm1(eps)
        slope = math.nan
        if gm1 > 0.0 and lower > 0.0:
            bc = B_ / (d * (1.0 + g))
            S = -A_ / gm1 - 0.5 * bc
            dl = np.where(low > 0.0, -g * (0.5 * bc + S) * self.M + d * g * bc * self.Mc, 0.0)
            slope = float(np.sum(dl)) / float(np.sum(low))
        self._slope = (eps, slope)
        return DeltaBounds(eps, lower, max(upper, lower), int(nt), True)


#: Profiles of this many recent ``(n, k, eps0)`` are kept (:class:`KrrBlanket` shares them): a
#: repeated query (``delta`` after ``epsilon``, a table, another delta) starts from the blocks,
#: binomial functionals and refinement the last one left. Every bracket an engine returns is
#: certified whatever its refinement state, so sharing changes the cost only.
BACKEND_CACHE = 8
#: :attr:`_BlanketBackend.use_chains` from/up to this many users (a cost decision, measured: krr102; the upper
#: limit raised from 1e6 by the lead: cold eps(1e-6), CPU, old routes -> chains: n = 1.5e6 k = 3/10/100 27.7/22.6/9.6
#: -> 10.8/7.2/3.5 ms, 5e6 35.5/34.6/17.6 -> 17.4/10.7/2.5, 1e7 45/32/16 -> 22.5/14.1/3.1, 2e7 46/42/18 -> 46.5/18/3.6
#: (eps0 1/2/1); brackets overlap the old routes' on 165 cells n 1.5e6 .. 2e7, k 3..1000, eps0 0.5..3. Capped at 1e7:
#: at 2e7, k = 3 review rev104 measured the chains slower, 66 vs 46 ms). Since krr105 the cost rule is per eps,
#: :meth:`_BlanketBackend.chains_cheap` (:data:`CHAINS_MAX_CELLS`), on every route, up to 1e9 users: the certificate's
#: walks and sums were checked there (krr_chains §3: walk lengths ~1e5 steps charge ~1e-10 relative; integers below
#: 2^53; brackets overlap the old routes' at n = 5e7 .. 1e9), not beyond
CHAINS_MIN_N = 300
CHAINS_MAX_N = 10**9
#: :meth:`_BlanketBackend.chains_cheap`: the chains answer at an ``eps`` where :func:`.krr_chains.cells_estimate` is at
#: most this many cells (window / split routes) or :data:`CHAINS_MAX_CELLS_LINES` (lines / engine routes); a cost
#: decision. Measured (krr105, cold eps(1e-6), CPU min of 3 interleaved, k 3/4/10/100/1000, eps0 0.5 .. 4, n 1e7 .. 1e9):
#: the chains take ~0.15 us an estimated cell up to ~2e5 cells, 0.2-0.35 us beyond (n = 1e9); the split route 20-55 ms
#: (k = 3, eps0 = 1: 2e7 248k cells 53 vs 54 ms), lines / engine 15-35 ms (1e8 k = 10 eps0 = 2 est. 227k: 40 vs 33 ms;
#: eps0 = 3 149k: 27 vs 27; k = 3 eps0 = 3 115k: 22 vs 25; 1e9 k = 3 eps0 = 4 148k: 32 vs 21; k = 100 76k .. 122k:
#: 16-36 vs 31-54 ms; 1e7 k = 3 eps0 = 1 eps(1e-9), est. 274k: 53 vs 70 ms)
CHAINS_MAX_CELLS = 300_000
CHAINS_MAX_CELLS_LINES = 120_000
#: ... and from this k (k = 3 measured 0.3-0.76x the window / split routes' time at n = 1e3 .. 1e6, krr102; the tests
#: of those routes' own state pin them with the fixture ``old_krr_routes``)
CHAINS_MIN_K = 3
#: ... and for requests of at least this relative width (their brackets close to ~1e-9 relative; a tighter request,
#: e.g. KrrBlanket.bounds' default 1e-10, cost one chains evaluation that could not converge at every new eps, then
#: the routes below: the test suite took ~3 minutes longer; cost only)
CHAINS_MIN_RTOL = 1e-8


class _BlanketBackend:
    """The shared state of one ``(n, k, eps0)``, ``k >= 3``: the window of single totals
    (:class:`_TotalsWindow`) and the block engine (:class:`_Engine`), each built on first use (a
    query the window answers never builds the engine)."""

    def __init__(self, n: int, k: float, eps0: float) -> None:
        self.n, self.k, self.eps0 = n, k, eps0
        self._engine: _Engine | None = None
        self._window: _TotalsWindow | None = None
        self._core: _TotalsWindow | None = None
        self._tails: _Engine | None = None
        self._lines: _LineWindow | None = None
        self._lines_tails: _Engine | None = None
        self._chains: KrrChains | None = None
        #: the chains do not fit these parameters (:attr:`use_chains`; cost only)
        self.chains_off = False
        #: the chains declined, gave a bracket too wide (e.g. a tiny delta: below ~1e-13 at rtol 1e-6, where the widest
        #: bands' neglected parts exceed rtol delta; ~5e-10 before krr107's relative fl(e^eps) charge) or were estimated dearer than
        #: the route (:meth:`chains_cheap`, which grows with eps) at this eps; from there
        #: on the other routes answer (their delta is smaller still: a cost decision only). Per eps, not for good:
        #: one such query (a probe near eps0, delta = 1e-12 then) had switched the chains off for every later query of
        #: the shared backend (reviews rev103a, rev103b: the next eps(1e-6) at n = 1e6, k = 10 took 26 ms, not 10)
        self.chains_fail_from = math.inf
        self._chains_expected: bool | None = None
        self._route: str | None = None
        self._fallback: str = "engine"
        #: the central window's bracket was too wide at this eps (e.g. a tiny delta); from there
        #: on the block engine alone answers (its delta is smaller still: a cost decision only)
        self.core_fails_from = math.inf
        #: ... likewise for the line window of the route ``lines`` (then its :attr:`fallback` answers)
        self.lines_fail_from = math.inf
        #: the parts whose sum gave the last bracket (:meth:`lower_at` re-sums them)
        self.answered: tuple[_TotalsWindow | _LineWindow | _Engine | KrrChains, ...] = ()
        #: the eps of the last bracket and its parts' upper ends (:meth:`upper_near`)
        self.answered_upper: tuple[float, tuple[float, ...]] = (math.nan, ())

    def lower_at(self, eps: float) -> float:
        """Certified lower bound on ``δ(ε)`` (``0 <= eps < eps0``) from the parts that gave the last
        bracket (module docstring §3, *lower_at*): the window's, or the split route's two (disjoint
        totals; one addition charged ``2u``), or the block engine's; 0 before any evaluation."""
        if not 0.0 <= eps < self.eps0:
            return 0.0
        parts = [p.lower_at(eps) for p in self.answered]
        if len(parts) > 1:
            return max(sum(parts) * (1.0 - 2.0 * _U), 0.0)
        return parts[0] if parts else 0.0

    def upper_near(self, eps: float) -> float:
        """Certified upper bound on ``δ(ε)`` near the ``ε_l`` of the last bracket when a window of
        single totals gave it (``inf`` otherwise): the window's :meth:`_TotalsWindow.upper_near`,
        plus on the split route (``eps > ε_l`` only) the tail engine's upper end at ``ε_l`` (its part
        of the sum is non-increasing in ``ε``: every kernel is), the addition charged ``2u``."""
        eps_l, ups = self.answered_upper
        parts = self.answered
        if not (parts and isinstance(parts[0], _TotalsWindow) and len(ups) == len(parts)):
            return math.inf
        if len(parts) == 1:
            return parts[0].upper_near(eps)
        if not eps > eps_l:
            return math.inf
        return (parts[0].upper_near(eps) + ups[1]) * (1.0 + 2.0 * _U)

    @property
    def core(self) -> _TotalsWindow:
        """The central window ``mean ± (HYBRID_SD sd + 40)`` whose outside is left to :attr:`tails`."""
        if self._core is None:
            c = upper_constants(self.n, self.k, self.eps0)
            self._core = _TotalsWindow(self.n, self.k, self.eps0, self._core_sd(c), tails_elsewhere=True)
        return self._core

    @property
    def lines(self) -> _LineWindow:
        """The line window of the route ``lines`` (:class:`_LineWindow`)."""
        if self._lines is None:
            self._lines = _LineWindow(self.n, self.k, self.eps0)
        return self._lines

    def tails_of(self, part: _TotalsWindow | _LineWindow) -> _Engine | None:
        """The block engine over the totals outside ``part`` (:attr:`core` or :attr:`lines`; None
        when there are none)."""
        lo, hi = part.t_range
        if lo <= 1 and hi >= self.n:
            return None
        if part is self._lines:
            if self._lines_tails is None:
                self._lines_tails = _Engine(blanket_model(self.n, self.k, self.eps0), hole=(lo, hi))
            return self._lines_tails
        if self._tails is None:
            self._tails = _Engine(blanket_model(self.n, self.k, self.eps0), hole=(lo, hi))
        return self._tails

    @staticmethod
    def _core_sd(c: KrrConstants, wide: bool = True) -> float:
        """Half-width of the central window in sd of ``T`` (``wide=False``: the rule the route decision
        uses, at most :data:`HYBRID_HALF_TOTALS` totals whatever the sd)."""
        sd = _t_sd(c)
        half = HYBRID_WIDE_TOTALS if wide and sd >= HYBRID_WIDE_SD else HYBRID_HALF_TOTALS
        return HYBRID_SD if sd <= 0.0 else min(HYBRID_SD, half / sd)

    @property
    def tails(self) -> _Engine | None:
        """The block engine over the totals outside :attr:`core` (None when there are none)."""
        return self.tails_of(self.core)

    def block_width(self, rtol: float) -> float:
        """An *estimate* of the width of the blocks the block engine needs at ``rtol`` near the mean
        total, ``rtol t / (1.5 - λ)`` at the means of ``T`` and ``J`` (see :data:`LINES_RT`; a cost
        decision only, no window built)."""
        c = upper_constants(self.n, self.k, self.eps0)
        t = (self.n - 1) * 2.0 * c.q + (1.0 - c.p0)
        lam = t / (t + c.kappa * ((self.n - 1 - t) * c.rho + c.p0))
        return rtol * t / (1.5 - lam)

    @property
    def fallback(self) -> str:
        """The route that answers where the route ``lines`` does not (``split`` or ``engine``)."""
        _ = self.route  # (decides both)
        return self._fallback

    @property
    def route(self) -> str:
        """``"window"`` (every total of ``mean ± (8 sd + 40)`` on its own) when that is at most
        :data:`WINDOW_ALONE_MAX` totals; else ``"split"`` (the central window plus the block engine
        on the outside totals) while the central window spans at least ``HYBRID_MIN_SD`` sd;
        else ``"engine"`` (the block engine alone). From :data:`LINES_MIN_N` users on, where the mean
        clone count is at most :data:`LINES_MAX_T`, ``"lines"`` (:class:`_LineWindow` plus the block
        engine on the other totals), with the route the rule above names as :attr:`fallback` for the
        evaluations the line window is not expected to answer. Cost decisions only."""
        if self._route is None:
            c = upper_constants(self.n, self.k, self.eps0)
            lo, hi = _window_range(c, WINDOW_SD)
            if self.n >= 3 and hi - lo + 1 <= min(WINDOW_ALONE_MAX, WINDOW_MAX) and _lambdas_separable(c, hi):
                self._route = "window"
            else:
                lo, hi = _window_range(c, self._core_sd(c, wide=False))
                split = (self.n >= 3 and hi - lo + 1 <= WINDOW_MAX and (hi - lo - 80) >= 2.0 * HYBRID_MIN_SD * _t_sd(c)
                         and _lambdas_separable(c, hi))
                self._fallback = "split" if split else "engine"
                lines = self.n >= LINES_MIN_N and (self.n - 1) * 2.0 * c.q <= LINES_MAX_T
                self._route = "lines" if lines else self._fallback
        return self._route

    @property
    def use_chains(self) -> bool:
        """Whether the kink chains (:mod:`.krr_chains`) may answer first (a cost decision: up to :data:`CHAINS_MAX_N`
        users and ``e^ε0 + 2 <=`` :data:`.krr_chains.MAX_J`, on every route; they answer at an ``eps`` where
        :meth:`chains_cheap`; the other routes answer where they decline or their bracket is too wide; not tried
        where :func:`.krr_chains.fits` expects a wide bracket)."""
        if self.chains_off or not (CHAINS_MIN_N <= self.n <= CHAINS_MAX_N and self.k >= CHAINS_MIN_K):
            return False
        if not (math.exp(self.eps0) + 2.0 <= MAX_J and chains_fit(self.n, self.k, self.eps0)):
            self.chains_off = True
        return not self.chains_off

    @property
    def chains_expected(self) -> bool:
        """Whether the chains are expected to answer a typical query (steering only: :attr:`KrrBlanket.mixture_surrogate`
        is offered where they are): :attr:`use_chains`, and on the lines / engine routes :meth:`chains_cheap` at the
        first point of a geometric grid (61 points, ``1e-5 ε0 .. ε0``) where :func:`.krr_chains.saddle_estimate` is
        at most 1e-6 (a typical query's ``ε``)."""
        if self._chains_expected is None:
            ok = self.use_chains
            if ok and self.route not in ("window", "split"):
                grid = self.eps0 * np.geomspace(1e-5, 1.0, 61)
                ok = self.chains_cheap(float(grid[0]))  # (else not cheap anywhere: the estimate grows with eps)
                if ok:  # (~0.3 ms)
                    below = saddle_estimate(self.n, self.k, self.eps0, grid) <= 1e-6
                    ok = self.chains_cheap(float(grid[int(np.argmax(below))]) if below.any() else self.eps0)
            self._chains_expected = ok
        return self._chains_expected

    def chains_cheap(self, eps: float) -> bool:
        """Whether the chains are expected cheaper than :attr:`route` at ``eps`` (:data:`CHAINS_MAX_CELLS`; a cost
        decision: the estimate grows with ``eps``, so this holds below one ``eps``)."""
        cap = CHAINS_MAX_CELLS if self.route in ("window", "split") else CHAINS_MAX_CELLS_LINES
        return cells_estimate(self.n, self.k, self.eps0, eps) <= cap

    @property
    def chains(self) -> KrrChains:
        if self._chains is None:
            self._chains = KrrChains(self.n, self.k, self.eps0)
        return self._chains

    @property
    def engine(self) -> _Engine:
        if self._engine is None:
            self._engine = _Engine(blanket_model(self.n, self.k, self.eps0))
        return self._engine

    @property
    def window(self) -> _TotalsWindow:
        if self._window is None:
            self._window = _TotalsWindow(self.n, self.k, self.eps0)
        return self._window


def _lambdas_separable(c: KrrConstants, t_hi: float) -> bool:
    """Whether the window's neighbouring mixing weights ``λ(t, y) = t / (t + κ y)`` and ``λ(t, y + 1)`` stay
    apart after :meth:`_TotalsWindow._evaluate` rounds each inwards by 16u at every total up to ``t_hi``:
    ``λ(y) / λ(y + 1) = 1 + κ / (t + κ y)`` must exceed ``(1 + 16u) / (1 - 16u)``; asked with a factor 4 to spare
    (``κ >= 128 u (t_hi + 1)``, ``κ y <= 1``: ``κ = 2/(e^ε0 + 1)`` is at most ``e^-ε0`` where this bites).
    Below it (``ε0`` above ~29 at a few users) the window raised "adjacent lambdas not separable" (read-only
    review rev83: every blanket query from eps0 = 32.237 on, n >= 3); the block engine answers there. Routing
    only."""
    return c.kappa >= 1e-6 or (c.kappa >= 128.0 * _U * (t_hi + 1.0) and c.kappa * (c.n - 1.0) <= 1.0)


_BACKENDS: dict[tuple[int, float, float], HockeyStick | _BlanketBackend] = {}


def blanket_model(n: int, k: float, eps0: float) -> _Model:
    """The blanket mixture of module docstring §2 (``k >= 3``) at the upper-bound constants (§7)."""
    c = upper_constants(n, k, eps0)
    p0 = c.p0
    return _Model(n=n, q2=2.0 * c.q, rho=c.rho, branches=((1.0 - p0, 1, 0), (p0, 0, 1)), orient=1,
                  kappa=c.kappa, w0=0.0, wt=0.0, wz=1.0, d=c.d)


#: :class:`KrrBlanket` offers ``lower_at`` on every route but the stronger-clone pair (``k = 2``).
#: Measured with the search looking 0.49 rtol above its trusted start at the usual resolution
#: (``search.LOWER_AT_SHIFT``; 108 eps(delta) queries, n 10 .. 1e9, CPU min of 3 interleaved runs,
#: against no lower_at): 341 -> 265 evaluations, 0.81x the time (engine 0.85x, split 0.73x, window
#: 0.91x); every bracket overlaps, upper ends within -3.6e-7 .. +3.0e-7 relative.

#: From this n on the surrogate's root is trusted to 1e-4 (relative) also when the window answers
#: (measured: at most 7.9e-6 at n = 1e6, 1.6e-5 at 3e6, 1.9e-4 at 1e5, over k in {3, 10, 100},
#: eps0 in {0.5, 1, 2, 4}, delta in {1e-6, 1e-10}); steering only.
SURROGATE_TRUST_N = 1_000_000
#: :attr:`KrrBlanket.surrogate_rtol` where the kink chains answer (:func:`.krr_chains.saddle_estimate`, the start
#: estimate there: its root measured within 1.3e-7 .. 5e-6 of the certified ``ε(δ)`` at k = 3 / 10, n >= 300, up to
#: 3e-3 at k = 100, n = 300); the search then skips its coarse first look (the chains' evaluation costs about the same
#: at any width) and looks just above the root first, where ``lower_at`` may close the bracket alone. Steering only.
CHAINS_SURROGATE_RTOL = 1e-6
#: ... claimed only when this is set (steering only). Off: tests/test_blanket_krr.py::
#: test_surrogate_rtol_claim_holds_where_the_engine_answers asserts that the profile at n = 1e5 claims nothing (written
#: for the window route; the chains answer there now). Measured (krr103, CPU min of 5 interleaved processes, cold,
#: delta 1e-6, 48 cells k 3 / 10 / 100, eps0 0.5 .. 4, n 1e3 .. 1e6): on against off mostly equal (off, the first look
#: at the estimate's root is decided and ``lower_at`` closes: one chains evaluation), 0.64x at k = 3, eps0 = 1,
#: n = 1e3 (3 -> 1 search evaluations) and 0.61x at k = 10, eps0 = 0.5, n = 1e5.
CHAINS_TRUST_START = False


class KrrBlanket:
    """Certified blanket divergence of shuffled k-RR (Balle, Bell, Gascón, Nissim, CRYPTO 2019,
    arXiv 1903.02837, evaluated exactly; module docstring §1-§3): an upper bound on ``δ(ε)`` of
    the shuffled k-RR output for *every* pair of neighbouring datasets. A
    :class:`~.profile.PrivacyProfile` (``bounds``, ``max_log_ratio``, ``surrogate``, ``log_slope``,
    ``lower_at``); ``ε(δ)``
    comes from :func:`.search.epsilon_for_delta`.

    Proved (module docstring §4) and tested: it is at most the ``krr`` bound (clone count
    revealed) and at most the stronger-clone bound. ``k = 2`` (binary RR) delegates to the
    stronger-clone pair, which equals the blanket there.

    >>> KrrBlanket(777, 3, 0.3).bounds(0.0326, 1e-6).upper <= 1e-6  # issue 10: eps = 0.03254
    True
    """

    def __init__(self, n: int, k: float, eps0: float, shared: bool = True, real_k: bool = False) -> None:
        """``shared=False``: a private engine (not taken from or added to the cache of recent
        ``(n, k, eps0)``; for independent re-checks). ``real_k``: ``k`` may be any real number in
        ``(2, 1e9]`` (the trinomial form of module docstring §6, which the engine bounds for a real
        ``k`` as it does for an integer one); otherwise ``k`` must be an integer >= 2 (k-RR)."""
        self.k: float
        self.n, self.k, self.eps0 = _validate_real(n, k, eps0) if real_k else _validate(n, k, eps0)
        self._upper: KrrUpperConstants | None = None if self.k == 2 else upper_constants(self.n, self.k, self.eps0)
        self.const: KrrConstants = KrrConstants(self.n, self.k, self.eps0) if self._upper is None else self._upper
        self._pair: HockeyStick | None = None
        self._backend: _BlanketBackend | None = None
        key = (self.n, self.k, self.eps0)
        cached = _BACKENDS.pop(key, None) if shared else None
        if cached is None:
            if self.k == 2:
                # the stronger-clone pair with its clone rate rounded down (module docstring §7)
                from ..analyses import pair_for

                cached = HockeyStick(pair_for("stronger-clones", self.eps0, self.n).pair)
            else:
                cached = _BlanketBackend(self.n, self.k, self.eps0)
        if shared:
            _BACKENDS[key] = cached  # most recently used last
            while len(_BACKENDS) > BACKEND_CACHE:
                del _BACKENDS[next(iter(_BACKENDS))]
        if isinstance(cached, _BlanketBackend):
            self._backend = cached
        else:
            self._pair = cached

    @property
    def _engine(self) -> _Engine | None:
        """The block engine (``k >= 3``; built on first use), None for ``k = 2``."""
        return self._backend.engine if self._backend is not None else None

    @property
    def max_log_ratio(self) -> float:
        """``δ(ε) = 0`` for ``ε >= ε0``: every report's likelihood ratio is within ``e^{±ε0}``."""
        return self.eps0

    def _window_name(self) -> str | None:
        """The backend attribute that :meth:`_window` returns (``"_lines"``, ``"window"`` or ``"core"``), or None,
        decided without building the window (steering only: the chains answer most queries that would build it
        only for :attr:`look_rtol` / :attr:`surrogate_rtol`, ~2 ms at n = 1e4)."""
        be = self._backend
        if be is None or be.route == "engine":
            return None
        if be.route == "lines":  # the line window if it answered last, else the fallback's window
            if be._lines is not None and be.answered[:1] == (be._lines,):
                return "_lines"
            return "core" if be.fallback == "split" else None
        return "window" if be.route == "window" else "core"

    def _has_window(self) -> bool:
        """Whether :meth:`_window` is not None, without building the window."""
        return self._window_name() is not None

    def _window(self) -> _TotalsWindow | _LineWindow | None:
        """The central window of single totals of this ``(n, k, eps0)`` (built on first use,
        shared), or None when it does not apply (too many totals, k = 2)."""
        name = self._window_name()
        return None if name is None else getattr(self._backend, name)

    @property
    def look_rtol(self) -> float:
        """The relative width at which a first look at a new ``ε`` is cheap (the search's coarse
        look): 1e-4 when the window of single totals answers (its brackets are closed up to
        rounding whatever is asked), else 1e-2."""
        return 1e-4 if self._has_window() else 1e-2

    @property
    def surrogate_rtol(self) -> float | None:
        """An *estimate* of how far (relative) the :meth:`surrogate`'s root lies from ``ε(δ)``
        where that is small, which lets the search skip its coarse first look: ``1e-4`` when the
        block engine answers (``k >= 3`` beyond the window of single totals; measured at most
        1.8e-5, mostly below 1e-6, at n = 1e7 .. 1e9, k in {3, 10, 100}, eps0 in {0.5, 1, 2, 4},
        delta in {1e-6, 1e-10}); the stronger-clone pair's own estimate for ``k = 2``; :data:`CHAINS_SURROGATE_RTOL`
        where the kink chains answer and :data:`CHAINS_TRUST_START` is set; else ``None`` (the window's first look is
        exact anyway). Decided without building the window (:meth:`_has_window`). Only steers the search, never a
        bound."""
        if self._pair is not None:
            trust = getattr(self._pair, "surrogate_rtol", None)
            return trust if isinstance(trust, float) else None
        be = self._backend
        if CHAINS_TRUST_START and be is not None and be.use_chains:
            return CHAINS_SURROGATE_RTOL
        return 1e-4 if not self._has_window() or self.n >= SURROGATE_TRUST_N else None

    def log_slope(self, eps: float) -> float:
        """Estimate of ``d log δ / d ε`` at the ``ε`` of the last :meth:`bounds` call that
        refined (``nan`` otherwise); steers the search only, never reported."""
        if self._pair is not None:
            return self._pair.log_slope(eps)
        assert self._backend is not None
        ch = self._backend._chains
        if ch is not None and self._backend.answered[:1] == (ch,):
            return ch.log_slope(eps)
        win = self._window()
        if win is not None and win._slope[0] == eps:
            return win.log_slope(eps)  # the central totals' (they carry nearly all of delta)
        eng = self._backend._engine
        return eng.log_slope(eps) if eng is not None else math.nan

    @property
    def mixture_surrogate(self) -> Callable[[np.ndarray], np.ndarray] | None:
        """The search's preferred start estimate (:func:`.search._surrogate_root` asks for it before
        :meth:`surrogate`; steering only, never a bound): where the kink chains are expected to answer
        (:attr:`_BlanketBackend.chains_expected`), :func:`.krr_chains.saddle_estimate` (their trinomial form by the saddle
        point: ~0.15 ms a call against ~1.8 ms for :meth:`surrogate`, and closer, its root within 1.3e-7 .. 5e-6 of
        ``ε(δ)`` at k = 3 / 10, n >= 300); else None (:meth:`surrogate`)."""
        be = self._backend
        if be is None or not be.chains_expected:
            return None
        n, k, eps0 = self.n, self.k, self.eps0
        return lambda eps: saddle_estimate(n, k, eps0, eps)

    def surrogate(self, eps: np.ndarray) -> np.ndarray:
        """Cheap estimate (never reported; it only places the search's first evaluation): the
        mixture of module docstring §2 by three-point Gauss-Hermite quadrature in the clone count
        ``C`` and in ``J' | C`` (nodes at the mean and ``±√3`` standard deviations, weights
        ``2/3, 1/6, 1/6``), for both first-user branches. Its root is within ~1e-4 (relative) of
        the certified ``ε`` at ``n = 1e3`` and 1e-6 .. 1e-4 at ``n = 1e4 .. 1e5`` (measured; e.g.
        -1.1e-4 at k = 100, eps0 = 1, n = 1e5; the kernel at the means alone was ~2e-3 and ~7e-5
        off), so the search's Newton steps start close enough to stop early. Where the kink chains answer the
        search starts from :attr:`mixture_surrogate` instead."""
        if self._pair is not None:
            return self._pair.surrogate(eps)
        c = self.const
        N = self.n - 1
        q2, rho = 2.0 * c.q, c.rho
        e = np.asarray(eps, dtype=float)
        z = (-math.sqrt(3.0), 0.0, math.sqrt(3.0))
        w = (1.0 / 6.0, 2.0 / 3.0, 1.0 / 6.0)
        ts, lams, ws = [], [], []
        for wb, off, sh in ((1.0 - c.p0, 1, 0), (c.p0, 0, 1)):
            for zi, wi in zip(z, w):
                cc = min(max(round(N * q2 + zi * math.sqrt(N * q2 * (1.0 - q2))), 0), N)
                t = cc + off
                if t < 1 or wb <= 0.0:
                    continue
                m = N - cc
                for zj, wj in zip(z, w):
                    j = max(m * rho + zj * math.sqrt(m * rho * (1.0 - rho)), 0.0) + sh
                    ts.append(float(t))
                    lams.append(t / (t + c.kappa * j))
                    ws.append(wb * wi * wj)
        tt = np.repeat(np.array(ts), e.size)
        ee = np.tile(e.ravel(), len(ts))
        val = _kernel_lines(tt - 1.0, np.repeat(np.array(lams), e.size), c.d, ee, 1e-12, _steering_sf, _steering_pmf,
                            True)[0]  # (value_only, positional: a stand-in taking only positionals may drop it)
        return (np.array(ws) @ val.reshape(len(ts), e.size)).reshape(e.shape)

    def bounds(self, eps: float, rtol: float = 1e-10) -> DeltaBounds:
        """Certified ``lower <= δ_blanket(ε) <= upper``, ``upper - lower <= rtol * lower`` when
        floating point allows (``converged``)."""
        if not (math.isfinite(eps) and eps >= 0.0):
            raise InvalidParameter(f"eps must be finite and >= 0, got {eps!r}")
        if eps >= self.eps0:
            return DeltaBounds(eps, 0.0, 0.0, 0, True)
        if self._pair is not None:
            return self._pair.bounds(eps, rtol)
        from .blanket_matrix import reused_memory  # (speed only: freed memory kept during the evaluation)

        c = self._upper
        assert c is not None
        # (the engines are asked for rtol itself: they aim at 0.8 of it, which leaves room for the charge,
        # ~1e-10 relative at most in the cases measured; asked for less, the block engine can meet its
        # rounding floor and return a wider bracket: n = 1e7, k = 100, eps0 = 0.1, rtol 9e-10)
        with reused_memory():
            got = self._bounds(eps, rtol)
        # module docstring §7: the engines' upper end is for the float masses; moved to the exact ones
        upper = c.charge_up(got.upper)
        return DeltaBounds(got.eps, got.lower, upper, got.blocks,
                           upper - got.lower <= rtol * got.lower or upper <= 1e-300)

    def _bounds(self, eps: float, rtol: float) -> DeltaBounds:
        """:meth:`bounds` for ``k >= 3`` and ``ε < ε0`` (the route decisions; cost only). Runs inside
        :func:`.blanket_matrix.reused_memory` (no numerical effect): glibc keeps the memory freed
        within the evaluation for its next arrays instead of mapping fresh pages for each large
        temporary. Measured (CPU, cold ``ε(δ)``, n = 1e7, in a process where another engine had
        fixed glibc's mmap threshold at its default, as the benchmark's warm-up does): k = 3,
        eps0 = 1 77 -> 32 ms (27.8k -> 0 page faults from the second query on); k = 10, eps0 = 2
        60 -> 23 ms."""
        be = self._backend
        assert be is not None
        near = self._after_last(eps, rtol)
        if near is not None:
            return near
        if be.use_chains and eps < be.chains_fail_from and rtol >= CHAINS_MIN_RTOL:  # (cost decision: the routes below)
            got_c = be.chains.bounds(eps, rtol) if be.chains_cheap(eps) else None
            if got_c is not None and got_c.converged:
                be.answered, be.answered_upper = (be.chains,), (eps, (got_c.upper,))
                return got_c
            if eps > 0.0:  # (at eps = 0 they always decline: g - 1 = 0)
                be.chains_fail_from = eps
        if be.route == "window":
            got = be.window.bounds(eps, rtol)
            if got.converged:  # else (e.g. the totals outside the window matter): the block engine
                be.answered, be.answered_upper = (be.window,), (eps, (got.upper,))
                return got
        route = be.route
        if route == "lines":  # (cost decisions only) one chord per total, else two, else the fallback
            lines = be.lines
            if eps >= be.lines_fail_from or be.block_width(rtol) > LINES_RT:
                route = be.fallback
            elif lines.chord_excess(eps) <= LINES_AIM * rtol:
                lines.split = False
            elif lines.chord_excess(eps, two=True) <= LINES_AIM * rtol:
                lines.split = True
            else:
                route = be.fallback
        if route in ("split", "lines") and eps < (be.core_fails_from if route == "split" else be.lines_fail_from):
            core: _TotalsWindow | _LineWindow = be.core if route == "split" else be.lines
            got = core.bounds(eps, rtol)
            if not got.converged:  # e.g. a tiny delta: the totals far out matter (cost decision only)
                if route == "split":
                    be.core_fails_from = min(be.core_fails_from, eps)
                else:
                    be.lines_fail_from = min(be.lines_fail_from, eps)
            tails = be.tails_of(core)
            parts: tuple[_TotalsWindow | _LineWindow | _Engine, ...] = (core,)
            ups: tuple[float, ...] = (got.upper,)
            if tails is not None and got.converged:  # (else the block engine alone, below)
                out = tails.bounds(eps, rtol, base=(got.lower, got.upper))
                ups = (got.upper, out.upper)
                lower = max((got.lower + out.lower) * (1.0 - 2.0 * _U), 0.0)
                upper = (got.upper + out.upper) * (1.0 + 2.0 * _U)
                got = DeltaBounds(eps, lower, upper, got.blocks + out.blocks,
                                  upper - lower <= rtol * lower or upper <= 1e-300)
                parts = (core, tails)
            if got.converged:  # else (e.g. the window's own bracket is too wide): the block engine
                be.answered = parts
                be.answered_upper = (eps, ups)
                return got
        be.answered = (be.engine,)
        return be.engine.bounds(eps, rtol)

    def _after_last(self, eps: float, rtol: float) -> DeltaBounds | None:
        """The bracket ``[lower_at(eps), upper_near(eps)]`` from the state of the last bracket
        (module docstring §3, *lower_at*; :meth:`_TotalsWindow.upper_near`) when a window of single
        totals gave it, ``eps`` lies near its ``ε`` (split route: just above it) and the bracket meets
        ``rtol``; else None (a cost decision: both ends are certified either way). A search's next
        step near its last evaluation is answered without computing."""
        be = self._backend
        assert be is not None
        parts = be.answered
        if self.n < NEAR_MIN_N or not (parts and isinstance(parts[0], _TotalsWindow)):
            return None
        e_l, slope = parts[0]._slope
        if not (math.isfinite(slope) and abs(eps - e_l) * abs(slope) <= NEAR_GAIN * rtol):
            return None  # (the chords' loss, ~8 % of the change of delta, would exceed rtol: cost only)
        upper = be.upper_near(eps)
        if not math.isfinite(upper):
            return None
        lower = be.lower_at(eps)
        if lower > upper:
            raise CertificationError(f"inconsistent blanket bracket [{lower!r}, {upper!r}] at eps = {eps!r} (please report)")
        if upper - lower <= rtol * lower:
            return DeltaBounds(eps, lower, upper, 0, True)
        return None

    @property
    def lower_at(self) -> Callable[[float], float] | None:
        """``lower_at(eps)``: a *certified* lower bound on ``δ(ε)`` at any ``eps`` from the state of
        the last :meth:`bounds` call that computed a bracket, at no evaluation's cost (module
        docstring §3, *lower_at*; used by :func:`.search.epsilon_for_delta` to certify the low end
        of a bracket without evaluating it). 0 before any evaluation, for ``eps`` farther than
        :data:`LOWER_AT_REACH` from the last one, and for ``eps >= eps0``. Offered (not None) on
        every route, never for ``k = 2`` (the stronger-clone pair has none)."""
        be = self._backend
        return None if be is None else be.lower_at


#: :class:`PairKrrBlanket` needs the stored masses within this relative error (its bound on
#: ``|k^ - k*|`` uses ``1.01 (2 ε_s + u)``, valid for ``ε_s`` below ~4e-3).
PAIR_MAX_REL = 1e-6


class PairKrrBlanket:
    """Certified blanket ``δ(ε)`` of a pair of three classes ``(P, e^ε0, 1)``, ``(P, 1, e^ε0)``,
    ``(O, 1, 1)`` (unary encoding and local hashing with ``k = 2``) by :class:`KrrBlanket`'s engines
    at the real ``k^ = 2 + O/P`` (module docstring §6: the pair's δ is the trinomial form at
    ``k* = 2 + O*/P*``; the engine's ends are moved by ``e^{± n η}`` for ``|k^ - k*|``, proved there).
    ``side_mass = P`` and ``third_mass = O`` are the stored floats, within ``rel_err`` (relative) of
    the exact masses; ``eps0`` is the randomizer's own, whose ``e^ε0`` is *exactly* the pair's ratio
    (the caller's duty: the named randomizers define it so). A :class:`~.profile.PrivacyProfile`
    with the search's steering hooks of :class:`KrrBlanket`."""

    def __init__(self, n: int, side_mass: float, third_mass: float, eps0: float, rel_err: float,
                 shared: bool = True) -> None:
        if not (side_mass > 0.0 and third_mass > 0.0 and math.isfinite(side_mass) and math.isfinite(third_mass)):
            raise InvalidParameter(f"pair masses must be positive and finite, got {side_mass!r}, {third_mass!r}")
        if not 0.0 <= rel_err <= PAIR_MAX_REL:
            raise InvalidParameter(f"rel_err must be in [0, {PAIR_MAX_REL:g}], got {rel_err!r}")
        w = third_mass / side_mass
        k = 2.0 + w
        # |k^ - k*| <= u k^ + 1.01 (2 eps_s + u) w (module docstring §6), and eta from it; the few
        # roundings of these lines covered by the factor (1 + 1e-6)
        dk = (_U * k + 1.01 * (2.0 * rel_err + _U) * w) * (1.0 + 1e-6)
        room = k - 2.0 - dk
        if not (room > 0.0 and math.isfinite(k)) or k > 1e9:
            raise InvalidParameter(f"no k-RR form for the pair masses {side_mass!r}, {third_mass!r}")
        eta = ((1.0 + dk / (k - dk)) * (1.0 + dk / room) - 1.0) * (1.0 + 1e-6) + 4.0 * _U
        self.blanket = KrrBlanket(n, k, eps0, shared=shared, real_k=True)
        self.n, self.k, self.eps0 = self.blanket.n, self.blanket.k, self.blanket.eps0
        self.eta = eta
        #: ``S_+/n <= r - e^ε <= r <= fmax`` (``exp`` within one ulp)
        self.fmax = math.exp(self.eps0) * (1.0 + 4.0 * _U)
        #: the factor at ends near 1e-30 (an estimate; sets the engine's rtol only)
        self.up = math.exp(self._log_charge(1e-30, 0)) * (1.0 + 4.0 * _U)

    def _log_charge(self, end: float, shift: int) -> float:
        """``log`` of the factor by which an end of the engine's bracket at ``k^`` moves to one at ``k*``
        (module docstring §6): the smaller of ``n log(1 + η)`` (every probability) and Hölder's bound
        (§7 (H) for the upper end, ``shift = 0``; (H') for the lower one) with ``N χ² <= n η²`` (all ``n``
        users, the first one too: each law is a probability law and each ratio within ``1 + η``) and
        ``f = S_+/n <= fmax``."""
        return _hoelder_log(math.log(self.fmax / end), self.n * self.eta**2 * (1.0 + 1e-9), self.eta, 1.0,
                            self.n, shift)

    @property
    def max_log_ratio(self) -> float:
        """``δ(ε) = 0`` for ``ε >= ε0`` (every ``c_j <= 0`` at ``e^ε >= r``)."""
        return self.eps0

    def bounds(self, eps: float, rtol: float = 1e-10) -> DeltaBounds:
        """The engine's bracket at ``k^`` (asked for ``rtol`` less the charge's width), its ends moved by
        ``e^{± n η}`` (module docstring §6)."""
        if not 0.0 < rtol < 1.0:
            raise InvalidParameter(f"rtol must be in (0, 1), got {rtol!r}")
        inner = self.blanket.bounds(eps, max(rtol - 3.0 * (self.up - 1.0), 0.5 * rtol))
        upper = self._moved(inner.upper, 0)
        lower = self._moved(inner.lower, 1)
        return DeltaBounds(inner.eps, lower, upper, inner.blocks,
                           upper - lower <= rtol * lower or upper <= 1e-300)

    def _moved(self, end: float, shift: int) -> float:
        """An upper end (``shift = 0``) or a lower end (``1``) at ``k^`` moved to one at ``k*`` (an infinite or
        nan upper end stays infinite, such a lower end becomes 0: review rev93s)."""
        if not math.isfinite(end):
            return math.inf if shift == 0 and not end < 0.0 else 0.0
        if not end > 0.0:
            return 0.0
        return _charged(end, self._log_charge(end, shift), not shift, 4.0 * _U)

    def lower_at(self, eps: float) -> float:
        """The engine's :attr:`KrrBlanket.lower_at` (certified for ``k^``), moved to ``k*``."""
        fn = self.blanket.lower_at
        return self._moved(fn(eps), 1) if fn is not None else 0.0

    @property
    def look_rtol(self) -> float:
        return self.blanket.look_rtol

    @property
    def surrogate_rtol(self) -> float | None:
        return self.blanket.surrogate_rtol

    def log_slope(self, eps: float) -> float:
        return self.blanket.log_slope(eps)

    def surrogate(self, eps: np.ndarray) -> np.ndarray:
        return self.blanket.surrogate(eps)


# ---------------------------------------------------------------------------------------
# Attained lower bounds: exact divergences of concrete neighbouring datasets.
# ---------------------------------------------------------------------------------------

#: The whole family "a other users hold x1, the rest one third value" is scanned exactly
#: (full histograms, dynamic programming over users) up to these n (k = 3, k >= 4).
FAMILY_SCAN_MAX_N = {3: 40, 4: 14}
#: "All other users hold x1" is evaluated by the core's exact per-total sums up to this n.
ALL_X1_MAX_N = 20_000
#: Binary RR: how many m (others holding the first user's value) are tried past the best.
BINARY_PATIENCE = 2
#: ... and at most this many from each end.
BINARY_MAX_M = 64


def dataset_model(n: int, k: int, eps0: float) -> _Model:
    """The dataset "first user x1 vs x1', all other users hold a third value x3" on the full
    histogram, ``k >= 4`` (module docstring §2 applies with three first-user branches).

    The other users report ``x1`` or ``x1'`` with probability ``q`` each (fair clones,
    ``C ~ Bin(n-1, 2q)``), ``x3`` with ``p`` and one of the ``k-3`` remaining values with ``q``
    each; so given ``C = c`` the count ``Z'`` of ``x3`` reports is ``Bin(n-1-c, p/(1-2q))``. The
    first user is counted (``x1``/``x1'``, probability ``p+q``), reports ``x3`` (``q``: ``z`` gains
    one) or a remaining value (``(k-3) q``). The remaining values are exchangeable and have the
    same law for every user under both datasets, so ``(h_x1, h_x1', h_x3)`` is sufficient and
    ``(T, Z)`` has the same law under both datasets. The multinomial probabilities give
    ``Pr[silent, t, z] / Pr[counted, t, z] = κ (q z / p + n - t - z) / t``, i.e.
    ``λ(t, z) = t / (t + κ (n - t - (1 - e^-ε0) z))``: non-decreasing in ``t`` and in ``z``
    (so the engine works in ``v = -z``), convex in ``z``.

    *Rounding* (module docstring §7, *Lower bounds*): the rates are :func:`lower_rates`' (an exact k-RR at
    ``r'' <= e^ε0``: ``q2``, the branches and ``1 - 2q`` exact), ``κ`` rounded up and ``wz`` toward 0 (so
    the engine's ``λ`` is at most the exact one of ``r''``), ``d``, ``pb`` those of ``r''``; only ``ρ`` is
    rounded, charged by :func:`dataset_charge_down`.
    """
    rates = lower_rates(k, eps0)
    if rates is None:
        raise InvalidParameter(f"no exact k-RR rates below eps0 = {eps0!r} at k = {k!r}")
    q, p = rates
    Q, P = Fraction(q), Fraction(p)
    kappa = fp.up(2 * Q / (P + Q))
    wz = fp.up(-(P - Q) / P)  # -(1 - 1/r''), toward 0
    return _Model(n=n, q2=2.0 * q, rho=p / (1.0 - 2.0 * q),
                  branches=((p + q, 1, 0), (q, 0, 1), ((k - 3.0) * q, 0, 0)), orient=-1,
                  kappa=kappa, w0=float(n), wt=-1.0, wz=wz, d=FirstUserGap(0.5 * ((p - q) / (p + q)), q / (p + q)))


def dataset_charge_down(model: _Model, k: int) -> Callable[[float], float]:
    """The map from a lower end of the engine on :func:`dataset_model` (the float ``ρ``) to one at the
    exact masses of ``r''`` (module docstring §7, (H')): the others' classes (clone ``q2``, third value
    ``(1 - q2) ρ``, rest ``(1 - q2)(1 - ρ)``) against the exact ``(2q, p, (k - 3) q)``, in ``Fraction``;
    the first user's branches are exact."""
    q2, rho = Fraction(model.q2), Fraction(model.rho)
    q = q2 / 2
    ex_cls = (q2, 1 - (k - 1) * q, (k - 3) * q)
    fl_cls = (q2, (1 - q2) * rho, (1 - q2) * (1 - rho))
    if min(fl_cls) <= 0:
        return lambda lower: 0.0
    ys = [f / x - 1 for x, f in zip(ex_cls, fl_cls)]
    if max(abs(v) for v in ys) > _CHARGE_MAX_X:
        return lambda lower: 0.0
    a = fp.up((model.n - 1) * sum((x * v * v for x, v in zip(ex_cls, ys)), Fraction(0)))
    y = fp.up(max(abs(v) for v in ys))

    def down(lower: float) -> float:
        if not lower > 0.0:
            return 0.0
        return _charged(lower, _hoelder_log(-math.log(lower), a, y, 1.0, model.n - 1, shift=1), False, 8.0 * _U)

    return down


def _family_laws(n: int, k: int, eps0: float, a: int) -> tuple[np.ndarray, np.ndarray, float]:
    """Exact laws (up to rounding) of the sufficient statistic ``(h_x1, h_x1', h_x3)`` of the
    shuffled k-RR histogram for ``x1`` vs ``x1'`` when ``a`` other users hold ``x1`` and the
    other ``n-1-a`` hold ``x3`` (``k >= 3``), by adding users one at a time. Returns ``(P, Q,
    eta)``: every entry of ``P``, ``Q`` is within relative ``eta`` of the exact value (sums and
    products of non-negative numbers), plus ``1e-300`` absolute for underflow.
    """
    c = KrrConstants(n, k, eps0)
    p, q = c.p, c.q
    rest = (k - 3.0) * q
    size = n + 1
    third = k >= 4
    shape = (size, size, size) if third else (size, size)

    def add(law: np.ndarray, probs: tuple[float, float, float, float]) -> np.ndarray:
        """One more user reporting (x1, x1', x3, a remaining value) with ``probs``."""
        out = probs[3] * law if third else probs[2] * law
        out = out.copy()
        out[1:, ...] += probs[0] * law[:-1, ...]
        out[:, 1:, ...] += probs[1] * law[:, :-1, ...]
        if third:
            out[:, :, 1:] += probs[2] * law[:, :, :-1]
        return out

    law = np.zeros(shape)
    law[(0,) * len(shape)] = 1.0
    for _ in range(a):
        law = add(law, (p, q, q, rest))
    for _ in range(n - 1 - a):
        law = add(law, (q, q, p, rest))
    P = add(law, (p, q, q, rest))
    Q = add(law, (q, p, q, rest))
    eta = 16.0 * (n + 2) * _U
    return P, Q, eta


def _hockey_bracket(P: np.ndarray, Q: np.ndarray, eta: float, eps: float) -> tuple[float, float]:
    """Certified ``[lower, upper]`` on ``max(Σ (P - e^ε Q)_+, Σ (Q - e^ε P)_+)`` from arrays
    known to relative ``eta`` (see :func:`_family_laws`)."""
    g = math.exp(eps)
    lo, hi = 0.0, 0.0
    cells = float(P.size)
    for A, B in ((P, Q), (Q, P)):
        sel = A > g * B
        a_s, b_s = float(np.sum(A[sel])), float(np.sum(B[sel]))
        lower = a_s * (1.0 - eta - cells * _U) - g * b_s * (1.0 + eta + cells * _U) * (1.0 + 4.0 * _U)
        upper = float(np.sum(np.maximum(A * (1.0 + eta) - g * (1.0 - eta) * B, 0.0)))
        upper = upper * (1.0 + cells * _U) + cells * 1e-300
        lo, hi = max(lo, lower), max(hi, upper)
    return max(lo, 0.0), max(hi, lo)


class _BinaryFamily:
    """Shuffled binary RR, first user ``x1`` vs ``x1'``, ``m`` other users holding ``x1`` and
    ``n-1-m`` holding ``x1'`` (FMT21 Appendix G is ``m = 0``).

    The output is the number ``h`` of ``x1`` reports; the others contribute
    ``Z = Bin(m, p) + Bin(n-1-m, 1-p)``, which is log-concave, so the optimal set of the
    direction ``P || Q`` is a tail ``{h >= s}`` with value
    ``(p - e^ε q) P[Z = s-1] - (e^ε - 1) P[Z >= s]`` (``p + q = 1``). The direction ``Q || P``
    of ``m`` is the direction ``P || Q`` of ``n-1-m`` (swap the labels).
    """

    def __init__(self, n: int, eps0: float) -> None:
        self.n = n
        rates = lower_rates(2, eps0)  # exact binary RR at e^eps0'' <= e^eps0 (module docstring §7)
        self.q, self.p = rates if rates is not None else (0.5, 0.5)
        self.rel = bn.pmf_error_budget(max(n, 2))

    def _parts(self, m: int) -> tuple[int, float, int, float]:
        """(size, prob) of the enumerated small group and of the big one."""
        n1, n2 = m, self.n - 1 - m
        if n1 <= n2:
            return n1, self.p, n2, self.q
        return n2, self.q, n1, self.p

    def _pmf_z(self, m: int, h: np.ndarray) -> np.ndarray:
        s_n, s_p, b_n, b_p = self._parts(m)
        i = np.arange(s_n + 1.0)
        w = bn.pmf(i, float(s_n), s_p)
        return np.sum(w[:, None] * bn.pmf(h[None, :] - i[:, None], float(b_n), b_p), axis=0)

    def _tail_z(self, m: int, s: np.ndarray) -> tuple[np.ndarray, float]:
        """``P[Z >= s]`` and the largest per-value tail budget used."""
        s_n, s_p, b_n, b_p = self._parts(m)
        i = np.arange(s_n + 1.0)
        w = bn.pmf(i, float(s_n), s_p)
        k = s[None, :] - i[:, None] - 1.0
        tails = bn.sf(k, float(b_n), b_p)
        budget = float(np.max(bn.tail_error_budget(k, float(b_n), b_p)))
        return np.sum(w[:, None] * tails, axis=0), budget

    def cut(self, m: int, eps: float) -> tuple[int | None, int]:
        """The optimal tail ``{h >= s}``: the smallest ``s`` with ``(p - g q) P[Z = s-1] >
        (g p - q) P[Z = s]``, found by a local search around the ``m = 0`` closed form.

        Returns ``(s, 0)``, or ``(None, h)`` when no such ``s`` was found below ``h`` (the set is
        empty, or it starts where the pmf underflows or past the search's reach): then the
        divergence of this direction is at most ``P[Z >= h - 1]``.
        """
        g = math.exp(eps)
        p, q, n = self.p, self.q, self.n
        if p - g * q <= 0.0:
            return None, n + 2
        R = (g * p - q) / (p - g * q)
        # start where the normal approximation puts the cut: S(h-1)/S(h) ~ exp((h - mu)/var) = R
        mu = m * p + (n - 1 - m) * q
        var = max(m * p * q + (n - 1 - m) * q * p, 1.0)
        # (clamped into [0, n]: a start past n + width left the window empty and the lower bound 0, e.g. eps0 = 16,
        # n = 10, eps = 15.9: 1.4e-22 for an exact 0.095; review rev93d)
        h0 = min(max(mu + var * math.log(R) + 1.0, 0.0), float(n))
        width = 8 + int(4.0 * math.sqrt(self._parts(m)[0] + 1.0))
        while True:
            lo = max(int(h0) - width, 0)
            hi = min(int(h0) + width, n)
            h = np.arange(lo, hi + 2.0)
            S = self._pmf_z(m, h - 1.0)
            term = (p - g * q) * S[:-1] - (g * p - q) * S[1:]  # at h = lo .. hi+1 ... (index of S(h-1))
            pos = term > 0.0
            # the sign is <= 0 then > 0 (log-concavity); locate the change inside the window
            if pos.any():
                if pos.all() and lo > 0 and width < 1 << 20:
                    width *= 2
                    h0 = lo
                    continue
                return int(h[np.argmax(pos)]), 0
            # nothing positive up to hi: the set starts above hi (or is empty)
            if hi >= n or S[-1] == 0.0 or width >= 1 << 14:
                return None, hi + 1
            width *= 2
            h0 = hi

    def bracket(self, m: int, eps: float) -> tuple[float, float]:
        """Certified ``[lower, upper]`` on the exact ``δ_{P||Q}(ε)`` of this dataset."""
        s, bound_h = self.cut(m, eps)
        if s is None:  # δ <= P[h >= bound_h] <= P[Z >= bound_h - 1]; 0 is a valid lower bound
            if bound_h > self.n:
                return 0.0, 0.0
            T, t_budget = self._tail_z(m, np.array([bound_h - 1.0]))
            return 0.0, float(T[0]) * (1.0 + 2.0 * self.rel + max(float(t_budget), self.rel)) + 1e-300
        g = math.exp(eps)
        gm1 = math.expm1(eps)
        cand = np.array([s - 1.0, float(s), s + 1.0])
        S = self._pmf_z(m, cand - 1.0)
        T, t_budget = self._tail_z(m, cand)
        small = self._parts(m)[0]
        eta = 2.0 * self.rel + (small + 8.0) * _U  # pmf products summed
        eta_t = self.rel + max(float(t_budget), self.rel) + (small + 8.0) * _U
        a = self.p - g * self.q
        low = a * S * (1.0 - eta) - gm1 * T * (1.0 + eta_t)
        up = a * S * (1.0 + eta) - gm1 * T * (1.0 - eta_t) + 1e-300
        return max(float(np.max(low)), 0.0), max(float(np.max(up)), 0.0)


@dataclass(frozen=True)
class DatasetLower:
    """The best attained value found at one ``eps``: ``lower`` is a certified lower bound on
    the exact ``δ(ε)`` of the shuffled output for the neighbouring datasets ``dataset``
    (hence on the worst case of shuffled k-RR); ``upper`` is the upper end of the bracket on
    that same exact value."""

    eps: float
    lower: float
    upper: float
    dataset: str


class KrrDatasetLower:
    """Attained lower bounds for shuffled k-RR (issue 10, ``dataset-lower``): the exact
    hockey-stick divergence, on the *full* output histogram, of concrete neighbouring
    datasets, maximised over a family; certified from below. A
    :class:`~.profile.PrivacyProfile` whose lower bracket end is the certified one.

    Family (spec ``blanket.md`` §3; both directions, the other users' data fixed):

    * ``k >= 3``: the first user holds ``x1`` vs ``x1'``, ``a`` other users hold ``x1`` (or,
      equivalently by relabelling, ``x1'``) and the other ``n-1-a`` hold one third value.
      Up to :data:`FAMILY_SCAN_MAX_N` every ``a`` is evaluated exactly; beyond, ``a = 0``
      (for ``k = 3`` the core's pair ``ClonePair(n, q, q, p, q, q)``, the full histogram being
      a function of the two counts; for ``k >= 4`` the engine on :func:`dataset_model`) and,
      up to :data:`ALL_X1_MAX_N`, ``a = n - 1`` (the core's exact pair
      ``ClonePair(n, p, q, p, q, (k-2) q)``: the other values are exchangeable with the same
      law for everyone, so the two counts are sufficient).
    * ``k = 2`` (binary RR; also the generic floor): ``m`` other users hold the first user's
      value and ``n-1-m`` the other one, ``m`` scanned from both ends (FMT21 Appendix G is
      ``m = 0``; e.g. ``n = 1000, ε0 = 1``: ``m = 1`` is larger at ``δ = 1e-8``).
    """

    def __init__(self, n: int, k: int, eps0: float) -> None:
        self.n, self.k, self.eps0 = _validate(n, k, eps0)
        n, k = self.n, self.k
        self._binary: _BinaryFamily | None = None
        self._laws: dict[int, tuple[np.ndarray, np.ndarray, float]] = {}
        #: (label, profile, map of its lower end to a certified one: module docstring §7)
        self._profiles: list[tuple[str, object, Callable[[float], float]]] = []
        self._scan_all = False
        if k == 2:
            self._binary = _BinaryFamily(n, self.eps0)
            return
        if n <= FAMILY_SCAN_MAX_N[min(k, 4)]:
            self._scan_all = True
            return
        rates = lower_rates(k, self.eps0)  # exact k-RR at e^eps0'' <= e^eps0; None: no dataset tried
        if rates is None:
            return
        q, p = rates
        same: Callable[[float], float] = float
        zero: HockeyStick | _Engine  # both offer bounds(eps, rtol)
        if k == 3:
            zero, down = HockeyStick(ClonePair(n, q, q, p, q, q)), same
        else:
            model = dataset_model(n, k, self.eps0)
            zero, down = _Engine(model), dataset_charge_down(model, k)
        self._profiles.append(("a = 0: all other users hold one third value", zero, down))
        if n <= ALL_X1_MAX_N:
            self._profiles.append((f"a = n-1 = {n - 1}: all other users hold x1",
                                   HockeyStick(ClonePair(n, p, q, p, q, (k - 2.0) * q)), same))

    @property
    def max_log_ratio(self) -> float:
        return self.eps0

    def _family(self, a: int, eps: float) -> tuple[float, float]:
        if a not in self._laws:
            self._laws[a] = _family_laws(self.n, self.k, self.eps0, a)
        P, Q, eta = self._laws[a]
        return _hockey_bracket(P, Q, eta, eps)

    def evaluate(self, eps: float, rtol: float = 1e-9) -> DatasetLower:
        """The best dataset of the family at ``eps`` (largest certified lower bound)."""
        if not (math.isfinite(eps) and eps >= 0.0):
            raise InvalidParameter(f"eps must be finite and >= 0, got {eps!r}")
        if eps >= self.eps0:
            return DatasetLower(eps, 0.0, 0.0, "eps >= eps0: every dataset has delta = 0")
        best = DatasetLower(eps, 0.0, 0.0, "none")
        hi_all = 0.0

        def consider(lo: float, hi: float, label: str) -> None:
            nonlocal best, hi_all
            hi_all = max(hi_all, hi)
            if lo > best.lower or best.dataset == "none":
                best = DatasetLower(eps, lo, hi, label)

        if self._binary is not None:
            fam = self._binary
            n = self.n
            # m from both ends: P || Q of m others holding x1; Q || P of the same dataset is
            # P || Q of n-1-m (relabel x1 <-> x1')
            for ms in (range(min(BINARY_MAX_M, n)), range(n - 1, max(n - 1 - BINARY_MAX_M, -1), -1)):
                best_here, misses = -1.0, 0
                for m in ms:
                    lo, hi = fam.bracket(m, eps)
                    consider(lo, hi, f"first user x1 vs x1'; {m} other users hold x1, {n - 1 - m} hold x1'")
                    if lo > best_here:
                        best_here, misses = lo, 0
                    else:
                        misses += 1
                        if misses > BINARY_PATIENCE:
                            break
        elif self._scan_all:
            for a in range(self.n):
                lo, hi = self._family(a, eps)
                consider(lo, hi, f"a = {a} other users hold x1, {self.n - 1 - a} hold a third value")
        else:
            for label, prof, down in self._profiles:
                b = prof.bounds(eps, rtol)  # type: ignore[attr-defined]
                consider(down(b.lower), b.upper, label)
        return DatasetLower(eps, best.lower, max(best.upper, best.lower), best.dataset)

    def bounds(self, eps: float, rtol: float = 1e-9) -> DeltaBounds:
        """``lower`` certified below the exact ``δ(ε)`` of the best dataset found (so below the
        worst case of shuffled k-RR); ``upper`` bounds the exact values of the datasets tried."""
        if not (math.isfinite(eps) and eps >= 0.0):
            raise InvalidParameter(f"eps must be finite and >= 0, got {eps!r}")
        if eps >= self.eps0:
            return DeltaBounds(eps, 0.0, 0.0, 0, True)
        r = self.evaluate(eps, rtol)
        return DeltaBounds(eps, r.lower, r.upper, 1, r.upper - r.lower <= rtol * r.lower)


def krr_dataset_lower(n: int, k: int, eps0: float, eps: float, rtol: float = 1e-9) -> DatasetLower:
    """Attained lower bound on the worst-case ``δ(ε)`` of shuffled k-RR (see
    :class:`KrrDatasetLower`): certified from below, with the dataset that attains it."""
    return KrrDatasetLower(n, k, eps0).evaluate(eps, rtol)
