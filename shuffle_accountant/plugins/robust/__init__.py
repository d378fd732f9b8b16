"""Robust shuffle privacy plug-in (``shuffle-acct robust …``).

Exact accounting of distributed noise summed over the honest users only (Balcer, Cheu,
Joseph, Mao, "Connecting robust shuffle privacy and pan-privacy", SODA 2021, arXiv
2004.09481, Definition 2.9), with the published analytic rules shown beside the exact
solver. The names below are loaded on first use, so that the command line's ``--help``
does not import scipy.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__all__ = ["LAWS", "NoiseLaw", "delta", "dlap_delta", "dlap_variance", "honest_count", "solve_noise"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(import_module(".noise", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
