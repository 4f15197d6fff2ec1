"""The replay benchmark's scorer (tests/benchmarks/replay_score.py) on hand-written snippets."""

from __future__ import annotations

import pytest

from patches.generate.tree_uses import REASON
from tests.benchmarks.replay_score import (
    Hunk,
    Record,
    agrees,
    families,
    load_equivalences,
    parse_diff,
    reason_keys,
    rewrite_at,
    same_text,
    score,
    stop,
    summarize,
    touched_lines,
)

EQ = load_equivalences()

DIFF = """\
diff --git a/pkg/a.py b/pkg/a.py
index 1111111..2222222 100644
--- a/pkg/a.py
+++ b/pkg/a.py
@@ -2 +2 @@ def f():
-    s = torch.cuda.Stream()
+    s = torch.Stream()
@@ -5,0 +6,2 @@ def f():
+    # an inserted line
+    pass
@@ -7,2 +9,3 @@ def g():
-    x = y.cuda()
-    torch.cuda.synchronize()
+    x = y.to(
+        dev)
+    torch.accelerator.synchronize()
@@ -12,2 +15,2 @@ def h():
-    a = torch.cuda.current_stream()
-    b = torch.cuda.Event()
+    a = torch.accelerator.current_stream()
+    b = torch.Event()
"""

OLD = [f"line {n}" for n in range(1, 15)]


def test_parse_diff_reads_hunks_and_insertions():
    hunks = parse_diff(DIFF)["pkg/a.py"]
    assert [(h.old_start, len(h.old), len(h.new)) for h in hunks] == [
        (2, 1, 1),
        (6, 0, 2),
        (7, 2, 3),
        (12, 2, 2),
    ]
    assert hunks[0].old == ["    s = torch.cuda.Stream()"]


def test_pure_insertion_touches_no_old_line():
    hunks = parse_diff(DIFF)["pkg/a.py"]
    assert rewrite_at(hunks, 5, 6, OLD) is None
    assert rewrite_at(hunks, 3, 4, OLD) is None


def test_equal_length_hunk_is_read_line_by_line():
    hunks = parse_diff(DIFF)["pkg/a.py"]
    before, after = rewrite_at(hunks, 13, 13, OLD)
    assert before == "line 13"
    assert after == "    b = torch.Event()"


def test_uneven_hunk_is_taken_whole_once_and_untouched_lines_stay():
    hunks = parse_diff(DIFF)["pkg/a.py"]
    _, after = rewrite_at(hunks, 6, 8, OLD)
    assert after.splitlines() == [
        "line 6",
        "    x = y.to(",
        "        dev)",
        "    torch.accelerator.synchronize()",
    ]


# a device pick rewritten as one wrapped statement over as many lines as the `if`/`else` it
# replaces: an equal-length hunk whose lines do not correspond
PICK_OLD = [
    "def f():",
    "    if torch.cuda.is_available():",
    "        # workaround",
    '        device = "cuda"',
    "    else:",
    '        device = "cpu"',
    "    return device",
]
PICK_NEW = [
    "    device = (",
    "        torch.accelerator.current_accelerator().type",
    "        if torch.accelerator.is_available()",
    '        else "cpu"',
    "    )",
]


def test_a_statement_rewritten_over_other_lines_is_read_whole():
    hunks = [Hunk(2, PICK_OLD[1:6], PICK_NEW)]
    for line in (2, 4):  # the `if` header and the assignment in its body
        before, after = rewrite_at(hunks, line, line, PICK_OLD)
        assert before == PICK_OLD[line - 1]
        assert after.splitlines() == PICK_NEW
    _, after = rewrite_at(hunks, 2, 2, PICK_OLD)
    up = 'device = next((gpu for gpu in GPU_TYPES if getattr(torch, gpu).is_available()), "cpu")'
    assert agrees(PICK_OLD[1], after, up, "internal", EQ)
    # the old `return` line after the hunk is still itself
    assert rewrite_at(hunks + [Hunk(7, [PICK_OLD[6]], ["    return str(device)"])], 7, 7, PICK_OLD)[
        1
    ] == ("    return str(device)")


def test_a_hunk_of_several_statements_maps_statement_to_statement():
    old = ["def f():", "    a = torch.cuda.current_stream()", "    b = torch.cuda.Event()"]
    new = ["    a = torch.accelerator.current_stream()", "    b = torch.Event(", "        x)"]
    hunks = [Hunk(2, old[1:], new)]
    assert rewrite_at(hunks, 2, 2, old)[1] == new[0]
    assert rewrite_at(hunks, 3, 3, old)[1] == "\n".join(new[1:])


