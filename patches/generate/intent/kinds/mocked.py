"""``cuda-mocked``: the enclosing function (or class) replaces CUDA's own API with a stand-in
(``monkeypatch.setattr(torch.cuda, "is_available", lambda: True)``,
``@mock.patch("torch.cuda.device_count", return_value=2)``). It simulates CUDA on a machine
without it, so the CUDA devices it builds and expects (``torch.device("cuda", 3)`` must be
refused where the stand-in counts 2) are the simulated ones: made neutral, they name whatever
accelerator the test machine has, or raise on one with none (ultralytics' ``test_select_device``,
round 25)."""

from __future__ import annotations

import ast

from patches.generate.intent.probe import Evidence, Probe

KIND = "cuda-mocked"
SUMMARY = "the enclosing function stands in for CUDA's API (a mock of torch.cuda)"
_PATCHERS = ("setattr", "patch", "patch.object", "setitem")


def detect(p: Probe) -> list[Evidence]:
    for d in p.defs:  # a class by its decorators only: one method's mock is no other's
        nodes = [*d.decorator_list, *([] if isinstance(d, ast.ClassDef) else d.body)]
        for call in (c for n in nodes for c in ast.walk(n) if isinstance(c, ast.Call)):
            target = _patched(call)
            if target:
                return [Evidence(KIND, call.lineno, f"{d.name} replaces {target}")]
    return []


def _patched(call: ast.Call) -> str:
    """What a patching call replaces when it is CUDA's API, else ``""``."""
    func = ast.unparse(call.func)
    if not call.args or not any(func.endswith(s) for s in _PATCHERS):
        return ""
    first = call.args[0]
    if isinstance(first, ast.Constant) and isinstance(first.value, str):
        return first.value if first.value.startswith("torch.cuda.") else ""
    text = ast.unparse(first)
    if text == "torch.cuda" or text.endswith(".torch.cuda"):
        attr = call.args[1] if len(call.args) > 1 else None
        name = attr.value if isinstance(attr, ast.Constant) else "..."
        return f"torch.cuda.{name}"
    return ""
