"""click parameter types: thin adapters over the ranges of :mod:`..validation`.

A parameter's range and its wording exist once, in :mod:`..validation`; a click type only
turns the refusal into click's one-line usage error, which names the flag::

    Error: Invalid value for '--eps0': 800 is out of range (accepted: 0 < eps0 <= 700)

click's own ``FloatRange`` accepts ``nan``, ``inf`` and ``1e400``; these types do not.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from .. import validation as v
from ..output import FORMATS


def _flag_name(param: click.Parameter | None, default: str) -> str:
    """The name a range is described with: the option's own name (``eps0``, ``delta``)."""
    return (param.name if param is not None and param.name else default)


class RangeType(click.ParamType):
    """A click type checking a value against a :class:`~..validation.RealRange` or
    :class:`~..validation.IntRange`."""

    def __init__(self, spec: v.RealRange | v.IntRange) -> None:
        self.spec = spec
        self.name = "integer" if isinstance(spec, v.IntRange) else "float"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        x, why = self.spec.problem(value)
        if why is not None:
            shown = value if isinstance(value, str) else repr(value)
            if len(shown) > 40:
                shown = f"{shown[:20]}...({len(shown)} characters)"
            self.fail(f"{shown} is {why} (accepted: {self.spec.describe(_flag_name(param, 'x'))})", param, ctx)
        return x


class FiniteFloat(RangeType):
    """A finite float inside an (optionally open) interval."""

    def __init__(
        self,
        low: float | None = None,
        high: float | None = None,
        *,
        low_open: bool = False,
        high_open: bool = False,
    ) -> None:
        super().__init__(v.RealRange("x", low, high, low_open, high_open))


class IntLike(RangeType):
    """An integer in ``[low, high]``; accepts ``100000``, ``1e5`` and ``1_000``."""

    def __init__(self, low: int = 1, high: int = v.MAX_N) -> None:
        super().__init__(v.IntRange("x", low, high))


#: eps0: 0 < eps0 <= 700.
EPS0 = RangeType(v.EPS0)
#: A target epsilon of a delta question: 0 <= eps <= 700.
EPS = RangeType(v.EPS)
#: A target epsilon of a planning question: 0 < eps <= 700.
EPS_POSITIVE = RangeType(v.EPS_POSITIVE)
#: delta: 1e-300 <= delta < 1.
DELTA = RangeType(v.DELTA)
#: delta0: 0 <= delta0 < 1.
DELTA0 = RangeType(v.DELTA0)
#: Number of users, 1 ... 10^12.
USERS = RangeType(v.N)
#: Alphabet size, 2 ... 10^9.
ALPHABET = RangeType(v.K)
#: Number of composed rounds, 1 ... 10^9.
ROUNDS = RangeType(v.ROUNDS)
#: Worker processes.
JOBS = RangeType(v.JOBS)

#: Any finite, strictly positive number (plug-ins: sigma, eps, ...).
POSITIVE = FiniteFloat(0.0, low_open=True)
#: A probability such as delta: 1e-300 <= p < 1 (the delta floor applies to every probability).
PROBABILITY = FiniteFloat(v.MIN_DELTA, 1.0, high_open=True)


def format_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--format text|json|csv|markdown`` (default ``text``)."""
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(FORMATS),
        default="text",
        show_default=True,
        help="Output format. JSON is the shuffle-acct envelope (tool, version, schema_version, command, "
             "inputs, results, warnings, notes), validated by the schema shipped in shuffle_accountant/schema.",
    )(func)
