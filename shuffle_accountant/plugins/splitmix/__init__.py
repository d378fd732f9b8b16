"""Split-and-mix plug-in: security of Ishai et al.'s secure summation and the cost of a
DP summation built on it (``shuffle-acct splitmix …``). Registers through the
entry-point group ``shuffle_accountant.plugins`` like any third-party plug-in.

The API mirrors the commands one to one:

* ``messages``  → :func:`messages_needed`
* ``security``  → :func:`security_bounds`
* ``exact``     → :func:`exact_bound` (and :func:`exact_distance`, :func:`mod2_exact_distance`)
* ``dp-sum``    → :func:`dp_sum_plan` (re-checked by :func:`check_dp_sum_plan`)
* ``dp-sum-solve`` → :func:`solve_dp_sum` (smallest n, least precision, fewest messages)

The names are loaded on first use (the command line's ``--help`` stays fast).
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__all__ = [
    "BBGN_CITATION",
    "GMPV_CITATION",
    "GMPV_FIELD_CITATION",
    "LOWER_CITATION",
    "WRAP_SHARE",
    "DPSumPlan",
    "DPSumSolution",
    "bbgn_messages",
    "bbgn_sigma",
    "check_dp_sum_plan",
    "check_modulus",
    "dp_sum_plan",
    "exact_bound",
    "exact_distance",
    "field_lower_bound_messages",
    "honest_parties",
    "log2_field_lower_bound_distance",
    "log2_lower_bound_distance",
    "lower_bound_distance",
    "lower_bound_messages",
    "messages_needed",
    "mod2_exact_distance",
    "nb_tail_upper",
    "security_bounds",
    "solve_dp_sum",
]
_DPSUM = ("DPSumPlan", "WRAP_SHARE", "check_dp_sum_plan", "dp_sum_plan", "nb_tail_upper")
_SOLVE = ("DPSumSolution", "solve_dp_sum")
_CORE = tuple(name for name in __all__ if name not in _DPSUM + _SOLVE)


def __getattr__(name: str) -> Any:
    if name in _CORE:
        return getattr(import_module(".core", __name__), name)
    if name in _DPSUM:
        return getattr(import_module(".dpsum", __name__), name)
    if name in _SOLVE:
        return getattr(import_module(".dpsum_solve", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
