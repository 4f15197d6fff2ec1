"""``cuda-tuning``: the arm the site selects on CUDA gives a name a number that the other arm
gives otherwise: a value tuned for CUDA's hardware (``num_warps, min_num_warps = 1, 1`` "to disable
shared memory", beside another vendor's configuration in the else). A neutral condition hands
CUDA's number to every accelerator and takes the other arm's away from the device it was written
for. A CUDA arm that reads the device (``props.warp_size``) and an else that holds defaults is no
tuning: the rewrite makes every accelerator read its own properties."""

from __future__ import annotations

import ast

from patches.generate.intent.probe import Evidence, Probe

KIND = "cuda-tuning"
SUMMARY = "its CUDA arm sets a number tuned for CUDA that the other arm sets otherwise"


def _assigned(stmts: list[ast.AST]) -> dict[str, ast.AST]:
    """name -> the value a plain assignment in ``stmts`` gives it (tuple unpacking included)."""
    out: dict[str, ast.AST] = {}
    for stmt in stmts:
        for n in ast.walk(stmt):
            if not isinstance(n, ast.Assign):
                continue
            for t in n.targets:
                if isinstance(t, ast.Name):
                    out.setdefault(t.id, n.value)
                elif isinstance(t, ast.Tuple) and isinstance(n.value, ast.Tuple):
                    for name, value in zip(t.elts, n.value.elts):
                        if isinstance(name, ast.Name):
                            out.setdefault(name.id, value)
    return out


def _number(value: ast.AST) -> bool:
    """A literal number (``1``, ``min(1024 // n, 8)``), not a bool, and read from no object."""
    return not any(isinstance(n, ast.Attribute) for n in ast.walk(value)) and any(
        isinstance(n, ast.Constant)
        and isinstance(n.value, (int, float))
        and not isinstance(n.value, bool)
        for n in ast.walk(value)
    )


def detect(p: Probe) -> list[Evidence]:
    cuda_arm, other_arm = p.arms
    if not cuda_arm or not other_arm:
        return []
    mine, theirs = _assigned(cuda_arm), _assigned(other_arm)
    for name, value in mine.items():
        if name in theirs and _number(value) and ast.dump(value) != ast.dump(theirs[name]):
            what = f"{name} = {ast.unparse(value)} (line {value.lineno})"
            return [Evidence(KIND, p.f.line, f"CUDA's arm sets {what}; the other arm differs")]
    return []
