"""Mutants of a hunk's added lines, and the mutation check's verdicts (no torch run here: the
runs are stubbed; tests/validate/test_mutation_e2e.py runs real ones)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from patches.common.outcome import Outcome
from patches.validate import hunks as hunkcov
from patches.validate import mutants, mutation

SOURCE = """import torch


def pick(x, cpu):
    if torch.accelerator.is_available() and x is not None:
        return x.to("cuda:0")[0]
    torch.cuda.synchronize()
    return [cpu, torch.device(torch.accelerator.current_accelerator().type, 0)] if flag else [cpu]
"""

PATCH = """diff --git a/m.py b/m.py
--- a/m.py
+++ b/m.py
@@ -1,3 +1,3 @@
 import torch
-x = torch.cuda.is_available()
+x = torch.accelerator.is_available()
 y = 1
"""


def _hunk(lines):
    return hunkcov.Hunk("0001-x.patch", 1, "m.py", "@@ -1 +1 @@", lines)


def test_operators_are_data_with_a_reason_each():
    ops = mutants.operators()
    assert list(ops)[0] == "revert"
    assert {"drop-method", "negate-guard", "perturb-device", "perturb-index", "drop-call"} <= set(
        ops
    )
    assert all(op.get("why") for op in ops.values())
    assert "clone" in ops["drop-method"]["methods"] and "to" in ops["drop-method"]["methods"]


def test_mutants_of_added_lines_only_each_compiles_and_differs():
    found = mutants.derive(SOURCE, _hunk([5, 6]), "", limit=20)
    assert found and {m.line for m in found} <= {5, 6}
    by_op = {m.operator: m for m in found}
    assert by_op["drop-method"].description == '`x.to("cuda:0")` -> `x`'
    assert "if not (torch.accelerator.is_available() and x is not None):" in (
        by_op["negate-guard"].source
    )
    assert by_op["swap-boolop"].description.endswith("or x is not None`")
    assert 'x.to("cpu")' in by_op["perturb-device"].source
    assert '("cuda:0")[1]' in by_op["perturb-index"].source
    for m in found:
        assert m.source != SOURCE
        compile(m.source, "m.py", "exec")
    assert len({m.source for m in found}) == len(found)


def test_limit_and_order_follow_the_yaml():
    found = mutants.derive(SOURCE, _hunk([5, 6, 7, 8]), "", limit=3)
    assert len(found) == 3
    order = list(mutants.operators())
    assert [order.index(m.operator) for m in found] == sorted(
        order.index(m.operator) for m in found
    )


def test_no_mutant_for_lines_the_hunk_does_not_add():
    assert mutants.derive(SOURCE, _hunk([1, 2]), "", limit=5) == []


def test_revert_puts_the_removed_lines_back():
    after = "import torch\nx = torch.accelerator.is_available()\ny = 1\n"
    hunk = hunkcov.series_hunks([_write(PATCH)])[0]
    rev = mutants.revert_mutant(after, hunk, PATCH)
    assert rev is not None and rev.source == "import torch\nx = torch.cuda.is_available()\ny = 1\n"
    assert rev.operator == "revert" and rev.line == 2
    # a later patch changed the block: no clean revert
    assert mutants.revert_mutant("import torch\nx = 0\ny = 1\n", hunk, PATCH) is None


def _write(text: str) -> Path:
    import tempfile

    p = Path(tempfile.mkdtemp()) / "0001-x.patch"
    p.write_text(text)
    return p


def test_node_id_from_junit_id():
    files = ["test_dlpack.py", "sub/test_x.py"]
    assert (
        mutation.node_id("test_dlpack.TestDl::test_a_cpu[x-y]", files)
        == "test_dlpack.py::TestDl::test_a_cpu[x-y]"
    )
    assert mutation.node_id("sub.test_x::test_f", files) == "sub/test_x.py::test_f"
    assert mutation.node_id("sub.test_x.A.B::test_g", files) == "sub/test_x.py::A::B::test_g"
    assert mutation.node_id("other.T::t", files) is None


@dataclass
class _Run:
    rc: int | None
    outcomes: list = field(default_factory=list)


def _entry(tests):
    return {
        "key": "0001-x.patch#1",
        "statements": [2],
        "devices": {
            "cpu": {"state": "measured", "tests": tests, "passing_tests": tests},
            "trn": {"state": "measured", "tests": [], "passing_tests": []},
            "cuda": {"state": "absent: no GPU"},
        },
    }


def test_verdicts_checked_unchecked_unexercised_and_file_restored(tmp_path):
    (tmp_path / "m.py").write_text("import torch\nx = torch.accelerator.is_available()\ny = 1\n")
    hunk = hunkcov.series_hunks([_write(PATCH)])[0]
    hunk.statements = [2]
    seen = []

    def killing(nodes, dev, tag, timeout):
        seen.append((nodes, dev, (tmp_path / "m.py").read_text()))
        fail = Outcome("test_m.T::test_a", dev, "after", "fail", 0.1, "AssertionError")
        return _Run(1, [fail])

    entry = _entry(["test_m.T::test_a"])
    out = mutation.check_hunk(
        tmp_path, hunk, PATCH, entry, killing, mutation.Options(), ["test_m.py"], lambda m: None
    )
    assert out["cpu"]["verdict"] == "checked" and out["trn"]["verdict"] == "unexercised"
    assert "cuda" not in out
    assert len(seen) == 1  # stopped at the first killed mutant
    assert seen[0][0] == ["test_m.py::T::test_a"]
    assert "torch.cuda.is_available()" in seen[0][2]  # the revert mutant was in place
    assert out["cpu"]["mutants"][0]["killed_by"] == "test_m.T::test_a"
    assert (tmp_path / "m.py").read_text().count("accelerator") == 1  # put back

    def surviving(nodes, dev, tag, timeout):
        return _Run(0, [Outcome("test_m.T::test_a", dev, "after", "pass", 0.1, "")])

    entry = _entry(["test_m.T::test_a"])
    opts = mutation.Options(max_mutants=2)
    out = mutation.check_hunk(
        tmp_path, hunk, PATCH, entry, surviving, opts, ["test_m.py"], lambda m: None
    )
    assert out["cpu"]["verdict"] == "unchecked"
    assert len(out["cpu"]["mutants"]) == 2 and not any(m["killed"] for m in out["cpu"]["mutants"])


def test_a_timed_out_mutant_run_is_killed():
    assert mutation._killer(_Run(None, [])) == ("<pytest run>", "timed out")
    assert mutation._killer(_Run(0, [])) is None


def test_devices_run_side_by_side_and_each_stops_at_its_first_kill(tmp_path):
    (tmp_path / "m.py").write_text("import torch\nx = torch.accelerator.is_available()\ny = 1\n")
    hunk = hunkcov.series_hunks([_write(PATCH)])[0]
    hunk.statements = [2]
    calls = []

    def run(nodes, dev, tag, timeout):  # trn's tests kill the first mutant, cpu's none
        calls.append((dev, tag))
        status = "fail" if dev == "trn" else "pass"
        return _Run(1, [Outcome("test_m.T::test_a", dev, "after", status, 0.1, "")])

    entry = _entry(["test_m.T::test_a"])
    entry["devices"]["trn"] = dict(entry["devices"]["cpu"])
    out = mutation.check_hunk(
        tmp_path, hunk, PATCH, entry, run, mutation.Options(), ["test_m.py"], lambda m: None
    )
    assert out["trn"]["verdict"] == "checked" and len(out["trn"]["mutants"]) == 1
    assert out["cpu"]["verdict"] == "unchecked" and len(out["cpu"]["mutants"]) == 3
    assert sorted(d for d, _ in calls) == ["cpu", "cpu", "cpu", "trn"]
    assert out["trn"]["mutants"][0]["node"] == "test_m.py::T::test_a"


def test_revert_is_not_tried_where_its_tests_passed_before_the_series(tmp_path):
    """A revert puts back the hunk's before state: where every test it would run passed before
    too (cpu here; CUDA for a series that claims CUDA unchanged), its slot goes to the next
    operator; where one did not pass before (trn: the series' gain), the revert is tried first."""
    (tmp_path / "m.py").write_text("import torch\nx = torch.accelerator.is_available()\ny = 1\n")
    hunk = hunkcov.series_hunks([_write(PATCH)])[0]
    hunk.statements = [2]
    placed = {}

    def surviving(nodes, dev, tag, timeout):
        placed.setdefault(dev, []).append((tmp_path / "m.py").read_text())
        return _Run(0, [Outcome("test_m.T::test_a", dev, "after", "pass", 0.1, "")])

    entry = _entry(["test_m.T::test_a"])
    entry["devices"]["cpu"]["passed_before"] = ["test_m.T::test_a"]
    entry["devices"]["trn"] = {**entry["devices"]["cpu"], "passed_before": []}
    opts = mutation.Options(max_mutants=1, reuse=False)
    out = mutation.check_hunk(tmp_path, hunk, PATCH, entry, surviving, opts, ["test_m.py"], print)
    assert [m["operator"] for m in out["trn"]["mutants"]] == ["revert"]
    assert "torch.cuda.is_available()" in placed["trn"][0]
    assert [m["operator"] for m in out["cpu"]["mutants"]] == ["negate-predicate"]
    assert "torch.cuda" not in placed["cpu"][0]
    assert out["cpu"]["revert"].startswith("not tried") and "revert" not in out["trn"]
    assert "order" not in out["cpu"]  # working state, not part of the record
