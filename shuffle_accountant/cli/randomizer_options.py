"""``--randomizer NAME`` (with ``--k``, ``--g``, ``--d``) and ``--randomizer-file F``: the
randomizer a user actually deploys, for the mechanism-aware analyses (``blanket``,
``dataset-lower``). One set of options and one builder, shared by every command that takes
them; the randomizers themselves are :mod:`shuffle_accountant.randomizers`.
"""

from __future__ import annotations

from typing import Any, Callable

import click

from .. import validation as v
from ..errors import InvalidParameter
from ..randomizers import D_RANGE, Randomizer, RandomizerFamily, load_matrix, registry
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
        click.option("--d", "d", type=RangeType(D_RANGE), default=None,
                     help="Subset size of --randomizer subset (default ceil(k / (e^eps0 + 1)))."),
        click.option("--randomizer-file", "randomizer_file", type=click.Path(dir_okay=False), default=None,
                     help="Any finite randomizer as a matrix (rows = inputs, columns = outputs, each row a "
                     "probability vector), CSV or JSON; validated on load, its eps0 computed (omit --eps0)."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def build_family(k: int | None, randomizer_name: str | None, g: int | None, d: int | None,
                 randomizer_file: str | None) -> RandomizerFamily | None:
    """The randomizer family the options describe (``None`` without ``--randomizer`` or
    ``--randomizer-file``), for commands that vary eps0 (solve eps0, table, plot).

    Refuses contradictory or incomplete combinations with a one-line usage error."""
    if randomizer_name and randomizer_file:
        raise click.UsageError("give either --randomizer or --randomizer-file, not both")
    if (g is not None or d is not None) and not randomizer_name:
        raise click.UsageError("--g and --d are parameters of --randomizer olh / subset")
    if randomizer_file:
        matrix = load_matrix(randomizer_file)
        if not 0.0 < matrix.eps0 <= v.MAX_EPS0:  # (named here: the user gave no eps0; review rev94m)
            why = "its rows are all equal: nothing to amplify" if matrix.eps0 == 0.0 else f"more than {v.MAX_EPS0:g}"
            raise InvalidParameter(f"randomizer file {randomizer_file}: its eps0 = {matrix.eps0:.6g} ({why})")
        return RandomizerFamily.of(matrix)
    if not randomizer_name:
        return None
    return RandomizerFamily.named(randomizer_name, k=k, g=g, d=d)


def build_randomizer(eps0: float | None, k: int | None, randomizer_name: str | None, g: int | None,
                     d: int | None, randomizer_file: str | None) -> tuple[Randomizer | None, float]:
    """The randomizer the options describe (or ``None``) and the eps0 to analyse (a matrix
    file's own eps0 when ``--eps0`` is omitted).

    Refuses contradictory or incomplete combinations with a one-line usage error."""
    family = build_family(k, randomizer_name, g, d, randomizer_file)
    fixed = None if family is None else family.fixed_eps0
    if fixed is not None:
        if eps0 is not None and abs(eps0 - fixed) > 1e-9 * fixed:
            raise click.UsageError(
                f"--eps0 {eps0:g} differs from the eps0 of {randomizer_file} ({fixed:.12g}); omit --eps0")
        eps0 = fixed
    if eps0 is None:
        raise click.UsageError("Missing option '--eps0' (required unless --randomizer-file is given).")
    return (None if family is None else family.at(eps0)), eps0
