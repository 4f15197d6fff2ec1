"""trn's c10d backend (kernels/trn/distributed.py): parity with CPU+gloo, defaults, bad input.

Each job runs in fresh worker processes (tests/kernels/dist_parity.py), 2 ranks, tiny model,
5 steps; the 4-rank run is `python tests/kernels/dist_parity.py --world 4`.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import torch.distributed as dist

import dist_parity  # tests/kernels is on sys.path (rootdir-less test dir)

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
    env.update(MASTER_PORT=str(dist_parity.free_port()), **kw)
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
