"""The package's certified monotone search (:func:`shuffle_accountant.numeric.search.monotone_boundary`)
for the pure plug-in's inverse questions.

Plug-ins import only :mod:`shuffle_accountant.plugin_api`, which does not (yet) export the
search; until it does, the search module is looked up by name here, in this one place
(a request to export ``monotone_boundary``, ``Boundary`` and ``NoBracket`` from
``plugin_api`` is recorded with the lead)."""

from __future__ import annotations

from importlib import import_module
from typing import Any

import shuffle_accountant.plugin_api as _api

_search: Any = _api if hasattr(_api, "monotone_boundary") else import_module("shuffle_accountant.numeric.search")

monotone_boundary = _search.monotone_boundary
NoBracket: type[Exception] = _search.NoBracket

__all__ = ["NoBracket", "monotone_boundary"]
