"""Per-device properties of the emulated device (what torch.trn.get_device_properties returns).

A seam for the topology/HBM policy: `set_properties(index, **fields)` replaces fields of one
device; capacity changes also reach the allocator (memory.set_capacity).
"""

from __future__ import annotations

import dataclasses
import os


@dataclasses.dataclass(frozen=True)
class DeviceProperties:
    name: str = "trn (CPU emulation)"
    index: int = 0
    total_memory: int = 0  # bytes; the allocator's capacity for this device
    multi_processor_count: int = dataclasses.field(default_factory=lambda: os.cpu_count() or 1)
    major: int = 0
    minor: int = 0
    is_emulated: bool = True
    # Trainium topology (kernels/trainium/topology.py fills these from the preset)
    core_version: str = ""
    neuron_core_id: int = 0
    physical_cores: int = 1  # physical NeuronCores behind this logical core (LNC)
    logical_cores_per_chip: int = 1
    sbuf_bytes: int = 0
    psum_bytes: int = 0


_overrides: dict[int, dict] = {}


def get_device_properties(index: int) -> DeviceProperties:
    from . import _core

    core = _core.native()
    fields = {"index": index, "total_memory": core.capacity(index)}
    fields.update(_overrides.get(index, {}))
    return DeviceProperties(**fields)


def set_properties(index: int, **fields) -> None:
    """Override properties of device `index` (unknown field names raise TypeError)."""
    DeviceProperties(**fields)  # validate names
    if "total_memory" in fields:
        from . import memory

        memory.set_capacity(index, fields["total_memory"])
    _overrides.setdefault(index, {}).update(fields)
