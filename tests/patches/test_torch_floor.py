"""The torch floor (``patches/generate/torch_floor.py``): a project that declares an older torch
gets no rewrite that calls a newer API, and says why; the table of first releases holds for the
installed torch."""

from __future__ import annotations

import operator

import pytest
import torch

from patches.generate import torch_floor
from patches.generate.cli import main
from patches.generate.explain import explain

SOURCE = """import torch
import torch.distributed as dist


def sync():
    torch.cuda.synchronize()


def free():
    torch.cuda.empty_cache()


def stream():
    return torch.cuda.Stream()
"""


def _tree(tmp_path, packaging: dict[str, str]):
    for rel, text in {**packaging, "pkg/a.py": SOURCE}.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return tmp_path


PYPROJECT = (
    '[project]\nname = "x"\ndependencies = ["numpy", "torch>=2.1.0,<3", "torchvision>=0.9"]\n'
)


@pytest.mark.parametrize(
    "packaging, want",
    [
        ({"pyproject.toml": PYPROJECT}, ((2, 1), "pyproject.toml")),
        ({"setup.cfg": "[options]\ninstall_requires =\n    torch >= 1.8\n"}, ((1, 8), "setup.cfg")),
        ({"setup.py": 'setup(install_requires=["torch~=2.2"])\n'}, ((2, 2), "setup.py")),
        (  # the lowest of several
            {
                "requirements/base.txt": "torch>=2.4\n",
                "requirements.txt": "torch>=2.3; python_version>'3.8'\n",
            },
            ((2, 3), "requirements.txt"),
        ),
        (
            {
                "pyproject.toml": '[project]\ndependencies = ["torchvision>=0.9", "torch-geometric>=2"]\n'
            },
            None,
        ),
        ({}, None),
    ],
)
def test_declared(tmp_path, packaging, want):
    _tree(tmp_path, packaging)
    got = torch_floor.declared(tmp_path)
    assert (got.version, got.source) == want if want else got is None


def test_too_new_reads_aliases_and_counts_what_the_rewrite_adds():
    floor = torch_floor.parse("2.1")
    after = "backend = dist.get_default_backend_for_device(d)\nacc.synchronize()\n"
    assert torch_floor.too_new("", after, floor) == [
        ("torch.distributed.get_default_backend_for_device", "2.6")
    ]
    same = "torch.accelerator.synchronize()\n"
    assert torch_floor.too_new(same, same, floor) == []  # already there: the project's own
    assert torch_floor.too_new("", same, None) == []


def test_a_declared_floor_leaves_what_needs_newer_torch(tmp_path, capsys):
    _tree(tmp_path, {"pyproject.toml": PYPROJECT})
    main([str(tmp_path), "--diff", "--unsafe-fixes"])
    out = capsys.readouterr()
    assert out.out == ""
    assert (
        "needs torch>=2.6 (torch.accelerator.synchronize); the project supports torch>=2.1 (pyproject.toml)"
        in out.err
    )
    assert "needs torch>=2.4 (torch.Stream)" in out.err


def test_a_given_floor_lets_through_what_it_has(tmp_path, capsys):
    _tree(tmp_path, {"pyproject.toml": PYPROJECT})
    main([str(tmp_path), "--diff", "--unsafe-fixes", "--torch-floor", "2.6"])
    out = capsys.readouterr()
    assert (
        "+    torch.accelerator.synchronize()" in out.out
        and "+    return torch.Stream()" in out.out
    )
    assert "torch.accelerator.empty_cache" not in out.out
    assert (
        "needs torch>=2.13 (torch.accelerator.empty_cache on MPS); the project supports torch>=2.6 (--torch-floor)"
        in out.err
    )
    main([str(tmp_path), "--diff", "--unsafe-fixes", "--torch-floor", "none"])
    assert "+        torch.accelerator.empty_cache()" in capsys.readouterr().out


@pytest.mark.parametrize(
    "code, want",
    [
        (  # the lowest release tested, under any spelling; the floor is the release before it
            'if Version(torch.__version__) >= Version("2.6.0"): pass\n'
            'if is_torch_version(">=", "2.4.0"): pass\n',
            ((2, 3), "pkg/b.py tests torch>=2.4"),
        ),
        ('OK = hasattr(torch, "accelerator")\n', ((2, 5), "pkg/b.py tests torch>=2.6")),
        (
            "if digit_version(torch.__version__) >= digit_version('2.0'): pass\n",
            ((1, 0), "pkg/b.py tests torch>=2.0"),
        ),
        (
            'if torch.__version__ < "2.6": pass\nhasattr(torch, "compile")\n',
            None,
        ),  # no test for newer
    ],
)
def test_implied_by_the_code(tmp_path, code, want):
    _tree(tmp_path, {"pkg/b.py": "import torch\n" + code})
    assert torch_floor.implied(tmp_path) is None  # no packaging: a folder, not a project
    (tmp_path / "setup.cfg").write_text("[metadata]\nname = x\n")
    got = torch_floor.implied(tmp_path)
    assert (got.version, got.source) == want if want else got is None
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text("")
    assert torch_floor.implied(tmp_path) is None  # torch's own tree


