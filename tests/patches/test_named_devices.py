"""An indexed device a library only builds as a value (``torch.device("cuda", i)``,
``f"cuda:{rank}"``) with nothing checking for an accelerator first: without CUDA the original
named a device and raised nothing, the accelerator's type raises (``current_accelerator()`` is
None), so the site is left, said (transformer-lens' ``find_embedding_device``, whose fallback its
CPU tests reach; f5-tts' ``f"cuda:{rank}"`` used behind a flag; round 38). Where the original
failed without CUDA too, or where only an accelerator reaches the site, it is rewritten."""

from __future__ import annotations

import pytest

from tests.patches.codemod_helpers import fix

ACC = "torch.accelerator.current_accelerator().type"

LIBRARY = (
    "import torch\n\n\n"
    "def embedding_device(device_map):\n"
    "    first = min(device_map.values())\n"
    '    return torch.device("cuda", first)\n\n\n'
    "def misplaced(target):\n"
    '    return torch.device(f"cuda:{target}") if isinstance(target, int) else target\n\n\n'
    "def run_sim(rank, use_gpu):\n"
    '    device = f"cuda:{rank}"\n'
    '    other = "cuda:%d" % rank\n'
    '    named = "cuda:{}".format(rank)\n'
    '    return device if use_gpu else None, other, named, torch.device("cuda:%d" % rank)\n'
)


def test_a_library_s_named_device_is_left_and_says_why():
    rw, _ = fix(LIBRARY, path="pkg/multi_gpu.py")
    assert rw.after == LIBRARY
    why = {ln: w for _r, ln, w in rw.outcome.failed}
    for line in (6, 10, 14, 15, 16, 17):
        assert why[line].startswith("unguarded: an indexed device built as a value"), why


@pytest.mark.parametrize(
    "body, written",
    [
        # torch places with it at once: the original failed without CUDA too
        ('    return x.to(torch.device("cuda", rank))\n', f"x.to(torch.device({ACC}, rank))"),
        ('    return torch.zeros(2, device=f"cuda:{rank}")\n', f'device=f"{{{ACC}}}:{{rank}}"'),
        # the index asks CUDA itself
        (
            '    return torch.device("cuda", torch.cuda.current_device())\n',
            f"torch.device({ACC}, torch.accelerator.current_device_index())",
        ),
        # only an accelerator reaches it
        (
            '    if torch.cuda.is_available():\n        return torch.device("cuda", rank)\n',
            f"torch.device({ACC}, rank)",
        ),
        (
            '    torch.cuda.set_device(rank)\n    return torch.device("cuda", rank)\n',
            f"torch.device({ACC}, rank)",
        ),
        (
            "    assert torch.cuda.device_count() > rank, 'too few GPUs'\n"
            '    device = f"cuda:{rank}"\n'
            "    return device\n",
            f'f"{{{ACC}}}:{{rank}}"',
        ),
    ],
)
def test_a_named_device_is_rewritten_where_cuda_was_needed_anyway(body, written):
    src = f"import torch\n\n\ndef place(x, rank):\n{body}"
    rw, _ = fix(src, path="pkg/place.py")
    assert written in rw.after, rw.after
    assert not [w for _r, _ln, w in rw.outcome.failed if w.startswith("unguarded: an indexed")]


def test_an_ungated_test_is_like_a_library():
    src = (
        "import pytest\nimport torch\n\n\n"
        "class TestIndex:\n"
        '    @pytest.mark.parametrize("n", [1, 2])\n'
        "    def test_offset(self, n, monkeypatch):\n"
        '        assert offset(torch.device("cuda", 2), n).index == 2 + n\n'
    )
    rw, _ = fix(src, path="tests/test_index.py")
    assert rw.after == src
    assert [w for _r, _ln, w in rw.outcome.failed if w.startswith("unguarded: an indexed")]
    # an autouse fixture that only checks afterwards skips nothing (unsloth-zoo's)
    checked = src.replace(
        "class TestIndex:",
        "@pytest.fixture(autouse=True)\ndef no_fallback():\n    yield\n    assert ok()\n\n\n"
        "class TestIndex:",
    )
    rw, _ = fix(checked, path="tests/test_index.py")
    assert rw.after == checked


