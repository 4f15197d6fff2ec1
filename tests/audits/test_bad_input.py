"""Bad input: each case lands in report.errors, the rest of the tree is still scanned."""

import os

import pytest

from audits.engine import Options, run_scan

GOOD = b"import torch\ntorch.cuda.synchronize()\n"


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    (root / "good.py").write_bytes(GOOD)
    (root / "py2.py").write_bytes(b"import torch\nprint 'cuda', torch.cuda.is_available()\n")
    (root / "latin.py").write_bytes(b"x = 'caf\xe9'  # cuda\n")
    (root / "cookie.py").write_bytes(
        b"# -*- coding: latin-1 -*-\nimport torch\nx = '\xe9'\ntorch.cuda.synchronize()\n"
    )
    (root / "nul.py").write_bytes(b"torch.cuda.synchronize()\n\0\0\0")
    (root / "huge.py").write_bytes(b"x = 1  # cuda\n" * 50_000)
    (root / "deep.py").write_bytes(b"torch.cuda.x(" + b"(" * 300 + b"1" + b")" * 300 + b")\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_bytes(GOOD)
    os.symlink(outside, root / "escape")
    os.symlink(outside / "secret.py", root / "escape_file.py")
    os.symlink(root, root / "loop")
    os.symlink(root / "missing.py", root / "dangling.py")
    locked = root / "locked.py"
    locked.write_bytes(GOOD)
    locked.chmod(0)
    yield root
    locked.chmod(0o644)


def test_every_bad_input_is_an_error_and_the_scan_goes_on(tree, tmp_path):
    rep = run_scan(
        Options(root=str(tree), use_cache=False, jobs=1, max_bytes=500_000, languages=["python"])
    )
    reasons = {e.path: e.reason for e in rep.errors}
    assert reasons["py2.py"] == "syntax"
    assert reasons["latin.py"] == "encoding"
    assert reasons["nul.py"] == "binary"
    assert reasons["huge.py"] == "too-large"
    assert reasons["escape"] == "link-outside-root"
    assert reasons["escape_file.py"] == "link-outside-root"
    assert reasons["loop"] == "symlink-loop"
    assert reasons["dangling.py"] == "broken-link"
    if os.geteuid() != 0:  # root reads anything
        assert reasons["locked.py"] == "unreadable"
    found = {f.path for f in rep.findings}
    assert {"good.py", "cookie.py"} <= found
    assert not any("secret" in p or p.startswith("escape") for p in found)
    assert rep.languages["python"] >= 2


def test_scanned_code_is_never_imported(tmp_path):
    (tmp_path / "boom.py").write_text(
        "import torch\nraise SystemExit('imported!')\ntorch.cuda.synchronize()\n"
    )
    rep = run_scan(Options(root=str(tmp_path), use_cache=False, jobs=1))
    assert [f.rule for f in rep.findings] == ["HN105"]
