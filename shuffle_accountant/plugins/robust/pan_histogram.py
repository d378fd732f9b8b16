"""Pan-private histograms and the robust-shuffle -> pan-private conversions.

Balcer, Cheu, Joseph, Mao, "Connecting Robust Shuffle Privacy and Pan-Privacy" (SODA 2021,
arXiv 2004.09481):

* Theorem 5.1 / Algorithm 7 (the counter): binomial noise ``Z₁ ~ Bin(N, p)`` enters the
  state before the stream, ``Z₂ ~ Bin(N, p)`` is added before the output; the release is
  ``count + Z₁ + Z₂ − 2Np``. "Because binomial noise is bounded, we can always bound the
  final error": the error lies in ``[−2Np, 2N(1 − p)]`` for every stream (exact worst case).
* Theorem 5.2 (the histogram): one counter per domain element. One stream element moves at
  most two counters, so each view is the *composition* of two counters' noise, computed
  exactly here (:func:`.structures.two_counter_delta`), not a factor-two rule. The error
  bound of each counter holds for the whole histogram at once (independent of ``k`` and of
  the stream length). The paper's own ``N`` (Lemma 2.4's binomial mechanism) was lost in
  the text conversion: ``N`` is solved exactly instead (the least ``N`` at the given ``p``).
* Lemma 3.7 (distinct elements) and Lemma 4.9 (uniformity testing), read from their proofs
  (the statements' symbols were lost): the pan-private algorithm keeps the shuffle
  protocol's messages as its state, made of ``m`` dummy executions before the stream, the
  ``m`` stream elements, and ``m`` dummy executions after it (``n = 3m``). The state at any
  intrusion contains the first ``m`` honest executions and the output adds the last ``m``,
  so an ``(ε, δ, 1/3)``-robustly shuffle private protocol gives an ``(ε, δ)``-pan-private
  algorithm. Distinct elements: the dummies all hold one element, so the count moves by at
  most 1. Uniformity: the dummies are uniform samples, diluting the distance (computed by
  :mod:`.uniformity` with the exact two-type statistic).

Views of the pan-private histogram (derived from Definition 2.6, as in the proof of Lemma 3.7):
the differing element arrives before the intrusion (the state shows it through ``Z₁`` of two
counters; the output given the state is a post-processing) or after it (the state is equal,
the output shows it through ``Z₂``). Pan-privacy is the worse of the two.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ...plugin_api import DELTA, EPSILON, CertificationError, IntRange, InvalidParameter, check_real
from .._shared.records import RecordMixin
from . import structures
from .noise import NoiseLaw, delta, least_feasible

CITATION = "Balcer, Cheu, Joseph, Mao, SODA 2021 (arXiv 2004.09481)"
#: Trials of each noise draw: ``1 <= N <= 1e12``.
TRIALS = IntRange("trials", 1, 10**12)
#: Stream length of the conversions (``n = 3m`` executions, at most 1e12).
STREAM = IntRange("m", 1, 10**12 // 3)


@dataclass(frozen=True)
class PanHistogramResult(RecordMixin):
    """Privacy of each view and the error of the pan-private histogram."""

    k: int
    eps: float
    trials: int
    p: float
    state_delta: float  # intrusion: Z1 of two counters, composed
    increment_delta: float  # element after the intrusion: Z2 of two counters, composed
    output_delta: float  # the output alone: Z1 + Z2 of two counters, composed
    pan_delta: float  # worse of state and increment
    pan_delta_lower: float
    counter_pan_delta: float  # one counter (Theorem 5.1), for comparison
    worst_error: float  # every stream, every bin: |error| <= this (attained)
    linf_expected: float  # E max_j |error_j| over k bins (upper)
    rmse_per_bin: float
    details: Mapping[str, Any] = field(default_factory=dict)


def _two(law: NoiseLaw, eps: float) -> tuple[float, float]:
    return structures.two_counter_delta(law, eps)


def least_trials(eps: float, target: float, p: float) -> tuple[int, int]:
    """Least ``N`` with the two-counter ``δ(ε)`` of ``Bin(N, p)`` at most ``target`` (certified
    integer search over the exact composition, re-verified), and ``N − 1`` (violating)."""

    def ok(x: float) -> bool:
        return _two(NoiseLaw("binomial", size=float(int(x)), p=p), eps)[0] <= target

    if ok(1):
        return 1, 0
    hi = 2
    while not ok(hi):
        if hi >= 10**12:
            raise CertificationError(f"no N <= 1e12 trials at p = {p:g} reach delta {target:g} at eps {eps:g}")
        hi = min(10**12, hi * 4)
    n_ok, n_bad = least_feasible(ok, max(1, hi // 4), hi, integer=True)
    if not ok(n_ok) or ok(n_bad):
        raise CertificationError("internal check failed: the trial search is not certified at its ends")
    return int(n_ok), int(n_bad)


def pan_histogram(k: int, eps: float, target: float | None = None, *, p: float = 0.5,
                  trials: int | None = None) -> PanHistogramResult:
    """The pan-private histogram (Theorem 5.2) with ``Z₁, Z₂ ~ Bin(N, p)`` per bin.

    With ``trials`` omitted, ``N`` is the least number of trials whose two-counter
    composition meets ``(ε, target)``; otherwise the given ``N`` is analysed."""
    k = structures.DOMAIN.check(k)
    eps = EPSILON.check(eps, "eps")
    p = check_real("p", p, low=0.0, high=1.0, low_open=True, high_open=True)
    extra: dict[str, Any] = {}
    if trials is None:
        if target is None:
            raise InvalidParameter("give either --delta (to solve the trials N) or --trials (to analyse them)")
        target = DELTA.check(target, "delta")
        n_ok, n_bad = least_trials(eps, target, p)
        trials = n_ok
        less = _two(NoiseLaw("binomial", size=float(n_bad), p=p), eps) if n_bad else (None, None)
        extra = {"solved_trials": n_ok, "one_less_trials": n_bad, "one_less_delta": less[0],
                 "one_less_delta_lower": less[1]}
    else:
        trials = TRIALS.check(trials, "trials")
    law = NoiseLaw("binomial", size=float(trials), p=p)
    state_up, state_lo = _two(law, eps)
    if 2 * trials <= 10**12:
        out_up = _two(NoiseLaw("binomial", size=float(2 * trials), p=p), eps)[0]
    else:  # beyond the measured range: the output alone is a post-processing of the Z2 view
        out_up = state_up
    counter = delta(law, eps).upper
    worst = 2.0 * trials * max(p, 1.0 - p)
    linf = min(worst, structures.expected_max_deviation(NoiseLaw("binomial", size=float(2 * trials), p=p), k))
    rmse = math.sqrt(2.0 * trials * p * (1.0 - p))
    return PanHistogramResult(k, eps, trials, p, state_up, state_up, out_up, state_up, state_lo, counter, worst, linf,
                              rmse, {"target_delta": target, **extra})


# ---------------------------------------------------------------------------------
# Lemma 3.7: distinct elements
# ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class DistinctConversion(RecordMixin):
    """The pan-private distinct-elements algorithm built from the robust shuffle protocol."""

    m: int  # stream length
    executions: int  # n = 3m
    k: int
    eps: float
    pan_delta: float  # (eps, delta)-pan-private, delta = the protocol's total delta at gamma = 1/3
    protocol_rmse: float  # robust protocol on its 3m inputs (all honest), upper
    pan_rmse: float  # + 1 for the dummy element
    messages_in_state: int
    details: Mapping[str, Any] = field(default_factory=dict)


def convert_distinct(m: int, k: int, eps: float, target: float, *, sigma: float | None = None) -> DistinctConversion:
    """Lemma 3.7: an ``(ε, δ, 1/3)``-robust distinct-elements protocol on ``3m`` inputs
    (:func:`.structures.distinct_elements`) run as a pan-private algorithm on a stream of
    ``m``: ``(ε, δ)``-pan-private, error at most the protocol's plus 1 (RMSE by Minkowski)."""
    m = STREAM.check(m, "m")
    r = structures.distinct_elements(3 * m, k, eps, target, gamma=1.0 / 3.0, sigma=sigma)
    if r.honest > m:
        raise CertificationError(f"internal check failed: ceil(n/3) = {r.honest} exceeds the {m} dummy executions")
    return DistinctConversion(m, 3 * m, r.k, r.eps, r.total_delta, r.rmse_upper, r.rmse_upper + 1.0,
                              3 * m * r.messages_per_user,
                              {"protocol": r.to_dict(), "honest_in_state": r.honest})
