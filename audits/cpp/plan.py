"""Compile the HN8xx catalogue entries into what the C++/CMake detectors need.

A Plan is built once per rules collection (cached by identity): the byte prefilter, one token regex
that finds every candidate position in a file, and the per-rule data (macros, suggestions).
Rules absent from the collection (deselected) switch their detector off.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

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
    """Build the plan for the C++/CMake rules found in ``rules`` (a mapping id->Rule or an
    iterable)."""
    mine = {r.id: r for r in _as_rules(rules) if r.language in CPP_LANGUAGES}
    plan = Plan(rules=mine)
    for r in mine.values():
        det = r.match.get("detector")
        if not det:
            raise ValueError(f"{r.id}: C++/CMake rule has no match.detector")
        plan.by_detector.setdefault(det, []).append(r)
        collect = _COLLECT.get(det)
        if collect is not None:
            collect(plan, r.id, r.match)
    qualifiers = [
        q for r in plan.by_detector.get("cuda-qualifier", ()) for q in r.match["qualifiers"]
    ]
    alts = _name_alternatives(plan) + _construct_alternatives(plan, qualifiers)
    alts.append(r"(?P<ignore>hn:\s*ignore\[)")
    plan.token_re = re.compile("|".join(alts).encode())
    plan.gate = _gate(plan)
    # `__global__ void k(...)` need not say CUDA on its line; the file still has to pass the gate.
    plan.anchors = plan.gate + (b"hn:",) + tuple(q.encode() for q in qualifiers)
    return plan


def _preproc_branch(plan: Plan, rid: str, m: dict) -> None:
    for macro in m.get("macros", []):
        plan.macro_rule.setdefault(macro, rid)
    for p in m.get("prefixes", []):
        plan.prefix_rule.append((p, rid))


def _cuda_namespace(plan: Plan, rid: str, m: dict) -> None:
    plan.namespaces[m["namespace"]] = rid
    plan.suggest[rid] = dict(m.get("suggest") or {})


def _registration(plan: Plan, rid: str, m: dict) -> None:
    plan.library_macros = tuple(m.get("library_macros", ()))
    plan.stub_macros = tuple(m.get("stub_macros", ()))
    plan.cuda_file_stub_macros = tuple(m.get("cuda_file_stub_macros", ()))


def _cuda_runtime(plan: Plan, rid: str, m: dict) -> None:
    plan.runtime_macros = frozenset(m.get("macros", ()))
    plan.runtime_prefix = m.get("identifier_prefix") or ""


def _device_string(plan: Plan, rid: str, m: dict) -> None:
    plan.device_string = m["pattern"]
    plan.message_calls = frozenset(m.get("message_calls", ()))


# detector -> what its rule adds to the plan (plan, rule id, the rule's match)
_COLLECT: dict[str, Callable[[Plan, str, dict], None]] = {
    "preproc-branch": _preproc_branch,
    "cuda-namespace": _cuda_namespace,
    "registration": _registration,
    "cuda-file": lambda plan, rid, m: setattr(plan, "cuda_suffixes", tuple(m.get("suffixes", ()))),
    "cuda-runtime": _cuda_runtime,
    "cuda-include": lambda plan, rid, m: setattr(plan, "include_re", re.compile(m["path_pattern"])),
    "device-string": _device_string,
    "closed-device-list": lambda plan, rid, m: setattr(plan, "closed", Vocab.from_match(m)),
    "cmake-option": lambda plan, rid, m: setattr(
        plan, "cmake_options", frozenset(m.get("variables", ()))
    ),
    "cmake-branch": lambda plan, rid, m: setattr(
        plan, "cmake_branch_vars", frozenset(m.get("variables", ()))
    ),
}


def _name_alternatives(plan: Plan) -> list[str]:
    """Token regex alternatives for macro names, device types, is_cuda, .cuda() and strings."""
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
        if "cuda-using" in plan.by_detector:
            alts.append(r"(?P<usingns>\busing\s+namespace\s+(?:::)?(?:%s)\s*::\s*cuda\s*;)" % heads)
    return alts


def _construct_alternatives(plan: Plan, qualifiers: list[str]) -> list[str]:
    """Token regex alternatives for launches, qualifiers, dispatch keys, registrations, runtime
    API names and closed-list elements."""
    alts: list[str] = []
    if "kernel-launch" in plan.by_detector:
        alts.append(r"(?P<launch><<<)")
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
    return alts


def _gate(plan: Plan) -> tuple[bytes, ...]:
    """Every token of the regex contains one of these; files without any are skipped before it."""
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
    return tuple(sorted(gate))


def macro_rule(plan: Plan, name: str) -> str | None:
    """The rule id a preprocessor macro name belongs to, or None."""
    rid = plan.macro_rule.get(name)
    if rid:
        return rid
    for p, rid in plan.prefix_rule:
        if name.startswith(p):
            return rid
    return None
