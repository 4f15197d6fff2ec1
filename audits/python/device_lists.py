"""Closed device lists in Python (rule family `closed-device-list`): a literal list, tuple or set
of device type strings (``device.type in ("cuda", "xpu", "mps")``, a supported-devices constant)
that names several backends, at least one accelerator beyond the CUDA family, and not the
out-of-tree one (PrivateUse1): every out-of-tree accelerator silently takes the other path."""

from __future__ import annotations

import ast
from typing import Sequence

from audits.model import Rule
from audits.python.plan import DeviceListRule
from audits.python.strings import text_of


def closed_device_list(
    rules: Sequence[DeviceListRule], node: ast.List | ast.Tuple | ast.Set
) -> tuple[Rule, ast.AST, str, str, str] | None:
    """(rule, node, matched, kind, note) to emit for a closed list, or None. A list holding a
    computed element is not a literal allow-list; one naming privateuse1 is open."""
    strs, opened = [], False
    for e in node.elts:
        if isinstance(e, ast.Constant) and isinstance(e.value, str):
            strs.append(e.value)
        elif "privateuse1" in text_of(e).lower():
            opened = True
        else:
            return None
    for dl in rules:
        if opened or any(s in dl.open for s in strs) or not all(s in dl.backends for s in strs):
            continue
        named = list(dict.fromkeys(strs))
        accel = [s for s in named if s in dl.accelerators]
        if len(named) >= 2 and accel and not set(accel) <= dl.family:
            fam = dl.family & set(named)  # hip is cuda's build, not left out of it
            out = [a for a in dl.accelerators if a not in named and not (fam and a in dl.family)]
            note = f"names {', '.join(named)}; leaves out {', '.join(out)}"
            return dl.rule, node, ",".join(named), "", note
    return None
