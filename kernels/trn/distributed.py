"""c10d backend for trn: every collective runs with gloo on the host memory behind trn tensors.

trn memory *is* host RAM, so a trn tensor's bytes are aliased zero-copy as a CPU tensor
(:func:`cpu_alias`) and handed to a real ``ProcessGroupGloo``; gloo's ``Work`` objects are
returned unchanged (``wait()`` works, async ops overlap as with gloo on CPU).

The backend is registered under the device's name (``trn``, or ``neuron`` in compat mode) with
``devices=[name]``, so ``dist.init_process_group()`` with no backend picks it for trn and
``dist.get_default_backend_for_device(name)`` returns it. c10d's C++ ``Backend`` cannot be
subclassed from Python ("No constructor defined!"); a Python ``ProcessGroup`` subclass can, and
``_new_process_group_helper`` then uses that object as the group itself. DDP's Reducer, FSDP2's
and DTensor's functional collectives reach it through ProcessGroup's virtual methods.

Each process binds to its own logical core at group creation: device index = ``LOCAL_RANK``
(torchrun), an index into the cores ``NEURON_RT_VISIBLE_CORES`` makes visible; a rank whose
core is not visible is a clear error, not a silent share of core 0.
"""

from __future__ import annotations

import ctypes
import datetime
import os
import time
from typing import Any

import torch
import torch.distributed as dist
from torch._C._distributed_c10d import ProcessGroupGloo

from . import dynamo_hook

_registered_as: str | None = None


def cpu_alias(t: torch.Tensor) -> torch.Tensor:
    """A CPU tensor sharing ``t``'s bytes (no copy); CPU tensors are returned as they are."""
    if not isinstance(t, torch.Tensor) or t.device.type == "cpu":
        return t
    storage = t.untyped_storage()
    nbytes = storage.nbytes()
    if nbytes == 0:
        base = torch.empty(0, dtype=torch.uint8)
    else:
        buf = (ctypes.c_char * nbytes).from_address(storage.data_ptr())
        base = torch.frombuffer(buf, dtype=torch.uint8, count=nbytes)
    return base.view(t.dtype).as_strided(t.size(), t.stride(), t.storage_offset())


def _alias(x: Any) -> Any:
    if isinstance(x, torch.Tensor):
        return cpu_alias(x)
    if isinstance(x, (list, tuple)):
        return [_alias(v) for v in x]
    return x


def _tensors(x: Any) -> list[torch.Tensor]:
    if isinstance(x, torch.Tensor):
        return [x]
    if isinstance(x, (list, tuple)):
        return [t for v in x for t in _tensors(v)]
    return []


def _idle(aliases: list[torch.Tensor]) -> bool:
    """No one but the caller's reference holds these tensors (no Work, no gloo thread)."""
    return all(a._use_count() == 1 for a in aliases)


def bind_local_core(device_type: str) -> int:
    """Set this process's device from LOCAL_RANK; error if that core is not visible."""
    local = int(os.environ.get("LOCAL_RANK", "0"))
    mod = getattr(torch, device_type)
    count = mod.device_count()
    if local < 0 or local >= count:
        visible = os.environ.get("NEURON_RT_VISIBLE_CORES")
        where = f"NEURON_RT_VISIBLE_CORES={visible!r}" if visible else "the emulated instance"
        raise RuntimeError(
            f"{device_type} distributed: LOCAL_RANK={local} has no core: {where} makes "
            f"{count} logical core(s) visible to this process (indices 0..{count - 1}); "
            f"run at most {count} ranks per node or widen NEURON_RT_VISIBLE_CORES"
        )
    mod.set_device(local)
    return local


