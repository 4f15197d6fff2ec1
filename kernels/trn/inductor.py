"""Inductor's CPU code generation for trn (issue 15 part 2, first step; not yet called by register()).

trn memory is host RAM, so Inductor's C++/OpenMP kernels (CppScheduling) can run on trn tensors'
data pointers directly. The Python wrapper only refuses to emit a non-Triton kernel call for a
device it does not know; TrnWrapper emits it as for CPU.
"""

from __future__ import annotations

from torch._inductor.codegen.common import (
    DeviceOpOverrides,
    register_backend_for_device,
    register_device_op_overrides,
)
from torch._inductor.codegen.cpp import CppScheduling
from torch._inductor.codegen.cpp_wrapper_cpu import CppWrapperCpu
from torch._inductor.codegen.wrapper import PythonWrapperCodegen

_installed: set[str] = set()


def install(name: str) -> None:
    if name in _installed:
        return

    class TrnWrapper(PythonWrapperCodegen):
        @staticmethod
        def create(is_subgraph, subgraph_name, parent_wrapper, partition_signatures=None):
            if is_subgraph:
                return PythonWrapperCodegen.create(
                    is_subgraph, subgraph_name, parent_wrapper, partition_signatures
                )
            return TrnWrapper()

        def _generate_kernel_call_helper(
            self, kernel_name, call_args, *, device=None, triton=True, **kw
        ):
            from torch._inductor.virtualized import V

            device = device or V.graph.get_current_device_or_throw()
            if not triton and device.type == name:
                self.writeline(self.wrap_kernel_call(kernel_name, call_args))
                return
            return super()._generate_kernel_call_helper(
                kernel_name, call_args, device=device, triton=triton, **kw
            )

    register_backend_for_device(name, CppScheduling, TrnWrapper, CppWrapperCpu)
    register_device_op_overrides(name, DeviceOpOverrides())
    _installed.add(name)
