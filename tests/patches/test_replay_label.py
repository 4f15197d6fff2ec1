"""The replay label drafter (tests/benchmarks/replay_label.py) on hand-written old/new pairs."""

from __future__ import annotations

import textwrap

from tests.benchmarks.replay_label import draft_file, has_cuda_token, kind_of, units


def _draft(old: str, new: str):
    return draft_file("pkg/m.py", textwrap.dedent(old), textwrap.dedent(new), "1.0", "1.1")


def _by_line(d) -> dict[int, dict]:
    return {lab["old_line"]: lab for lab in d.labels}


def test_stream_rewritten_to_torch_stream_is_neutralized():
    d = _draft(
        """\
        import torch


        def step(x):
            s = torch.cuda.Stream()
            return x + 1
        """,
        """\
        import torch


        def step(x):
            s = torch.Stream()
            return x + 1
        """,
    )
    lab = _by_line(d)[5]
    assert lab["status"] == "neutralized"
    assert lab["kind"] == "stream"
    assert lab["form"] == "neutral"
    assert lab["old_text"] == "s = torch.cuda.Stream()"
    assert lab["new_text"] == "s = torch.Stream()"
    assert lab["new_lines"] == [[5, 5]]
    assert lab["id"] == "1.0:1.1:pkg/m.py:5"


def test_is_cuda_to_device_type_check_is_neutralized_header_only():
    d = _draft(
        """\
        def f(t):
            if t.is_cuda:
                t = t * 2
            return t
        """,
        """\
        def f(t):
            if t.device.type != "cpu":
                t = t * 2
            return t
        """,
    )
    lab = _by_line(d)[2]
    assert (lab["status"], lab["kind"], lab["form"]) == ("neutralized", "device-check", "neutral")
    assert lab["old_span"] == [2, 2]  # the header, not the body
    assert lab["new_text"] == 'if t.device.type != "cpu":'


def test_xpu_added_beside_cuda_is_alongside():
    d = _draft(
        """\
        def ok(device):
            return device.type == "cuda"
        """,
        """\
        def ok(device):
            return device.type in ("cuda", "xpu")
        """,
    )
    lab = _by_line(d)[2]
    assert (lab["status"], lab["form"]) == ("neutralized", "alongside")


def test_moved_statement_is_kept_not_neutralized():
    old = """\
    import torch


    def a():
        torch.cuda.synchronize()
        return 1


    def b():
        return 2
    """
    new = """\
    import torch


    def a():
        return 1


    def b():
        torch.cuda.synchronize()
        return 2
    """
    d = _draft(old, new)
    assert d.count("neutralized") == 0
    lab = _by_line(d)[5]
    assert (lab["status"], lab["how"], lab["new_lines"]) == ("kept", "moved", [[9, 9]])


def test_neutralized_in_place_while_new_code_copies_the_old_line():
    # 2.13 -> 2.14 symmetric memory: the check was made neutral where it stood, and a new
    # function elsewhere has the old text: the unit is neutralized, not moved
    old = """\
    import torch


    def workspace():
        if torch.cuda.is_current_stream_capturing():
            raise RuntimeError("capturing")
        return 1
    """
    new = """\
    import torch


    def workspace():
        if torch.accelerator.current_stream().is_capturing():
            raise RuntimeError("capturing")
        return 1


    def gather(out):
        if torch.cuda.is_current_stream_capturing():
            out.fill_(0)
        return out
    """
    lab = _by_line(_draft(old, new))[5]
    assert (lab["status"], lab["new_lines"]) == ("neutralized", [[5, 5]])


def test_cuda_statement_replaced_by_unrelated_code_is_not_labelled():
    d = _draft(
        """\
        def f(x):
            torch.cuda.synchronize()
            return x
        """,
        """\
        def f(x):
            log.info("step done on %s", device_type)
            return x
        """,
    )
    assert d.labels == []
    assert [line for line, _ in d.unlabelled] == [2]


def test_cuda_kept_under_another_name_is_not_neutralized():
    # torch.cuda.amp.autocast -> torch.amp.autocast("cuda"): a deprecation fix, still CUDA
    d = _draft(
        """\
        with torch.cuda.amp.autocast(enabled=True):
            pass
        """,
        """\
        with torch.amp.autocast("cuda", enabled=True):
            pass
        """,
    )
    assert d.count("neutralized") == 0
    assert [line for line, _ in d.unlabelled] == [1]


