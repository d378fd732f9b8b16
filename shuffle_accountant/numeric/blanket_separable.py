"""Certified privacy-blanket bound for randomizers whose likelihood ratios take two values.

Spec: ``shared/spec/blanket.md`` §2, §4. Source: Balle, Bell, Gascón, Nissim, "The Privacy
Blanket of the Shuffle Model", CRYPTO 2019 (arXiv 1903.02837), Section 3. This module evaluates
the same quantity as :mod:`.blanket_matrix` (read its module docstring for the form of the bound)
for one :class:`~shuffle_accountant.randomizers.PairStructure`, by a different route that is exact
up to floating point where it applies.

1. Separable structures (*derived*)
-----------------------------------
The bound is ``delta(eps) = (1/n) E[S_+]``, ``S = sum_j c_j N_j``, ``c_j = a_j - g b_j``,
``g = e^eps``, ``(N_1..N_r, rest) ~ Multinomial(n; p_1..p_r, 1 - gamma)``. For unary encoding
(SUE, OUE), optimized local hashing, Hadamard response and subset selection every class has
``(a_j, b_j)`` in ``{(1,1), (E,1), (1,E), (E,E)}`` with one ``E = e^eps0``. With ``y1 = [a = E]``,
``y2 = [b = E]``,

    c(y1, y2) = (1 - g) + (E - 1) y1 - g (E - 1) y2                      (exactly),

so with ``M`` blanket draws, ``A = #{y1 = 1}``, ``B = #{y2 = 1}``:
``S = (1 - g) M + (E - 1)(A - g B) = (E - 1)(A - kappa)``, ``kappa = g B + M (g - 1)/(E - 1)``.

2. Product part and remainder (*derived*)
-----------------------------------------
Write the per-user law as ``P(class y) = q_y + nu_y`` with ``q_y = gamma' alpha^{y1} (1 -
alpha)^{1 - y1} beta^{y2} (1 - beta)^{1 - y2}`` (a *product* law on ``(y1, y2)`` of total mass
``gamma'``) and ``nu_y >= 0``; a user is a "product draw" with probability ``gamma'``, a
"remainder draw" of class ``y`` with probability ``nu_y``, else silent. Then ``S = S' + S''``
(product draws, remainder draws), and ``(x + y)_+ <= x_+ + y_+``, ``(x + y)_+ >= x_+ - y_-``
give

    delta' - sum_y nu_y (c_y)_-  <=  delta  <=  delta' + sum_y nu_y (c_y)_+,    delta' = E[S'_+] / n.

The lattice engine of :mod:`.blanket_matrix` uses the same decomposition (:func:`product_law`,
:func:`product_remainder`) at large ``n``, where the masses' relative error would cost
``(1 +- rel_err)^n``.
``alpha, beta`` are the blanket marginals of ``y1, y2`` and ``gamma'`` the largest scale with
``q_y <= p_y (1 - rel_err)`` for every class (certified against the stored masses' error). SUE,
OUE and OLH are product-form except for one output (the all-ones vector; the constant hash), so
``sum nu`` is ``O(q^{k-2})`` / ``O(g^{1-k})`` plus the masses' rounding (about ``1e-14``
absolute): :func:`applies` accepts a structure when the remainder is negligible
(:data:`MAX_REMAINDER`). Hadamard response, subset selection and tiny domains are handled (the
bracket stays certified) but loosely.

3. Mixture over the number of blanket draws (*derived*)
-------------------------------------------------------
``Bin(n, gamma')(m) / n = gamma' Bin(n - 1, gamma')(m - 1) / m`` gives

    delta' = gamma' sum_{m >= 1} Bin(n - 1, gamma')(m - 1) G(m),    G(m) = E[(S_m)_+] / m,

``S_m`` the sum of ``m`` i.i.d. product draws. **G is non-increasing**: ``S_{m+1} / (m+1)`` is
the average over ``i`` of ``S^{(-i)} / m`` (leave draw ``i`` out; each ``S^{(-i)}`` is distributed
as ``S_m``), and ``x -> x_+`` is convex. So a block ``lo <= m <= hi`` of weight ``W`` contributes
between ``W G(hi + 1)`` and ``W G(lo)``; single ``m`` are exact. Outside a window of ``m`` the
upper end adds ``P[m < lo] G(1) + P[m > hi] G(hi + 1)``.

4. One ``G(m)`` (*derived*)
---------------------------
Given ``m`` product draws ``A ~ Bin(m, alpha)`` and ``B ~ Bin(m, beta)`` are independent, so
``E[(S_m)_+] = (E - 1) sum_b P[B = b] F(kappa_b)``, ``F(kappa) = E[(A - kappa)_+]``, in closed form
without large cancellation (``A' ~ Bin(m - 1, alpha)``):

- ``kappa >= m alpha``, ``k = ceil(kappa)``: ``F = (m alpha - k) P[A' >= k] + k (1 - alpha)
  P[A' = k] + (k - kappa) P[A >= k]``, ``P[A >= k] = P[A' >= k] + alpha P[A' = k - 1]``
  (the first two terms are ``E[(A - k)_+]``; they cancel only by a factor ``~ z^2`` at ``z``
  standard deviations);
- ``kappa < m alpha``, ``k = floor(kappa)``: ``F = (m alpha - kappa) + (k - m alpha) P[A' <= k - 1]
  + (m - k) alpha P[A' = k - 1] + (kappa - k) P[A <= k]``, ``P[A <= k] = P[A' <= k - 1] +
  (1 - alpha) P[A' = k]`` (``E[(A - kappa)_+] = m alpha - kappa + E[(kappa - A)_+]`` and the mirror
  of the previous case).

``F`` is convex, non-increasing and 1-Lipschitz in ``kappa``; ``kappa_b`` increases with ``b``.
Outside a window of ``b``: ``b > b_hi`` contributes at most ``P[B > b_hi] F(kappa_{b_hi})``,
``b < b_lo`` at most ``P[B < b_lo] (F(kappa_{b_lo}) + g b_lo)``.

4b. ``F`` along a run of cells, through the integers (*derived*)
-----------------------------------------------------------------
``A`` is integer-valued, so ``F`` is linear on every ``[j - 1, j]`` with slope ``-S(j)``, ``S(j) =
P[A >= j]``: for ``kappa`` in ``[j - 1, j]``, ``F(kappa) = F(j) + (j - kappa) S(j)`` (both terms
``>= 0``), and ``F(j) - F(j + 1) = E[(A - j)_+ - (A - j - 1)_+] = S(j + 1)``. For one ``m`` the cells
of a run (consecutive ``b``, ``kappa_b`` increasing) need ``F`` and ``S`` at the integers ``j`` from
``floor(kappa_first) + 1`` to ``jhi = min(floor(kappa_last) + 1, m)``: from the top anchors
``S(jhi)`` (Boost ``sf``) and ``F(jhi)`` (the closed form above; 0 when ``jhi = m``), downwards

    S(j) = S(jhi) + sum_{j <= i < jhi} P[A = i],     F(j) = F(jhi) + sum_{j < i <= jhi} S(i),

running sums of non-negative terms (``P[A = i]`` by :func:`.binomial.pmf_points`, ratio
recurrences from Boost anchors): each value carries the relative errors of its inputs (kept as
absolute error sums) plus ``(width + 4) u`` for numpy's sequential running sum of at most
``width`` terms. A cell costs ``4 u`` relative for ``j - kappa``, the product and the sum (``j -
kappa`` is exact for ``j >= 2``), and the coefficients' uncertainty ``d`` costs ``d S(j)`` where
``[kappa - d, kappa + d]`` stays inside ``[j - 1, j]``, else ``d`` (``F`` is 1-Lipschitz); cells with
``kappa >= m`` are 0 (charged ``d`` when ``kappa - d < m``). Two to three Boost values and one pmf
anchor per 32 integers per run replace two Boost values per cell (:func:`_f_runs`); a run whose
grid would be much longer than the run (``g`` large) goes cell by cell (:func:`_f_cells`).

5. Floating point
-----------------
- coefficients: the true ``c_j`` differ from ``c(y1, y2)`` computed with the stored ``E`` and
  ``g = exp(eps)`` by at most ``sigma = max_j (rel_err + 16 u)(a_j + g b_j)`` (as in
  :func:`.blanket_matrix.coefficients`), so ``S`` lies within ``sigma M`` of the separable form:
  ``kappa`` moves by at most ``m sigma / (E - 1)``; with the roundings of ``kappa`` itself
  (``8 u (g b + m rho)``) this is ``d`` per cell, charged as ``d`` times the slope of ``F``
  (``P[A >= k]``, or 1 where ``[kappa - d, kappa]`` meets an integer or ``kappa < m alpha``);
- every Boost value carries its measured budget (:func:`.binomial.tail_error_budget`,
  :func:`.binomial.pmf_error_budget`); pmf values obtained from a Boost value by exact ratios
  (``P[A' = k - 1]`` from ``P[A' = k]``; runs of ``P[B = b]`` over consecutive ``b`` from an anchor
  every :data:`RUN` cells) add ``8 u`` per ratio step; every term of ``F`` carries its own error
  (no cancellation assumed); sums numpy's pairwise bound (:func:`.fp.sum_error`) of their absolute
  values, plus ``u`` for the products; masses of ``m``
  blocks the error of :func:`.binomial.interval_mass`;
- the masses: the laws of ``M, A, B`` are *exactly* binomial with the computed ``gamma', alpha,
  beta``; the true per-user law differs from that product law by (route A) the remainder of §2
  taken against ``p_y (1 - rel_err)`` -- an *additive* term ``~ 1e-14`` that does not grow with
  ``n`` -- or (route B, when the structural remainder is negligible) a *factor*: every category's
  true probability is within ``(1 +- r')`` of the product law's (:func:`_mass_factor`), so
  ``E_true[F] <= (1 + r')^n E[F]`` for ``F >= 0`` (and ``>= (1 - r')^n``), a relative ``~ 3e-14
  n``. Each call takes the route whose floor is lower at the saddle-point *estimate* of delta
  (route B for small ``n`` or tiny delta, route A for large ``n``); both are certified.

6. Cost (measured: ``benchmarks/bench_blanket_separable.py``, CPU, delta = 1e-6, eps rtol 1e-6)
-----------------------------------------------------------------------------------------------
Each ``G(m)`` sums ``~ 26 sd(B)`` cells (fewer after :meth:`SeparableBlanket._trim`); blocks of
``m`` need about ``28 sd(M) |d log G/dm| / rtol`` evaluations of ``G`` (single ``m`` near the mean
when that exceeds the window). Both grow like ``sqrt(n)``, so the route is for small ``n``. One
``eps(delta)`` search (SUE / OUE / OLH, k = 100, eps0 = 1; with §4b's runs and the estimated
windows): 8-15 ms at ``n = 10 .. 100``, 20-21 ms at ``n = 300`` (lattice 24-45 ms), 47-51 ms at
``n = 1e3`` (lattice 52-76 ms), 137-150 ms at ``n = 3e3`` (lattice 58-79 ms); before them 9-17,
33-37, 76-82 and 176-200 ms. (Since the lattice's item 10, one level without any FFT, the lattice
takes 3-9 ms at ``n = 3e3`` and answers before this engine from ``n = 600`` where eps0 <= 1.5:
:data:`.blanket_matrix.DIRECT_SEPARABLE_MIN_N`; this engine keeps the smaller ``n`` and the larger
eps0, where the lattice's certificate of its live frequencies refuses or needs thousands of them.)
(Exact enumeration of :mod:`.blanket_matrix`: 8-23 ms at ``n <=
30``, 450-690 ms at ``n = 100``.) Most of an evaluation is now per ``m`` (pmf runs, anchors), not
per cell: trimming at ``1e-13`` instead of ``1e-22`` of the peak left 22 % fewer cells and 8 % less
time (now :data:`TRIM_REL` = ``1e-15``, the look at every :data:`TRIM_STEP`-th ``m``: cold computation at the
final eps, SUE / OLH k = 100, n = 100 .. 2000, eps0 1 .. 4, CPU least of 4: 44.0 -> 39.0 ms over 12 cases, 23.1k
-> 19.4k cells at n = 1e3, eps0 = 2; upper ends within 2.3e-14 relative). The pmf runs of ``A`` and ``B`` do
not depend on eps: :class:`RunPmf` keeps them across the
search's evaluations (at ``n = 1e3``, k = 100, eps0 = 1 the second evaluation asks for the same
``m`` and takes every run from the first, ~1.2e5 -> ~6e4 pmf points per search; CPU, min of 8
cold searches: 25-28 -> 22.5-24 ms); they are shared by every instance (``RunPmf(shared=True)``), so
that a repeated query, another delta or another n for the same randomizer finds most of them kept (api.epsilon,
SUE / OUE / OLH k = 100, delta = 1e-6, CPU least of 6, cold -> the same query again: n = 100, eps0 = 1: 3.0 ->
2.5 ms; n = 300: 4.6 -> 3.5 ms; n = 1e3, eps0 = 2 / 3: 7.8 -> 6.0 / 5.6 -> 4.3 ms; bit-identical brackets);
new runs are made by :func:`_pmf_on_runs` (``pmf_points``'s numbers without finding the runs again: cold
computation, 14 cases n = 30 .. 2000, 40.1 -> 38.0 ms, 7-11 % at n = 1e3); the masses of the blocks of ``m``
are kept too (:func:`_block_masses`, per ``(N, gamma', edges)``). api.epsilon, SUE / OUE / OLH k = 100, n = 30 ..
1e3, eps0 1 .. 3, 24 queries, CPU least of 5: cold 86.5 ms, the same query again with the pmf runs kept 72.5 ms,
with the masses too 65.7 ms.
A third of a search's CPU time at ``n = 1e3`` (3300 page faults:
fresh pages for every large temporary) went to the kernel; :func:`.blanket_matrix.reused_memory`
(around every :meth:`SeparableBlanket.bounds` and :meth:`.blanket_matrix.PairBlanket.bounds` call) keeps the
freed memory: 20.3 ->
13.2 ms (SUE k = 100, eps0 = 1, two evaluations). Tried and not adopted: asking the refinement of
the blocks of ``m`` for 0.8 or 1.0 of the width instead of 0.5 (fewer ``m``; within timing noise at
``n = 10 .. 1e3``, same evaluations). A more accurate start for the search (its first evaluation at ``n =
1e3`` lands 1.6e-6 relative below eps(delta), where the saddle point's root lies, and a second one
follows): the log-ratio of the certified value to the saddle point is smooth in eps (SUE k = 100, n =
1e3: 2.2e-5 .. 3.9e-5 over eps 0.085 .. 0.127), but an estimate cheap enough to take it (``log G``
interpolated over ``m`` from 12 Chebyshev nodes) is off by 1e-6 .. 3e-5 in delta (5e-3 at n = 100),
where one evaluation would need it within ~5e-6 (a root within 0.5 rtol at d log delta / d log eps ~ 11)
and the saddle point itself is off by 3.2e-5: ``G`` is not smooth in ``m`` at that level (lattice effects
of ``A`` and ``B``). Not adopted.
:data:`SEPARABLE_MAX_N` is the suggested cut-over (:func:`suggested`: up to 1500 users from eps0 = 3 and
3000 from eps0 = 4, :data:`SEPARABLE_WIDE`, where the lattice's item 10 needs thousands of live
frequencies: SUE / OUE / OLH k = 100, n = 1500, eps0 = 3: 9.6-12.2 -> 7.8-8.9 ms; eps0 = 4, n = 1500 /
2000 / 3000: 12-14 / 11-13 / 11-11.5 -> 6.8-7.2 / 7.8-8.8 / 8.1-10.4 ms; and since from eps0 = 5, where the
lattice's two levels answered: up to 10000 users from eps0 = 5, 20000 from 6 and 50000 from 8, 2-5x faster there,
measured at :data:`SEPARABLE_WIDE`). :data:`MAX_CELLS` caps the work
of one call (the bracket reached is returned, certified, with ``converged = False``).

Since §8 (api.epsilon, delta = 1e-6, rtol 1e-6, CPU, least of 2x2 interleaved runs against 8166f35, k =
100, ratio to one clones query at the same n; ``benchmarks/bench_blanket_separable.py --api``): a search
makes one or two computations where it made two to four -- the search's slope from the computation
(:meth:`SeparableBlanket.measured_log_slope`), its later evaluations a few rtol apart from the kit (§8), its
coarse first look at :data:`LOOK_RTOL` so that the same eps at the final width is a cache hit -- and a
cold computation is one batch of cells (:data:`SINGLES_SD`) over trimmed windows (:data:`TRIM_MIN`).
n = 30: 2.3-4.9x at eps0 0.5 .. 2 (was 6.4-17x; at eps0 >= 3 the clones query takes 0.1 ms: 23-36x, was
37-70x); n = 100: 3.6-5.7x at eps0 0.5 .. 3 (was 8.5-12.4x), eps0 = 4 25-36x (was 75-174x); n = 300:
3.7-6.2x (was 6.4-13.7x); n = 1e3, eps0 2 .. 4: 5.9-8.5x (was 9.3-12.5x; SUE eps0 = 3 10.4 -> 6.5 ms). What
is left is one cold computation (n = 1e3, eps0 = 3: ~4 ms, of which the pmf runs of ``A`` and ``B`` ~1.5
ms, and 135 single ``m``: ``G`` changes by 4.5 % per draw there, so blocks of ``m`` do not pay at rtol 1e-6)
and, at n <= 100, the fixed cost of one computation and of the search's start estimate (~1 ms each).

7. A certified lower bound at a nearby smaller ``eps`` without an evaluation (*derived*)
---------------------------------------------------------------------------------------
The ``eps(delta)`` search (:func:`.search.epsilon_for_delta`) asks for ``lower_at(eps_a)``, a certified
lower bound on ``delta(eps_a)`` from the state of the last evaluation at ``eps_b > eps_a``
(:meth:`SeparableBlanket.lower_at`). Write ``g = e^eps``. For every realisation of the draws the
sum ``S(g) = sum_j (a_j - g b_j) N_j`` is affine in ``g`` with slope ``-T``, ``T = sum_j b_j N_j >= 0``,
so ``(S(g_a))_+ >= (S(g_b))_+ + (g_b - g_a) T 1{S(g_b) > 0}`` (``x -> x_+`` is convex with
subgradient ``1{x > 0}``): ``delta`` is convex in ``g`` and, for ``g_a < g_b``,
``delta(g_a) >= delta(g_b) + (g_b - g_a) D(g_b)`` with ``D = (1/n) E[T 1{S > 0}]`` (the right
derivative ``-d delta / dg``; by exchangeability ``D = sum_j b_j p_j P[S_{n-1} > -c_j]``, the 1/n
cancelling the ``n`` users). Here the same argument is applied term by term to the chain of
inequalities that gives the lower end at ``g_b`` (§2, §3, §5), whose every ingredient except
``G(m)`` and ``r_-`` is independent of ``eps``:

- the product law (``gamma', alpha, beta``), the masses ``W`` of the blocks of ``m`` and route B's
  factor ``(1 - r')^n`` do not depend on ``eps``; ``r_- = sum nu_y (c_y)_-`` (with its slack) is
  non-increasing as ``g`` decreases (``c_y = a_y - g b_y`` grows), so ``r_-(g_b) >= r_-(g_a)``;
- a block ``[lo, hi]`` contributes at least ``W G_a(m*)`` at ``g_a`` (``m* = hi + 1``, or the ``m``
  of a single block), ``G`` being non-increasing in ``m`` at every ``g`` (§3);
- for ``m`` product draws, ``S_m = (E - 1)(A - kappa')`` with ``|kappa' - kappa_B| <= d`` (§5), so
  ``{A > kappa_B + d}`` lies inside ``{S_m > 0}``; ``T_m >= t (m + (E - 1) B)`` with ``t = 1 - rel_err
  - 16u`` (the true ``b`` of a class is ``1`` or ``E`` within its stored error), and ``A, B`` are
  independent given ``m``. Hence ``G_a(m) >= G_b(m) + (g_b - g_a) D(m)`` with

      D(m) = (t / m) sum_b P[B = b] (m + (E - 1) b) P[A > kappa_b + d]       (non-negative terms),

  and any lower bound on ``D(m)`` may be used: the cells of the window of §4 only (the others are
  non-negative), ``P[A > kappa_b + d] = S(j)`` of §4b / the closed form's ``P[A >= k]`` (or ``1 -
  P[A <= k]`` below the mean) minus its error bound where ``[kappa, kappa + d]`` stays inside one
  unit interval, else 0.

So ``lower_at(eps_a) = [gamma' sum_blocks W_lo (G_lo(m*) + (g_b - g_a) D_lo(m*)) - r_-(g_b)]_+``
(times route B's ``(1 - r')^n``) with every factor rounded down: ``W_lo``, ``G_lo`` and the sum's
charge as for the lower end at ``g_b``; ``D_lo`` with the masses' ``rel_w``, the sum's ``fp.sum_error``
and ``8u`` for its products; ``g_b - g_a = e^{eps_a} expm1(eps_b - eps_a)`` (the difference is exact
by Sterbenz's lemma for ``eps_a >= eps_b / 2``; ``exp``, ``expm1`` and the product within ``1 - 8u``);
``4u`` for each term's three roundings. It is certified for every ``eps_a < eps_b``; it is offered
within ``1e-3 eps_a`` of ``eps_b`` only (the search asks ``0.98 rtol`` below) and is then below the
lower end of an evaluation by the loss of the first-order term only. It costs a third sum over the
cells already computed (measured: see the commit). Tests: ``tests/test_blanket_separable.py``
against exact rationals and the independent oracle of ``tests/oracle_blanket.py``.

8. A certified bracket at a nearby ``eps`` from one computation's cells (*derived*)
---------------------------------------------------------------------------------
§7's convexity argument, applied at both ends. For every realisation ``S(g)`` is affine in ``g`` with
slope ``-T``, ``T >= 0``; the subgradient inequality of ``x -> x_+`` at ``S(g)`` gives, for any ``g,
g'``, ``(S(g'))_+ >= (S(g))_+ - (g' - g) T 1{S(g) > 0}``. Per ``m`` (product draws, §3), with ``D_m(g) =
E[T_m 1{S_m(g) > 0}] / m``:

    G_{g'}(m) >= G_g(m) - (g' - g) D_m(g),          G_{g'}(m) <= G_g(m) - (g' - g) D_m(g')

(the second is the first with ``g, g'`` exchanged). So from a computation at ``g_1`` (``G_up``,
``G_lo`` per ``m``) and certified bounds on ``D_m`` at ``g_1`` and at the new ``g``, a bracket on
``G_g(m)`` follows for every ``m`` it evaluated: for ``g > g_1``, ``G_up - (g - g_1)_lo D_lo(m; g)`` and
``G_lo - (g - g_1)_up D_up(m; g_1)``; for ``g < g_1``, ``G_up + (g_1 - g)_up D_up(m; g)`` and ``G_lo + (g_1 -
g)_lo D_lo(m; g_1)``. The blocks of ``m`` then bound ``delta'`` at ``g`` as in §3 (``G`` is non-increasing
in ``m`` at every ``g``: a block uses ``G_g(lo)`` above and ``G_g(hi + 1)`` below, both bracketed), the
tails of ``m`` with ``G_g(1)``, ``G_g(hi + 1)``, the masses ``W`` and route B's factors do not depend on
``eps``, and route A's remainder terms ``r_+-`` are recomputed at ``g`` (§2). The bounds on ``D_m`` come from
the computation's cells: given ``m`` and ``B = b``, ``t (m + (E - 1) b) <= T_m <= t' (m + (E - 1) b)`` (``t =
(1 - rel_err - 16u)(1 - 8u)``, ``t' = (1 + rel_err + 16u)(1 + 8u)``: each class's true ``b`` is 1 or ``E``
within its error), ``A`` is independent of ``B``, and ``{A > kappa_b + d} <= {S_m > 0} <= {A > kappa_b - d}``
(§5, ``kappa_b`` and ``d`` recomputed at ``g``; ``+- 4u (kappa + d + 1)`` for their sum's rounding), so

    D_lo(m; g) = (t / m) sum_{b in window} P[B = b] (m + (E - 1) b) P_lo[A > kappa_b + d]
    D_up(m; g) = (t' / m) (sum_{b in window} P[B = b] (m + (E - 1) b) P_up[A > kappa_b - d]
                            + P[B < b_lo] (m + (E - 1) m) + P[B > b_hi] (m + (E - 1) m) P_up[A > kappa_{b_hi} - d])

(``(m + (E - 1) m)`` for the ``b`` outside the window, ``B <= m``; above it ``kappa_b - d`` grows with ``b``, so
the last cell's probability bounds them). Each cell kept ``j = floor(kappa_b(g_1)) + 1`` and ``S_lo <= S(j)
= P[A >= j] <= S_up`` (the runs' ``S(j) -+ err`` of §4b; for cells evaluated one by one the closed form's own ``P[A >= k]``,
:func:`_f_cells`, which was ``[0, 1]`` until then; ``j =
m + 1``, ``S = 0`` exactly where ``kappa >= m``). ``P[A > x] = S(floor(x) + 1)`` is non-increasing in
``x``, so ``P[A > x] <= S_up`` where ``x >= j - 1`` and ``>= S_lo`` where ``x < j``; one integer further the
cell's own run gives ``S(j - 1)``, ``S(j + 1)`` (the grid's neighbouring columns with their errors, where the
run has them) and so does the neighbouring cell of the same ``m`` (``kappa_{b-1} <= kappa_b - 1`` since ``g >=
1``: the cell ``b - 1`` has ``j' <= j - 1`` and ``S(j') >= S(j - 1)``; the cell ``b + 1`` has ``j' >= j + 1`` and
``S(j') <= S(j + 1)``; checked per cell), the better of the two, else ``1`` / ``0``. Every sum is of non-negative terms with the masses' ``rel_w`` and the
sums' ``fp.sum_error`` as in §7; the differences ``g - g_1`` by :func:`.fp.exp_gap_down` and its mirror
``e^a expm1(b - a) (1 + 8u)``; a subtraction ``x - y`` rounded by ``(1 -+ 2u)`` of its result (then
clamped at 0, ``G >= 0``).

Where no ``kappa_b`` crosses an integer between ``g_1`` and ``g`` the sum is affine in ``g`` and the bracket
keeps its width (measured: SUE k = 100, eps0 = 3, n = 1e3, steps of 1e-6 .. 1e-4 relative: width 1.2e-9
-> 1.2e-9 .. 1.7e-9). :meth:`SeparableBlanket.bounds` first tries the kit (:class:`_Kit`) of the nearest
computation within :data:`EXTRAPOLATE_REL` of ``eps`` and answers from it when the bracket meets the
``rtol`` asked (a search's second and later evaluations a few rtol apart cost ~0.2 ms instead of a
computation).
"""

