"""Validation of user-facing parameters: one set of ranges, shared by the API, the tables,
the composition, the plug-ins and the command line.

Each parameter has one :class:`RealRange` or :class:`IntRange` (its name, its accepted range
and how it is described), and one message family: ``"<name>: <value> is <problem>
(accepted: <range>)"``. The API calls :meth:`RealRange.check` / :meth:`IntRange.check`;
the click parameter types of :mod:`.cli.params` are thin adapters over the same objects, so
a range and its wording exist once. Every failure raises
:class:`~shuffle_accountant.errors.InvalidParameter` with one line.

Limits that protect the computation rather than the mathematics:

* ``eps0 <= 700`` (:data:`MAX_EPS0`): ``e^eps0`` must stay finite in double precision;
* ``delta >= 1e-300`` (:data:`MIN_DELTA`): below it doubles lose precision (subnormals), and
  ``log(1/delta)`` and the binomial tails the bounds need are no longer representable;
* ``n <= 1e12`` (:data:`MAX_N`);
* numbers given as text are at most :data:`MAX_NUMBER_CHARS` characters (Python refuses to
  convert integer strings of more than 4300 digits, and nothing here needs more than 30).

The frozen :class:`AmplificationQuery` record validates a whole amplification question in
``__post_init__`` (after ``dp_accounting``'s ``DifferentialPrivacyParameters``).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any, Generic, TypeVar

from .errors import InvalidParameter

#: Largest number of users (or trials) the accountant supports.
MAX_N = 10**12
#: Largest local epsilon: e^eps0 stays finite (e^709.8 is the largest double).
MAX_EPS0 = 700.0
#: Largest central epsilon accepted as a target (same reason).
MAX_EPS = 700.0
#: Smallest delta (or any probability given by a user); below it doubles are subnormal.
MIN_DELTA = 1e-300
#: Largest alphabet size of the k-RR methods.
MAX_K = 10**9
#: Largest number of composed rounds.
MAX_ROUNDS = 10**9
#: Longest number accepted as text (digits, sign, exponent, underscores).
MAX_NUMBER_CHARS = 100


def _fmt(x: float) -> str:
    """``1e-300``, ``0.5``, ``700``, ``1e12`` (no ``e+09`` noise)."""
    return f"{x:.6g}".replace("e+0", "e").replace("e+", "e").replace("e-0", "e-")


def _show(value: object) -> str:
    """The offending value as the user gave it, shortened if it is very long."""
    if hasattr(value, "item") and callable(value.item) and not isinstance(value, str):  # numpy scalar
        value = value.item()
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= 40 else f"{text[:20]}...({len(text)} characters)"


def parse_real_text(text: str) -> float:
    """A float from user text (``1e-6``, ``1_000``); raises ``ValueError`` (too long, or
    not a number). Non-finite results are returned and refused by the range check."""
    s = text.strip().replace("_", "")
    if len(s) > MAX_NUMBER_CHARS:
        raise ValueError("too long")
    return float(s)


def parse_int_text(text: str) -> int:
    """An integer from user text: ``100000``, ``1e5``, ``1_000``; raises ``ValueError``
    (too long, not a number, or not a whole number)."""
    s = text.strip().replace("_", "")
    if len(s) > MAX_NUMBER_CHARS:
        raise ValueError("too long")
    try:
        return int(s)
    except ValueError:
        try:
            x = float(s)
        except ValueError:
            raise ValueError("not a number") from None
    if not (math.isfinite(x) and x.is_integer()):
        raise ValueError("not an integer")
    return int(x)


def _json_int(text: str) -> int:
    """``parse_int`` hook of :func:`load_json`: refuse integers too long to convert."""
    if len(text) > MAX_NUMBER_CHARS:
        raise InvalidParameter(f"an integer of {len(text)} digits (accepted: at most {MAX_NUMBER_CHARS} characters)")
    return int(text)


def load_json(text: str, where: str) -> Any:
    """JSON from a user's file: too-long integers, too-deep nesting and invalid JSON
    become one-line :class:`InvalidParameter` messages naming ``where`` (e.g. the file)."""
    try:
        return json.loads(text, parse_int=_json_int)
    except json.JSONDecodeError as exc:
        raise InvalidParameter(f"{where} is not valid JSON: {exc.msg} (line {exc.lineno})") from None
    except RecursionError:
        raise InvalidParameter(f"{where} is nested too deeply") from None
    except InvalidParameter as exc:
        raise InvalidParameter(f"{where}: {exc}") from None
    except ValueError as exc:  # e.g. Python's own int-string limit
        raise InvalidParameter(f"{where}: {' '.join(str(exc).split())[:200]}") from None


T = TypeVar("T", int, float)


class _Range(Generic[T]):
    """What both kinds of range share: ``check`` refuses with the one message family."""

    name: str

    def describe(self, name: str | None = None) -> str:  # pragma: no cover - overridden
        raise NotImplementedError

    def problem(self, value: object) -> tuple[T | None, str | None]:  # pragma: no cover - overridden
        raise NotImplementedError

    def check(self, value: object, name: str | None = None, label: str | None = None) -> T:
        """``value`` converted and inside the range, or :class:`InvalidParameter`. ``name`` renames the parameter
        (in the refusal and its accepted range); ``label`` names where the value was found, in the refusal only
        (``round 3 eps0: -1 is out of range (accepted: 0 < eps0 <= 700)``)."""
        x, why = self.problem(value)
        if why is not None or x is None:
            raise InvalidParameter(message(label or name or self.name, value, why or "invalid", self.describe(name)))
        return x


@dataclass(frozen=True)
class RealRange(_Range[float]):
    """A finite real parameter in an interval; ``None`` ends are unbounded."""

    name: str
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False

    def describe(self, name: str | None = None) -> str:
        """The accepted range, e.g. ``0 < eps0 <= 700``."""
        name = name or self.name
        lo = "" if self.low is None else f"{_fmt(self.low)} {'<' if self.low_open else '<='} "
        hi = "" if self.high is None else f" {'<' if self.high_open else '<='} {_fmt(self.high)}"
        return f"{lo}{name}{hi}" if (lo or hi) else f"finite {name}"

    def problem(self, value: object) -> tuple[float | None, str | None]:
        """``(the value as a float, None)`` if accepted, else ``(None, what is wrong)``."""
        if isinstance(value, str):
            try:
                x = parse_real_text(value)
            except ValueError as exc:
                return None, "too long" if str(exc) == "too long" else "not a number"
        elif isinstance(value, bool) or not isinstance(value, Real):
            return None, "not a number"
        else:
            try:
                x = float(value)
            except OverflowError:  # a huge Python int
                return None, "out of range"
        if math.isnan(x):
            return None, "not a number"
        if not math.isfinite(x):
            return None, "not finite"
        if self.low is not None and (x < self.low or (self.low_open and x == self.low)):
            return None, "out of range"
        if self.high is not None and (x > self.high or (self.high_open and x == self.high)):
            return None, "out of range"
        return x, None


@dataclass(frozen=True)
class IntRange(_Range[int]):
    """An integer parameter in ``[low, high]``; integral floats (``1e6``) are accepted."""

    name: str
    low: int = 1
    high: int = MAX_N

    def describe(self, name: str | None = None) -> str:
        hi = _fmt(self.high) if self.high >= 10**6 else str(self.high)  # 1e12, not 1000000000000
        return f"integer {self.low} <= {name or self.name} <= {hi}"

    def problem(self, value: object) -> tuple[int | None, str | None]:
        if isinstance(value, bool):
            return None, "not an integer"
        if isinstance(value, str):
            try:
                k = parse_int_text(value)
            except ValueError as exc:
                return None, str(exc) if str(exc) in ("too long", "not a number") else "not an integer"
        elif isinstance(value, Integral):
            k = int(value)
        elif isinstance(value, Real) and math.isfinite(float(value)) and float(value).is_integer():
            k = int(float(value))
        else:
            return None, "not an integer"
        if not self.low <= k <= self.high:
            return None, "out of range"
        return k, None


def message(name: str, value: object, why: str, accepted: str) -> str:
    """The one-line message of every refusal: ``eps0: 800.0 is out of range (accepted: ...)``."""
    return f"{name}: {_show(value)} is {why} (accepted: {accepted})"


# ---------------------------------------------------------------------------------------
# The parameters of the core (one object each; plug-ins reuse them or make their own)
# ---------------------------------------------------------------------------------------

EPS0 = RealRange("eps0", 0.0, MAX_EPS0, low_open=True)
#: Target central epsilon of a delta question (0 allowed).
EPS = RealRange("eps", 0.0, MAX_EPS)
#: Target central epsilon of a planning question (strictly positive).
EPS_POSITIVE = RealRange("eps", 0.0, MAX_EPS, low_open=True)
DELTA = RealRange("delta", MIN_DELTA, 1.0, high_open=True)
DELTA0 = RealRange("delta0", 0.0, 1.0, high_open=True)
N = IntRange("n", 1, MAX_N)
K = IntRange("k", 2, MAX_K)
ROUNDS = IntRange("T", 1, MAX_ROUNDS)
#: Relative width of the certified bracket of epsilon / delta (``api.epsilon``, ``api.delta``).
RTOL = RealRange("rtol", 1e-12, 1e-2)
#: Relative resolution of the inverse solvers.
SOLVER_RTOL = RealRange("rtol", 1e-10, 1e-2)
#: Relative width of each Renyi bracket. Finer brackets do not finish in reasonable time
#: (measured: 40 orders at rtol 1e-5 take over a minute for n >= 1e6, at 1e-6 for n >= 1e4);
#: the upper bound is certified whatever the width.
RENYI_RTOL = RealRange("rtol", 1e-4, 0.5)
#: Relative tolerance of a regression check.
CHECK_RTOL = RealRange("rtol", 0.0, 1.0, high_open=True)
#: Privacy-loss grid of the PLD route.
DISCRETIZATION = RealRange("discretization", 1e-7, 0.1)
#: Renyi orders.
ORDER = RealRange("alpha", 1.0, 1e6, low_open=True)
#: Most Renyi orders in one request.
MAX_ORDERS = 1000
#: Worker processes.
JOBS = IntRange("jobs", 1, 256)


def check_eps0(value: object, name: str = "eps0") -> float:
    """A local epsilon, ``0 < eps0 <= 700``."""
    return EPS0.check(value, name)


def check_n(value: object, name: str = "n") -> int:
    """A number of users, ``1 <= n <= 1e12``."""
    return N.check(value, name)


def check_delta(value: object, name: str = "delta") -> float:
    """A target delta, ``1e-300 <= delta < 1``."""
    return DELTA.check(value, name)


def check_orders(values: object, name: str = "orders") -> tuple[float, ...]:
    """A non-empty list of at most :data:`MAX_ORDERS` Renyi orders ``1 < alpha <= 1e6``
    (given as numbers, or as a comma-separated string), sorted and without duplicates."""
    if isinstance(values, str):
        items: list[Any] = [s for s in values.replace(",", " ").split()]
        if len(values) > MAX_ORDERS * 40:
            raise InvalidParameter(f"{name}: too long (accepted: at most {MAX_ORDERS} orders, {ORDER.describe()})")
    else:
        try:
            items = list(values)  # type: ignore[call-overload]
        except TypeError:
            raise InvalidParameter(f"{name}: {_show(values)} is not a list of numbers "
                                   f"(accepted: {ORDER.describe()})") from None
    if not items:
        raise InvalidParameter(f"{name}: the list is empty (accepted: {ORDER.describe()}, comma-separated)")
    if len(items) > MAX_ORDERS:
        raise InvalidParameter(f"{name}: {len(items)} orders given (accepted: at most {MAX_ORDERS})")
    return tuple(sorted({ORDER.check(a, label=f"{name}: order") for a in items}))


# ---------------------------------------------------------------------------------------
# The general-purpose checks (kept for the plug-ins and the API)
# ---------------------------------------------------------------------------------------


def check_real(
    name: str,
    value: object,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    """Return ``value`` as a finite float inside the given interval, or raise."""
    return RealRange(name, low, high, low_open, high_open).check(value)


def check_positive(name: str, value: object) -> float:
    """A finite number > 0 (ε, σ, ...)."""
    return RealRange(name, 0.0, low_open=True).check(value)


def check_probability_open(name: str, value: object) -> float:
    """A probability such as δ: ``1e-300 <= value < 1`` (the delta floor :data:`MIN_DELTA`
    applies to every probability a user gives)."""
    return RealRange(name, MIN_DELTA, 1.0, high_open=True).check(value)


def check_int(name: str, value: object, *, low: int = 1, high: int = MAX_N) -> int:
    """An integer in ``[low, high]``; integral floats such as ``1e6`` are accepted."""
    return IntRange(name, low, high).check(value)


# ---------------------------------------------------------------------------------------
# The input record of an amplification question
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AmplificationQuery:
    """The inputs of one amplification-by-shuffling question, validated on construction.

    ``n`` reports of an ``(eps0, delta0)``-DP local randomizer (over an alphabet of size
    ``k`` for the k-RR analyses) are shuffled; ``delta`` is the target of an epsilon
    question, ``eps`` the target of a delta question (either or both may be absent).

    >>> AmplificationQuery(eps0=3, n=1e4, delta=1e-6).n
    10000
    """

    eps0: float
    n: int
    k: int | None = None
    delta0: float = 0.0
    delta: float | None = None
    eps: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "eps0", EPS0.check(self.eps0))
        object.__setattr__(self, "n", N.check(self.n))
        object.__setattr__(self, "delta0", DELTA0.check(self.delta0))
        if self.k is not None:
            object.__setattr__(self, "k", K.check(self.k))
        if self.delta is not None:
            object.__setattr__(self, "delta", DELTA.check(self.delta))
        if self.eps is not None:
            object.__setattr__(self, "eps", EPS.check(self.eps))

    def inputs(self) -> dict[str, Any]:
        """The given inputs as a record (``None`` and a zero ``delta0`` left out)."""
        d: dict[str, Any] = {"eps0": self.eps0, "n": self.n}
        for key in ("k", "delta", "eps"):
            if getattr(self, key) is not None:
                d[key] = getattr(self, key)
        if self.delta0:
            d["delta0"] = self.delta0
        return d
