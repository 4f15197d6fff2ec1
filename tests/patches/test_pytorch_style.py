"""PyTorch's own style for the changed lines (``patches/generate/pytorch_style.py``)."""

from __future__ import annotations

from patches.generate import pytorch_style as style

FORMATTED = """import torch


def sync_if_on_device(example_inputs):
    for arg in example_inputs:
        if isinstance(arg, torch.Tensor) and arg.is_cuda:
            torch.cuda.synchronize()
            break


def untouched(x):
    return x
"""
REWRITTEN = FORMATTED.replace(
    "arg.is_cuda:", 'arg.device.type != "cpu" and torch.accelerator.is_available():'
).replace("torch.cuda.synchronize()", "torch.accelerator.synchronize()")


def test_changed_lines_of_a_formatted_file_take_its_format():
    assert style.formatted(FORMATTED)
    out = style.conform("torch/_dynamo/repro/sync.py", FORMATTED, REWRITTEN)
    assert out == REWRITTEN.replace(
        '        if isinstance(arg, torch.Tensor) and arg.device.type != "cpu" and '
        "torch.accelerator.is_available():\n",
        "        if (\n"
        "            isinstance(arg, torch.Tensor)\n"
        '            and arg.device.type != "cpu"\n'
        "            and torch.accelerator.is_available()\n"
        "        ):\n",
    )
    assert style.formatted(out)


def test_an_unformatted_file_is_left_as_written():
    """2.4-era files outside the formatter (single quotes, long lines) keep their layout."""
    before = FORMATTED.replace("return x", "return {'x' : x}")
    assert not style.formatted(before)
    after = before.replace("torch.cuda.synchronize()", "torch.accelerator.synchronize()")
    assert style.conform("torch/storage.py", before, after) == after


def test_conform_is_idempotent_and_a_no_op_without_a_change():
    once = style.conform("torch/x.py", FORMATTED, REWRITTEN)
    assert style.conform("torch/x.py", FORMATTED, once) == once
    assert style.conform("torch/x.py", FORMATTED, FORMATTED) == FORMATTED


def test_an_overlong_changed_line_of_an_unformatted_file_is_wrapped():
    before = "x = {'a' : 1}\n\n\ndef f():\n    return g(1)\n"
    assert not style.formatted(before)
    after = before.replace("g(1)", "g(" + ", ".join(f"argument_{i}" for i in range(12)) + ")")
    out = style.conform("torch/x.py", before, after)
    assert out.startswith("x = {'a' : 1}\n")  # the untouched line keeps its layout
    assert style.long_lines(before, out) == []
    assert max(len(ln) for ln in out.splitlines()) <= style.LINE_LENGTH


def test_long_changed_lines_are_reported():
    before = "x = f(a)\ny = 1\n"
    after = "x = f(" + "a" * 140 + ")\ny = 1\n"
    assert style.changed_ranges(before, after) == [(1, 1)]
    assert style.long_lines(before, after) == [1]
    assert style.long_lines(before, "x = g(a)\ny = 1\n") == []


TWO_STEPS = """import torch


def sync_if_on_device(example_inputs, flag):
    for arg in example_inputs:
        if isinstance(arg, torch.Tensor) and arg.is_cuda and flag:
            torch.cuda.synchronize()
            break


def stats(device_index_for_the_statistics):
    if torch.cuda.is_available():
        return torch.cuda.memory_allocated(device_index_for_the_statistics) + 12345
    return 0
"""


def test_every_patch_of_a_file_ends_in_its_format(tmp_path):
    """Two steps change one formatted file; each patch, applied alone on the one before, leaves
    the file in PyTorch's format (not only the file's last patch), and the series applies."""
    from patches.common import gitutil
    from patches.generate.cli import main

    src = tmp_path / "src" / "torch" / "_dynamo"
    src.mkdir(parents=True)
    (src / "sync.py").write_text(TWO_STEPS)
    assert style.formatted(TWO_STEPS, "torch/_dynamo/sync.py")
    repo = gitutil.init_copy(tmp_path / "src", tmp_path / "repo")
    assert main([str(repo), "--out", str(tmp_path / "series"), "--unsafe-fixes"]) == 0
    names = (tmp_path / "series" / "series").read_text().split()
    assert len(names) == 2
    work = gitutil.init_copy(repo, tmp_path / "work", ignore=lambda *_: {".git"})
    states = []
    for name in names:
        gitutil.am(work, [tmp_path / "series" / name])
        states.append((work / "torch" / "_dynamo" / "sync.py").read_text())
    assert states[0] != TWO_STEPS and states[1] != states[0]
    for text in states:
        assert style.formatted(text, "torch/_dynamo/sync.py"), text
    assert "torch.cuda" not in states[1]


def test_a_crlf_file_keeps_its_line_endings():
    """Only the wrapped statement changes: a CRLF file formatted, or outside the formatter with an
    overlong changed line, stays CRLF (avalanche's files; text mode once turned the whole file
    to LF)."""
    long_call = "g(" + ", ".join(f"argument_{i}" for i in range(12)) + ")"
    for before in (FORMATTED, "x = {'a' : 1}\n\n\ndef f():\n    return g(1)\n"):
        before = before.replace("\n", "\r\n")
        after = before.replace("return x", "return " + long_call).replace("g(1)", long_call)
        out = style.conform("pkg/x.py", before, after)
        assert out.count("\r\n") == out.count("\n"), "every line ends CRLF"
        assert style.long_lines(before, out) == []
    assert style.formatted(FORMATTED.replace("\n", "\r\n"))


def test_the_lines_a_crlf_file_gains_end_crlf():
    """A family writes its new lines (an import, a guard) with ``\\n``; in a CRLF file they take
    the file's ending, or ``git am --keep-cr`` leaves a file of mixed endings."""
    before = "import os\r\n\r\nx = os.getpid()\r\n"
    after = "import os\r\nimport torch\n\r\nx = torch.accelerator.is_available()\r\n"
    assert style.conform("t.py", before, after) == after.replace("torch\n", "torch\r\n")
    lf = before.replace("\r\n", "\n")
    assert style.conform("t.py", lf, lf + "y = 1\n") == lf + "y = 1\n"
