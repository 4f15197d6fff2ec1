"""The rewrite families, one module each (``base`` holds the protocol); ``codemods/registry.py``
is their ordered list. Every site a family is offered has passed the intent gate
(``patches/generate/intent/``): a family decides only *how* to rewrite, never *whether*."""

from __future__ import annotations

from patches.generate.codemods.families.attribute_rename import AttributeRename
from patches.generate.codemods.families.base import (
    COMMON_UTILS,
    Family,
    device_type_expr,
    is_test_file,
)
from patches.generate.codemods.families.call_rename import CallRename
from patches.generate.codemods.families.method_to_device import MethodToDevice
from patches.generate.codemods.families.rename import Rename

__all__ = [
    "COMMON_UTILS",
    "AttributeRename",
    "CallRename",
    "Family",
    "MethodToDevice",
    "Rename",
    "device_type_expr",
    "is_test_file",
]
