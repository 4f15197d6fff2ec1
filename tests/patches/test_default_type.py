"""The default-type family (``patches/generate/codemods/families/default_type.py``, HN511): the
deprecated ``torch.set_default_tensor_type("torch.cuda.<T>")`` becomes the two settings it made.
Checked here: the dtype table against torch itself (each CUDA type's CPU twin set the old way and
the new way make the same tensors), both targets' forms, and what is left. The port of a script
that sets it runs on this CPU-only machine (tests/patches/test_cpu_ports.py)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from codemod_helpers import fix

from patches.generate.codemods.families.default_type import DTYPES

PROBE = """
import torch
{setup}
x, y = torch.ones(2), torch.tensor([1.5])
print(torch.get_default_dtype(), x.dtype, y.dtype, x.device, y.device)
"""


def _defaults(setup: str) -> str:
    code = PROBE.format(setup=setup)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout


@pytest.mark.parametrize("kind", sorted(DTYPES))
def test_the_dtype_is_the_types(kind):
    """The CPU twin (``torch.HalfTensor`` for ``torch.cuda.HalfTensor``) set the deprecated way
    makes what the rewrite's dtype setting makes with no default device."""
    twin = kind.replace("torch.cuda.", "torch.")
    old = _defaults(f"torch.set_default_tensor_type({twin!r})")
    new = _defaults(
        f"torch.set_default_device(None)\ntorch.set_default_dtype(torch.{DTYPES[kind]})"
    )
    assert old == new
    assert DTYPES[kind] in old  # the table names a dtype the type really has


SCRIPT = 'import torch\n\ntorch.set_default_tensor_type("torch.cuda.DoubleTensor")\nprint(1)\n'


@pytest.mark.parametrize(
    "target, device",
    [
        ("torch", "torch.set_default_device(torch.accelerator.current_accelerator())"),
        ("accelerator_api", "torch.set_default_device(accelerator_api.device_type())"),
    ],
)
def test_both_targets(target, device):
    result, _ = fix(SCRIPT, "s.py", target)
    assert not result.error, result.error
    assert f"{device}\ntorch.set_default_dtype(torch.float64)\n" in result.after
    assert "set_default_tensor_type" not in result.after
    again, _ = fix(result.after, "s.py", target)
    assert again.after == result.after


@pytest.mark.parametrize(
    "setter",
    [
        "torch.set_default_tensor_type(torch.cuda.HalfTensor)",
        "from torch.cuda import HalfTensor\n\ntorch.set_default_tensor_type(HalfTensor)",
    ],
)
def test_the_name_form_is_taken_whole(setter):
    """The type by name is HN507's site; this family rewrites it (and drops the import)."""
    src = f"import torch\n{setter}\nprint(torch.ones(1).dtype)\n"
    result, _ = fix(src, "s.py")
    assert not result.error, result.error
    want = "torch.set_default_device(torch.accelerator.current_accelerator())\n"
    assert want + "torch.set_default_dtype(torch.float16)\n" in result.after
    assert "HalfTensor" not in result.after
    assert ("HN507", setter.count("\n") + 2) in result.outcome.applied


@pytest.mark.parametrize(
    "line, why",
    [
        ('x = torch.set_default_tensor_type("torch.cuda.FloatTensor")', "not a statement"),
        ('torch.set_default_tensor_type("torch.cuda.FloatTensor", )', ""),
    ],
)
def test_left_or_kept(line, why):
    src = f"import torch\n\n{line}\nprint(1)\n"
    result, _ = fix(src, "s.py")
    if why:
        assert result.after == src
        assert any(why in w for r, _, w in result.outcome.failed if r == "HN511")
    else:  # a trailing comma is still one argument
        assert "torch.set_default_dtype(torch.float32)" in result.after
