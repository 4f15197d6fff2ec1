"""A device test in front of the tree's own compiled extension stays (``intent/libraries.py``'s
``_compiled``, round 42): ``from . import _C`` where the tree holds no ``_C`` source is the build's
module, whose kernels are the CPU's and CUDA's. Look-alike: a tree that ships ``_C.py`` as Python
source (a module like any other)."""

from __future__ import annotations

from patches.generate import pipeline
from patches.generate.state import Settings

OPS = """\
import torch

from . import _C


def deform_conv(input, offset, weight):
    if not input.is_cuda:
        raise NotImplementedError("deformable convolution is not implemented here")
    return _C.deform_conv_forward(input, offset, weight)
"""

SOURCE = """\
import torch


def deform_conv_forward(input, offset, weight):
    return torch.nn.functional.conv2d(input + offset, weight)
"""


def _run(tmp_path, with_source: bool):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg/__init__.py").write_text("")
    (tmp_path / "pkg/ops.py").write_text(OPS)
    if with_source:
        (tmp_path / "pkg/_C.py").write_text(SOURCE)
    run = pipeline.generate(Settings(tmp_path, unsafe_fixes=True))
    return run.plan.finals.get("pkg/ops.py", OPS), run


def test_a_test_before_the_compiled_extension_stays(tmp_path):
    after, run = _run(tmp_path, with_source=False)
    assert "if not input.is_cuda:" in after
    left = [x for x in run.plan.left if x.finding.path == "pkg/ops.py"]
    assert any("the tree's compiled extension" in x.reason for x in left), left


def test_a_module_the_tree_holds_as_source_is_no_extension(tmp_path):
    after, _ = _run(tmp_path, with_source=True)
    assert 'if input.device.type == "cpu":' in after, after
