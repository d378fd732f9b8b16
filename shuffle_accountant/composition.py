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
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np
from scipy.special import gammaln

from .analyses import get_method, pair_for
from .errors import InvalidParameter
from .numeric.renyi import DEFAULT_ORDERS, check_orders, renyi_bounds
from .pld import pld_route
from .results import Bound
from .validation import check_int, check_positive, check_probability_open

MIRONOV = "Mironov, CSF 2017 (Renyi DP), Proposition 1 (additive composition)"
CKS = "Canonne, Kamath, Steinke, NeurIPS 2020 (arXiv 2004.00010), Proposition 12"
KOV = "Kairouz, Oh, Viswanath, ICML 2015"
CONVERSION = "CKS20 improved RDP->(eps,delta) conversion"


# ---------------------------------------------------------------------------------------
# RDP curve of one shuffled round
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RdpCurve:
    """RDP curve of one shuffled round: ``upper[i] >= D_alpha`` at ``orders[i]`` (certified)
    and ``lower[i] <= D_alpha`` of the analysis' pair; ``bounds`` has one labelled
    :class:`Bound` per order."""

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
    eps0 = check_positive("eps0", eps0)
    n = check_int("n", n)
    m = get_method(method)
    if not m.numerical:
        raise InvalidParameter(f"method {method!r} is a closed form for (eps, delta); RDP needs a clone-pair method")
    alpha = check_orders(DEFAULT_ORDERS if orders is None else orders)
    sp = pair_for(method, eps0, n, k)
    rb = renyi_bounds(sp.pair, alpha, rtol=rtol, scale=sp.scale)
    inputs = {"eps0": eps0, "n": n, "k": k}
    warnings: tuple[str, ...] = ()
    if not rb.converged:
        warnings = ("refinement stopped at its work limit: the bound is certified but may be loose (see details.bracket)",)
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


def cks_epsilon(orders: Sequence[float], rdp: Sequence[float], delta: float) -> tuple[float, float]:
    """CKS20 Proposition 12: ``min_alpha rho(alpha) + log1p(-1/alpha) - (log delta + log
    alpha)/(alpha - 1)``, clipped at 0. Returns ``(eps, best order)``; the result is rounded
    up by a few ulps."""
    a = np.asarray(orders, dtype=float)
    r = np.asarray(rdp, dtype=float)
    eps = r + np.log1p(-1.0 / a) - (math.log(delta) + np.log(a)) / (a - 1.0)
    i = int(np.argmin(eps))
    return max(float(eps[i]) * (1.0 + 1e-13) + 1e-300, 0.0), float(a[i])


def _log_rr_delta(eps: float, k: int, eps_g: float) -> float:
    """``log delta`` of the k-fold product of binary randomized response with parameter
    ``eps`` at ``eps_g`` (KOV15 Theorem 3.3: this pair is the worst case)."""
    l = np.arange(k + 1, dtype=float)
    logc = gammaln(k + 1.0) - gammaln(l + 1.0) - gammaln(k - l + 1.0)
    lp, lq = -math.log1p(math.exp(-eps)), -math.log1p(math.exp(eps))
    a = logc + (k - l) * lp + l * lq  # P(l flips)
    b = logc + l * lp + (k - l) * lq + eps_g  # e^eps_g Q(l)
    keep = a > b
    if not np.any(keep):
        return -math.inf
    aa, bb = a[keep], b[keep]
    terms = aa + np.log(-np.expm1(bb - aa))
    m = float(np.max(terms))
    return m + math.log(float(np.sum(np.exp(terms - m))))


def optimal_composition_epsilon(eps: float, delta_round: float, k: int, delta: float) -> float:
    """Smallest ``eps_g`` with ``1 - (1-delta_round)^k (1 - delta_RR(eps_g)) <= delta`` (KOV15
    Theorem 3.3, optimal for k-fold adaptive composition of (eps, delta_round)-DP), found
    by bisection on a monotone function; returns the admissible end (an upper bound)."""
    slack = 1.0 - (1.0 - delta) / (1.0 - delta_round) ** k
    if slack <= 0.0:
        return math.inf
    target = math.log(slack)
    lo, hi = 0.0, k * eps
    if _log_rr_delta(eps, k, 0.0) <= target:
        return 0.0
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if _log_rr_delta(eps, k, mid) <= target - 1e-12:
            hi = mid
        else:
            lo = mid
        if hi - lo <= 1e-10 * hi:
            break
    return hi


