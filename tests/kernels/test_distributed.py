"""trn's c10d backend (kernels/trn/distributed.py): parity with CPU+gloo, defaults, bad input.

Each job runs in fresh worker processes (tests/kernels/dist_parity.py), 2 ranks, tiny model,
5 steps; the 4-rank run is `python tests/kernels/dist_parity.py --world 4`.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import dist_parity  # tests/kernels is on sys.path (rootdir-less test dir)
import pytest
import torch
import torch.distributed as dist

pytestmark = pytest.mark.skipif(not dist.is_available(), reason="torch built without distributed")


def test_backend_registered_for_the_device():
    name = torch._C._get_privateuse1_backend_name()
    assert dist.get_default_backend_for_device(name) == name
    assert dist.Backend(name) == name
    assert name in dist.Backend.backend_list


def test_cpu_alias_is_zero_copy():
    from kernels.trn.distributed import cpu_alias

    t = torch.arange(12, dtype=torch.float32, device="trn").reshape(3, 4)[:, 1:3]
    a = cpu_alias(t)
    assert a.device.type == "cpu" and a.shape == t.shape and a.stride() == t.stride()
    assert a.data_ptr() == t.data_ptr()
    a.mul_(-1)  # writes through to the trn tensor
    torch.testing.assert_close(t.cpu(), -torch.arange(12.0).reshape(3, 4)[:, 1:3])


@pytest.mark.parametrize("mode", ["ddp", "fsdp", "tp"])
def test_parity_with_cpu_gloo_two_ranks(mode, tmp_path):
    # generous bound: the box running the suite may be shared; a hang is the failure caught here
    n = dist_parity.parity(mode, 2, tmp_path, steps=5, timeout=400)
    assert n > 5 * 3 * 4  # loss, output, 4 grads and 4 params per step per rank, plus extras


def _worker_env(**kw):
    env = dict(os.environ, PYTHONPATH=str(dist_parity.ROOT), MASTER_ADDR="127.0.0.1")
    env["MASTER_PORT"] = str(dist_parity.free_port())
    env.update(kw)
    return env


def test_rank_whose_core_is_not_visible(tmp_path):
    code = "import kernels.trn, torch.distributed as d; d.init_process_group()"
    env = _worker_env(RANK="0", LOCAL_RANK="1", WORLD_SIZE="1", NEURON_RT_VISIBLE_CORES="0")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=300)  # fmt: skip
    assert r.returncode != 0
    assert "LOCAL_RANK=1 has no core" in r.stderr and "NEURON_RT_VISIBLE_CORES='0'" in r.stderr


def test_peer_death_is_an_error_not_a_hang(tmp_path):
    with pytest.raises(RuntimeError) as info:
        dist_parity.launch("peerdeath", "trn", 2, Path(tmp_path), timeout=300,
                           env={"HN_DIST_TIMEOUT": "10"})  # fmt: skip
    log = str(info.value)
    assert "SURVIVOR-ERROR" in log, log
    secs = float(log.split("SURVIVOR-ERROR after ")[1].split("s:")[0])
    assert secs < 10 + 20, log  # within the group timeout (plus slack for a loaded box)


def test_gloo_never_frees_the_last_reference_to_an_alias():
    # c10d destroys ProcessGroupGloo with the GIL held (DDP's Reducer, the group's destructor)
    # while joining gloo's threads; a thread freeing the last reference to a Python-made tensor
    # needs the GIL, so the group keeps every alias until nothing else holds it: a Work the
    # caller keeps, a completed one included, and gloo's own threads (kernels/trn/distributed.py)
    code = (
        "import gc, kernels.trn, torch, torch.distributed as d\n"
        "d.init_process_group(rank=0, world_size=1)\n"
        "pg = d.group.WORLD\n"
        "t = torch.ones(4, device='trn')\n"
        "w = d.broadcast(t, 0, async_op=True)\n"
        "w.wait()\n"
        "d.all_reduce(torch.ones(2, device='trn'))\n"  # a later op prunes what is idle
        "held = [a for _, aliases in pg._keep for a in aliases]\n"
        "assert any(a._use_count() > 1 for a in held), 'a completed Work still held lost its alias'\n"
        "del w\n"
        "gc.collect()\n"
        "d.destroy_process_group()\n"  # shutdown(): gloo lets go, the aliases go here
        "assert pg._keep == [], pg._keep\n"
        "print('OK')\n"
    )
    r = subprocess.run([sys.executable, "-c", code], env=_worker_env(), capture_output=True,
                       text=True, timeout=300)  # fmt: skip
    assert r.returncode == 0 and "OK" in r.stdout, r.stdout + r.stderr


def test_mismatched_world_sizes_fail_fast_with_a_clear_error():
    # rank 0 started for 2 ranks, rank 1 for 3; without the check gloo's connect waits for the
    # group timeout (60 s here) and reports a bare connect/store timeout
    code = (
        "import datetime, time, kernels.trn, torch.distributed as d\n"
        "t0 = time.monotonic()\n"
        "try:\n"
        "    d.init_process_group(timeout=datetime.timedelta(seconds=60))\n"
        "except RuntimeError as e:\n"
        "    print(f'FAILED after {time.monotonic() - t0:.1f}s: {e}')\n"
        "    raise SystemExit(4)\n"
    )
    port = str(dist_parity.free_port())
    procs = [
        subprocess.Popen([sys.executable, "-c", code], env=_worker_env(RANK=str(r), LOCAL_RANK=str(r),
                         WORLD_SIZE=str(w), MASTER_PORT=port), stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
        for r, w in ((0, 2), (1, 3))
    ]  # fmt: skip
    try:
        outs = [p.communicate(timeout=300)[0] for p in procs]
    finally:
        for p in procs:
            p.kill()
    for (r, mine, theirs), p, out in zip(((0, 2, 3), (1, 3, 2)), procs, outs):
        assert p.returncode == 4, out
        assert "mismatched world sizes" in out, out
        assert f"rank {r} was started with WORLD_SIZE={mine}" in out, out
        assert f"WORLD_SIZE={theirs}" in out, out
        secs = float(out.split("FAILED after ")[1].split("s:")[0])
        assert secs < 60, out  # before the group timeout, not at it


def test_accelerator_api_and_autoport_use_it(tmp_path):
    import accelerator_api

    assert accelerator_api.distributed_backend() == torch._C._get_privateuse1_backend_name()
    code = (
        "import kernels.trn, accelerator_api.autoport, torch.distributed as d\n"
        "d.init_process_group('nccl', rank=0, world_size=1)\n"
        "print(d.get_backend_config(), type(d.group.WORLD).__name__)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], env=_worker_env(HN_AUTOPORT_QUIET="1"),
                       capture_output=True, text=True, timeout=300)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "trn:trn TrnProcessGroup" in r.stdout, r.stdout + r.stderr


def _run_ranks(cmd, world, env, timeout=400):
    port = str(dist_parity.free_port())
    procs = [
        subprocess.Popen(cmd, env=_worker_env(RANK=str(r), LOCAL_RANK=str(r), WORLD_SIZE=str(world),
                         MASTER_PORT=port, **env), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True)
        for r in range(world)
    ]  # fmt: skip
    outs = []
    try:
        for p in procs:
            outs.append(p.communicate(timeout=timeout)[0])
    finally:
        for p in procs:
            p.kill()
    assert all(p.returncode == 0 for p in procs), "\n---\n".join(outs)
    return outs


def test_neuron_compat_training_loop_unmodified():
    script = str(Path(__file__).with_name("neuron_train.py"))
    outs = _run_ranks([sys.executable, "-m", "kernels.neuron", script], 2, {})
    for r, out in enumerate(outs):
        line = [s for s in out.splitlines() if s.startswith(f"rank {r}:")][0]
        assert "device=neuron:" in line and "params_equal_across_ranks=True" in line, out
        first, last = (float(v) for v in line.split("loss ")[1].split(" params")[0].split(" -> "))
        assert last < first / 2, line  # it trains


def test_real_torch_neuronx_wins_and_mode_is_off_by_default(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("import torch_neuronx\nprint(getattr(torch_neuronx, 'WHICH', 'emulated'))\n")
    env = _worker_env()
    run = [sys.executable, "-m", "kernels.neuron", str(probe)]
    r = subprocess.run(run, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "emulated", r.stdout + r.stderr
    real = tmp_path / "site" / "torch_neuronx"
    real.mkdir(parents=True)
    (real / "__init__.py").write_text("WHICH = 'real'\n")
    env["PYTHONPATH"] += os.pathsep + str(real.parent)
    r = subprocess.run(run, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "real", r.stdout + r.stderr
    code = "import kernels.trn\nimport torch_neuronx\n"  # no compat mode: no emulated package
    r = subprocess.run([sys.executable, "-c", code], env=_worker_env(), capture_output=True,
                       text=True, timeout=300)  # fmt: skip
    assert r.returncode != 0 and "No module named 'torch_neuronx'" in r.stderr, r.stderr


def test_the_group_is_opaque_to_dynamo_once_imported_and_registering_does_not_import_it():
    """Registering trn leaves Dynamo unimported (it costs every trn process seconds); importing
    it later disables tracing into the group's methods, before anything can trace."""
    code = (
        "import sys, torch, kernels.trn\n"
        "from kernels.trn.distributed import TrnProcessGroup as G\n"
        "torch.ones(2, device='trn')\n"
        "assert 'torch._dynamo' not in sys.modules, 'registering imported Dynamo'\n"
        "assert not hasattr(G.allreduce, '_torchdynamo_disable')\n"
        "import torch._dynamo\n"
        "assert G.allreduce._torchdynamo_disable and G.barrier._torchdynamo_disable\n"
    )
    r = subprocess.run([sys.executable, "-c", code], env=_worker_env(), capture_output=True,
                       text=True, timeout=300)  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
