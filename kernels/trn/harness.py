"""Make upstream's device-type test harness see the trn dtype policy.

For PrivateUse1, OpInfo falls back to the CPU dtype lists (float64 included). After
``apply_dtype_policy()``, ``instantiate_device_type_tests`` generates no variant in a dtype the
preset lacks for trn: neither ``@ops`` variants (any OpDTypes mode) nor ``@dtypes`` ones. The
variants are absent, not skipped or failed. Call it after registering trn and before
instantiating test classes (tests/kernels/conftest.py does).
"""
from __future__ import annotations

import torch

_applied: frozenset | None = None


def _is_trn(device_type: str) -> bool:
    return device_type in ("privateuse1", torch._C._get_privateuse1_backend_name())


def apply_dtype_policy(unsupported=None) -> frozenset:
    """Filter trn test variants by ``unsupported`` (default: the active preset's table)."""
    global _applied
    from torch.testing._internal import common_device_type as cdt

    if unsupported is None:
        from . import trainium

        unsupported = trainium.state().dtypes.unsupported
    unsupported = frozenset(unsupported)
    if _applied is not None:
        _applied = unsupported
        return _applied
    _applied = unsupported

    orig_parametrize = cdt.ops._parametrize_test

    def _parametrize_test(self, test, generic_cls, device_cls):
        for item in orig_parametrize(self, test, generic_cls, device_cls):
            if device_cls is not None and _is_trn(device_cls.device_type) and item[2].get("dtype") in _applied:
                continue
            yield item

    cdt.ops._parametrize_test = _parametrize_test

    orig_get_dtypes = cdt.PrivateUse1TestBase._get_dtypes.__func__

    def _get_dtypes(cls, test):
        dtypes = orig_get_dtypes(cls, test)
        if dtypes is None:
            return None
        kept = [d for d in dtypes if not (isinstance(d, torch.dtype) and d in _applied)
                and not (isinstance(d, tuple) and any(x in _applied for x in d))]
        return kept

    cdt.PrivateUse1TestBase._get_dtypes = classmethod(_get_dtypes)
    return _applied
