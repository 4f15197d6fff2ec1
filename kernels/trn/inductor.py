"""Inductor's CPU code generation for trn (issue 15 part 2; installed by dynamo_hook.py when
torch._inductor.compile_fx first loads).

trn memory is host RAM, so Inductor's C++/OpenMP kernels (CppScheduling) can run on trn tensors'
data pointers directly. The Python wrapper only refuses to emit a non-Triton kernel call for a
device it does not know; TrnWrapper emits it as for CPU.

Registering the scheduling is not enough: Inductor also decides by device *name* which kernel
language a device's kernels are written in, and answers "triton" (config.cuda_backend) for any
device that is not cpu/mps/xpu/tpu. For trn, whose kernels are CppScheduling's, that answer is
wrong and crashed code generation (`_answer_as_cpu` below gives trn CPU's answer, and no other
device's answer changes):

* ``torch._inductor.utils.get_current_backend`` (also bound by name in codegen/common.py): with
  "triton", the C++ kernel's CSE variables got no dtype (``indirect_assert``: ``assert var.dtype
  is not None``, an embedding lookup fused into a layer norm).
* ``BaseSchedulerNode.is_cpu`` gates loop reordering/reindexing for fusion, which assumes SIMD
  (Triton) node groups; with ``dynamic=True`` the reindexing multiplied CppScheduling's tuple
  groups (``TypeError: can't multiply sequence by non-int of type 'tuple'``).
* ``torch._inductor.ir.is_cpu``: the realize heuristics pick CPU's thresholds (performance only).
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
    _answer_as_cpu(name)
    _installed.add(name)


def _answer_as_cpu(name: str) -> None:
    """Inductor's by-name questions (see the module docstring) get CPU's answer for ``name``."""
    from torch._inductor import config, ir, scheduler, utils
    from torch._inductor.codegen import common

    upstream_backend = utils.get_current_backend

    def get_current_backend(device_type: str | None = None) -> str:
        if not device_type:
            from torch._inductor.virtualized import V

            device_type = V.graph.get_current_device_or_throw().type
        if device_type == name:
            return config.cpu_backend
        return upstream_backend(device_type)

    utils.get_current_backend = get_current_backend
    common.get_current_backend = get_current_backend

    upstream_node_is_cpu = scheduler.BaseSchedulerNode.is_cpu

    def is_cpu_node(self) -> bool:
        device = self.get_device()
        return (device is not None and device.type == name) or upstream_node_is_cpu(self)

    scheduler.BaseSchedulerNode.is_cpu = is_cpu_node

    upstream_ir_is_cpu = ir.is_cpu

    def is_cpu_ir(x) -> bool:
        return ir.get_device_type(x) == name or upstream_ir_is_cpu(x)

    ir.is_cpu = is_cpu_ir
