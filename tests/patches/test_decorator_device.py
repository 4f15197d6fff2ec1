"""What ``device`` a rewrite may name. A decorator of a method runs in its class body, where
``device`` is whatever the class bound before it: denoising-diffusion-pytorch's ``@property def
device(self)`` above ``@autocast('cuda', enabled=False)`` made ``torch.device(device).type`` a
``TypeError`` at import on every machine (round 38). A ``def`` binds a function, not a device."""

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
