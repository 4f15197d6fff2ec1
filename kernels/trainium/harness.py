"""Make upstream's device-type test harness see the trn dtype policy.

For PrivateUse1, OpInfo falls back to the CPU dtype lists (float64 included). After
``apply_dtype_policy()``, ``instantiate_device_type_tests`` generates no variant in a dtype the
preset lacks for trn: neither ``@ops`` variants (any OpDTypes mode) nor ``@dtypes`` ones. The
variants are absent, not skipped or failed. Registration installs an import hook that applies
it as soon as ``common_device_type`` is imported (which must come after registration anyway),
so upstream test files and patches.validate runs see the policy without doing anything.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys

import torch

HARNESS_MODULE = "torch.testing._internal.common_device_type"
_applied: frozenset | None = None
_policy: frozenset | None = None  # the registered preset's unsupported dtypes (install_import_hook)


def _is_trn(device_type: str) -> bool:
    return device_type in ("privateuse1", torch._C._get_privateuse1_backend_name())


def apply_dtype_policy(unsupported=None) -> frozenset:
    """Filter trn test variants by ``unsupported`` (default: the registered preset's table)."""
    global _applied
    from torch.testing._internal import common_device_type as cdt

    if unsupported is None:
        if _policy is None:
            raise RuntimeError("trn is not registered yet (import kernels.trn)")
        unsupported = _policy
    unsupported = frozenset(unsupported)
    if _applied is not None:
        _applied = unsupported
        return _applied
    _applied = unsupported

    orig_parametrize = cdt.ops._parametrize_test

    def _parametrize_test(self, test, generic_cls, device_cls):
        for item in orig_parametrize(self, test, generic_cls, device_cls):
            if (
                device_cls is not None
                and _is_trn(device_cls.device_type)
                and item[2].get("dtype") in _applied
            ):
                continue
            yield item

    cdt.ops._parametrize_test = _parametrize_test

    orig_get_dtypes = cdt.PrivateUse1TestBase._get_dtypes.__func__

    def _get_dtypes(cls, test):
        dtypes = orig_get_dtypes(cls, test)
        if dtypes is None:
            return None
        kept = [
            d
            for d in dtypes
            if not (isinstance(d, torch.dtype) and d in _applied)
            and not (isinstance(d, tuple) and any(x in _applied for x in d))
        ]
        return kept

    cdt.PrivateUse1TestBase._get_dtypes = classmethod(_get_dtypes)
    return _applied


class _ApplyAfterImport(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Wraps the loader of common_device_type so the policy is applied right after it runs."""

    def find_spec(self, name, path, target=None):
        if name != HARNESS_MODULE:
            return None
        sys.meta_path.remove(self)  # find the real spec, then stand between it and exec
        try:
            spec = importlib.util.find_spec(name)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return None
        self._real = spec.loader
        spec.loader = self
        return spec

    def create_module(self, spec):
        return self._real.create_module(spec)

    def exec_module(self, module):
        self._real.exec_module(module)
        sys.meta_path[:] = [f for f in sys.meta_path if f is not self]
        apply_dtype_policy()


def install_import_hook(unsupported) -> None:
    """Apply ``unsupported`` (the preset's table, given by the device's installer) when the
    harness gets imported, or now if it already is."""
    global _policy
    _policy = frozenset(unsupported)
    if HARNESS_MODULE in sys.modules:
        apply_dtype_policy()
    elif not any(isinstance(f, _ApplyAfterImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _ApplyAfterImport())
