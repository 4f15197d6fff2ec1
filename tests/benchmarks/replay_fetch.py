"""The torch sources of the replay benchmark: wheels from pip, the labelled files out of them.

``pip download --no-deps --only-binary=:all: torch==X`` into
``${XDG_CACHE_HOME:-~/.cache}/hwneutral/wheels`` (once; nothing is installed), then the files that
the label list covers are read from the wheel (a zip) into ``.../hwneutral/replay/torch-X/`` and
checked against the list's ``pair.file_sha256``. A later run reuses the extracted files when
their digests still match, so it touches neither pip nor the wheel.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import zipfile
from pathlib import Path


class FetchError(RuntimeError):
    """The sources cannot be had (pip failed, or a file is not the one the labels were read
    from)."""


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "hwneutral"


def sha256(data: bytes) -> str:
    """The hex sha256 of ``data`` (the wheels here, the sdists in ``wild_fetch``)."""
    return hashlib.sha256(data).hexdigest()


def find_wheel(folder: Path, version: str) -> Path | None:
    """A torch wheel of exactly ``version`` (a local tag such as ``+cpu`` allowed) in folder."""
    for pattern in (f"torch-{version}-*.whl", f"torch-{version}+*.whl"):
        hits = sorted(folder.glob(pattern))
        if hits:
            return hits[0]
    return None


def download(version: str, folder: Path) -> Path:
    """The wheel of torch ``version`` for this platform, downloaded by pip when not cached."""
    folder.mkdir(parents=True, exist_ok=True)
    wheel = find_wheel(folder, version)
    if wheel is not None:
        return wheel
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:"]
    cmd += ["-d", str(folder), f"torch=={version}"]
    print(f"replay: downloading torch {version} (no install): {' '.join(cmd)}", file=sys.stderr)
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wheel = find_wheel(folder, version)
    if proc.returncode or wheel is None:
        out = proc.stderr or proc.stdout
        tail = out.strip().splitlines()[-3:]
        hint = ""
        if "(constraint)" in out:  # a pip config caps torch below this release
            hint = (
                f" (a pip constraint caps torch here; the wheel is only read, never installed: "
                f"PIP_CONFIG_FILE=/dev/null {' '.join(cmd[2:])})"
            )
        raise FetchError(f"pip could not download torch=={version}: " + " | ".join(tail) + hint)
    return wheel


def _verified(dest: Path, digests: dict[str, str]) -> bool:
    for rel, digest in digests.items():
        p = dest / rel
        if not p.is_file() or sha256(p.read_bytes()) != digest:
            return False
    return True


def sources(version: str, digests: dict[str, str]) -> Path:
    """A folder holding exactly the files of ``digests`` (path -> sha256) from torch ``version``.

    Extracted once from the wheel; a file whose digest differs from the label list's is an
    error (the labels were read from other sources)."""
    root = cache_root()
    dest = root / "replay" / f"torch-{version}"
    if _verified(dest, digests):
        return dest
    wheel = download(version, root / "wheels")
    if not zipfile.is_zipfile(wheel):
        raise FetchError(f"{wheel} is not a zip (an interrupted download?): delete it and rerun")
    bad = []
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        for rel, digest in digests.items():
            if rel not in names:
                bad.append(f"{rel}: not in {wheel.name}")
                continue
            data = z.read(rel)
            if sha256(data) != digest:
                bad.append(f"{rel}: sha256 {sha256(data)[:12]} is not the labels' {digest[:12]}")
                continue
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            (dest / rel).write_bytes(data)
    if bad:
        raise FetchError(f"{len(bad)} files differ from the label list: " + "; ".join(bad[:5]))
    return dest


class WheelText:
    """``(release, path) -> text`` of any ``torch/**`` file, read from the release's wheel (one
    download and one open zip per release); None when the wheel has no such file."""

    def __init__(self):
        self._zips: dict[str, zipfile.ZipFile] = {}

    def __call__(self, version: str, path: str) -> str | None:
        if version not in self._zips:
            wheel = download(version, cache_root() / "wheels")
            self._zips[version] = zipfile.ZipFile(wheel)
        z = self._zips[version]
        try:
            return z.read(path).decode("utf-8", errors="replace")
        except KeyError:
            return None

    def close(self) -> None:
        for z in self._zips.values():
            z.close()
        self._zips.clear()
