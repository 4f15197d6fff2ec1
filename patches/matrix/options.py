"""What one matrix run is asked to do (``patches.matrix.run.build``'s input)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

SMOKE_OPS = (
    "abs",
    "add",
    "bernoulli",
    "cat",
    "clamp",
    "div",
    "exp",
    "matmul",
    "mean",
    "mm",
    "mul",
    "nn.functional.layer_norm",
    "nn.functional.relu",
    "softmax",
    "sum",
    "where",
)
FULL_DTYPES = "float32,bfloat16"


@dataclass
class MatrixOptions:
    """``ops`` None: every op of op_db. ``shard`` ("I/N") runs one shard of the ops;
    ``workers`` > 1 splits a device's ops over that many worker processes (nested shards of the
    same cost-balanced assignment); ``tests``: upstream test files run on every device."""

    devices: list[str]
    dtypes: str = "float32"
    ops: list[str] | None = None
    tests: list[str] = field(default_factory=list)
    max_samples: int = 1_000_000
    timeout: float = 3600
    plugins: dict[str, str] = field(default_factory=dict)
    work: Path | None = None
    shard: str | None = None
    workers: int = 1
