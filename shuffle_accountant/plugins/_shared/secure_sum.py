"""The Balle–Bell–Gascón–Nissim bound for split and mix (secure summation in the shuffle
model), shared by the ``splitmix`` plug-in and the distinct-elements protocol of the
``robust`` plug-in, and the validation of a modulus of any size.

Split and mix (Ishai, Kushilevitz, Ostrovsky, Sahai, "Cryptography from anonymity",
FOCS 2006) with ``n`` honest parties and ``m`` messages over an abelian group of order
``q`` is σ-secure (worst-case statistical distance ``<= 2^-σ``) when ``n > e``, ``m >= 3``
and ``m > (2σ + log2 q)/(log2 n − log2 e) + 1`` (Balle, Bell, Gascón, Nissim, "Improved
summation from shuffling", arXiv 1909.11225, and "Private summation in the multi-message
shuffle model", CCS 2020, arXiv 2002.00817; the explicit-constant form, which reproduces
the example of their abstract: 32-bit inputs, ``n = 10^4``, 12 messages, ``2^-40``).
"""

from __future__ import annotations

import math
from numbers import Integral

import mpmath

from ...plugin_api import InvalidParameter, check_int, check_positive, fp

#: Largest modulus accepted: ``q <= 2^MAX_Q_BITS``.
MAX_Q_BITS = 1 << 16
#: Largest security parameter accepted (bits); ``2^-sigma`` below ``1e-300`` needs ~1000.
MAX_SIGMA = 1e6

BBGN_CITATION = (
    "Balle, Bell, Gascón, Nissim: Improved summation from shuffling (arXiv 1909.11225) and "
    "Private summation in the multi-message shuffle model (CCS 2020, arXiv 2002.00817): "
    "sigma-secure if n > e, m >= 3 and m > (2 sigma + log2 q)/(log2 n - log2 e) + 1"
)

_DPS = 50  # decimal digits for the closed forms; their inputs are exact integers and one float


def describe_modulus(q: int) -> int | str:
    """``q`` for output: the integer itself when it has at most 30 digits, otherwise a short
    exact form (``"2^65536"``, or ``"<k>-bit integer"``); Python refuses to print integers
    of more than 4300 digits, and nobody reads them."""
    if q < 10**30:
        return q
    if q & (q - 1) == 0:
        return f"2^{q.bit_length() - 1}"
    return f"{q.bit_length()}-bit integer (log2 q = {math.log2(q):.6f})" if q.bit_length() < 1024 else \
        f"{q.bit_length()}-bit integer"


def check_modulus(q: object, name: str = "q") -> int:
    """An integer modulus ``2 <= q <= 2^65536``."""
    if isinstance(q, bool) or not isinstance(q, Integral):
        if isinstance(q, float) and math.isfinite(q) and q.is_integer():
            q = int(q)
        else:
            shown = repr(q) if len(repr(q)) <= 40 else f"{repr(q)[:20]}..."
            raise InvalidParameter(f"{name}: {shown} is not an integer (accepted: integer 2 <= {name} <= 2^{MAX_Q_BITS})")
    q = int(q)
    if q < 2 or q.bit_length() > MAX_Q_BITS + 1 or (q.bit_length() == MAX_Q_BITS + 1 and q != 1 << MAX_Q_BITS):
        shown_q = describe_modulus(q) if q >= 2 else q
        raise InvalidParameter(f"{name}: {shown_q} is out of range (accepted: integer 2 <= {name} <= 2^{MAX_Q_BITS})")
    return q


def check_sigma(sigma: object, name: str = "sigma") -> float:
    """A security parameter ``0 < sigma <= 1e6`` (bits)."""
    s = check_positive(name, sigma)
    if s > MAX_SIGMA:
        raise InvalidParameter(f"{name}: {s!r} is out of range (accepted: 0 < {name} <= {MAX_SIGMA:g})")
    return s


def log2_int(k: int) -> mpmath.mpf:
    """``log2 k`` at the working precision (exact integers of any size)."""
    return mpmath.log(mpmath.mpf(k), 2)


def bbgn_messages(n: int, q: int, sigma: float) -> int:
    """Smallest ``m`` that the Balle–Bell–Gascón–Nissim bound certifies σ-secure:
    ``m = max(3, ⌊(2σ + log2 q)/(log2 n − log2 e) + 1⌋ + 1)``.

    Raises:
        InvalidParameter: invalid inputs, or ``n <= e`` (the bound certifies nothing).
    """
    n = check_int("n", n, low=1)
    q = check_modulus(q)
    sigma = check_sigma(sigma)
    if n <= 2:
        raise InvalidParameter(
            f"n: {n} is out of range for the Balle-Bell-Gascon-Nissim bound (accepted: n > e, at least 3 honest parties)"
        )
    with mpmath.workdps(_DPS):
        threshold = (2 * mpmath.mpf(sigma) + log2_int(q)) / (log2_int(n) - mpmath.log(mpmath.e, 2)) + 1
        m = int(mpmath.floor(threshold)) + 1
        if m - threshold < mpmath.mpf(10) ** (10 - _DPS):  # too close to call: be safe
            m += 1
    return max(3, m)


def bbgn_sigma(n: int, m: int, q: int) -> float:
    """The σ the Balle–Bell–Gascón–Nissim bound certifies for ``m`` messages,
    ``((m − 1)(log2 n − log2 e) − log2 q)/2`` rounded down; ``0.0`` when it certifies
    nothing (``n <= e``, ``m < 3`` or the expression is not positive)."""
    n = check_int("n", n, low=1)
    m = check_int("m", m, low=1, high=10**9)
    q = check_modulus(q)
    if n <= 2 or m < 3:
        return 0.0
    with mpmath.workdps(_DPS):
        sigma = ((m - 1) * (log2_int(n) - mpmath.log(mpmath.e, 2)) - log2_int(q)) / 2
        return max(0.0, fp.down(sigma - mpmath.mpf(10) ** (10 - _DPS)))


__all__ = [
    "BBGN_CITATION",
    "MAX_Q_BITS",
    "MAX_SIGMA",
    "bbgn_messages",
    "bbgn_sigma",
    "check_modulus",
    "check_sigma",
    "describe_modulus",
    "log2_int",
]
