"""The project's vocabulary, in one place: CUDA marker words, device and vendor names, the
out-of-tree device plugins, and the folders no tool descends into.

Every tool reads these names from here (``audits``, ``patches``; ``audits/catalog.yaml`` refers
to them as ``vocabulary.NAME`` or ``<vocabulary.NAME>`` inside a pattern, expanded on load).
``tests/test_vocabulary.py`` fails when a second copy of these lists appears in the project.
Path -> module name is ``audits.resolve.module_name``.
"""

from __future__ import annotations

from dataclasses import dataclass

# --- CUDA marker words -------------------------------------------------------------------------

# The words every Python/C++ rule's subject contains one of (a catalogue test checks it): the
# scanners' byte prefilter skips a file holding none of them. `multigpu` is for TEST_MULTIGPU,
# the one CUDA test flag whose name lacks "cuda".
CUDA_WORDS = ("cuda", "cudnn", "nccl")
SCAN_TOKENS = tuple(w.encode() for w in CUDA_WORDS) + (b"multigpu",)
# Python also names NVTX without "cuda": `torch.autograd.profiler.emit_nvtx()` (HN116), often
# alone on its `with` line.
PY_SCAN_TOKENS = SCAN_TOKENS + (b"nvtx",)
# C++/CMake also branch on ROCm/HIP/NVCC macros that contain no "cuda" (`#ifdef USE_ROCM`). Kept
# narrow: a bare "hip"/"nvcc" passes 1,400 more headers ("ship", "windows NVCC" notes) for nothing.
CPP_SCAN_TOKENS = SCAN_TOKENS + (b"rocm", b"__hip", b"hip_", b"__nvcc__")
# Case-sensitive byte gate of the C++ token regex: every CUDA/ROCm token it finds holds one.
CPP_GATE = (b"CUDA", b"cuda", b"HIP", b"ROCM")

# CUDA-only libraries (their headers, modules and identifiers).
CUDA_LIBRARIES = ("cudnn", "nccl", "cublas", "cufft", "curand", "cusolver", "cusparse", "nvrtc")
# Folders of CUDA/ROCm headers (`#include <cub/cub.cuh>`, `<ATen/cudnn/Handle.h>`).
CUDA_HEADER_DIRS = ("cuda", "hip", "cudnn", "cub", "thrust", "miopen")

# Words that make an identifier, attribute or device-like string CUDA-specific: CUDA-only
# libraries and features (cuDNN, NCCL, NVTX, cuBLAS, jiterator, CUDA graphs, TF32, ROCm CK, ...).
# Case-insensitive regular expressions. Not symmetric memory: upstream made torch's own
# (torch/distributed/_symmetric_memory/) device-generic between 2.13 and 2.14, so the name says
# nothing about the device (the replay's unseen pair; docs/replay.md).
CUDA_MARKERS = (
    "cuda",
    *CUDA_LIBRARIES,
    "cutlass",
    "cute_?dsl",  # CUTLASS's Python DSL
    "cutile",  # NVIDIA's CUDA Tile language (`cuda.tile`)
    "cudss",
    "magma",  # GPU linear algebra of CUDA/ROCm builds only (torch.cuda.has_magma)
    "nvtx",
    "nvml",
    "nvshmem",
    "nvidia",
    "jiterator",
    "tf32",
    "rocm",
    "(?<![a-z])hip(?![a-z])",
    "(?<![a-z])ck(?![a-z])",
    "(?<![a-z])sm_?[0-9]{2}",
    "ptx",
    "cubin",
    "get_device_capability",
    "get_device_properties",
    "nvlink",
    "tensor_?cores?",
)
# Other backends by name: code that enumerates backends picks CUDA on purpose.
NAMED_BACKENDS = ("xpu", "mps", "hpu", "mtia", "npu")
# A text mentioning a CUDA marker and one of these is about devices in general.
NEUTRAL_WORDS = (
    "accelerator",
    "device-agnostic",
    "device agnostic",
    "xpu",
    "mps",
    "hpu",
    "privateuse1",
    "any device",
)


