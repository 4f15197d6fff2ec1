"""A device run with 2 workers really spreads its tests over pytest-xdist processes.

`-n auto` shares the cores among the runs that go at once, and uses xdist only from 4 cores up
(docs/validation.md), so on a 2-core box a device run goes through xdist only when the worker
count is given: `-n 2` / ``workers=2`` forces it. The
tiny test tree below records, in each test, which process ran it and what device it saw; the
assertions fail if the run stayed in one process or a worker did not boot the device.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from hn_skip import skip_environment

from patches.common import runner, runpool
from patches.common.cli import UsageError
from patches.validate import args as vargs
from patches.validate import run as vrun
from patches.validate.options import ValidateOptions

TINY = """
import json, os
import torch

def _record(name):
    out = os.environ["HN_XDIST_PROBE"]
    acc = torch.accelerator.current_accelerator()
    with open(os.path.join(out, f"{name}-{os.getpid()}.json"), "w") as fh:
        json.dump({"worker": os.environ.get("PYTEST_XDIST_WORKER"), "pid": os.getpid(),
                   "accelerator": acc.type if acc is not None else None,
                   "backend": torch._C._get_privateuse1_backend_name()}, fh)

{tests}
"""


def tiny_tree(root: Path, n: int = 6) -> list[str]:
    body = "\n".join(
        f"def test_{i}():\n    import time; time.sleep(0.3)\n    _record('t{i}')\n"
        for i in range(n)
    )
    (root / "test_tiny.py").write_text(TINY.replace("{tests}", body))
    return ["test_tiny.py"]


def test_auto_is_decided_per_validation_and_a_given_count_always_holds(monkeypatch):
    assert vargs.parse_xdist("auto") == runpool.AUTO_XDIST
    assert vargs.parse_xdist("2") == 2  # explicit: xdist even on 2 cores
    assert vargs.parse_xdist("0") == 0
    with pytest.raises(UsageError):
        vargs.parse_xdist("-3")


@pytest.mark.parametrize(
    "cores, runs, jobs, expected",
    [
        (2, 4, 0, (0, 2)),  # below 4 cores: in the pytest process, one run per core
        (16, 4, 0, (4, 4)),  # 16 cores, cpu and cuda before/after: 4 runs of 4 workers at once
        (16, 6, 0, (2, 8)),  # three devices: 2 workers each, all six at once
        (16, 12, 0, (0, 16)),  # a share under 2: each run in its process, one per core
        (16, 4, 2, (8, 2)),  # -j 2: the cores shared by the 2 runs that go together
        (8, 1, 0, (8, 1)),  # one run has every core
    ],
)
def test_auto_shares_the_cores_among_the_runs_that_go_at_once(
    monkeypatch, cores, runs, jobs, expected
):
    monkeypatch.setattr(runpool.os, "sched_getaffinity", lambda _: set(range(cores)), raising=False)
    opts = ValidateOptions(
        tree=".", series=".", devices=["cpu"], xdist=runpool.AUTO_XDIST, jobs=jobs
    )
    assert vrun._workers(opts, runs) == expected
    # a given count is used as given; the runs at once then count its workers
    opts = ValidateOptions(tree=".", series=".", devices=["cpu"], xdist=3)
    assert vrun._workers(opts, runs) == (3, max(1, cores // 3))


def _tree_and_probe(tmp_path, monkeypatch):
    """An empty test tree and the folder where each test records the process it ran in."""
    root, probe = tmp_path / "tree", tmp_path / "probe"
    root.mkdir()
    probe.mkdir()
    monkeypatch.setenv("HN_XDIST_PROBE", str(probe))
    return root, probe


@pytest.mark.parametrize("device", ["cpu", "trn"])
def test_two_workers_run_the_tests_in_two_xdist_processes(tmp_path, monkeypatch, device):
    pytest.importorskip("xdist")
    root, probe = _tree_and_probe(tmp_path, monkeypatch)
    r = runner.run_tests(
        root,
        tiny_tree(root),
        device,
        "after",
        runner.PytestRun(
            tmp_path / "runs",
            pythonpath=[Path(__file__).resolve().parents[2]],  # kernels.trn for the workers
            timeout=600,
            xdist=2,
        ),
    )
    if device == "trn" and r.rc not in (0, 1):
        skip_environment(f"trn cannot boot here (rc {r.rc}): {r.log_tail[-500:]}")
    assert r.rc == 0, r.log_tail[-3000:]
    assert r.xdist == 2 and ["-n", "2"] == r.command[r.command.index("-n") :][:2]
    assert sorted(o.status for o in r.outcomes) == ["pass"] * 6, r.outcomes
    seen = [json.loads(p.read_text()) for p in sorted(probe.glob("*.json"))]
    assert len(seen) == 6
    # every test ran in an xdist worker, and the tests were spread over both of them
    assert {s["worker"] for s in seen} == {"gw0", "gw1"}, seen
    assert len({s["pid"] for s in seen}) == 2
    # the plugin booted the device in each worker (a fresh interpreter the bootstrap never saw)
    if device == "trn":
        assert {s["backend"] for s in seen} == {"trn"}
        assert {s["accelerator"] for s in seen} == {"trn"}
    else:
        assert {s["accelerator"] for s in seen} == {None}
    # one progress log per worker process (the controller runs no test)
    logs = sorted(p.name for p in (tmp_path / "runs" / f"progress-after-{device}").iterdir())
    assert [n.split("-")[1] for n in logs if "-gw" in n] == ["gw0", "gw1"], logs


def test_one_worker_stays_in_process(tmp_path, monkeypatch):
    root, probe = _tree_and_probe(tmp_path, monkeypatch)
    r = runner.run_tests(
        root, tiny_tree(root, 2), "cpu", "after", runner.PytestRun(tmp_path / "runs", xdist=1)
    )
    assert r.rc == 0, r.log_tail[-3000:]
    assert "-n" not in r.command and r.xdist == 0
    seen = [json.loads(p.read_text()) for p in probe.glob("*.json")]
    assert [s["worker"] for s in seen] == [None, None]
    assert sys.executable == r.command[0]


def test_a_run_from_inside_an_xdist_worker_does_not_inherit_its_identity(monkeypatch):
    """`make test` runs this suite with -n: a device run started from a worker is a pytest session
    of its own (with the variables, its plugin booted as worker gw0 and the child's controller
    thought it was a worker; test_one_worker_stays_in_process then saw 'gw0', not None)."""
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw7")
    monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", "8")
    monkeypatch.setenv("PYTEST_XDIST_TESTRUNUID", "abc")
    env = runner.device_env("cpu")
    assert not {k for k in env if k.startswith("PYTEST_XDIST_")}, env
    assert env["HN_TEST_DEVICE"] == "cpu"
