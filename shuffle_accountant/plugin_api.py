"""The stable surface a ``shuffle-acct`` plug-in builds on (see ``docs/plugins.md``).

A plug-in is a :class:`click.Group` registered under the entry-point group
:data:`PLUGIN_GROUP` (``shuffle_accountant.plugins``). It should import from this module
only (plus its own package, numpy, scipy, mpmath): the names below keep their meaning
across releases, while the rest of the package may be reorganised.

What is here:

* records and errors: :class:`Bound` (one labelled number: ``upper`` / ``lower`` /
  ``exact`` / ``estimate`` / ``not applicable`` / ``not certified``), :class:`InvalidParameter`
  (bad input, exit 2), :class:`CertificationError` (valid input that cannot be certified,
  exit 1);
* validation: :class:`RealRange` / :class:`IntRange` (a parameter's range and its one-line
  refusal, used both by the API and by the click types), the ready-made ranges
  :data:`EPSILON`, :data:`EPSILON_OR_ZERO`, :data:`DELTA`, :data:`USERS_RANGE`, and the
  helpers :func:`check_real`, :func:`check_int`, :func:`check_positive`,
  :func:`check_probability_open`;
* the command line: the click parameter types (:class:`RangeType`, :class:`FiniteFloat`,
  :class:`IntLike`, :data:`EPS`, :data:`EPS_POSITIVE`, :data:`DELTA_TYPE`, :data:`USERS`,
  :data:`POSITIVE`, :data:`PROBABILITY`), :func:`format_option` and :func:`emit`;
* output: :class:`Report`, :class:`Column`, :func:`render`, :func:`round_directed`,
  :data:`FORMATS`;
* floating point: the policy module :mod:`fp` (unit roundoff, directed rounding, the
  measured error budgets of the Boost binomial, Poisson and negative-binomial functions)
  and :func:`round_directed` for printing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from . import validation as _v
from .cli.params import (
    DELTA as DELTA_TYPE,
)
from .cli.params import (
    EPS,
    EPS_POSITIVE,
    POSITIVE,
    PROBABILITY,
    USERS,
    FiniteFloat,
    IntLike,
    RangeType,
    format_option,
)
from .errors import CertificationError, InvalidParameter, ShuffleAccountantError
from .numeric import fp
from .output import FORMATS, Column, Report, render, round_directed
from .results import KINDS, Bound
from .validation import (
    MAX_EPS,
    MAX_N,
    MIN_DELTA,
    IntRange,
    RealRange,
    check_int,
    check_positive,
    check_probability_open,
    check_real,
)

#: The entry-point group plug-ins register under (``pyproject.toml``:
#: ``[project.entry-points."shuffle_accountant.plugins"]``).
PLUGIN_GROUP = "shuffle_accountant.plugins"

#: A target epsilon, ``0 < eps <= 700`` (``e^eps`` stays finite).
EPSILON: RealRange = _v.EPS_POSITIVE
#: An epsilon at which a delta is evaluated, ``0 <= eps <= 700``.
EPSILON_OR_ZERO: RealRange = _v.EPS
#: A target delta, ``1e-300 <= delta < 1``.
DELTA: RealRange = _v.DELTA
#: A number of users, ``1 <= n <= 1e12``.
USERS_RANGE: IntRange = _v.N


if TYPE_CHECKING:  # exported lazily at run time, see __getattr__
    from .numeric.search import Boundary, NoBracket, monotone_boundary

#: Exported lazily (:func:`__getattr__`): the certified search of the numeric core, which
#: imports numpy; ``shuffle-acct --help`` and plug-in help screens must not.
_LAZY_SEARCH = ("Boundary", "NoBracket", "monotone_boundary")


def __getattr__(name: str) -> object:
    """``Boundary``, ``NoBracket`` and ``monotone_boundary`` of
    :mod:`shuffle_accountant.numeric.search`, imported on first use."""
    if name in _LAZY_SEARCH:
        from .numeric import search

        return getattr(search, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def emit(report: Report, fmt: str) -> None:
    """Print ``report`` in ``fmt`` (one of :data:`FORMATS`) on stdout."""
    click.echo(render(report, fmt), nl=False)


__all__ = [
    "DELTA",
    "DELTA_TYPE",
    "EPS",
    "EPSILON",
    "EPSILON_OR_ZERO",
    "EPS_POSITIVE",
    "FORMATS",
    "KINDS",
    "MAX_EPS",
    "MAX_N",
    "MIN_DELTA",
    "PLUGIN_GROUP",
    "POSITIVE",
    "PROBABILITY",
    "USERS",
    "USERS_RANGE",
    "Bound",
    "Boundary",
    "CertificationError",
    "Column",
    "FiniteFloat",
    "IntLike",
    "IntRange",
    "InvalidParameter",
    "NoBracket",
    "RangeType",
    "RealRange",
    "Report",
    "ShuffleAccountantError",
    "check_int",
    "check_positive",
    "check_probability_open",
    "check_real",
    "emit",
    "format_option",
    "fp",
    "monotone_boundary",
    "render",
    "round_directed",
]
