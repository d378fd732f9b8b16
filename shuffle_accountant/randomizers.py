"""Finite local randomizers as objects, and the structure the privacy blanket needs from them.

Spec: ``shared/spec/blanket.md`` §1-§4. A local randomizer ``R`` maps an input ``x`` to a
probability vector ``R(x)`` over a finite output set; here its *matrix* has rows = inputs and
columns = outputs. Every randomizer below is specified by ``eps0`` as users state it (the
randomizer is ``eps0``-LDP: ``R(x)(y) <= e^eps0 R(x')(y)`` for all ``x, x', y``, and ``eps0`` is
attained), and its matrix -- or, for the large ones, only what the blanket bound needs -- is
derived in ONE place, the class docstring, with a citation.

The privacy blanket (Balle, Bell, Gascón, Nissim, "The Privacy Blanket of the Shuffle Model",
CRYPTO 2019, arXiv 1903.02837, Section 3)
-----------------------------------------------------------------------------------------------
``m(y) = min_x R(x)(y)``, ``gamma = sum_y m(y)`` (the blanket mass, :attr:`Randomizer.blanket_mass`)
and ``omega = m / gamma``. For an ordered input pair ``(x1, x1')`` and ``eps >= 0`` the privacy
amplification variable of an output is ``L(y) = (R(x1)(y) - e^eps R(x1')(y)) / omega(y)``.
Everything the bound needs from ``(x1, x1')`` is the law of ``L(Y)``, ``Y ~ omega``, which only
depends on the *classes* of outputs sharing the two ratios

    a(y) = R(x1)(y) / m(y),   b(y) = R(x1')(y) / m(y)       (both >= 1),

since ``L(y) = gamma (a(y) - e^eps b(y))`` for every ``eps``. A :class:`PairStructure` lists
the classes: their *masses* ``p_j = sum_{y in class j} m(y)`` (so ``omega(class j) = p_j / gamma``)
and their ratios ``(a_j, b_j)``. In terms of it the blanket bound of spec §2 reads

    delta(eps) = (1/n) E[(sum_j (a_j - e^eps b_j) N_j)_+],
    (N_1, ..., N_r, rest) ~ Multinomial(n; p_1, ..., p_r, 1 - gamma)

(the factor ``gamma`` of ``L`` cancels the ``1/gamma`` of the normalisation: each of the ``n``
users is, independently, a blanket draw landing in class ``j`` with probability ``p_j``, or not a
blanket draw). This is what :mod:`shuffle_accountant.numeric.blanket_matrix` evaluates.

Which pairs are needed
----------------------
The bound is a maximum over ordered pairs ``x1 != x1'``. If a bijection ``s`` of the inputs and
``t`` of the outputs satisfy ``R(s x)(t y) = R(x)(y)``, then ``m(t y) = m(y)`` and the pair
``(s x1, s x1')`` has the same classes as ``(x1, x1')`` (``t`` maps one class onto the other,
preserving ``m``). The named randomizers below have such symmetries acting transitively on
ordered pairs (permutations of the domain for k-RR, unary encoding, OLH, subset selection; for
Hadamard response the class masses are computed for an arbitrary pair and do not depend on it),
so ONE structure serves every pair; their :meth:`pair_structures` returns one. A
:class:`MatrixRandomizer` has no known symmetry: it returns the distinct structures of all ordered
pairs and the bound takes the maximum.

Floating point
--------------
Masses and ratios are floats; ``PairStructure.rel_err`` bounds the relative error of each
``p_j``, ``a_j``, ``b_j`` and ``rest`` against the exact real value (closed forms below: a few
dozen roundings; matrices: the row-sum tolerance plus the roundings of the grouping). Consumers
round pessimistically with it.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import product
from numbers import Real
from typing import Any, ClassVar

import numpy as np

from .errors import CertificationError, InvalidParameter
from .validation import IntRange, RealRange
from .validation import K as K_RANGE

#: unit roundoff of IEEE double
_U = 2.0**-53
#: relative error charged to every closed-form mass / ratio of a named randomizer (a few dozen
#: roundings of exp, log1p, products and quotients, with margin)
_CLOSED_FORM_REL = 256 * _U
#: largest eps0 accepted for a named randomizer: the blanket arithmetic handles values of
#: e^eps0 times n, and nothing is amplified long before (gamma ~ k e^-eps0)
MAX_EPS0 = 50.0
#: ranges of the parameters (one message family, :mod:`shuffle_accountant.validation`)
EPS0_RANGE = RealRange("eps0", 0.0, MAX_EPS0, low_open=True)
G_RANGE = IntRange("g", 2, 10**9)
#: ``--d`` of subset selection (``d = 1`` is k-RR; ``d <= k - 1`` is checked against ``k``)
D_RANGE = IntRange("d", 1, 10**9)
#: largest number of matrix entries built explicitly (``matrix()``) or loaded from a file
MAX_ENTRIES = 10**6
#: largest randomizer file accepted, in bytes (checked before the file is read)
MAX_FILE_BYTES = 10 * 1024 * 1024
#: tolerance on each row sum of a loaded matrix
ROW_SUM_TOL = 1e-12


# ---------------------------------------------------------------------------------------
# The structure of one ordered input pair.
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PairStructure:
    """The classes of outputs of one ordered input pair ``(x1, x1')`` (module docstring).

    ``mass[j] = p_j > 0`` (sum of ``m(y)`` over the class), ``a[j] = R(x1)(y)/m(y)`` and
    ``b[j] = R(x1')(y)/m(y)`` (``>= 1``), ``rest = 1 - gamma`` computed without cancellation,
    and ``rel_err``, a bound on the relative error of every stored float against the exact
    value. ``pair`` names the inputs (for messages). The classes are sorted by ``(a, b)`` so
    that equal structures compare equal.
    """

    mass: tuple[float, ...]
    a: tuple[float, ...]
    b: tuple[float, ...]
    rest: float
    rel_err: float
    pair: tuple[int, int] = (0, 1)

    def __post_init__(self) -> None:
        if not (len(self.mass) == len(self.a) == len(self.b)) or not self.mass:
            raise ValueError("PairStructure needs equally long, non-empty mass/a/b")
        if any(not (p > 0.0 and math.isfinite(p)) for p in self.mass):
            raise ValueError("PairStructure masses must be positive and finite")
        if any(not (x >= 1.0 - 1e-9 and math.isfinite(x)) for x in self.a + self.b):
            raise ValueError("PairStructure ratios must be finite and >= 1")
        if not (0.0 <= self.rest <= 1.0):
            raise ValueError("PairStructure rest must lie in [0, 1]")

    @property
    def classes(self) -> int:
        """Number of classes ``r``."""
        return len(self.mass)

    @property
    def gamma(self) -> float:
        """Blanket mass ``sum_j p_j`` (as a float)."""
        return math.fsum(self.mass)

    def key(self) -> tuple:
        """Identity of the structure up to which pair produced it (for de-duplication)."""
        return (self.mass, self.a, self.b, self.rest)

    def coefficients(self, eps: float) -> np.ndarray:
        """``c_j = a_j - e^eps b_j`` (as floats; ``L = gamma * c``)."""
        return np.asarray(self.a) - math.exp(eps) * np.asarray(self.b)

    def l_values(self, eps: float) -> np.ndarray:
        """The distinct values of the privacy amplification variable ``L = gamma c_j``."""
        return self.gamma * self.coefficients(eps)

    def omega(self) -> np.ndarray:
        """Blanket probabilities of the classes, ``p_j / gamma``."""
        return np.asarray(self.mass) / self.gamma

    @property
    def max_log_ratio(self) -> float:
        """``max_j log(a_j / b_j)``, rounded up by the stored error: for ``eps`` at or above it
        every *exact* ``c_j = a*_j - e^eps b*_j <= 0``, so ``delta(eps) = 0``.

        Proof: ``a*_j <= a_j (1 + r)`` and ``b*_j >= b_j (1 - r)`` (``r = rel_err <= 0.9``), so ``log(a*_j /
        b*_j) <= log(a_j / b_j) + 2 atanh(r)``; the float ``log(a_j) - log(b_j)`` is within ``u (|log a_j| +
        |log b_j|)`` of ``log(a_j / b_j)`` (``log`` within an ulp, one subtraction). ``2 atanh(r) <= 2.5 r``
        for ``r <= 0.2``, so ``2.5 r + 4 u (|log a_j| + |log b_j|)`` covers both there; ``4 r >= 2 atanh(r) +
        0.3`` for ``0.2 <= r <= 0.9`` covers any log rounding; the larger of the two is charged, and ``1e-15``
        the last roundings. (For the named randomizers, ``r = 256 u`` and ``|log a_j| <= 50``, this is ``4 r``
        as before; a matrix with a small ``rel_err`` and a large log-ratio needs the log term.) The charge
        applies also where no stored ``a_j`` exceeds its ``b_j``: a randomizer whose ``e^eps0`` rounds to 1
        (``eps0 < 2^-53``: every class ``(1, 1)``), or a matrix whose rows are equal up to their
        normalisation, still has exact ratios above 1; this returned 0 there (``delta = 0`` claimed at every
        ``eps`` although the exact delta is positive below the exact largest log-ratio; review sep93s)."""
        r = self.rel_err
        top = max(math.log(x) - math.log(y) + max(4.0 * r, 2.5 * r + 4.0 * _U * (abs(math.log(x)) + abs(math.log(y))))
                  for x, y in zip(self.a, self.b)) + 1e-15
        return max(top, 0.0)


def _structure(classes: Sequence[tuple[float, float, float]], rest: float, rel: float,
               pair: tuple[int, int] = (0, 1)) -> PairStructure:
    """A :class:`PairStructure` from ``(mass, a, b)`` triples: empty classes dropped, classes
    with equal ``(a, b)`` merged (masses added), sorted by ``(a, b)``."""
    merged: dict[tuple[float, float], float] = {}
    for p, a, b in classes:
        if p > 0.0:
            merged[(a, b)] = merged.get((a, b), 0.0) + p
    keys = sorted(merged)
    return PairStructure(tuple(merged[k] for k in keys), tuple(k[0] for k in keys),
                         tuple(k[1] for k in keys), rest, rel, pair)


# ---------------------------------------------------------------------------------------
# Randomizers.
# ---------------------------------------------------------------------------------------


def _eps0(value: object) -> float:
    return EPS0_RANGE.check(value)


def _k(value: object) -> int:
    return K_RANGE.check(value)


class Randomizer:
    """Common interface of every finite local randomizer.

    Subclasses provide ``eps0``, :attr:`blanket_mass`, :meth:`pair_structure`,
    :meth:`pair_structures`, ``n_inputs``, ``n_outputs`` and (for small sizes)
    :meth:`matrix`.
    """

    #: registry name (``"krr"``, ...; ``"matrix"`` for a loaded file)
    name: ClassVar[str] = ""
    eps0: float

    @property
    def eps0_upper(self) -> float:
        """An upper bound on the randomizer's exact ``eps0``, for capping an upper bound on the shuffled
        ``eps`` (shuffling is post-processing). The named randomizers are *defined* by the ``eps0``
        stated, so it is that; a matrix rounds its computed ``eps0`` up (review rev94m)."""
        return self.eps0

    @property
    def blanket_mass(self) -> float:
        """``gamma = sum_y min_x R(x)(y)``."""
        return self.pair_structures()[0].gamma

    @property
    def n_inputs(self) -> int:
        raise NotImplementedError

    @property
    def n_outputs(self) -> int:
        raise NotImplementedError

    def pair_structure(self, x1: int = 0, x2: int = 1) -> PairStructure:
        """The classes of the ordered pair ``(x1, x2)`` (module docstring)."""
        raise NotImplementedError

    def pair_structures(self) -> tuple[PairStructure, ...]:
        """Structures whose maximum is the blanket bound (one for the named randomizers, whose
        symmetry makes every ordered pair equivalent)."""
        return (self.pair_structure(0, 1),)

    def matrix(self) -> np.ndarray:
        """The full matrix (rows = inputs, columns = outputs), for small instances only."""
        raise NotImplementedError

    def describe(self) -> str:
        """One-line label such as ``krr(k=10, eps0=1)``."""
        params = ", ".join(f"{k}={v}" for k, v in self.parameters().items())
        return f"{self.name}({params}, eps0={self.eps0:g})"

    def parameters(self) -> dict[str, Any]:
        """The parameters other than ``eps0`` (for output)."""
        return {}

    def __repr__(self) -> str:
        return self.describe()

    def _pair_check(self, x1: int, x2: int) -> None:
        for name, x in (("x1", x1), ("x2", x2)):
            IntRange(name, 0, self.n_inputs - 1).check(x)
        if x1 == x2:
            raise InvalidParameter(f"x2: {x2} is equal to x1 (accepted: an input different from x1)")

    def _check_matrix_size(self) -> None:
        if self.n_inputs * self.n_outputs > MAX_ENTRIES:
            raise InvalidParameter(
                f"{self.describe()}: the matrix has {self.n_inputs} x {self.n_outputs} entries, "
                f"more than the {MAX_ENTRIES:g} built explicitly"
            )


@dataclass(frozen=True, repr=False)
class _OnDomain(Randomizer):
    """A named randomizer on the domain ``[k]``: the fields ``k`` and ``eps0``, validated."""

    k: int
    eps0: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "k", _k(self.k))
        object.__setattr__(self, "eps0", _eps0(self.eps0))

    @property
    def n_inputs(self) -> int:
        return self.k

    def parameters(self) -> dict[str, Any]:
        return {"k": self.k}


@dataclass(frozen=True, repr=False)
class KRR(_OnDomain):
    """k-ary randomized response (Warner 1965 for k = 2; Kairouz, Oh, Viswanath, "Extremal
    mechanisms for local differential privacy", NeurIPS 2014, for general k).

    Inputs and outputs ``[k]``, ``R(x)(y) = p = e^eps0 / (e^eps0 + k - 1)`` if ``y = x``, else
    ``q = 1 / (e^eps0 + k - 1)``; ``k = 2`` is binary randomized response.

    Blanket: ``m(y) = q`` for every ``y`` (some other input always exists), ``gamma = k q``,
    ``omega`` uniform. Classes of ``(x1, x1')``: ``{x1}`` with ``(a, b) = (e^eps0, 1)``,
    ``{x1'}`` with ``(1, e^eps0)``, the other ``k - 2`` outputs with ``(1, 1)``; masses ``q, q,
    (k - 2) q``; ``rest = 1 - k q = (e^eps0 - 1) q``. This reproduces spec §3's trinomial
    formula. Permutations of ``[k]`` act 2-transitively: one pair serves all.
    """

    name: ClassVar[str] = "krr"

    @property
    def n_outputs(self) -> int:
        return self.k

    def probabilities(self) -> tuple[float, float]:
        """``(p, q)``."""
        e = math.exp(self.eps0)
        return e / (e + self.k - 1), 1.0 / (e + self.k - 1)

    def pair_structure(self, x1: int = 0, x2: int = 1) -> PairStructure:
        self._pair_check(x1, x2)
        e = math.exp(self.eps0)
        q = 1.0 / (e + self.k - 1)
        return _structure([(q, e, 1.0), (q, 1.0, e), ((self.k - 2) * q, 1.0, 1.0)],
                          math.expm1(self.eps0) * q, _CLOSED_FORM_REL, (x1, x2))

    def matrix(self) -> np.ndarray:
        self._check_matrix_size()
        p, q = self.probabilities()
        out = np.full((self.k, self.k), q)
        np.fill_diagonal(out, p)
        return out


@dataclass(frozen=True, repr=False)
class _UnaryEncoding(_OnDomain):
    """Unary encoding with bit probabilities ``p`` (the input's own bit) and ``q`` (the others).

    The input ``x`` in ``[k]`` is one-hot encoded and every bit is reported independently: bit
    ``x`` is 1 with probability ``p``, every other bit with probability ``q < p``. Outputs are
    ``{0,1}^k``. Writing ``base(y) = prod_i q^{y_i} (1-q)^{1-y_i}``,
    ``R(x)(y) = base(y) f(y_x)`` with ``f(1) = f1 = p/q`` and ``f(0) = f0 = (1-p)/(1-q) < 1``, so
    the LDP level is ``log(f1/f0) = log(p(1-q)/(q(1-p)))``.

    Blanket: ``m(y) = base(y) f0`` unless ``y`` is all ones (then every ``R(x)(y) = base(y)
    f1``). ``gamma = f0 (1 - q^k) + f1 q^k``. Classes of ``(x1, x1')`` -- the bits at ``x1`` and
    ``x1'``, no enumeration of ``2^k`` outputs: summing ``base`` over the other ``k - 2`` bits
    gives 1, and the bits at ``x1, x1'`` are independent ``Bern(q)`` under ``base``:

    - bits (1, 0): mass ``f0 q (1-q)``, ``(a, b) = (f1/f0, 1)``;
    - bits (0, 1): mass ``f0 q (1-q)``, ``(1, f1/f0)``;
    - bits (1, 1), not all ones: mass ``f0 q^2 (1 - q^{k-2})``, ``(f1/f0, f1/f0)``;
    - bits (0, 0): mass ``f0 (1-q)^2``, ``(1, 1)``; and the all-ones output: mass ``f1 q^k``,
      ``(1, 1)`` (merged with the previous class).

    Permutations of the coordinates act 2-transitively on ordered pairs: one pair serves all.
    """

    @property
    def n_outputs(self) -> int:
        return 2**self.k

    def bit_probabilities(self) -> tuple[float, float, float, float, float]:
        """``(p, q, 1-p, 1-q, p-q)`` computed without cancellation."""
        raise NotImplementedError

    def pair_structure(self, x1: int = 0, x2: int = 1) -> PairStructure:
        self._pair_check(x1, x2)
        p, q, pc, qc, diff = self.bit_probabilities()
        f1, f0 = p / q, pc / qc
        r = math.exp(self.eps0)  # = f1 / f0 by construction of p, q
        qk = q**self.k
        ones_but_two = -math.expm1((self.k - 2) * math.log(q)) if self.k > 2 else 0.0  # 1 - q^{k-2}
        classes = [
            (f0 * q * qc, r, 1.0),
            (f0 * q * qc, 1.0, r),
            (f0 * q * q * ones_but_two, r, r),
            (f0 * qc * qc + f1 * qk, 1.0, 1.0),
        ]
        # 1 - gamma = (1 - f0)(1 - q^k) - (f1 - 1) q^k with 1 - f0 = (p - q)/(1 - q), f1 - 1 = (p - q)/q:
        # (p - q)[(1 - q^k)/(1 - q) - q^{k-1}] = (p - q)(1 - q^{k-1})/(1 - q) (the geometric sum 1 + q + ..
        # + q^{k-2}), no cancellation. (The difference form lost f1 - 1 ~ eps0/2 to cancellation: relative
        # error 780 u at eps0 = 1e-3, 1.2e4 u at 1e-5, SUE / OUE k = 2, beyond rel_err; review sep93s.) Error:
        # diff and 1 - q within 4 u, log q within 4 u relative (q <= 1/2), so (k - 1) log q within 5 u |x| and
        # -expm1(x) within 6 u (|x| e^x / (1 - e^x) <= 1 for x < 0): about 20 u in all, inside rel_err
        rest = diff / qc * (-math.expm1((self.k - 1) * math.log(q)))
        return _structure(classes, max(rest, 0.0), _CLOSED_FORM_REL, (x1, x2))

    def matrix(self) -> np.ndarray:
        if self.k > 16:
            raise InvalidParameter(f"{self.describe()}: the full matrix has 2^{self.k} columns; k <= 16 only")
        self._check_matrix_size()
        p, q, pc, qc, _ = self.bit_probabilities()
        outs = np.array(list(product((0, 1), repeat=self.k)), dtype=float)  # rows = outputs
        log_base = outs @ np.full(self.k, math.log(q)) + (1 - outs) @ np.full(self.k, math.log(qc))
        base = np.exp(log_base)
        f = np.where(outs == 1.0, p / q, pc / qc)  # f[y, x] = f(y_x)
        return (base[:, None] * f).T


class SUE(_UnaryEncoding):
    """Symmetric unary encoding = basic one-time RAPPOR (Erlingsson, Pihur, Korolova, "RAPPOR",
    ACM CCS 2014; named SUE by Wang, Blocki, Li, Jha, "Locally Differentially Private Protocols
    for Frequency Estimation", USENIX Security 2017, Section 4.3).

    ``p = e^{eps0/2} / (e^{eps0/2} + 1)``, ``q = 1 - p``: each bit is flipped with probability
    ``q``; ``p(1-q)/(q(1-p)) = (p/q)^2 = e^eps0``. Structure: see :class:`_UnaryEncoding`.
    """

    name: ClassVar[str] = "sue"

    def bit_probabilities(self) -> tuple[float, float, float, float, float]:
        h = math.exp(self.eps0 / 2.0)
        return h / (h + 1.0), 1.0 / (h + 1.0), 1.0 / (h + 1.0), h / (h + 1.0), math.expm1(self.eps0 / 2.0) / (h + 1.0)


class OUE(_UnaryEncoding):
    """Optimized unary encoding (Wang, Blocki, Li, Jha, USENIX Security 2017, Section 4.4).

    ``p = 1/2``, ``q = 1 / (e^eps0 + 1)``; ``p(1-q)/(q(1-p)) = e^eps0``. Structure: see
    :class:`_UnaryEncoding`.
    """

    name: ClassVar[str] = "oue"

    def bit_probabilities(self) -> tuple[float, float, float, float, float]:
        e = math.exp(self.eps0)
        return 0.5, 1.0 / (e + 1.0), 0.5, e / (e + 1.0), math.expm1(self.eps0) / (2.0 * (e + 1.0))


@dataclass(frozen=True, repr=False)
class OLH(_OnDomain):
    """Optimized local hashing (Wang, Blocki, Li, Jha, USENIX Security 2017, Section 4.4), with
    the *idealised* hash family of all functions ``[k] -> [g]``.

    The user draws ``H`` uniformly from all ``g^k`` functions, computes ``H(x)`` and reports
    ``(H, y)`` where ``y`` is ``g``-ary randomized response of ``H(x)``: ``y = H(x)`` with
    probability ``p = e^eps0 / (e^eps0 + g - 1)``, each other value with ``q = 1 / (e^eps0 + g -
    1)``. Default ``g = round(e^eps0 + 1)`` (the paper's optimum ``e^eps0 + 1``, rounded). A
    deployed OLH uses a small seeded family (e.g. xxhash); its blanket differs from the
    idealised one and is not covered here.

    Blanket (per pair of outputs ``(H, y)``, ``R`` has the factor ``1/g^k`` of ``H``): ``m(H, y)
    = q`` unless ``H`` is constant equal to ``y`` (then ``p``). ``gamma = q (g - g^{1-k}) + p
    g^{1-k}``. Classes of ``(x1, x1')`` (probabilities over the uniform ``H``):

    - ``H(x1) = y != H(x1')``: mass ``q (1 - 1/g)``, ``(e^eps0, 1)``; mirrored: same mass,
      ``(1, e^eps0)``;
    - ``H(x1) = H(x1') = y``, ``H`` not constant: mass ``q (1/g - g^{1-k})``, ``(e^eps0,
      e^eps0)``;
    - ``y`` hit by neither: mass ``q (g - 2 + 1/g)``, ``(1, 1)``; ``H`` constant ``= y``: mass
      ``p g^{1-k}``, ``(1, 1)``.

    Permutations of ``[k]`` act on the family (``H -> H o s^{-1}``) preserving its uniform law:
    one pair serves all.
    """

    g: int | None = None
    name: ClassVar[str] = "olh"

    def __post_init__(self) -> None:
        super().__post_init__()
        g = self.g if self.g is not None else max(2, round(math.exp(self.eps0) + 1.0))
        object.__setattr__(self, "g", G_RANGE.check(g))

    @property
    def n_outputs(self) -> int:
        return int(self.g) ** (self.k + 1)  # type: ignore[arg-type]

    def parameters(self) -> dict[str, Any]:
        return {"k": self.k, "g": self.g}

    def probabilities(self) -> tuple[float, float]:
        e = math.exp(self.eps0)
        g = float(self.g)  # type: ignore[arg-type]
        return e / (e + g - 1.0), 1.0 / (e + g - 1.0)

    def pair_structure(self, x1: int = 0, x2: int = 1) -> PairStructure:
        self._pair_check(x1, x2)
        p, q = self.probabilities()
        g = float(self.g)  # type: ignore[arg-type]
        e = math.exp(self.eps0)
        const = math.pow(g, 1.0 - self.k)  # g^{1-k}: P(H constant) * g (pow: within an ulp)
        classes = [
            (q * (1.0 - 1.0 / g), e, 1.0),
            (q * (1.0 - 1.0 / g), 1.0, e),
            # q (1/g - g^{1-k}) = (q/g)(1 - g^{2-k}): exactly 0 for k = 2 (the difference left ~1e-21 there, a
            # spurious class whose relative error no rel can bound), no cancellation for k >= 3 (g^{2-k} <= 1/2)
            (q / g * (1.0 - math.pow(g, 2.0 - self.k)), e, e),
            (q * (g - 2.0 + 1.0 / g) + p * const, 1.0, 1.0),
        ]
        # 1 - gamma = 1 - q g - (p - q) g^{1-k} = (e - 1) q - (e - 1) q g^{1-k}
        rest = math.expm1(self.eps0) * q * (1.0 - const)
        return _structure(classes, max(rest, 0.0), _CLOSED_FORM_REL, (x1, x2))

    def matrix(self) -> np.ndarray:
        g = int(self.g)  # type: ignore[arg-type]
        if self.k * math.log(g) > math.log(MAX_ENTRIES):
            raise InvalidParameter(f"{self.describe()}: the full matrix has g^(k+1) columns; too large")
        self._check_matrix_size()
        p, q = self.probabilities()
        funcs = np.array(list(product(range(g), repeat=self.k)))  # H as its table of values
        nh = funcs.shape[0]
        out = np.empty((self.k, nh * g))
        for x in range(self.k):
            hit = funcs[:, x][:, None] == np.arange(g)[None, :]  # [H, y]
            out[x] = np.where(hit, p, q).ravel() / nh
        return out


@dataclass(frozen=True, repr=False)
class Hadamard(_OnDomain):
    """Hadamard response, the basic (one-block) scheme of Acharya, Sun, Zhang, "Hadamard
    Response: Estimating Distributions Privately, Efficiently, and with Little Communication",
    AISTATS 2019 (arXiv 1802.04705), Section 3.

    ``K = 2^ceil(log2(k + 1))``; input ``x`` in ``[k]`` uses row ``x + 1`` of the Sylvester
    Hadamard matrix ``H(u, y) = (-1)^{<u, y>}`` (``u, y`` in ``F_2^log2 K``), and ``C_x = {y :
    H(x+1, y) = +1}`` (``|C_x| = K/2``). Output ``y`` in ``[K]`` with probability
    ``2 e^eps0 / (K (1 + e^eps0))`` on ``C_x`` and ``2 / (K (1 + e^eps0))`` off it. (The paper's
    multi-block variant for large ``eps0`` is not implemented.)

    Blanket: column 0 lies in every ``C_x`` (``m(0) = high``); any other column ``y`` has ``K/2``
    rows with ``-1`` among rows ``1..K-1`` and at most ``K/2 - 1`` of those rows are unused
    (``k >= K/2``), so ``m(y) = low``. ``gamma = ((K - 1) low + high)``. For distinct nonzero
    ``u = x1 + 1``, ``u' = x1' + 1`` (linearly independent over ``F_2``) each of the four sign
    patterns of ``(<u, y>, <u', y>)`` holds for exactly ``K/4`` columns, so the classes do not
    depend on the pair:

    - in ``C_x1`` only: ``K/4`` columns, mass ``K/4 low``, ``(e^eps0, 1)``; mirrored: same;
    - in both, ``y != 0``: ``K/4 - 1`` columns, ``(e^eps0, e^eps0)``;
    - in neither: ``K/4`` columns, ``(1, 1)``; column 0: mass ``high``, ``(1, 1)``.
    """

    name: ClassVar[str] = "hadamard"

    @property
    def K(self) -> int:
        """Output alphabet size ``2^ceil(log2(k+1))``."""
        return 1 << (self.k).bit_length()  # smallest power of 2 > k

    @property
    def n_outputs(self) -> int:
        return self.K

    def probabilities(self) -> tuple[float, float]:
        """``(high, low)`` output probabilities."""
        e = math.exp(self.eps0)
        return 2.0 * e / (self.K * (1.0 + e)), 2.0 / (self.K * (1.0 + e))

    def pair_structure(self, x1: int = 0, x2: int = 1) -> PairStructure:
        self._pair_check(x1, x2)
        high, low = self.probabilities()
        e = math.exp(self.eps0)
        quarter = self.K / 4.0
        classes = [
            (quarter * low, e, 1.0),
            (quarter * low, 1.0, e),
            ((quarter - 1.0) * low, e, e),
            (quarter * low + high, 1.0, 1.0),
        ]
        # 1 - gamma = (K/2)(high - low) - (high - low) = (K/2 - 1)(high - low)
        rest = (self.K / 2.0 - 1.0) * (2.0 * math.expm1(self.eps0) / (self.K * (1.0 + e)))
        return _structure(classes, rest, _CLOSED_FORM_REL, (x1, x2))

    def matrix(self) -> np.ndarray:
        self._check_matrix_size()
        high, low = self.probabilities()
        rows = np.arange(1, self.k + 1)[:, None]
        cols = np.arange(self.K)[None, :]
        parity = np.vectorize(lambda v: int(v).bit_count() & 1)(rows & cols)
        return np.where(parity == 0, high, low)


@dataclass(frozen=True, repr=False)
class Subset(_OnDomain):
    """d-subset selection (Ye, Barg, "Optimal schemes for discrete distribution estimation under
    locally differential privacy", IEEE T-IT 2018; Wang, Wu, Hu, ..., "Mutual information
    optimally local private discrete distribution estimation", arXiv 1607.08025, 2016).

    Outputs are the ``d``-subsets ``Z`` of ``[k]`` (``1 <= d <= k - 1``),
    ``R(x)(Z) = e^eps0 / W`` if ``x in Z`` else ``1 / W``, ``W = C(k-1, d-1) e^eps0 + C(k-1, d)``.
    Default ``d = ceil(k / (e^eps0 + 1))`` (Ye-Barg's choice). ``d = 1`` is k-RR.

    Blanket: ``d < k`` so some input is outside every ``Z``: ``m(Z) = 1/W``, ``gamma = C(k, d) /
    W``. Classes of ``(x1, x1')`` (counts of subsets; divided by ``C(k-1, d-1)`` they are closed
    forms, with ``W / C(k-1, d-1) = e^eps0 + (k-d)/d``):

    - ``x1 in Z, x1' not``: ``C(k-2, d-1)`` subsets, ratio ``(k-d)/(k-1)``, ``(e^eps0, 1)``;
      mirrored: same;
    - both in ``Z``: ``C(k-2, d-2)``, ratio ``(d-1)/(k-1)``, ``(e^eps0, e^eps0)``;
    - neither: ``C(k-2, d)``, ratio ``(k-d)(k-d-1)/(d(k-1))``, ``(1, 1)``.

    Permutations of ``[k]`` act 2-transitively: one pair serves all.
    """

    d: int | None = None
    name: ClassVar[str] = "subset"

    def __post_init__(self) -> None:
        super().__post_init__()
        d = self.d if self.d is not None else max(1, math.ceil(self.k / (math.exp(self.eps0) + 1.0)))
        object.__setattr__(self, "d", IntRange("d", 1, self.k - 1).check(d))

    @property
    def n_outputs(self) -> int:
        return math.comb(self.k, int(self.d))  # type: ignore[arg-type]

    def parameters(self) -> dict[str, Any]:
        return {"k": self.k, "d": self.d}

    def pair_structure(self, x1: int = 0, x2: int = 1) -> PairStructure:
        self._pair_check(x1, x2)
        k, d = float(self.k), float(self.d)  # type: ignore[arg-type]
        e = math.exp(self.eps0)
        w = e + (k - d) / d  # W / C(k-1, d-1)
        classes = [
            ((k - d) / (k - 1.0) / w, e, 1.0),
            ((k - d) / (k - 1.0) / w, 1.0, e),
            ((d - 1.0) / (k - 1.0) / w, e, e),
            ((k - d) * (k - d - 1.0) / (d * (k - 1.0)) / w, 1.0, 1.0),
        ]
        # 1 - gamma = 1 - (k/d)/w = (e - 1) / w
        rest = math.expm1(self.eps0) / w
        return _structure(classes, rest, _CLOSED_FORM_REL, (x1, x2))

    def matrix(self) -> np.ndarray:
        self._check_matrix_size()
        k, d = self.k, int(self.d)  # type: ignore[arg-type]
        e = math.exp(self.eps0)
        w = math.comb(k - 1, d - 1) * e + math.comb(k - 1, d)
        subsets = [set(z) for z in _combinations(k, d)]
        return np.array([[e / w if x in z else 1.0 / w for z in subsets] for x in range(k)])


def _combinations(k: int, d: int) -> list[tuple[int, ...]]:
    from itertools import combinations

    return list(combinations(range(k), d))


# ---------------------------------------------------------------------------------------
# A randomizer given as a matrix.
# ---------------------------------------------------------------------------------------


class MatrixRandomizer(Randomizer):
    """Any finite randomizer given by its matrix (rows = inputs, columns = outputs).

    Validated on construction (:func:`validate_matrix`): finite, non-negative, at least two
    rows, each row sums to 1 within ``1e-12``, pure LDP (no column has a zero next to a
    positive entry). Each row is taken as the probability vector ``row / row_sum``; the stored
    ``rel_err`` of its structures covers that normalisation (``|row_sum - 1|``) and the
    roundings of the grouping. ``eps0`` is computed: ``max_y log(max_x R(x)(y) / min_x
    R(x)(y))`` over the columns that are not identically zero.

    Structures: for each ordered pair, outputs are grouped by their ratios ``(a, b)``, where
    ``a = R(x1)(y)/m(y)`` and ``b = R(x1')(y)/m(y)`` are correctly rounded quotients. Ratios within
    relative ``1e-12`` of each other (:data:`GROUP_RTOL`, e.g. the same exact ratio computed from
    differently rounded entries of a matrix built in floating point) form one class whose
    representative is the midpoint; the half-spread is added to the structure's ``rel_err``, so
    the bound stays certified for every member. Distinct structures of all ordered pairs are
    returned (the bound is their maximum).
    """

    name: ClassVar[str] = "matrix"

    def __init__(self, matrix: np.ndarray | Sequence[Sequence[float]], source: str = "matrix",
                 where: str | None = None) -> None:
        self.source = source
        try:
            arr = np.asarray(matrix, dtype=float)
        except (TypeError, ValueError, OverflowError) as exc:
            raise InvalidParameter(f"{where or 'randomizer ' + source}: not a numeric matrix ({exc})") from None
        self._m = validate_matrix(arr, where or f"randomizer {source}")
        sums = np.array([math.fsum(row) for row in self._m])
        self._dev = float(np.max(np.abs(sums - 1.0)))
        mins = self._m.min(axis=0)
        used = self._m.max(axis=0) > 0.0
        self._used = used
        self._mins = mins
        with np.errstate(divide="ignore"):
            l_max, l_min = np.log(self._m.max(axis=0)[used]), np.log(mins[used])
            ratio = l_max - l_min
        self.eps0 = float(np.max(ratio)) if ratio.size else 0.0
        # each log within an ulp (libm: below one), the difference one rounding; the rows are normalised in exact
        # arithmetic (module docstring), which moves each log ratio by at most |log(sum_x / sum_x')| <= 2.01 dev
        slack = 2.0 * _U * (np.abs(l_max) + np.abs(l_min)) + _U * np.abs(ratio)
        self._eps0_upper = (math.nextafter(float(np.max(ratio + slack)) + 2.01 * self._dev, math.inf)
                            if ratio.size else 0.0)
        self._structures: tuple[PairStructure, ...] | None = None

    @property
    def eps0_upper(self) -> float:
        return self._eps0_upper

    @property
    def n_inputs(self) -> int:
        return int(self._m.shape[0])

    @property
    def n_outputs(self) -> int:
        return int(self._m.shape[1])

    def parameters(self) -> dict[str, Any]:
        return {"file": self.source, "inputs": self.n_inputs, "outputs": self.n_outputs}

    def describe(self) -> str:
        return f"matrix({self.source}: {self.n_inputs} inputs x {self.n_outputs} outputs, eps0={self.eps0:.6g})"

    def matrix(self) -> np.ndarray:
        return self._m.copy()

    @property
    def rel_err(self) -> float:
        """Relative error bound of masses/ratios: twice the row-sum deviation (rows are
        normalised in exact arithmetic) plus the roundings of the quotients and sums."""
        return 2.0 * self._dev + (self.n_outputs + 16) * _U

    def pair_structure(self, x1: int = 0, x2: int = 1) -> PairStructure:
        self._pair_check(x1, x2)
        m = self._mins[self._used]
        a_lab, a_rep, a_span = _cluster(self._m[x1, self._used] / m)
        b_lab, b_rep, b_span = _cluster(self._m[x2, self._used] / m)
        keys, inv = np.unique(np.stack((a_lab, b_lab), axis=1), axis=0, return_inverse=True)
        mass = np.zeros(len(keys))
        np.add.at(mass, inv.ravel(), m)
        rest = math.fsum(self._m[x1, self._used] - m)  # each difference is >= 0
        rel = self.rel_err + max(a_span, b_span)
        # the row normalisation moves rest by at most 2 dev * gamma (absolute)
        rest_rel = rel + (2.0 * self._dev * float(np.sum(m)) / rest if rest > 0.0 else 0.0)
        return _structure([(float(p), float(a_rep[k[0]]), float(b_rep[k[1]])) for p, k in zip(mass, keys)],
                          min(max(rest, 0.0), 1.0), max(rel, rest_rel), (x1, x2))

    def check_pairwise_size(self, analysis: str) -> None:
        """Refuse (exit 1: valid, but too large to finish) the analyses over every pair of inputs
        beyond :data:`MAX_MATRIX_INPUTS` inputs (review rev94m: 1000 inputs ran for minutes)."""
        if self.n_inputs > MAX_MATRIX_INPUTS:
            raise CertificationError(
                f"{self.describe()}: {analysis} looks at every pair of its {self.n_inputs} inputs; at most "
                f"{MAX_MATRIX_INPUTS} are analysed (the generic methods still apply: they need only eps0)")

    def pair_structures(self) -> tuple[PairStructure, ...]:
        if self._structures is None:
            self.check_pairwise_size("the blanket bound")
            seen: dict[tuple, PairStructure] = {}
            for x1 in range(self.n_inputs):
                for x2 in range(self.n_inputs):
                    if x1 != x2:
                        s = self.pair_structure(x1, x2)
                        seen.setdefault(s.key(), s)
            self._structures = tuple(seen.values())
        return self._structures


#: ratios within this relative distance are grouped into one class (the spread is charged to
#: the structure's ``rel_err``), so that matrices built in floating point from a structured
#: randomizer keep its few classes
GROUP_RTOL = 1e-12
#: A matrix randomizer's mechanism-aware bounds look at every ordered pair of inputs (the blanket: ``k (k - 1)``
#: structures; the attained lower bound: ``k^2 (k - 1) / 2`` datasets): refused beyond this many inputs (~2 s and
#: ~4 s at 48 inputs)
MAX_MATRIX_INPUTS = 48


def _cluster(values: np.ndarray, tol: float = GROUP_RTOL) -> tuple[np.ndarray, np.ndarray, float]:
    """Group sorted values whose span stays within relative ``tol``: returns per-value labels,
    one representative per group (the midpoint of its extremes) and the largest relative
    half-span of a group (the error of replacing a value by its representative)."""
    order = np.argsort(values, kind="stable")
    v = values[order]
    labels_sorted = np.zeros(len(v), dtype=np.int64)
    starts = [0]
    for i in range(1, len(v)):
        if v[i] > v[starts[-1]] * (1.0 + tol):
            starts.append(i)
        labels_sorted[i] = len(starts) - 1
    bounds = starts + [len(v)]
    lo = np.array([v[bounds[j]] for j in range(len(starts))])
    hi = np.array([v[bounds[j + 1] - 1] for j in range(len(starts))])
    rep = 0.5 * (lo + hi)
    span = float(np.max((hi - lo) / rep)) if len(rep) else 0.0
    labels = np.empty(len(v), dtype=np.int64)
    labels[order] = labels_sorted
    return labels, rep, 0.5 * span + (4 * _U if span > 0.0 else 0.0)


def validate_matrix(m: np.ndarray, where: str = "randomizer matrix") -> np.ndarray:
    """Check a randomizer matrix; raise :class:`InvalidParameter` with one line starting with
    ``where`` and naming the first problem (row/column numbers are 1-based)."""
    if m.ndim != 2:
        raise InvalidParameter(f"{where}: expected a 2-D matrix (rows = inputs, columns = outputs), got {m.ndim} dimension(s)")
    rows, cols = m.shape
    if rows < 2:
        raise InvalidParameter(f"{where}: need at least 2 rows (inputs), got {rows}")
    if cols < 1:
        raise InvalidParameter(f"{where}: need at least 1 column (output), got {cols}")
    if rows * cols > MAX_ENTRIES:
        raise InvalidParameter(f"{where}: {rows} x {cols} entries, more than the {MAX_ENTRIES:g} accepted")
    bad = np.argwhere(~np.isfinite(m))
    if bad.size:
        r, c = bad[0]
        raise InvalidParameter(f"{where}: row {r + 1} column {c + 1}: entry {float(m[r, c])!r} is not finite")
    bad = np.argwhere(m < 0.0)
    if bad.size:
        r, c = bad[0]
        raise InvalidParameter(f"{where}: row {r + 1} column {c + 1}: negative entry {float(m[r, c])!r}")
    for r in range(rows):
        s = math.fsum(m[r])
        if abs(s - 1.0) > ROW_SUM_TOL:
            raise InvalidParameter(f"{where}: row {r + 1} sums to {s!r}, not 1 (tolerance {ROW_SUM_TOL:g})")
    zero = m == 0.0
    mixed = np.nonzero(zero.any(axis=0) & ~zero.all(axis=0))[0]
    if mixed.size:
        c = mixed[0]
        r0 = int(np.nonzero(zero[:, c])[0][0])
        r1 = int(np.nonzero(~zero[:, c])[0][0])
        raise InvalidParameter(
            f"{where}: column {c + 1} is 0 in row {r0 + 1} but positive in row {r1 + 1}: the "
            f"randomizer is not pure LDP (eps0 would be infinite); the blanket bound needs a finite eps0"
        )
    return m


def load_matrix(path: str | os.PathLike[str]) -> MatrixRandomizer:
    """Load a randomizer matrix from a CSV (``.csv``, ``.txt``) or JSON (``.json``) file.

    CSV: one row per input, comma-separated numbers, no header. JSON: a list of rows (lists of
    numbers), or an object whose only key is ``"matrix"`` holding that list. The file size is
    checked before reading (at most 10 MB) and parsing stops past ``MAX_ENTRIES`` entries.
    Every problem raises :class:`InvalidParameter` with one line naming the file.
    """
    name = os.fspath(path)
    where = f"randomizer file {name}"
    try:
        size = os.stat(name).st_size
    except OSError as exc:
        raise InvalidParameter(f"{where}: cannot read it ({exc.strerror or exc})") from None
    if not os.path.isfile(name):
        raise InvalidParameter(f"{where}: not a regular file")
    if size > MAX_FILE_BYTES:
        raise InvalidParameter(f"{where}: {size} bytes, more than the {MAX_FILE_BYTES // (1024 * 1024)} MB accepted")
    suffix = os.path.splitext(name)[1].lower()
    if suffix not in (".csv", ".txt", ".json"):
        raise InvalidParameter(f"{where}: unknown format {suffix or '(no suffix)'!r}; use .csv, .txt or .json")
    try:
        with open(name, "rb") as fh:
            raw = fh.read(MAX_FILE_BYTES + 1)
        text = raw.decode("utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidParameter(f"{where}: cannot read it as UTF-8 text ({exc})") from None
    if not text.strip():
        raise InvalidParameter(f"{where}: the file is empty")
    rows = _parse_json(text, where) if suffix == ".json" else _parse_csv(text, where)
    widths = {len(r) for r in rows}
    if len(widths) > 1:
        first = len(rows[0])
        bad = next(i for i, r in enumerate(rows) if len(r) != first)
        raise InvalidParameter(f"{where}: row {bad + 1} has {len(rows[bad])} entries but row 1 has {first} (ragged rows)")
    return MatrixRandomizer(np.array(rows, dtype=float), os.path.basename(name), where)


#: A matrix entry in CSV: a plain decimal number (``0.25``, ``.5``, ``1e-3``, ``+1``). Python's ``float`` also reads
#: ``0.2_5``, ``nan``, ``inf`` and ``infinity``; none of them is a probability a user means to write, so they are
#: refused by this syntax (review rev94m) rather than read as something else.
_DECIMAL = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def _number(token: object, where: str, r: int, c: int) -> float:
    if token is None:
        raise InvalidParameter(f"{where}: row {r} column {c}: null is not a number")
    if isinstance(token, bool) or not isinstance(token, (Real, str)):
        raise InvalidParameter(f"{where}: row {r} column {c}: {token!r} is not a number")
    if isinstance(token, str):
        t = token.strip()
        if _DECIMAL.fullmatch(t) is None:
            raise InvalidParameter(f"{where}: row {r} column {c}: {t!r} is not a number (a plain decimal, e.g. 0.25 "
                                   "or 1e-3)")
        x = float(t)
    else:
        try:
            x = float(token)
        except OverflowError:  # an integer beyond the double range (review rev94m)
            raise InvalidParameter(f"{where}: row {r} column {c}: an integer too large for a probability") from None
    return x


def _parse_csv(text: str, where: str) -> list[list[float]]:
    rows: list[list[float]] = []
    entries = 0
    lines = text.splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    for r, fields in enumerate(csv.reader(io.StringIO("\n".join(lines))), start=1):
        if not fields or all(not f.strip() for f in fields):
            raise InvalidParameter(f"{where}: row {r} is empty")
        entries += len(fields)
        if entries > MAX_ENTRIES:
            raise InvalidParameter(f"{where}: more than the {MAX_ENTRIES:g} entries accepted")
        rows.append([_number(f, where, r, c) for c, f in enumerate(fields, start=1)])
    return rows


class _NonFiniteJson(Exception):
    """``NaN`` / ``Infinity`` / ``-Infinity`` in a matrix file: not JSON, though Python's parser reads them."""


def _refuse_json_constant(name: str) -> float:
    raise _NonFiniteJson(name)


def _parse_json(text: str, where: str) -> list[list[float]]:
    try:
        data = json.loads(text, parse_constant=_refuse_json_constant)
    except _NonFiniteJson as exc:
        raise InvalidParameter(f"{where}: {exc.args[0]} is not a number (JSON numbers are finite)") from None
    except json.JSONDecodeError as exc:
        raise InvalidParameter(f"{where}: not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    except (ValueError, RecursionError) as exc:  # e.g. an integer of more digits than Python converts, deep nesting
        raise InvalidParameter(f"{where}: not a JSON matrix ({type(exc).__name__}: {str(exc)[:80]})") from None
    if isinstance(data, dict):
        unknown = sorted(set(data) - {"matrix"})
        if unknown:
            raise InvalidParameter(f"{where}: unknown key(s) {', '.join(map(repr, unknown))}; the only key accepted is 'matrix'")
        if "matrix" not in data:
            raise InvalidParameter(f"{where}: the object has no 'matrix' key")
        data = data["matrix"]
    if not isinstance(data, list) or not data:
        raise InvalidParameter(f"{where}: expected a non-empty list of rows (lists of numbers)")
    rows: list[list[float]] = []
    entries = 0
    for r, row in enumerate(data, start=1):
        if not isinstance(row, list) or not row:
            raise InvalidParameter(f"{where}: row {r} is not a non-empty list of numbers")
        entries += len(row)
        if entries > MAX_ENTRIES:
            raise InvalidParameter(f"{where}: more than the {MAX_ENTRIES:g} entries accepted")
        rows.append([_number(x, where, r, c) if not isinstance(x, str) else _reject_string(x, where, r, c)
                     for c, x in enumerate(row, start=1)])
    return rows


def _reject_string(x: str, where: str, r: int, c: int) -> float:
    raise InvalidParameter(f"{where}: row {r} column {c}: {x!r} is a string, not a number")


# ---------------------------------------------------------------------------------------
# Registry for the CLI / API.
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RandomizerSpec:
    """How to build a named randomizer: constructor, required and optional parameters."""

    name: str
    constructor: Callable[..., Randomizer]
    required: tuple[str, ...]
    optional: tuple[str, ...]
    summary: str


registry: Mapping[str, RandomizerSpec] = {
    "krr": RandomizerSpec("krr", KRR, ("k",), (), "k-ary randomized response (k = 2: binary RR)"),
    "sue": RandomizerSpec("sue", SUE, ("k",), (), "symmetric unary encoding (basic RAPPOR)"),
    "oue": RandomizerSpec("oue", OUE, ("k",), (), "optimized unary encoding"),
    "olh": RandomizerSpec("olh", OLH, ("k",), ("g",), "optimized local hashing, idealised hash family (g default round(e^eps0 + 1))"),
    "hadamard": RandomizerSpec("hadamard", Hadamard, ("k",), (), "Hadamard response (one block)"),
    "subset": RandomizerSpec("subset", Subset, ("k",), ("d",), "d-subset selection (d default ceil(k / (e^eps0 + 1)))"),
}


def make_randomizer(name: str, eps0: float, **params: Any) -> Randomizer:
    """Build a named randomizer; unknown names and parameters are refused (one line)."""
    spec = registry.get(name)
    if spec is None:
        raise InvalidParameter(f"unknown randomizer {name!r}; choose one of {', '.join(sorted(registry))}")
    given = {k: v for k, v in params.items() if v is not None}
    unknown = sorted(set(given) - set(spec.required) - set(spec.optional))
    if unknown:
        accepted = ", ".join(spec.required + spec.optional)
        raise InvalidParameter(f"randomizer {name!r} does not take {', '.join(unknown)} (its parameters: {accepted})")
    missing = [p for p in spec.required if p not in given]
    if missing:
        raise InvalidParameter(f"randomizer {name!r} needs {', '.join(missing)}")
    return spec.constructor(eps0=eps0, **given)


@dataclass(frozen=True)
class RandomizerFamily:
    """A deployed randomizer up to its ``eps0``: what planning (``solve eps0``), tables and plots
    need, since they vary ``eps0``. ``at(eps0)`` builds the randomizer.

    A named family keeps only the parameters the user gave (``params``), so a default that
    depends on ``eps0`` (``g`` of OLH, ``d`` of subset selection) follows ``eps0``. A matrix
    family has one fixed ``eps0`` (:attr:`fixed_eps0`); ``at`` refuses any other.
    """

    name: str
    params: tuple[tuple[str, int], ...] = ()
    fixed: MatrixRandomizer | None = None

    @classmethod
    def named(cls, name: str, **params: Any) -> RandomizerFamily:
        """A named family (parameters checked by building it once at eps0 = 1)."""
        given = tuple(sorted((k, v) for k, v in params.items() if v is not None))
        make_randomizer(name, 1.0, **dict(given))  # refuses unknown names / parameters now
        return cls(name, given)

    @classmethod
    def of(cls, randomizer: Randomizer) -> RandomizerFamily:
        """The family of a matrix randomizer (fixed eps0). Named randomizers are built from
        :meth:`named` (their defaults follow eps0, which an instance no longer records)."""
        if not isinstance(randomizer, MatrixRandomizer):
            raise InvalidParameter("RandomizerFamily.of takes a matrix randomizer; use RandomizerFamily.named(...)")
        return cls("matrix", (), randomizer)

    @property
    def fixed_eps0(self) -> float | None:
        """The eps0 of a matrix family (None for a named family)."""
        return None if self.fixed is None else self.fixed.eps0

    def at(self, eps0: float) -> Randomizer:
        """The family's randomizer at ``eps0``."""
        if self.fixed is not None:
            if abs(eps0 - self.fixed.eps0) > 1e-9 * self.fixed.eps0:
                raise InvalidParameter(f"eps0 = {eps0:g} differs from the eps0 of {self.fixed.describe()}; a matrix "
                                       "randomizer has one eps0")
            return self.fixed
        return make_randomizer(self.name, eps0, **dict(self.params))

    def __call__(self, eps0: float) -> Randomizer:
        """:meth:`at` (a family is a callable ``eps0 -> randomizer``)."""
        return self.at(eps0)

    @property
    def k(self) -> int | None:
        """The domain size ``k`` when the family has one."""
        return dict(self.params).get("k")

    @property
    def stepped(self) -> tuple[str, ...]:
        """The parameters left to their eps0-dependent default (OLH's ``g``, subset's ``d``):
        they change in steps as eps0 varies, so quantities that are monotone in eps0 for fixed
        parameters need not be monotone along the family."""
        if self.fixed is not None:
            return ()
        given = dict(self.params)
        return tuple(p for p in registry[self.name].optional if p not in given)

    def describe(self) -> str:
        """``krr(k=10)``, ``olh(k=100, g default)``, or the matrix's description."""
        if self.fixed is not None:
            return self.fixed.describe()
        given = dict(self.params)
        parts = [f"{k}={v}" for k, v in self.params]
        spec = registry[self.name]
        parts += [f"{p} default" for p in spec.optional if p not in given]
        return f"{self.name}({', '.join(parts)})"

    def to_dict(self) -> dict[str, Any]:
        """JSON form (grid files and saved tables): ``{"name": ..., <params>}``, a matrix as its rows."""
        if self.fixed is not None:
            return {"name": "matrix", "matrix": self.fixed.matrix().tolist(), "source": self.fixed.source}
        return {"name": self.name, **dict(self.params)}

    @classmethod
    def from_dict(cls, d: Any, where: str = "randomizer") -> RandomizerFamily:
        """Inverse of :meth:`to_dict`; unknown keys and names are refused."""
        if not isinstance(d, dict) or not isinstance(d.get("name"), str):
            raise InvalidParameter(f"{where}: an object with a 'name' (one of {', '.join(sorted(registry))}, matrix)")
        name = d["name"]
        if name == "matrix":
            unknown = sorted(set(d) - {"name", "matrix", "source"})
            if unknown:
                raise InvalidParameter(f"{where}: unknown key(s) {', '.join(map(repr, unknown))} of a matrix randomizer")
            source = d.get("source", "matrix")
            return cls.of(MatrixRandomizer(d.get("matrix", []), source=str(source), where=where))
        if name not in registry:
            raise InvalidParameter(f"{where}: unknown randomizer {name!r}; choose one of {', '.join(sorted(registry))}, matrix")
        spec = registry[name]
        unknown = sorted(set(d) - {"name"} - set(spec.required) - set(spec.optional))
        if unknown:
            raise InvalidParameter(f"{where}: randomizer {name!r} does not take {', '.join(map(repr, unknown))}")
        params = {}
        for p in spec.required + spec.optional:
            if p in d:
                params[p] = {"g": G_RANGE, "d": D_RANGE}.get(p, K_RANGE).check(d[p], p)
        return cls.named(name, **params)


def randomizer_at(randomizer: Randomizer | RandomizerFamily, eps0: float) -> Randomizer:
    """The randomizer analysed at ``eps0``: a family's member there, or the one randomizer
    given, whose eps0 must be ``eps0`` (refused with one line otherwise)."""
    if isinstance(randomizer, RandomizerFamily):
        return randomizer.at(eps0)
    if abs(randomizer.eps0 - eps0) > 1e-12 * eps0:
        raise InvalidParameter(f"eps0 = {eps0!r} differs from the randomizer's eps0 = {randomizer.eps0!r}")
    return randomizer


def krr_alphabet(randomizer: Randomizer | RandomizerFamily | None, k: int | None, flag: str = "k") -> int | None:
    """The alphabet size ``k`` to analyse with: a k-RR randomizer's (or family's) own, which a
    given ``k`` must equal (refused with one line naming ``flag`` otherwise); ``k`` unchanged for
    any other randomizer or none."""
    own = getattr(randomizer, "k", None) if randomizer is not None and randomizer.name == "krr" else None
    if own is None:
        return k
    if k is not None and k != own:
        raise InvalidParameter(f"{flag} = {k} differs from the randomizer's k = {own}")
    return own
