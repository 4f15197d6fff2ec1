"""Compile the HN8xx catalogue entries into what the C++/CMake detectors need.

A Plan is built once per rules collection (cached by identity): the byte prefilter, one token regex
that finds every candidate position in a file, and the per-rule data (macros, suggestions).
Rules absent from the collection (deselected) switch their detector off.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from audits.cpp.closed_lists import Vocab
from audits.model import Rule
from audits.vocabulary import CPP_GATE, CUDA_WORDS

CPP_LANGUAGES = ("cpp", "cmake")


@dataclass
class Plan:
    rules: dict[str, Rule]  # id -> rule, C++/CMake rules only
    by_detector: dict[str, list[Rule]] = field(default_factory=dict)
    macro_rule: dict[str, str] = field(default_factory=dict)  # exact macro -> rule id
    prefix_rule: list[tuple[str, str]] = field(default_factory=list)  # macro prefix -> rule id
    suggest: dict[str, dict[str, str]] = field(default_factory=dict)  # rule id -> name -> API
    namespaces: dict[str, str] = field(default_factory=dict)  # "c10::cuda" -> rule id
    library_macros: tuple[str, ...] = ()
    stub_macros: tuple[str, ...] = ()
    cuda_file_stub_macros: tuple[str, ...] = ()  # CUDA-only registrations in .cu/.cuh files
    cuda_suffixes: tuple[str, ...] = ()
    gate: tuple[bytes, ...] = ()  # cheap `in` tests: no hit, no parse
    anchors: tuple[bytes, ...] = ()  # every token's line holds one of these
    token_re: re.Pattern[bytes] | None = None
    runtime_prefix: str = ""  # `cuda`: cudaStream_t, cudaMemcpyAsync, ...
    include_re: re.Pattern[str] | None = None  # a CUDA/ROCm header path (cuda-include)
    device_string: str = ""  # regex of a device string's content (device-string)
    message_calls: frozenset[str] = frozenset()  # calls whose string arguments are messages
    closed: Any = None  # closed_lists.Vocab of the closed-device-list rule
    runtime_macros: frozenset[str] = frozenset()  # CUDA error-check macros (cuda-runtime)
    cmake_options: frozenset[str] = frozenset()
    cmake_branch_vars: frozenset[str] = frozenset()

    def rule(self, detector: str) -> Rule | None:
        rs = self.by_detector.get(detector)
        return rs[0] if rs else None


def _as_rules(rules: Any) -> Iterable[Rule]:
    if isinstance(rules, Mapping):
        return rules.values()
    return rules


def build_plan(rules: Any) -> Plan:
    """Build the plan for the C++/CMake rules found in ``rules`` (a mapping id->Rule or an iterable)."""
    mine = {r.id: r for r in _as_rules(rules) if r.language in CPP_LANGUAGES}
    plan = Plan(rules=mine)
    for r in mine.values():
        det = r.match.get("detector")
        if not det:
            raise ValueError(f"{r.id}: C++/CMake rule has no match.detector")
        plan.by_detector.setdefault(det, []).append(r)
        if det == "preproc-branch":
            for m in r.match.get("macros", []):
                plan.macro_rule.setdefault(m, r.id)
            for p in r.match.get("prefixes", []):
                plan.prefix_rule.append((p, r.id))
        elif det == "cuda-namespace":
            ns = r.match["namespace"]
            plan.namespaces[ns] = r.id
            plan.suggest[r.id] = dict(r.match.get("suggest") or {})
        elif det == "registration":
            plan.library_macros = tuple(r.match.get("library_macros", ()))
            plan.stub_macros = tuple(r.match.get("stub_macros", ()))
            plan.cuda_file_stub_macros = tuple(r.match.get("cuda_file_stub_macros", ()))
        elif det == "cuda-file":
            plan.cuda_suffixes = tuple(r.match.get("suffixes", ()))
        elif det == "cuda-runtime":
            plan.runtime_macros = frozenset(r.match.get("macros", ()))
            plan.runtime_prefix = r.match.get("identifier_prefix") or ""
        elif det == "cuda-include":
            plan.include_re = re.compile(r.match["path_pattern"])
        elif det == "device-string":
            plan.device_string = r.match["pattern"]
            plan.message_calls = frozenset(r.match.get("message_calls", ()))
        elif det == "closed-device-list":
            plan.closed = Vocab.from_match(r.match)
        elif det == "cmake-option":
            plan.cmake_options = frozenset(r.match.get("variables", ()))
        elif det == "cmake-branch":
            plan.cmake_branch_vars = frozenset(r.match.get("variables", ()))

    alts: list[str] = []
    words = sorted(plan.macro_rule, key=len, reverse=True)
    if words or plan.prefix_rule:
        pieces = [re.escape(w) for w in words] + [
            re.escape(p) + r"\w+" for p, _ in plan.prefix_rule
        ]
        alts.append(r"(?P<macro>\b(?:%s)\b)" % "|".join(pieces))
    if "devicetype" in plan.by_detector:
        alts.append(r"(?P<devtype>\bDeviceType\s*::\s*CUDA\b|\bkCUDA\b)")
    if "is-cuda" in plan.by_detector:
        alts.append(r"(?P<iscuda>\bis_cuda\b)")
    if "cuda-method" in plan.by_detector:
        alts.append(r"(?P<cudam>(?:\.|->)\s*cuda\s*\()")
    if plan.device_string:
        alts.append(r'(?P<devstr>"%s")' % plan.device_string.lstrip("^").rstrip("$"))
    # `#include` lines are found apart (audits/cpp/cxx.py: _include_tokens), not by this regex.
    if plan.namespaces:
        heads = "|".join(re.escape(ns.split("::")[0]) for ns in plan.namespaces)
        alts.append(r"(?P<ns>\b(?:%s)\s*::\s*cuda\s*::)" % heads)
        # `cuda::x` written inside `namespace at {...}` / `namespace c10 {...}` means at::cuda::x.
        alts.append(r"(?P<nsrel>(?<![\w:])cuda\s*::)")
    if "cuda-using" in plan.by_detector and plan.namespaces:
        heads = "|".join(re.escape(ns.split("::")[0]) for ns in plan.namespaces)
        alts.append(r"(?P<usingns>\busing\s+namespace\s+(?:::)?(?:%s)\s*::\s*cuda\s*;)" % heads)
    if "kernel-launch" in plan.by_detector:
        alts.append(r"(?P<launch><<<)")
    qualifiers = [
        q for r in plan.by_detector.get("cuda-qualifier", ()) for q in r.match["qualifiers"]
    ]
    if qualifiers:
        alts.append(r"(?P<qual>\b(?:%s)\b)" % "|".join(re.escape(q) for q in qualifiers))
    if "dispatch-key" in plan.by_detector:
        alts.append(r"(?P<dkey>\bDispatchKey\s*::\s*\w*CUDA\b)")
    reg = plan.library_macros + plan.stub_macros + plan.cuda_file_stub_macros
    if reg:
        alts.append(r"(?P<reg>\b(?:%s)\b)" % "|".join(re.escape(m) for m in reg))
    if "cuda-runtime" in plan.by_detector:
        pieces = [re.escape(m) for m in sorted(plan.runtime_macros, key=len, reverse=True)]
        if plan.runtime_prefix:
            pieces.append(re.escape(plan.runtime_prefix) + r"[A-Z]\w*")
        alts.append(r"(?P<runtime>\b(?:%s)\b)" % "|".join(pieces))
    if plan.closed is not None:  # list elements besides kCUDA/DispatchKey::CUDA/is_cuda()
        alts.append(
            r"(?P<backend>\bBackendComponent\s*::\s*(?:CUDA|HIP)Bit\b|\bDeviceType\s*::\s*HIP\b"
            r"|\bkHIP\b|\bis_hip\s*\()"
        )
    alts.append(r"(?P<ignore>hn:\s*ignore\[)")
    plan.token_re = re.compile("|".join(alts).encode())

    # Every token above contains one of these; files without any are skipped before the regex.
    gate = set(CPP_GATE)
    for m in plan.macro_rule:
        if not any(g.decode() in m for g in gate):
            gate.add(m.encode())
    for p, _ in plan.prefix_rule:
        if not any(g.decode() in p for g in gate):
            gate.add(p.encode())
    if "kernel-launch" in plan.by_detector:
        gate.add(b"<<<")
    if plan.include_re is not None:  # `#include <ATen/cudnn/Handle.h>`, `<nccl.h>`
        gate.update(w.encode() for w in CUDA_WORDS)
    plan.gate = tuple(sorted(gate))
    # `__global__ void k(...)` need not say CUDA on its line; the file still has to pass the gate.
    plan.anchors = plan.gate + (b"hn:",) + tuple(q.encode() for q in qualifiers)
    return plan


def macro_rule(plan: Plan, name: str) -> str | None:
    """The rule id a preprocessor macro name belongs to, or None."""
    rid = plan.macro_rule.get(name)
    if rid:
        return rid
    for p, rid in plan.prefix_rule:
        if name.startswith(p):
            return rid
    return None
