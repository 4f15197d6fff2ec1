"""A module the tree's build compiles as a ``CUDAExtension`` (FlashAttention's
``flash_attn_2_cuda``) runs on no accelerator but CUDA: a device check whose guarded code calls,
in another file of the tree, a function that calls through it stays CUDA's (round 38). The same
check before neutral torch code, a module built as a plain ``CppExtension``, and a flag the
extension's import sets, are rewritten."""

from __future__ import annotations

import textwrap

from patches.generate import pipeline
from patches.generate.codemods.tree_index import TreeIndex
from patches.generate.state import Settings

SETUP = """\
from setuptools import setup
from torch.utils.cpp_extension import CppExtension, CUDAExtension

setup(
    name="fa",
    ext_modules=[
        CUDAExtension(name="fa_cuda", sources=["csrc/fa.cu"]),
        CppExtension("fa_cpu", sources=["csrc/fa.cpp"]),
    ],
)
"""

INTERFACE = """\
import fa_cpu
import fa_cuda


def attention(q, k, v):
    return fa_cuda.fwd(q, k, v)


def pooled(q):
    return fa_cpu.pool(q)
"""

FLAGS = """\
# Transformer Engine's fused CUDA kernels, when it is installed
try:
    import transformer_engine  # noqa: F401

    HAVE_TE = True
except ImportError:
    HAVE_TE = False


def available():
    return HAVE_TE
"""

LAYERS = """\
import torch

from fa.flags import available
from fa.interface import attention, pooled


class Attention(torch.nn.Module):
    def forward(self, q, k, v):
        assert q.is_cuda
        return attention(q, k, v)


class Softmax(torch.nn.Module):
    def forward(self, q, k, v):
        assert q.is_cuda
        return torch.softmax(q @ k.T, -1) @ v


class Pool(torch.nn.Module):
    def forward(self, q):
        assert q.is_cuda
        return pooled(q)


class Probe(torch.nn.Module):
    def forward(self, q):
        assert q.is_cuda
        return available()
"""


def _tree(tmp_path):
    files = {"setup.py": SETUP, "fa/interface.py": INTERFACE, "fa/layers.py": LAYERS}
    files["fa/flags.py"] = FLAGS
    files["fa/__init__.py"] = ""
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(exist_ok=True)
        (tmp_path / rel).write_text(textwrap.dedent(text))


def test_the_build_names_its_cuda_extensions(tmp_path):
    _tree(tmp_path)
    assert TreeIndex(tmp_path).cuda_extensions() == {"fa_cuda"}


def test_a_check_before_a_cuda_extension_stays(tmp_path):
    _tree(tmp_path)
    run = pipeline.generate(Settings(tmp_path, unsafe_fixes=True))
    assert not run.plan.unaccounted(run.report.findings)
    attention, softmax, pool, probe = run.plan.finals["fa/layers.py"].split("class ")[1:]
    assert "assert q.is_cuda" in attention
    assert 'assert q.device.type != "cpu"' in softmax
    assert 'assert q.device.type != "cpu"' in pool
    # a flag the library's import sets is read, not run: no work (Megatron's HAVE_TE_* flags)
    assert 'assert q.device.type != "cpu"' in probe
    reasons = {(x.finding.path, x.finding.line): x.reason for x in run.plan.left}
    assert "fa/interface.py:6" in reasons[("fa/layers.py", 9)], reasons
