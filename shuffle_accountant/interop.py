"""Hand a shuffled round to Google's ``dp_accounting`` (optional extra:
``pip install 'shuffle-accountant[pld]'``), so that it composes with other mechanisms.

* :func:`shuffled_round_pld`: the round's privacy-loss distribution as a
  ``dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution``. It is
  *pessimistic*: it dominates the analysis' clone pair in both orders (proof and sources
  in :mod:`.pld`: certified ``delta(eps)`` upper bounds fed to the pessimistic
  Connect-the-Dots discretisation of Doroshenko et al., PETS 2022, arXiv 2207.04380,
  Algorithm 1; composition of dominating pairs, Zhu, Dong, Wang, AISTATS 2022, Theorem 10).
  Compose it with PLDs of other mechanisms built with the same
  ``value_discretization_interval`` (``pld.compose(other)``, ``pld.self_compose(T)``),
  then ``get_epsilon_for_delta`` / ``get_delta_for_epsilon``.
* :func:`shuffled_round_rdp`: the round's certified RDP curve as ``(orders, rdp)``, the
  shape ``dp_accounting.rdp.rdp_privacy_accountant.compute_epsilon(orders, rdp, delta)``
  takes; add ``T *`` it to other mechanisms' RDP on the same orders (Mironov, CSF 2017,
  Proposition 1).

What the numbers are: each round's object is an upper bound (every value certified, or
dominating) for the chosen analysis; ``dp_accounting`` then composes in plain floating
point (its FFT convolution is not certified; ``shuffle-acct compose`` charges a margin for
it, see :func:`.pld.composed_epsilon`).
"""

from __future__ import annotations

from typing import Any, Iterable

from .composition import rdp_curve
from .pld import DEFAULT_DISCRETIZATION, DEFAULT_TAIL, PLD_INSTALL, PldUnavailable, round_pld

__all__ = ["shuffled_round_pld", "shuffled_round_rdp", "PldUnavailable", "PLD_INSTALL"]


def shuffled_round_pld(
    eps0: float,
    n: int,
    method: str = "clones",
    k: int | None = None,
    discretization: float = DEFAULT_DISCRETIZATION,
    tail: float = DEFAULT_TAIL,
) -> Any:
    """Pessimistic ``dp_accounting`` ``PrivacyLossDistribution`` of one shuffled round:
    ``n`` reports of an ``eps0``-DP local randomizer, analysed by ``method`` (an
    upper-bound clone-pair analysis: ``clones``, ``stronger-clones`` or ``krr`` with ``k``).

    ``discretization`` is the privacy-loss grid (must equal the other PLDs' to compose);
    the grid stops where the certified ``delta`` is below ``tail`` and the rest is put at
    ``+inf``. Raises :class:`PldUnavailable` (an ``ImportError`` whose message has the
    install line) when ``dp_accounting`` is missing.

    Example::

        from dp_accounting.pld import privacy_loss_distribution as plm
        round_ = shuffled_round_pld(eps0=1.0, n=100_000)
        gauss = plm.from_gaussian_mechanism(20.0, value_discretization_interval=1e-4)
        total = round_.self_compose(100).compose(gauss.self_compose(100))
        total.get_epsilon_for_delta(1e-6)
    """
    return round_pld(eps0, n, method, k, discretization, tail).pld


def shuffled_round_rdp(
    eps0: float,
    n: int,
    method: str = "clones",
    k: int | None = None,
    orders: Iterable[float] | None = None,
    rtol: float = 1e-3,
) -> tuple[list[float], list[float]]:
    """Certified RDP curve of one shuffled round as ``(orders, rdp)`` (upper bounds, max of
    both directions), in the shape ``dp_accounting``'s RDP ``compute_epsilon`` takes.
    Same as ``composition.rdp_curve(...).as_dp_accounting()``."""
    return rdp_curve(eps0, n, method, k, orders, rtol).as_dp_accounting()
