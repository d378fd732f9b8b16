"""Pure-DP shuffle counting plug-in (``shuffle-acct pure …``): the protocol of Ghazi, Kumar,
Manurangsi, "Pure-DP aggregation in the shuffle model: error-optimal and
communication-efficient" (Condition 7, Theorem 6, Lemmas 8, 11, 12). The names below are
loaded on first use (the command line's ``--help`` stays fast)."""

from __future__ import annotations

from importlib import import_module
from typing import Any

__all__ = ["PureParams", "optimise", "theorem6", "verify"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(import_module(".count", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
