"""Small closed forms about discrete Laplace noise shared by the plug-ins."""

from __future__ import annotations

import math


def dlap_variance(a: float) -> float:
    """``Var(DLap(a)) = 2e^{−a}/(1 − e^{−a})²`` for the discrete Laplace law with pmf
    ``∝ e^{−a|k|}`` (Ghazi, Kumar, Manurangsi, "Pure differentially private summation from
    anonymous messages", ITC 2020, arXiv 1909.01278, Section 2); ``inf`` when the variance
    exceeds the largest double (``a`` below about ``1.5e-154``)."""
    if not a > 0:
        raise ValueError(f"the discrete Laplace parameter must be > 0, got {a!r}")
    d = -math.expm1(-a)  # 1 - e^{-a}, accurate for small a
    try:
        return 2.0 * math.exp(-a) / (d * d) if d * d > 0 else math.inf
    except OverflowError:  # pragma: no cover - 2/d^2 with d^2 a tiny normal
        return math.inf


__all__ = ["dlap_variance"]
