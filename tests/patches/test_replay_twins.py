"""replay.py: kept-site rewrites with a twin upstream neutralised."""

from __future__ import annotations

from tests.benchmarks.replay_score import Record
from tests.benchmarks.replay_twins import api_key, check, statement_key


def test_statement_key_sets_aside_layout_comments_quotes_and_plain_names_not_attributes():
    a = statement_key("torch.cuda.set_device(rank)")
    assert a == statement_key("torch.cuda.set_device( device )  # pick it")
    assert a != statement_key("torch.cuda.set_device(self.rank)")
    assert statement_key("x = torch.device('cuda')") == statement_key('y = torch.device("cuda")')
    assert statement_key("if torch.cuda.is_available():") != statement_key(
        "if not torch.cuda.is_available():"
    )


def test_api_key_reads_full_dotted_names_and_leaves_local_names_out():
    assert api_key("cuda_rng_state = torch.clone(torch.cuda.get_rng_state())") == (
        "torch.cuda.get_rng_state",
    )
    assert api_key("ok = x.is_cuda and y.is_cuda") == ("is_cuda", "is_cuda")
    assert api_key("d = torch.device('cuda:%d' % r)") == ('"cuda:%d"',)
    assert api_key("has_cuda = flag") == ()


def _rec(line, status, text, rewritten=True):
    return Record(
        f"a:b:m.py:{line}", "m.py", line, (line, line), status, "", "", text, "", rewritten
    )


DATA = {"pair": {"old": "1.0", "new": "1.1"}}
LATER = {
    "pair": {"old": "1.1", "new": "1.2"},
    "labels": [
        {"path": "n.py", "old_line": 7, "status": "neutralized", "old_text": "x.cuda()"},
        {"path": "n.py", "old_line": 9, "status": "kept", "old_text": "torch.cuda.empty_cache()"},
    ],
}


def test_each_kept_rewrite_is_matched_by_statement_then_by_api_and_the_rest_stand_alone():
    records = [
        _rec(1, "neutralized", "torch.cuda.set_device(rank)"),
        _rec(2, "neutralized", "n = torch.cuda.device_count()"),
        _rec(3, "neutralized", "torch.cuda.synchronize()", rewritten=False),
        _rec(10, "kept", "torch.cuda.set_device(local_rank)"),
        _rec(11, "kept", "if torch.cuda.device_count() > 1:"),
        _rec(12, "kept", "torch.cuda.synchronize()"),
        _rec(13, "kept", "model = model.cuda()"),
        _rec(14, "kept", "torch.cuda.empty_cache()"),
        _rec(15, "kept", "torch.cuda.set_device(0)", rewritten=False),
    ]
    got = check("unsafe", DATA, records)
    assert got.rewritten == 5
    assert got.twins == [
        ("m.py:10", "statement", "m.py:1", "1.1"),
        ("m.py:11", "api", "m.py:2", "1.1"),
    ]
    # 12: its twin was not rewritten; 13, 14: no neutralised label of the pair is like them
    assert got.alone == ["m.py:12", "m.py:13", "m.py:14"]

    later = check("unsafe", DATA, records, [LATER])
    assert ("m.py:13", "api", "n.py:7", "1.2") in later.twins  # a kept label is no twin
    assert later.alone == ["m.py:12", "m.py:14"]
