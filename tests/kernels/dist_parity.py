"""The same distributed job on trn + its c10d backend and on CPU + gloo, compared rank by rank.

Worker:   RANK=.. WORLD_SIZE=.. python tests/kernels/dist_parity.py worker MODE DEVICE OUT
Launcher: python tests/kernels/dist_parity.py [--world 4] [--modes ddp,fsdp,tp] [--steps 5]
          [--torchrun]

With --torchrun each job is one real `torchrun --nproc-per-node WORLD` (torch.distributed.run:
its rendezvous, its env vars, its process supervision) instead of WORLD processes started here
with torchrun's env vars; OUT may then contain {rank}.

MODE is ddp (DistributedDataParallel), fsdp (FSDP2 fully_shard) or tp (DTensor
parallelize_module with ColwiseParallel/RowwiseParallel). Each rank records its loss, output,
gradients and parameters after every step; the launcher runs both devices and compares every
rank's records within float32 tolerance. The trn job calls init_process_group() with no backend:
the default for trn must be the trn backend (checked in the worker).
"""

from __future__ import annotations

import argparse
import datetime
import faulthandler
import gc
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOL = dict(rtol=1e-5, atol=1e-6)


def _full(t):
    import torch

    if hasattr(t, "full_tensor"):
        t = t.full_tensor()
    return t.detach().to("cpu", copy=True) if isinstance(t, torch.Tensor) else t


