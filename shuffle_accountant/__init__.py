"""shuffle-accountant: certified privacy accounting for shuffle-model differential privacy."""

from ._version import __version__

__all__ = ["__version__"]
