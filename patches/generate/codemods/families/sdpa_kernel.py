"""The deprecated SDPA backend switch (HN420 ``torch.backends.cuda.sdp_kernel(...)``) -> the
device-neutral one it wraps, ``torch.nn.attention.sdpa_kernel``::

    with torch.backends.cuda.sdp_kernel(enable_flash=False, enable_mem_efficient=False):
->  with torch.nn.attention.sdpa_kernel(
        [torch.nn.attention.SDPBackend.MATH, torch.nn.attention.SDPBackend.CUDNN_ATTENTION]
    ):

``sdp_kernel`` (torch 2.13) builds that list from its four flags, flash, mem-efficient, math,
cuDNN in that order, each on unless passed False, and enters ``sdpa_kernel`` with it: an exact
refactor, the same backends on every device, without the FutureWarning. The flags must be
literal ``True``/``False`` (by keyword, or by position in the signature's order: flash, math,
mem-efficient, cuDNN); any other argument is left.
"""

from __future__ import annotations

import libcst as cst

from patches.generate.codemods.families.base import Family

SDP = "torch.backends.cuda.sdp_kernel"
_PARAMS = ("enable_flash", "enable_math", "enable_mem_efficient", "enable_cudnn")
# the order sdp_kernel appends the backends in
_BACKENDS = (
    ("enable_flash", "FLASH_ATTENTION"),
    ("enable_mem_efficient", "EFFICIENT_ATTENTION"),
    ("enable_math", "MATH"),
    ("enable_cudnn", "CUDNN_ATTENTION"),
)
_NEW = "torch.nn.attention.sdpa_kernel"


def _flags(call: cst.Call) -> dict[str, bool] | None:
    """Each flag's literal value (True where not passed), or None."""
    out = dict.fromkeys(_PARAMS, True)
    for i, arg in enumerate(call.args):
        if arg.star:
            return None
        name = arg.keyword.value if arg.keyword else (_PARAMS[i] if i < len(_PARAMS) else None)
        value = arg.value
        if (
            name not in out
            or not isinstance(value, cst.Name)
            or value.value not in ("True", "False")
        ):
            return None
        out[name] = value.value == "True"
    return out


class SdpaKernel(Family):
    name = "sdpa-kernel"
    claims = (SDP,)

    def on_call(self, eng, original, updated):
        claimed = self.claimed(eng, original)
        if claimed is None:
            return None
        spec, _ = claimed
        flags = _flags(original)
        if flags is None:
            eng.fail(spec, original, "a flag that is not a literal True or False")
            return None
        backends = ", ".join(
            f"torch.nn.attention.SDPBackend.{member}" for flag, member in _BACKENDS if flags[flag]
        )
        eng.remove_unused_import_by_node(original.func)
        eng.add_needed_import("torch", node=original)
        eng.done(spec, original)
        return updated.with_changes(
            func=cst.parse_expression(_NEW), args=[cst.Arg(cst.parse_expression(f"[{backends}]"))]
        )