from __future__ import annotations

import functools
import math
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

import numpy as np
from scipy.special import gammaln, xlogy  # type: ignore[import-untyped]

from ..errors import InvalidParameter
from ..randomizers import PairStructure
from ..validation import IntRange
from . import binomial as bn
from . import fp
from .profile import DeltaBounds

if TYPE_CHECKING:  # estimates only (imported lazily: blanket_matrix is large)
    from .blanket_matrix import PairBlanket

_U = fp.UNIT_ROUNDOFF
#: largest n for which this engine is suggested over the lattice of :mod:`.blanket_matrix` (§6)
SEPARABLE_MAX_N = 1000
#: ``(eps0, n)``: from this largest log-ratio, the engine is suggested up to this many users (§6:
#: at eps0 3 .. 4 the lattice's item 10 needs thousands of live frequencies up to n ~ 5e3, and from
#: eps0 = 5 the lattice's two levels answer: eps(delta), CPU, SUE / OUE / OLH k = 100, delta 1e-6 and
#: 1e-9, eps0 = 5, n = 3001 .. 10000: 7.7-21.5 -> 4.6-8.8 ms; eps0 = 6, n = 3001 .. 10000: 13-35 ->
#: 3.6-10.4 ms; n = 15000 / 20000 (lattice / this engine): 8.2-31 / 6.2-10 ms; 30000: 11-12 / 12-16 ms;
#: eps0 = 8, n = 5000 .. 50000: 15-130 / 3.6-16 ms, 2e5: 9-23 / 14-26 ms)
SEPARABLE_WIDE = ((3.0, 1500), (4.0, 3000), (5.0, 10_000), (6.0, 20_000), (8.0, 50_000))
#: :func:`applies` accepts a structure whose remainder mass (§2) is at most this fraction of gamma
MAX_REMAINDER = 1e-12
#: half-width, in standard deviations, of the window of blanket-draw counts m
M_WINDOW_SD = 14.0
#: half-width, in standard deviations of B, of the window of b for one G(m)
B_WINDOW_SD = 13.0
#: the accepted number of users
_N_RANGE = IntRange("n")
#: windows of b wider than this are trimmed from a coarse look (:meth:`SeparableBlanket._trim`; was
#: 120: at n = 1e3 the +-13 sd windows of ~90 cells were kept whole, their ends ~1e-38 of the peak;
#: trimmed at TRIM_REL: SUE k = 100 eps0 = 3 14.0k -> 9.2k cells, 4.6 -> 3.8-4.2 ms a cold computation)
TRIM_MIN = 40
#: points of that look, and the part of the largest summand below which cells are left out
TRIM_POINTS = 48
TRIM_REL = 1e-15
#: the look is taken at every this many consecutive m; an m between two looked-at ones takes the union of
#: their windows (:meth:`SeparableBlanket._windows`; measured over 133k windows, SUE / OUE / OLH k = 100 /
#: 1000, n = 100 .. 3000: 1.4 % miss up to one grid step of their own look, where the summands are ~TRIM_REL
#: of the peak; any window is certified, §4, and the tails it leaves out are charged)
TRIM_STEP = 4
#: the first partition of m takes every integer within this many standard deviations of the mean when
#: they are at most SINGLES_MAX (where G changes by a few percent per draw the refinement makes them
#: single blocks anyway, and one batch of cells costs less than a second round)
SINGLES_SD = 6.0
SINGLES_MAX = 200
#: the first partition's edges around the mean of m, in its standard deviations (the same numbers
#: :meth:`SeparableBlanket._initial_edges` made with two ``geomspace`` per computation)
_EDGE_Z = np.concatenate((-np.geomspace(M_WINDOW_SD, 0.25, 14), [0.0], np.geomspace(0.25, M_WINDOW_SD, 14)))
_EDGE_Z.flags.writeable = False
#: Boost anchors of the pmf runs of B every this many cells (:func:`.binomial.pmf_points`)
RUN = 32
#: cells (m, b) one bounds() call may evaluate before it returns the bracket reached
MAX_CELLS = 20_000_000
#: cells evaluated per batch (memory)
BATCH_CELLS = 400_000


