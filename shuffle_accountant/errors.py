"""Exceptions shared by the API and the CLI.

The CLI maps :class:`InvalidParameter` to exit code 2 (bad usage) and
:class:`CertificationError` to exit code 1 (the computation could not be certified).
"""

from __future__ import annotations


class ShuffleAccountantError(Exception):
    """Base class of every error this package raises on purpose."""


class InvalidParameter(ShuffleAccountantError, ValueError):
    """An input is outside the range an analysis accepts.

    The message names the parameter, the accepted range and the offending value,
    so that it can be shown to a user as one line.
    """


class CertificationError(ShuffleAccountantError, ArithmeticError):
    """A bound could not be certified in floating point (or within the work limits).

    Raised instead of returning a number that might be wrong.
    """


class NotApplicable(ShuffleAccountantError):
    """A method does not apply to these inputs (e.g. a k-RR-only analysis asked about
    unary encoding). Reported as a ``not applicable`` row with this message, not as an error."""
