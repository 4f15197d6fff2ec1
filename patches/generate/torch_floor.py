"""The oldest torch a project supports, and the neutral APIs a rewrite would need newer.

A project declares its torch floor in its packaging (``torch>=2.1`` in ``pyproject.toml``'s
``[project] dependencies``, ``setup.cfg``'s ``install_requires``, a ``setup.py`` string, or a
``requirements*.txt``); ``declared`` reads the lowest one at the tree's root (and in a
``requirements/`` folder), as ruff reads ``requires-python`` for the rewrites it may make. A
rewrite whose new code calls an API first released after the floor (``torch_since.toml``,
checked against the wheels by ``tests/benchmarks/torch_api_since.py``) breaks the project on
the releases it still supports, so the engine leaves that site (``codemods.engine``).

A tree that declares no floor may still say which torch it runs on: its code tests torch's
version (``Version(torch.__version__) >= Version("2.6.0")``, ``is_torch_version(">=", "2.4")``,
``hasattr(torch, "accelerator")``), and a test for a release means the project runs on the one
before it. ``implied`` reads the lowest such release; the floor is the release before it (trl
declares no torch and tests ``>= 2.4``: it supports 2.3). A declared floor wins: diffusers
declares ``torch>=2.6`` and still tests ``>= 1.9`` in code the floor made dead. Only a project
with packaging at its root is read so: not torch's own tree, not a folder of installed packages.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

import tomllib

from patches.generate.audit_io import python_entries

_DATA = Path(__file__).with_name("torch_since.toml")
# `torch>=2.1.0`, `torch >= 1.8, <3`, `torch~=2.2`, `torch==2.4.*` (not torchvision, not
# torch-geometric): the name, then the specifiers up to a marker or the end of the string
_REQUIREMENT = re.compile(r"""(?<![\w.-])torch\s*((?:[<>=!~]=?\s*[\w.*]+\s*,?\s*)+)""")
_LOWER = re.compile(r"(>=|~=|==|>)\s*([0-9]+)\.([0-9]+)")
_FILES = ("pyproject.toml", "setup.cfg", "setup.py", "requirements.txt")
# a test in code for a newer torch: `torch.__version__) >= Version("2.6"`, `torch_version(">=",
# "2.4"`, `hasattr(torch, "accelerator")`
_TESTED = re.compile(
    r"""torch\.__version__\)?\s*>=?\s*[\w.]*\(?\s*["']([0-9]+)\.([0-9]+)"""
    r"""|torch_version\(\s*["']>=?["']\s*,\s*["']([0-9]+)\.([0-9]+)"""
    r"""|hasattr\(\s*torch\s*,\s*["'](\w+)["']\s*\)"""
)


@dataclass(frozen=True)
class Floor:
    version: tuple[int, int]
    source: str  # where it was read ("pyproject.toml", or "--torch-floor")

    def __str__(self) -> str:
        return f"torch>={self.version[0]}.{self.version[1]} ({self.source})"


@functools.lru_cache(maxsize=1)
def since_table() -> dict[str, str]:
    return dict(tomllib.loads(_DATA.read_text())["since"])


@functools.lru_cache(maxsize=1)
def mps_table() -> dict[str, str]:
    """API -> the first release where it runs on MPS, where that is later than the API."""
    return dict(tomllib.loads(_DATA.read_text())["mps"])


def parse(value: str, source: str = "--torch-floor") -> Floor:
    """``"2.1"`` or ``"2.1.0"`` as a floor; ValueError otherwise."""
    m = re.fullmatch(r"([0-9]+)\.([0-9]+)(?:\.[0-9]+)?", value.strip())
    if m is None:
        raise ValueError(f"not a torch release: {value!r} (say 2.1, or auto, or none)")
    return Floor((int(m.group(1)), int(m.group(2))), source)


def declared(root: Path) -> Floor | None:
    """The lowest torch floor the project's packaging at ``root`` declares, or None."""
    root = Path(root)
    files = [root / n for n in _FILES]
    req = root / "requirements"
    if req.is_dir():
        files += sorted(p for p in req.rglob("*.txt") if not p.is_symlink())
    files += sorted(root.glob("requirements*.txt"))
    found: list[Floor] = []
    for path in dict.fromkeys(files):  # requirements.txt once
        try:
            text = path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""
        except OSError:
            continue
        for spec in _REQUIREMENT.findall(text):
            for op, major, minor in _LOWER.findall(spec):
                found.append(Floor((int(major), int(minor)), str(path.relative_to(root))))
    return min(found, key=lambda f: f.version) if found else None


def implied(root: Path) -> Floor | None:
    """The release before the lowest one the tree's code tests torch for, or None. Only for a
    project (its packaging at the root) that is not torch itself: a folder of installed packages
    (``site-packages``, where ``make prove`` and ``make run`` read torch) holds other projects'
    tests."""
    root = Path(root)
    if (root / "torch" / "__init__.py").is_file() or not any(
        (root / name).is_file() for name in _FILES[:3]
    ):
        return None
    low: tuple[tuple[int, int], str] | None = None
    for entry in python_entries(root):  # the scanner's walk: no symlinks, no loops
        try:
            text = Path(entry.abspath).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for version in _tested(text) if "torch" in text else ():
            if low is None or version < low[0]:
                low = (version, entry.relpath)
    if low is None:
        return None
    (major, minor), rel = low
    before = (major, minor - 1) if minor else (major - 1, 0)
    return Floor(before, f"{rel} tests torch>={major}.{minor}")


def _tested(text: str):
    """The releases ``text`` tests torch for."""
    for m in _TESTED.finditer(text):
        if m.group(5):
            since = _attribute_since(m.group(5))
            if since:
                yield since
        else:
            major, minor = m.group(1) or m.group(3), m.group(2) or m.group(4)
            yield int(major), int(minor)


def _attribute_since(name: str) -> tuple[int, int] | None:
    """The first release of ``torch.<name>`` (or of its functions), from ``torch_since.toml``."""
    found = [key(v) for api, v in since_table().items() if api.split(".")[1] == name]
    return min(found) if found else None


def resolve(setting: str, root: Path) -> Floor | None:
    """``--torch-floor``'s value: ``auto`` (what the tree declares, else what its code's version
    tests imply), ``none``, or a release."""
    if setting == "none":
        return None
    if setting == "auto":
        return declared(root) or implied(root)
    return parse(setting)


def of(run) -> Floor | None:
    """The run's floor, resolved once."""
    if run.floor is False:
        run.floor = resolve(run.settings.torch_floor, run.settings.root)
    return run.floor


def key(version: str) -> tuple[int, int]:
    major, minor = version.split(".")[:2]
    return int(major), int(minor)


@functools.lru_cache(maxsize=None)
def _pattern(api: str) -> re.Pattern:
    """How the API reads in written code: ``accelerator.synchronize`` (under any alias of
    torch), ``torch.Stream``, ``amp.GradScaler``, and a distributed function by its own name
    (``dist.get_default_backend_for_device``)."""
    parts = api.split(".")
    if parts[1] == "distributed" or parts[1] == "nn":
        text = parts[-1]
    else:
        text = ".".join(parts[-2:])
    return re.compile(r"(?<![\w])" + re.escape(text) + r"(?![\w])")


# An autocast whose device type is read from a value (``torch.autocast(x.device.type, ...)``,
# ``autocast(device_type=device, ...)``), not written as a string nor left to a keyword-only
# call: the value is every accelerator's type, and ``torch.autocast`` refuses "mps" (a
# RuntimeError, ``enabled=False`` or not) before the release that added MPS autocast.
_VALUE_AUTOCAST = re.compile(r"""autocast\(\s*(?:device_type\s*=\s*)?(?!["'\s)]|\w+\s*=[^=])""")
VALUE_AUTOCAST = ("torch.autocast with a device type read from a value", "2.5")


def forbids(ctx, code: str) -> bool:
    """The file's torch floor (``ctx.torch_floor``) predates an API ``code`` calls: a family's
    module-level line (a script's ``device``, a test module's ``DEVICE_TYPE``) is not written,
    and so nothing that reads it."""
    return bool(too_new("", code, getattr(ctx, "torch_floor", None)))


def too_new(before: str, after: str, floor: Floor | None) -> list[tuple[str, str]]:
    """(API, its first release) for each API ``after`` calls more often than ``before`` that
    came after ``floor``, or that runs on MPS only after it (``"<API> on MPS"``, ``mps_table``);
    an autocast whose device type is a value counts as such an API."""
    if floor is None:
        return []
    out = []
    mps = mps_table()
    for api, since in since_table().items():
        shown = api
        if api in mps and key(mps[api]) > key(since):
            shown, since = f"{api} on MPS", mps[api]
        if key(since) > floor.version:
            pat = _pattern(api)
            if len(pat.findall(after)) > len(pat.findall(before)):
                out.append((shown, since))
    api, since = VALUE_AUTOCAST
    if key(since) > floor.version and len(_VALUE_AUTOCAST.findall(after)) > len(
        _VALUE_AUTOCAST.findall(before)
    ):
        out.append((api, since))
    return out