def test_a_line_out_of_a_longer_statement_stays_a_line():
    old = ["acts = [", "    ProfilerActivity.CPU,", "    ProfilerActivity.CUDA,", "]"]
    hunks = [Hunk(3, [old[2]], ["    accelerator_activity,"])]
    assert rewrite_at(hunks, 3, 3, old)[1] == "    accelerator_activity,"


def test_same_text_is_the_same_syntax_tree():
    one_line = 'device = acc.current_accelerator().type if acc.is_available() else "cpu"'
    wrapped = "\n".join(PICK_NEW).replace("torch.accelerator", "acc").replace('"', "'")
    assert same_text(wrapped, one_line)
    assert same_text("if x.device.type != 'cpu':", 'if (x.device.type != "cpu"):')
    assert not same_text(wrapped, one_line.replace('"cpu"', '"meta"'))
    assert not same_text("f(a, b)", "f(b, a)")
    # a line out of a longer statement is compared as text
    assert same_text("    torch.Event(),", "torch.Event(),")


def test_touches_is_inclusive_at_both_ends():
    h = Hunk(10, ["a", "b"], ["c"])
    assert h.touches(11, 20) and h.touches(1, 10)
    assert not h.touches(12, 20) and not h.touches(1, 9)


@pytest.mark.parametrize(
    "ours, upstream",
    [
        # public neutral API and torch's internal helpers read alike
        ("torch.accelerator.current_stream()", "torch.get_device_module(dev).current_stream()"),
        ("torch.accelerator.synchronize()", "self._device_module.synchronize()"),
        ("torch.accelerator.current_device_index()", "device_handle.current_device()"),
        ("torch.Stream()", "torch.get_device_module().Stream()"),
    ],
)
def test_equivalent_spellings_share_families(ours, upstream):
    assert families(ours, EQ) & families(upstream, EQ)
    old = ours.replace("torch.accelerator.", "torch.cuda.").replace(
        "torch.Stream", "torch.cuda.Stream"
    )
    assert agrees(old, ours, upstream, "internal", EQ)


@pytest.mark.parametrize(
    "ours, upstream",
    [
        # torch.autocast / torch.GradScaler are torch.amp's objects
        ("with torch.autocast(device_type, enabled=e):", "with torch.amp.autocast(dt, enabled=e):"),
        ("s = torch.GradScaler(device_type)", "s = torch.amp.GradScaler(device_type)"),
        # torch.accelerator's older names of the same functions
        (
            "i = torch.accelerator.current_device_idx()",
            "i = torch.accelerator.current_device_index()",
        ),
        ("torch.accelerator.set_device_idx(r)", "torch.accelerator.set_device_index(r)"),
    ],
)
def test_other_names_of_one_neutral_api_agree(ours, upstream):
    old = {
        "autocast": "with torch.cuda.amp.autocast(enabled=e):",
        "Scaler": "s = torch.cuda.amp.GradScaler()",
    }
    old = next((v for k, v in old.items() if k in ours), ours.replace("accelerator", "cuda"))
    assert agrees(old, ours, upstream, "neutral", EQ)


def test_a_device_module_asked_for_cuda_is_not_neutral():
    old = "torch.cuda.synchronize()"
    up = "torch.accelerator.synchronize()"
    for ours in (
        'torch.get_device_module("cuda").synchronize()',
        "getattr(torch, 'cuda').synchronize()",
    ):
        assert not any(f.startswith("neutral:") for f in families(ours, EQ)), ours
        assert not agrees(old, ours, up, "neutral", EQ)
    assert agrees(old, "torch.get_device_module(device).synchronize()", up, "neutral", EQ)
    assert agrees(old, "getattr(torch, device.type).synchronize()", up, "neutral", EQ)


def test_a_different_family_does_not_agree():
    old = "s = torch.cuda.Stream()"
    assert agrees(old, "s = torch.Stream()", "s = torch.Stream()", "neutral", EQ)
    # a current stream is not a new stream
    assert not agrees(
        old, "s = torch.accelerator.current_stream()", "s = torch.Stream()", "neutral", EQ
    )


def test_keeping_a_cuda_call_upstream_removed_does_not_agree():
    old = "with torch.cuda.device(d), torch.cuda.stream(s):"
    up = "with torch.accelerator.device_index(d), s:"
    assert agrees(old, "with torch.accelerator.device_index(d), s:", up, "neutral", EQ)
    assert not agrees(
        old, "with torch.accelerator.device_index(d), torch.cuda.stream(s):", up, "neutral", EQ
    )


