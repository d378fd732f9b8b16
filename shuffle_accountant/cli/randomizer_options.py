"""``--randomizer NAME`` (with ``--k``, ``--g``, ``--d``) and ``--randomizer-file F``: the
randomizer a user actually deploys, for the mechanism-aware analyses (``blanket``,
``dataset-lower``). One set of options and one builder, shared by every command that takes
them; the randomizers themselves are :mod:`shuffle_accountant.randomizers`.
"""

from __future__ import annotations

from typing import Any, Callable

import click

from .. import validation as v
from ..randomizers import Randomizer, load_matrix, make_randomizer, registry
from .params import RangeType

_NAMES = ", ".join(f"{name} ({spec.summary})" for name, spec in registry.items())


def randomizer_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Add ``--randomizer``, ``--g``, ``--d`` and ``--randomizer-file`` (``--k`` is shared with
    the k-RR methods and added by the command)."""
    options = [
        click.option("--randomizer", "randomizer_name", type=click.Choice(sorted(registry)), default=None,
                     help=f"The local randomizer deployed, specified by --eps0 and its parameters: {_NAMES}. "
                     "Adds the mechanism-aware rows 'blanket' (upper) and 'dataset-lower' (attained)."),
        click.option("--g", "g", type=RangeType(v.K), default=None,
                     help="Hash range of --randomizer olh (default round(e^eps0 + 1))."),
        click.option("--d", "d", type=RangeType(v.K), default=None,
                     help="Subset size of --randomizer subset (default ceil(k / (e^eps0 + 1)))."),
        click.option("--randomizer-file", "randomizer_file", type=click.Path(dir_okay=False), default=None,
                     help="Any finite randomizer as a matrix (rows = inputs, columns = outputs, each row a "
                     "probability vector), CSV or JSON; validated on load, its eps0 computed (omit --eps0)."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def build_randomizer(eps0: float | None, k: int | None, randomizer_name: str | None, g: int | None,
                     d: int | None, randomizer_file: str | None) -> tuple[Randomizer | None, float]:
    """The randomizer the options describe (or ``None``) and the eps0 to analyse.

    Refuses contradictory or incomplete combinations with a one-line usage error."""
    if randomizer_name and randomizer_file:
        raise click.UsageError("give either --randomizer or --randomizer-file, not both")
    if (g is not None or d is not None) and not randomizer_name:
        raise click.UsageError("--g and --d are parameters of --randomizer olh / subset")
    if randomizer_file:
        r: Randomizer = load_matrix(randomizer_file)
        if eps0 is not None and abs(eps0 - r.eps0) > 1e-9 * r.eps0:
            raise click.UsageError(
                f"--eps0 {eps0:g} differs from the eps0 of {randomizer_file} ({r.eps0:.12g}); omit --eps0")
        return r, r.eps0
    if eps0 is None:
        raise click.UsageError("Missing option '--eps0' (required unless --randomizer-file is given).")
    if not randomizer_name:
        return None, eps0
    params = {"k": k, "g": g, "d": d}
    return make_randomizer(randomizer_name, eps0, **params), eps0
