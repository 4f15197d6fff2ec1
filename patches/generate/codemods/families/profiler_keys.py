"""The profiler's CUDA-named sort keys (HN553) -> its device columns::

    p.key_averages().table(sort_by="self_cuda_time_total")   ->   ...(sort_by="self_device_time_total")

``cuda_time_total``, ``self_cuda_time_total``, ``cuda_memory_usage`` and
``self_cuda_memory_usage`` are deprecated aliases of the ``device_*`` columns (the same numbers
on CUDA); the device keys sort by the accelerator's column on any other. Only the literal the
scan reported (a ``sort_by=`` argument) changes; quotes and prefix stay.
"""

from __future__ import annotations

from patches.generate.codemods.families.base import Family
from patches.generate.codemods.families.idioms_common import specs_at, string_value, with_value

OLD, NEW = "cuda", "device"


class ProfilerKeys(Family):
    name = "profiler-keys"

    def on_literal(self, eng, original, updated):
        specs = specs_at(eng, original, self.name)
        value = string_value(original)
        if not specs or value is None or value not in specs[0].names:
            return None
        eng.done(specs[0], original)
        return with_value(updated, OLD, NEW)
