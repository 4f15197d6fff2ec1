"""Feeds the stream sanitizer from the live device (HN_TRN_SANITIZER=1, or ``enable()``).

Ops are seen through a TorchDispatchMode (reads/writes from each schema's alias info, like
CUDA's CSAN); waits and syncs made through torch.Stream/torch.Event/torch.accelerator reach it
from the native guard's stream observer. The mode lives on the enabling thread's mode stack,
so ops run by autograd's device threads are not checked.
"""

from __future__ import annotations

import os

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from .sanitizer import StreamSanitizer

_active: "_Mode | None" = None


def _name() -> str:
    return torch._C._get_privateuse1_backend_name()


def _storage_key(t: torch.Tensor):
    return (t.device.index, t.untyped_storage().data_ptr())


def _stream_key(device_index: int, stream_id: int):
    return (device_index, stream_id)


class _Mode(TorchDispatchMode):
    def __init__(self, sanitizer: StreamSanitizer) -> None:
        super().__init__()
        self.sanitizer = sanitizer

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        san = self.sanitizer
        if func is torch.ops.aten.record_stream.default:
            tensor, stream = args
            san.record_stream(
                _storage_key(tensor), _stream_key(stream.device_index, stream.stream_id)
            )
            return func(*args, **kwargs)
        schema = func._schema
        op = schema.name + (f".{schema.overload_name}" if schema.overload_name else "")
        inputs = []
        for arg, value in zip(
            schema.arguments,
            list(args) + [kwargs.get(a.name) for a in schema.arguments[len(args) :]],
        ):
            is_write = arg.alias_info is not None and arg.alias_info.is_write
            for t in value if isinstance(value, (list, tuple)) else (value,):
                if (
                    isinstance(t, torch.Tensor)
                    and t.device.type == _name()
                    and t.untyped_storage().nbytes()
                ):
                    inputs.append((t, is_write))
        for t, is_write in inputs:
            san.access(_storage_key(t), self._stream(t), is_write=is_write, op=op)
        out = func(*args, **kwargs)
        seen = {_storage_key(t) for t, _ in inputs}
        for t in out if isinstance(out, (list, tuple)) else (out,):
            if (
                isinstance(t, torch.Tensor)
                and t.device.type == _name()
                and t.untyped_storage().nbytes()
                and _storage_key(t) not in seen
            ):
                key = _storage_key(t)
                san.free(key)  # fresh memory: earlier history at this address is of a freed tensor
                san.access(key, self._stream(t), is_write=True, op=op)
        return out

    @staticmethod
    def _stream(t: torch.Tensor):
        s = torch.accelerator.current_stream(t.device.index)
        return _stream_key(s.device_index, s.stream_id)


def _observer(san: StreamSanitizer):
    def on_stream(what: str, device: int, stream: int, event: int) -> None:
        if what == "record":
            san.record_event(event, _stream_key(device, stream))
        elif what == "block":
            san.wait_event(_stream_key(device, stream), event)
        elif what == "stream_sync":
            san.stream_synchronize(_stream_key(device, stream))
        elif what == "event_sync":
            san.event_synchronize(event)
        elif what == "device_sync":
            san.synchronize()

    return on_stream


def enable(core=None, *, raise_on_race: bool = True) -> StreamSanitizer:
    """Start checking on this thread; returns the sanitizer (``.races`` lists reports)."""
    global _active
    if _active is not None:
        return _active.sanitizer
    if core is None:
        from kernels.trn import _core  # the device: enabling the sanitizer registers it

        core = _core.native()
    # Reported stacks show the user's code, not torch's or this package's dispatch plumbing.
    here = os.path.dirname(os.path.abspath(__file__))
    device = os.path.join(os.path.dirname(here), "trn")
    hide = (os.path.dirname(torch.__file__) + os.sep, here + os.sep, device + os.sep)
    san = StreamSanitizer(raise_on_race=raise_on_race, hide=hide)
    core.set_stream_observer(_observer(san))
    _active = _Mode(san)
    _active.__enter__()
    return san


def disable() -> None:
    global _active
    if _active is None:
        return
    from kernels.trn import _core

    _active.__exit__(None, None, None)
    _core.native().set_stream_observer(None)
    _active = None
