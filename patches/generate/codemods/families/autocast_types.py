"""When an autocast's ``"cuda"`` may become a device type read from a value (``idioms_device``:
``device_type``, ``torch.device(device).type``, a tensor parameter's ``x.device.type``).

* ``disabled``: the autocast is a ``with`` item with ``enabled=False`` (the tensor parameter's
  type is taken only there: an enabled one would turn CPU autocast on where CUDA's was off);
* ``half_on_cpu``: an enabled autocast to ``float16``, whose device may be the CPU: CPU
  autocast in float16 is another program (emulated on most CPUs), where ``"cuda"`` left the CPU
  in float32 (coqui-tts' Tortoise, round 29); bfloat16 is the CPU's own autocast dtype, and a
  switch that tests the device (``enabled=device.type == "cuda"``) keeps the CPU out itself;
* ``too_old``: the project supports a torch whose autocast refuses ``"mps"`` (before 2.5,
  ``torch_floor.VALUE_AUTOCAST``), and a value may be that.
"""

from __future__ import annotations

import re

import libcst as cst

from patches.generate import torch_floor

AUTOCASTS = frozenset({"torch.autocast", "torch.amp.autocast"})
_HALF = frozenset({"torch.float16", "torch.half"})
HALF_WHY = (
    "an autocast to float16 on a device that may be the CPU: CUDA's was off there, and CPU "
    "autocast in float16 is another program (emulated on most CPUs)"
)


def _autocast(eng, arg: cst.Arg) -> cst.Call | None:
    call = eng.parent(arg)
    if isinstance(call, cst.Call) and eng.qualnames(call.func) & AUTOCASTS:
        return call
    return None


def disabled(eng, arg: cst.Arg) -> bool:
    """``arg`` is the device type of a ``with`` item ``torch.autocast(..., enabled=False)``."""
    call = _autocast(eng, arg)
    return (
        call is not None
        and isinstance(eng.parent(call), cst.WithItem)
        and any(
            a.keyword is not None
            and a.keyword.value == "enabled"
            and isinstance(a.value, cst.Name)
            and a.value.value == "False"
            for a in call.args
        )
    )


# `enabled=device.type == "cuda"`, `enabled=x.is_cuda`: the switch itself keeps the CPU out
_OFF_ON_CPU = re.compile(r"""\.type\s*[!=]=\s*["'](?:cuda|cpu)["']|\.is_cuda\b""")


def half_on_cpu(eng, arg: cst.Arg) -> str:
    """``HALF_WHY`` where ``arg`` is the device type of an autocast that names
    ``dtype=torch.float16`` and is not disabled, nor switched on by a test that keeps the CPU
    out (``enabled=device.type == "cuda"``), else ""."""
    call = _autocast(eng, arg)
    if call is None or disabled(eng, arg):
        return ""
    code = cst.Module([]).code_for_node
    switch = [a for a in call.args if a.keyword is not None and a.keyword.value == "enabled"]
    if switch and _OFF_ON_CPU.search(code(switch[0].value)):
        return ""
    half = any(
        a.keyword is not None and a.keyword.value == "dtype" and eng.qualnames(a.value) & _HALF
        for a in call.args
    )
    return HALF_WHY if half else ""


def too_old(eng, arg: cst.Arg) -> str:
    """Why the project's torch floor leaves a device type read from a value, else ""."""
    api, since = torch_floor.VALUE_AUTOCAST
    if eng.floor is None or _autocast(eng, arg) is None:
        return ""
    if torch_floor.key(since) <= eng.floor.version:
        return ""
    return f"needs torch>={since} ({api}); the project supports {eng.floor}"
