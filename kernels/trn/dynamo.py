"""Dynamo device interface for trn, so torch.compile can trace programs that use the device.

Importing torch._dynamo costs ~3 s, so this module is only imported (by the hook in
dynamo_hook.py) once something else imports torch._dynamo.device_interface.
"""

from __future__ import annotations

import torch
from torch._dynamo.device_interface import DeviceInterface, register_interface_for_device

from . import device_module as dm


class TrnInterface(DeviceInterface):
    class Event(dm.Event):  # type: ignore[misc]
        pass

    class Stream(dm.Stream):  # type: ignore[misc]
        pass

    class Worker:
        set_device = staticmethod(dm.set_device)
        current_device = staticmethod(dm.current_device)
        get_device_properties = staticmethod(dm.get_device_properties)

    current_device = staticmethod(dm.current_device)
    set_device = staticmethod(dm.set_device)
    device_count = staticmethod(dm.device_count)
    stream = staticmethod(dm.stream)  # type: ignore[assignment]
    current_stream = staticmethod(dm.current_stream)
    set_stream = staticmethod(dm.set_stream)  # type: ignore[assignment]
    synchronize = staticmethod(dm.synchronize)
    get_device_properties = staticmethod(dm.get_device_properties)  # type: ignore[assignment]
    memory_allocated = staticmethod(dm.memory_allocated)
    is_bf16_supported = staticmethod(dm.is_bf16_supported)  # type: ignore[arg-type]

    @staticmethod
    def is_available() -> bool:
        return dm.is_available()

    @staticmethod
    def exchange_device(device: int) -> int:
        prev = dm.current_device()
        dm.set_device(device)
        return prev

    @staticmethod
    def maybe_exchange_device(device: int) -> int:
        return (
            TrnInterface.exchange_device(device)
            if 0 <= device < dm.device_count()
            else dm.current_device()
        )

    @staticmethod
    def _set_stream_by_id(stream_id: int, device_index: int, device_type: int) -> None:
        torch.accelerator.set_stream(
            torch.Stream(stream_id=stream_id, device_index=device_index, device_type=device_type)
        )

    @staticmethod
    def get_raw_stream(device_idx: int) -> int:
        return dm.current_stream(device_idx).stream_id

    @staticmethod
    def get_compute_capability(device=None):
        return dm.get_device_capability(device)

    @staticmethod
    def is_triton_capable(device=None) -> bool:
        return False


# What the last `torch.compile(backend=<device name>)` ran: "inductor" or "aot_eager".
compile_path: str | None = None


def compile_backend(name: str):
    """The compile backend named after the device (`torch.compile(backend="trn")`, as OpenReg
    registers one under its name): AOTAutograd capture of forward and backward, run by Inductor
    when Inductor has code generation for the device (kernels/trn/inductor.py), else by the eager
    kernels (`aot_eager`)."""

    def backend(gm, example_inputs):
        global compile_path
        import torch._inductor.compile_fx  # noqa: F401  (dynamo_hook registers trn's codegen)
        from torch._dynamo.backends.registry import lookup_backend
        from torch._inductor.codegen.common import get_scheduling_for_device

        compile_path = "inductor" if get_scheduling_for_device(name) is not None else "aot_eager"
        return lookup_backend(compile_path)(gm, example_inputs)

    return backend


def install(name: str) -> None:
    register_interface_for_device(name, TrnInterface)
    from torch._dynamo.backends.registry import _BACKENDS, register_backend

    if name not in _BACKENDS:
        register_backend(name=name)(compile_backend(name))