def check_world_size(store, rank: int, size: int, device_type: str) -> None:
    """Fail fast, naming both sizes, when ranks of one group were started with different world
    sizes (without it gloo's full-mesh connect waits for a rank that never comes, then reports a
    bare connect or store timeout). Each rank publishes its size in the group's store; rank 0
    reads every other rank's, every other rank reads rank 0's and acknowledges. Rank 0 hosts the
    store, so on a mismatch it waits (bounded) for the acknowledgements of the ranks it read
    before raising: a peer must not lose the store before reading rank 0's size. A missing rank
    still ends in the store's own timeout error, as before."""
    store.set(f"hn_world_size/{rank}", str(size))
    peers = range(1, size) if rank == 0 else [0]
    mismatch = None
    for peer in peers:
        theirs = int(store.get(f"hn_world_size/{peer}").decode())
        if theirs != size and mismatch is None:
            mismatch = (peer, theirs)
    if rank != 0:
        store.add("hn_world_size/read", 1)
    elif mismatch is not None:
        deadline = time.monotonic() + 30
        while store.add("hn_world_size/read", 0) < len(peers) and time.monotonic() < deadline:
            time.sleep(0.05)
    if mismatch is not None:
        peer, theirs = mismatch
        raise RuntimeError(
            f"{device_type} distributed: mismatched world sizes: rank {rank} was started with "
            f"WORLD_SIZE={size} but rank {peer} with WORLD_SIZE={theirs}; start every rank "
            "of a job with the same world size (torchrun --nproc-per-node/--nnodes)"
        )


