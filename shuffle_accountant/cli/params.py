"""click parameter types and shared options.

click's own ``FloatRange`` accepts ``nan``, ``inf`` and ``1e400``; these types reject
non-finite values and name the accepted range in their one-line error.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import click

from ..output import FORMATS
from ..validation import MAX_N


class FiniteFloat(click.ParamType):
    """A finite float inside an (optionally open) interval."""

    name = "float"

    def __init__(
        self,
        low: float | None = None,
        high: float | None = None,
        *,
        low_open: bool = False,
        high_open: bool = False,
    ) -> None:
        self.low, self.high, self.low_open, self.high_open = low, high, low_open, high_open

    def _range(self) -> str:
        lo = "" if self.low is None else f"{self.low:g} {'<' if self.low_open else '<='} "
        hi = "" if self.high is None else f" {'<' if self.high_open else '<='} {self.high:g}"
        return f"{lo}x{hi}" if (lo or hi) else "a finite number"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        if isinstance(value, float) and math.isfinite(value):
            x = value
        else:
            try:
                x = float(value)
            except (TypeError, ValueError):
                self.fail(f"{value!r} is not a number (accepted: {self._range()})", param, ctx)
        if not math.isfinite(x):
            self.fail(f"{value!r} is not finite (accepted: {self._range()})", param, ctx)
        if self.low is not None and (x < self.low or (self.low_open and x == self.low)):
            self.fail(f"{value} is out of range (accepted: {self._range()})", param, ctx)
        if self.high is not None and (x > self.high or (self.high_open and x == self.high)):
            self.fail(f"{value} is out of range (accepted: {self._range()})", param, ctx)
        return x


class IntLike(click.ParamType):
    """An integer in ``[low, high]``; accepts ``100000``, ``1e5`` and ``10**5``-free forms like ``1_000``."""

    name = "integer"

    def __init__(self, low: int = 1, high: int = MAX_N) -> None:
        self.low, self.high = low, high

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int) and not isinstance(value, bool):
            k = value
        else:
            text = str(value).strip().replace("_", "")
            try:
                k = int(text)
            except ValueError:
                try:
                    x = float(text)
                except ValueError:
                    self.fail(f"{value!r} is not an integer (accepted: {self.low} <= x <= {self.high:g})", param, ctx)
                if not (math.isfinite(x) and x.is_integer()):
                    self.fail(f"{value!r} is not an integer (accepted: {self.low} <= x <= {self.high:g})", param, ctx)
                k = int(x)
        if not self.low <= k <= self.high:
            self.fail(f"{value} is out of range (accepted: {self.low} <= x <= {self.high:g})", param, ctx)
        return k


#: ε, ε0, σ...: finite and strictly positive.
POSITIVE = FiniteFloat(0.0, low_open=True)
#: δ and other probabilities in the open interval (0, 1).
PROBABILITY = FiniteFloat(0.0, 1.0, low_open=True, high_open=True)
#: Number of users, 1 ... 10^12.
USERS = IntLike(1, MAX_N)


def format_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--format text|json|csv|markdown`` (default ``text``)."""
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(FORMATS),
        default="text",
        show_default=True,
        help="Output format. JSON records carry method, citation, kind, inputs, warnings and version.",
    )(func)
