"""``to_dict`` for small frozen result records (nested records and mappings converted)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class RecordMixin:
    """Mix into a frozen dataclass: ``to_dict`` returns its fields, converting nested
    records (anything with ``to_dict``) and mappings."""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in self.__dict__.items():
            if hasattr(value, "to_dict"):
                value = value.to_dict()
            elif isinstance(value, Mapping):
                value = dict(value)
            out[key] = value
        return out


__all__ = ["RecordMixin"]
