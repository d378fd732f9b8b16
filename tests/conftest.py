"""Test configuration: tests marked ``slow`` run in full only with
``SHUFFLE_ACCT_FULL=1``; otherwise a fixed, deterministic sample of them runs (CI)."""

from __future__ import annotations

import os
import zlib

import pytest

#: Fraction of slow tests run by default (deterministic by test id).
SLOW_SAMPLE = 0.2


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get("SHUFFLE_ACCT_FULL") == "1":
        return
    skip = pytest.mark.skip(reason="slow: not in the CI sample (SHUFFLE_ACCT_FULL=1 runs all)")
    for item in items:
        if "slow" in item.keywords and zlib.crc32(item.nodeid.encode()) % 1000 >= SLOW_SAMPLE * 1000:
            item.add_marker(skip)
