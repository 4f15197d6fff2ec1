"""The subsystem list (``subsystems.yaml``): which torch files and which upstream tests make a
subsystem, and the error of a bad list or bad input."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

CONFIG = Path(__file__).with_name("subsystems.yaml")


class ProveError(ValueError):
    """Bad input: exit 2 with this message."""


@dataclass
class TestEntry:
    file: str
    nodes: list[str] = field(default_factory=list)
    why: str = ""
    skip: bool = False  # selected by import but not run (the reason says why)


@dataclass
class Subsystem:
    name: str
    title: str
    paths: list[str]
    tests: list[TestEntry]
    k: str = ""
    default: bool = True
    why: str = ""  # why it is (not) a default: shown in its bundle


def _words(value) -> str:
    return " ".join(str(value or "").split())


def _subsystem(name: str, d: dict) -> Subsystem:
    ks = [t.get("k") for t in d.get("tests", []) if t.get("k")]
    return Subsystem(
        name,
        d.get("title", name),
        list(d["paths"]),
        [
            TestEntry(
                t["file"], list(t.get("nodes", [])), _words(t.get("why")), bool(t.get("skip"))
            )
            for t in d.get("tests", [])
        ],
        " or ".join(f"({k})" for k in ks) if len(ks) > 1 else (ks[0] if ks else ""),
        bool(d.get("default", True)),
        _words(d.get("why")),
    )


def load_config(path: Path = CONFIG) -> dict[str, Subsystem]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as e:
        raise ProveError(f"{path}: cannot read the subsystem list ({e})") from None
    out = {}
    for name, d in (data or {}).get("subsystems", {}).items():
        if not d.get("paths"):
            raise ProveError(f"{path}: subsystem {name} has no paths")
        out[name] = _subsystem(name, d)
    return out


def subsystem_files(site: Path, sub: Subsystem) -> list[str]:
    """The subsystem's files of the installed torch (paths relative to ``site``)."""
    files = []
    for p in sub.paths:
        base = site / p
        if base.is_file():
            files.append(p)
        elif base.is_dir():
            files += sorted(f.relative_to(site).as_posix() for f in base.rglob("*.py"))
        else:
            raise ProveError(f"subsystem {sub.name}: {p} is not in the installed torch ({site})")
    return files