def test_unchanged_and_reformatted_cuda_statements_are_kept():
    d = _draft(
        """\
        x = torch.cuda.current_device()
        y = torch.zeros(3, device='cuda')
        z = 1
        """,
        """\
        x = torch.cuda.current_device()
        y = torch.zeros(
            3, device="cuda"
        )
        z = 2
        """,
    )
    got = {lab["old_line"]: (lab["status"], lab.get("how")) for lab in d.labels}
    assert got == {1: ("kept", "equal"), 2: ("kept", "reformatted")}
    assert _by_line(d)[2]["new_lines"] == [[2, 4]]


def test_cuda_only_in_comment_or_docstring_makes_no_site():
    d = _draft(
        '''\
        def f(x):
            """Runs on CUDA: torch.cuda.synchronize() first."""
            y = x + 1  # was x.cuda()
            return y
        ''',
        '''\
        def f(x):
            """Runs on any accelerator: torch.accelerator.synchronize() first."""
            y = x + 1  # was x.to(device)
            return y
        ''',
    )
    assert d.labels == [] and d.unlabelled == []
    assert all(not has_cuda_token(u.norm) for u in units(textwrap.dedent('"""a"""\nx = 1  # cuda')))


def test_cuda_code_in_a_generated_string_is_codegen():
    d = _draft(
        """\
        def emit(m, t):
            s = f"{m}.cuda()"
            return s
        """,
        """\
        def emit(m, t):
            s = f'{m}.to("{t.device}")'
            return s
        """,
    )
    lab = _by_line(d)[2]
    assert (lab["status"], lab["form"], lab["kind"]) == ("neutralized", "codegen", "to-device")


def test_internal_helper_is_internal_form():
    d = _draft(
        """\
        def f():
            n = torch.cuda.device_count()
        """,
        """\
        def f():
            n = device_interface.device_count()
        """,
    )
    lab = _by_line(d)[2]
    assert (lab["form"], lab["kind"]) == ("internal", "device-index")


def test_kinds():
    assert kind_of("torch.cuda.synchronize()") == "synchronize"
    assert kind_of("x = y.cuda()") == "to-device"
    assert kind_of("if torch.cuda.is_available():") == "is_available"
    assert kind_of("dist.init_process_group('nccl')") == "backend-name"
    assert kind_of("e = torch.cuda.Event(enable_timing=True)") == "event"


def test_unparsable_file_has_no_labels():
    d = _draft("x = torch.cuda.Stream(\n", "x = torch.Stream()\n")
    assert d.labels == [] and d.unlabelled == []


def test_cuda_dropped_without_a_neutral_token_is_not_labelled():
    # with torch.cuda.stream(s) -> with s: the CUDA spot goes, but nothing neutral comes
    d = _draft(
        """\
        def f(s, x):
            with torch.cuda.stream(s):
                x = x + 1
        """,
        """\
        def f(s, x):
            with s:
                x = x + 1
        """,
    )
    assert d.count("neutralized") == 0
    assert [line for line, _ in d.unlabelled] == [2]


def test_cuda_only_in_a_message_is_not_a_neutralisation():
    d = _draft(
        """\
        def f(n):
            if n < 1:
                raise ValueError("group size only works when CUDA is available")
        """,
        """\
        def f(n):
            if n < 1:
                raise ValueError("group size only works when CUDA/XPU is available")
        """,
    )
    assert d.count("neutralized") == 0
    assert [line for line, _ in d.unlabelled] == [3]


def test_one_statement_become_two_is_read_whole():
    # the most similar single new statement (`mod.init()`) is not neutral alone; the pair is
    d = _draft(
        """\
        def f():
            n = torch.cuda.device_count()
            torch.cuda.init()
        """,
        """\
        def f():
            n = torch.accelerator.device_count()
            mod = torch.get_device_module(torch.accelerator.current_accelerator())
            mod.init()
        """,
    )
    lab = _by_line(d)[3]
    assert lab["status"] == "neutralized"
    assert lab["new_lines"] == [[3, 4]]
    assert _by_line(d)[2]["new_lines"] == [[2, 2]]


def test_compared_with_a_device_variables_type_is_neutralized():
    d = _draft(
        """\
        def f(meta, current_device):
            if meta.device().type != "cuda":
                raise ValueError(meta)
        """,
        """\
        def f(meta, current_device):
            if meta.device().type != current_device.type:
                raise ValueError(meta)
        """,
    )
    lab = _by_line(d)[2]
    assert (lab["status"], lab["kind"], lab["form"]) == ("neutralized", "device-check", "neutral")
