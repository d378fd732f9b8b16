"""Robust shuffle privacy plug-in (``shuffle-acct robust …``).

Exact accounting of distributed noise summed over the honest users only
(Balcer–Cheu–Joseph–Mao 2020, seed 000, Definition 2.9), with the published analytic
rules shown beside the exact solver.
"""

from .noise import LAWS, NoiseLaw, delta, dlap_delta, dlap_variance, honest_count, solve_noise

__all__ = ["LAWS", "NoiseLaw", "delta", "dlap_delta", "dlap_variance", "honest_count", "solve_noise"]
