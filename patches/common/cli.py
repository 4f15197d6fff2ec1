"""Argument checking shared by ``patches.generate``, ``patches.validate`` and ``patches.matrix``.

Every bad input is rejected before any work starts (no scan, no device run, nothing written) with
exit 2 and ONE line on stderr that names the bad value and says what would be accepted. The
parser's own errors (unknown flag, bad choice) follow the same rule: no usage block.
"""

from __future__ import annotations

import argparse
import difflib
import os
import sys
from pathlib import Path
from typing import Iterable, NoReturn

from audits.vocabulary import DEVICE_PLUGINS
from patches.common.device_boot import NATIVE

USAGE_RC = 2


class UsageError(ValueError):
    """Bad input: the command prints ``error: MESSAGE`` (one line) and exits 2."""


class ArgumentParser(argparse.ArgumentParser):
    """argparse whose errors are one line (``PROG: error: MESSAGE; see --help``), exit 2, and
    that takes no abbreviation of a flag (``--out`` is never read as ``--output``)."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.exit(USAGE_RC, f"{self.prog}: error: {one_line(message)}; see --help\n")


def one_line(message: str | BaseException) -> str:
    """Errors are one line: a newline (any unprintable character) in a value shows escaped."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(message).strip())


def fail(error: BaseException | str) -> int:
    """Print the one-line error and return the usage exit code."""
    print(f"error: {one_line(error)}", file=sys.stderr)
    return USAGE_RC


def split_csv(values: str | Iterable[str] | None) -> list[str]:
    """``"a,b"`` or ``["a,b", "c"]`` -> ``["a", "b", "c"]`` (blanks dropped)."""
    if values is None:
        return []
    items = [values] if isinstance(values, str) else list(values)
    return [v.strip() for item in items for v in item.split(",") if v.strip()]


def close_matches(value: str, known: Iterable[str], n: int = 3) -> str:
    """``"; did you mean a, b?"`` or ``""``."""
    hits = difflib.get_close_matches(value, list(known), n=n, cutoff=0.6)
    return f"; did you mean {', '.join(hits)}?" if hits else ""


def _is_module_name(name: str) -> bool:
    return bool(name) and all(part.isidentifier() for part in name.split("."))


def parse_plugins(items: Iterable[str]) -> dict[str, str]:
    """``--plugin DEVICE=MODULE`` (repeatable) -> {device: module}."""
    out: dict[str, str] = {}
    for it in items:
        dev, sep, mod = it.partition("=")
        dev, mod = dev.strip(), mod.strip()
        if not sep or not dev or not _is_module_name(mod):
            raise UsageError(f"--plugin expects DEVICE=MODULE (e.g. trn=kernels.trn), got {it!r}")
        if dev in NATIVE:
            raise UsageError(
                f"--plugin {it}: {dev} is built into torch; --plugin registers a PrivateUse1 "
                "device (e.g. trn=kernels.trn)"
            )
        if dev in out and out[dev] != mod:
            raise UsageError(f"--plugin {dev}= given twice ({out[dev]}, {mod})")
        out[dev] = mod
    return out


def known_devices(plugins: dict[str, str] | None = None) -> list[str]:
    return sorted({*NATIVE, *DEVICE_PLUGINS, *(plugins or {})})


def parse_devices(value: str, plugins: dict[str, str] | None = None) -> list[str]:
    """``--devices a,b`` -> [a, b]; every name must be a device this toolkit can boot (with
    ``plugins`` None the command has no ``--plugin``: only the built-in names)."""
    hint = "" if plugins is None else "; another PrivateUse1 device needs --plugin {d}=MODULE"
    plugins = plugins or {}
    devices = split_csv(value)
    if not devices:
        raise UsageError(
            f"--devices {value!r} names no device (known: {', '.join(known_devices())})"
        )
    known = known_devices(plugins)
    for d in devices:
        if d not in known:
            raise UsageError(
                f"unknown device {d!r} in --devices (known: {', '.join(known)}"
                f"{hint.format(d=d)}){close_matches(d, known)}"
            )
        if devices.count(d) > 1:
            raise UsageError(f"device {d!r} is given twice in --devices {value!r}")
    unused = sorted(set(plugins) - set(devices))
    if unused:
        raise UsageError(
            f"--plugin {unused[0]}={plugins[unused[0]]} names a device not in --devices "
            f"({', '.join(devices)})"
        )
    return devices


def positive(flag: str, value: float, *, zero_ok: bool = False) -> float:
    if value < 0 or (value == 0 and not zero_ok):
        raise UsageError(f"{flag} must be {'>= 0' if zero_ok else '> 0'}, got {value}")
    return value


def input_dir(flag: str, path: str | os.PathLike) -> Path:
    p = Path(path)
    if not p.exists():
        raise UsageError(f"{flag} {p}: no such directory")
    if not p.is_dir():
        raise UsageError(f"{flag} {p}: not a directory (a file)")
    if not os.access(p, os.R_OK | os.X_OK):
        raise UsageError(f"{flag} {p}: directory not readable")
    return p


def input_file(flag: str, path: str | os.PathLike) -> Path:
    p = Path(path)
    if not p.exists():
        raise UsageError(f"{flag} {p}: no such file")
    if p.is_dir():
        raise UsageError(f"{flag} {p}: a directory, expected a file")
    if not os.access(p, os.R_OK):
        raise UsageError(f"{flag} {p}: file not readable")
    return p


def _writable_parent(flag: str, p: Path, *, create: bool) -> None:
    parent = p.parent
    while create and not parent.exists():  # created on write: the nearest existing one counts
        parent = parent.parent
    if not parent.exists():
        raise UsageError(f"{flag} {p}: no such directory {parent}")
    if not parent.is_dir():
        raise UsageError(f"{flag} {p}: {parent} is a file, not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"{flag} {p}: cannot write in {parent} (permission denied)")


def output_dir(flag: str, path: str | os.PathLike) -> Path:
    """A folder the command will create or write into; nothing is created here."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise UsageError(f"{flag} {p}: exists and is a file; give a directory (new or existing)")
    if p.is_dir():
        if not os.access(p, os.W_OK | os.X_OK):
            raise UsageError(f"{flag} {p}: directory not writable")
    else:
        _writable_parent(flag, p, create=True)
    return p


def output_file(flag: str, path: str | os.PathLike) -> Path:
    """A file the command will write at the end; nothing is created here."""
    p = Path(path)
    if p.is_dir():
        raise UsageError(f"{flag} {p}: is a directory; give a file path")
    if p.exists():
        if not os.access(p, os.W_OK):
            raise UsageError(f"{flag} {p}: file not writable")
    else:
        _writable_parent(flag, p, create=False)
    return p