def worker(mode: str, device: str, out: str, steps: int) -> None:
    import torch
    import torch.distributed as dist

    if device != "cpu":
        import kernels.trn  # noqa: F401  (registers the device and its c10d backend)
    # a hung rank prints every thread's stack and exits before the launcher's deadline kills it
    faulthandler.dump_traceback_later(float(os.environ.get("HN_WORKER_WATCHDOG", "600")), exit=True)
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    out = out.replace("{rank}", str(rank))
    timeout = datetime.timedelta(seconds=float(os.environ.get("HN_DIST_TIMEOUT", "60")))
    if device == "cpu":
        dist.init_process_group("gloo", timeout=timeout)
    else:
        assert dist.get_default_backend_for_device(device) == device
        dist.init_process_group(timeout=timeout)  # no backend: the device's default
        # backend=None resolves to the accelerator's default: "trn:trn", our process group
        assert dist.get_backend_config() == f"{device}:{device}", dist.get_backend_config()
        assert type(dist.group.WORLD).__name__ == "TrnProcessGroup", type(dist.group.WORLD)
        assert torch.accelerator.current_device_index() == int(os.environ["LOCAL_RANK"])
    dev = (
        torch.device(device, torch.accelerator.current_device_index()) if device != "cpu" else "cpu"
    )

    if mode == "peerdeath":  # rank 1 dies before the collective; the survivors must fail
        if rank == 1:
            os._exit(3)
        t0 = time.monotonic()
        try:
            dist.all_reduce(torch.ones(4).to(dev))
        except Exception as e:  # noqa: BLE001  (report whatever c10d raised, then fail)
            print(f"SURVIVOR-ERROR after {time.monotonic() - t0:.1f}s: {type(e).__name__}: {e}")
            os._exit(4)
        os._exit(0)

    torch.manual_seed(0)  # same initial parameters on every rank
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 8)).to(
        dev
    )
    if mode == "ddp":
        from torch.nn.parallel import DistributedDataParallel as DDP

        model = DDP(model)
    elif mode == "fsdp":
        from torch.distributed.device_mesh import init_device_mesh
        from torch.distributed.fsdp import fully_shard

        mesh = init_device_mesh(device, (world,))
        fully_shard(model[0], mesh=mesh)
        fully_shard(model[2], mesh=mesh)
        fully_shard(model, mesh=mesh)
    elif mode == "tp":
        from torch.distributed.device_mesh import init_device_mesh
        from torch.distributed.tensor.parallel import (
            ColwiseParallel,
            RowwiseParallel,
            parallelize_module,
        )

        mesh = init_device_mesh(device, (world,))
        parallelize_module(model, mesh, {"0": ColwiseParallel(), "2": RowwiseParallel()})
    else:
        raise SystemExit(f"unknown mode {mode!r}")
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    # data: per rank for data parallel, the same on every rank for tensor parallel
    g = torch.Generator().manual_seed(100 + (0 if mode == "tp" else rank))
    records = []
    for _ in range(steps):
        x = torch.randn(4, 8, generator=g).to(dev)
        y = torch.randn(4, 8, generator=g).to(dev)
        outp = model(x)
        loss = torch.nn.functional.mse_loss(outp, y)
        opt.zero_grad()
        loss.backward()
        grads = {n: _full(p.grad) for n, p in model.named_parameters()}
        opt.step()
        params = {n: _full(p) for n, p in model.named_parameters()}
        records.append({"loss": _full(loss), "out": _full(outp), "grads": grads, "params": params})
    # async collective with wait(), send/recv, all_to_all, reduce_scatter, all_gather_into_tensor
    extra = {}
    t = torch.arange(world * 2, dtype=torch.float32).to(dev) + rank
    w = dist.all_reduce(t, async_op=True)
    w.wait()
    extra["allreduce_async"] = _full(t)
    o = torch.empty(world * 2, dtype=torch.float32).to(dev)
    dist.all_to_all_single(o, torch.arange(world * 2, dtype=torch.float32).to(dev) * (rank + 1))
    extra["all_to_all"] = _full(o)
    rs = torch.empty(2).to(dev)
    dist.reduce_scatter_tensor(rs, torch.arange(world * 2, dtype=torch.float32).to(dev) + rank)
    extra["reduce_scatter_tensor"] = _full(rs)
    ag = torch.empty(world * 2).to(dev)
    dist.all_gather_into_tensor(ag, torch.full((2,), float(rank)).to(dev))
    extra["all_gather_into_tensor"] = _full(ag)
    lst = [torch.empty(3).to(dev) for _ in range(world)]
    dist.all_gather(lst, torch.full((3,), rank + 0.5).to(dev))
    extra["all_gather"] = [_full(v) for v in lst]
    b = torch.full((3,), float(rank)).to(dev)
    dist.broadcast(b, src=world - 1)
    extra["broadcast"] = _full(b)
    if world >= 2 and rank < 2:
        p2p = torch.full((5,), 7.0).to(dev) if rank == 0 else torch.zeros(5).to(dev)
        (dist.send if rank == 0 else dist.recv)(p2p, 1 - rank)
        extra["p2p"] = _full(p2p)
    dist.barrier()
    torch.save({"records": records, "extra": extra}, out)
    # Drop DDP's Reducer before the process group: a Reducer freed after destroy_process_group()
    # holds the group's last reference and destroys ProcessGroupGloo with the GIL held, while
    # gloo's worker thread may still be freeing a finished Work whose tensors need the GIL to
    # die (pytorch/pytorch#56297, open): both ranks then hang at exit, ~1 run in 10 here.
    del model, opt
    gc.collect()
    dist.destroy_process_group()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env(device: str, timeout: float, env=None) -> dict:
    """The workers' environment: the CPU reference is torch alone, and a hang reports itself.

    A parent that registered trn exported HN_TRN=1 for its children (kernels/trn/register.py);
    the CPU+gloo job is the reference, so it must not load the plugin. The watchdog fires before
    the launcher's deadline, so a hung rank's stacks reach the log.
    """
    e = dict(os.environ, **(env or {}), PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
    if device == "cpu":
        e["HN_TRN"] = "0"
    e.setdefault("HN_WORKER_WATCHDOG", str(max(5.0, timeout - 15)))
    return e


def launch_torchrun(mode, device, world, outdir: Path, steps=5, timeout=120, env=None):
    """One `torchrun --nproc-per-node world` job; return the ranks' outputs or raise with logs."""
    e = _env(device, timeout, env)
    out = outdir / f"{mode}-{device}-{{rank}}.pt"
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", str(world),
           "--master-addr", "127.0.0.1", "--master-port", str(free_port()),
           __file__, "worker", mode, device, str(out), str(steps)]  # fmt: skip
    try:
        r = subprocess.run(cmd, env=e, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as x:
        raise RuntimeError(f"torchrun {mode} on {device} x{world} timed out:\n{x.output}") from x
    if r.returncode != 0:
        raise RuntimeError(f"torchrun {mode} on {device} x{world} failed:\n{r.stdout}{r.stderr}")
    return [Path(str(out).replace("{rank}", str(i))) for i in range(world)]


def launch(mode: str, device: str, world: int, outdir: Path, steps: int = 5, timeout=120, env=None,
           torchrun: bool = False):  # fmt: skip
    """Run `world` worker processes; return their outputs (list of paths) or raise with logs."""
    if torchrun:
        return launch_torchrun(mode, device, world, outdir, steps, timeout, env)
    port = free_port()
    procs = []
    for r in range(world):
        e = _env(device, timeout, env)
        e.update(
            RANK=str(r), LOCAL_RANK=str(r), WORLD_SIZE=str(world), LOCAL_WORLD_SIZE=str(world),
            MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
        )  # fmt: skip
        out = outdir / f"{mode}-{device}-{r}.pt"
        cmd = [sys.executable, __file__, "worker", mode, device, str(out), str(steps)]
        procs.append(
            (subprocess.Popen(cmd, env=e, stdout=subprocess.PIPE, stderr=subprocess.STDOUT), out)
        )
    deadline = time.monotonic() + timeout
    logs, failed = [], False
    for p, _ in procs:
        try:
            text, _ = p.communicate(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            for q, _ in procs:
                q.kill()
            text, _ = p.communicate()
            failed = True
            text += f"\n[killed: still running after {timeout} s]".encode()
        logs.append(f"[rank {len(logs)} exit {p.returncode}]\n" + text.decode(errors="replace"))
        failed |= p.returncode != 0
    if failed:
        raise RuntimeError(f"{mode} on {device} x{world} failed:\n" + "\n---\n".join(logs))
    return [o for _, o in procs]


def compare(a, b, where: str) -> int:
    """Assert records equal within float32 tolerance; return the number of tensors compared."""
    import torch

    if isinstance(a, torch.Tensor):
        torch.testing.assert_close(a, b, **TOL, msg=lambda m: f"{where}: {m}")
        return 1
    if isinstance(a, dict):
        assert a.keys() == b.keys(), where
        return sum(compare(a[k], b[k], f"{where}.{k}") for k in a)
    assert len(a) == len(b), where
    return sum(compare(x, y, f"{where}[{i}]") for i, (x, y) in enumerate(zip(a, b)))


def parity(mode: str, world: int, outdir: Path, steps: int = 5, timeout=120, torchrun=False) -> int:
    import torch

    trn = launch(mode, "trn", world, outdir, steps, timeout, torchrun=torchrun)
    cpu = launch(mode, "cpu", world, outdir, steps, timeout, torchrun=torchrun)
    n = 0
    for r, (t, c) in enumerate(zip(trn, cpu)):
        n += compare(torch.load(t), torch.load(c), f"{mode} rank {r}")
    return n


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "worker":
        worker(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--world", type=int, default=4)
    ap.add_argument("--modes", default="ddp,fsdp,tp")
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--torchrun", action="store_true", help="launch each job with real torchrun")
    args = ap.parse_args()
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        for mode in args.modes.split(","):
            t0 = time.perf_counter()
            n = parity(mode, args.world, Path(d), args.steps, timeout=600, torchrun=args.torchrun)
            dt = time.perf_counter() - t0
            how = "torchrun" if args.torchrun else "spawned"
            print(f"{mode}: {args.world} ranks ({how}) x {args.steps} steps, trn == cpu+gloo on "
                  f"every rank ({n} tensors compared, {dt:.1f} s wall)")  # fmt: skip


if __name__ == "__main__":
    main()