def advanced_composition_epsilon(eps: Sequence[float], delta_slack: float) -> float:
    """KOV15 Theorem 3.5 (heterogeneous): with ``d' = delta_slack`` the composition is
    (eps_g, 1 - (1-d') prod(1 - delta_t))-DP with ``eps_g`` the minimum of ``sum eps_t``
    and ``sum (e^eps_t - 1) eps_t / (e^eps_t + 1) + sqrt(2 sum eps_t^2 log(e + sqrt(sum
    eps_t^2)/d'))`` and the same with ``log(1/d')``."""
    e = np.asarray(eps, dtype=float)
    s2 = float(np.sum(e * e))
    drift = float(np.sum(np.expm1(e) * e / (np.exp(e) + 1.0)))
    a = math.sqrt(2 * s2 * math.log(math.e + math.sqrt(s2) / delta_slack))
    b = math.sqrt(2 * s2 * math.log(1.0 / delta_slack))
    return min(float(np.sum(e)), drift + a, drift + b) * (1.0 + 1e-12)


# ---------------------------------------------------------------------------------------
# Rounds and composition
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Round:
    """One shuffled round: ``n`` reports of an ``eps0``-DP local randomizer, repeated ``count`` times."""

    eps0: float
    n: int
    count: int = 1


def read_rounds(path: str | Path) -> list[Round]:
    """Rounds from a JSON list of objects ``{"eps0":…, "n":…, "count":…}`` (``count``
    optional) or a CSV file with header ``eps0,n[,count]``."""
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as exc:
        raise InvalidParameter(f"cannot read rounds file {str(p)!r}: {exc.strerror}") from None
    rows: list[dict[str, Any]]
    if p.suffix.lower() == ".json" or text.lstrip().startswith(("[", "{")):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InvalidParameter(f"rounds file {str(p)!r} is not valid JSON: {exc.msg} (line {exc.lineno})") from None
        if isinstance(data, dict):
            data = data.get("rounds")
        if not isinstance(data, list):
            raise InvalidParameter("a JSON rounds file must be a list of {\"eps0\": ..., \"n\": ...} objects")
        rows = data
    else:
        rows = list(csv.DictReader(text.splitlines()))
    out = []
    for i, row in enumerate(rows, 1):
        if not isinstance(row, dict) or "eps0" not in row or "n" not in row:
            raise InvalidParameter(f"round {i} of {str(p)!r} needs fields eps0 and n")
        try:
            eps0 = float(row["eps0"])
            n = float(row["n"])
            count = float(row.get("count") or 1)
        except (TypeError, ValueError):
            raise InvalidParameter(f"round {i} of {str(p)!r}: eps0, n, count must be numbers") from None
        out.append(Round(check_positive(f"round {i} eps0", eps0), check_int(f"round {i} n", n),
                         check_int(f"round {i} count", count, low=1, high=10**9)))
    if not out:
        raise InvalidParameter(f"rounds file {str(p)!r} has no rounds")
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
) -> Composition:
    """(eps, delta) after the adaptive composition of shuffled rounds, by (1) RDP
    composition + the CKS20 conversion, (2) the PLD route (pessimistic Connect-the-Dots
    PLD of each round composed by ``dp_accounting``, :func:`.pld.pld_route`; labelled
    ``not applicable`` with the install line when the extra is missing) and (3)
    optimal/advanced composition of each round's (eps, delta).

    Give either ``rounds`` or the homogeneous ``eps0, n, T``. ``discretization`` is the
    privacy-loss grid of the PLD route (``None``: 1e-4, finer for rounds whose losses span
    few steps).
    """
    if rounds is None:
        if eps0 is None or n is None or T is None:
            raise InvalidParameter("give either rounds or all of eps0, n and T")
        rounds = [Round(check_positive("eps0", eps0), check_int("n", n), check_int("T", T, high=10**9))]
    rounds = tuple(rounds)
    if not rounds:
        raise InvalidParameter("at least one round is needed")
    delta = check_probability_open("delta", delta)
    m = get_method(method)
    if m.kind != "upper" or not m.numerical:
        raise InvalidParameter(f"compose needs a numerical upper-bound method (clones, stronger-clones, krr), got {method!r}")
    alpha = check_orders(DEFAULT_ORDERS if orders is None else orders)
    total_T = sum(r.count for r in rounds)
    inputs: dict[str, Any] = {"delta": delta, "T": total_T, "method": method, "k": k}
    if len(rounds) == 1:
        inputs.update(eps0=rounds[0].eps0, n=rounds[0].n)
    else:
        inputs["distinct_rounds"] = len(rounds)
    warnings: list[str] = []

    # (1) RDP: per distinct round, summed (Mironov 2017 Prop. 1), then CKS20 Prop. 12.
    total = np.zeros(alpha.size)
    converged = True
    for r in rounds:
        curve = rdp_curve(r.eps0, r.n, method, k, alpha, rtol)
        total += r.count * np.asarray(curve.upper)
        converged &= curve.converged
    total *= 1.0 + 1e-13  # rounding of the sum, upwards
    eps_rdp, best_order = cks_epsilon(alpha, total, delta)
    rdp_warn = []
    if best_order in (float(alpha[0]), float(alpha[-1])) and eps_rdp > 0:
        rdp_warn.append(f"best order {best_order:g} is at the edge of the order grid [{alpha[0]:g}, {alpha[-1]:g}]; extend --orders")
    if not converged:
        rdp_warn.append("some RDP values stopped at the refinement work limit (still certified upper bounds)")
    rdp_bound = Bound(
        "epsilon", eps_rdp, "upper", "rdp", f"{MIRONOV}; {CKS}", inputs,
        f"{m.name}: {m.assumes}", tuple(rdp_warn),
        {"conversion": CONVERSION, "best_order": best_order, "orders": alpha.tolist(), "rdp": total.tolist()},
    )

    # (2) PLD route: pessimistic PLD per distinct round, composed by dp_accounting.
    pld_bound = pld_route([(r.eps0, r.n, r.count) for r in rounds], delta, method, k, discretization, inputs)

    # (3) Per-round (eps, delta) + optimal (homogeneous) or advanced (heterogeneous) composition.
    from . import api  # lazy: api pulls in the hockey-stick machinery

    best_adv, best_detail = math.inf, {}
    for frac in (0.1, 0.3, 0.5, 0.7, 0.9):
        d_round = delta * frac / total_T
        eps_r = [api.epsilon(r.eps0, r.n, d_round, method, k).value for r in rounds]
        if len(rounds) == 1:
            e = optimal_composition_epsilon(float(eps_r[0]), d_round, total_T, delta)
            how = f"{KOV}, Theorem 3.3 (optimal composition)"
        else:
            slack = 1.0 - (1.0 - delta) / (1.0 - d_round) ** total_T
            per = np.repeat(np.asarray(eps_r, dtype=float), [r.count for r in rounds])
            e = advanced_composition_epsilon(per, slack) if slack > 0 else math.inf
            how = f"{KOV}, Theorem 3.5 (advanced composition)"
        if e < best_adv:
            best_adv, best_detail = e, {"delta_per_round": d_round, "eps_per_round": eps_r, "theorem": how}
    adv_bound = Bound(
        "epsilon", best_adv, "upper", "advanced", best_detail.get("theorem", KOV), inputs,
        "per-round (eps, delta) of the shuffled round, composed as generic (eps, delta)-DP mechanisms",
        (), best_detail,
    )
    bounds = (rdp_bound, pld_bound, adv_bound)
    applicable = [b for b in bounds if b.applicable and b.value is not None]
    best = min(applicable, key=lambda b: b.value).method  # type: ignore[arg-type, return-value]
    return Composition(delta, rounds, bounds, best, tuple(warnings))
