"""One wild-scripts project: a pinned PyPI sdist and the folders taken from it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Project:
    name: str  # on PyPI
    version: str
    sdist: tuple[str, str]  # (filename, sha256)
    folders: tuple[str, ...]  # under the sdist's top folder; "src=dst" moves src to dst
    held_out: bool = False  # measured at first contact: the codemod was never tuned on it