def test_device_checks_and_variables():
    old = "if x.is_cuda:"
    up = 'if x.device.type != "cpu":'
    assert agrees(old, "if x.device.type != 'cpu':", up, "neutral", EQ)
    assert not agrees(old, "if x.is_cuda or x.is_xpu:", up, "neutral", EQ)
    old = 'y = torch.empty(3, device="cuda")'
    assert agrees(
        old,
        "y = torch.empty(3, device=device_type)",
        "y = torch.empty(3, device=self.device.type)",
        "neutral",
        EQ,
    )
    assert not agrees(
        old,
        'y = torch.empty(3, device="cuda:0")',
        "y = torch.empty(3, device=device_type)",
        "neutral",
        EQ,
    )


def test_alongside_is_covered_by_a_neutral_rewrite_only():
    old = "ok = p.is_cuda"
    up = "ok = p.is_cuda or p.is_xpu"
    assert agrees(old, 'ok = p.device.type != "cpu"', up, "alongside", EQ)
    assert not agrees(old, "ok = p.is_cuda", up, "alongside", EQ)


def test_a_profiler_event_tested_against_the_host_is_a_device_check():
    """``evt.device_type != DeviceType.CPU`` asks whether an event is on any device (the
    DeviceType.CPU exclusion is the host test, as ``x.device.type != "cpu"`` is); upstream named
    XPU/MTIA/HPU beside CUDA instead (form ``alongside``)."""
    old = "elif evt.device_type in [DeviceType.CUDA, DeviceType.PrivateUse1]:"
    up = "elif evt.device_type in [DeviceType.CUDA, DeviceType.PrivateUse1, DeviceType.XPU]:"
    assert agrees(old, "elif evt.device_type != DeviceType.CPU:", up, "alongside", EQ)
    assert agrees(old, "elif DeviceType.CPU != evt.device_type:", up, "alongside", EQ)
    assert agrees(
        "ok = e.device_type != DeviceType.CUDA",
        "ok = e.device_type == DeviceType.CPU",
        "ok = e.device_type not in [DeviceType.CUDA, DeviceType.XPU]",
        "alongside",
        EQ,
    )
    assert agrees(  # the memory record's test against the file's own host list
        "if r.device_type() in [DeviceType.CUDA, DeviceType.HIP]",
        "if r.device_type() not in [DeviceType.CPU, DeviceType.MKLDNN, DeviceType.IDEEP]",
        "if r.device_type() in [DeviceType.CUDA, DeviceType.HIP, DeviceType.XPU]",
        "alongside",
        EQ,
    )
    # naming CPU is no device check by itself: a host type beside CUDA keeps CUDA's family
    assert not agrees(
        old, "elif evt.device_type in [DeviceType.CPU, DeviceType.CUDA]:", up, "alongside", EQ
    )
    assert "neutral:device-check" not in families("x = DeviceType.CPU", EQ)
    assert "neutral:device-check" not in families(
        "e.device_type in [DeviceType.CPU, DeviceType.CUDA]", EQ
    )


def test_comments_do_not_count():
    old = "torch.cuda.synchronize()  # torch.cuda is slow"
    assert agrees(
        old,
        "torch.accelerator.synchronize()  # torch.cuda is slow",
        "torch.accelerator.synchronize()",
        "neutral",
        EQ,
    )
    assert same_text("torch.accelerator.synchronize()  # x", "torch.accelerator.synchronize()")
    assert not same_text("torch.accelerator.synchronize()", "torch.accelerator.synchronize(0)")


def test_score_and_summary():
    labels = [
        {
            "id": "1",
            "path": "pkg/a.py",
            "status": "neutralized",
            "kind": "stream",
            "form": "neutral",
            "old_line": 2,
            "old_span": [2, 2],
            "old_text": "s = torch.cuda.Stream()",
            "new_text": "s = torch.Stream()",
        },
        {
            "id": "2",
            "path": "pkg/a.py",
            "status": "neutralized",
            "kind": "event",
            "form": "neutral",
            "old_line": 4,
            "old_span": [4, 4],
            "old_text": "e = torch.cuda.Event()",
            "new_text": "e = torch.Event()",
        },
        {
            "id": "3",
            "path": "pkg/a.py",
            "status": "kept",
            "old_line": 12,
            "old_span": [12, 12],
            "old_text": "a = torch.cuda.current_stream()",
        },
        {
            "id": "4",
            "path": "pkg/b.py",
            "status": "kept",
            "old_line": 1,
            "old_span": [1, 1],
            "old_text": "x",
        },
    ]
    old = {}
    old["pkg/a.py"] = [
        "def f():",
        "    s = torch.cuda.Stream()",
        "",
        "    e = torch.cuda.Event()",
    ] + [""] * 10
    recs = score(labels, parse_diff(DIFF), old, EQ)
    assert [(r.rewritten, r.agrees, r.same) for r in recs] == [
        (True, True, True),
        (False, False, False),
        (True, False, False),
        (False, False, False),
    ]
    s = summarize(recs)
    assert (s["all"]["all"].sites, s["all"]["all"].rewritten, s["all"]["all"].agree) == (2, 1, 1)
    assert s["kind"]["stream"].rewritten == 1 and s["kind"]["event"].rewritten == 0
    assert (s["kept"]["kept"].sites, s["kept"]["kept"].rewritten) == (2, 1)


