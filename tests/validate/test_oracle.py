"""The CPU behaviour oracle: real pytest runs with ``hn_oracle_plugin`` over a small before/after
pair of a library, then ``oracle.compare``. A copy that breaks storage sharing is named with
the test and the call; a behaviour-preserving rewrite comes out clean."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from patches.common.runner import PLUGIN_DIR, device_env
from patches.validate import hunks as hunkcov
from patches.validate import oracle

LIB = """import torch


def flat(x, device=None):
    return x.reshape(-1)


class Mover:
    def move(self, x):
        if x.dim() > 3:
            raise ValueError("too many dims")
        return x.reshape(-1)


def helper():
    return 1


class Stager:
    def __init__(self, pin_memory=False):
        if pin_memory and not torch.cuda.is_available():
            self.pin_memory = False
        else:
            self.pin_memory = pin_memory


REGISTRY = {"flat": flat}  # held by a table, as OpInfo holds its sample_inputs_func
"""

TEST = """import torch
from lib import Mover, flat


def test_flat():
    x = torch.arange(6.0).reshape(2, 3)
    assert flat(x).tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]


def test_registry_and_state():
    from lib import REGISTRY, Stager

    assert REGISTRY["flat"](torch.ones(2, 2)).shape == (4,)
    Stager(pin_memory=True)


def test_move():
    assert Mover().move(torch.ones(2, 2)).shape == (4,)
    try:
        Mover().move(torch.ones(1, 1, 1, 1))
    except (ValueError, RuntimeError):
        pass
"""


def _run(root: Path, spec: Path) -> None:
    env = device_env("cpu", [root, PLUGIN_DIR])
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(root)]
        + oracle.pytest_args(spec)
        + ["test_lib.py"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _pair(tmp_path: Path, after_lib: str) -> tuple[dict, Path]:
    for phase, text in (("before", LIB), ("after", after_lib)):
        (tmp_path / phase).mkdir()
        (tmp_path / phase / "lib.py").write_text(text)
        (tmp_path / phase / "test_lib.py").write_text(TEST)
    changed = [
        i + 1 for i, (a, b) in enumerate(zip(LIB.splitlines(), after_lib.splitlines())) if a != b
    ]
    hunk = hunkcov.Hunk("0001-x.patch", 1, "lib.py", "@@", changed, changed)
    targets = oracle.targets([hunk], tmp_path / "after")
    spec = tmp_path / "spec.json"
    assert oracle.write_spec(spec, targets, tmp_path / "rec")
    for phase in ("before", "after"):
        _run(tmp_path / phase, spec)
    return oracle.compare(tmp_path / "rec", targets), targets


def test_a_copy_that_breaks_sharing_is_named_with_test_and_call(tmp_path):
    after = LIB.replace(
        "    return x.reshape(-1)\n\n\nclass", "    return x.reshape(-1).clone()\n\n\nclass"
    )
    result, targets = _pair(tmp_path, after)
    assert targets["0001-x.patch#1"]["targets"] == [{"path": "lib.py", "qualname": "flat"}]
    diffs = result["0001-x.patch#1"]["differences"]
    assert len(diffs) == 2, diffs  # test_flat, and the call through the registry
    assert diffs[1]["test"] == "test_lib::test_registry_and_state"
    d = diffs[0]
    assert d["test"] == "test_lib::test_flat" and d["call"] == 1
    assert d["function"] == "lib.py::flat"  # reached through `from lib import flat`
    assert d["args"] == "arg 0=Tensor(float32, [2, 3], cpu)"
    assert d["what"] == ["result: shares storage with arg 0 -> its own storage"]
    lines = oracle.render_markdown([{**_entry(), "oracle": result["0001-x.patch#1"]}])
    assert "`test_lib::test_flat`, flat call 1" in "\n".join(lines)


def test_a_method_that_raises_differently_and_a_dtype_change(tmp_path):
    after = LIB.replace('raise ValueError("too many dims")', 'raise RuntimeError("too many dims")')
    after = after.replace(
        "        return x.reshape(-1)\n\n\ndef", "        return x.reshape(-1).double()\n\n\ndef"
    )
    result, targets = _pair(tmp_path, after)
    assert targets["0001-x.patch#1"]["targets"] == [{"path": "lib.py", "qualname": "Mover.move"}]
    what = {w for d in result["0001-x.patch#1"]["differences"] for w in d["what"]}
    assert "result.dtype: torch.float32 -> torch.float64" in what
    assert "result: values differ" in what
    assert "raised ValueError('too many dims') -> raised RuntimeError('too many dims')" in what


def test_a_behaviour_preserving_rewrite_is_clean(tmp_path):
    after = LIB.replace("    return x.reshape(-1)\n\n\nclass", "    return x.view(-1)\n\n\nclass")
    result, _ = _pair(tmp_path, after)
    r = result["0001-x.patch#1"]
    assert r["differences"] == [] and r["calls"] == 2  # direct, and through the registry
    assert oracle.cell({"oracle": r}) == "clean (2 calls)"


def _entry():
    return {"patch": "0001-x.patch", "hunk": 1, "path": "lib.py"}


@pytest.mark.parametrize(
    "line,name",
    [(5, "flat"), (11, "Mover.move"), (2, None), (9, "Mover.move"), (16, "helper")],
)
def test_qualname_of_the_outermost_function(line, name):
    assert oracle.qualname_at(ast.parse(LIB), line) == name


def test_value_diff_phrases():
    t = {"type": "Tensor", "dtype": "torch.float32", "shape": [2], "stride": [1], "values": "a"}
    assert oracle.value_diff(t, dict(t)) == []
    assert oracle.value_diff(t, {**t, "shape": [1, 2]}) == ["result.shape: [2] -> [1, 2]"]
    pair_b = {"type": "tuple", "len": 2, "items": [t, {"type": "int", "repr": "1"}]}
    pair_a = {"type": "tuple", "len": 2, "items": [t, {"type": "int", "repr": "2"}]}
    assert oracle.value_diff(pair_b, pair_a) == ["result[1]: 1 -> 2"]
    assert oracle.value_diff(t, {"type": "NoneType", "repr": "None"}) == [
        "result: Tensor -> NoneType"
    ]


def test_a_method_that_stores_a_different_decision_in_self(tmp_path):
    after = LIB.replace(
        "        if pin_memory and not torch.cuda.is_available():",
        "        if pin_memory and torch.cuda.is_available():",
    )
    result, targets = _pair(tmp_path, after)
    assert targets["0001-x.patch#1"]["targets"] == [
        {"path": "lib.py", "qualname": "Stager.__init__"}
    ]
    (d,) = result["0001-x.patch#1"]["differences"]
    assert d["test"] == "test_lib::test_registry_and_state"
    assert d["what"] == ["self.pin_memory: False -> True"]
