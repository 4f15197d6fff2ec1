"""Where the project is not installed (a GPU machine where nothing could be installed): the
matrix's OpInfo worker is started with the project on its path, the device bootstrap finds the
project's own plugin (trn), and a device whose worker dies before its first op measured nothing,
so the matrix says so and fails (it once wrote an empty column and exited 0)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from hn_skip import skip_environment

from patches.common.device_boot import UNAVAILABLE_RC
from patches.common.runner import BOOT, PROJECT_ROOT
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


def test_the_bootstrap_finds_the_trn_plugin_where_the_project_is_not_installed(tmp_path):
    """The editable install's finder taken away, run from another folder: ``kernels`` is not
    importable there, yet the bootstrap imports the project's own plugin (a failure to build or
    boot trn would be another message: only the import is asserted)."""
    code = (
        "import runpy, sys\n"
        "sys.meta_path[:] = [f for f in sys.meta_path if 'editable' not in repr(f).lower()]\n"
        "try:\n    import kernels\nexcept ModuleNotFoundError:\n    pass\n"
        "else:\n    sys.exit('kernels importable without the project: the test proves nothing')\n"
        f"sys.argv = [{str(BOOT)!r}, 'trn', '--probe']\n"
        f"runpy.run_path({str(BOOT)!r}, run_name='__main__')\n"
    )
    env = {**os.environ, "TORCH_DEVICE_BACKEND_AUTOLOAD": "0", "PYTHONPATH": ""}
    r = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
        timeout=1200,
    )  # fmt: skip
    assert "No module named 'kernels'" not in r.stderr and "proves nothing" not in r.stderr
    if r.returncode == UNAVAILABLE_RC:  # imported, but could not build or boot: not this test's
        skip_environment(r.stderr.strip().splitlines()[-1])
    assert r.returncode == 0, r.stderr[-2000:]
