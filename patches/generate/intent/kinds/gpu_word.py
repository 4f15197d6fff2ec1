"""``cuda-gpu-word``: an availability check that picks the word ``"gpu"`` where CUDA is there
(lightly's ``accelerator = "gpu" if torch.cuda.is_available() else "cpu"``, a Lightning
``Trainer(accelerator=...)``; round 29). ``"gpu"`` is no torch device type: its meaning is the
consumer's, and the consumers that take it give it CUDA's devices (Lightning: CUDA or MPS;
torchrun's ``--nproc-per-node gpu``: CUDA). Made neutral, an XPU or a PrivateUse1 machine
picks ``"gpu"`` and the consumer refuses it ("No supported gpu backend found!"), where the
CPU ran before. The consumer's own neutral choice (Lightning's ``"auto"``) is a maintainer's.
Likewise a check whose branch stores the word as an ``accelerator`` (neuralforecast's ``if
torch.cuda.is_available(): trainer_kwargs["accelerator"] = "gpu"``, round 33); not a word that
names the device for people (torchrun's ``device_type = "gpu"``, which only a log line reads:
upstream made it the accelerator's type in 2.13)."""

from __future__ import annotations

import ast

from patches.generate.intent.probe import Evidence, Probe

KIND = "cuda-gpu-word"
SUMMARY = 'it picks "gpu", a name its consumer gives CUDA\'s devices, not a device type'
_WORD = "gpu"


def detect(p: Probe) -> list[Evidence]:
    picked = p.picked()
    kept = picked[1] if picked else None
    if isinstance(kept, ast.Constant) and kept.value == _WORD:
        return [Evidence(KIND, p.f.line, f'"{_WORD}" where CUDA is there')]
    selected, _ = p.arms
    for stmt in selected:
        for n in ast.walk(stmt):
            if isinstance(n, (ast.Assign, ast.AnnAssign)) and _word(n.value) and _accelerator(n):
                return [Evidence(KIND, n.lineno, f'sets "{_WORD}" where CUDA is there')]
    return []


def _accelerator(stmt) -> bool:
    """A target that is an ``accelerator``: a name, an attribute, or a mapping's constant key."""
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    for t in targets:
        key = t.slice if isinstance(t, ast.Subscript) else None
        name = (
            key.value if isinstance(key, ast.Constant) else getattr(t, "id", getattr(t, "attr", ""))
        )
        if isinstance(name, str) and name.endswith(_ACCELERATOR):
            return True
    return False


_ACCELERATOR = "accelerator"


def _word(value) -> bool:
    return isinstance(value, ast.Constant) and value.value == _WORD
