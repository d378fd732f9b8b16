"""Inverse questions for planning: the largest local eps0, the smallest number of users.

Each solver searches with the forward computation of :mod:`.api` and returns a value that
the forward computation *certifies* meets the target (``delta_upper(eps) <= delta``),
together with the neighbouring value one step further, which it does not certify. So:

- ``solve_eps0`` returns a *lower* bound on the largest eps0 the analysis admits (kind
  ``lower``): the analysis certifies the target at this eps0, and not at
  ``eps0 * (1 + rtol)``.
- ``solve_n`` returns an *upper* bound on the smallest n (kind ``upper``): the analysis
  certifies the target with this many users and not with one fewer.

The search assumes the forward bound is monotone (delta non-decreasing in eps0,
non-increasing in n; tested for the numerical analyses). The answer is re-checked
regardless, so a non-monotone bound could at worst make the answer conservative, never
wrong.
"""

from __future__ import annotations

import math

from . import api
from .analyses import get_method
from .errors import CertificationError, InvalidParameter
from .numeric.search import NoBracket, monotone_boundary
from .results import Bound
from .validation import MAX_N, check_int, check_positive, check_probability_open, check_real


#: Order grid used when a solver composes rounds (coarser than ``renyi``'s default, for speed;
#: every RDP value is still a certified upper bound).
#: The detail key of the re-checked value: delta at eps (one round) or eps at delta (rounds).
_CERTIFIED = {False: "certified_delta", True: "certified_eps"}

SOLVER_ORDERS = (1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0, 24.0, 32.0, 48.0, 64.0, 128.0, 256.0)


def _feasible(eps0: float, n: int, eps: float, delta: float, method: str, k: int | None, delta0: float,
              rounds: int = 1) -> tuple[bool, float]:
    """Whether ``method`` certifies ``(eps, delta)`` at ``(eps0, n)``; returns the certified
    delta at ``eps`` (one round) or the certified eps at ``delta`` (``rounds`` > 1, the
    tightest certified route of :func:`.composition.compose`)."""
    if rounds > 1:
        from .composition import compose

        c = compose(eps0=eps0, n=n, T=rounds, delta=delta, method=method, k=k, orders=SOLVER_ORDERS)
        best = next(b for b in c.bounds if b.method == c.best)
        return best.value is not None and best.value <= eps, (best.value if best.value is not None else math.inf)
    b = api.delta(eps0, n, eps, method, k, delta0, rtol=1e-9)
    if b.value is None:
        return False, math.inf
    return b.value <= delta, b.value


def _target(eps: float, delta: float, method: str, k: int | None, delta0: float, rounds: int,
            **given: float) -> dict:
    """Validate the common solver inputs; return the inputs record (``given`` is the
    fixed parameter, already validated)."""
    m = get_method(method)
    if m.kind != "upper":
        raise InvalidParameter(f"solving needs an upper-bound method; {method!r} is a {m.kind} bound")
    inputs = {"eps": check_positive("eps", eps), "delta": check_probability_open("delta", delta), **given,
              "method": method}
    if k is not None:
        inputs["k"] = k
    if delta0:
        if rounds > 1:
            raise InvalidParameter("--delta0 is not supported together with --rounds")
        inputs["delta0"] = delta0
    if rounds > 1:
        inputs["rounds"] = rounds
    return inputs


def solve_eps0(
    eps: float,
    delta: float,
    n: int,
    method: str = "clones",
    k: int | None = None,
    delta0: float = 0.0,
    rtol: float = 1e-6,
    rounds: int = 1,
) -> Bound:
    """The largest local eps0 whose shuffled guarantee is at most ``(eps, delta)`` by
    ``method`` (to relative resolution ``rtol``), certified by the forward computation."""
    n = check_int("n", n)
    rtol = check_real("rtol", rtol, low=1e-10, high=1e-2)
    rounds = check_int("rounds", rounds, high=10**9)
    inputs = _target(eps, delta, method, k, delta0, rounds, n=n)
    eps, delta = inputs["eps"], inputs["delta"]

    def ok(e0: float) -> bool:
        return _feasible(e0, n, eps, delta, method, k, delta0, rounds)[0]

    try:
        found = monotone_boundary(ok, min(eps, api.MAX_EPS0), feasible_side="low", low=1e-12,
                                  high=api.MAX_EPS0, rtol=rtol)
    except NoBracket:
        raise NoBracket(
            f"{method} certifies (eps={eps:g}, delta={delta:g}) at n={n} for no eps0 >= 1e-12"
        ) from None
    lo = found.feasible
    warnings: list[str] = []
    if found.infeasible is None:
        warnings.append(f"every eps0 up to the supported maximum {api.MAX_EPS0:g} meets the target")
    feasible, certified = _feasible(lo, n, eps, delta, method, k, delta0, rounds)
    if not feasible:  # pragma: no cover - monotone_boundary only returns evaluated feasible points
        raise CertificationError("solver output failed its re-check")
    if found.infeasible is None:
        beyond, beyond_value = math.inf, certified
    else:
        beyond = found.infeasible
        beyond_value = _feasible(beyond, n, eps, delta, method, k, delta0, rounds)[1]
    m = get_method(method)
    return Bound(
        "eps0",
        lo,
        "lower",
        method,
        m.citation,
        inputs,
        "largest eps0 certified by the forward computation (the true optimum of this analysis is >= this)",
        tuple(warnings),
        {_CERTIFIED[rounds > 1]: certified, "next_eps0": beyond, "next_value": beyond_value, "rtol": rtol},
    )


def solve_n(
    eps: float,
    delta: float,
    eps0: float,
    method: str = "clones",
    k: int | None = None,
    delta0: float = 0.0,
    rounds: int = 1,
) -> Bound:
    """The smallest number of users for which ``method`` certifies ``(eps, delta)`` with an
    ``eps0``-DP local randomizer (exact integer search, re-checked)."""
    eps0 = check_real("eps0", eps0, low=0.0, high=api.MAX_EPS0, low_open=True)
    rounds = check_int("rounds", rounds, high=10**9)
    inputs = _target(eps, delta, method, k, delta0, rounds, eps0=eps0)
    eps, delta = inputs["eps"], inputs["delta"]

    def ok(n: float) -> bool:
        return _feasible(eps0, int(n), eps, delta, method, k, delta0, rounds)[0]

    try:
        found = monotone_boundary(ok, 1, feasible_side="high", low=1, high=MAX_N, integer=True)
    except NoBracket:
        raise NoBracket(
            f"{method} does not certify (eps={eps:g}, delta={delta:g}) with eps0={eps0:g} for any n <= {MAX_N:g}"
        ) from None
    hi = int(found.feasible)
    _, certified = _feasible(eps0, hi, eps, delta, method, k, delta0, rounds)
    details: dict = {_CERTIFIED[rounds > 1]: certified}
    if hi > 1:  # the neighbour one user fewer, which the forward computation does not certify
        details.update(previous_n=hi - 1, previous_value=_feasible(eps0, hi - 1, eps, delta, method, k, delta0, rounds)[1])
    m = get_method(method)
    return Bound(
        "n",
        hi,
        "upper",
        method,
        m.citation,
        inputs,
        "smallest n certified by the forward computation (the true optimum of this analysis is <= this)",
        (),
        details,
    )
