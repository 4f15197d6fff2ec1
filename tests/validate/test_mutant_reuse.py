"""One pytest process for a hunk's mutants: which mutants a code swap can put in place
(patches.validate.swap), the plugin that runs them one after the other (hn_mutant_plugin, on a
toy project: no torch), and how the mutation check uses a batch (a kill confirmed in a fresh
process unless it was the process's first mutant)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from patches.common.outcome import Outcome
from patches.common.runner import PLUGIN_DIR
from patches.validate import hunks as hunkcov
from patches.validate import mutation
from patches.validate.swap import swap_target

MOD = '''import functools

LIMIT = 3


def add(x, y=1):
    """Add."""
    total = x + y
    return total


class Box:
    @property
    def size(self):
        return LIMIT * 2


REGISTRY = {"add": functools.partial(add, y=1)}
'''


def _mut(old: str, new: str) -> str:
    assert old in MOD
    return MOD.replace(old, new, 1)


def test_only_changes_inside_one_function_body_are_swapped():
    assert swap_target(MOD, _mut("total = x + y", "total = x - y")) == "add"
    assert swap_target(MOD, _mut("return LIMIT * 2", "return LIMIT * 3")) == "Box.size"
    # lines added or removed inside the body still swap (a revert of another length)
    assert swap_target(MOD, _mut("    return total\n", "    total += 0\n    return total\n"))
    assert swap_target(MOD, _mut("    total = x + y\n", "")) == "add"
    # evaluated at import: a default, a decorator, module-level code
    assert swap_target(MOD, _mut("def add(x, y=1):", "def add(x, y=2):")) is None
    assert swap_target(MOD, _mut("    @property\n", "")) is None
    assert swap_target(MOD, _mut("LIMIT = 3", "LIMIT = 4")) is None
    nested = "class Outer:\n    class Inner:\n        def f(self):\n            return 1\n"
    assert swap_target(nested, nested.replace("return 1", "return 2")) is None


TESTS = """import mod

HELD = mod.REGISTRY["add"]  # a reference taken at import: it sees the swapped code too


def test_add():
    assert mod.add(1) == 2


def test_held():
    assert HELD(2) == 3


def test_box():
    assert mod.Box().size % 2 == 0
"""


def _plugin_run(tmp_path: Path, mutants: list[tuple[str, str]], stop: bool) -> list[dict]:
    (tmp_path / "mod.py").write_text(MOD)
    (tmp_path / "test_mod.py").write_text(TESTS)
    spec_mutants = []
    for k, (qualname, source) in enumerate(mutants, 1):
        (tmp_path / f"m{k}.txt").write_text(source)
        m = {"index": k, "file": str(tmp_path / "mod.py"), "qualname": qualname}
        spec_mutants.append({**m, "source": str(tmp_path / f"m{k}.txt")})
    results = tmp_path / "results.jsonl"
    spec = {"results": str(results), "mutants": spec_mutants, "stop_at_kill": stop}
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(PLUGIN_DIR), str(tmp_path)])}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
         "hn_validate_plugin", "-p", "hn_mutant_plugin", f"--hn-mutants={tmp_path / 'spec.json'}",
         "--rootdir", str(tmp_path), "test_mod.py"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode in (0, 1, 5), proc.stdout + proc.stderr
    assert (tmp_path / "mod.py").read_text() == MOD  # nothing written on disk
    return [json.loads(line) for line in results.read_text().splitlines()]


def test_plugin_runs_each_mutant_in_turn_and_stops_at_the_first_kill(tmp_path):
    lines = _plugin_run(
        tmp_path,
        [
            ("add", _mut("total = x + y", "total = y + x")),  # equivalent: survives
            ("Box.size", _mut("return LIMIT * 2", "return LIMIT * 1")),  # 3: killed
            ("add", _mut("total = x + y", "total = x - y")),  # after a kill: not run
        ],
        stop=True,
    )
    ends = {r["end"]: r for r in lines if "end" in r}
    assert [r.get("start") for r in lines if "start" in r] == [1, 2]
    assert ends[1]["swapped"] and ends[1]["killed_by"] is None
    assert ends[2]["killed_by"] == "test_mod::test_box"
    assert ends[2]["status"] == "fail" and "assert" in ends[2]["message"]


def test_plugin_sees_a_reference_taken_at_import_and_restores_between_mutants(tmp_path):
    lines = _plugin_run(
        tmp_path,
        [
            ("nothere", MOD),  # no such function: not swapped, the caller runs it fresh
            ("add", _mut("total = x + y", "total = x * y")),  # add(1) is 1: test_add fails
            ("add", MOD),  # the original code: survives only if mutant 2's code was put back
            # wrong for x == 2 only: only the partial the test module took at import sees it
            ("add", _mut("total = x + y", "total = x + y + (x == 2)")),
        ],
        stop=False,
    )
    ends = {r["end"]: r for r in lines if "end" in r}
    assert ends[1]["swapped"] is False and "no live function nothere" in ends[1]["why"]
    assert ends[2]["killed_by"] == "test_mod::test_add"
    assert ends[3]["swapped"] and ends[3]["killed_by"] is None
    assert ends[4]["killed_by"] == "test_mod::test_held"


SRC = "import torch\n\n\ndef f():\n    return torch.accelerator.is_available()\n"
PATCH = """diff --git a/m.py b/m.py
--- a/m.py
+++ b/m.py
@@ -3,3 +3,3 @@
 
 def f():