def test_what_stops_a_miss():
    gate = (
        "HN506 LEFT, the code is about CUDA itself: cuda-check (x): y; HN711 left: manual rule: no"
    )
    assert reason_keys(gate) == ["HN506 cuda-check", "HN711 manual rule"]
    assert stop(gate) == "gate"
    assert stop("HN501 LEFT: no `device` in scope; HN710 left: manual rule: no") == "declined"
    assert stop("HN203 left: fix style 'context': no codemod, report only") == "no codemod"
    assert stop("no finding on this line") == "no finding"
    use = f"HN101 left: {REASON}; HN710 left: manual rule: no"  # a wrapper use: one key
    assert reason_keys(use) == [
        "HN101 a use of a project wrapper of a CUDA query",
        "HN710 manual rule",
    ]


def test_touched_lines_are_the_replaced_old_lines():
    assert touched_lines(parse_diff(DIFF)) == [
        "pkg/a.py:2",
        "pkg/a.py:7",
        "pkg/a.py:8",
        "pkg/a.py:12",
        "pkg/a.py:13",
    ]


def test_compare_sorts_changed_outcomes():
    from tests.benchmarks.replay_compare import changes

    def rec(i, status, rewritten, agrees=False):
        r = Record(i, "p.py", 1, (1, 1), status, "k", "neutral", "old", "new")
        r.rewritten, r.agrees = rewritten, agrees
        return r

    before = [
        {"id": "a", "rewritten": False, "agrees": False},
        {"id": "b", "rewritten": True, "agrees": True},
        {"id": "c", "rewritten": True, "agrees": True},
        {"id": "d", "rewritten": False, "agrees": False},
        {"id": "e", "rewritten": True, "agrees": True},
    ]
    after = [
        rec("a", "neutralized", True, True),
        rec("b", "neutralized", False),
        rec("c", "neutralized", True, False),
        rec("d", "kept", True),
        rec("e", "neutralized", True, True),
        rec("z", "neutralized", True, True),  # not in the earlier run: ignored
    ]
    got = {k: [r.id for r in v] for k, v in changes(before, after).items() if v}
    assert got == {"rewritten": ["a"], "lost": ["b"], "disagrees": ["c"], "kept+": ["d"]}


def test_sources_come_from_the_cached_wheel_and_are_checked(tmp_path, monkeypatch):
    import hashlib
    import zipfile

    from tests.benchmarks import replay_fetch

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    wheels = tmp_path / "hwneutral" / "wheels"
    wheels.mkdir(parents=True)
    body = b"import torch\ntorch.cuda.synchronize()\n"
    with zipfile.ZipFile(wheels / "torch-9.9.9-cp311-cp311-linux_x86_64.whl", "w") as z:
        z.writestr("torch/a.py", body)
    digest = hashlib.sha256(body).hexdigest()
    monkeypatch.setattr(replay_fetch.subprocess, "run", None)  # the cached wheel is used, no pip
    src = replay_fetch.sources("9.9.9", {"torch/a.py": digest})
    assert (src / "torch/a.py").read_bytes() == body
    assert replay_fetch.sources("9.9.9", {"torch/a.py": digest}) == src  # reused
    with pytest.raises(replay_fetch.FetchError, match="sha256"):
        replay_fetch.sources("9.9.9", {"torch/a.py": "0" * 64})
    with pytest.raises(replay_fetch.FetchError, match="not in"):
        replay_fetch.sources("9.9.9", {"torch/b.py": digest})
    (wheels / "torch-8.0.0-cp311-cp311-linux_x86_64.whl").write_bytes(b"partial")
    with pytest.raises(replay_fetch.FetchError, match="not a zip"):
        replay_fetch.sources("8.0.0", {"torch/a.py": digest})


def test_a_wheel_pip_cannot_fetch_is_a_clear_error(tmp_path, monkeypatch):
    import subprocess

    from tests.benchmarks import replay_fetch

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    calls = []

    def fake_pip(cmd, **kw):
        calls.append(cmd)
        return subprocess.CompletedProcess(cmd, 1, "", "ERROR: No matching distribution found")

    monkeypatch.setattr(replay_fetch.subprocess, "run", fake_pip)
    with pytest.raises(replay_fetch.FetchError, match="No matching distribution"):
        replay_fetch.sources("7.7.7", {"torch/a.py": "0" * 64})
    assert calls and calls[0][-1] == "torch==7.7.7" and "--no-deps" in calls[0]