# A text naming CUDA with one of these says other devices take another path on purpose ("keep the
# original path for other devices", "CUDA only").
EXCLUSIVE_PHRASES = (
    r"\bother (?:devices|device types|backends|accelerators|hardware|targets|platforms)\b",
    r"\bcuda\b[^.;:]*\botherwise\b",
    r"\bnon-?cuda\b",
    r"\bcuda[- ]only\b",
    r"\bonly (?:on |for |with |in )?cuda\b",
    # "it can only be used with CUDA enabled", "only runs on CUDA", "only supported on CUDA"
    r"\bonly (?:be )?(?:used|run|runs|works?|supported|available|implemented) (?:on|for|with|in) cuda\b",
    # "we apply this optimization only when running on CUDA", "only if on CUDA"
    r"\bonly (?:when|if) (?:(?:running|run|it runs|we run|we are|it is) )?(?:on|with|in) cuda\b",
)


def marker_patterns() -> tuple[str, ...]:
    """The CUDA markers plus the other backends' names as whole words (regular expressions)."""
    return CUDA_MARKERS + tuple(f"(?<![a-z]){b}(?![a-z])" for b in NAMED_BACKENDS)


# --- Devices and vendors -----------------------------------------------------------------------


@dataclass(frozen=True)
class DeviceType:
    name: str  # the torch.device type string
    cpp: str | None  # the c10::DeviceType spelling; None: not a DeviceType of its own
    accelerator: bool = False  # an accelerator to torch.accelerator / at::accelerator
    python: bool = True  # written as a device type in Python code


DEVICE_TYPES = (
    DeviceType("cpu", "CPU"),
    DeviceType("cuda", "CUDA", True),
    DeviceType("hip", "HIP", True),
    DeviceType("xpu", "XPU", True),
    DeviceType("mps", "MPS", True),
    DeviceType("mtia", "MTIA", True),
    DeviceType("hpu", "HPU", True),
    DeviceType("maia", "MAIA", True),
    DeviceType("npu", None, True),  # Ascend's PrivateUse1 backend, by its usual name
    DeviceType("xla", "XLA"),
    DeviceType("meta", "Meta"),
    DeviceType("lazy", "Lazy"),
    DeviceType("ipu", "IPU"),
    DeviceType("ve", "VE"),
    DeviceType("fpga", "FPGA"),
    DeviceType("vulkan", "Vulkan"),
    DeviceType("metal", "Metal", python=False),
    DeviceType("mkldnn", "MKLDNN"),
    DeviceType("ideep", "IDEEP"),
    DeviceType("opengl", "OPENGL"),
    DeviceType("opencl", "OPENCL"),
    DeviceType("privateuseone", "PrivateUse1", True),
)
PY_BACKENDS = tuple(d.name for d in DEVICE_TYPES if d.python)
PY_ACCELERATORS = tuple(d.name for d in DEVICE_TYPES if d.python and d.accelerator)
CPP_BACKENDS = tuple(d.cpp for d in DEVICE_TYPES if d.cpp)
CPP_ACCELERATORS = tuple(d.cpp for d in DEVICE_TYPES if d.cpp and d.accelerator)
# A list whose accelerators are only these is CUDA-specific, not closed.
CUDA_FAMILY = ("cuda", "hip")
# The out-of-tree backend every closed list leaves out.
PY_OPEN = ("privateuseone",)
CPP_OPEN = "PrivateUse1"

# Collective backends of other vendors than NVIDIA/AMD (oneCCL, Huawei, Cambricon, Moore Threads).
OTHER_COLLECTIVES = ("xccl", "hccl", "cncl", "mccl", "ccl")
# Other vendors' device types and collective backends (a list naming one is multi-vendor).
OTHER_VENDORS = frozenset(
    [d.name for d in DEVICE_TYPES if d.accelerator and d.name not in CUDA_FAMILY]
    + ["xla", *OTHER_COLLECTIVES]
)

# Out-of-tree device types this project ships, and the package that registers each with torch.
DEVICE_PLUGINS = {"trn": "kernels.trn"}

# --- Folders -----------------------------------------------------------------------------------

# Never source: version control, caches, virtual environments, installed JavaScript.
SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "__pycache__",
        ".tox",
        ".nox",
        ".venv",
        "venv",
        "node_modules",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".eggs",
    }
)
# Built or vendored trees: not the project's own code (a test selection leaves them out).
BUILD_DIRS = frozenset({"build", "dist", "third_party"})
