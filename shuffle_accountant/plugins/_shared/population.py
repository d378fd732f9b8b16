"""Honest users: the guarantee of a robust protocol holds whenever at least ``⌈γn⌉`` of the
``n`` users follow it (Balcer, Cheu, Joseph, Mao, "Connecting robust shuffle privacy and
pan-privacy", SODA 2021, arXiv 2004.09481, Definition 2.9; for secure summation the same
convention: Ghazi, Manurangsi, Pagh, Velingker, EUROCRYPT 2020, end of Section 1.1)."""

from __future__ import annotations

import math
from fractions import Fraction

from ...plugin_api import IntRange, RealRange

#: The honest fraction: ``0 < gamma <= 1``.
GAMMA = RealRange("gamma", 0.0, 1.0, low_open=True)


def honest_count(n: object, gamma: object, *, name: str = "gamma", n_range: IntRange | None = None) -> int:
    """``⌈γn⌉``, at least 1, reading ``γ`` as the decimal it is written as (so ``0.3 × 10``
    is 3, not 4 as binary floating point would give). ``n_range`` defaults to ``1 <= n <= 1e12``."""
    from ...plugin_api import USERS_RANGE

    n_ok = (n_range or USERS_RANGE).check(n, "n")
    g = GAMMA.check(gamma, name)
    return max(1, min(n_ok, math.ceil(Fraction(repr(g)) * n_ok)))


__all__ = ["GAMMA", "honest_count"]
