"""``cuda-saved``: an availability check that picks ``None`` for a checkpoint's ``map_location``
where CUDA is there (MONAI's ``map_location = None if torch.cuda.is_available() else
torch.device("cpu")``): ``None`` restores each tensor where it was saved, on CUDA, and the
check asks whether that device exists. Neutral, a machine with another accelerator would pick
``None`` and fail to restore CUDA tensors that it loaded on the CPU before."""

from __future__ import annotations

import ast

from patches.generate.intent.probe import Evidence, Probe

KIND = "cuda-saved"
SUMMARY = "it picks the places a checkpoint was saved to (CUDA's) where CUDA is there"
_NAME = "map_location"


def detect(p: Probe) -> list[Evidence]:
    picked = p.picked()
    if picked and _none(picked[1]) and _for_map_location(p, picked[0]):
        return [Evidence(KIND, p.f.line, f"{_NAME} = None where CUDA is there")]
    return []


def _none(node) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _for_map_location(p: Probe, pick: ast.IfExp) -> bool:
    """The pick is a ``map_location=`` argument, or assigned to a name saying so."""
    parent = p.index.parents.get(pick)
    if isinstance(parent, ast.keyword):
        return parent.arg == _NAME
    if isinstance(parent, ast.Assign) and parent.value is pick:
        return any(
            _NAME in (t.id if isinstance(t, ast.Name) else getattr(t, "attr", ""))
            for t in parent.targets
        )
    return False
