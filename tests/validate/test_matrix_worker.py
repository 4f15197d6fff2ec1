"""A device whose OpInfo worker dies before its first op measured nothing: the matrix says so and
fails (it once wrote an empty column and exited 0, seen on a GPU machine without the project
installed); the worker is started with the project on its path, from any working folder."""

from __future__ import annotations

import json
import sys

from patches.common.runner import PROJECT_ROOT
from patches.matrix import cli, merge, supervise


def test_a_worker_dying_before_any_op_fails_the_matrix(tmp_path, monkeypatch, capsys):
    dead = [sys.executable, "-c", "raise SystemExit('ModuleNotFoundError: no patches here')"]
    monkeypatch.setattr(supervise, "_command", lambda job, out, skip: dead)
    out = tmp_path / "m"
    assert cli.main(["--devices", "cpu", "--ops", "abs", "--out", str(out)]) == 1
    data = json.loads((out / "matrix.json").read_text())
    assert data["worker_failures"] == {"cpu": "ModuleNotFoundError: no patches here"}
    assert not data["cells"]
    err = capsys.readouterr().err
    assert "cpu's worker died before its first op: ModuleNotFoundError" in err
    # a merge keeps the failure, naming the shard it came from
    merged = merge.merge(merge.load([str(out)]))
    assert list(merged["worker_failures"].values()) == [data["worker_failures"]["cpu"]]


def test_the_worker_finds_the_project_from_any_folder(tmp_path, monkeypatch):
    seen = {}

    def spy(cmd, cwd, env, timeout, log):
        seen.update(cwd=cwd, path=env["PYTHONPATH"].split(":"))
        log.write_text("")
        return 0, 0.0

    monkeypatch.setattr(supervise, "run_logged", spy)
    job = supervise.WorkerJob("cpu", "float32", ["abs"], tmp_path, 1, 10.0)
    supervise.run_device(job, log=lambda _: None)
    assert seen["cwd"] == tmp_path and seen["path"][0] == str(PROJECT_ROOT)
