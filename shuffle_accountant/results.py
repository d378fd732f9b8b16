"""Small frozen result records returned by every API function.

A :class:`Bound` is one labelled number: its value, whether it is a certified
``upper`` bound, an attained ``lower`` bound, an ``exact`` value, an ``estimate``,
``not applicable`` or ``not certified``, the method and citation behind it, the inputs,
warnings, and (where one is known) a certified bracket ``lower <= exact <= upper`` on the
exact value of the analysis (after prv_accountant's lower / estimate / upper triple).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from ._version import __version__

Kind = Literal["upper", "lower", "exact", "estimate", "not applicable", "not certified"]
KINDS: tuple[str, ...] = ("upper", "lower", "exact", "estimate", "not applicable", "not certified")
#: Kinds that carry no value (the reason is in ``validity``).
NO_VALUE_KINDS: tuple[str, ...] = ("not applicable", "not certified")


def _frozen(mapping: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(mapping or {}))


@dataclass(frozen=True)
class Bound:
    """One labelled number.

    Attributes:
        quantity: what the number is (``"epsilon"``, ``"delta"``, ``"rdp"``, ``"messages"``...).
        value: the number, or ``None`` when the method does not apply.
        kind: ``upper`` (certified), ``lower`` (attained by a concrete mechanism),
            ``exact``, ``estimate`` (not certified in either direction),
            ``not applicable`` (the method does not cover these inputs) or
            ``not certified`` (the computation could not certify a value).
        method: the analysis that produced it (see ``shuffle-acct methods``).
        citation: paper and theorem.
        inputs: the parameters it was computed for.
        validity: what the method assumes / when it applies.
        warnings: anything the user should know about this number.
        details: extra diagnostics.
        bracket: a certified ``(lower, upper)`` bracket on the exact value of the
            analysis, or ``None``. While ``details["bracket"]`` is still filled by older
            code, either one fills the other.
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
    bracket: tuple[float, float] | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")
        if self.value is None and self.kind not in NO_VALUE_KINDS:
            raise ValueError(f"a Bound without a value must have kind {' or '.join(map(repr, NO_VALUE_KINDS))}")
        if self.value is not None and math.isnan(self.value):
            raise ValueError("a Bound value may not be NaN")
        details = dict(self.details or {})
        bracket = self.bracket
        if bracket is None and details.get("bracket") is not None:
            bracket = details["bracket"]
        if bracket is not None:
            bracket = _check_bracket(bracket)
            details.setdefault("bracket", list(bracket))
        object.__setattr__(self, "bracket", bracket)
        object.__setattr__(self, "inputs", _frozen(self.inputs))
        object.__setattr__(self, "details", _frozen(details))
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
            "bracket": list(self.bracket) if self.bracket is not None else None,
            "version": __version__,
        }


def _check_bracket(bracket: Any) -> tuple[float, float]:
    """``(lower, upper)`` as floats, ``lower <= upper``, neither NaN; or ``ValueError``."""
    try:
        lo, up = (float(x) for x in bracket)
    except (TypeError, ValueError):
        raise ValueError(f"a bracket is a pair (lower, upper) of numbers, got {bracket!r}") from None
    if math.isnan(lo) or math.isnan(up) or lo > up:
        raise ValueError(f"a bracket needs lower <= upper (no NaN), got {bracket!r}")
    return (lo, up)


def warnings_by_method(bounds: Iterable[Bound]) -> list[str]:
    """Every warning of ``bounds`` once, naming the methods it comes from
    (``"clones, stronger-clones: delta is below 1e-300 ..."``)."""
    by_text: dict[str, list[str]] = {}
    for b in bounds:
        for w in b.warnings:
            text = w[len(b.method) + 2:] if w.startswith(f"{b.method}: ") else w
            methods = by_text.setdefault(text, [])
            if b.method not in methods:
                methods.append(b.method)
    return [f"{', '.join(methods)}: {text}" for text, methods in by_text.items()]
