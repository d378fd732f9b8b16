"""Rigorous check of Theorem K* (docs/proof_binomial_moments.md), region B and the closed form.

What it verifies
----------------
Theorem K*: for the symmetric pair (s = 1/2, u + v = 1, lam = 1), every real 1 < alpha <= alpha2 and every eps0,
K(m-1) K(m+1) >= K(m)^2 at every centre m >= 2, where K(m) = sum_n F_2n w^(2n) M_n(m), M_n(m) = E[Y_m^(2n)] and
F_2n are the even Taylor coefficients of h(t) = (1+t)^alpha (1-t)^(1-alpha).  For centres m > M0 = 218 the proof
reduces (derivation in the doc, "What is checked for m >= 219") to two w-free inequalities at alpha = alpha2
(monotone in alpha):
    (a')  2 P1hat rhohat + F_2 rhohat^2 <= 2/(m(m^2-1)),       (b')  4 (1+hm) F_2 rhohat <= 1 - 4 hm,
    rhohat = (1/F_2) sum_(N<n<nP) F_2n M_n(m),   P1hat = 1 + sum_(1<=n<=N) F_2n M_n(m) + F_2 rhohat,
    nP = ceil(c m(m-1)), c = log(2(e-1))/4,   hm = exp(m q) - 1, q = (1 - 2/m)^(2 nP).
Region B is every integer m in (M0, M2]; the closed form covers m > M2 (valid because N > 2 alpha2 + 2).
This script bounds every left side from ABOVE with rigorous arithmetic and every right side from below:
  * F_2n: the recurrence (k+1) h_(k+1) = b h_k + (k-2) h_(k-1), b = 2 alpha - 1, h_0 = 1, h_1 = b,
    F_2 = (b^2-1)/2 exact; from k = 2 on all terms are >= 0, so float64 with every operation rounded up
    (nextafter toward +inf after each round-to-nearest operation) gives upper bounds F_2n <= Fu[n].
  * M_n(m) = sum_(0<=j<m/2) w_j x_j^n (n >= 1), w_j = 2^(1-m) C(m,j), x_j = (1-2j/m)^2: w_j, x_j are exact
    rationals rounded up; powers by repeated multiplication rounded up (floored at 2^-1022 so that a
    flush-to-zero mode could not lose mass); each sum of k non-negative floats is multiplied by (1 + 4 k 2^-53) and
    rounded up (Higham: |fl(sum) - sum| <= gamma_(k-1) sum for every summation order).
  * n > n1 = min(nP-1, max(N+1, ceil(m ln m))): M_n(m) <= M_(n1)(m) (M_n is non-increasing in n).
  * the scalar steps (nP, q, hm, (a'), (b'), closed form) in mpmath interval arithmetic (mpmath.iv, 120 bits).
A check passes only if the interval's upper end is <= 1 (no safety factor).  Sanity self-tests (not part of the
proof, they would catch a wrong formula): Fu against a 240-bit recurrence and the Taylor series of
cosh(b artanh t)/cosh(artanh t); M_n upper bounds against exact fractions.

How to run
----------
    python docs/proof_scripts/kstar_region_b.py               # all 18 configurations of the doc's table
    python docs/proof_scripts/kstar_region_b.py 16 120 962    # one configuration: alpha2 N M2
    python docs/proof_scripts/kstar_region_b.py 16 120 962 219 300   # ... region B only for m_lo <= m <= m_hi
Expected output: self-tests pass silently, then one line per configuration, e.g.
  alpha2=16 N=120 M2=962: region B (218,962] PASS, worst max((a'),(b')) = 1.3223e-01 at m=219 ((a')=1.3223e-01,
  (b')=2.6112e-06); closed form m > 962 PASS (a')=5.6831e-01 (b')=8.9754e-32; cpu 8.2 s
and finally "ALL PASS" (exit status 0; "FAILURE" and exit status 1 if any check fails).
Runtime (shared 2-core machine): about 20 s for all 18 configurations, 8 s CPU for alpha2 = 16 alone.
numpy + mpmath + stdlib only.
"""
import math
import sys
import time
from fractions import Fraction

import numpy as np
from mpmath import iv, mp, mpf

iv.prec = 120
mp.prec = 240          # mpf(x.a), mpf(x.b) below convert the 120-bit interval ends exactly
U = 2.0 ** -53
TINY = 2.0 ** -1022
M0 = 218
# (alpha2, N, M2) as in docs/proof_binomial_moments.md (lemma97 nocap2_N80.log, nocap2_N120.log)
TABLE = [(a, 80, 302) for a in (1.25, 1.5, 1.75, 2, 2.25, 2.5, 2.75, 3, 3.5, 4, 4.5, 5, 6, 7, 8)] + [(10, 80, 490), (12, 80, 874), (16, 120, 962)]