-    return torch.cuda.is_available()
+    return torch.accelerator.is_available()
"""


@dataclass
class _Run:
    rc: int | None
    outcomes: list = field(default_factory=list)


class _Runs:
    """Stubbed runs: the batch's results are given; fresh runs are recorded and pass or fail."""

    def __init__(self, batch: dict[int, dict], fresh_kills: bool, outside: bool = False):
        self.results, self.fresh_kills, self.outside = batch, fresh_kills, outside
        self.fresh: list[tuple[list[str], str]] = []
        self.batches: list[list[int]] = []

    def __call__(self, nodes, dev, tag, timeout):
        self.fresh.append((nodes, tag))
        status = "fail" if self.fresh_kills else "pass"
        return _Run(1, [Outcome("test_m.T::test_a", dev, "after", status, 0.1, "boom")])

    def batch(self, nodes, dev, tag, timeout, mutants):
        self.batches.append([m["index"] for m in mutants])
        return {k: v for k, v in self.results.items() if k in self.batches[-1]}

    def ran_outside_tests(self, dev, path, lines):
        return self.outside


def _check(tmp_path: Path, runs: _Runs) -> dict:
    (tmp_path / "m.py").write_text(SRC)
    (tmp_path / "0001-x.patch").write_text(PATCH)
    hunk = hunkcov.series_hunks([tmp_path / "0001-x.patch"])[0]
    hunk.statements = [5]
    tests = ["test_m.T::test_a"]
    entry = {
        "key": hunk.key(),
        "statements": [5],
        "devices": {"cpu": {"state": "measured", "tests": tests, "passing_tests": tests}},
    }
    out = mutation.check_hunk(
        tmp_path, hunk, PATCH, entry, runs, mutation.Options(), ["test_m.py"], lambda m: None
    )
    assert (tmp_path / "m.py").read_text() == SRC
    return out["cpu"]


def _res(killed_by=None):
    r = {"swapped": True, "killed_by": killed_by, "seconds": 0.1}
    return {**r, "status": "fail", "message": "boom"} if killed_by else r


def test_batch_survivors_cost_no_fresh_process(tmp_path):
    runs = _Runs({1: _res(), 2: _res(), 3: _res()}, fresh_kills=True)
    res = _check(tmp_path, runs)
    assert len(runs.batches) == 1 and runs.fresh == []
    assert res["verdict"] == "unchecked" and not any(m["killed"] for m in res["mutants"])


def test_a_kill_after_an_earlier_mutant_is_confirmed_in_a_fresh_process(tmp_path):
    runs = _Runs({1: _res(), 2: _res("test_m.T::test_a")}, fresh_kills=True)
    res = _check(tmp_path, runs)
    assert runs.fresh == [(["test_m.py::T::test_a"], "0001-x.patch_1-cpu-2-confirm")]
    assert res["verdict"] == "checked" and res["mutants"][1]["killed_by"] == "test_m.T::test_a"
    # not confirmed: the mutant survives a fresh run of all the tests, the next one is tried
    runs = _Runs({1: _res(), 2: _res("test_m.T::test_a")}, fresh_kills=False)
    res = _check(tmp_path, runs)
    assert [tag for _, tag in runs.fresh][:2] == [
        "0001-x.patch_1-cpu-2-confirm",
        "0001-x.patch_1-cpu-2",
    ]
    assert res["verdict"] == "unchecked" and not res["mutants"][1]["killed"]


def test_the_first_mutant_of_a_batch_needs_no_confirmation(tmp_path):
    runs = _Runs({1: _res("test_m.T::test_a")}, fresh_kills=False)
    res = _check(tmp_path, runs)
    assert runs.fresh == [] and res["verdict"] == "checked"
    assert res["mutants"][0]["why"] == "fail: boom"
    assert res["mutants"][0]["node"] == "test_m.py::T::test_a"


def test_a_hunk_that_ran_outside_tests_runs_each_mutant_fresh(tmp_path):
    runs = _Runs({1: _res()}, fresh_kills=False, outside=True)
    res = _check(tmp_path, runs)
    assert runs.batches == [] and len(runs.fresh) == len(res["mutants"]) > 0
