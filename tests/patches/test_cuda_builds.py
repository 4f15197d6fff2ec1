"""What the gate reads as a requirement of a build for CUDA (``intent.data.cuda_build``): a
pinned requirement anywhere, or any requirement handed to an installer; not a label, a format's
name or HTML around a library's name."""

from __future__ import annotations

import pytest

from patches.generate.intent.data import cuda_build


@pytest.mark.parametrize(
    "text, installer, want",
    [
        ("paddlepaddle-gpu>=3.0.0,<3.3.0", False, "paddlepaddle-gpu"),
        ("paddlepaddle-gpu", True, "paddlepaddle-gpu"),
        ('onnxruntime-gpu>=1.18; platform_system != "Darwin"', False, "onnxruntime-gpu"),
        ("cupy-cuda12x", True, "cupy-cuda12x"),
        ("nvidia-cuda-runtime-cu12==12.1.105", False, "nvidia-cuda-runtime-cu12"),
        ("tensorrt>=10.0", False, "tensorrt"),
        ("paddlepaddle-gpu", False, None),  # unpinned, and no installer: maybe a label
        ("tensorrt", False, None),  # a format's name
        ("multi-gpu", False, None),
        (" TensorRT<br>(ms)", False, None),  # a table header
        ("onnx>=1.12.0", True, None),  # no CUDA build
        ("paddlepaddle>=3.0.0", True, None),
    ],
)
def test_cuda_build(text, installer, want):
    assert cuda_build(text, installer) == want
