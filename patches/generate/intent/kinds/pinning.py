"""``pinning-lacks``: the branch a CUDA check selects pins host memory (``x.pin_memory()``), and
MPS has no pinned memory: ``pin_memory()`` raises on a Mac (pytorch#86060; torch's own
``DataLoader`` turns pinning off there with a warning). The CUDA check skipped it on a Mac; made
neutral (``torch.accelerator.is_available()``, ``device_type != "cpu"``), a Mac takes the branch
and raises, where the program ran before (nanoGPT's ``get_batch``, nerfstudio's parallel data
manager, round 30). The check stays: CUDA pins as before, and another accelerator copies unpinned,
as it did.

Safety, not CUDA intent: asked only when no kind before it answered (``ALONE``, ``LATE``)."""

from __future__ import annotations

import ast

from patches.generate.intent.probe import Evidence, Probe

KIND = "pinning-lacks"
LATE = True
SUMMARY = "the branch it selects pins memory, which MPS lacks, where CUDA's check skipped it"
ALONE = True


def detect(p: Probe) -> list[Evidence]:
    selected, _ = p.arms
    for stmt in selected:
        for n in ast.walk(stmt):
            if (
                isinstance(n, ast.Call)
                and isinstance(n.func, ast.Attribute)
                and n.func.attr == "pin_memory"
            ):
                return [
                    Evidence(KIND, n.lineno, f"{ast.unparse(n.func)[:50]}(): no pinning on MPS")
                ]
    return []
