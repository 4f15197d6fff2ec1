"""pytest plugin: run every mutant of one hunk in one pytest process, one after the other.

Loaded with ``-p hn_mutant_plugin --hn-mutants SPEC.json`` (its folder is on PYTHONPATH, as for
``hn_validate_plugin``). SPEC: ``{"results": FILE, "stop_at_kill": true, "mutants": [{"index":
1, "file": "/abs/after/torch/x.py", "qualname": "f", "source": "/abs/mutant-1.py"}]}``.

The process imports torch, boots the device and collects the tests once; then, for each mutant,
the code of the function that holds the hunk (``qualname``, its nested functions included) is
swapped for the code compiled from the mutant's file (every function object with that code gets
it, so each reference sees it: a registry, an OpInfo, ``functools.wraps``), the collected tests
run in their order (``-x``: the first failing or erroring test kills the mutant; the fixtures are
torn down), and the original code is put back. One JSON line per mutant goes to ``results``:
``{"start": k}`` then ``{"end": k, "swapped": bool, "killed_by": test id or null, "status",
"message", "seconds"}``; a process that dies in a mutant leaves its ``start`` without ``end``.

Only what a swap can express is sent here (patches.validate.mutation decides): changes inside
one function's body, in a function none of whose changed lines ran outside a test. The caller
confirms every kill in a fresh process, so a test that fails only because an earlier mutant left
state behind never makes a hunk checked (the first mutant runs in the state a fresh process
has after collection: its kill needs no confirmation). Only the stdlib and pytest are imported.
"""

from __future__ import annotations

import gc
import json
import os
import time
import types
from pathlib import Path

import pytest
from _pytest.runner import runtestprotocol
from hn_validate_plugin import junit_id


def pytest_addoption(parser) -> None:
    parser.addoption("--hn-mutants", default=None, help="mutants of one hunk (JSON spec)")


def _codes(code: types.CodeType) -> dict[str, types.CodeType]:
    """qualname -> code object, for every function compiled in ``code``."""
    out: dict[str, types.CodeType] = {}
    todo = [code]
    while todo:
        c = todo.pop()
        for k in c.co_consts:
            if isinstance(k, types.CodeType):
                out.setdefault(k.co_qualname, k)
                todo.append(k)
    return out


def _functions(file: str, qualname: str) -> list[types.FunctionType]:
    """The live functions compiled from ``file`` whose code is ``qualname`` or nested in it."""
    real = os.path.realpath(file)
    seen: dict[str, bool] = {}
    out = []
    for o in gc.get_objects():
        if not isinstance(o, types.FunctionType):
            continue
        code = o.__code__
        q = code.co_qualname
        if q != qualname and not q.startswith(qualname + ".<locals>."):
            continue
        name = code.co_filename
        if name not in seen:
            seen[name] = os.path.realpath(name) == real
        if seen[name]:
            out.append(o)
    return out


def swap(m: dict) -> tuple[list, str]:
    """Put the mutant's code in place: ([(function, original code)], "") or ([], why not)."""
    source = Path(m["source"]).read_text(encoding="utf-8")
    new = _codes(compile(source, m["file"], "exec", dont_inherit=True))
    funcs = _functions(m["file"], m["qualname"])
    if not any(f.__code__.co_qualname == m["qualname"] for f in funcs):
        return [], f"no live function {m['qualname']} from {m['file']}"
    plan = []
    for f in funcs:
        code = new.get(f.__code__.co_qualname)
        if code is None or code.co_freevars != f.__code__.co_freevars:
            return [], f"{f.__code__.co_qualname}: the mutant's code does not fit the function"
        plan.append((f, code))
    done = []
    for f, code in plan:
        done.append((f, f.__code__))
        f.__code__ = code
    return done, ""


def _restore(done: list) -> None:
    for f, code in reversed(done):
        f.__code__ = code


def _message(r) -> str:
    """The failure's message as the JUnit XML has it (what patches.common.runner reads)."""
    crash = getattr(r.longrepr, "reprcrash", None)
    reason = crash.message if crash is not None else str(r.longrepr)
    if r.when != "call":
        reason = f'failed on {r.when} with "{reason}"'
    lines = reason.strip().splitlines()
    return lines[0][:300] if lines else ""


def _killer(reports) -> tuple[str, str] | None:
    for r in reports:
        if r.failed:
            return ("fail" if r.when == "call" else "error"), _message(r)
    return None


def run_mutant(session, m: dict) -> dict:
    """Every collected test against one mutant (``-x``); the mutant's result line."""
    t0 = time.monotonic()
    done, why = swap(m)
    if not done:
        return {"end": m["index"], "swapped": False, "why": why, "killed_by": None}
    killed = None
    items = session.items
    try:
        for i, item in enumerate(items):
            nxt = items[i + 1] if i + 1 < len(items) else None
            found = _killer(runtestprotocol(item, log=False, nextitem=nxt))
            if found:
                killed = (junit_id(item.nodeid), *found)
                session._setupstate.teardown_exact(None)
                break
    finally:
        _restore(done)
    out = {"end": m["index"], "swapped": True, "killed_by": None}
    if killed:
        out.update(killed_by=killed[0], status=killed[1], message=killed[2])
    out["seconds"] = round(time.monotonic() - t0, 1)
    return out


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session):
    path = session.config.getoption("--hn-mutants")
    if not path or session.config.option.collectonly:
        return None
    spec = json.loads(Path(path).read_text(encoding="utf-8"))
    stop = spec.get("stop_at_kill", True)
    with open(spec["results"], "a", encoding="utf-8") as fh:
        for m in spec["mutants"]:
            fh.write(json.dumps({"start": m["index"]}) + "\n")
            fh.flush()
            res = run_mutant(session, m)
            fh.write(json.dumps(res) + "\n")
            fh.flush()
            if res["killed_by"] and stop:
                break
    return True
