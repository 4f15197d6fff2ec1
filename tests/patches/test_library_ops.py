"""Operators a tree registers through ``torch.library`` for CUDA alone are kernels other
accelerators lack (round 37: optimum-quanto's AWQ and Marlin GEMMs): a device check in a module
that calls one stays CUDA's (``cuda-kernels``), and so does a device in a function that calls one
(``cuda-library-unit``); a test that reaches such a check keeps its gate (``cuda-reached``: the
assertion refuses every other device). An operator the tree also registers for another device, or for every
device, is no such kernel, and the same code beside it is rewritten."""

from __future__ import annotations

import ast
import textwrap

from patches.generate import pipeline
from patches.generate.intent.library_ops import cuda_only, registrations
from patches.generate.state import Settings

EXTENSIONS = """\
import torch

lib = torch.library.Library("qlib", "DEF")
lib.define("scale(Tensor x) -> Tensor")
torch.library.define("qlib::gemm", "(Tensor a, Tensor b) -> Tensor")
torch.library.define("qlib::unpack", "(Tensor a) -> Tensor")


@torch.library.impl("qlib::gemm", ["CUDA"])
def gemm(a, b):
    return a @ b


@torch.library.impl("qlib::unpack", "CUDA")
def unpack_cuda(a):
    return a


lib.impl("scale", lambda x: x * 2, "CUDA")
"""

PORTABLE = """\
import torch


@torch.library.impl("qlib::unpack", "default")
def unpack(a):
    return a


@torch.library.custom_op("qlib::mix", mutates_args=())
def mix(a: torch.Tensor) -> torch.Tensor:
    return a.clone()
"""

PACKED = """\
import torch


class Packed:
    def __init__(self, data):
        assert data.device.type == "cuda"
        self.data = data

    def matmul(self, other):
        return torch.ops.qlib.gemm.default(other, self.data)
"""

UNPACKED = """\
import torch


class Unpacked:
    def __init__(self, data):
        assert data.device.type == "cuda"
        self.data = data

    def values(self):
        return torch.ops.qlib.unpack(self.data)
"""

TESTS = """\
import pytest
import torch

from qlib import Packed, Unpacked


@pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA not available")
def test_packed():
    assert Packed(torch.ones(2)).data.numel() == 2


@pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA not available")
def test_unpacked():
    assert Unpacked(torch.ones(2)).data.numel() == 2
"""

LOWER = """\
from qlib.packed import Packed


def lower(x):
    if x.device.type != "cuda":
        return x
    return Packed(x)
"""

BENCH = """\
import torch


def bench_gemm():
    dev = torch.device("cuda:0")
    a = torch.rand(8, 8, device=dev)
    return torch.ops.qlib.gemm(a, a)


def bench_unpack():
    dev = torch.device("cuda:0")
    a = torch.rand(8, 8, device=dev)
    return torch.ops.qlib.unpack(a)
"""


def test_registrations_read_every_form():
    found = registrations(ast.parse(EXTENSIONS)) | registrations(ast.parse(PORTABLE))
    assert found["qlib::gemm"] == {"cuda"}
    assert found["qlib::scale"] == {"cuda"}
    assert found["qlib::unpack"] == {"default"}  # the later file's; the tree joins both
    assert found["qlib::mix"] == {"every"}
    assert cuda_only({"cuda", "meta"}) and not cuda_only({"cuda", "default"})


def test_code_that_calls_a_cuda_only_operator_stays(tmp_path):
    files = {
        "qlib/extensions.py": EXTENSIONS,
        "qlib/portable.py": PORTABLE,
        "qlib/packed.py": PACKED,
        "qlib/unpacked.py": UNPACKED,
        "bench/bench.py": BENCH,
        "qlib/lower.py": LOWER,
        "qlib/__init__.py": "from .packed import *\nfrom .unpacked import *\n",
        "tests/test_packed.py": TESTS,
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(exist_ok=True)
        (tmp_path / rel).write_text(textwrap.dedent(text))
    run = pipeline.generate(Settings(tmp_path, unsafe_fixes=True))
    assert not run.plan.unaccounted(run.report.findings)
    finals = run.plan.finals
    assert finals.get("qlib/packed.py", PACKED) == PACKED
    assert 'data.device.type != "cpu"' in finals["qlib/unpacked.py"]
    bench = finals["bench/bench.py"]
    gemm, unpack = bench.split("def bench_unpack")
    assert 'torch.device("cuda:0")' in gemm and 'torch.device("cuda:0")' not in unpack
    reasons = {(x.finding.path, x.finding.line): x.reason for x in run.plan.left}
    assert "gemm, a kernel the tree has for CUDA only" in reasons[("qlib/packed.py", 6)]
    assert "torch.ops.qlib.gemm (a kernel" in reasons[("bench/bench.py", 5)]
    # a test reaching the class whose CUDA assertion stays keeps its gate (cuda-reached),
    # through the package's star import
    _, packed, unpacked = finals["tests/test_packed.py"].split("@pytest.mark.skipif")
    assert "torch.cuda.is_available()" in packed
    assert "torch.accelerator.is_available()" in unpacked
    assert "qlib/packed.py:6 assert data.device.type" in reasons[("tests/test_packed.py", 7)]
    # a library's check is not kept by the assertion the code it guards reaches: that refuses a
    # test's devices, not the library's dispatch (inductor's jagged lowering)
    assert 'x.device.type == "cpu"' in finals["qlib/lower.py"]