class TrnProcessGroup(dist.ProcessGroup):
    """A process group whose collectives are gloo's, on zero-copy CPU aliases of trn tensors."""

    def __init__(self, store, rank: int, size: int, timeout: datetime.timedelta, name: str):
        super().__init__(rank, size)
        self._name = name
        self._gloo = ProcessGroupGloo(store, rank, size, timeout)
        # c10d keeps a group's name on its backends: gloo serves CPU tensors directly
        cpu = torch.device("cpu")
        self._register_backend(cpu, dist.ProcessGroup.BackendType.GLOO, self._gloo)
        # (trn tensors, their CPU aliases): kept until nothing else holds an alias, see _track
        self._keep: list[tuple[Any, list[torch.Tensor]]] = []

    def _track(self, trn: Any, aliased: Any) -> None:
        """Hold a collective's trn tensors and CPU aliases until no Work or gloo thread does.

        The trn tensors keep the memory the aliases point into alive. The aliases stay referenced
        here until they are idle, so gloo's worker thread never frees the last reference to one:
        that would need the GIL, and c10d destroys ProcessGroupGloo with the GIL held (DDP's
        Reducer, the group's destructor) while joining that thread: a rank then hung at exit,
        1 run in ~50 (pytorch/pytorch#56297).
        """
        self._keep = [k for k in self._keep if not _idle(k[1])]
        self._keep.append((trn, _tensors(aliased)))

    def _run(self, op: str, *args: Any):
        aliased = _alias(list(args[:1]))
        work = getattr(self._gloo, op)(*aliased, *args[1:])
        self._track(args[0], aliased)
        return work

    def shutdown(self) -> None:
        """Let gloo's threads retire their last Work (GIL released, at most 1 s), then shut down.

        A Work the caller still holds keeps its aliases busy; the wait then ends at the bound.
        """
        deadline = time.monotonic() + 1.0
        while self._keep and time.monotonic() < deadline:
            self._keep = [k for k in self._keep if not _idle(k[1])]
            if self._keep:
                time.sleep(0.002)
        super().shutdown()

    def getBackendName(self) -> str:  # noqa: N802 (c10d's name)
        return self._name

    def name(self) -> str:
        return self._name

    # one method per c10d virtual that DDP, FSDP2, DTensor and torch.distributed's API call
    def allreduce(self, tensors, opts):
        return self._run("allreduce", tensors, opts)

    def allreduce_coalesced(self, tensors, opts):
        return self._run("allreduce_coalesced", tensors, opts)

    def broadcast(self, tensors, opts):
        return self._run("broadcast", tensors, opts)

    def reduce(self, tensors, opts):
        return self._run("reduce", tensors, opts)

    def allgather(self, outputs, inputs, opts):
        return self._gloo_pair("allgather", outputs, inputs, opts)

    def _allgather_base(self, output, input, opts):
        return self._gloo_pair("_allgather_base", output, input, opts)

    def allgather_coalesced(self, outputs, inputs, opts):
        return self._gloo_pair("allgather_coalesced", outputs, inputs, opts)

    def allgather_into_tensor_coalesced(self, outputs, inputs, opts):
        return self._each("_allgather_base", outputs, inputs, opts)

    def all_gather_single(self, output, input, opts):
        return self._gloo_pair("_allgather_base", output, input, opts)

    def all_gather_single_coalesced(self, outputs, inputs, opts):
        return self._each("_allgather_base", outputs, inputs, opts)

    def reduce_scatter_single(self, output, input, opts):
        return self._gloo_pair("_reduce_scatter_base", output, input, opts)

    def reduce_scatter_single_coalesced(self, outputs, inputs, opts):
        return self._each("_reduce_scatter_base", outputs, inputs, opts)

    def all_to_all_single(self, output, input, output_split_sizes, input_split_sizes, opts):
        return self._gloo_pair(
            "alltoall_base", output, input, output_split_sizes, input_split_sizes, opts
        )

    def reduce_scatter(self, outputs, inputs, opts):
        return self._gloo_pair("reduce_scatter", outputs, inputs, opts)

    def _reduce_scatter_base(self, output, input, opts):
        return self._gloo_pair("_reduce_scatter_base", output, input, opts)

    def reduce_scatter_tensor_coalesced(self, outputs, inputs, opts):
        return self._each("_reduce_scatter_base", outputs, inputs, opts)

    def alltoall_base(self, output, input, output_split_sizes, input_split_sizes, opts):
        return self._gloo_pair(
            "alltoall_base", output, input, output_split_sizes, input_split_sizes, opts
        )

    def alltoall(self, outputs, inputs, opts):
        return self._gloo_pair("alltoall", outputs, inputs, opts)

    def gather(self, outputs, inputs, opts):
        return self._gloo_pair("gather", outputs, inputs, opts)

    def scatter(self, outputs, inputs, opts):
        return self._gloo_pair("scatter", outputs, inputs, opts)

    def barrier(self, opts):
        return self._gloo.barrier(opts)

    def send(self, tensors, dst: int, tag: int):
        return self._run("send", tensors, dst, tag)

    def recv(self, tensors, src: int, tag: int):
        return self._run("recv", tensors, src, tag)

    def recv_anysource(self, tensors, tag: int):
        return self._run("recv_anysource", tensors, tag)

    def _gloo_pair(self, op: str, outputs, inputs, *rest):
        aliased = (_alias(outputs), _alias(inputs))
        work = getattr(self._gloo, op)(*aliased, *rest)
        self._track((outputs, inputs), aliased)
        return work

    def _each(self, op: str, outputs, inputs, opts):
        """A coalesced op gloo lacks: one op per pair, in order; earlier ones are waited for."""
        work = None
        for o, i in zip(outputs, inputs, strict=True):
            if work is not None:
                work.wait()
            work = self._gloo_pair(op, o, i, opts)
        return work if work is not None else self._gloo.barrier(dist.BarrierOptions())


def _eager_under_dynamo() -> None:
    """torch.compile traces into callers such as DDP's forward; c10d process groups are opaque
    to Dynamo, so the collectives run eagerly at a graph break rather than being traced into.
    Applied once torch._dynamo is imported (nothing traces before), not at our import: importing
    Dynamo costs every trn process ~1.7 s."""
    for attr, fn in list(vars(TrnProcessGroup).items()):
        if callable(fn) and not attr.startswith("__"):
            setattr(TrnProcessGroup, attr, torch._dynamo.disable(fn, recursive=True))


dynamo_hook.after_import("torch._dynamo", _eager_under_dynamo)


def register(name: str) -> str:
    """Register the c10d backend under the device's name (idempotent)."""
    global _registered_as
    if _registered_as is not None:
        return _registered_as

    def creator(store, rank, size, timeout):
        bind_local_core(name)
        check_world_size(store, rank, size, name)
        return TrnProcessGroup(store, rank, size, timeout, name)

    if name.upper() not in dist.Backend._plugins:
        dist.Backend.register_backend(name, creator, devices=[name])
    _registered_as = name
    return name
