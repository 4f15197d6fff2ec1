"""The C++/CUDA and CMake scanner (rules HN8xx) behind the language registry.

``scan_source(data, relpath, rules)`` is the registry's stable interface (see audits/languages.py):
C++ sources and headers are parsed with tree-sitter (audits/cpp/cxx.py), CMake files with a small
tokenizer (audits/cpp/cmake.py). A byte gate skips files without CUDA/HIP/ROCm tokens before any
parse, which is what keeps a 9,000-header tree fast. Suppression: `// hn: ignore[HN812]` (an id, an
id prefix such as `HN81`, or a rule name) on a finding's first line, with the Python scanner's
semantics (audits/suppress.py); `# hn: ignore[...]` in CMake.
"""

from __future__ import annotations

import posixpath
from typing import Any

from audits.cpp.cmake import CMakeSyntaxError, scan_cmake
from audits.cpp.cxx import scan_cxx
from audits.cpp.hits import Hit
from audits.cpp.plan import Plan, build_plan
from audits.cpp.subsystem import subsystem
from audits.model import FileError, Finding
from audits.suppress import is_suppressed

__all__ = ["scan_source", "subsystem", "MAX_BYTES", "is_cmake"]

MAX_BYTES = 8 * 1024 * 1024  # larger than any real header (torch's largest is 2.2 MB)
_PLANS: dict[int, tuple[Any, Plan]] = {}


def _plan(rules: Any) -> Plan:
    """Plans are cached per rules object (the driver passes the same one for every file)."""
    hit = _PLANS.get(id(rules))
    if hit is not None and hit[0] is rules:
        return hit[1]
    plan = build_plan(rules)
    if len(_PLANS) > 16:
        _PLANS.clear()
    _PLANS[id(rules)] = (rules, plan)
    return plan


def is_cmake(relpath: str) -> bool:
    base = posixpath.basename(relpath)
    return base == "CMakeLists.txt" or base.lower().endswith(".cmake")


def scan_source(
    data: bytes, relpath: str, rules: Any, **_options: Any
) -> tuple[list[Finding], list[FileError]]:
    """Findings and per-file errors for one C++/CUDA or CMake file; never raises for bad input.

    Keyword options meant for other languages' scanners (e.g. ``package_prefix``) are accepted and
    have no meaning here."""
    if len(data) > MAX_BYTES:
        return [], [FileError(relpath, "too-large", f"{len(data)} bytes > {MAX_BYTES}")]
    nul = data.find(b"\0")
    if nul >= 0:
        return [], [FileError(relpath, "binary", f"NUL byte at offset {nul}")]
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        return [], [FileError(relpath, "encoding", f"invalid UTF-8 at byte {e.start}")]
    plan = _plan(rules)
    if not plan.rules:
        return [], []
    try:
        if is_cmake(relpath):
            hits, ignores = scan_cmake(data, plan)
        else:
            suffix = posixpath.splitext(relpath)[1].lower()
            hits, ignores, _ = scan_cxx(data, plan, suffix)
    except CMakeSyntaxError as e:
        return [], [FileError(relpath, "syntax", str(e))]
    except RecursionError as e:  # pathological nesting; keep the run going
        return [], [FileError(relpath, "syntax", f"nesting too deep: {e}")]
    if not hits:
        return [], []
    return _findings(data, relpath, plan, hits, ignores), []


def _findings(
    data: bytes, relpath: str, plan: Plan, hits: list[Hit], ignores: dict[int, set[str]]
) -> list[Finding]:
    lines = data.split(b"\n")
    sub = subsystem(relpath)
    language = "cmake" if is_cmake(relpath) else "cpp"

    def col(row: int, bcol: int) -> int:
        line = lines[row] if row < len(lines) else b""
        return (
            len(line[:bcol].decode("utf-8", "replace")) + 1
            if bcol and not line.isascii()
            else bcol + 1
        )

    sup = {row + 1: tuple(codes) for row, codes in ignores.items()}  # the Python scanner's form
    out: list[Finding] = []
    seen: set[tuple] = set()
    for h in hits:
        key = (h.rule, h.start, h.end)
        rule = plan.rules[h.rule]
        if key in seen or (sup and is_suppressed(sup, h.start[0] + 1, rule)):
            continue
        seen.add(key)
        row = h.start[0]
        source = lines[row].decode("utf-8", "replace").strip() if row < len(lines) else ""
        out.append(
            Finding(
                rule=rule.id,
                name=rule.name,
                category=rule.category,
                kind=h.kind,
                path=relpath,
                line=row + 1,
                col=col(row, h.start[1]),
                end_line=h.end[0] + 1,
                end_col=col(h.end[0], h.end[1]),
                source=source,
                subsystem=sub,
                message=h.message,
                replacement=h.replacement if h.replacement is not None else rule.replacement,
                safety=h.safety or rule.safety,
                language=language,
            )
        )
    return out
