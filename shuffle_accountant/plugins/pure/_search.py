"""The package's certified monotone search (:func:`shuffle_accountant.plugin_api.monotone_boundary`,
the core's :mod:`shuffle_accountant.numeric.search`) for the pure plug-in's inverse questions."""

from __future__ import annotations

from ...plugin_api import NoBracket, monotone_boundary

__all__ = ["NoBracket", "monotone_boundary"]
