"""A ``"cuda:N"`` string stays a string, and is evaluated safely where it was harmless text:
funasr's CLI pick (``"cuda:0" if torch.cuda.is_available() else "cpu"``, handed to code that
calls ``device.startswith("cuda")``) and its models' ``kwargs.get("device", "cuda:0")``, whose
default is evaluated on a CPU-only machine too (round 33)."""

from __future__ import annotations

from tests.patches.codemod_helpers import fix

ACC = "torch.accelerator.current_accelerator().type"


def test_a_picked_index_string_stays_a_string():
    src = (
        "import torch\n\n\n"
        "def main(args):\n"
        '    device = args.device or ("cuda:0" if torch.cuda.is_available() else "cpu")\n'
        "    other = torch.device('cuda', 1) if torch.cuda.is_available() else torch.device('cpu')\n"
        "    return device, other\n"
    )
    rw, _ = fix(src, path="pkg/cli.py")
    assert f'(f"{{{ACC}}}:0" if torch.accelerator.is_available() else "cpu")' in rw.after
    assert f"torch.device({ACC}, 1) if torch.accelerator.is_available()" in rw.after


def test_an_index_string_torch_does_not_place_with_gets_the_cpu_without_an_accelerator():
    src = (
        "import torch\n\n\n"
        "def build(**kwargs):\n"
        '    device = kwargs.get("device", "cuda:0")\n'
        '    app = create_app(device="cuda:0")\n'
        '    x = torch.zeros(2, device="cuda:1")\n'
        '    return device, app, x.to("cuda:1")\n'
    )
    rw, _ = fix(src, path="pkg/model.py")
    guarded = f'f"{{{ACC}}}:0" if torch.accelerator.is_available() else "cpu"'
    assert f'kwargs.get("device", {guarded})' in rw.after
    assert f"create_app(device={guarded})" in rw.after
    # torch places with it at once: without CUDA the original failed there too
    assert f'torch.zeros(2, device=f"{{{ACC}}}:1")' in rw.after
    assert f'x.to(f"{{{ACC}}}:1")' in rw.after


def test_no_inner_guard_where_an_accelerator_is_checked_already():
    src = (
        "import torch\n\n\n"
        "def run(self):\n"
        "    if torch.cuda.is_available():\n"
        '        self.profile(device="cuda:0")\n'
    )
    rw, _ = fix(src, path="pkg/rpc_test.py")
    assert f'self.profile(device=f"{{{ACC}}}:0")' in rw.after, rw.after
