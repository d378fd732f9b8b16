"""Public seams of the numeric core: certified privacy profiles and their brackets.

A *privacy profile* is ``eps -> delta(eps)`` of a pair of distributions (Balle, Barthe,
Gaboardi, "Privacy amplification by subsampling", NeurIPS 2018: the hockey-stick divergence
``D_{e^eps}``). Every analysis in this package exposes it through one small interface,
:class:`PrivacyProfile`: a certified bracket at one ``eps``, and the ``eps`` beyond which
``delta`` is exactly 0. The clone pairs (:class:`.clones.HockeyStick`), the privacy-blanket
bounds and any scaled or shifted profile implement it, and everything above the core (the
``eps(delta)`` search of :mod:`.search`, the PLD route, the planners) consumes only this
interface, never the internals of one implementation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Protocol, runtime_checkable

import numpy as np

from ..errors import CertificationError


#: Smallest positive delta the package reports. A computed upper bound below it (possibly 0
#: after floating-point underflow of every term, although the exact value is positive) is
#: reported as this value: every term that underflows is below ~2.3e-308 and there are at
#: most a few million terms, so the exact value is below 1e-301.
UNDERFLOW_FLOOR = math.nextafter(1e-300, 0.0)  # prints as 1e-300 when rounded up


@dataclass(frozen=True)
class DeltaBounds:
    """Certified bracket ``lower <= delta(eps) <= upper`` at one ``eps``.

    ``blocks`` counts the pieces the computation used (a work measure) and ``converged``
    says whether the requested relative width was reached (floating point may prevent it;
    the bracket is certified either way).
    """

    eps: float
    lower: float
    upper: float
    blocks: int
    converged: bool

    def __post_init__(self) -> None:
        # plain floats, whatever the engine computed them in (np.float64 leaks into reports otherwise)
        object.__setattr__(self, "lower", float(self.lower))
        object.__setattr__(self, "upper", float(self.upper))
        if not 0.0 <= self.lower <= self.upper:  # also refuses NaN
            raise CertificationError(
                f"inconsistent delta bracket [{self.lower!r}, {self.upper!r}] at eps = {self.eps!r}"
            )

    def scaled(self, factor: float, shift: float = 0.0) -> "DeltaBounds":
        """``factor * delta + shift`` (``factor >= 0``), the upper end rounded up."""
        return DeltaBounds(
            self.eps,
            factor * self.lower + shift,
            (factor * self.upper + shift) * (1.0 + 2e-16) if self.upper else shift,
            self.blocks,
            self.converged,
        )


@runtime_checkable
class PrivacyProfile(Protocol):
    """What the search and the composition routes need from an analysis.

    ``bounds(eps, rtol)`` returns a certified :class:`DeltaBounds` whose relative width is at
    most ``rtol`` when floating point allows it; ``max_log_ratio`` is an ``eps`` at and beyond
    which ``delta(eps) = 0`` (``math.inf`` when there is none). Implementations may keep
    refined state between calls (a search evaluates nearby ``eps`` values).

    Optional attributes the search uses when present: ``surrogate`` / ``mixture_surrogate``
    (estimates on an array of ``eps``, only to choose where to look), ``surrogate_rtol`` (how far
    the surrogate's root is trusted), ``log_slope`` (an estimate of ``d log delta / d eps``), and
    ``lower_at(eps)``: a *certified* lower bound on ``delta(eps)`` at any ``eps``, from the state
    of the last :meth:`bounds` call, at no evaluation's cost (e.g. the last evaluation's optimal
    sets ``S``, whose ``P(S) - e^eps Q(S)`` is a lower bound at every ``eps``); 0 when it knows
    nothing better.
    """

    @property
    def max_log_ratio(self) -> float: ...

    def bounds(self, eps: float, rtol: float) -> DeltaBounds: ...


@runtime_checkable
class SurrogateProfile(PrivacyProfile, Protocol):
    """A profile that also offers a cheap *estimate* of ``delta`` on an array of ``eps``
    (only used to start a search; never reported)."""

    def surrogate(self, eps: np.ndarray) -> np.ndarray: ...


class ScaledProfile:
    """``scale * delta(eps)`` of another profile (``0 < scale <= 1``): the profile of a pair
    mixed with an identical branch of weight ``1 - scale`` (the hockey-stick divergence of
    such a mixture is exactly ``scale`` times that of the pair, for ``eps >= 0``)."""

    def __init__(self, inner: PrivacyProfile, scale: float) -> None:
        if not 0.0 < scale <= 1.0:
            raise ValueError(f"scale must be in (0, 1], got {scale!r}")
        self.inner = inner
        self.scale = scale

    @property
    def max_log_ratio(self) -> float:
        return self.inner.max_log_ratio

    def bounds(self, eps: float, rtol: float) -> DeltaBounds:
        b = self.inner.bounds(eps, rtol)
        return b if self.scale == 1.0 else b.scaled(self.scale)

    def surrogate(self, eps: np.ndarray) -> np.ndarray:
        inner = getattr(self.inner, "surrogate", None)
        if inner is None:  # no estimate: NaN never crosses delta, the search starts plainly
            return np.full(np.shape(eps), np.nan)
        return self.scale * inner(eps)

    @property
    def lower_at(self) -> Callable[[float], float] | None:
        """The inner profile's ``lower_at`` (a certified lower bound on ``delta(eps)`` from its
        last evaluation, see :func:`.search.epsilon_for_delta`), scaled and rounded down; ``None``
        when the inner profile has none."""
        inner = getattr(self.inner, "lower_at", None)
        if inner is None:
            return None
        return lambda eps: self.scale * inner(eps) * (1.0 - 4e-16)


class MaxProfile:
    """``max_i delta_i(eps)`` of several profiles: e.g. the best of several attained lower
    bounds. Its bracket is ``[max lower_i, max upper_i]`` (valid because max is monotone in
    each argument)."""

    def __init__(self, *parts: PrivacyProfile) -> None:
        if not parts:
            raise ValueError("MaxProfile needs at least one profile")
        self.parts = parts

    @property
    def max_log_ratio(self) -> float:
        return max(p.max_log_ratio for p in self.parts)

    @property
    def lower_at(self) -> Callable[[float], float] | None:
        """The largest of the parts' ``lower_at`` (a lower bound on one part's delta is one on the
        maximum); ``None`` when no part has one."""
        fns = [f for f in (getattr(p, "lower_at", None) for p in self.parts) if f is not None]
        if not fns:
            return None
        return lambda eps: max(f(eps) for f in fns)

    def bounds(self, eps: float, rtol: float) -> DeltaBounds:
        bs = [p.bounds(eps, rtol) for p in self.parts]
        return DeltaBounds(eps, max(b.lower for b in bs), max(b.upper for b in bs), sum(b.blocks for b in bs),
                           all(b.converged for b in bs))
