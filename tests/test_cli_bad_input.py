"""Every command, every kind of bad input: exit 2 and ONE stderr line naming the bad value.

Table-driven over the entry points (README "Exit codes"). Each row runs the command's ``main``
in this process with the working directory, ``$TMPDIR`` and ``$XDG_CACHE_HOME`` inside a watched
folder, and asserts: exit code 2, exactly one line on stderr that contains the bad value and
what would be accepted, no traceback, nothing on stdout (no partial output), and the watched
folder unchanged (nothing written, no scratch left behind). Bad input is rejected before any
scan or device run, so the whole table needs no device and no subprocess.

A hypothesis fuzz drives the same parsers with random flag/value mixes around one value known
to be bad: whatever else is on the command line, the answer is still one line and exit 2.
"""

from __future__ import annotations

import contextlib
import io
import os
import runpy
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]


def _autoport(argv: list[str]) -> int:
    # the module form never installs; every row fails before install(), and we check that
    from accelerator_api._port import installed, uninstall

    old = sys.argv
    sys.argv = ["autoport", *argv]
    try:
        runpy.run_module("accelerator_api.autoport", run_name="__main__")
        return 0
    finally:
        sys.argv = old
        was = installed()
        uninstall()
        assert not was, "autoport installed itself on bad input"


def _main(module: str):
    def run(argv: list[str]) -> int:
        import importlib

        return importlib.import_module(module).main(argv)

    return run


ENTRY = {
    "scan": _main("audits.scan"),
    "precommit": _main("audits.precommit"),  # hn-precommit, the pre-commit hook
    "generate": _main("patches.generate.cli"),
    "validate": _main("patches.validate.cli"),
    "matrix": _main("patches.matrix.cli"),
    "autoport": _autoport,
    "prove": _main("patches.prove.cli"),  # `make prove` is `python -m patches.prove $(ARGS)`
}


