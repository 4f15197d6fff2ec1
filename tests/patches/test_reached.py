"""A test module's gate stays while the project code its tests import keeps CUDA work after the
run (intent kind ``cuda-reached``, round 34: axolotl's kernel tests skip without CUDA, and the
kernels they launch read CUDA's raw stream). Followed: a function the test imports, through a
package's re-export, and the functions its code names in other files; a test of a neutral
function is rewritten, though its module keeps CUDA work in another function, and so is a test
of a function whose CUDA work sits under its own device test (torch's DDP asks
``torch.version.cuda`` before ``torch.cuda.nccl.version()``), and of one that only asks a
question (``is_nccl_available()``) or names a device type (a skip decorator's ``device_type``),
a test whose harness (its class's base) keeps CUDA work but whose tests reach none, and one of a
class whose base keeps CUDA work its own code does not run (torch's DDP over ``Module.cuda``)."""

from __future__ import annotations

from patches.generate import pipeline
from patches.generate.state import Settings

KERNELS = """\
import torch


def launch(x):
    stream = torch._C._cuda_getCurrentRawStream(x.device.index)
    return x * 2, stream
"""

LAYERS = """\
from pkg.kernels import launch


def double(x):
    return launch(x)[0]
"""

NEUTRAL = """\
import torch


def scale(x):
    return x * 2


def fast(x):
    return x * 2, torch._C._cuda_getCurrentRawStream(x.device.index)


class skip_unless_backend:
    def __init__(self, reason, device_type="cuda"):  # a device type named, nothing run
        self.reason, self.device_type = reason, device_type


def gated(x):
    marker = skip_unless_backend("no backend", device_type="cuda")
    if not torch.distributed.is_nccl_available():  # a question: no work
        return x * 2, marker
    return x * 2, None


def dispatched(x):
    if x.is_cuda:  # the library's own dispatch: another device takes the other arm
        return x * 2, torch._C._cuda_getCurrentRawStream(x.device.index)
    return x * 2, None
"""

GATE = """\
import pytest
import torch

{imports}

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")


def test_it():
    assert {call}(torch.ones(2)).sum() == 4
"""


HARNESS = """\
import torch


class LeakCheckedCase:
    def tearDown(self):
        torch._C._cuda_clearCublasWorkspaces()
"""

MODEL = """\
from pkg.harness import LeakCheckedCase


class Doubler(LeakCheckedCase):  # what it inherits is not what its own code runs
    def forward(self, x):
        return x * 2
"""

HARNESSED = """\
import pytest
import torch

from pkg.harness import LeakCheckedCase
from pkg.neutral import scale

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")


class TestScale(LeakCheckedCase):
    def test_it(self):
        assert scale(torch.ones(2)).sum() == 4
"""


def _tree(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "tests").mkdir()
    (tmp_path / "pkg/__init__.py").write_text("from .kernels import launch\n")
    (tmp_path / "pkg/kernels.py").write_text(KERNELS)
    (tmp_path / "pkg/layers.py").write_text(LAYERS)
    (tmp_path / "pkg/neutral.py").write_text(NEUTRAL)
    tests = {
        "test_reexported.py": ("from pkg import launch", "lambda x: launch(x)[0]"),
        "test_one_further.py": ("from pkg.layers import double", "double"),
        "test_neutral.py": ("from pkg.neutral import scale", "scale"),
        "test_dispatched.py": ("from pkg.neutral import dispatched", "lambda x: dispatched(x)[0]"),
        "test_gated.py": ("from pkg.neutral import gated", "lambda x: gated(x)[0]"),
        "test_inherits.py": ("from pkg.model import Doubler", "Doubler().forward"),
    }
    (tmp_path / "pkg/harness.py").write_text(HARNESS)
    (tmp_path / "pkg/model.py").write_text(MODEL)
    (tmp_path / "tests/test_harnessed.py").write_text(HARNESSED)
    for name, (imports, call) in tests.items():
        (tmp_path / "tests" / name).write_text(GATE.format(imports=imports, call=call))
    return tmp_path