def up(x):
    """next float toward +inf: an upper bound of the exact result of the round-to-nearest operation that gave x."""
    return np.nextafter(x, np.inf)


def up_sum(a):
    """upper bound of the exact sum of the non-negative float64 array a."""
    k = a.size
    if k == 0:
        return 0.0
    s = float(np.sum(a))
    return float(up(up(s) * (1.0 + 4 * k * U)))


def f_upper(b, nmax):
    """Fu[n] >= F_2n for n = 0..nmax (exact for n <= 1), rounded-up float64 recurrence."""
    bf = float(b)
    assert Fraction(bf) == b and Fraction(bf * bf - 1) / 2 == (b * b - 1) / 2
    h = [0.0] * (2 * nmax + 2)
    h[0], h[1], h[2] = 1.0, bf, (bf * bf - 1) / 2
    nx = math.nextafter
    inf = math.inf
    for k in range(2, 2 * nmax):
        h[k + 1] = nx(nx(nx(bf * h[k], inf) + nx((k - 2) * h[k - 1], inf), inf) / (k + 1), inf)
    return np.array(h[0::2][: nmax + 1])


def n_p(m):
    """nP(m) = ceil(c m(m-1)), decided in interval arithmetic (fails if the interval straddles an integer)."""
    x = iv.log(2 * (iv.e - 1)) / 4 * (m * (m - 1))
    lo, hi = int(mp.ceil(mpf(x.a))), int(mp.ceil(mpf(x.b)))
    assert lo == hi, m
    return lo


def moments_upper(m, n1):
    """Mu[n] >= M_n(m) for n = 0..n1 (Mu[0] unused)."""
    half = (m + 1) // 2          # atoms j = 0..half-1 have x_j > 0; j = m/2 (m even) contributes 0 for n >= 1
    den = 2 ** (m - 1)
    w = [float(up(float(Fraction(math.comb(m, j), den)))) for j in range(half)]
    x = [float(up(float(Fraction((m - 2 * j) ** 2, m * m)))) for j in range(half)]
    w, x = np.array(w), np.array(x)
    A = w.size
    B = 256
    X = np.empty((A, B))
    X[:, 0] = 1.0
    for k in range(1, B):
        X[:, k] = np.maximum(up(X[:, k - 1] * x), TINY)
    xB = np.maximum(up(X[:, B - 1] * x), TINY)
    cur = w.copy()                                  # >= w_j x_j^n0
    Mu = np.empty(n1 + 1)
    fac = 1.0 + 4 * A * U
    for n0 in range(0, n1 + 1, B):
        V = np.maximum(up(cur[:, None] * X), TINY)  # >= w_j x_j^(n0+k)
        s = up(up(V.sum(axis=0)) * fac)
        k = min(B, n1 + 1 - n0)
        Mu[n0:n0 + k] = s[:k]
        cur = np.maximum(up(cur * xB), TINY)
    return Mu


def region_b(alpha2, N, M2, Fu, F2, mlo=M0 + 1, mhi=None):
    mhi = M2 if mhi is None else mhi
    worst = (-1.0, None, None, None)
    for m in range(mlo, mhi + 1):
        nP = n_p(m)
        n1 = min(nP - 1, max(N + 1, math.ceil(m * math.log(m))))
        Mu = moments_upper(m, n1)
        s_low = up_sum(up(Fu[1:N + 1] * Mu[1:N + 1]))
        s_mid = up_sum(up(Fu[N + 1:n1 + 1] * Mu[N + 1:n1 + 1]))
        tail = float(up(Mu[n1] * up_sum(Fu[n1 + 1:nP])))
        rho = iv.mpf(s_mid) + iv.mpf(tail)
        rho = rho / F2
        P1 = 1 + iv.mpf(s_low) + F2 * rho
        q = (1 - iv.mpf(2) / m) ** (2 * nP)
        hm = iv.exp(m * q) - 1
        la = (2 * P1 * rho + F2 * rho ** 2) * (m * (m * m - 1)) / 2
        den = 1 - 4 * hm
        assert mpf(den.a) > 0
        lb = 4 * (1 + hm) * F2 * rho / den
        a_hi, b_hi = mpf(la.b), mpf(lb.b)
        if max(a_hi, b_hi) > worst[0]:
            worst = (max(a_hi, b_hi), m, a_hi, b_hi)
        if a_hi > 1 or b_hi > 1:
            return False, (m, a_hi, b_hi)
    return True, worst


