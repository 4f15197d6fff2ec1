"""``[modules]`` of ``cuda_intent.toml`` (the ``module-lacks`` kind) against the installed torch:
each listed module lacks each listed query that CUDA's module has, and each query said to answer
False without CUDA does so on this CPU-only machine."""

from __future__ import annotations

import pytest
import torch

from patches.generate.intent.data import data

TABLE = data()["modules"]
PAIRS = [(m, q) for m, names in TABLE["lacks"].items() for q in names]


@pytest.mark.parametrize(("module", "query"), PAIRS)
def test_the_module_lacks_what_cuda_has(module, query):
    assert hasattr(torch.cuda, query)
    assert not hasattr(getattr(torch, module), query), f"torch.{module} has {query} now"


@pytest.mark.skipif(torch.cuda.is_available(), reason="asks what CUDA's query says without CUDA")
@pytest.mark.parametrize("query", TABLE["false_without_cuda"])
def test_false_without_cuda(query):
    assert getattr(torch.cuda, query)() is False


IN_TREE = ("xpu", "mps", "mtia")  # the accelerator modules torch itself ships besides CUDA's


@pytest.mark.parametrize("query", sorted({q for _, q in PAIRS}))
def test_every_in_tree_module_lacking_the_query_is_listed(query):
    lacking = {m for m in IN_TREE if hasattr(torch, m) and not hasattr(getattr(torch, m), query)}
    listed = {m for m, names in TABLE["lacks"].items() if query in names}
    assert lacking == listed
