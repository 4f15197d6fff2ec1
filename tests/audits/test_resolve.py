"""audits.resolve: the one import resolver the scan, the codemod and the test selection share."""

import ast

import pytest

from audits.resolve import absolute_module, bindings, module_name, package_name, qualify


@pytest.mark.parametrize(
    "rel, prefix, module, package",
    [
        ("torch/cuda/__init__.py", "", "torch.cuda", "torch.cuda"),
        ("cuda/__init__.py", "torch/", "torch.cuda", "torch.cuda"),
        ("cuda/memory.py", "torch/", "torch.cuda.memory", "torch.cuda"),
        ("setup.py", "", "setup", ""),
        ("pkg/stubs.pyi", "", "pkg.stubs", "pkg"),
    ],
)
def test_module_and_package(rel, prefix, module, package):
    assert module_name(rel, prefix) == module
    assert package_name(rel, prefix) == package


@pytest.mark.parametrize(
    "level, module, package, want",
    [
        (0, "torch.cuda", "anything", "torch.cuda"),
        (1, None, "torch", "torch"),
        (1, "cuda", "torch", "torch.cuda"),
        (2, "amp", "torch.cuda", "torch.amp"),
        (2, None, "torch", None),  # beyond the top-level package
        (4, None, "a.b", None),
        (1, "x", "", None),  # package unknown (a file at the top of a plain directory)
    ],
)
def test_absolute_module(level, module, package, want):
    assert absolute_module(level, module, package) == want


def _bind(src: str, package: str) -> list:
    return [b for n in ast.parse(src).body for b in bindings(n, package)]


def test_bindings():
    src = (
        "import torch.cuda\nimport torch.cuda.nccl as nccl\nfrom . import cuda\n"
        "from .amp import autocast as ac\nfrom .. import up\nfrom m import *\n"
    )
    assert _bind(src, "torch") == [
        ("torch", "torch"),
        ("nccl", "torch.cuda.nccl"),
        ("cuda", "torch.cuda"),
        ("ac", "torch.amp.autocast"),
        ("up", None),
    ]


def test_qualify():
    imports = {"tc": "torch.cuda", "cuda": "torch.cuda"}
    assert qualify(["tc", "synchronize"], imports.get) == "torch.cuda.synchronize"
    assert qualify(["torch", "cuda", "x"], imports.get) == "torch.cuda.x"  # torch without import
    assert qualify(["other", "cuda"], imports.get) is None
