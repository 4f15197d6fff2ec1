"""The legacy-types unit (``patches/generate/codemods/families/script_legacy_types.py``): a
script's ``Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor`` with its flag and
its ``.type(Tensor)`` reads (fixtures/legacy_types), and the look-alikes left whole with the
reason. The rewritten scripts run on this CPU-only machine with the original's output. Direct
uses in a script (``torch.cuda.FloatTensor(3)``, ``x.type(torch.cuda.LongTensor)``,
``script_legacy_calls``) get the script's ``device`` line."""

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest
from codemod_helpers import FIXTURES, diff, fix

from patches.common import gitutil
from patches.generate.cli import main
from tests.benchmarks.cuda_tokens import cuda_tokens

DIR = FIXTURES / "legacy_types"


def _port(name: str, target: str = "torch", where: Path = DIR):
    src = (where / name).read_text()
    result, found = fix(src, name, target)
    assert not result.error, result.error
    compile(result.after, name, "exec")
    again, _ = fix(result.after, name, target)
    assert again.after == result.after, diff(result.after, again.after)  # idempotent
    return src, result, found


def _run(tmp_path: Path, name: str, text: str, ok: bool = True) -> str:
    p = tmp_path / name
    p.write_text(text)
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}
    env = {k: v for k, v in env.items() if k not in ("HN_TRN", "HN_AUTOPORT")}
    r = subprocess.run(
        [sys.executable, str(p)], capture_output=True, text=True, timeout=120, env=env
    )
    assert (r.returncode == 0) == ok, r.stderr[-2000:]
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


# the direct uses of direct.py as the port writes them, with the script's device line
DIRECT = [
    'device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"',
    "sizes = torch.empty(2, 3, dtype=torch.float32, device=device).zero_()",
    "count = torch.empty(4, dtype=torch.int64, device=device).fill_(7)",
    "empty = torch.empty(0, dtype=torch.float64, device=device)",
    "data = torch.tensor([[1, 2], [3, 4]], dtype=torch.float32, device=device)",
    "pairs = torch.tensor(((1, 2), (3, 4), (5, 6)), dtype=torch.int32, device=device)",
    "named = torch.FloatTensor(n).to(device).fill_(0.5)",
    "arr = torch.FloatTensor(np.arange(3.0)).to(device)",
    "like = torch.ByteTensor(sizes.size()).to(device).fill_(1)",
    "grid = torch.empty(\n    2,\n    2,\n    dtype=torch.float16,\n    device=device,\n).fill_(1)",
    "longs = torch.arange(3).to(device, torch.int64)",
    "halves = torch.ones(2).to(device, torch.float16)",
    "doubles = torch.ones(2, 2).to(device, torch.float64)",
]


@pytest.mark.parametrize("target", ["torch", "accelerator_api"])
def test_direct_uses_get_the_script_device(tmp_path, target):
    src, result, found = _port("direct.py", target)
    after = result.after
    want = DIRECT if target == "torch" else ["device = accelerator_api.device_type()", *DIRECT[1:]]
    for form in want:
        assert form in after, form
    assert after.count("device = ") == 1
    assert cuda_tokens(src) == 12 and cuda_tokens(after) == 0
    hn507 = {f.line for f in found if f.rule == "HN507"}
    assert len(hn507) == 12 and all(("HN507", ln) in result.outcome.applied for ln in hn507)
    _, rescan = fix(after, "direct.py", target)
    assert not [f for f in rescan if f.rule == "HN507"]
    # the original stops without CUDA; the port prints what the CPU types make (dtype, shape,
    # sum of each tensor): the dtype of each legacy type, the sizes or data it was given
    _run(tmp_path, "orig.py", src, ok=False)
    cpu = _run(tmp_path, "cpu.py", src.replace("torch.cuda.", "torch."))
    assert _run(tmp_path, "direct.py", after) == cpu
    assert cpu.splitlines()[:5] == [
        "torch.float32 (2, 3) 0.0",
        "torch.int64 (4,) 28.0",
        "torch.float64 (0,) 0.0",
        "torch.float32 (2, 2) 10.0",
        "torch.int32 (3, 2) 21.0",
    ]


def test_probe_gets_the_device_line(tmp_path):
    src, result, _ = _port("legacy.py", where=FIXTURES / "probes")
    lines = result.after.splitlines()
    assert lines[2:5] == [
        'device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"',
        "x = torch.empty(3, dtype=torch.float32, device=device).fill_(1)",
        "y = torch.ones(3).to(device, torch.float32)",
    ]
    _run(tmp_path, "orig.py", src, ok=False)
    assert _run(tmp_path, "legacy.py", result.after) == "6.0\n"


@pytest.mark.parametrize(
    "name, why",
    [
        (
            "direct_library.py",
            "not a script: which device the tensor goes to is its caller's choice",
        ),
        (
            "direct_own_device.py",
            "the file binds its own device: which device the tensor means is its choice",
        ),
        (
            "direct_isinstance.py",
            "a legacy type used other than called or given to x.type() (an isinstance check, "
            "the type handed on): decide by hand",
        ),
        (
            "direct_keyword.py",
            "a legacy type called with keywords or unpacked arguments: decide by hand",
        ),
    ],
)
def test_direct_look_alikes_are_left(name, why):
    src, result, _ = _port(name)
    assert result.after == src
    assert [w for r, _, w in result.outcome.failed if r == "HN507"] == [why]


def test_series_writes_the_device_line_with_its_first_place(tmp_path):
    """``direct_mixed.py``'s places fall to HN501, HN502 and HN507 (one patch each): every prefix
    of the series compiles and binds the ``device`` it reads; the last runs here."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "mixed.py").write_text((DIR / "direct_mixed.py").read_text())
    repo = gitutil.init_copy(src, tmp_path / "repo")
    assert main([str(repo), "--out", str(tmp_path / "series"), "--unsafe-fixes"]) == 0
    patches = sorted((tmp_path / "series").glob("*.patch"))
    assert len(patches) == 3
    for patch in patches:
        gitutil.am(repo, [patch])
        text = (repo / "mixed.py").read_text()
        compile(text, "mixed.py", "exec")
        top = [
            ast.unparse(t)
            for n in ast.parse(text).body
            if isinstance(n, ast.Assign)
            for t in n.targets
        ]
        assert top.count("device") == 1, patch.name  # written in the first patch
    assert cuda_tokens(text) == 0
    out = _run(tmp_path, "port.py", text)
    assert out == "(2, 1) torch.float32 torch.float32\n"
