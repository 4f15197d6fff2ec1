"""The HN8xx catalogue entries: every detector exists, every suggested C++ name is declared in the
installed torch's headers (C++ names cannot be verified by import)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

from audits.cpp.plan import build_plan
from audits.cpp_scan import scan_source

from .conftest import CPP_RULES

INCLUDE = Path(importlib.util.find_spec("torch").origin).parent / "include"  # no torch import
DETECTORS = {
    "preproc-branch",
    "preproc-else",
    "devicetype",
    "is-cuda",
    "cuda-namespace",
    "dispatch-key",
    "registration",
    "cuda-file",
    "cmake-option",
    "cmake-branch",
    "cmake-else",
    "cuda-using",
    "kernel-launch",
    "closed-device-list",
    "cuda-runtime",
    "cuda-method",
    "device-string",
    "cuda-include",
    "cuda-qualifier",
}
# Where each namespace's declarations live in the installed headers.
HEADERS = {
    "at::accelerator": ["ATen/DeviceAccelerator.h"],
    "at": ["ATen/DeviceAccelerator.h"],
    "c10": [
        "c10/core/DeviceGuard.h",
        "c10/core/StreamGuard.h",
        "c10/core/Stream.h",
        "c10/core/Event.h",
    ],
}


def _suggestions() -> set[str]:
    names = {r.replacement for r in CPP_RULES if r.replacement}
    for r in CPP_RULES:
        names |= set((r.match.get("suggest") or {}).values())
    return names


def test_every_rule_has_a_known_detector_and_ids_are_hn8xx():
    assert len(CPP_RULES) >= 14
    for r in CPP_RULES:
        assert r.id.startswith("HN8") and r.match["detector"] in DETECTORS, r.id
    build_plan(CPP_RULES)


def test_suggested_cpp_names_are_declared_in_torch_headers():
    for name in sorted(_suggestions()):
        ns, _, leaf = name.rpartition("::")
        text = "".join((INCLUDE / h).read_text() for h in HEADERS[ns])
        decl = rf"(class|struct)\s+(C10_API\s+)?{leaf}\b|\b{leaf}\s*\("
        assert re.search(decl, text), f"{name} is not declared in {HEADERS[ns]}"
        if ns.startswith("at::accelerator"):
            assert "namespace at::accelerator" in text


def test_mapped_cuda_names_exist_on_the_cuda_side_too():
    """Each suggestion key is a real c10::cuda / at::cuda name (else the mapping is dead)."""
    cuda_headers = "".join(
        p.read_text(errors="replace")
        for d in ("c10/cuda", "ATen/cuda")
        for p in (INCLUDE / d).glob("*.h")
    )
    for key in {k for r in CPP_RULES for k in (r.match.get("suggest") or {})}:
        leaf = key.rsplit("::", 1)[-1]
        assert re.search(rf"\b{leaf}\b", cuda_headers), key


def test_deselected_rules_switch_their_detector_off():
    data = b"#ifdef USE_CUDA\nbool b = t.is_cuda();\n#else\nint x;\n#endif\n"
    only = [r for r in CPP_RULES if r.id == "HN812"]
    findings, _ = scan_source(data, "a.cpp", only)
    assert [f.rule for f in findings] == ["HN812"]
    assert scan_source(data, "a.cpp", []) == ([], [])