@dataclass(frozen=True)
class _Split:
    """The product decomposition of §2: ``gamma', alpha, beta`` (exact parameters of the
    computed laws) and the remainder's upper masses ``nu`` per separable class (order
    ``(0,0), (1,0), (0,1), (1,1)`` in ``(y1, y2)``)."""

    E: float
    gamma: float
    alpha: float
    beta: float
    nu: tuple[float, float, float, float]


def _pattern(s: PairStructure) -> tuple[float, list[float]] | None:
    """``(E, masses by (y1, y2))`` when every class has ``a, b`` in ``{1, E}`` (exact floats,
    one ``E > 1``), else ``None``."""
    vals = {v for v in s.a + s.b if v != 1.0}
    if len(vals) != 1:
        return None
    E = vals.pop()
    if not (E > 1.0 and math.isfinite(E)):
        return None
    masses = [0.0, 0.0, 0.0, 0.0]
    for p, a, b in zip(s.mass, s.a, s.b):
        masses[(a == E) + 2 * (b == E)] += p
    return E, masses


def _split(s: PairStructure, exact_masses: bool = False) -> _Split | None:
    """The decomposition of §2 (``None`` when the structure is not separable). ``q_y`` is at
    most the true mass (``exact_masses = False``: against ``p_y (1 - rel_err)``; ``nu`` bounds the
    true remainder) or at most the *stored* mass (``True``: ``nu`` bounds ``p_y - q_y`` for the
    stored ``p_y``; the true law is then within the factor of :func:`_mass_factor`, §5)."""
    pat = _pattern(s)
    if pat is None:
        return None
    E, p = pat
    r = 0.0 if exact_masses else s.rel_err
    low = [x * (1.0 - r) * (1.0 - 8 * _U) for x in p]  # <= every true (or stored) mass
    gam = math.fsum(p)
    alpha = (p[1] + p[3]) / gam
    beta = (p[2] + p[3]) / gam
    prod = [(1 - alpha) * (1 - beta), alpha * (1 - beta), (1 - alpha) * beta, alpha * beta]
    scale = min((lo / q if q > 0.0 else (math.inf if lo > 0.0 else 0.0)) for lo, q in zip(low, prod))
    if not scale > 0.0 or not math.isfinite(scale):
        scale = 0.0
    g1 = scale * (1.0 - 64 * _U)
    # certify q_y <= that mass: q_y computed with <= 6 roundings
    q = [g1 * x for x in prod]
    if any(qq * (1.0 + 16 * _U) > lo for qq, lo in zip(q, low)):  # pragma: no cover - margins above
        g1 = 0.0
        q = [0.0] * 4
    nu = tuple(fp.next_up(x * (1.0 + r) * (1.0 + 4 * _U) - qq * (1.0 - 16 * _U), 2) for x, qq in zip(p, q))
    return _Split(E, g1, alpha, beta, nu)  # type: ignore[arg-type]


def _mass_factor(s: PairStructure, sp: _Split) -> float:
    """``r'`` with ``(1 - r') Q <= P_true <= (1 + r') Q`` for every user category, ``Q`` the
    *product law alone* (a product draw of class ``y`` with probability ``q_y`` of
    :func:`_split` with ``exact_masses = True``, else silent) and ``P_true`` the exact per-user
    law (stored masses within ``rel_err``). Classes: ``P_true(y) <= p_y (1 + r) <= q_y (1 + r')``
    and ``P_true(y) >= p_y (1 - r) >= q_y (1 - r)``. Silent: ``Q = 1 - gamma' = P_true(silent)
    + sum_y (P_true(y) - q_y)``; the differences ``P_true(y) - q_y`` are at least ``-r p_y`` and
    at most ``p_y (1 + r) - q_y``, so ``P_true(silent)`` lies within ``Q -+ D`` with ``D = sum_y
    (p_y (1 + r) - q_y)`` (not ``P_true <= Q`` exactly: ``q_y <= p_y (1 - 8u)`` only), and both
    directions are covered by the term ``D / rest_lo`` in ``r'``. ``inf`` when a class has no
    product mass. The engine's factors are ``exp(n log1p(r'))`` and ``exp(n log1p(-r'))`` (the lower
    one ``(1 - r')^n`` itself, not ``(1 + r')^-n``, which is larger; ``log1p``, not ``log(1 - r')``,
    whose ``fl(1 - r')`` could round up by ``u / 2``, i.e. ``n u / 2`` in the log), each moved
    outward by ``1e-12`` relative in the log and in the value."""
    pat = _pattern(s)
    assert pat is not None
    _, p = pat
    r = s.rel_err
    q = [sp.gamma * x for x in ((1 - sp.alpha) * (1 - sp.beta), sp.alpha * (1 - sp.beta),
                                (1 - sp.alpha) * sp.beta, sp.alpha * sp.beta)]
    worst = 0.0
    for x, qq in zip(p, q):
        if x > 0.0:
            if not qq > 0.0:
                return math.inf
            worst = max(worst, x * (1.0 + r) * (1.0 + 16 * _U) / (qq * (1.0 - 16 * _U)) - 1.0)
    d = math.fsum(x * (1.0 + r) - qq * (1.0 - 16 * _U) for x, qq in zip(p, q)) * (1.0 + 16 * _U) + 16 * _U
    rest_lo = s.rest * (1.0 - r) * (1.0 - 4 * _U)
    if not rest_lo > d:
        return math.inf
    return max(worst, r, d / rest_lo) * (1.0 + 1e-6) + 8 * _U


def remainder_fraction(structure: PairStructure) -> float:
    """``sum_y nu_y / gamma`` of §2 (``inf`` when the structure is not separable)."""
    sp = _split(structure)
    return math.inf if sp is None else math.fsum(sp.nu) / structure.gamma


def suggested(structure: PairStructure, n: int) -> bool:
    """Whether this engine is suggested over the lattice of :mod:`.blanket_matrix` for ``n`` users
    (:data:`SEPARABLE_MAX_N`, or :data:`SEPARABLE_WIDE` at large ``eps0``; a cost decision only)."""
    return n <= SEPARABLE_MAX_N or any(n <= most and structure.max_log_ratio >= eps0 for eps0, most in SEPARABLE_WIDE)


def applies(structure: PairStructure) -> bool:
    """Whether :class:`SeparableBlanket` evaluates this structure *tightly*: separable classes
    (§1) and a remainder (§2) of at most :data:`MAX_REMAINDER` of the blanket mass. True for
    SUE, OUE (``k >= 40`` or so) and OLH (``g^{k-1} >= 1e12``); false for Hadamard response,
    subset selection with ``d >= 2``, k-RR and tiny domains (their brackets would be certified
    but loose)."""
    return remainder_fraction(structure) <= MAX_REMAINDER


@dataclass(frozen=True)
class _Eps:
    """Per-``eps`` constants: ``g``, ``rho = (g - 1)/(E - 1)``, the coefficient slack in
    ``kappa`` per draw (``sig``), the rounding constant of ``kappa`` per unit of ``g b + m rho``,
    and the factor ``E - 1`` rounded up / down."""

    g: float
    rho: float
    sig: float
    e1_up: float
    e1_lo: float


def _eps_constants(s: PairStructure, E: float, eps: float) -> _Eps:
    g = math.exp(eps)
    e1 = E - 1.0
    rho = math.expm1(eps) / e1  # g - 1 = expm1(eps) within 1 ulp of the float g's own error
    sigma = (s.rel_err + 16 * _U) * (E + g * E) * (1.0 + 8 * _U)
    # kappa = g b + m rho with rho's error (3 u relative, plus the gap between expm1(eps) and
    # g - 1: 2 u g) folded into the per-draw slack
    sig = (sigma / e1 + 4 * _U * rho + 4 * _U * g / e1) * (1.0 + 8 * _U)
    return _Eps(g, rho, sig, fp.next_up(e1, 2), fp.next_down(e1, 2))


