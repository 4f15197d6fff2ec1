"""Outcome: one test's result on one device in one phase, shared by the validator and the matrix.

A comparison pairs the ``before`` and ``after`` outcome of the same test on the same device and
names the change: a *regression* (pass -> anything else), a *gain* (anything else -> pass) or
*unchanged*. A test missing from a phase is ``absent`` there, so a patch that makes a test vanish
is a regression, not silence.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any, Iterable

# "refused": the device's dtype policy declined the input (the matrix only; a pytest run has none)
STATUSES = ("pass", "fail", "error", "refused", "skip", "xfail", "absent")
PHASES = ("before", "after")
CHANGES = ("regression", "gain", "unchanged")


@dataclass(frozen=True)
class Outcome:
    """The result of one test id on one device in one phase (``before``/``after``)."""

    test: str  # "module.Class::test_name" as pytest's JUnit XML names it
    device: str  # "cpu", "trn", "cuda", ...
    phase: str  # "before" | "after" (the matrix uses "after")
    status: str  # one of STATUSES
    duration: float = 0.0  # seconds
    message: str = ""  # first line of the failure/skip reason

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"unknown status {self.status!r} (expected one of {STATUSES})")
        if self.phase not in PHASES:
            raise ValueError(f"unknown phase {self.phase!r} (expected one of {PHASES})")

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["duration"] = round(self.duration, 4)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Outcome":
        return cls(
            d["test"],
            d["device"],
            d["phase"],
            d["status"],
            float(d.get("duration", 0.0)),
            d.get("message", ""),
        )


@dataclass(frozen=True)
class Comparison:
    """Before vs after for one test on one device."""

    test: str
    device: str
    before: str
    after: str
    change: str  # one of CHANGES
    message: str = ""  # the after-phase message (why it no longer passes, for regressions)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def classify(before: str, after: str) -> str:
    if before == "pass" and after != "pass":
        return "regression"
    if before != "pass" and after == "pass":
        return "gain"
    return "unchanged"


def compare(outcomes: Iterable[Outcome]) -> list[Comparison]:
    """Pair before/after outcomes per (device, test); a side with no outcome is ``absent``."""
    table: dict[tuple[str, str], dict[str, Outcome]] = {}
    for o in outcomes:
        table.setdefault((o.device, o.test), {})[o.phase] = o
    out = []
    for (device, test), phases in sorted(table.items()):
        b, a = phases.get("before"), phases.get("after")
        bs = b.status if b else "absent"
        as_ = a.status if a else "absent"
        out.append(Comparison(test, device, bs, as_, classify(bs, as_), a.message if a else ""))
    return out


# Device-type tests are instantiated per device: TestFooCPU::test_x_cpu, TestFooPRIVATEUSE1::
# test_x_privateuse1 (first class; later ones use the backend name), TestFooCUDA::test_x_cuda.
# Stripping those suffixes gives one row per generic test across device columns.
def generic_id(test: str, device: str) -> str:
    """The device-independent name of a device-type test id (other ids come back unchanged)."""
    names = {device.lower(), "privateuse1"}
    cls_sfx = "|".join(sorted({re.escape(n.upper()) for n in names}, key=len, reverse=True))
    fn_sfx = "|".join(sorted({re.escape(n) for n in names}, key=len, reverse=True))
    cls, sep, name = test.rpartition("::")
    if not sep:
        return test
    cls, n = re.subn(rf"(?<=\w)({cls_sfx})$", "", cls)
    if not n:
        return test
    # the device suffix is the last one, before any dtype/param suffix: test_x_cpu_float32
    name = re.sub(rf"^(.*)_(?:{fn_sfx})((?:_\w+)?)$", r"\1\2", name)
    return f"{cls}::{name}"
