"""The legacy-types unit (``patches/generate/codemods/families/script_legacy_types.py``): a
script's ``Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor`` with its flag and
its ``.type(Tensor)`` reads (fixtures/legacy_types), and the look-alikes left whole with the
reason. The rewritten scripts run on this CPU-only machine with the original's output."""

import subprocess
import sys
from pathlib import Path

import pytest
from codemod_helpers import FIXTURES, fix

from tests.benchmarks.cuda_tokens import cuda_tokens

DIR = FIXTURES / "legacy_types"


def _port(name: str):
    src = (DIR / name).read_text()
    result, found = fix(src, name)
    assert not result.error, result.error
    compile(result.after, name, "exec")
    again, _ = fix(result.after, name)
    assert again.after == result.after  # idempotent
    return src, result, found


def _run(tmp_path: Path, name: str, text: str) -> str:
    p = tmp_path / name
    p.write_text(text)
    r = subprocess.run([sys.executable, str(p)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout


def test_gan_shape_is_rewritten_whole(tmp_path):
    src, result, found = _port("gan.py")
    after = result.after
    assert cuda_tokens(src) == 9 and cuda_tokens(after) == 0
    assert "def Tensor(*args):\n    return torch.FloatTensor(*args).to(device)" in after
    assert "def LongTensor(*args):\n    return torch.LongTensor(*args).to(device)" in after
    assert "torch.zeros(4, 8).to(device, torch.float32)" in after
    assert "torch.tensor([1, 2, 3, 0]).to(device, torch.int64)" in after
    assert "if accel:\n    generator.to(device)" in after
    # every HN507 site is fixed in the summary (a rescan finds none)
    hn507 = {f.line for f in found if f.rule == "HN507"}
    assert hn507 and all(("HN507", ln) in result.outcome.applied for ln in hn507)
    assert _run(tmp_path, "gan.py", after) == _run(tmp_path, "orig.py", src)


def test_user_switch_gets_the_device_of_its_flag(tmp_path):
    src, result, _ = _port("gan_main.py")
    after = result.after
    assert (
        'device = torch.accelerator.current_accelerator() if use_accel else torch.device("cpu")'
        in after
    )
    assert "torch.ones(3, 3).to(device, torch.float64)" in after
    assert cuda_tokens(src) == 6 and cuda_tokens(after) == 1  # the option string "--no_cuda"
    assert _run(tmp_path, "gan_main.py", after) == _run(tmp_path, "orig.py", src)


@pytest.mark.parametrize(
    "name, why",
    [
        ("isinstance_use.py", "Tensor is used other than called or given to .type() (line 10)"),
        ("passed_on.py", "Tensor is used other than called or given to .type() (line 14)"),
        ("library.py", "not a script: another module may import the alias"),
        ("flag_twice.py", "cuda is bound more than once, or not by one assignment"),
        ("not_a_check.py", ""),  # the gate keeps it: the flag holds no availability check
    ],
)
def test_look_alikes_are_left_whole(name, why):
    src, result, _ = _port(name)
    assert "torch.cuda.FloatTensor if cuda else torch.FloatTensor" in result.after, name
    assert "def Tensor" not in result.after
    left = [w for r, _, w in result.outcome.failed if r == "HN507"]
    assert left, result.outcome.failed
    if why:
        assert why in left, left