def _f_cells(m: np.ndarray, kappa: np.ndarray, d: np.ndarray, alpha: float, tails: list[np.ndarray] | None = None
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``F(kappa) = E[(A - kappa)_+]``, ``A ~ Bin(m, alpha)``, elementwise (§4), an absolute
    error bound that also covers every ``kappa'`` with ``|kappa' - kappa| <= d``, and a certified
    lower bound on ``P[A > kappa + d]`` (the slope of §7; 0 where ``[kappa - d, kappa + d]`` meets
    the integer that would change it). With ``tails`` (a list; cells with ``kappa < m``), appends
    certified ``S_lo <= S(j) <= S_up`` and ``S_next <= S(j + 1)`` for ``S(j) = P[A >= j]``, ``j =
    floor(kappa) + 1`` (§8), from the same values: above the mean (``k = ceil(kappa)``) ``S(k) =
    P[A >= k]`` (the slope) and ``S(k + 1) = P[A' >= k] - (1 - alpha) P[A' = k]``, ``k = j`` unless
    ``kappa`` is an integer (then ``S(j) <= S(k)`` only, and 0 below); below it (``k = floor(kappa) =
    j - 1``) ``S(j) = 1 - P[A <= k]``; each within the relative budgets of its Boost values plus
    ``8 u``, ``4 u`` absolute for ``1 - x`` (and ``4 u (P[A' >= k] + P[A' = k])`` for ``S(k + 1)``'s
    difference) and 4 smallest normal numbers (values below the normal range, where the budgets say
    nothing); ``S_next = 0`` below the mean."""
    m = np.asarray(m, dtype=float)
    ma = m * alpha
    upper = kappa >= ma
    k = np.where(upper, np.ceil(kappa), np.floor(kappa))
    k = np.clip(k, -1.0, m + 1.0)
    m1 = m - 1.0
    p0 = bn.pmf(k, m1, alpha)  # P[A' = k]
    # P[A' = k - 1] = P[A' = k] k (1 - alpha) / ((m - k) alpha): exact ratio, 6 roundings; from
    # Boost where that ratio is not usable (edges, underflow)
    ok = (k >= 1.0) & (k <= m1) & (p0 > 1e-250)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        pm = np.where(ok, p0 * (k * (1.0 - alpha)) / ((m - k) * alpha), 0.0)
    if not np.all(ok):
        pm[~ok] = bn.pmf(k[~ok] - 1.0, m1[~ok], alpha)
    tail = np.empty(k.shape)
    if np.any(upper):
        tail[upper] = bn.sf(k[upper] - 1.0, m1[upper], alpha)  # P[A' >= k]
    if np.any(~upper):
        tail[~upper] = bn.cdf(k[~upper] - 1.0, m1[~upper], alpha)  # P[A' <= k - 1]
    nmax = float(np.max(m)) if m.size else 1.0
    rel_p = bn.pmf_error_budget(max(nmax, 1.0)) + 8 * _U  # (+ the ratio's roundings)
    rel_t = bn.tail_error_budget(k - 1.0, m1, alpha)
    # upper case: t1 + t2 + t3;  lower case: (m alpha - kappa) + t1 + t2 + t3
    frac_up = k - kappa  # in [0, 1)
    frac_lo = kappa - k
    t1 = np.where(upper, (ma - k) * tail, (k - ma) * tail)
    t2 = np.where(upper, k * (1.0 - alpha) * p0, (m - k) * alpha * pm)
    slope = np.where(upper, tail + alpha * pm, tail + (1.0 - alpha) * p0)  # P[A >= k] / P[A <= k]
    t3 = np.where(upper, frac_up, frac_lo) * slope
    t0 = np.where(upper, 0.0, ma - kappa)
    val = t0 + t1 + t2 + t3
    err = (np.abs(t1) * (rel_t + 8 * _U) + t2 * (rel_p + 8 * _U) + t3 * (np.maximum(rel_t, rel_p) + 8 * _U)
           + 8 * _U * (np.abs(t0) + np.abs(t1) + t2 + t3)
           + 8 * _U * (ma + np.abs(k) + np.abs(kappa) + 1.0) * (tail + p0 + pm)
           # the lower case's t0 = m alpha - kappa uses ma = fl(m alpha) (u ma off) and the subtraction
           + np.where(upper, 0.0, 2 * _U * (ma + np.abs(kappa))))
    # moving kappa by up to d: F is 1-Lipschitz, with slope P[A >= ceil(kappa')] in the upper case;
    # where [kappa - d, kappa + d] meets an integer (or in the lower case) charge slope 1
    near = (np.floor(kappa + d) != np.floor(kappa - d)) | ~upper
    err = err + d * np.where(near, 1.0, slope * (1.0 + rel_t + rel_p + 8 * _U))
    # below the normal range the relative budgets say nothing: each of tail, p0, pm may be off by
    # the smallest normal number (a value returned as 0 or subnormal), times coefficients <= m + 1
    err = err + 8.0 * (m + 2.0) * fp.SMALLEST_NORMAL
    zero = kappa - d >= m  # A <= m < kappa' for every kappa' nearby: F = 0 exactly
    val = np.where(zero, 0.0, np.maximum(val, 0.0))
    err = np.where(zero, 0.0, err)
    # P[A > kappa + d] = P[A >= floor(kappa + d) + 1]: the upper case's P[A >= k] when floor(kappa + d)
    # = k - 1, the lower case's 1 - P[A <= k] when floor(kappa + d) = k; else 0 (pessimistic)
    kd = np.floor(kappa + d)
    s_rel = rel_t + rel_p + 8 * _U
    s_lo = np.where(upper & (kd + 1.0 == k), slope * (1.0 - s_rel),
                    np.where(~upper & (kd == k), 1.0 - slope * (1.0 + s_rel) - 4 * _U, 0.0))
    s_lo = np.where(zero, 0.0, np.maximum(s_lo, 0.0))
    if tails is not None:
        tiny = 4.0 * fp.SMALLEST_NORMAL
        at_j = upper & (k == np.floor(kappa) + 1.0)  # (kappa not an integer)
        sj_lo = np.where(at_j, slope * (1.0 - s_rel) - tiny,
                         np.where(upper, 0.0, 1.0 - slope * (1.0 + s_rel) - 4 * _U - tiny))
        sj_up = np.where(upper, slope * (1.0 + s_rel) + tiny, 1.0 - slope * (1.0 - s_rel) + 4 * _U + tiny)
        nxt = np.where(at_j, tail * (1.0 - s_rel) - (1.0 - alpha) * p0 * (1.0 + s_rel) - 4 * _U * (tail + p0) - tiny,
                       0.0)
        tails += [np.clip(sj_lo, 0.0, 1.0), np.clip(sj_up, 0.0, 1.0), np.clip(nxt, 0.0, 1.0)]
    return val, err, s_lo


def _ranges(start: np.ndarray, count: np.ndarray) -> np.ndarray:
    """``start[i], start[i] + 1, .., start[i] + count[i] - 1`` for every ``i``, concatenated in
    order (``count`` non-negative integers; the runs of cells and pmf points of this module)."""
    first = np.repeat(np.cumsum(count) - count, count)
    return np.repeat(start, count) + (np.arange(int(np.sum(count))) - first)


#: a run's pmf is computed (and kept) this many points wider on each side than asked, so that the
#: next evaluation at a nearby eps finds its (slightly moved) run inside the kept one
PMF_PAD = 8
#: the kept values of one :class:`RunPmf` law are dropped when they exceed this many points
PMF_KEEP = 2_000_000
#: the laws every :class:`SeparableBlanket` shares (:class:`RunPmf` with ``shared``): at most this many
#: points and sizes kept over all of them (the least recently used laws are dropped first; 16 bytes a point,
#: 24 a size), besides the law in use
SHARED_KEEP = 2_000_000

_Law = tuple[np.ndarray, np.ndarray, np.ndarray, list[np.ndarray]]
#: per (role, p, segment): the shared laws, least recently used first (guarded by :data:`_SHARED_LOCK`)
_SHARED: dict[tuple[int, float, int], _Law] = {}
_SHARED_LOCK = threading.Lock()


#: the block masses of :func:`_block_masses` kept (per ``(N, gamma', edges)``; at most this many)
MASSES_KEEP = 64
_MASSES: dict[tuple[int, float, bytes], tuple[np.ndarray, np.ndarray]] = {}


def _block_masses(edges: np.ndarray, N: int, gam: float) -> tuple[np.ndarray, np.ndarray]:
    """``bn.interval_mass(left - 1, right - 2, N, gam)`` for the blocks ``[left, right)`` of ``m`` between
    consecutive ``edges`` (the masses of §3 with ``m - 1 ~ Bin(N, gamma')``), kept across instances: a
    pure function of ``(N, gamma', edges)``, which is the key (``gamma'`` compared exactly, the edges
    as bytes); the same numbers as a fresh call (read-only arrays). The first partition of ``m``
    depends on ``n`` and ``gamma'`` only, so another delta, eps or a repeated query finds it kept."""
    key = (N, gam, np.ascontiguousarray(edges, dtype=np.int64).tobytes())
    with _SHARED_LOCK:
        hit = _MASSES.get(key)
    if hit is None:
        left, right = edges[:-1], edges[1:]
        hit = bn.interval_mass(left - 1.0, right - 2.0, N, gam)
        for x in hit:
            x.flags.writeable = False
        with _SHARED_LOCK:
            while len(_MASSES) >= MASSES_KEEP:
                _MASSES.pop(next(iter(_MASSES)))
            _MASSES[key] = hit
    return hit


def _pmf_on_runs(start: np.ndarray, count: np.ndarray, m: np.ndarray, p: float, segment: int
                 ) -> tuple[np.ndarray, np.ndarray]:
    """``bn.pmf_points(_ranges(start, count), np.repeat(m, count), p, segment)`` for runs of distinct
    sizes ``m`` inside ``[0, m]``, without finding the runs again: the very same numbers (values and
    bounds, bit for bit): the same segments (every run of at least ``bn.RUN_MIN`` points cut into
    ``segment`` from its start, shorter runs from Boost point by point), evaluated by the same
    :func:`.binomial.pmf_segments`, and the same fall-back to Boost point by point. Runs outside the
    support, or sizes repeated, go to ``pmf_points``."""
    count = count.astype(np.int64)
    total = int(np.sum(count))
    k_all = _ranges(start, count)
    m_all = np.repeat(m, count)
    if (total < bn.RUN_MIN or not 0.0 < p < 1.0 or np.unique(m).size != m.size
            or np.any(start < 0.0) or np.any(start + count - 1.0 > m)):
        return bn.pmf_points(k_all, m_all, p, segment=segment)
    rel = bn.pmf_error_budget(float(np.max(m, initial=0.0)))
    out = np.empty(total)
    rel_out = np.full(total, rel)
    todo = np.ones(total, dtype=bool)
    first = np.cumsum(count) - count  # each run's first flat index
    runs = np.nonzero(count >= bn.RUN_MIN)[0]
    if runs.size:
        n_seg = -(-count[runs] // segment)
        seg_run = np.repeat(runs, n_seg)
        seg_pos = (np.arange(int(np.sum(n_seg))) - np.repeat(np.cumsum(n_seg) - n_seg, n_seg)) * segment
        seg_len = np.minimum(segment, count[seg_run] - seg_pos)
        vals, rel_v, good = bn.pmf_segments(start[seg_run] + seg_pos, m[seg_run], seg_len, p, segment, rel)
        at = ((first[seg_run] + seg_pos)[:, None] + np.arange(segment)[None, :])[good]
        out[at] = vals[good]
        rel_out[at] = rel_v[good]
        todo[at] = False
    if np.any(todo):
        out[todo] = bn.pmf(k_all[todo], m_all[todo], p)
    return out, rel_out


class RunPmf:
    """``P[Bin(m, p) = i]`` on runs ``i = lo .. hi`` of consecutive integers, one run per size ``m
    <= m_max``, with each value's relative error bound, kept across calls: the laws of ``A`` and
    ``B`` (§4) do not depend on eps, only the windows do, and the search's evaluations at nearby
    eps ask for nearly the same windows. A run inside a kept one (same role, ``p``, segment and ``m``)
    is a slice of it: every value comes with its own bound from :func:`.binomial.pmf_points` (Boost
    budget plus ``8u`` per step from its anchor), so a slice is as certified as a fresh call; only
    the last bits may differ from a fresh call's (other anchors). Other runs are computed together
    in one call, :data:`PMF_PAD` points wider per side (within ``[0, m]``), and kept (a newer run
    of an ``m`` replaces the older).

    With ``shared``, the kept runs are those of the module (:data:`_SHARED`), common to every
    :class:`SeparableBlanket`: the laws depend on the structure only (``alpha``, ``beta`` of §2), not on
    ``n`` or eps, so a new query for the same randomizer (another delta, another ``n``, a repeated
    call) finds most of its runs kept. The key is everything a value depends on (role, ``p``, the
    anchors' ``segment``, ``m``; ``p`` compared exactly); the arrays grow with the largest ``m`` asked;
    at most :data:`SHARED_KEEP` points are kept over all laws. Results then depend on what was
    asked before in the process in their last bits only (as between the evaluations of one search);
    every value stays certified."""

    def __init__(self, m_max: int, shared: bool = False) -> None:
        self._m_max = m_max
        # per (role, p, segment): run start per m (NaN: none), run length, offset into the kept values
        self._laws: dict[tuple[int, float, int], _Law] = _SHARED if shared else {}
        self._shared = shared

    def points(self, tag: int, ms: np.ndarray, lo: np.ndarray, hi: np.ndarray, p: float,
               segment: int = bn.RUN_SEGMENT) -> tuple[np.ndarray, np.ndarray]:
        """Values and relative bounds at ``lo[i] .. hi[i]`` for every ``i`` (empty where ``hi[i] <
        lo[i]``), concatenated in order. ``tag`` names the caller's role (runs of ``A`` and of ``B``
        at one ``m`` lie elsewhere, even where ``alpha = beta``, and must not replace each other)."""
        if not self._shared:
            return self._points(tag, ms, lo, hi, p, segment)
        with _SHARED_LOCK:
            return self._points(tag, ms, lo, hi, p, segment)

    def _points(self, tag: int, ms: np.ndarray, lo: np.ndarray, hi: np.ndarray, p: float,
                segment: int) -> tuple[np.ndarray, np.ndarray]:
        key = (tag, p, segment)
        m_max = max(self._m_max, int(np.max(ms, initial=0.0)))
        law = self._laws.pop(key, None)  # (re-inserted below: the dict's order is that of use)
        new_sizes = law is None or law[0].size < m_max + 2
        if law is None or law[3][0].size > PMF_KEEP:
            law = (np.full(m_max + 2, np.nan), np.zeros(m_max + 2), np.zeros(m_max + 2, dtype=np.int64),
                   [np.zeros(0), np.zeros(0)])
        elif law[0].size < m_max + 2:  # (shared: a larger n than before) no run kept for the new sizes
            grow = m_max + 2 - law[0].size
            law = (np.concatenate((law[0], np.full(grow, np.nan))), np.concatenate((law[1], np.zeros(grow))),
                   np.concatenate((law[2], np.zeros(grow, dtype=np.int64))), law[3])
        self._laws[key] = law
        start, length, offset, kept = law
        mi = ms.astype(np.int64)
        n_pts = np.maximum(hi - lo + 1.0, 0.0).astype(np.int64)
        with np.errstate(invalid="ignore"):
            inside = (start[mi] <= lo) & (hi <= start[mi] + length[mi] - 1.0)
        miss = np.nonzero(~inside & (n_pts > 0))[0]
        if miss.size:
            m_miss = ms[miss].astype(float)
            a_pad = np.maximum(lo[miss] - PMF_PAD, 0.0)
            b_pad = np.maximum(np.minimum(hi[miss] + PMF_PAD, m_miss), hi[miss])
            c_pts = (b_pad - a_pad + 1.0).astype(np.int64)
            w, rel = _pmf_on_runs(a_pad, c_pts, m_miss, p, segment)
            base = kept[0].size
            kept[0] = np.concatenate((kept[0], w))
            kept[1] = np.concatenate((kept[1], rel))
            start[mi[miss]] = a_pad
            length[mi[miss]] = c_pts
            offset[mi[miss]] = base + np.cumsum(c_pts) - c_pts
        if self._shared and (miss.size or new_sizes):
            self._drop_least_used(key)
        skip = np.where(n_pts > 0, lo - start[mi], 0.0).astype(np.int64)  # (no run kept for empty ones)
        at = _ranges(offset[mi] + skip, n_pts)
        return kept[0][at], kept[1][at]

    def _drop_least_used(self, key: tuple[int, float, int]) -> None:
        """Drops the least recently used shared laws (never ``key``'s) while they hold more than
        :data:`SHARED_KEEP` points and entries per size (a law's index arrays have one per ``m``)."""
        def size(law: _Law) -> int:
            return int(law[3][0].size + law[0].size)

        total = sum(size(law) for law in self._laws.values())
        for other in list(self._laws):
            if total <= SHARED_KEEP:
                break
            if other != key:
                total -= size(self._laws.pop(other))


#: a run of cells whose integer grid (:func:`_f_runs`) is longer than this many times its cells
#: plus :data:`GRID_EXTRA` is evaluated cell by cell (:func:`_f_cells`) instead
GRID_FACTOR = 3
GRID_EXTRA = 64


def _f_runs(ms: np.ndarray, seg: np.ndarray, m: np.ndarray, kappa: np.ndarray, d: np.ndarray,
            alpha: float, pmf: RunPmf | None = None, tails: list[np.ndarray] | None = None
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_f_cells` for runs of cells, one run per ``ms[i]`` starting at ``seg[i]`` with
    ``kappa`` non-decreasing along the run, through ``F`` at the integers (§4b): same contract
    (values, absolute error bounds covering ``|kappa' - kappa| <= d``, lower bounds on ``P[A >
    kappa + d]``: ``S(j) - err`` where ``kappa + d < j``, else 0), a few Boost values per run
    instead of two per cell. Runs whose grid would be long (``g = e^eps`` large) go cell by
    cell. ``pmf`` keeps the pmf runs of ``A`` across calls (a fresh one when not given). With
    ``tails`` (a list), appends per cell ``j`` and certified ``[S_lo, S_up]`` for ``S(j) = P[A >=
    j]`` (§8): ``j = floor(kappa) + 1`` and the grid's ``S(j) -+ err`` on the runs, :func:`_f_cells`'
    bounds for cells evaluated one by one, ``j = m + 1`` and ``[0, 0]`` where ``kappa >= m``."""
    pmf = pmf if pmf is not None else RunPmf(int(np.max(ms, initial=0.0)))
    n_runs = ms.size
    ends = np.append(seg[1:], kappa.size)
    counts = ends - seg
    fval = np.zeros(kappa.size)
    ferr = np.zeros(kappa.size)
    slo = np.zeros(kappa.size)
    k0 = np.floor(kappa)
    j = k0 + 1.0  # F(kappa) = F(j) + (j - kappa) S(j)
    mm = m.astype(float)
    # cells with kappa >= m: F = 0 on [kappa - d, kappa + d] unless kappa - d < m (slope <= 1)
    beyond = k0 >= mm
    jhi = np.minimum(j[ends - 1], ms)  # top of each run's grid (<= m)
    jlo = np.minimum(j[seg], jhi)
    length = (jhi - jlo + 1.0).astype(np.int64)
    grid = length <= GRID_FACTOR * counts + GRID_EXTRA
    cell_run = np.repeat(np.arange(n_runs), counts)
    by_cell = ~grid[cell_run] & ~beyond
    one_by_one: list[np.ndarray] = []  # (their S(j) bounds, §8)
    if np.any(by_cell):
        fval[by_cell], ferr[by_cell], slo[by_cell] = _f_cells(m[by_cell], kappa[by_cell], d[by_cell], alpha,
                                                              one_by_one if tails is not None else None)
    rows = np.nonzero(grid)[0]
    if rows.size:
        r_ms, r_lo, r_hi, r_len = ms[rows], jlo[rows], jhi[rows], length[rows]
        width = int(np.max(r_len))
        # anchors at the top: S(jhi) = P[A >= jhi], F(jhi) = E[(A - jhi)_+] (0 when jhi = m)
        s_top = bn.sf(r_hi - 1.0, r_ms, alpha)
        s_rel = bn.tail_error_budget(r_hi - 1.0, r_ms, alpha) + 8 * _U
        top_in = r_hi < r_ms
        f_top = np.zeros(rows.size)
        f_top_err = np.zeros(rows.size)
        if np.any(top_in):
            f_top[top_in], f_top_err[top_in], _ = _f_cells(r_ms[top_in], r_hi[top_in],
                                                           np.zeros(int(np.sum(top_in))), alpha)
        # P[A = i] for i = jlo .. jhi - 1 (increasing runs: ratio recurrences from Boost anchors)
        n_pts = r_len - 1
        pts_row = np.repeat(np.arange(rows.size), n_pts)
        pts = _ranges(r_lo, n_pts)
        w, w_rel = pmf.points(0, r_ms, r_lo, r_hi - 1.0, alpha)
        # reversed layout: column t holds the integer jhi - t (t = 0: the anchor)
        col = (np.repeat(r_hi, n_pts) - pts).astype(np.int64)
        pm = np.zeros((rows.size, width))
        pm_err = np.zeros((rows.size, width))
        flat_pts = pts_row * width + col  # (flat indices: numpy's 2-D fancy indexing costs ~3x more)
        pm.ravel()[flat_pts] = w
        pm_err.ravel()[flat_pts] = w * w_rel
        pm[:, 0] = s_top
        pm_err[:, 0] = s_top * s_rel
        # S(jhi - t) = S(jhi) + sum of P[A = i] above it; F(jhi - t) = F(jhi) + sum_{t' < t} S(jhi - t')
        # (sums of non-negative terms; numpy's running sums: (width + 2) u relative each)
        # (and below the normal range, where relative budgets say nothing, each term may be off by
        # the smallest normal number: (width + 2) of them in an S, (width + 2)^2 in an F)
        run_rel = (width + 4) * _U
        s_grid = np.cumsum(pm, axis=1)
        s_err = np.cumsum(pm_err, axis=1) * (1.0 + run_rel) + run_rel * s_grid + (width + 2.0) * fp.SMALLEST_NORMAL
        f_grid = np.zeros((rows.size, width))
        f_err = np.zeros((rows.size, width))
        f_grid[:, 1:] = np.cumsum(s_grid[:, :-1], axis=1)
        f_err[:, 1:] = np.cumsum(s_err[:, :-1], axis=1) * (1.0 + run_rel)
        f_grid += f_top[:, None]
        f_err += f_top_err[:, None] + run_rel * f_grid
        # the cells of these runs
        row_of_run = np.full(n_runs, -1)
        row_of_run[rows] = np.arange(rows.size)
        cells = np.nonzero(grid[cell_run] & ~beyond)[0]
        if cells.size:
            rr = row_of_run[cell_run[cells]]
            t = (jhi[cell_run[cells]] - j[cells]).astype(np.int64)
            at = rr * width + t
            sv, se, fv, fe = (np.take(x, at) for x in (s_grid, s_err, f_grid, f_err))
            kc, jc, dd = kappa[cells], j[cells], d[cells]
            frac = jc - kc  # in (0, 1]; exact for j >= 2 (Sterbenz), else u off
            val = fv + frac * sv
            err = fe + frac * se + 4 * _U * val
            # F is linear with slope S(j) on [j - 1, j]; where [kappa - d, kappa + d] leaves it, 1
            below_j = kc + dd < jc
            inside = (np.floor(kc - dd) == k0[cells]) & below_j
            err = err + dd * np.where(inside, (sv + se) * (1.0 + 4 * _U), 1.0)
            fval[cells], ferr[cells] = val, err
            # P[A > kappa'] = S(j) for every kappa' in [kappa, kappa + d] when kappa + d < j
            slo[cells] = np.where(below_j, np.maximum(sv - se, 0.0) * (1.0 - 2 * _U), 0.0)
    if np.any(beyond):
        near = kappa[beyond] - d[beyond] < mm[beyond]
        ferr[beyond] = np.where(near, d[beyond], 0.0)
    if tails is not None:
        # (and S(j + 1) from below, S(j - 1) from above: the grid's columns t - 1 and t + 1 where the
        # row has them, else 0 / 1)
        s_lo, s_up = np.zeros(kappa.size), np.ones(kappa.size)
        s_next, s_prev = np.zeros(kappa.size), np.ones(kappa.size)
        if rows.size and cells.size:
            s_lo[cells] = np.maximum(sv - se, 0.0)
            s_up[cells] = np.minimum(sv + se, 1.0)
            has_next = t >= 1
            tn = np.maximum(t - 1, 0)
            at = rr * width + tn
            s_next[cells] = np.where(has_next, np.maximum(np.take(s_grid, at) - np.take(s_err, at), 0.0), 0.0)
            has_prev = t + 1 <= r_len[rr] - 1
            tp = np.minimum(t + 1, width - 1)
            at = rr * width + tp
            s_prev[cells] = np.where(has_prev, np.minimum(np.take(s_grid, at) + np.take(s_err, at), 1.0), 1.0)
        if one_by_one:
            s_lo[by_cell], s_up[by_cell], s_next[by_cell] = one_by_one
        s_up[beyond] = 0.0
        s_next[beyond] = 0.0
        tails += [np.where(beyond, mm + 1.0, j), s_lo, s_up, s_next, s_prev]
    return fval, ferr, slo


def _remainder_terms(rel_err: float, sp: _Split, g: float) -> tuple[float, float]:
    """``(sum nu_y (c_y)_+, sum nu_y (c_y)_-)`` of §2 at ``g = e^eps``, both rounded up (the
    coefficients ``c_y`` moved outward by their slack)."""
    E = sp.E
    c = [1.0 - g, E - g, 1.0 - g * E, E * (1.0 - g)]
    slack = (rel_err + 16 * _U) * (E + g * E) * (1.0 + 8 * _U) + 4 * _U * (E + g * E)
    pos = math.fsum(nu * max(cc + slack, 0.0) for nu, cc in zip(sp.nu, c))
    neg = math.fsum(nu * max(-(cc - slack), 0.0) for nu, cc in zip(sp.nu, c))
    return pos * (1.0 + 16 * _U), neg * (1.0 + 16 * _U)


@dataclass(frozen=True)
class ProductLaw:
    """The product part of §2 for another engine (the lattice of :mod:`.blanket_matrix`): per
    class ``(y1, y2)`` in the order ``(0,0), (1,0), (0,1), (1,1)`` the ratios ``a = E^{y1}``, ``b =
    E^{y2}`` and the masses ``q_y`` (floats, *exact* masses of the product law by definition; each
    at most the true class mass), the silent mass ``rest = 1 - sum q_y`` correctly rounded
    (relative error at most ``u``), and the decomposition whose remainder
    (:func:`product_remainder`) turns bounds for the product law into bounds for the true law."""

    a: tuple[float, float, float, float]
    b: tuple[float, float, float, float]
    mass: tuple[float, float, float, float]
    rest: float
    rel_err: float
    split: _Split


def product_law(structure: PairStructure) -> ProductLaw | None:
    """:class:`ProductLaw` of a separable structure (``None`` otherwise, or when nothing is
    product-form)."""
    sp = _split(structure)
    if sp is None or not sp.gamma > 0.0:
        return None
    prod = ((1 - sp.alpha) * (1 - sp.beta), sp.alpha * (1 - sp.beta), (1 - sp.alpha) * sp.beta, sp.alpha * sp.beta)
    q = tuple(sp.gamma * x for x in prod)  # the very floats _split certified (q_y <= p_y (1 - r))
    rest = math.fsum([1.0] + [-x for x in q])
    E = sp.E
    return ProductLaw((1.0, E, 1.0, E), (1.0, 1.0, E, E), q, rest, structure.rel_err, sp)  # type: ignore[arg-type]


def product_remainder(law: ProductLaw, eps: float) -> tuple[float, float]:
    """``(r_+, r_-)`` with ``delta' - r_- <= delta <= delta' + r_+`` at ``eps`` (§2), ``delta'`` the
    bound for the product law alone (route A: ``nu`` bounds the true masses' excess over ``q``)."""
    return _remainder_terms(law.rel_err, law.split, math.exp(eps))


def _kl(x: np.ndarray, p: float) -> np.ndarray:
    """``KL(Bern(x) || Bern(p))`` elementwise (``x`` in ``[0, 1]``)."""
    return xlogy(x, x / p) + xlogy(1.0 - x, (1.0 - x) / (1.0 - p))


def _f_estimate_up(m: np.ndarray, kappa: np.ndarray, alpha: float) -> np.ndarray:
    """An *estimate* (an upper bound in exact arithmetic, used only to choose windows) of ``F(kappa)
    = E[(A - kappa)_+]``, ``A ~ Bin(m, alpha)``: ``(m alpha - kappa)_+ + sd`` (``E[(A - m alpha)_+]
    <= sd / 2``), above the mean also ``e^{-m KL(kappa/m || alpha)} / (e t*)`` (``x_+ <= e^{t x} /
    (e t)`` with the Chernoff tilt ``t* = log(kappa (1 - alpha) / ((m - kappa) alpha))``); 0 for
    ``kappa >= m``."""
    ma = m * alpha
    sd = np.sqrt(m * alpha * (1.0 - alpha))
    out = np.maximum(ma - kappa, 0.0) + sd
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        x = kappa / m
        tail = (kappa > ma) & (kappa < m)
        ts = np.log(kappa * (1.0 - alpha) / ((m - kappa) * alpha))
        cher = np.exp(-m * _kl(x, alpha)) / (math.e * ts)
        out = np.where(tail & (ts > 0.0) & np.isfinite(cher), np.minimum(out, cher), out)
    return np.where(kappa >= m, 0.0, out)


@dataclass(frozen=True)
class _SlopeState:
    """What §7 keeps of one computation at ``eps``: per term of the lower end (one ``m`` per block)
    the lower block mass ``w``, ``G_lo(m)`` and ``D_lo(m)``; the factor ``gamma' (1 - s_rel)
    (1 - 8u)``, the remainder ``r_-`` (route A; 0 for route B) and route B's factor ``shrink``."""

    eps: float
    w: np.ndarray
    g_lo: np.ndarray
    d_lo: np.ndarray
    factor: float
    rem_neg: float
    shrink: float

    def at(self, eps: float) -> float:
        """The certified lower bound of §7 at ``eps < self.eps`` (``eps >= self.eps / 2``)."""
        dg = fp.exp_gap_down(eps, self.eps)  # e^{eps_b} - e^{eps}, rounded down
        terms = self.w * (self.g_lo + dg * self.d_lo)  # non-negative, 3 roundings each
        total = float(np.sum(terms)) * (1.0 - 4 * _U) * self.factor
        return max(total - self.rem_neg, 0.0) * (1.0 - 2 * _U) * self.shrink * (1.0 - 2 * _U)


#: every computation aims at least this narrow a relative width: a search's coarse first look is
#: followed by the same ``eps`` at its final width (or a nearby one, §8), and a cold computation
#: costs more than the narrower plan (measured: SUE k = 100, eps0 = 3, n = 300: 3.3 ms at rtol 1e-2,
#: then 2.3 ms at 7.5e-6)
LOOK_RTOL = 1e-5
#: a bracket at ``eps`` is first sought from the kit (§8) of a computation within this relative
#: distance of ``eps``
EXTRAPOLATE_REL = 1e-3


class _LazyKits(dict):  # type: ignore[type-arg]
    """The kits of §8 per eps, each made on first use from what its computation left (the arrays are
    not changed afterwards): a search that ends with that computation (one evaluation) never pays for
    regrouping its cells (~0.05-0.1 ms a computation at n = 100 .. 1e3). ``[]`` and ``get`` give the
    :class:`_Kit`, the same object as when it was made at once."""

    def later(self, eps: float, make: Callable[[], _Kit]) -> None:
        super().__setitem__(eps, make)

    def __getitem__(self, eps: float) -> _Kit:
        kit = super().__getitem__(eps)
        if not isinstance(kit, _Kit):
            kit = kit()
            super().__setitem__(eps, kit)
        return kit

    def get(self, eps: float, default: _Kit | None = None) -> _Kit | None:  # type: ignore[override]
        return self[eps] if eps in self else default


@dataclass(frozen=True)
class _Kit:
    """What §8 keeps of one computation at ``eps``: its product split ``sp``, per-eps constants
    ``ec`` and route factors; the blocks of ``m`` (``left``, ``right``, ``single``, masses ``w`` and
    their error ``w_err``) and the masses of ``m`` outside the window with ``hi``; per evaluated ``m``
    (sorted ``ms``) ``G_up``, ``G_lo``, the cells' first index ``seg``, the relative bound ``rel`` of
    their ``P[B = b]`` and sums, ``P[B]`` below and above the window (rounded up); per cell ``mm``,
    ``b``, ``w = P[B = b]`` and ``j`` with ``S_lo <= P[A >= j] <= S_up``, ``s_next <= S(j + 1)`` and
    ``S(j - 1) <= s_prev``."""

    eps: float
    sp: _Split
    ec: _Eps
    route_b: bool
    gam: float
    grow: float
    shrink: float
    left: np.ndarray
    right: np.ndarray
    single: np.ndarray
    w: np.ndarray
    w_err: np.ndarray
    p_below: float
    p_above: float
    hi: int
    ms: np.ndarray
    g_up: np.ndarray
    g_lo: np.ndarray
    seg: np.ndarray
    rel: np.ndarray
    b_below: np.ndarray
    b_above: np.ndarray
    mm: np.ndarray
    b: np.ndarray
    wb: np.ndarray
    j: np.ndarray
    s_lo: np.ndarray
    s_up: np.ndarray
    s_next: np.ndarray
    s_prev: np.ndarray
    #: :meth:`slopes` at the kit's own ``g`` (the same for every nearby eps), once computed
    own: dict[bool, np.ndarray] = field(default_factory=dict)

    def slopes(self, ec: _Eps, rel_err: float, lower: bool) -> np.ndarray:
        """Per ``m`` of the kit, a certified lower (``lower``) or upper bound on ``D_m(g) = E[T_m 1{S_m(g)
        > 0}] / m`` at the ``g`` of ``ec`` (§8)."""
        if ec is self.ec:
            if lower not in self.own:
                self.own[lower] = self._slopes(ec, rel_err, lower)
            return self.own[lower]
        return self._slopes(ec, rel_err, lower)

    def _slopes(self, ec: _Eps, rel_err: float, lower: bool) -> np.ndarray:
        kappa = ec.g * self.b + self.mm * ec.rho
        d = self.mm * ec.sig + 8 * _U * (ec.g * self.b + self.mm * ec.rho) * (1.0 + 1e-9)
        pad = 4 * _U * (kappa + d + 1.0)  # the roundings of kappa -+ d
        # S(j + 1) from below / S(j - 1) from above: the cell's own grid neighbours (s_next, s_prev) and
        # the neighbouring cells of the same m (b -+ 1), whose j are at least j + 1 / at most j - 1 (g >= 1;
        # S is non-increasing), the better of the two
        first = np.zeros(self.b.size, dtype=bool)
        first[self.seg] = True
        if lower:
            nxt_j = np.where(np.append(first[1:], True), -np.inf, np.append(self.j[1:], -np.inf))
            nxt_lo = np.maximum(np.where(nxt_j >= self.j + 1.0, np.append(self.s_lo[1:], 0.0), 0.0), self.s_next)
            x = kappa + d + pad
            p = np.where(x < self.j, self.s_lo, np.where(x < self.j + 1.0, nxt_lo, 0.0))  # <= P[A > kappa + d]
            t_sum = np.add.reduceat(self.wb * ((self.mm + ec.e1_lo * self.b) * p), self.seg)
            t_lo = (1.0 - rel_err - 16 * _U) * (1.0 - 8 * _U)
            return np.maximum(t_sum * (1.0 - self.rel - 8 * _U) * t_lo / self.ms * (1.0 - 2 * _U), 0.0)
        prv_j = np.where(first, np.inf, np.append(np.inf, self.j[:-1]))
        prv_up = np.minimum(np.where(prv_j <= self.j - 1.0, np.append(1.0, self.s_up[:-1]), 1.0), self.s_prev)
        x = kappa - d - pad
        p = np.where(x >= self.j - 1.0, self.s_up, np.where(x >= self.j - 2.0, prv_up, 1.0))  # >= P[A > kappa - d]
        t_sum = np.add.reduceat(self.wb * ((self.mm + ec.e1_up * self.b) * p), self.seg)
        t_up = (1.0 + rel_err + 16 * _U) * (1.0 + 8 * _U)
        # b outside the window: T <= t_up (m + (E - 1) m); above it, P[A > kappa_b - d] is at most that of
        # the window's last cell (kappa_b - d increases with b)
        last = np.append(self.seg[1:], self.b.size) - 1
        outside = (self.b_below + self.b_above * p[last]) * (self.ms + ec.e1_up * self.ms) * (1.0 + 4 * _U)
        return (t_sum * (1.0 + self.rel + 8 * _U) + outside) * t_up / self.ms * (1.0 + 2 * _U)


class SeparableBlanket:
    """Certified ``delta(eps)`` of the blanket bound for ONE separable :class:`PairStructure`
    (module docstring): a :class:`~.profile.PrivacyProfile` with ``bounds``, ``max_log_ratio``,
    and the search's estimates ``surrogate`` / ``log_slope`` (those of
    :class:`.blanket_matrix.PairBlanket`, which only depend on the structure)."""

    def __init__(self, structure: PairStructure, n: int) -> None:
        self.structure = structure
        self.n = _N_RANGE.check(n)
        sp = _split(structure)
        if sp is None:
            raise InvalidParameter(
                "separable blanket: every class must have likelihood ratios (a, b) in {1, E}^2 for one E > 1"
            )
        self._sp = sp  # route A of §5: remainder bounds the true masses' rounding additively
        sp_b = _split(structure, exact_masses=True)  # route B: rounding as a factor
        assert sp_b is not None
        self._sp_b: _Split = sp_b
        self._factor = _mass_factor(structure, sp_b)
        self._edges: np.ndarray | None = None  # the m partition of the last call (warm start)
        self._pmf = RunPmf(n, shared=True)  # the laws' pmf runs, kept across calls and instances
        self._cache: dict[float, tuple[DeltaBounds, float]] = {}
        self._estimator: PairBlanket | None = None
        self._slopes: dict[float, _SlopeState] = {}  # §7 per eps of a finished computation
        self._last: float | None = None  # eps of the last bounds() call
        #: per-cell data of the computations being made (§8), and the kits kept per eps
        self._collect: list[tuple[np.ndarray, ...]] | None = None
        self._kits: _LazyKits = _LazyKits()
        #: eps answered from a kit -> the eps of that kit's computation (lower_at, §7)
        self._from: dict[float, float] = {}

    # -- estimates (steer a search; never reported) ------------------------------------------

    def _est(self) -> PairBlanket:
        """The lattice engine's object for the same structure, used for its saddle-point
        *estimates* only (``log_estimate`` needs the structure alone; nothing is computed on a
        lattice)."""
        if self._estimator is None:
            from .blanket_matrix import PairBlanket as _Pair

            self._estimator = _Pair(self.structure, self.n, method="lattice")
        return self._estimator

    def surrogate(self, eps: np.ndarray) -> np.ndarray:
        """*Estimate* of ``delta`` on an array of ``eps`` (saddle point; steers the search only)."""
        return self._est().surrogate(eps)

    def log_slope(self, eps: float) -> float:
        """*Estimate* of ``d log delta / d eps`` (steers the search only): :meth:`measured_log_slope`
        where a computation lies within ``1e-3 eps``, else the saddle point's."""
        slope = self.measured_log_slope(eps)
        return slope if math.isfinite(slope) else self._est().log_slope(eps)

    def measured_log_slope(self, eps: float) -> float:
        """*Estimate* of ``d log delta / d eps`` from the computation nearest ``eps`` (within ``1e-3
        eps``; ``nan`` when there is none): ``-g D / delta`` with ``D = -d delta / dg`` of §7 summed
        over the lower end's terms (the ``D_lo`` and ``G_lo`` the evaluation kept). Steers the
        search only (its Newton steps; the saddle point's slope is 16 % off for OLH k = 100, eps0 =
        4, n = 100, where the search then took 13 evaluations)."""
        near = [e for e in self._slopes if abs(e - eps) <= 1e-3 * eps]
        if not near:
            return math.nan
        st = self._slopes[min(near, key=lambda e: abs(e - eps))]
        scale = st.factor * st.shrink
        value = float(np.sum(st.w * st.g_lo)) * scale - st.rem_neg * st.shrink
        slope = float(np.sum(st.w * st.d_lo)) * scale
        if not (value > 0.0 and slope > 0.0):
            return math.nan
        return -math.exp(st.eps) * slope / value

    @property
    def max_log_ratio(self) -> float:
        return self.structure.max_log_ratio

    # -- the certified bracket ---------------------------------------------------------------

    def bounds(self, eps: float, rtol: float) -> DeltaBounds:
        """Certified bracket on ``delta(eps)`` (module docstring) with relative width ``rtol``
        when floating point and :data:`MAX_CELLS` allow (``converged`` says whether it did)."""
        if not (isinstance(eps, (int, float, np.floating)) and math.isfinite(eps) and eps >= 0.0):
            raise InvalidParameter(f"eps must be finite and >= 0, got {eps!r}")
        if not 0.0 < rtol < 1.0:
            raise InvalidParameter(f"rtol must be in (0, 1), got {rtol!r}")
        eps = float(eps)
        self._last = eps
        if eps >= self.max_log_ratio:
            return DeltaBounds(eps, 0.0, 0.0, 0, True)
        hit = self._cache.get(eps)
        if hit is not None and (hit[1] <= rtol or hit[0].upper - hit[0].lower <= rtol * hit[0].lower):
            return hit[0]
        near = [e for e in self._kits if e > 0.0 and abs(e - eps) <= EXTRAPOLATE_REL * e]
        if near:
            kit = self._kits[min(near, key=lambda e: abs(e - eps))]
            b = self._extrapolate(kit, eps)
            if b.upper - b.lower <= rtol * b.lower:
                b = DeltaBounds(eps, b.lower, b.upper, 0, True)
                self._from[eps] = kit.eps
                if len(self._from) > 64:
                    self._from.clear()
                self._cache[eps] = (b, rtol)
                return b
        from .blanket_matrix import reused_memory  # (speed only: freed memory kept during the evaluation)

        aim = min(rtol, LOOK_RTOL)
        with reused_memory():
            b = self._compute(eps, aim)
        if len(self._cache) > 64:
            self._cache.clear()
        self._cache[eps] = (b, aim)
        return b

    def lower_at(self, eps: float, at: float | None = None) -> float:
        """A *certified* lower bound on ``delta(eps)`` from the last :meth:`bounds` call (or the
        computation kept at ``at``; §7, at no evaluation's cost): for ``eps`` below that call's
        ``eps_b`` by at most ``1e-3 eps``, the lower end at ``eps_b`` plus ``(e^eps_b - e^eps)`` times
        its terms' slopes; 0 otherwise."""
        last = self._last if at is None else at
        if last is not None and last not in self._slopes:
            last = self._from.get(last)  # answered from a kit (§8): that computation's state
        st = self._slopes.get(last) if last is not None else None
        if st is None or not (isinstance(eps, (int, float)) and 0.0 < eps < st.eps <= eps * (1.0 + 1e-3)):
            return 0.0
        return st.at(float(eps))

    def _remainder(self, ec: _Eps, sp: _Split) -> tuple[float, float]:
        """``(sum nu_y (c_y)_+, sum nu_y (c_y)_-)`` of §2, both rounded up."""
        return _remainder_terms(self.structure.rel_err, sp, ec.g)

    def _g_values(self, ms: np.ndarray, ec: _Eps, sp: _Split
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        """Certified ``(G_lo(m), G_up(m), D_lo(m))`` for the integers ``ms >= 1`` (§4; ``D_lo`` a
        lower bound on ``E[T_m 1{S_m > 0}] / m`` of §7), and the number of cells used."""
        ms = np.asarray(ms, dtype=float)
        g_lo = np.zeros(ms.size)
        g_up = np.zeros(ms.size)
        d_lo = np.zeros(ms.size)
        # the true b of a class is at least (1 - rel_err - 16 u) times the separable form's 1 or E (§7)
        t_scale = (1.0 - self.structure.rel_err - 16 * _U) * (1.0 - 8 * _U)
        beta, g, rho = sp.beta, ec.g, ec.rho
        b_lo, b_hi = self._windows(ms, ec, sp)
        count = (b_hi - b_lo + 1.0).astype(np.int64)
        cells = int(np.sum(count))
        order = np.arange(ms.size)
        start = 0
        while start < ms.size:
            # batch of m values with at most BATCH_CELLS cells (at least one m)
            csum = np.cumsum(count[start:])
            stop = start + max(1, int(np.searchsorted(csum, BATCH_CELLS, side="right")))
            idx = order[start:stop]
            reps = count[idx]
            mm = np.repeat(ms[idx], reps)
            b = _ranges(b_lo[idx], reps)
            kappa = g * b + mm * rho
            d = mm * ec.sig + 8 * _U * (g * b + mm * rho) * (1.0 + 1e-9)
            ends = np.cumsum(reps)
            seg = np.concatenate(([0], ends[:-1]))
            s_tails: list[np.ndarray] | None = [] if self._collect is not None else None
            fval, ferr, slo = _f_runs(ms[idx], seg, mm, kappa, d, sp.alpha, self._pmf, s_tails)
            # P[Bin(m, beta) = b] on the runs of consecutive b (one run per m): ratio recurrences
            # from Boost anchors every RUN cells (kept across calls); one relative bound per m (the
            # largest of its run)
            w, rel_pts = self._pmf.points(1, ms[idx], b_lo[idx], b_hi[idx], beta, segment=RUN)
            rel_w = np.maximum.reduceat(rel_pts, seg)
            s_val = np.add.reduceat(w * fval, seg)
            s_err = np.add.reduceat(w * ferr, seg)
            s_lo = np.add.reduceat(w * np.maximum(fval - ferr, 0.0), seg)
            sum_rel = fp.sum_error(int(np.max(reps))) + _U  # the sums and the products w * f
            # window tails (§4): below b_lo and above b_hi
            blo, bhi, mi = b_lo[idx], b_hi[idx], ms[idx]
            p_below = bn.cdf(blo - 1.0, mi, beta)
            p_above = bn.sf(bhi, mi, beta)
            tail_rel = bn.tail_error_budget(np.concatenate((blo - 1.0, bhi)), float(np.max(mi)), beta)
            t_rel = float(np.max(tail_rel)) if tail_rel.size else 0.0
            f_first = fval[seg] + ferr[seg]
            f_last = fval[ends - 1] + ferr[ends - 1]
            tails = (p_below * (f_first + g * blo * (1.0 + 4 * _U)) + p_above * f_last) * (1.0 + t_rel + 8 * _U)
            up = (s_val + s_err) * (1.0 + rel_w + sum_rel) + tails
            lo = s_lo * (1.0 - rel_w - sum_rel)
            g_up[idx] = up * ec.e1_up / mi * (1.0 + 8 * _U)
            g_lo[idx] = np.maximum(lo * ec.e1_lo / mi * (1.0 - 8 * _U), 0.0)
            # §7: sum_b P[B = b] (m + (E - 1) b) P[A > kappa_b + d], non-negative terms (3 roundings each)
            t_sum = np.add.reduceat(w * ((mm + ec.e1_lo * b) * slo), seg)
            d_lo[idx] = t_sum * (1.0 - rel_w - sum_rel - 8 * _U) * t_scale / mi * (1.0 - 2 * _U)
            if self._collect is not None and s_tails is not None:
                # §8: what a nearby eps needs of these cells (P[B outside the window] rounded up)
                out_rel = 1.0 + t_rel + 8 * _U
                self._collect.append((mi, reps, b, w, rel_w + sum_rel, p_below * out_rel, p_above * out_rel, *s_tails))
            start = stop
        return g_lo, g_up, np.maximum(d_lo, 0.0), cells

    def _windows(self, ms: np.ndarray, ec: _Eps, sp: _Split) -> tuple[np.ndarray, np.ndarray]:
        """The windows ``[b_lo, b_hi]`` of ``b`` for the sorted integers ``ms`` (§4: +-:data:`B_WINDOW_SD`
        sd of ``B``, capped where ``F = 0`` exactly, then trimmed by :meth:`_trim`; computation only)."""
        beta, g, rho = sp.beta, ec.g, ec.rho
        sd = np.sqrt(ms * beta * (1.0 - beta))
        # b beyond which F = 0 exactly: kappa_b - d >= m
        dmax = ms * ec.sig + 16 * _U * (g * ms + ms * rho + 1.0)
        b_zero = np.ceil((ms - ms * rho + dmax) / g) + 1.0
        b_hi = np.clip(np.minimum(np.ceil(ms * beta + B_WINDOW_SD * sd) + 1.0, b_zero), 0.0, ms)
        b_lo = np.minimum(np.clip(np.floor(ms * beta - B_WINDOW_SD * sd) - 1.0, 0.0, ms), b_hi)
        wide = np.nonzero(b_hi - b_lo > TRIM_MIN)[0]
        if wide.size:
            # the look at every TRIM_STEP-th m of a run of consecutive m (and at both ends); an m between
            # two looked-at ones takes the union of their windows, within its own (any window is certified)
            pos = np.arange(wide.size)
            key = (pos % TRIM_STEP == 0) | (pos == wide.size - 1)
            kp = np.nonzero(key)[0]
            prev = kp[np.maximum(np.searchsorted(kp, pos, side="right") - 1, 0)]
            nxt = kp[np.minimum(np.searchsorted(kp, pos, side="left"), kp.size - 1)]
            key |= ms[wide[nxt]] - ms[wide[prev]] != nxt - prev  # (not one run: looked at on its own)
            kp = np.nonzero(key)[0]
            at = wide[kp]
            t_lo, t_hi = self._trim(ms[at], b_lo[at], b_hi[at], ec, sp)
            rest = np.nonzero(~key)[0]
            if rest.size:
                i0 = np.searchsorted(kp, rest) - 1  # the looked-at neighbours kp[i0] < rest < kp[i0 + 1]
                idx = wide[rest]
                b_lo[idx] = np.maximum(np.minimum(t_lo[i0], t_lo[i0 + 1]), b_lo[idx])
                b_hi[idx] = np.maximum(np.minimum(np.maximum(t_hi[i0], t_hi[i0 + 1]), b_hi[idx]), b_lo[idx])
            b_lo[at], b_hi[at] = t_lo, t_hi
        return b_lo, b_hi

    @staticmethod
    def _trim(ms: np.ndarray, b_lo: np.ndarray, b_hi: np.ndarray, ec: _Eps, sp: _Split
              ) -> tuple[np.ndarray, np.ndarray]:
        """Narrower windows of ``b`` (computation only: any window gives a certified bracket, §4):
        the summand ``P[B = b] F(kappa_b)`` and the tail bounds at the window's ends are looked at
        on a grid of :data:`TRIM_POINTS` points; the window keeps the grid cells where the summand
        or the tail bound at the end exceeds :data:`TRIM_REL` of the largest summand. The look
        uses cheap *estimates* that are upper bounds in exact arithmetic (they only choose the
        window): ``P[B = b]`` from ``gammaln``, ``F(kappa) <= (m alpha - kappa)_+ + sd(A)`` and, above
        the mean, ``F(kappa) <= min(sd(A), e^{-m KL(kappa/m || alpha)} / (e t*))`` (``x_+ <= e^{t
        x} / (e t)`` at the Chernoff tilt ``t*``), ``P[B < b] <= e^{-m KL((b-1)/m || beta)}`` below
        the mean. They overstate the peak by at most ``~sqrt(m)``, so a cell is left out only where
        its summand is below ``~1e-15 sqrt(m)`` of the largest: the tails charged for it (``<~ 1e-13``
        of ``G(m)`` for ``m <= 1e4``) stay far below any width asked and below the engine's floating-point
        floor (``~1e-9`` relative)."""
        t = np.linspace(0.0, 1.0, TRIM_POINTS)
        grid = np.round(b_lo[:, None] + t[None, :] * (b_hi - b_lo)[:, None])
        mm = np.broadcast_to(ms[:, None], grid.shape)
        kappa = ec.g * grid + mm * ec.rho
        fv = _f_estimate_up(mm, kappa, sp.alpha)
        with np.errstate(divide="ignore", invalid="ignore", under="ignore"):
            log_w = (gammaln(mm + 1.0) - gammaln(grid + 1.0) - gammaln(mm - grid + 1.0)
                     + xlogy(grid, sp.beta) + xlogy(mm - grid, 1.0 - sp.beta))
            w = np.exp(log_w)
            x = (grid - 1.0) / mm
            below = np.where(grid - 1.0 < 0.0, 0.0,
                             np.where(x >= sp.beta, 1.0, np.exp(-mm * _kl(x, sp.beta))))
        summand = w * fv
        peak = np.max(summand, axis=1, keepdims=True)
        keep_hi = fv > TRIM_REL * peak  # the upper tail bound is at most F(kappa_{b_hi})
        keep_lo = (summand > TRIM_REL * peak) | (below * (fv + ec.g * grid) > TRIM_REL * peak)
        cols = np.arange(TRIM_POINTS)[None, :]
        last = np.max(np.where(keep_hi, cols, 0), axis=1)
        first = np.min(np.where(keep_lo, cols, TRIM_POINTS - 1), axis=1)
        first = np.minimum(first, last)
        rows = np.arange(ms.size)
        new_lo = np.where(peak[:, 0] > 0.0, grid[rows, np.maximum(first - 1, 0)], b_lo)
        new_hi = np.where(peak[:, 0] > 0.0, grid[rows, np.minimum(last + 1, TRIM_POINTS - 1)], b_hi)
        return new_lo, np.maximum(new_hi, new_lo)

    def _initial_edges(self, lo: int, hi: int, mean: float, sd: float) -> np.ndarray:
        """A first partition of ``[lo, hi + 1)``: edges dense near the mean."""
        e = np.round(mean + _EDGE_Z * sd)
        singles = np.arange(math.floor(mean - SINGLES_SD * sd), math.ceil(mean + SINGLES_SD * sd) + 1.0)
        if singles.size <= SINGLES_MAX:
            e = np.concatenate((e, singles))
        e = np.unique(np.clip(np.concatenate(([lo, hi + 1], e)), lo, hi + 1)).astype(np.int64)
        return e

    def _route(self, eps: float) -> bool:
        """Whether route B (masses' rounding as a factor ``(1 + r')^n``, §5) is expected to give
        the narrower bracket than route A (additive remainder): compares the two floors with the
        saddle-point *estimate* of delta. Either route is certified."""
        if not math.isfinite(self._factor):
            return False
        if self.n * self._factor <= 1e-10:
            return True  # route B's floor is below anything a search asks for
        try:
            est = math.exp(max(min(self._est().log_estimate(eps), 0.0), -700.0))
        except (ValueError, OverflowError, ArithmeticError):  # pragma: no cover - estimate only
            est = 0.0
        if not est > 0.0:
            return True
        floor_a = math.fsum(self._sp.nu) * self._sp.E * (1.0 + math.exp(eps)) / est
        return self.n * self._factor < floor_a

    @staticmethod
    def _make_kit(eps: float, parts: list[tuple[np.ndarray, ...]], known: tuple[np.ndarray, np.ndarray, np.ndarray],
                  sp: _Split, ec: _Eps, route_b: bool, gam: float, grow: float, shrink: float, left: np.ndarray,
                  right: np.ndarray, single: np.ndarray, w: np.ndarray, w_err: np.ndarray, p_below: float,
                  p_above: float, hi: int) -> _Kit:
        """The :class:`_Kit` of a finished computation from its batches of cells (``parts``)."""
        ms, reps, b, wb, rel, p_below_b, p_above_b, j, s_lo, s_up, s_next, s_prev = (
            np.concatenate(x) for x in zip(*parts))
        order = np.argsort(ms, kind="stable")
        starts = np.cumsum(reps) - reps
        ranges = _ranges(starts[order], reps[order])  # cells regrouped by increasing m
        seg = np.cumsum(reps[order]) - reps[order]
        ms = ms[order]
        at = ms.astype(np.int64)
        g_up = known[1][at]
        g_lo = known[0][at]
        mm = np.repeat(ms, reps[order])
        return _Kit(eps, sp, ec, route_b, gam, grow, shrink, left, right, single, w, w_err, p_below, p_above, hi,
                    ms, g_up, g_lo, seg, rel[order], p_below_b[order], p_above_b[order], mm, b[ranges], wb[ranges], j[ranges],
                    s_lo[ranges], s_up[ranges], s_next[ranges], s_prev[ranges])

    def _extrapolate(self, kit: _Kit, eps: float) -> DeltaBounds:
        """The certified bracket of §8 at ``eps`` (near ``kit.eps``) from the kit alone."""
        if not 0.5 * kit.eps <= eps <= 2.0 * kit.eps:
            # (eps - kit.eps below is exact by Sterbenz only within a factor 2; the callers stay within 1e-3)
            raise ValueError(f"eps = {eps!r} is too far from the kit's eps = {kit.eps!r} for §8")
        rel_err = self.structure.rel_err
        ec = _eps_constants(self.structure, kit.sp.E, eps)
        if eps > kit.eps:
            dg_lo = fp.exp_gap_down(kit.eps, eps)
            dg_up = math.exp(kit.eps) * math.expm1(eps - kit.eps) * (1.0 + 8 * _U)
            drop_lo = dg_lo * kit.slopes(ec, rel_err, True) * (1.0 - 2 * _U)  # <= (g - g_1) D_m(g)
            drop_up = dg_up * kit.slopes(kit.ec, rel_err, False) * (1.0 + 2 * _U)  # >= (g - g_1) D_m(g_1)
            g_up = np.maximum((kit.g_up - drop_lo) * (1.0 + 2 * _U), 0.0)
            g_lo = np.maximum((kit.g_lo - drop_up) * (1.0 - 2 * _U), 0.0)
        else:
            dg_lo = fp.exp_gap_down(eps, kit.eps)
            dg_up = math.exp(eps) * math.expm1(kit.eps - eps) * (1.0 + 8 * _U)
            g_up = (kit.g_up + dg_up * kit.slopes(ec, rel_err, False) * (1.0 + 2 * _U)) * (1.0 + 2 * _U)
            g_lo = (kit.g_lo + dg_lo * kit.slopes(kit.ec, rel_err, True) * (1.0 - 2 * _U)) * (1.0 - 2 * _U)

        def at(points: np.ndarray, values: np.ndarray) -> np.ndarray:
            return values[np.searchsorted(kit.ms, points)]

        rem_pos, rem_neg = (0.0, 0.0) if kit.route_b else self._remainder(ec, kit.sp)
        tail_up = kit.p_below * float(at(np.array([1.0]), g_up)[0]) + kit.p_above * float(
            at(np.array([kit.hi + 1.0]), g_up)[0])
        up_i = (kit.w + kit.w_err) * at(kit.left, g_up)
        lo_i = np.maximum(kit.w - kit.w_err, 0.0) * np.where(kit.single, at(kit.left, g_lo), at(kit.right, g_lo))
        s_rel = fp.sum_error(len(up_i)) + _U
        total_up = ((float(np.sum(up_i)) * (1.0 + s_rel) + tail_up) * kit.gam * (1.0 + 8 * _U) + rem_pos) * kit.grow
        total_lo = max(float(np.sum(lo_i)) * (1.0 - s_rel) * kit.gam * (1.0 - 8 * _U) - rem_neg, 0.0) * kit.shrink
        if 0.0 < total_up < fp.MIN_PROBABILITY:
            total_up = fp.MIN_PROBABILITY
        total_lo = min(total_lo, total_up)
        return DeltaBounds(eps, total_lo, total_up, 0, total_up - total_lo <= 0.0)

    def _compute(self, eps: float, rtol: float) -> DeltaBounds:
        route_b = self._route(eps) and self._sp_b.gamma > 0.0  # route B has no remainder term to fall back on
        sp = self._sp_b if route_b else self._sp
        n = self.n
        ec = _eps_constants(self.structure, sp.E, eps)
        rem_pos, rem_neg = (0.0, 0.0) if route_b else self._remainder(ec, sp)
        if route_b:
            grow = math.exp(n * math.log1p(self._factor)) * (1.0 + 1e-12)
            shrink = math.exp(n * math.log1p(-self._factor) * (1.0 + 1e-12)) * (1.0 - 1e-12) if self._factor < 1.0 else 0.0
        else:
            grow, shrink = 1.0, 1.0
        gam = sp.gamma
        if gam <= 0.0:  # nothing is product-form: only the remainder bound
            return DeltaBounds(eps, 0.0, max(rem_pos * grow, fp.MIN_PROBABILITY) if rem_pos > 0 else 0.0, 0, False)
        N = n - 1  # M' = m - 1 ~ Bin(n - 1, gamma')
        mean = N * gam + 1.0
        sd = math.sqrt(max(N * gam * (1.0 - gam), 0.0))
        lo = int(max(1, math.floor(mean - M_WINDOW_SD * sd) - 1))
        hi = int(min(n, math.ceil(mean + M_WINDOW_SD * sd) + 1))
        if self._edges is not None and self._edges[0] == lo and self._edges[-1] == hi + 1:
            edges = self._edges
        else:
            edges = self._initial_edges(lo, hi, mean, sd)
        # G_lo, G_up and D_lo per m evaluated (indexed by m <= n + 1; read only where ``have``)
        known = (np.zeros(n + 2), np.zeros(n + 2), np.zeros(n + 2))
        have = np.zeros(n + 2, dtype=bool)
        cells = 0
        self._collect = []  # (§8: the cells' data for a nearby eps)

        def need(points: np.ndarray) -> None:
            nonlocal cells
            u = np.unique(points).astype(np.int64)
            at = u[~have[u]]
            if at.size:
                gl, gu, dl, c = self._g_values(at.astype(float), ec, sp)
                cells += c
                known[0][at], known[1][at], known[2][at] = gl, gu, dl
                have[at] = True

        # tails of m outside [lo, hi]: G <= G(1) below, G <= G(hi + 1) above
        need(np.concatenate(([1], edges)))  # (with the first partition: one batch of cells)
        if N == 0:
            p_below, p_above = 0.0, 0.0
        else:
            p_below = float(bn.cdf(np.array([lo - 2.0]), N, gam)[0]) * (1.0 + bn.relative_error_budget(N))
            p_above = float(bn.sf(np.array([hi - 1.0]), N, gam)[0]) * (1.0 + bn.relative_error_budget(N))
        tail_up = p_below * float(known[1][1]) + p_above * float(known[1][hi + 1])
        target_rel = rtol
        converged = False
        for _round in range(40):
            need(edges)
            left, right = edges[:-1], edges[1:]
            if N == 0:
                w, w_err = np.ones(1), np.zeros(1)
            else:
                w, w_err = _block_masses(edges, N, gam)
            g_left_up = known[1][left]
            g_left_lo = known[0][left]
            g_right_lo = known[0][right]
            single = (right - left) == 1
            up_i = (w + w_err) * g_left_up
            lo_i = np.maximum(w - w_err, 0.0) * np.where(single, g_left_lo, g_right_lo)
            k = len(up_i)
            s_rel = fp.sum_error(k) + _U  # the sum and the products
            total_up = ((float(np.sum(up_i)) * (1.0 + s_rel) + tail_up) * gam * (1.0 + 8 * _U) + rem_pos) * grow
            total_lo = max(float(np.sum(lo_i)) * (1.0 - s_rel) * gam * (1.0 - 8 * _U) - rem_neg, 0.0) * shrink
            gap = total_up - total_lo
            if gap <= target_rel * total_lo or total_up <= fp.MIN_PROBABILITY:
                converged = True
                break
            if cells > MAX_CELLS:
                break
            # split the blocks (width > 1) carrying the largest gaps; each gets the share of the
            # goal that a gap linear in the width would leave it
            gaps = (up_i - lo_i) * gam
            splittable = ~single
            if not np.any(splittable & (gaps > 0.0)):
                break  # every remaining gap is in single m (floating point, windows): the floor
            goal = 0.5 * target_rel * total_lo if total_lo > 0.0 else 0.5 * total_up
            cand = np.nonzero(splittable)[0]
            cand = cand[np.argsort(-gaps[cand])]
            fixed = gap - float(np.sum(gaps[splittable]))  # not reducible by splitting
            room = max(goal - max(fixed, 0.0), 0.25 * goal)
            acc = np.cumsum(gaps[cand])
            over = float(np.sum(gaps[splittable])) - room
            chosen = cand[: int(np.searchsorted(acc, over, side="left")) + 1]
            share = room / max(len(chosen), 1)
            new_edges = []
            for i in chosen:
                width = int(right[i] - left[i])
                parts = min(width, 64, max(2, int(math.ceil(gaps[i] / max(share, 1e-300)))))
                new_edges.append(np.round(np.linspace(left[i], right[i], parts + 1)[1:-1]).astype(np.int64))
            if new_edges:
                edges = np.unique(np.concatenate([edges] + new_edges))
        self._edges = edges
        # the state of §7: the lower end's terms, each with its slope in g
        m_used = np.where(single, left, right)
        self._slopes[eps] = _SlopeState(
            eps, np.maximum(w - w_err, 0.0), known[0][m_used], known[2][m_used], gam * (1.0 - s_rel) * (1.0 - 8 * _U), rem_neg, shrink)
        if len(self._slopes) > 16:
            del self._slopes[next(iter(self._slopes))]
        batches, self._collect = self._collect, None
        if batches:
            self._kits.later(eps, functools.partial(self._make_kit, eps, batches, known, sp, ec, route_b, gam, grow,
                                                    shrink, left, right, single, w, w_err, p_below, p_above, hi))
            if len(self._kits) > 8:
                del self._kits[next(iter(self._kits))]
        if 0.0 < total_up < fp.MIN_PROBABILITY:
            total_up = fp.MIN_PROBABILITY
        total_lo = min(total_lo, total_up)
        return DeltaBounds(eps, total_lo, total_up, cells, converged)


__all__ = ["MAX_REMAINDER", "SEPARABLE_MAX_N", "SEPARABLE_WIDE", "ProductLaw", "SeparableBlanket", "applies", "product_law",
           "product_remainder", "remainder_fraction", "suggested"]