def _snapshot(top: Path) -> dict[str, tuple]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(top):
        # torch's inductor cache (made in $TMPDIR when op_db is imported) is not the command's
        dirnames[:] = [n for n in dirnames if not n.startswith("torchinductor_")]
        for n in dirnames + filenames:
            p = Path(dirpath, n)
            st_ = p.lstat()
            # a folder's mtime changes when a scratch inside it comes and goes: compare entries
            size_mtime = () if p.is_dir() else (st_.st_size, st_.st_mtime_ns)
            out[str(p.relative_to(top))] = (st_.st_mode, *size_mtime)
    return out


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """The user's folder: a tree, files of every bad kind; nothing here may change."""
    top = tmp_path_factory.mktemp("user")
    tree = top / "tree"
    tree.mkdir()
    (tree / "app.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    (top / "notes.txt").write_text("a file, not a directory\n")
    (top / "empty.json").write_text("")
    (top / "corrupt.json").write_text('{"findings": [')
    (top / "other.json").write_text('{"hello": 1}\n')
    (top / "garbage.patch").write_text("this is not a patch\n")
    (top / "emptydir").mkdir()
    series = top / "series_missing"
    series.mkdir()
    (series / "series").write_text("0001-gone.patch\n")
    old = top / "old_series"
    old.mkdir()
    (old / "0001-x.patch").write_text("From 0 Mon Sep 17 00:00:00 2001\n")
    (top / "stale.patch").write_text(
        "--- a/nowhere.py\n+++ b/nowhere.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"
    )
    locked = top / "locked"
    locked.mkdir()
    (top / "readonly.json").write_text("{}")
    (top / "readonly.json").chmod(0o444)
    locked.chmod(0)
    (top / "work").mkdir()  # cwd, TMPDIR and XDG_CACHE_HOME live here
    yield top
    locked.chmod(0o755)


@pytest.fixture
def watched(inputs, monkeypatch):
    work = inputs / "work"
    monkeypatch.chdir(work)
    monkeypatch.setenv("XDG_CACHE_HOME", str(work / "cache"))
    monkeypatch.setenv("TMPDIR", str(work))
    monkeypatch.setattr(tempfile, "tempdir", str(work))
    return inputs


ROOT_USER = os.geteuid() == 0  # root reads and writes anything: permission rows cannot apply

# (entry, argv, strings the one stderr line must contain: the bad value first, then what fits)
# {u} is the user's folder; relative paths are under the (watched) working directory.
ROWS = [
    # audits.scan
    ("scan", ["{u}/nope"], ["nope", "not a directory"]),
    ("scan", ["{u}/notes.txt"], ["notes.txt", "not a directory"]),
    ("scan", ["{u}/tree", "--select", "HN999"], ["HN999", "rule names"]),
    ("scan", ["{u}/tree", "--ignore", "HNX"], ["HNX", "id prefixes"]),
    ("scan", ["{u}/tree", "-f", "nope"], ["'nope'", "choose from", "sarif"]),
    ("scan", ["{u}/tree", "-o", "{u}/emptydir"], ["emptydir", "give a file path"]),
    ("scan", ["{u}/tree", "-o", "{u}/nope/r.json"], ["nope/r.json", "no such directory"]),
    ("scan", ["{u}/tree", "-o", "{u}/notes.txt/r"], ["notes.txt/r", "no such directory"]),
    ("scan", ["{u}/tree", "--baseline", "{u}/empty.json"], ["empty.json", "JSON report"]),
    ("scan", ["{u}/tree", "--baseline", "{u}/corrupt.json"], ["corrupt.json", "JSON report"]),
    ("scan", ["{u}/tree", "--baseline", "{u}/other.json"], ["other.json", "'findings'"]),
    ("scan", ["{u}/tree", "--baseline", "{u}/nope.json"], ["nope.json", "No such file"]),
    ("scan", ["{u}/tree", "--jobs", "-1"], ["-1", ">= 0"]),
    ("scan", ["{u}/tree", "--jobs", "many"], ["'many'", "int"]),
    ("scan", ["{u}/tree", "--language", "rust"], ["'rust'", "python"]),
    ("scan", ["{u}/tree", "--max-file-size", "0"], ["0", ">= 1"]),
    ("scan", ["{u}/tree", "--bogus"], ["--bogus", "--help"]),
    ("scan", ["diff"], ["old, new", "required"]),
    ("scan", ["diff", "{u}/nope.json", "{u}/corrupt.json"], ["nope.json", "JSON report"]),
    ("scan", ["diff", "{u}/empty.json", "{u}/empty.json"], ["empty.json", "JSON report"]),
    ("scan", ["diff", "{u}/tree", "{u}/tree"], ["tree", "JSON report"]),
    ("scan", ["diff", "{u}/other.json", "{u}/other.json", "-f", "html"], ["'html'", "text"]),
    # hn-precommit
    ("precommit", ["--baseline", "{u}/nope.json", "a.py"], ["nope.json", "create it"]),
    ("precommit", ["--root", "{u}/notes.txt", "a.py"], ["notes.txt", "not a directory"]),
    ("precommit", ["--bogus"], ["--bogus", "--help"]),
    # patches.generate
    ("generate", ["{u}/nope", "--out", "s"], ["nope", "no such directory"]),
    ("generate", ["{u}/notes.txt", "--out", "s"], ["notes.txt", "not a directory"]),
    ("generate", ["{u}/tree", "--out", "{u}/notes.txt"], ["notes.txt", "give a directory"]),
    ("generate", ["{u}/tree", "--out", "{u}/old_series"], ["old_series", "empty or new"]),
    ("generate", ["{u}/tree", "--out", "{u}/notes.txt/s"], ["notes.txt/s", "is a file"]),
    ("generate", ["{u}/tree"], ["nothing to do", "--out DIR"]),
    ("generate", ["{u}/tree", "--diff", "--force"], ["--force", "--apply"]),
    ("generate", ["{u}/tree", "--out", "s", "--select", "HN999"], ["HN999", "rule names"]),
    ("generate", ["{u}/tree", "--diff", "--report", "{u}/corrupt.json"], ["corrupt.json", "JSON"]),
    ("generate", ["{u}/tree", "--diff", "--report", "{u}/empty.json"], ["empty.json", "JSON"]),
    ("generate", ["{u}/tree", "--diff", "--report", "{u}/other.json"], ["other.json", "report"]),
    ("generate", ["{u}/tree", "--diff", "--report", "{u}/nope.json"], ["nope.json", "no such"]),
    ("generate", ["{u}/tree", "--diff", "--report", "{u}/tree"], ["tree", "expected a file"]),
    ("generate", ["{u}/tree", "--diff", "--target", "nope"], ["'nope'", "accelerator_api"]),
    ("generate", ["{u}/tree", "--diff", "--max-files", "0"], ["--max-files", ">= 1"]),
    ("generate", ["{u}/tree", "--diff", "--date", "soon"], ["'soon'", "ISO 8601"]),
    ("generate", ["{u}/tree", "--diff", "--author", "bob"], ["'bob'", "Name <email>"]),
    ("generate", ["{u}/tree", "--diff", "--devices", "tpu"], ["'tpu'", "cpu, cuda"]),
    # patches.validate
    ("validate", ["--tree", "{u}/nope", "--series", "{u}/stale.patch"], ["nope", "no such"]),
    ("validate", ["--tree", "{u}/notes.txt", "--series", "x"], ["notes.txt", "not a dir"]),
    ("validate", ["--tree", "{u}/tree", "--series", "{u}/nope"], ["nope", "series folder"]),
    (
        "validate",
        ["--tree", "{u}/tree", "--series", "{u}/empty.json"],
        ["empty.json", "file changes"],
    ),
    (
        "validate",
        ["--tree", "{u}/tree", "--series", "{u}/garbage.patch"],
        ["garbage", "file changes"],
    ),
    ("validate", ["--tree", "{u}/tree", "--series", "{u}/emptydir"], ["emptydir", "*.patch"]),
    (
        "validate",
        ["--tree", "{u}/tree", "--series", "{u}/series_missing"],
        ["0001-gone", "missing"],
    ),
    ("validate", ["--tree", "{u}/tree", "--series", "{u}/stale.patch"], ["stale.patch", "apply"]),
    ("validate", ["--tree", "{u}/tree", "--series", "x", "--devices", "tpu"], ["'tpu'", "cpu"]),
    ("validate", ["--tree", "{u}/tree", "--series", "x", "--devices", ","], ["','", "known"]),
    ("validate", ["--tree", "{u}/tree", "--series", "x", "--devices", "cpu,cpu"], ["cpu", "twice"]),
    ("validate", ["--tree", "{u}/tree", "--series", "x", "--plugin", "npu"], ["'npu'", "DEVICE="]),
    (
        "validate",
        ["--tree", "{u}/tree", "--series", "x", "--plugin", "cpu=m"],
        ["cpu=m", "PrivateUse1"],
    ),
    (
        "validate",
        ["--tree", "{u}/tree", "--series", "x", "--plugin", "npu=m"],
        ["npu=m", "--devices"],
    ),
    (
        "validate",
        ["--tree", "{u}/tree", "--series", "x", "--test-root", "{u}"],
        ["--test-root", "installed"],
    ),
    (
        "validate",
        ["--tree", "{u}/tree", "--series", "{u}/stale.patch", "--timeout", "0"],
        ["0", "> 0"],
    ),
    (
        "validate",
        ["--tree", "{u}/tree", "--series", "{u}/stale.patch", "--json", "{u}/emptydir"],
        ["emptydir", "file path"],
    ),
    (
        "validate",
        ["--tree", "{u}/tree", "--series", "{u}/stale.patch", "-o", "{u}/no/r.json"],
        ["no/r.json", "no such directory"],
    ),
    (
        "validate",
        ["--tree", "{u}/tree", "--series", "{u}/stale.patch", "--work", "{u}/notes.txt"],
        ["notes.txt", "is a file"],
    ),
    (
        "validate",
        ["--tree", "{u}/tree", "--series", "x", "--format", "html"],
        ["'html'", "markdown"],
    ),
    ("validate", ["--series", "x"], ["--tree", "required"]),
    (
        "validate",
        ["--tree", "{u}/tree", "--series", "{u}/stale.patch", "-o", "{u}/notes.txt/r"],
        ["notes.txt/r", "is a file, not a directory"],
    ),
    # patches.matrix
    ("matrix", ["--devices", "foo", "--ops", "add"], ["'foo'", "known: cpu"]),
    ("matrix", ["--devices", "", "--ops", "add"], ["''", "known: cpu"]),
    ("matrix", ["--devices", "cpu,cpu"], ["cpu", "twice"]),
    ("matrix", ["--devices", "cpu", "--ops", "nosuchop"], ["'nosuchop'", "op_db"]),
    ("matrix", ["--devices", "cpu", "--ops", "addd"], ["'addd'", "did you mean add"]),
    ("matrix", ["--devices", "cpu", "--ops", ","], ["--ops", "add,mul"]),
    ("matrix", ["--devices", "cpu", "--dtypes", "float99"], ["'float99'", "float32"]),
    ("matrix", ["--devices", "cpu", "--plugin", "x"], ["'x'", "DEVICE=MODULE"]),
    ("matrix", ["--devices", "cpu", "--plugin", "trn=9bad"], ["9bad", "DEVICE=MODULE"]),
    ("matrix", ["--devices", "cpu", "--out", "{u}/notes.txt"], ["notes.txt", "give a directory"]),
    ("matrix", ["--devices", "cpu", "--work", "{u}/notes.txt"], ["notes.txt", "give a directory"]),
    ("matrix", ["--devices", "cpu", "--max-samples", "0"], ["0", "> 0"]),
    ("matrix", ["--devices", "cpu", "--timeout", "-1"], ["-1", "> 0"]),
    ("matrix", ["--devices", "cpu", "--tests", "{u}/tree"], ["tree", "expected a file"]),
    ("matrix", ["--devices", "cpu", "--tests", "{u}/nope.py"], ["nope.py", "no such file"]),
    ("matrix", ["--full", "--ops", "add"], ["--ops", "--full"]),
    ("matrix", ["--devices", "cpu", "--out", "{u}/notes.txt/m"], ["notes.txt/m", "is a file"]),
    ("matrix", ["--bogus"], ["--bogus", "--help"]),
    (
        "validate",
        ["--tree", "{u}/tree", "--series", "{u}/stale.patch", "--shard", "3/2"],
        ["'3/2'", "1 <= I <= N"],
    ),
    (
        "validate",
        ["--tree", "{u}/tree", "--series", "{u}/stale.patch", "--xdist", "many"],
        ["'many'", "auto"],
    ),
    ("validate", ["merge", "{u}/nope.json"], ["nope.json", "JSON report"]),
    # a flag is never abbreviated: --out (a folder elsewhere) is not --output (a report file)
    ("scan", ["{u}/tree", "--out", "{u}/r.json"], ["unrecognized arguments: --out", "--help"]),
    (
        "validate",
        ["--tree", "{u}/tree", "--series", "{u}/stale.patch", "--out", "{u}/r.json"],
        ["unrecognized arguments: --out", "--help"],
    ),
    ("matrix", ["--devices", "cpu", "--work", "{u}/w", "--dev", "cpu"], ["--dev", "--help"]),
    ("validate", ["merge", "{u}/corrupt.json"], ["corrupt.json", "JSON report"]),
    ("matrix", ["--devices", "cpu", "--shard", "0/4"], ["'0/4'", "1 <= I <= N"]),
    ("matrix", ["--devices", "cpu", "--workers", "0"], ["--workers 0", "1 or more"]),
    ("matrix", ["merge", "{u}/corrupt.json", "--out", "m"], ["corrupt.json", ""]),
    ("matrix", ["merge", "{u}/tree"], ["--out", "required"]),
    ("matrix", ["costs", "{u}/nope"], ["nope", "matrix.json"]),
    # make prove / python -m patches.prove
    ("prove", ["--bogus"], ["--bogus", "--help"]),
    ("prove", ["--out", "{u}/notes.txt"], ["notes.txt", "give a directory"]),
    ("prove", ["--devices", "tpu"], ["'tpu'", "known: cpu"]),
    ("prove", ["--subsystems", "nope"], ["nope", "known:"]),
    ("prove", ["--series", "{u}/nope"], ["nope", "series folder"]),
    ("prove", ["--config", "{u}/tree"], ["tree", "expected a file"]),
    ("prove", ["--timeout", "0"], ["0", "> 0"]),
    # accelerator_api.autoport
    ("autoport", [], ["script", "-m MODULE"]),
    ("autoport", ["{u}/nope.py"], ["nope.py", "no such script"]),
    ("autoport", ["{u}/tree"], ["tree", "a directory"]),
    (
        "autoport",
        ["--import", "no_such_plugin_mod", "{u}/tree/app.py"],
        ["no_such_plugin_mod", "module"],
    ),
    ("autoport", ["-m", "no_such_app_mod"], ["no_such_app_mod", "sys.path"]),
    ("autoport", ["--report", "{u}/emptydir", "{u}/tree/app.py"], ["emptydir", "file path"]),
    ("autoport", ["--report", "{u}/no/r.json", "{u}/tree/app.py"], ["no/r.json", "cannot write"]),
]

PERMISSION_ROWS = [
    ("scan", ["{u}/tree", "-o", "{u}/readonly.json"], ["readonly.json", "not writable"]),
    ("generate", ["{u}/locked", "--diff"], ["locked", "not readable"]),
    ("generate", ["{u}/tree", "--out", "{u}/locked/s"], ["locked", "permission"]),
    ("validate", ["--tree", "{u}/locked", "--series", "x"], ["locked", "not readable"]),
    ("matrix", ["--devices", "cpu", "--out", "{u}/locked"], ["locked", "not writable"]),
]


def _run(entry: str, argv: list[str], capsys) -> tuple[int, str, str]:
    capsys.readouterr()
    try:
        rc = ENTRY[entry](argv)
    except SystemExit as e:
        rc = e.code
    out, err = capsys.readouterr()
    return rc, out, err


def _check_row(entry, argv, needles, watched, capsys):
    argv = [a.replace("{u}", str(watched)) for a in argv]
    before = _snapshot(watched)
    rc, out, err = _run(entry, argv, capsys)
    lines = err.strip().splitlines()
    assert rc == 2, f"exit {rc}, stderr: {err!r}"
    assert len(lines) == 1, f"expected one stderr line, got {len(lines)}:\n{err}"
    assert "Traceback" not in err
    for needle in needles:
        assert needle in lines[0], f"{needle!r} not named in: {lines[0]}"
    assert out == "", f"partial output on stdout: {out[:300]!r}"
    assert _snapshot(watched) == before, "bad input wrote to the user's folder"


@pytest.mark.parametrize(
    "entry, argv, needles", ROWS, ids=[f"{e}:{' '.join(a)}"[:80] for e, a, _ in ROWS]
)
def test_bad_input_is_one_line_and_exit_2(entry, argv, needles, watched, capsys):
    _check_row(entry, argv, needles, watched, capsys)


@pytest.mark.skipif(ROOT_USER, reason="root bypasses file permissions")
@pytest.mark.parametrize(
    "entry, argv, needles",
    PERMISSION_ROWS,
    ids=[f"{e}:{' '.join(a)}"[:80] for e, a, _ in PERMISSION_ROWS],
)
def test_unreadable_and_unwritable_paths(entry, argv, needles, watched, capsys):
    _check_row(entry, argv, needles, watched, capsys)


# ---------------------------------------------------------------------------- fuzz

_VALUES = st.one_of(
    st.sampled_from(
        [
            "",
            ",",
            "=",
            "a=b",
            "=m",
            "cpu",
            "cpu,trn",
            "trn=kernels.trn",
            "0",
            "-1",
            "1/0",
            "3/2",
            "nan",
            "inf",
            "1e9",
            "HN1",
            "ALL",
            "x" * 300,
            "é",
            "a\nb",
            "float32",
            "add",
        ]
    ),
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=12).filter(
        lambda s: not s.startswith("-")
    ),
)

