"""Shared test helpers for the strided Renyi slabs (``renyi._StrideSlab``; slab107 .. slab111): forcing strides at
small ``n`` and recording the strided slabs a computation builds."""

from __future__ import annotations

import pytest

from shuffle_accountant.numeric import renyi as R


def force_strides(monkeypatch: pytest.MonkeyPatch, stride_min: int | None = None) -> None:
    """Strided slabs wherever a slab may be strided: no size limits, a coarse stride (``_STRIDE_THETA`` 60), and
    ``_STRIDE_MIN`` set to ``stride_min`` where given."""
    monkeypatch.setattr(R, "_STRIDE_MIN_ROWS", 16)
    monkeypatch.setattr(R, "_STRIDE_MIN_POINTS", 0.0)
    monkeypatch.setattr(R, "_STRIDE_THETA", 60.0)
    if stride_min is not None:
        monkeypatch.setattr(R, "_STRIDE_MIN", stride_min)


def record_strided_slabs(monkeypatch: pytest.MonkeyPatch) -> list:
    """A list that receives every :class:`renyi._StrideSlab` built from now on (its constructor spied on)."""
    built: list = []
    init = R._StrideSlab.__init__

    def spy(self, *args, **kw):
        init(self, *args, **kw)
        built.append(self)

    monkeypatch.setattr(R._StrideSlab, "__init__", spy)
    return built
