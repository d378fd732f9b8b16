"""Rényi DP of shuffled rounds and their composition (API behind ``shuffle-acct renyi`` and
``shuffle-acct compose``).

Spec: ``shared/spec/amplification.md`` §2 and §5. Sources:

* RDP and its additive composition: Mironov, "Rényi Differential Privacy", CSF 2017,
  Proposition 1.
* RDP -> (eps, delta): Canonne, Kamath, Steinke, NeurIPS 2020 (arXiv 2004.00010),
  Proposition 12 (= Balle et al., AISTATS 2020, Theorem 21):
  ``eps = rho(alpha) + log1p(-1/alpha) - (log delta + log alpha)/(alpha - 1)``.
* Comparator: optimal composition of ``T`` copies of an (eps, delta)-DP mechanism,
  Kairouz, Oh, Viswanath, ICML 2015, Theorem 3.3 (homogeneous), and their Theorem 3.5
  (heterogeneous advanced composition).

The per-round RDP curve is the certified upper bound of :mod:`.numeric.renyi` on the
clone pair of the chosen analysis.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
from scipy.special import gammaln

from . import validation as v
from .analyses import get_method, pair_for
from .errors import CertificationError, InvalidParameter
from .numeric.renyi import DEFAULT_ORDERS, check_orders, renyi_bounds
from .pld import DEFAULT_TAIL, MAX_COMPOSED_POINTS, MAX_GRID, auto_discretization, pld_route, round_tails
from .randomizers import krr_alphabet, randomizer_at
from .results import Bound

MIRONOV = "Mironov, CSF 2017 (Renyi DP), Proposition 1 (additive composition)"
CKS = "Canonne, Kamath, Steinke, NeurIPS 2020 (arXiv 2004.00010), Proposition 12"
KOV = "Kairouz, Oh, Viswanath, ICML 2015"
CONVERSION = "CKS20 improved RDP->(eps,delta) conversion"

#: Most distinct rounds in one composition (each is analysed separately).
MAX_DISTINCT_ROUNDS = 1000
#: Largest rounds file read (bytes).
MAX_FILE_BYTES = 16 * 2**20
#: ... or when a round whose distribution dp_accounting keeps sparse (at most 1000 points)
#: is repeated more often than this (dp_accounting's size test computes ``size**T``).
PLD_MAX_SPARSE_T = 10**6
#: Beyond this many rounds KOV15 Theorem 3.3 (a sum over every number of flips, O(T))
#: gives way to the closed-form advanced composition of Theorem 3.5.
OPTIMAL_MAX_T = 100_000


# ---------------------------------------------------------------------------------------
# RDP curve of one shuffled round
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RdpCurve:
    """RDP curve of one shuffled round: ``upper[i] >= D_alpha`` at ``orders[i]`` (certified)
    and ``lower[i] <= D_alpha`` of the pair the engine evaluates: for the lower-bound methods
    the exact pair of their attaining mechanism (certified lower bounds); for the upper-bound
    methods the analysis' pair with its float rates moved to the side where upper bounds only
    grow (:func:`.analyses.pair_for`), whose divergence may exceed the exact pair's (measured
    by review rev94r: up to 7e-7 relative at eps0 = 1e-8, 2e-14 at 0.1), so there the lower
    end is a convergence check, not a lower bound. Both are monotone in the order (each
    upper end at most those of the larger orders, each lower end at least those of the smaller
    ones: ``D_alpha`` is non-decreasing in ``alpha``, van Erven and Harremoës 2014, Theorem 3).
    ``bounds`` has one labelled :class:`Bound` per order."""

    orders: tuple[float, ...]
    upper: tuple[float, ...]
    lower: tuple[float, ...]
    bounds: tuple[Bound, ...]
    converged: bool

    def as_dp_accounting(self) -> tuple[list[float], list[float]]:
        """``(orders, rdp)`` in the shape ``dp_accounting.rdp.rdp_privacy_accountant
        .compute_epsilon(orders, rdp, delta)`` takes; add ``T *`` this to the RDP of other
        mechanisms evaluated on the same orders to compose with them."""
        return list(self.orders), list(self.upper)


def rdp_curve(
    eps0: float,
    n: int,
    method: str = "clones",
    k: int | None = None,
    orders: Iterable[float] | None = None,
    rtol: float = 1e-3,
) -> RdpCurve:
    """Certified RDP curve ``alpha -> D_alpha`` of shuffling ``n`` reports of an
    ``eps0``-DP local randomizer, for the clone pair of ``method`` (max of both directions).

    Upper-bound methods give certified upper bounds (``kind = "upper"``); for the
    lower-bound methods (``binary-rr-lower``, ``krr-lower``) the value is a certified lower
    bound on the RDP of the attaining mechanism (``kind = "lower"``).
    """
    eps0 = v.check_eps0(eps0)
    n = v.check_n(n)
    if k is not None:
        k = v.K.check(k)
    rtol = v.RENYI_RTOL.check(rtol)
    m = get_method(method)
    if not m.numerical:
        raise InvalidParameter(f"method {method!r} is a closed form for (eps, delta); RDP needs a clone-pair method")
    alpha = check_orders(DEFAULT_ORDERS if orders is None else v.check_orders(orders))
    sp = pair_for(method, eps0, n, k)
    rb = renyi_bounds(sp.pair, alpha, rtol=rtol, scale=sp.scale)
    # D_alpha is non-decreasing in alpha (van Erven, Harremoës, IEEE Trans. IT 2014, Theorem 3), so an upper end
    # bounds every smaller order and a lower end every larger one (orders sorted; review rev94r: unconverged curves
    # had upper(1.01) = 29.0 above upper(1.25) = 28.51 at eps0 = 29, n = 1e12)
    upper = np.minimum.accumulate(np.asarray(rb.upper, dtype=float)[::-1])[::-1]
    lower = np.minimum(np.maximum.accumulate(np.asarray(rb.lower, dtype=float)), upper)
    rb = replace(rb, upper=tuple(float(x) for x in upper), lower=tuple(float(x) for x in lower))
    inputs = {"eps0": eps0, "n": n, "k": k}
    warnings: tuple[str, ...] = ()
    if rb.floor_limited:
        warnings = ("floating point limits the resolution here (the kernels' rounding floor): the bound is certified "
                    "but may be loose (see details.bracket)",)
    elif not rb.converged:
        warnings = ("refinement stopped short of rtol (at its work limit, or after rounds that no longer narrowed the "
                    "bracket): the bound is certified but may be loose (see details.bracket)",)
    citation = f"{m.citation}; Renyi divergence of the clone pair (this package, numeric/renyi.py)"
    bounds = tuple(
        Bound(
            "rdp",
            up if m.kind == "upper" else lo,
            m.kind,  # type: ignore[arg-type]
            m.name,
            citation,
            dict(inputs, alpha=a),
            m.assumes,
            warnings,
            {"bracket": [lo, up], "rtol": rtol},
        )
        for a, up, lo in zip(rb.orders, rb.upper, rb.lower)
    )
    return RdpCurve(rb.orders, rb.upper, rb.lower, bounds, rb.converged)


# ---------------------------------------------------------------------------------------
# Conversions and comparators
# ---------------------------------------------------------------------------------------


def cks_epsilon(orders: Sequence[float] | np.ndarray, rdp: Sequence[float] | np.ndarray,
                delta: float) -> tuple[float, float]:
    """CKS20 Proposition 12: ``min_alpha rho(alpha) + log1p(-1/alpha) - (log delta + log
    alpha)/(alpha - 1)``, clipped at 0. Returns ``(eps, best order)``; the result is rounded
    up by a few ulps."""
    a = np.asarray(orders, dtype=float)
    r = np.asarray(rdp, dtype=float)
    eps = r + np.log1p(-1.0 / a) - (math.log(delta) + np.log(a)) / (a - 1.0)
    i = int(np.argmin(eps))
    return max(float(eps[i]) * (1.0 + 1e-13) + 1e-300, 0.0), float(a[i])


def _rr_terms(eps: float, k: int) -> tuple[np.ndarray, np.ndarray]:
    """``(log P(l), log Q(l))``, ``l = 0 .. k``, of the number of flips ``l`` of the k-fold
    product of binary randomized response with parameter ``eps`` (KOV15 Theorem 3.3: this pair
    is the worst case), under the two inputs."""
    l = np.arange(k + 1, dtype=float)
    logc = gammaln(k + 1.0) - gammaln(l + 1.0) - gammaln(k - l + 1.0)
    lp, lq = -math.log1p(math.exp(-eps)), -math.log1p(math.exp(eps))
    return logc + (k - l) * lp + l * lq, logc + l * lp + (k - l) * lq


def _log_rr_delta(terms: tuple[np.ndarray, np.ndarray], eps_g: float) -> float:
    """``log delta`` at ``eps_g`` of the pair of :func:`_rr_terms`: the log of ``sum over l with
    P(l) > e^eps_g Q(l) of P(l) (1 - e^eps_g Q(l)/P(l))``, each term exact in logs."""
    a, b = terms[0], terms[1] + eps_g
    keep = a > b
    if not np.any(keep):
        return -math.inf
    aa, bb = a[keep], b[keep]
    t = aa + np.log(-np.expm1(bb - aa))
    m = float(np.max(t))
    return m + math.log(float(np.sum(np.exp(t - m))))


def _rr_root_estimate(terms: tuple[np.ndarray, np.ndarray], target: float) -> float:
    """Where ``log delta`` of :func:`_rr_terms` crosses ``target``, estimated (a starting
    point, never a bound): between consecutive breakpoints ``log P(l) - log Q(l)`` the set of
    counted ``l`` is fixed, ``delta(g) = S_P - e^g S_Q`` with prefix sums, and the crossing
    is in closed form; the one inside its own interval is taken. ``nan`` when none is."""
    lp, lq = terms
    half = lp > lq  # the counted l form a prefix of these (the breakpoints decrease in l)
    lp, lq = lp[half], lq[half]
    if lp.size == 0:
        return math.nan
    sp, sq = np.logaddexp.accumulate(lp), np.logaddexp.accumulate(lq)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        root = sp + np.log(-np.expm1(target - sp)) - sq  # log(S_P - e^target) - log S_Q
    upper = lp - lq  # the prefix 0..m is counted for g below upper[m] ...
    lower = np.append(upper[1:], 0.0)  # ... and at least upper[m+1]
    inside = np.flatnonzero((root >= lower) & (root < upper))
    return float(root[inside[0]]) if inside.size else math.nan


def optimal_composition_epsilon(eps: float, delta_round: float, k: int, delta: float) -> float:
    """Smallest ``eps_g`` with ``1 - (1-delta_round)^k (1 - delta_RR(eps_g)) <= delta`` (KOV15
    Theorem 3.3, optimal for k-fold adaptive composition of (eps, delta_round)-DP), found
    by bisection on a monotone function (each point evaluated term by term); returns the
    admissible end (an upper bound). The bisection starts on a bracket of relative width 2e-9
    around the crossing estimated from prefix sums (:func:`_rr_root_estimate`) when the exact
    evaluation confirms it, else on ``[0, k eps]``; either way it stops at relative width 1e-10."""
    # 1 - (1-delta) / (1-delta_round)^k without cancellation (to a few ulps: the margin below is
    # 1e-12 in log delta)
    slack = -math.expm1(math.log1p(-delta) - k * math.log1p(-delta_round))
    if slack <= 0.0:
        return math.inf
    target = math.log(slack)
    terms = _rr_terms(eps, k)
    lo, hi = 0.0, k * eps
    if _log_rr_delta(terms, 0.0) <= target:
        return 0.0
    guess = _rr_root_estimate(terms, target - 1e-12)
    if math.isfinite(guess) and 0.0 < guess < hi:
        a, b = guess * (1.0 - 1e-9), min(guess * (1.0 + 1e-9), hi)
        if _log_rr_delta(terms, b) <= target - 1e-12 and _log_rr_delta(terms, a) > target - 1e-12:
            lo, hi = a, b
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if _log_rr_delta(terms, mid) <= target - 1e-12:
            hi = mid
        else:
            lo = mid
        if hi - lo <= 1e-10 * hi:
            break
    return hi


def advanced_composition_epsilon(eps: Sequence[float], delta_slack: float,
                                 counts: Sequence[int] | None = None) -> float:
    """KOV15 Theorem 3.5 (heterogeneous): with ``d' = delta_slack`` the composition is
    (eps_g, 1 - (1-d') prod(1 - delta_t))-DP with ``eps_g`` the minimum of ``sum eps_t``
    and ``sum (e^eps_t - 1) eps_t / (e^eps_t + 1) + sqrt(2 sum eps_t^2 log(e + sqrt(sum
    eps_t^2)/d'))`` and the same with ``log(1/d')``. ``counts[i]`` repeats ``eps[i]``
    (default: once each); the sums are weighted, never expanded."""
    e = np.asarray(eps, dtype=float)
    c = np.ones_like(e) if counts is None else np.asarray(counts, dtype=float)
    s2 = float(np.sum(c * e * e))
    drift = float(np.sum(c * np.expm1(e) * e / (np.exp(e) + 1.0)))
    a = math.sqrt(2 * s2 * math.log(math.e + math.sqrt(s2) / delta_slack))
    b = math.sqrt(2 * s2 * math.log(1.0 / delta_slack))
    return min(float(np.sum(c * e)), drift + a, drift + b) * (1.0 + 1e-12)


# ---------------------------------------------------------------------------------------
# Rounds and composition
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Round:
    """One shuffled round: ``n`` reports of an ``eps0``-DP local randomizer, repeated ``count`` times."""

    eps0: float
    n: int
    count: int = 1


ROUND_FIELDS = ("eps0", "n", "count")


def _read_text(p: Path, what: str) -> str:
    """A small text file, or :class:`InvalidParameter` naming it."""
    try:
        size = p.stat().st_size
        if size > MAX_FILE_BYTES:
            raise InvalidParameter(f"{what} {str(p)!r} is {size} bytes (accepted: at most {MAX_FILE_BYTES})")
        return p.read_text(encoding="utf-8")
    except OSError as exc:
        raise InvalidParameter(f"cannot read {what} {str(p)!r}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise InvalidParameter(f"{what} {str(p)!r} is not UTF-8 text") from None


def read_rounds(path: str | Path) -> list[Round]:
    """Rounds from a JSON list of objects ``{"eps0":…, "n":…, "count":…}`` (``count``
    optional; a top-level object ``{"rounds": [...]}`` is accepted too) or a CSV file with
    header ``eps0,n[,count]``. Any other column or key is refused (a typo such as ``cnt``
    for ``count`` would otherwise compose one round where many were meant)."""
    p = Path(path)
    where = f"rounds file {str(p)!r}"
    text = _read_text(p, "rounds file")
    rows: list[Any]
    if p.suffix.lower() == ".json" or text.lstrip().startswith(("[", "{")):
        data = v.load_json(text, where)
        if isinstance(data, dict):
            unknown = sorted(set(data) - {"rounds"})
            if unknown:
                raise InvalidParameter(f"{where}: unknown key(s) {', '.join(map(repr, unknown))} "
                                       "(accepted: a list of rounds, or {\"rounds\": [...]})")
            data = data.get("rounds")
        if not isinstance(data, list):
            raise InvalidParameter(f"{where} must be a list of {{\"eps0\": ..., \"n\": ..., \"count\": ...}} objects")
        rows = data
    else:
        reader = csv.reader(text.splitlines())
        try:
            header = [h.strip() for h in next(reader)]
        except StopIteration:
            raise InvalidParameter(f"{where} is empty (accepted: a CSV header eps0,n[,count] and one row per round)") from None
        except csv.Error as exc:
            raise InvalidParameter(f"{where} is not valid CSV: {exc}") from None
        unknown = [h for h in header if h not in ROUND_FIELDS]
        if unknown:
            raise InvalidParameter(f"{where}: unknown column(s) {', '.join(map(repr, unknown))} "
                                   f"(accepted: {', '.join(ROUND_FIELDS)})")
        if len(set(header)) != len(header):
            raise InvalidParameter(f"{where}: a column appears twice in the header {','.join(header)}")
        rows = []
        try:
            for line_no, cells in enumerate(reader, 2):
                if not any(c.strip() for c in cells):
                    continue
                if len(cells) != len(header):
                    raise InvalidParameter(f"{where}, line {line_no}: {len(cells)} cells for {len(header)} columns")
                rows.append(dict(zip(header, cells)))
        except csv.Error as exc:
            raise InvalidParameter(f"{where} is not valid CSV: {exc}") from None
    if len(rows) > 10 * MAX_DISTINCT_ROUNDS:
        raise InvalidParameter(f"{where} has {len(rows)} rows (accepted: at most {10 * MAX_DISTINCT_ROUNDS})")
    out = []
    for i, row in enumerate(rows, 1):
        if not isinstance(row, dict):
            raise InvalidParameter(f"{where}: round {i} is not an object with eps0, n and count")
        unknown = sorted(str(key) for key in row if key not in ROUND_FIELDS)
        if unknown:
            raise InvalidParameter(f"{where}: round {i} has unknown key(s) {', '.join(map(repr, unknown))} "
                                   f"(accepted: {', '.join(ROUND_FIELDS)})")
        missing = [key for key in ("eps0", "n") if row.get(key) in (None, "")]
        if missing:
            raise InvalidParameter(f"{where}: round {i} needs {' and '.join(missing)}")
        count = row.get("count")
        out.append(Round(v.EPS0.check(row["eps0"], label=f"round {i} eps0"), v.N.check(row["n"], label=f"round {i} n"),
                         v.ROUNDS.check(1 if count in (None, "") else count, label=f"round {i} count")))
    if not out:
        raise InvalidParameter(f"{where} has no rounds")
    return out


@dataclass(frozen=True)
class Composition:
    """The (eps, delta) of T composed shuffled rounds by each route; ``best`` names the
    tightest certified one."""

    delta: float
    rounds: tuple[Round, ...]
    bounds: tuple[Bound, ...]
    best: str
    warnings: tuple[str, ...] = field(default=())


def compose(
    rounds: Sequence[Round] | None = None,
    *,
    eps0: float | None = None,
    n: int | None = None,
    T: int | None = None,
    delta: float = 1e-6,
    method: str = "clones",
    k: int | None = None,
    orders: Iterable[float] | None = None,
    rtol: float = 1e-3,
    discretization: float | None = None,
    randomizer: Any = None,
) -> Composition:
    """(eps, delta) after the adaptive composition of shuffled rounds, by (1) RDP
    composition + the CKS20 conversion, (2) the PLD route (pessimistic Connect-the-Dots
    PLD of each round composed by ``dp_accounting``, :func:`.pld.pld_route`; labelled
    ``not applicable`` with the install line when the extra is missing) and (3)
    optimal/advanced composition of each round's (eps, delta).

    Give either ``rounds`` or the homogeneous ``eps0, n, T``. ``discretization`` is the
    privacy-loss grid of the PLD route (``None``: sized from the rounds).

    ``randomizer``: the randomizer every user runs in every round (a
    :class:`.randomizers.RandomizerFamily`, or one :class:`.randomizers.Randomizer` whose eps0
    every round has). The PLD and advanced routes then compose the exact privacy-blanket bound
    of each round (its profile is a valid per-round profile: it bounds every pair of
    neighbouring datasets in both orders); the RDP route keeps ``method`` (a generic analysis,
    which must apply to the randomizer).
    """
    if rounds is None:
        if eps0 is None or n is None or T is None:
            raise InvalidParameter("give either rounds or all of eps0, n and T")
        rounds = [Round(v.check_eps0(eps0), v.check_n(n), v.ROUNDS.check(T))]
    rounds = tuple(Round(v.check_eps0(r.eps0), v.check_n(r.n), v.ROUNDS.check(r.count, "count")) for r in rounds)
    if not rounds:
        raise InvalidParameter("at least one round is needed")
    merged: dict[tuple[float, int], int] = {}
    for r in rounds:  # identical rounds are analysed once
        merged[(r.eps0, r.n)] = merged.get((r.eps0, r.n), 0) + r.count
    if len(merged) > MAX_DISTINCT_ROUNDS:
        raise InvalidParameter(f"{len(merged)} distinct rounds (accepted: at most {MAX_DISTINCT_ROUNDS}; "
                               "rounds with the same eps0 and n count once)")
    rounds = tuple(Round(e0, nn, c) for (e0, nn), c in merged.items())
    delta = v.check_delta(delta)
    if k is not None:
        k = v.K.check(k)
    if discretization is not None:
        discretization = v.DISCRETIZATION.check(discretization)
    m = get_method(method)
    if m.kind != "upper" or not m.numerical:
        raise InvalidParameter(f"compose needs a numerical upper-bound method (clones, stronger-clones, krr), got {method!r}")
    if randomizer is not None:
        k = _check_randomizer(randomizer, rounds, m, k)
    alpha = check_orders(DEFAULT_ORDERS if orders is None else v.check_orders(orders))
    total_T = sum(r.count for r in rounds)
    if total_T > v.MAX_ROUNDS:
        raise InvalidParameter(f"T: {total_T} rounds in all is out of range (accepted: at most {v.MAX_ROUNDS:g})")
    inputs: dict[str, Any] = {"delta": delta, "T": total_T, "method": method, "k": k}
    if randomizer is not None:
        inputs["randomizer"] = randomizer.describe()
    if len(rounds) == 1:
        inputs.update(eps0=rounds[0].eps0, n=rounds[0].n)
    else:
        inputs["distinct_rounds"] = len(rounds)
    warnings: list[str] = []

    # (1) RDP: per distinct round, summed (Mironov 2017 Prop. 1), then CKS20 Prop. 12.
    rdp_bound = _rdp_route(rounds, delta, method, k, alpha, rtol, inputs)
    # (2) PLD route: pessimistic PLD per distinct round, composed by dp_accounting
    #     (skipped with the reason when its grids would be too large to finish).
    pld_bound = _pld_route_checked(rounds, delta, method, k, discretization, inputs, randomizer)
    # (3) Per-round (eps, delta) + optimal (homogeneous) or advanced (heterogeneous) composition.
    adv_bound = _advanced_route(rounds, delta, method, k, inputs, randomizer)
    bounds = (rdp_bound, pld_bound, adv_bound)
    applicable = [b for b in bounds if b.applicable and b.value is not None]
    best = min(applicable, key=lambda b: b.value).method  # type: ignore[arg-type, return-value]
    return Composition(delta, rounds, bounds, best, tuple(warnings))


def cks_offset(orders: np.ndarray, delta: float) -> np.ndarray:
    """The order-dependent part of CKS20 Proposition 12, ``log1p(-1/alpha) - (log delta + log
    alpha)/(alpha - 1)``: ``eps(alpha) = rho(alpha) + cks_offset(alpha)``."""
    return np.log1p(-1.0 / orders) - (math.log(delta) + np.log(orders)) / (orders - 1.0)


def rdp_lower_envelope(orders: np.ndarray, known: np.ndarray, upper: np.ndarray, lower: np.ndarray,
                       at: np.ndarray) -> np.ndarray:
    """Lower bounds on an RDP curve ``R`` at the orders ``at`` from certified brackets
    ``lower[i] <= R(orders[i]) <= upper[i]`` at the ``known`` indices of ``orders``.

    ``R`` is a Renyi divergence of one pair, the max of two such, or a positive combination of
    those (composed rounds), so (i) ``R >= 0`` and ``R`` is non-decreasing in the order (van
    Erven, Harremoes, IEEE Trans. Inf. Theory 2014, Theorem 3) and (ii) ``F(alpha) = (alpha - 1)
    R(alpha)`` is convex (for one pair ``F`` is the log of ``E_Q[(P/Q)^alpha]``, convex by
    Hoelder, ibid. Corollary 2; maxima and positive sums of convex functions are convex). By
    (ii) ``F`` lies above every secant's extension beyond the secant's ends; with the secant of
    two known orders ``a < b``, ``F(x) >= F_lo(b) + (x - b) (F_lo(b) - F_up(a)) / (b - a)`` for
    ``x > b`` and ``F(x) >= F_lo(a) - (a - x) (F_up(b) - F_lo(a)) / (b - a)`` for ``x < a``. The
    bound at each order of ``at`` is the largest of these, of (i) from the known orders below,
    and of 0."""
    ka = orders[known]
    lo = np.maximum(np.asarray(lower, dtype=float), 0.0)
    up = np.asarray(upper, dtype=float)
    x = orders[at][:, None]
    best = np.zeros(x.shape[0])
    below = ka[None, :] < x  # (i): R(x) >= R(a) >= lower(a) for every known a < x
    best = np.maximum(best, np.max(np.where(below, lo[None, :], 0.0), axis=1, initial=0.0))
    if ka.size >= 2:
        f_lo, f_up = (ka - 1.0) * lo, (ka - 1.0) * up
        i, j = np.triu_indices(ka.size, 1)  # pairs a = ka[i] < b = ka[j]
        a, b = ka[i][None, :], ka[j][None, :]
        with np.errstate(invalid="ignore", over="ignore"):
            beyond = f_lo[j] + (x - b) * (f_lo[j] - f_up[i]) / (b - a)
            before = f_lo[i] - (a - x) * (f_up[j] - f_lo[i]) / (b - a)
            f = np.where(x > b, beyond, np.where(x < a, before, -np.inf))
        f = np.where(np.isnan(f), -np.inf, f)
        best = np.maximum(best, np.max(f, axis=1, initial=-np.inf) / (x[:, 0] - 1.0))
    return best


def rdp_order_hint(orders: np.ndarray, mean_loss: float, delta: float) -> int:
    """Index of the order where the CKS20 conversion of ``alpha * mean_loss`` is smallest: the
    best order if the composed privacy loss were Gaussian with mean ``mean_loss`` (then ``D_alpha
    = alpha KL``). Only chooses where to evaluate first."""
    return int(np.argmin(orders * max(mean_loss, 0.0) + cks_offset(orders, delta)))


def gaussian_mean_from_tail(eps_tail: float, tail: float) -> float:
    """The mean ``mu`` of a Gaussian privacy loss ``N(mu, 2 mu)`` whose ``delta`` falls to ``tail``
    at ``eps_tail``, by ``(eps_tail - mu)^2 = 4 mu log(1/tail)`` (a tail-bound estimate; only a
    guess of the loss scale)."""
    b = 2.0 * eps_tail + 4.0 * math.log(1.0 / tail)
    return 0.5 * (b - math.sqrt(max(b * b - 4.0 * eps_tail * eps_tail, 0.0)))


def _composed_loss_guess(rounds: Sequence[Round], method: str, k: int | None) -> float | None:
    """A guess of the composed privacy loss's mean from each round's tail ``eps`` (the PLD route's
    :func:`.pld.round_tails`, cached, so computed once for both routes): the sum of the rounds'
    :func:`gaussian_mean_from_tail`. ``None`` when a tail cannot be found."""
    total = 0.0
    for r in rounds:
        try:
            eps_tail = max(round_tails(pair_for(method, r.eps0, r.n, k), DEFAULT_TAIL))
        except (CertificationError, InvalidParameter):
            return None
        if not math.isfinite(eps_tail):
            return None
        total += r.count * gaussian_mean_from_tail(eps_tail, DEFAULT_TAIL)
    return total


#: The RDP route evaluates the per-round curves at the orders up to this many grid places above its
#: guess of the best order first; the orders above are evaluated only if the bounds of
#: :func:`rdp_lower_envelope` cannot rule them out.
RDP_ORDER_MARGIN = 3


def _rdp_route(rounds: Sequence[Round], delta: float, method: str, k: int | None, alpha: np.ndarray,
               rtol: float, inputs: dict[str, Any]) -> Bound:
    """The RDP row of :func:`compose`: each distinct round's certified RDP curve, summed over
    the rounds (Mironov 2017 Prop. 1), converted by CKS20 Prop. 12 at the best of the orders
    ``alpha``.

    The curves are first evaluated only at the orders up to :data:`RDP_ORDER_MARGIN` places above
    a guessed best order (:func:`rdp_order_hint` for the loss scale of :func:`_composed_loss_guess`;
    the large orders are the dear ones); the orders above are left out when the certified lower
    ends at the evaluated orders rule them out (:func:`rdp_lower_envelope`: their conversions
    cannot be below the best), else every order is evaluated. The reported eps is the minimum
    over all orders as before (each value a certified upper bound, the brackets to ``rtol``
    either way); the orders left out are listed. (Always a prefix of the order grid: some sets of
    large orders alone make the curves' refinement much slower than the whole grid.)"""
    m = get_method(method)
    size = alpha.size
    top = size
    guess = _composed_loss_guess(rounds, method, k)
    if guess is not None:
        top = min(size, rdp_order_hint(alpha, guess, delta) + RDP_ORDER_MARGIN + 1)

    def evaluate(count: int) -> tuple[np.ndarray, np.ndarray, bool]:
        up, lo, converged = np.zeros(count), np.zeros(count), True
        for r in rounds:
            curve = rdp_curve(r.eps0, r.n, method, k, alpha[:count], rtol)
            up += r.count * np.asarray(curve.upper)
            lo += r.count * np.asarray(curve.lower)
            converged &= curve.converged
        return up * (1.0 + 1e-13), lo, converged  # rounding of the sum, upwards

    total, lower, converged = evaluate(top)
    if top < size:
        known, rest = np.arange(top), np.arange(top, size)
        floor = rdp_lower_envelope(alpha, known, total, lower, rest) + cks_offset(alpha[rest], delta)
        if np.any(floor < float(np.min(total + cks_offset(alpha[:top], delta)))):
            top = size
            total, lower, converged = evaluate(top)
    eps_rdp, best_order = cks_epsilon(alpha[:top], total, delta)
    rdp_warn = []
    if best_order in (float(alpha[0]), float(alpha[-1])) and eps_rdp > 0:
        rdp_warn.append(f"best order {best_order:g} is at the edge of the order grid [{alpha[0]:g}, {alpha[-1]:g}]; extend --orders")
    if not converged:
        rdp_warn.append("some RDP values stopped short of rtol (refinement work limit, rounds that no longer narrowed "
                        "the bracket, or the floating-point floor; still certified upper bounds)")
    details: dict[str, Any] = {"conversion": CONVERSION, "best_order": best_order, "orders": alpha[:top].tolist(),
                               "rdp": total.tolist()}
    if top < size:
        details["orders_ruled_out"] = alpha[top:].tolist()
        details["ruled_out_by"] = ("certified lower ends at the evaluated orders: the divergence is non-decreasing in "
                                   "the order and (alpha - 1) D_alpha is convex, so these orders' conversions cannot "
                                   "be below the best")
    return Bound(
        "epsilon", eps_rdp, "upper", "rdp", f"{MIRONOV}; {CKS}", inputs,
        f"{m.name}: {m.assumes}", tuple(rdp_warn), details,
    )


def _check_randomizer(randomizer: Any, rounds: Sequence[Round], m: Any, k: int | None) -> int | None:
    """Check the randomizer against every round's eps0 and ``method`` (which must apply to
    it); returns ``k`` (a k-RR randomizer's own when not given)."""
    from .analyses import applies_to
    members = [randomizer_at(randomizer, r.eps0) for r in rounds]
    if not applies_to(m, members[0]) or m.needs_randomizer:
        raise InvalidParameter(f"method {m.name!r} does not apply to {randomizer.describe()} in compose (the RDP "
                               "route needs a generic analysis: clones or stronger-clones; krr for k-RR)")
    return krr_alphabet(members[0], k)


def _pld_route_checked(rounds: Sequence[Round], delta: float, method: str, k: int | None,
                       discretization: float | None, inputs: dict[str, Any], randomizer: Any = None) -> Bound:
    """The PLD row of :func:`compose` (:func:`.pld.pld_route`), or ``not applicable`` with
    the reason when its grids would be too large (:func:`_pld_size_problem`; with a randomizer
    the estimate uses the stronger-clones pair, whose tails and spread bound the blanket's)."""
    too_large = _pld_size_problem(rounds, method if randomizer is None else "stronger-clones", k, discretization)
    if too_large is not None:
        return Bound("epsilon", None, "not applicable", "pld", "Google dp_accounting",
                     dict(inputs, discretization=discretization), f"PLD route: {too_large}")
    return pld_route([(r.eps0, r.n, r.count) for r in rounds], delta, method, k, discretization, inputs, randomizer)


#: The shares of ``delta`` spent on the rounds that :func:`advanced_best` tries.
ADVANCED_SPLITS = (0.1, 0.3, 0.5, 0.7, 0.9)


def advanced_best(rounds: Sequence[Round], delta: float, round_eps: Callable[[Round, float], float],
                  ) -> tuple[float, dict[str, Any]]:
    """The advanced row's value from each round's eps at a per-round delta (``round_eps(round,
    delta_round)``): KOV15 Theorem 3.3 (optimal, homogeneous, up to :data:`OPTIMAL_MAX_T`
    rounds), else Theorem 3.5, the best of the splits :data:`ADVANCED_SPLITS` of ``delta``
    between the rounds and the slack; ``(inf, {})`` when every split's per-round delta is below
    the supported minimum. Both theorems' eps are non-decreasing in the per-round eps, so
    per-round lower bounds give a lower bound on the row (used by the planners to rule the
    row out)."""
    total_T = sum(r.count for r in rounds)
    best_adv, best_detail = math.inf, dict[str, Any]()
    for frac in ADVANCED_SPLITS:
        d_round = delta * frac / total_T
        if d_round < v.MIN_DELTA:
            continue
        eps_r = [round_eps(r, d_round) for r in rounds]
        if len(rounds) == 1 and total_T <= OPTIMAL_MAX_T:
            e = optimal_composition_epsilon(eps_r[0], d_round, total_T, delta)
            how = f"{KOV}, Theorem 3.3 (optimal composition)"
        else:
            slack = -math.expm1(math.log1p(-delta) - total_T * math.log1p(-d_round))  # no cancellation
            e = advanced_composition_epsilon(eps_r, slack, [r.count for r in rounds]) if slack > 0 else math.inf
            how = f"{KOV}, Theorem 3.5 (advanced composition)"
        if e < best_adv:
            best_adv, best_detail = e, {"delta_per_round": d_round, "eps_per_round": eps_r, "theorem": how}
    return best_adv, best_detail


def _advanced_route(rounds: Sequence[Round], delta: float, method: str, k: int | None,
                    inputs: dict[str, Any], randomizer: Any = None) -> Bound:
    """Each round's (eps, delta_round) composed as a generic (eps, delta)-DP mechanism: KOV15
    Theorem 3.3 (optimal, homogeneous, up to :data:`OPTIMAL_MAX_T` rounds), else Theorem
    3.5 (advanced); the best of five splits of ``delta`` between the rounds and the slack.
    With a randomizer, each round's eps is its privacy-blanket bound."""
    from . import api  # lazy: api pulls in the hockey-stick machinery
    from .analyses import Query
    from .numeric.search import epsilon_for_delta

    m = get_method(method)
    profiles: dict[Round, Any] = {}

    def round_eps(r: Round, d_round: float) -> float:
        if randomizer is None:
            # api.epsilon's value (upper end of the certified bracket at rtol 1e-6, at most eps0),
            # on one profile per round shared by the five splits: its refined blocks carry over
            if r not in profiles:
                assert m.profile is not None
                profiles[r] = m.profile(Query(r.eps0, r.n, k, 0.0, None))
            return min(float(epsilon_for_delta(profiles[r], d_round, 1e-6).upper), r.eps0)
        b = api.epsilon(r.eps0, r.n, d_round, "blanket", randomizer=randomizer_at(randomizer, r.eps0))
        return math.inf if b.value is None else float(b.value)

    validity = "per-round (eps, delta) of the shuffled round, composed as generic (eps, delta)-DP mechanisms"
    best_adv, best_detail = advanced_best(rounds, delta, round_eps)
    if not best_detail:
        return Bound("epsilon", None, "not applicable", "advanced", KOV, inputs,
                     f"delta / T = {delta / sum(r.count for r in rounds):.3g} per round is below {v.MIN_DELTA:g}")
    if randomizer is not None:
        validity = f"per-round (eps, delta) of the blanket of {randomizer.describe()}, composed as generic (eps, delta)-DP mechanisms"
    return Bound("epsilon", best_adv, "upper", "advanced", best_detail["theorem"], inputs, validity, (), best_detail)


def _pld_size_problem(rounds: Sequence[Round], method: str, k: int | None, discretization: float | None) -> str | None:
    """Why the PLD route would not finish in reasonable time or memory, or ``None``: the part
    of the estimate known before any round is built (each round's grid runs to its tail
    ``eps``, :func:`.pld.round_tails`, cached and reused by the route, in steps of the route's
    discretization, :func:`.pld.auto_discretization` by default). The route itself completes
    the estimate with each round's spread once built (:func:`.pld.composed_size`)."""
    try:
        tails = {r: round_tails(pair_for(method, r.eps0, r.n, k)) for r in rounds}
    except CertificationError:
        return None  # the route itself says why
    step = auto_discretization(list(tails.values())) if discretization is None else discretization
    composed = sum(min(sum(tails[r]) / step, 2.0 * MAX_GRID) for r in rounds)
    for r in rounds:
        if r.count > PLD_MAX_SPARSE_T and sum(tails[r]) / step <= 1000:
            return (f"the round eps0={r.eps0:g}, n={r.n} has a privacy-loss distribution of a few points, which "
                    f"dp_accounting self-composes as a sparse one (its size test alone computes size**T, T = "
                    f"{r.count}); the RDP route covers it")
    if composed > MAX_COMPOSED_POINTS:
        coarser = "" if discretization is None else " (or a coarser --discretization)"
        return (f"composing {sum(r.count for r in rounds)} rounds needs a privacy-loss grid of about {composed:.2g} "
                f"points at discretization {step:.3g} (limit {MAX_COMPOSED_POINTS:g}, memory); the RDP route "
                f"covers any T{coarser}")
    return None