# per entry: the flags to mix in, and one argument list that is bad whatever else is given
# (checked after the mixed flags, so they are all parsed and checked first)
FUZZ = {
    "scan": (
        ["--select", "--ignore", "--exclude", "--jobs", "--max-file-size", "-f", "--language"],
        lambda u: [f"{u}/tree", "-o", f"{u}/nope/r.json"],
    ),
    "generate": (
        ["--select", "--ignore", "--target", "--max-files", "--author", "--date", "--devices"],
        lambda u: [f"{u}/tree", "--diff", "--report", f"{u}/nope.json"],
    ),
    "validate": (
        ["--devices", "--plugin", "--timeout", "--rev", "--format", "--tests", "--pytest-arg"],
        lambda u: ["--tree", f"{u}/tree", "--series", f"{u}/nope"],
    ),
    "matrix": (
        ["--devices", "--plugin", "--dtypes", "--max-samples", "--timeout"],
        lambda u: ["--tests", f"{u}/nope.py"],
    ),
    "autoport": (["--import", "--report"], lambda u: [f"{u}/nope.py"]),
    "prove": (
        ["--devices", "--subsystems", "--timeout", "--xdist", "--out"],
        lambda u: ["--config", f"{u}/nope.yaml"],
    ),
}


@pytest.mark.parametrize("entry", sorted(FUZZ))
def test_fuzzed_arguments_still_one_line_and_exit_2(entry, watched):
    flags, anchor = FUZZ[entry]

    @settings(
        max_examples=60,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(st.lists(st.tuples(st.sampled_from(flags), _VALUES), max_size=4))
    def check(mixed):
        argv = [x for pair in mixed for x in pair] + anchor(str(watched))
        before = _snapshot(watched)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = ENTRY[entry](argv)
            except SystemExit as e:
                rc = e.code
        lines = err.getvalue().strip().splitlines()
        assert rc == 2, (argv, rc, err.getvalue())
        assert len(lines) == 1 and "Traceback" not in lines[0], (argv, err.getvalue())
        assert out.getvalue() == "", (argv, out.getvalue()[:200])
        assert _snapshot(watched) == before, argv

    check()
