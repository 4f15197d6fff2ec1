"""Locals named for CUDA renamed with their code (``patches/generate/local_rename.py``): the
unit on a step's text, with look-alikes that keep their names, and through ``generate`` (the
patch renames in the step that makes the last statement neutral, and says so)."""

from __future__ import annotations

import textwrap

import pytest

from patches.generate import pipeline
from patches.generate.local_rename import new_name, rename
from patches.generate.state import Settings

# torch._dynamo.utils.checkpoint_params in torch's shape (2.4.1)
RNG = textwrap.dedent(
    """\
    import torch


    def checkpoint_params(gm):
        with torch.no_grad():
            rng_state = torch.clone(torch.random.get_rng_state())
            if torch.cuda.is_available():
                cuda_rng_state = torch.clone(torch.cuda.get_rng_state())

        def restore():
            with torch.no_grad():
                torch.random.set_rng_state(rng_state)
                if torch.cuda.is_available():
                    torch.cuda.set_rng_state(cuda_rng_state)

        return restore
    """
)
NEUTRAL = {
    "torch.cuda.is_available": "torch.accelerator.is_available",
    "torch.cuda.get_rng_state": "torch.get_device_module().get_rng_state",
    "torch.cuda.set_rng_state": "torch.get_device_module().set_rng_state",
    "torch.cuda.memory_allocated": "torch.accelerator.memory_allocated",
    ".cuda(": ".to(",
}


def _neutral(text: str, keep: tuple[str, ...] = ()) -> str:
    for old, new in NEUTRAL.items():
        if old not in keep:
            text = text.replace(old, new)
    return text


def _renamed(src: str, keep: tuple[str, ...] = ()) -> tuple[str, list[tuple[str, str]]]:
    src = textwrap.dedent(src)
    text, done = rename(src, _neutral(src, keep))
    return text, [(r.old, r.new) for r in done]


def test_names():
    assert new_name("cuda_rng_state") == "accelerator_rng_state"
    assert new_name("has_cuda") == "has_accelerator"
    assert new_name("_cuda") == "_accelerator"
    assert new_name("NUM_CUDA_DEVICES") == "NUM_ACCELERATOR_DEVICES"
    for name in ("cudnn_ok", "cudagraph", "is_cudaish", "x", "cudaStream"):
        assert new_name(name) is None


def test_rng_state_and_its_closure():
    text, done = _renamed(RNG)
    assert done == [("cuda_rng_state", "accelerator_rng_state")]
    assert "cuda_rng_state" not in text
    assert text.count("accelerator_rng_state") == 2
    compile(text, "x.py", "exec")
    assert rename(RNG, text) == (text, [])  # idempotent


def test_two_functions_each_rename_their_own():
    two = RNG + "\n\n" + RNG.split("\n\n\n", 1)[1].replace("checkpoint_params", "preserve")
    text, done = _renamed(two)
    assert done == [("cuda_rng_state", "accelerator_rng_state")] * 2
    assert "cuda_rng_state" not in text


def test_half_neutral_keeps_the_name():
    # the restore still calls torch.cuda.set_rng_state: the name still feeds CUDA code
    assert _renamed(RNG, keep=("torch.cuda.set_rng_state",))[1] == []


@pytest.mark.parametrize(
    "src",
    [
        # never CUDA code: the series did not neutralise it
        """\
        def f(args):
            cuda_ok = args.flag
            return cuda_ok
        """,
        # only read by CUDA code: its value was never CUDA's (upstream's common_optimizers)
        """\
        import torch
        def f(device):
            cuda_supported_configs = [1, 2]
            return [0] + (cuda_supported_configs if torch.cuda.is_available() else [])
        """,
        # a parameter: callers pass it by name
        """\
        def f(cuda_tensor):
            cuda_tensor = cuda_tensor.cuda()
            return cuda_tensor
        """,
        # module level: importers may read it
        """\
        import torch
        cuda_mem = torch.cuda.memory_allocated()
        """,
        # a loop target
        """\
        import torch
        def f(xs):
            for cuda_x in xs:
                cuda_x = cuda_x.cuda()
            return cuda_x
        """,
        # read by name at run time
        """\
        import torch
        def f(x):
            cuda_x = x.cuda()
            return locals()
        """,
        # a self-documenting f-string prints the name
        """\
        import torch
        def f(x):
            cuda_mem = torch.cuda.memory_allocated()
            print(f"{cuda_mem=}")
        """,
        # a nested scope binds the name too
        """\
        import torch
        def f(x):
            cuda_x = x.cuda()
            def g():
                cuda_x = 1
                return cuda_x
            return cuda_x, g
        """,
        # the new name is taken in the file
        """\
        import torch
        accelerator_x = 0
        def f(x):
            cuda_x = x.cuda()
            return cuda_x
        """,
    ],
)
def test_look_alikes_keep_their_names(src):
    text, done = _renamed(src)
    assert done == []
    assert text == _neutral(textwrap.dedent(src))


def test_a_script_is_left_to_the_script_family():
    src = RNG + '\nif __name__ == "__main__":\n    checkpoint_params(None)()\n'
    assert rename(src, _neutral(src), "train.py")[1] == []
    assert rename(src, _neutral(src), "torch/_dynamo/utils.py")[1] == []  # a __main__ block
    assert rename(RNG, _neutral(RNG), "torch/_dynamo/utils.py")[1] != []


def test_non_ascii_columns_and_two_locals():
    text, done = _renamed(
        """\
        import torch
        def f(x):
            s = "µs"; cuda_x = x.cuda()
            has_cuda = cuda_x is not None
            return has_cuda
        """
    )
    assert sorted(done) == [("cuda_x", "accelerator_x"), ("has_cuda", "has_accelerator")]
    assert 's = "µs"; accelerator_x = x.to()' in text
    assert "has_accelerator = accelerator_x is not None" in text


def test_a_local_that_feeds_one_left_stays():
    # has_cuda reads cuda_x, which stays (its value is still CUDA's): neither is renamed
    _, done = _renamed(
        """\
        import torch
        def f(x):
            cuda_x = torch.cuda.current_device()
            has_cuda = cuda_x is not None
            return has_cuda
        """
    )
    assert done == []


def test_generate_renames_in_the_patch_and_says_so(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "rng.py").write_text(RNG)
    run = pipeline.generate(Settings(tmp_path, unsafe_fixes=True))
    assert not run.plan.unaccounted(run.report.findings)
    final = run.plan.finals["pkg/rng.py"]
    assert "cuda_rng_state" not in final and "accelerator_rng_state" in final
    (patch,) = [p for p in run.plan.patches if p.changes]
    assert "pkg/rng.py: checkpoint_params: cuda_rng_state -> accelerator_rng_state" in patch.body
    # safe mode leaves the rng calls (unsafe rule): nothing is renamed
    safe = pipeline.generate(Settings(tmp_path, unsafe_fixes=False))
    assert "accelerator_rng_state" not in safe.plan.finals.get("pkg/rng.py", RNG)


def test_a_splice_that_changes_more_is_refused(monkeypatch):
    from patches.generate import local_rename

    real = local_rename._apply
    monkeypatch.setattr(local_rename, "_apply", lambda t, e: real(t, e).replace("gm", "gx"))
    text = _neutral(RNG)
    assert rename(RNG, text) == (text, [])
