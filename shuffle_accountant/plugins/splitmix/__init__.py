"""Split-and-mix plug-in: security of Ishai et al.'s secure summation and the cost of a
DP summation built on it (``shuffle-acct splitmix …``). Registers through the
entry-point group ``shuffle_accountant.plugins`` like any third-party plug-in.

The API mirrors the commands one to one:

* ``messages``  → :func:`messages_needed`
* ``security``  → :func:`security_bounds`
* ``exact``     → :func:`exact_bound` (and :func:`exact_distance`, :func:`mod2_exact_distance`)
* ``dp-sum``    → :func:`dp_sum_plan` (re-checked by :func:`check_dp_sum_plan`)
"""

from . import core, dpsum
from .core import *  # noqa: F403  (the public names of core.__all__)
from .dpsum import *  # noqa: F403

__all__ = [*core.__all__, *dpsum.__all__]