@pytest.mark.parametrize(
    "gate",
    [
        "pytestmark = pytest.mark.gpu\n\n\n",
        "@pytest.fixture(autouse=True)\ndef needs_gpu(gpu):\n    pass\n\n\n",
        '@pytest.fixture(autouse=True)\ndef needs_gpu():\n    pytest.skip("gpu")\n\n\n',
    ],
)
@pytest.mark.parametrize(
    "test",
    [
        '@pytest.mark.skipif(not has_gpu(), reason="gpu")\ndef test_offset():\n    {use}\n',
        "def test_offset(cuda_device):\n    {use}\n",
        'def test_offset():\n    if not has_gpu():\n        pytest.skip("gpu")\n    {use}\n',
        "class TestIndex:\n    def setup_method(self):\n        pass\n\n"
        "    def test_offset(self):\n        {use}\n",
    ],
)
def test_a_test_something_may_skip_is_rewritten(gate, test):
    use = 'assert offset(torch.device("cuda", 2)).index == 2'
    for head in ("", gate):
        src = "import pytest\nimport torch\n\n\n" + head + test.format(use=use)
        rw, _ = fix(src, path="tests/test_index.py")
        assert f"torch.device({ACC}, 2)" in rw.after, src


def test_a_main_block_is_a_program():
    src = (
        "import torch\n\n\n"
        "def predict(device):\n"
        "    return device\n\n\n"
        'if __name__ == "__main__":\n'
        '    predict(device=torch.device("cuda", 0))\n'
    )
    rw, _ = fix(src, path="pkg/predict.py")
    assert f"torch.device({ACC}, 0)" in rw.after


def test_a_placement_on_one_path_only_does_not_need_cuda_on_the_others():
    """f5-tts' ``run_sim`` names ``f"cuda:{rank}"`` and places with it only ``if use_gpu:``; on
    a CPU-only machine the function ran. Placed on every path, the original failed there too."""
    src = (
        "import torch\n\n\n"
        "def run_sim(rank, model, use_gpu):\n"
        '    device = f"cuda:{rank}"\n'
        "    if use_gpu:\n"
        "        model = model.cuda(device)\n"
        "    return model\n\n\n"
        "def run_always(rank, model):\n"
        '    device = f"cuda:{rank}"\n'
        "    return model.to(device)\n"
    )
    rw, _ = fix(src, path="pkg/eval.py")
    sim, always = rw.after.split("def run_always")
    assert 'device = f"cuda:{rank}"' in sim
    assert f'device = f"{{{ACC}}}:{{rank}}"' in always


def test_a_test_whose_decorators_only_patch_is_ungated():
    """compressed-tensors' convert tests patch the module's scheduler and assert the devices it
    is handed (``torch.device("cuda:1")``): unittest.mock's ``patch`` skips nothing, and the
    mocks it hands the test are no fixtures (round 38)."""
    src = (
        "from unittest.mock import patch\n\nimport torch\n\nimport pkg.convert as C\n\n\n"
        '@patch.object(C, "exec_jobs", return_value=[])\n'
        '@patch.object(C, "convert_file")\n'
        "def test_schedules(convert_file, exec_jobs, tmp_path):\n"
        '    C.convert(tmp_path, devices=[torch.device("cuda:1")])\n'
        '    convert_file.assert_called_once_with(tmp_path, torch.device("cuda:1"))\n'
    )
    rw, _ = fix(src, path="tests/test_convert.py")
    assert rw.after == src
    extra = src.replace("tmp_path):", "tmp_path, gpu):")  # a fixture of the project's: it may skip
    rw, _ = fix(extra, path="tests/test_convert.py")
    assert f"torch.device({ACC}, 1)" in rw.after
