"""CUDA's extensions to C++, rewritten to same-length C++ so that tree-sitter-cpp can parse them.

`k<<<grid, block, smem, stream>>>(args)` becomes `k(  grid, block, smem, stream)  (args)` (a call
of a call: the launch configuration and the arguments stay expressions); the execution-space and
memory-space qualifiers (`__global__`, `__device__`, `__shared__`, ...) and `__launch_bounds__(...)`
become spaces. Byte offsets, rows and columns are unchanged, so every position found in the
rewritten text is a position in the original file; findings quote the original.
"""

from __future__ import annotations

import re

LAUNCH_OPEN = b"<<<"
# Preprocessor lines are kept as they are (a `#define X __device__` emptied to spaces would end
# the directive's parse at the wrong line); only qualifiers in code are blanked.
QUALIFIERS = re.compile(
    rb"\b(?:__global__|__device__|__host__|__shared__|__constant__|__managed__|__forceinline__"
    rb"|__noinline__|__grid_constant__)\b|\b__launch_bounds__\s*\([^()\n]*(?:\([^()\n]*\)[^()\n]*)*\)"
)
NEEDLES = (LAUNCH_OPEN, b"__global__", b"__device__", b"__host__", b"__shared__", b"__constant__")


def _in_directive(data: bytes, pos: int) -> bool:
    """Whether ``pos`` is on a preprocessor line (or a backslash-continued one)."""
    start = data.rfind(b"\n", 0, pos) + 1
    while True:
        if data[start:pos].lstrip().startswith(b"#"):
            return True
        if start < 2 or data[start - 2 : start - 1] != b"\\":
            return False
        pos = start - 1
        start = data.rfind(b"\n", 0, pos) + 1


def as_cxx(data: bytes) -> bytes:
    """``data`` with CUDA launch syntax and qualifiers blanked (same length); ``data`` itself when
    it holds none."""
    if not any(n in data for n in NEEDLES) and b"__launch_bounds__" not in data:
        return data
    out = bytearray(data)
    for m in QUALIFIERS.finditer(data):
        if not _in_directive(data, m.start()):
            out[m.start() : m.end()] = b" " * (m.end() - m.start())
    for start, end in launches(data):
        out[start : start + 3] = b"(  "
        out[end - 3 : end] = b")  "
    return bytes(out)


def launches(data: bytes) -> list[tuple[int, int]]:
    """(start, end) byte offsets of each `<<<...>>>` launch configuration in the original text."""
    out = []
    i = data.find(LAUNCH_OPEN)
    while i >= 0:
        end = data.find(b">>>", i + 3)
        stop = data.find(b";", i + 3)
        if end < 0 or (0 <= stop < end):
            i = data.find(LAUNCH_OPEN, i + 3)
            continue
        out.append((i, end + 3))
        i = data.find(LAUNCH_OPEN, end + 3)
    return out
