"""Small frozen result records returned by every API function.

A :class:`Bound` is one labelled number: its value, whether it is a certified
``upper`` bound, an attained ``lower`` bound, an ``exact`` value, an ``estimate``,
or ``not applicable``, the method and citation behind it, the inputs, and warnings.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal, Mapping

from ._version import __version__

Kind = Literal["upper", "lower", "exact", "estimate", "not applicable", "check"]
KINDS: tuple[str, ...] = ("upper", "lower", "exact", "estimate", "not applicable", "check")


def _frozen(mapping: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(mapping or {}))


@dataclass(frozen=True)
class Bound:
    """One labelled number.

    Attributes:
        quantity: what the number is (``"epsilon"``, ``"delta"``, ``"rdp"``, ``"messages"``...).
        value: the number, or ``None`` when the method does not apply.
        kind: ``upper`` (certified), ``lower`` (attained by a concrete mechanism),
            ``exact``, ``estimate``, ``check`` (a numerical check, not a proof)
            or ``not applicable``.
        method: the analysis that produced it (see ``shuffle-acct methods``).
        citation: paper and theorem.
        inputs: the parameters it was computed for.
        validity: what the method assumes / when it applies.
        warnings: anything the user should know about this number.
        details: extra diagnostics (e.g. a certified bracket around the exact value).
    """

    quantity: str
    value: float | None
    kind: Kind
    method: str
    citation: str
    inputs: Mapping[str, Any] = field(default_factory=dict)
    validity: str = ""
    warnings: tuple[str, ...] = ()
    details: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")
        if self.value is None and self.kind != "not applicable":
            raise ValueError("a Bound without a value must have kind 'not applicable'")
        if self.value is not None and math.isnan(self.value):
            raise ValueError("a Bound value may not be NaN")
        object.__setattr__(self, "inputs", _frozen(self.inputs))
        object.__setattr__(self, "details", _frozen(self.details))
        object.__setattr__(self, "warnings", tuple(self.warnings))

    @property
    def applicable(self) -> bool:
        return self.kind != "not applicable"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dictionary (infinities are encoded by :mod:`.output`)."""
        return {
            "quantity": self.quantity,
            "value": self.value,
            "kind": self.kind,
            "method": self.method,
            "citation": self.citation,
            "validity": self.validity,
            "inputs": dict(self.inputs),
            "warnings": list(self.warnings),
            "details": dict(self.details),
            "version": __version__,
        }
