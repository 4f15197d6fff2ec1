"""A prove bundle's commits as a contributor pastes them: the ``Test Plan:`` is commands run from
a PyTorch checkout (relative paths only), author and date are the user's git identity unless
``--reproducible``, and each call site is listed once."""

from __future__ import annotations

import os
import subprocess
from datetime import datetime

import pytest

from patches.generate.series import DEFAULT_AUTHOR
from patches.prove.config import ProveError
from patches.prove.testplan import (
    checkout_commands,
    plan_text,
    signature,
    validate_command,
    with_test_plan,
)

NODES = {"test_utils.py": [], "test_dlpack.py": ["TestTorchDlPack::test_dlpack_capsule"]}


def test_plain_k_is_a_unittest_run_of_the_upstream_file():
    assert checkout_commands({"test_utils.py": []}, "TestCheckpoint") == [
        "python test/test_utils.py -k TestCheckpoint"
    ]
    assert checkout_commands(NODES, "") == [
        "python test/test_utils.py",
        "python test/test_dlpack.py -k TestTorchDlPack.test_dlpack_capsule",
    ]


def test_a_pytest_expression_runs_under_pytest_quoted():
    k = "test_device_mode_ops_to_ and not sparse"
    assert checkout_commands({"test_utils.py": []}, k) == [
        "python -m pytest test/test_utils.py -k 'test_device_mode_ops_to_ and not sparse'"
    ]


def test_validate_line_has_relative_paths_only():
    line = validate_command("dlpack/series", ["cpu", "trn"], NODES, "a and b")
    assert line == (
        "python -m patches.validate --tree . --series dlpack/series --devices cpu,trn "
        "--tests test/test_dlpack.py::TestTorchDlPack::test_dlpack_capsule,test/test_utils.py "
        "--pytest-arg=-k '--pytest-arg=a and b'"
    )
    plan = plan_text("dlpack/series", ["cpu", "trn"], NODES, "a and b")
    assert "/" + "home" not in plan and "site-packages" not in plan and " /" not in plan
    assert plan.splitlines()[0] == "From the root of a PyTorch checkout with this series applied:"


def test_the_test_plan_section_is_replaced_and_the_rest_kept():
    body = "Replace x with y.\n\nCall sites:\n  a.py:1: x\n\nTest Plan:\npython -m patches.validate --tree /abs\n"
    out = with_test_plan(body, "python test/test_a.py")
    assert (
        out
        == "Replace x with y.\n\nCall sites:\n  a.py:1: x\n\nTest Plan:\npython test/test_a.py\n"
    )
    assert with_test_plan("No plan.\n", "p").endswith("\n\nTest Plan:\np\n")


def _git_env(tmp_path, **extra):
    cfg = tmp_path / "gitconfig"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_AUTHOR", "GIT_COMMITTER"))}
    env.update(GIT_CONFIG_GLOBAL=str(cfg), GIT_CONFIG_NOSYSTEM="1", HOME=str(tmp_path), **extra)
    return cfg, env


def test_author_and_date_come_from_the_users_git_identity(tmp_path, monkeypatch):
    cfg, env = _git_env(tmp_path)
    subprocess.run(["git", "config", "--file", str(cfg), "user.name", "Ada Lovelace"], check=True)
    subprocess.run(
        ["git", "config", "--file", str(cfg), "user.email", "ada@example.org"], check=True
    )
    for k in [k for k in os.environ if k.startswith(("GIT_AUTHOR", "GIT_COMMITTER"))]:
        monkeypatch.delenv(k)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    before = datetime.now().astimezone()
    sig = signature(cwd=tmp_path)
    assert sig.author == "Ada Lovelace <ada@example.org>"
    when = datetime.fromisoformat(sig.date)
    assert abs((when - before).total_seconds()) < 60 and when.tzinfo is not None
    fixed = signature(reproducible=True, cwd=tmp_path)
    assert fixed.author == DEFAULT_AUTHOR and fixed.date is None


def test_no_git_identity_is_an_error_naming_the_way_out(tmp_path, monkeypatch):
    cfg, env = _git_env(tmp_path, EMAIL="")
    # git may not invent one from the user and host names: the identity must be configured
    subprocess.run(["git", "config", "--file", str(cfg), "user.useConfigOnly", "true"], check=True)
    for k in [k for k in os.environ if k.startswith(("GIT_AUTHOR", "GIT_COMMITTER"))]:
        monkeypatch.delenv(k)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    with pytest.raises(ProveError, match="user.name and user.email, or pass --reproducible"):
        signature(cwd=tmp_path)


def test_each_call_site_is_listed_once():
    from audits.model import Finding
    from patches.generate import audit_io, message

    rule = next(r for r in audit_io.load_rules().values() if r.replacement)

    def site(col: int, line: int = 7) -> Finding:
        src = "x = torch.cuda.is_available() and torch.cuda.device_count()"
        return Finding(
            rule.id, "n", "c", "call", "torch/a.py", line, col, line, col + 5, src, "torch", "m",
            None, "safe",
        )  # fmt: skip

    body = message.body(rule, "old", "new", [site(5), site(40), site(3, 9)], ".", "s", "cpu")
    calls = body.split("Call sites:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert calls == [
        "  torch/a.py:7: x = torch.cuda.is_available() and torch.cuda.device_count()",
        "  torch/a.py:9: x = torch.cuda.is_available() and torch.cuda.device_count()",
    ]