def closed_form(alpha2, N, M2, Fu, F2):
    """(a'), (b') for every m > M2 via F_2n <= 32 (2n)^(alpha-1), M_n(m) <= (2N+1)!!/m^(N+1), #Mid < c m^2."""
    a = iv.mpf(Fraction(alpha2).numerator) / Fraction(alpha2).denominator
    assert N > 2 * alpha2 + 2                       # makes m^3 (a'-LHS) and the (b')-LHS non-increasing in m
    c = iv.log(2 * (iv.e - 1)) / 4
    SN = iv.mpf(up_sum(Fu[1:N + 1]))
    dN = iv.mpf(math.prod(range(1, 2 * N + 2, 2)))
    m = iv.mpf(M2 + 1)
    rhoC = 32 / F2 * dN * c * (2 * c) ** (a - 1) * m ** (2 * a - N - 1)
    P1C = 1 + SN / m + F2 * rhoC
    la = (2 * P1C * rhoC + F2 * rhoC ** 2) * m ** 3 / 2
    hm = iv.exp(m * iv.exp(-4 * c * M2)) - 1       # >= exp(m' q) - 1 for every m' >= M2+1
    lb = 4 * (1 + hm) * F2 * rhoC / (1 - 4 * hm)
    assert mpf((1 - 4 * hm).a) > 0
    return mpf(la.b) <= 1 and mpf(lb.b) <= 1, mpf(la.b), mpf(lb.b)


def self_test():
    """sanity (not part of the proof): Fu vs a 60-digit recurrence and the Taylor series; Mu vs exact fractions."""
    for alpha2 in (1.25, 16):
        b = Fraction(2 * alpha2 - 1)
        Fu = f_upper(b, 3000)
        h = [mpf(1), mpf(b.numerator) / b.denominator]
        bm = h[1]
        for k in range(1, 6000):
            h.append((bm * h[k] + (k - 2) * h[k - 1]) / (k + 1))
        for n in (1, 2, 5, 50, 500, 2999):
            assert h[2 * n] <= mpf(Fu[n]) <= h[2 * n] * (1 + mpf(10) ** -9), (alpha2, n)
        tay = mp.taylor(lambda t: mp.cosh(bm * mp.atanh(t)) / mp.cosh(mp.atanh(t)), 0, 12)
        for n in range(7):
            assert abs(tay[2 * n] - h[2 * n]) <= mpf(10) ** -40 * (1 + abs(h[2 * n])), (alpha2, n)
    for m, n1 in ((219, 700), (300, 400)):
        Mu = moments_upper(m, n1)
        for n in (1, 2, 121, n1):
            ex = Fraction(sum(math.comb(m, k) * (m - 2 * k) ** (2 * n) for k in range(m + 1)), 2 ** m * m ** (2 * n))
            assert Fraction(float(Mu[n])) >= ex and Fraction(float(Mu[n])) <= ex * (1 + Fraction(1, 10 ** 10)), (m, n)


def run(alpha2, N, M2, mlo=M0 + 1, mhi=None):
    t0 = time.process_time()
    b = Fraction(2 * Fraction(alpha2) - 1)
    Fu = f_upper(b, n_p(M2) + 1)
    F2 = iv.mpf((b * b - 1).numerator) / (b * b - 1).denominator / 2
    okB, wB = region_b(alpha2, N, M2, Fu, F2, mlo, mhi)
    okC, laC, lbC = closed_form(alpha2, N, M2, Fu, F2)
    t = time.process_time() - t0
    rng = f"({mlo - 1},{M2 if mhi is None else mhi}]"
    if okB:
        sB = f"region B {rng} PASS, worst max((a'),(b')) = {float(wB[0]):.4e} at m={wB[1]} ((a')={float(wB[2]):.4e}, (b')={float(wB[3]):.4e})"
    else:
        sB = f"region B {rng} FAIL at m={wB[0]}: (a')={float(wB[1]):.4e} (b')={float(wB[2]):.4e}"
    sC = f"closed form m > {M2} {'PASS' if okC else 'FAIL'} (a')={float(laC):.4e} (b')={float(lbC):.4e}"
    print(f"alpha2={alpha2} N={N} M2={M2}: {sB}; {sC}; cpu {t:.1f} s", flush=True)
    return okB and okC


if __name__ == '__main__':
    np.seterr(under='ignore')
    assert np.float64(2.0 ** -1040) * np.float64(0.5) > 0   # subnormals are not flushed to zero
    self_test()
    args = sys.argv[1:]
    if args:
        rest = [int(v) for v in args[3:5]]
        ok = run(float(args[0]), int(args[1]), int(args[2]), *rest)
    else:
        ok = all([run(a, N, M2) for a, N, M2 in TABLE])
    print('ALL PASS' if ok else 'FAILURE')
    sys.exit(0 if ok else 1)
