"""Subsystem of a C++/CMake path, named as in the upstream source tree.

Upstream paths keep their own depth: `aten/src/ATen/native/...` -> `aten/src/ATen/native`,
`c10/core/...` -> `c10/core`, `torch/csrc/distributed/...` -> `torch/csrc/distributed`.
An installed header tree (`<site-packages>/torch/include`) flattens `aten/src/ATen` to `ATen`, so
`ATen/native/cuda/X.cuh` maps back to `aten/src/ATen/native` and a report over the headers
aggregates like one over the source. Anything else (third-party headers such as `fmt/`,
`pybind11/`, `kineto/`) is its first directory.
"""

from __future__ import annotations

_DEPTH = {"aten": 4, "c10": 2, "torch": 3, "caffe2": 2, "functorch": 2}


def subsystem(relpath: str) -> str:
    parts = relpath.split("/")
    for k in (0, 1):  # scanning torch/ or site-packages/ rather than include/
        if len(parts) > k + 1 and parts[k] == "include" and (k == 0 or parts[0] == "torch"):
            parts = parts[k + 1 :]
            break
    if parts and parts[0] == "ATen":
        parts = ["aten", "src"] + parts
    dirs = parts[:-1]
    if not dirs:
        return "."
    head = dirs[0]
    if head == "torch" and len(dirs) > 1 and dirs[1] != "csrc":
        return "/".join(dirs[:2])  # torch/headeronly, torch/...
    return "/".join(dirs[: _DEPTH.get(head, 1)])
