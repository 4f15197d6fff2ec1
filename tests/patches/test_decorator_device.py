"""What ``device`` a rewrite may name. A decorator of a method runs in its class body, where
``device`` is whatever the class bound before it: denoising-diffusion-pytorch's ``@property def
device(self)`` above ``@autocast('cuda', enabled=False)`` made ``torch.device(device).type`` a
``TypeError`` at import on every machine (round 38). A ``def`` binds a function, not a device;
a parameter the function never reads is not the device it works on."""

from __future__ import annotations

from tests.patches.codemod_helpers import fix

SRC = """import torch
from torch.amp import autocast


class Diffusion(torch.nn.Module):
    @property
    def device(self):
        return self.betas.device

    @autocast("cuda", enabled=False)
    def q_sample(self, x):
        return x


def run(device):
    with autocast("cuda"):
        return device
"""


def test_a_class_s_device_property_is_no_device_for_its_decorators():
    rw, _ = fix(SRC, path="pkg/diffusion.py")
    assert '@autocast("cuda", enabled=False)' in rw.after
    why = {ln: w for _r, ln, w in rw.outcome.failed}
    assert why[10] == "no device in scope for autocast's device type"
    # a parameter is a device: the function's own autocast reads it
    assert "with autocast(torch.device(device).type):" in rw.after
    compile(rw.after, "diffusion.py", "exec")


def test_a_device_assigned_in_the_class_body_is_one():
    src = SRC.replace(
        "    @property\n    def device(self):\n        return self.betas.device\n",
        '    device = "cuda"\n',
    )
    rw, _ = fix(src, path="pkg/diffusion.py")
    assert "@autocast(torch.device(device).type, enabled=False)" in rw.after, rw.after


def test_a_device_parameter_the_function_ignores_is_not_its_device():
    """compressed-tensors' test helper takes a parametrized ``device`` ("cpu", "meta", "cuda")
    and places on ``"cuda"`` all the same: ``device=device`` would change what runs on CUDA
    (round 38). A parameter the body reads is the device it works on; a library's unread
    ``device`` parameter is the device its object is for."""
    src = (
        "import torch\n\n\n"
        "def run(module, device):\n"
        '    return module.to(dtype=torch.bfloat16, device="cuda")\n\n\n'
        "def place(module, device):\n"
        '    module = module.to(device="cuda")\n'
        "    return module, device\n"
    )
    rw, _ = fix(src, path="tests/helpers.py")
    ignored, read = rw.after.split("def place")
    assert 'device="cuda"' in ignored
    assert "module.to(device=device)" in read
    rw, _ = fix(src, path="pkg/helpers.py")
    assert "module.to(dtype=torch.bfloat16, device=device)" in rw.after
