"""dtype knowledge shared by the torch patches and the ``torch.cuda`` stand-in: legacy tensor
type names, the never-change-a-dtype check, and autocast's (device type, dtype) for the target."""

from __future__ import annotations

import torch

from .. import properties
from ..errors import Unsupported
from .sites import RECORDER
from .target import Target

LEGACY_TYPES = {
    "FloatTensor": torch.float32,
    "DoubleTensor": torch.float64,
    "HalfTensor": torch.float16,
    "BFloat16Tensor": torch.bfloat16,
    "LongTensor": torch.int64,
    "IntTensor": torch.int32,
    "ShortTensor": torch.int16,
    "CharTensor": torch.int8,
    "ByteTensor": torch.uint8,
    "BoolTensor": torch.bool,
}


def legacy_dtype(t) -> torch.dtype | None:
    """dtype of a "torch.cuda.FloatTensor"-style type name or class, else None."""
    name = t if isinstance(t, str) else getattr(t, "__legacy_cuda_type__", None)
    if isinstance(name, str) and name.startswith("torch.cuda."):
        return LEGACY_TYPES.get(name.rsplit(".", 1)[1])
    return None


def check_dtype(api: str, dtype: torch.dtype) -> None:
    """Never change a dtype silently (transfer_to_npu maps DoubleTensor to FloatTensor)."""
    if not properties.supports_dtype(dtype, Target.device()):
        raise Unsupported(
            api,
            Target.type,
            f"{dtype} is not supported there, and autoport never changes "
            "a dtype silently; cast explicitly (for example .float()) where it is safe",
        )


def port_autocast_args(api: str, device_type, dtype):
    """Device type and dtype for an autocast that asked for CUDA (dtype None: the target's default)."""
    if dtype is None:
        new_dtype = torch.get_autocast_dtype(Target.type)
        note = f"dtype {new_dtype} ({Target.type}'s autocast default)"
    else:
        from ..amp import autocast_dtypes

        if dtype not in autocast_dtypes(Target.type):
            raise Unsupported(
                f"{api}(dtype={dtype})",
                Target.type,
                f"autocast there supports {', '.join(map(str, autocast_dtypes(Target.type)))}",
            )
        new_dtype, note = dtype, f"dtype {dtype}"
    RECORDER.hit(api, f"torch.autocast({Target.type!r}), {note}")
    return Target.type, new_dtype
