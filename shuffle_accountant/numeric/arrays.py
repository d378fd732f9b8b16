"""Small array helpers shared by the numeric modules (no numerics of their own)."""

from __future__ import annotations

import numpy as np


def ragged(starts: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Concatenation of ``arange(starts[i], starts[i] + counts[i])``: (owner index, value). Negative counts
    count as 0."""
    counts = np.maximum(counts, 0).astype(np.int64)
    owner = np.repeat(np.arange(starts.size), counts)
    offs = np.arange(owner.size) - np.repeat(np.cumsum(counts) - counts, counts)
    return owner, np.repeat(starts, counts) + offs