def test_gates_of_tests_reaching_cuda_work_stay(tmp_path):
    run = pipeline.generate(Settings(_tree(tmp_path), unsafe_fixes=True))
    assert not run.plan.unaccounted(run.report.findings)
    finals = run.plan.finals
    for name in (
        "test_neutral.py",
        "test_dispatched.py",
        "test_gated.py",
        "test_harnessed.py",
        "test_inherits.py",
    ):
        assert "torch.accelerator.is_available()" in finals[f"tests/{name}"]
    for name in ("test_reexported.py", "test_one_further.py"):
        rel = f"tests/{name}"
        assert "torch.cuda.is_available()" in finals.get(rel, "torch.cuda.is_available()")
        left = [x for x in run.plan.left if x.finding.path == rel and x.finding.rule == "HN101"]
        assert left and all("cuda-reached" in x.reason for x in left), left
        assert any("pkg/kernels.py:5" in x.reason for x in left), left


OPTIMIZER = """\
from pkg.kernels import launch
from pkg.neutral import scale


def step(x):
    if x.is_cuda:
        return launch(x)[0]
    return x * 2


def plain_step(x):
    if x.is_cuda:
        return scale(x)
    return x * 2
"""


def test_a_check_before_another_files_cuda_work_stays(tmp_path):
    """A library's device check guarding a call of another file's function that keeps CUDA
    work (axolotl's fused optimizer step) stays; one guarding a neutral function is rewritten."""
    tree = _tree(tmp_path)
    (tree / "pkg/optimizer.py").write_text(OPTIMIZER)
    run = pipeline.generate(Settings(tree, unsafe_fixes=True))
    after = run.plan.finals["pkg/optimizer.py"]
    assert after.count("x.is_cuda") == 1 and 'x.device.type != "cpu"' in after
    assert after.index("x.is_cuda") < after.index("def plain_step")
    left = [x for x in run.plan.left if x.finding.path == "pkg/optimizer.py"]
    assert any("launch() reaches pkg/kernels.py:5" in x.reason for x in left), left


TRITON_OPS = """\
import torch
import triton
import triton.language as tl


@triton.jit
def _keep_kernel(x_ptr, n):
    pass


def keep_mask(scores):
    if not scores.is_cuda or scores.dtype != torch.float32:
        raise ValueError("expected contiguous CUDA float32 scores")
    out = torch.empty_like(scores, dtype=torch.bool)
    _keep_kernel[(1,)](scores, scores.numel())
    return out


def fused_add(dst, src):
    if not dst.is_cuda:  # the kernel's own fallback: other devices take it
        return dst.add_(src)
    _keep_kernel[(1,)](dst, dst.numel())
    return dst
"""

ROUTER = """\
from pkg.triton_ops import fused_add, keep_mask


def route(scores):
    if scores.is_cuda:
        return keep_mask(scores)
    return scores > 0


def accumulate(dst, src):
    if dst.is_cuda:
        return fused_add(dst, src)
    return dst.add_(src)
"""


def test_a_check_before_a_kernel_that_refuses_other_devices_stays(tmp_path):
    """A device check that picks the path into another file's Triton entry point, which raises
    for tensors off CUDA, stays (OLMo-core's router before ``document_pool_keep_mask``); one
    before an entry point that falls back by itself is rewritten, and the entry point's own
    check, in a file of GPU kernels, stays."""
    tree = _tree(tmp_path)
    (tree / "pkg/triton_ops.py").write_text(TRITON_OPS)
    (tree / "pkg/router.py").write_text(ROUTER)
    run = pipeline.generate(Settings(tree, unsafe_fixes=True))
    after = run.plan.finals["pkg/router.py"]
    assert after.count("scores.is_cuda") == 1 and 'dst.device.type != "cpu"' in after, after
    left = [x for x in run.plan.left if x.finding.path == "pkg/router.py"]
    assert any("keep_mask() reaches pkg/triton_ops.py:12" in x.reason for x in left), left
    assert (
        "pkg/triton_ops.py" not in run.plan.finals
        or "not dst.is_cuda" in (run.plan.finals["pkg/triton_ops.py"])
    )


