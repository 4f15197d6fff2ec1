"""Where redirected calls come from: the first frame outside torch and accelerator_api, and a
count per (file, line, api). The recorder is process-global (autoport is process-global too)."""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import threading

import torch

_TORCH_DIR = os.path.dirname(torch.__file__) + os.sep
_OWN_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_INTERNAL: dict[str, bool] = {}


def is_internal(filename: str) -> bool:
    """True for torch's own code (and ours): it keeps the real torch.cuda semantics."""
    hit = _INTERNAL.get(filename)
    if hit is None:
        hit = _INTERNAL[filename] = filename.startswith((_TORCH_DIR, _OWN_DIR))
    return hit


def from_torch(depth: int = 2) -> bool:
    """Whether the caller of the function calling this is torch's own code."""
    return is_internal(sys._getframe(depth).f_code.co_filename)


def user_site(depth: int = 2) -> tuple[str, int]:
    """(file, line) of the nearest frame outside torch and accelerator_api."""
    f = sys._getframe(depth)
    while f is not None and is_internal(f.f_code.co_filename):
        f = f.f_back
    if f is None:
        return ("<torch>", 0)
    return (f.f_code.co_filename, f.f_lineno)


@dataclasses.dataclass
class Site:
    file: str
    line: int
    api: str
    action: str
    count: int = 0


class Recorder:
    """Counts each redirected call site once per (file, line, api)."""

    def __init__(self) -> None:
        self.sites: dict[tuple[str, int, str], Site] = {}
        self._lock = threading.Lock()
        self.target = "cpu"
        self.changed = True

    def hit(self, api: str, action: str, depth: int = 3) -> None:
        if torch.compiler.is_compiling():
            return  # frames are not inspectable while Dynamo traces; the eager run records it
        file, line = user_site(depth)
        key = (file, line, api)
        with self._lock:
            site = self.sites.get(key)
            if site is None:
                site = self.sites[key] = Site(file, line, api, action)
            site.count += 1

    def clear(self) -> None:
        with self._lock:
            self.sites.clear()

    def as_dict(self) -> dict:
        return {
            "target": self.target,
            "changed": self.changed,
            "sites": [
                dataclasses.asdict(s)
                for s in sorted(self.sites.values(), key=lambda s: (s.file, s.line, s.api))
            ],
        }

    def text(self) -> str:
        if not self.changed:
            return f"hwneutral autoport: the current accelerator is {self.target}; nothing was changed\n"
        rows = self.as_dict()["sites"]
        out = [f"hwneutral autoport: {len(rows)} CUDA call site(s) redirected to '{self.target}'"]
        for s in rows:
            out.append(
                f"  {_short(s['file'])}:{s['line']}: {s['api']} -> {s['action']} (x{s['count']})"
            )
        return "\n".join(out) + "\n"

    def write(self, json_path: str | None, quiet: bool) -> None:
        if json_path:
            with open(json_path, "w") as fh:
                json.dump(self.as_dict(), fh, indent=2)
        if not quiet:
            sys.stderr.write(self.text())


def _short(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


RECORDER = Recorder()
