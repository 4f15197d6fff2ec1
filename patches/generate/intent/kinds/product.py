"""``cuda-product``: the statement tests a device's name against an NVIDIA product's
(``"Tesla T4" in torch.cuda.get_device_name(0)``, ``props.name.startswith("NVIDIA H100")``,
``[products]``; a compound statement by its header). It asks which NVIDIA card runs the code, a fact about CUDA hardware: made
neutral, ``torch.get_device_module().get_device_name`` raises on a device module without it
(mlx, torch.cpu) and names no NVIDIA card anywhere else, so the arm it picks is CUDA's alone
(unsloth-zoo's saving rule for T4's memory, round 39)."""

from __future__ import annotations

import ast
import functools
import re

from patches.generate.intent.data import data
from patches.generate.intent.nodes import compound, header
from patches.generate.intent.probe import Evidence, Probe

KIND = "cuda-product"
SUMMARY = "it tests the device's name against an NVIDIA product's"

_NAME_CALLS = ("get_device_name",)
_TESTS = ("startswith", "endswith", "find", "index", "count")


@functools.lru_cache(maxsize=1)
def _product() -> re.Pattern:
    names = sorted(data()["products"]["names"], key=len, reverse=True)
    return re.compile(r"(?<![A-Za-z0-9])(" + "|".join(map(re.escape, names)) + r")(?![A-Za-z0-9])")


def _names_device(node: ast.AST) -> bool:
    """A device's name: ``get_device_name(...)`` or a properties' ``.name``."""
    for n in ast.walk(node):
        if (
            isinstance(n, ast.Call)
            and getattr(n.func, "attr", getattr(n.func, "id", "")) in _NAME_CALLS
        ):
            return True
        if isinstance(n, ast.Attribute) and n.attr == "name" and "propert" in ast.unparse(n.value):
            return True
    return False


def _product_text(node: ast.AST) -> str | None:
    for n in ast.walk(node):
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and _product().search(n.value):
            return n.value
    return None


def detect(p: Probe) -> list[Evidence]:
    parts = header(p.stmt) if compound(p.stmt) else [p.stmt]
    for n in (x for part in parts for x in ast.walk(part)):
        sides: list[ast.AST] = []
        if isinstance(n, ast.Compare) and len(n.ops) == 1:
            sides = [n.left, n.comparators[0]]
        elif isinstance(n, ast.Call) and getattr(n.func, "attr", "") in _TESTS and n.args:
            sides = [n.func.value, n.args[0]]
        if len(sides) != 2:
            continue
        for name, other in (sides, sides[::-1]):
            text = _product_text(other) if _names_device(name) else None
            if text:
                return [Evidence(KIND, n.lineno, f"the device's name tested against {text!r}")]
    return []