LOADED = """\
import importlib.util
import os

_HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_spec = importlib.util.spec_from_file_location("under_test", os.path.join(_HERE, "pkg", "{file}"))
_mod = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_mod)
{name}, other = _mod.{name}, _mod.__name__
"""


def test_a_module_loaded_from_its_path_is_reached(tmp_path):
    """A test that loads the module under test from its file (``spec_from_file_location``,
    unsloth-zoo's ``test_block_swap.py``) reaches what the names it takes from it run; one that
    loads a neutral function is rewritten."""
    tree = _tree(tmp_path)
    for test, file, name in (("kernels", "kernels.py", "launch"), ("scale", "neutral.py", "scale")):
        imports = LOADED.format(file=file, name=name)
        call = "lambda x: launch(x)[0]" if name == "launch" else name
        (tree / f"tests/test_loaded_{test}.py").write_text(GATE.format(imports=imports, call=call))
    run = pipeline.generate(Settings(tree, unsafe_fixes=True))
    finals = run.plan.finals
    assert "torch.accelerator.is_available()" in finals["tests/test_loaded_scale.py"]
    rel = "tests/test_loaded_kernels.py"
    assert "torch.cuda.is_available()" in finals.get(rel, "torch.cuda.is_available()")
    left = [x for x in run.plan.left if x.finding.path == rel and x.finding.rule == "HN101"]
    assert any("pkg/kernels.py:5" in x.reason for x in left), left


SETUP = """\
from setuptools import setup
from torch.utils.cpp_extension import CUDAExtension

setup(name="pkg", ext_modules=[CUDAExtension("kern_ops", ["csrc/ops.cu"])])
"""

HIST = """\
import torch

import kern_ops as k


class HistOp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return k.hist(x)


hist = HistOp.apply


def plain(x):
    return x.sum()


def via(x):
    return _inner(x)


def _inner(x):
    return k.hist(x)


def maybe(x, has_k=True):
    if has_k and isinstance(x, list):
        return k.hist(x)
    return x.sum()
"""

BENCH = """\
import torch

from pkg import ops


def bench_hist():
    x = torch.ones(4).cuda()
    return ops.hist(x)


def bench_plain():
    x = torch.ones(4).cuda()
    return ops.plain(x)


def bench_via():
    x = torch.ones(4).cuda()
    return ops.via(x)


def bench_maybe():
    x = torch.ones(4).cuda()
    return ops.maybe(x)
"""


def test_a_call_into_a_cuda_extension_elsewhere_keeps_the_placement(tmp_path):
    """A function that hands its tensors to another file's function over the tree's own CUDA
    extension (MegaBlocks' benchmarks: ``ops.histogram``, ``histogram = HistogramOp.apply`` over
    ``megablocks_ops``, in a file that never says "cuda") works with that library: its ``.cuda()``
    stays; the one that calls a plain function moves, and so does one whose callee reaches the
    library a step further (MONAI's ``MetaTensor`` over CuPy on an optional path), or only under
    a test of its presence or of the value's type (MONAI's ``convert_to_numpy``)."""
    (tmp_path / "pkg/ops").mkdir(parents=True)
    (tmp_path / "setup.py").write_text(SETUP)
    (tmp_path / "pkg/__init__.py").write_text("")
    (tmp_path / "pkg/ops/__init__.py").write_text(
        "from pkg.ops.hist import hist, maybe, plain, via\n"
    )
    (tmp_path / "pkg/ops/hist.py").write_text(HIST)
    (tmp_path / "pkg/bench.py").write_text(BENCH)
    run = pipeline.generate(Settings(tmp_path, unsafe_fixes=True))
    after = run.plan.finals["pkg/bench.py"]
    hist, plain = after.split("def bench_plain")
    assert ".cuda()" in hist and ".cuda()" not in plain, after  # bench_via is in `plain`
    left = [x for x in run.plan.left if x.finding.path == "pkg/bench.py"]
    assert any("cuda-library-unit" in x.reason and "pkg/ops/hist.py:9" in x.reason for x in left)
