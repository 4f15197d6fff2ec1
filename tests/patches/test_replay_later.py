"""replay.py --later: kept-site rewrites followed release by release into later pairs' labels."""

from __future__ import annotations

import pytest

from tests.benchmarks.replay_later import chain, check
from tests.benchmarks.replay_score import Record


def _labels(old, new, labels, files):
    return {
        "pair": {"old": old, "new": new, "file_sha256": dict.fromkeys(files, {})},
        "labels": labels,
    }


def _kept(path, line, new_line):
    return {
        "id": f"a:b:{path}:{line}",
        "path": path,
        "status": "kept",
        "old_line": line,
        "new_lines": [[new_line, new_line]],
    }


def _rec(path, line, status="kept", rewritten=True):
    return Record(f"a:b:{path}:{line}", path, line, (line, line), status, "", "", "", "", rewritten)


def _made(path, line, text):
    return {
        "path": path,
        "status": "neutralized",
        "old_line": line,
        "old_span": [line - 1, line + 1],
        "new_text": text,
    }


THIS = _labels(
    "a",
    "b",
    [_kept("m.py", 10, 40), _kept("m.py", 20, 50), _kept("n.py", 5, 5), _kept("n.py", 7, 7)],
    ["m.py", "n.py"],
)
NEXT = _labels(
    "b",
    "c",
    [_made("m.py", 40, "x"), {**_kept("m.py", 50, 60), "old_span": [50, 50]}],
    ["m.py"],
)
AFTER = _labels("c", "d", [_made("m.py", 60, "y"), _made("n.py", 9, "z")], ["m.py", "n.py"])

# n.py is not in NEXT's files: its lines are carried by the texts (two lines inserted above 5,
# line 7 edited).
TEXTS = {
    ("b", "n.py"): "a\nb\nc\nd\ncuda_5\nf\ncuda_7\n",
    ("c", "n.py"): "new\nnew\na\nb\nc\nd\ncuda_5\nf\nedited_7\n",
}


def _text(release, path):
    return TEXTS.get((release, path))


def test_a_kept_rewrite_upstream_made_later_is_counted_by_its_new_line():
    recs = [_rec("m.py", 10), _rec("m.py", 20), _rec("n.py", 5), _rec("n.py", 7)]
    res = check(THIS, [NEXT], recs, _text)
    assert res.releases == ["c"]
    assert res.rewritten == 4
    assert res.made == [("m.py:10", "c", "x")]  # line 20 -> 50 is still kept in c
    assert res.changed == [("n.py:7", "c")]  # its line was edited without a label
    assert res.still_kept == 2


def test_a_site_is_followed_through_a_kept_label_into_the_next_pair():
    res = check(THIS, [NEXT, AFTER], [_rec("m.py", 20)], _text)
    assert res.made == [("m.py:20", "d", "y")]  # b:50 -> c:60 (NEXT's kept label) -> made in d


def test_a_file_the_list_does_not_cover_is_followed_by_its_text():
    texts = {**TEXTS, ("d", "n.py"): TEXTS[("c", "n.py")]}
    after = _labels("c", "d", [_made("n.py", 7, "w")], ["n.py"])
    res = check(THIS, [NEXT, after], [_rec("n.py", 5)], lambda r, p: texts.get((r, p)))
    assert res.made == [("n.py:5", "d", "w")]  # b:5 -> c:7: two lines were inserted above
    quiet = _labels("c", "d", [], ["n.py"])
    res = check(THIS, [NEXT, quiet], [_rec("n.py", 5)], lambda r, p: texts.get((r, p)))
    assert (res.made, res.changed, res.still_kept) == ([], [], 1)


def test_a_file_missing_from_a_release_is_changed():
    res = check(THIS, [NEXT, AFTER], [_rec("n.py", 5)], _text)  # no ("d", "n.py") text
    assert res.changed == [("n.py:5", "d")]


def test_unrewritten_and_neutralized_records_are_not_kept_rewrites():
    recs = [_rec("m.py", 10, rewritten=False), _rec("m.py", 10, "neutralized")]
    res = check(THIS, [NEXT], recs, _text)
    assert (res.rewritten, res.made, res.changed) == (0, [], [])


def test_later_lists_must_follow_release_by_release():
    with pytest.raises(ValueError, match="not from b"):
        chain(THIS, [_labels("z", "c", [], [])])
    with pytest.raises(ValueError, match="not from c"):
        chain(THIS, [NEXT, _labels("b", "d", [], [])])
    chain(THIS, [NEXT, AFTER])


def test_wheel_text_reads_any_file_of_a_cached_wheel(tmp_path, monkeypatch):
    import zipfile

    from tests.benchmarks import replay_fetch

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    wheels = tmp_path / "hwneutral" / "wheels"
    wheels.mkdir(parents=True)
    with zipfile.ZipFile(wheels / "torch-9.9.9-cp311-cp311-linux_x86_64.whl", "w") as z:
        z.writestr("torch/a.py", "x = 1\n")
    monkeypatch.setattr(replay_fetch.subprocess, "run", None)  # the cached wheel, no pip
    text = replay_fetch.WheelText()
    try:
        assert text("9.9.9", "torch/a.py") == "x = 1\n"
        assert text("9.9.9", "torch/b.py") is None
    finally:
        text.close()


def test_a_capped_pip_says_how_to_download_the_wheel(tmp_path, monkeypatch):
    import subprocess

    from tests.benchmarks import replay_fetch

    refused = "ERROR: Cannot install torch==9.9.9 because ... The user requested (constraint) torch<=2.14.1"

    def pip(cmd, **kw):
        return subprocess.CompletedProcess(cmd, 1, "", refused)

    monkeypatch.setattr(replay_fetch.subprocess, "run", pip)
    with pytest.raises(replay_fetch.FetchError, match=r"PIP_CONFIG_FILE=/dev/null pip download"):
        replay_fetch.download("9.9.9", tmp_path)