def test_a_declared_floor_wins_over_the_code(tmp_path, capsys):
    code = 'import torch\nif is_torch_version(">=", "1.9"): pass\n'
    _tree(tmp_path, {"pyproject.toml": PYPROJECT, "pkg/b.py": code})
    assert torch_floor.resolve("auto", tmp_path).source == "pyproject.toml"
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    assert torch_floor.resolve("auto", tmp_path).version == (1, 8)
    main([str(tmp_path), "--diff", "--unsafe-fixes"])
    assert "the project supports torch>=1.8 (pkg/b.py tests torch>=1.9)" in capsys.readouterr().err


def test_explain_says_what_generate_does(tmp_path):
    _tree(tmp_path, {"pyproject.toml": PYPROJECT})
    said = explain(tmp_path / "pkg/a.py", 10, tmp_path)
    assert "LEFT: needs torch>=2.13 (torch.accelerator.empty_cache on MPS)" in said
    said = explain(tmp_path / "pkg/a.py", 10, tmp_path, torch_floor="none")
    assert "REWRITTEN" in said


def test_a_bad_floor_is_refused_before_the_scan(tmp_path, capsys):
    _tree(tmp_path, {})
    assert main([str(tmp_path), "--diff", "--torch-floor", "two"]) == 2
    assert "--torch-floor: not a torch release: 'two'" in capsys.readouterr().err


def test_every_api_of_the_table_is_in_the_installed_torch():
    """The table is read from the wheels (``tests/benchmarks/torch_api_since.py --check``);
    here, every entry the installed release is new enough for resolves on it."""
    have = tuple(int(x) for x in torch.__version__.split("+")[0].split(".")[:2])
    table = torch_floor.since_table()
    assert len(table) >= 30
    for api, since in table.items():
        if torch_floor.key(since) <= have:
            operator.attrgetter(api.removeprefix("torch."))(torch)


def test_an_autocast_device_type_read_from_a_value_needs_mps_autocast():
    # torch.autocast refuses "mps" before 2.5 (enabled=False or not): a device type read from a
    # value may be that (coqui-tts' speaker encoder declares torch>=2.2; round 29)
    value = torch_floor.VALUE_AUTOCAST
    old, new = (
        'with torch.autocast("cuda", enabled=False):',
        "with torch.autocast(x.device.type, enabled=False):",
    )
    assert torch_floor.too_new(old, new, torch_floor.parse("2.2")) == [value]
    assert torch_floor.too_new(old, new, torch_floor.parse("2.5")) == []
    legacy = "with torch.amp.autocast(device_type=device, dtype=torch.bfloat16):"
    assert torch_floor.too_new("with torch.cuda.amp.autocast():", legacy, torch_floor.parse("2.4"))
    # a string, or keywords only: no value to read
    for same in ('with torch.autocast(device_type="cpu"):', "with autocast(enabled=amp):"):
        assert torch_floor.too_new("", same, torch_floor.parse("2.2")) == []


SCRIPT = """import argparse

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--cuda", action="store_true")
opt = parser.parse_args()
model = torch.load("model.pth")
x = torch.ones(1)
if opt.cuda:
    model = model.cuda()
    x = x.cuda()
print(model(x))
"""

TEST_MODULE = """import torch

SIZE = 2


def test_forward():
    model = torch.nn.Linear(SIZE, SIZE).cuda()
    x = torch.ones(1, SIZE).cuda()
    assert model(x).shape == (1, SIZE)
"""


@pytest.mark.parametrize(
    "rel, text", [("scripts/infer.py", SCRIPT), ("tests/test_a.py", TEST_MODULE)]
)
def test_no_name_for_a_device_line_the_floor_forbids(tmp_path, capsys, rel, text):
    """A script's ``device`` line and a test module's ``DEVICE_TYPE`` need torch>=2.6
    (``torch.accelerator``): under an older floor neither is written, and so no ``.to(device)``
    reads it (ignite's ``super_resolve.py``, peft's Megatron test, round 31: ``.to(device)`` with
    no ``device`` bound). The same sites with the newest torch get both."""
    (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / rel).write_text(text)
    (tmp_path / "requirements.txt").write_text("torch>=1.7\n")
    main([str(tmp_path), "--diff", "--unsafe-fixes"])
    out = capsys.readouterr()
    assert ".to(device)" not in out.out and ".to(DEVICE_TYPE)" not in out.out, out.out
    assert "needs torch>=2.6" in out.err
    main([str(tmp_path), "--diff", "--unsafe-fixes", "--torch-floor", "none"])
    new = capsys.readouterr().out
    assert ("\n+device = " in new and ".to(device)" in new) or (
        "\n+DEVICE_TYPE = " in new and ".to(DEVICE_TYPE)" in new
    ), new


def test_a_memory_call_needs_the_release_where_it_runs_on_mps():
    # torch.accelerator's memory calls raise on MPS before 2.13 (its allocator became a
    # DeviceAllocator there), where torch.cuda's did nothing on a Mac (yolov5's memory log,
    # round 37): a floor before it cannot merge them; other APIs keep their own release
    old, new = "torch.cuda.empty_cache()", "torch.accelerator.empty_cache()"
    assert torch_floor.too_new(old, new, torch_floor.parse("2.10")) == [
        ("torch.accelerator.empty_cache on MPS", "2.13")
    ]
    assert torch_floor.too_new(old, new, torch_floor.parse("2.13")) == []
    sync = "torch.accelerator.synchronize()"
    assert torch_floor.too_new("torch.cuda.synchronize()", sync, torch_floor.parse("2.10")) == []
    for api in torch_floor.mps_table():
        assert api in torch_floor.since_table()
