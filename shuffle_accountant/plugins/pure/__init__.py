"""Pure-DP shuffle counting plug-in (``shuffle-acct pure …``), seed 004 (Ghazi–Kumar–Manurangsi)."""

from .count import PureParams, optimise, theorem6, verify

__all__ = ["PureParams", "optimise", "theorem6", "verify"]
