"""The wild-scripts projects held out from round 35 on (data; ``wild_projects`` merges them)."""

from __future__ import annotations

from wild_project import Project

LATEST = {
    # held out (round 35): a Triton kernel library with its tests, benchmarks and CuTe kernels,
    # two RL/fine-tuning frameworks that also run on NPUs (with their tests and scripts), a
    # diffusion toolkit, a 3D-detection codebase, an equivariant-network library and a model hub,
    # at first contact
    "liger-kernel": Project(
        "liger-kernel",
        "0.8.5",
        (
            "liger_kernel-0.8.5.tar.gz",
            "4e8f8f611a8ad735c37c989410d09820bb08881f131851a3967c34baa7889d66",
        ),
        (
            "src/liger_kernel=liger_kernel",
            "liger_cute_kernels",
            "test",
            "benchmark",
            "examples",
            "pyproject.toml",
            "setup.py",
        ),
        held_out=True,
    ),
    "verl": Project(
        "verl",
        "0.9.1",
        (
            "verl-0.9.1.tar.gz",
            "3e03d8816b2546b2c5580705671b8d0bb3f79b8364e7b5c56dbfc1245536ba22",
        ),
        ("verl", "tests", "scripts", "pyproject.toml", "setup.py"),
        held_out=True,
    ),
    "ms-swift": Project(
        "ms-swift",
        "4.6.0",
        (
            "ms_swift-4.6.0.tar.gz",
            "8483da407748abc01e106b54c25d6453eb2ef4a6e136dab001b9a522c9c80d71",
        ),
        ("swift", "tests", "setup.py"),
        held_out=True,
    ),
    "diffsynth": Project(
        "diffsynth",
        "2.1.12",
        (
            "diffsynth-2.1.12.tar.gz",
            "8bf1286f932fdc54d7fcc7f86fb73e137f037a2014bdc081d8a1423e9caf67e5",
        ),
        ("diffsynth", "pyproject.toml"),
        held_out=True,
    ),
    "mmdet3d": Project(
        "mmdet3d",
        "1.4.0",
        (
            "mmdet3d-1.4.0.tar.gz",
            "2c76b591edb65c3009265c9c308646ccee2ca31375b1dd3f27bd3773621c333d",
        ),
        ("mmdet3d", "setup.py"),
        held_out=True,
    ),
    "e3nn": Project(
        "e3nn",
        "0.6.0",
        (
            "e3nn-0.6.0.tar.gz",
            "5c2b414e9527aad27d755ae9546596e3f7706f45a21dae71c7deedb6c048e4de",
        ),
        ("e3nn", "tests", "examples", "pyproject.toml"),
        held_out=True,
    ),
    "modelscope": Project(
        "modelscope",
        "1.40.2",
        (
            "modelscope-1.40.2.tar.gz",
            "7a642cef8c144c28c4ddcc37db5fd803f5481f0d78a7f26c2b9e0e2a225b528c",
        ),
        ("modelscope", "pyproject.toml", "setup.py"),
        held_out=True,
    ),
}
