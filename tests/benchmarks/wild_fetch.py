"""The sources of the wild-scripts benchmark: pinned source distributions from PyPI.

``https://pypi.org/pypi/{name}/{version}/json`` lists the release's files; the ``sdist`` entry's
``url`` (relative on some mirrors: resolved against the JSON's own address) is downloaded once
into ``${XDG_CACHE_HOME:-~/.cache}/hwneutral/sdists`` and checked against the entry's
``digests.sha256`` (a cached file is reused only while its digest still matches). Members are
extracted with ``tarfile`` after a path check of our own (no absolute path, no ``..``, no link
or device member), so a hostile archive cannot write outside the destination.
"""

from __future__ import annotations

import json
import sys
import tarfile
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path, PurePosixPath

sys.path.insert(0, str(Path(__file__).parent))

from replay_fetch import FetchError, cache_root, sha256  # noqa: E402

INDEX = "https://pypi.org/pypi/{name}/{version}/json"
PROJECT = "https://pypi.org/pypi/{name}/json"
TIMEOUT_S = 60


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=TIMEOUT_S) as r:  # noqa: S310 (https only)
        return r.read()


def _release_files(name: str, version: str) -> tuple[str, list[dict]]:
    """``(the JSON's address, the release's file entries)``: the release's own page, or (on a
    mirror that serves only the project page) the project page's ``releases[version]``."""
    for index in (INDEX.format(name=name, version=version), PROJECT.format(name=name)):
        try:
            meta = json.loads(_get(index))
        except urllib.error.HTTPError as e:
            if e.code == 404 and index != PROJECT.format(name=name):
                continue
            raise FetchError(f"{name}=={version}: cannot read {index}: {e}") from None
        except (urllib.error.URLError, OSError, ValueError) as e:
            raise FetchError(f"{name}=={version}: cannot read {index}: {e}") from None
        if index == PROJECT.format(name=name):
            return index, meta.get("releases", {}).get(version, [])
        return index, meta.get("urls", [])
    raise AssertionError("unreachable")


def sdist_entry(name: str, version: str) -> tuple[str, str, str]:
    """``(absolute url, filename, sha256)`` of the release's sdist, from PyPI's JSON API."""
    index, files = _release_files(name, version)
    for entry in files:
        if entry.get("packagetype") == "sdist":
            url = urllib.parse.urljoin(index, entry["url"])
            return url, entry["filename"], entry["digests"]["sha256"]
    raise FetchError(f"{name}=={version}: PyPI lists no sdist of this release ({index})")


def cached(path: Path, digest: str) -> bool:
    """The file is there and is the one PyPI names (a wrong digest is never reused)."""
    return path.is_file() and sha256(path.read_bytes()) == digest


def download(name: str, version: str, pin: tuple[str, str] = ("", ""), folder=None) -> Path:
    """The sdist of ``name==version``. ``pin``: its ``(filename, sha256)`` when known: a cached
    file with that digest is used without asking PyPI, and PyPI's digest must equal it."""
    folder = Path(folder or cache_root() / "sdists")
    if pin[0] and cached(folder / pin[0], pin[1]):
        return folder / pin[0]
    url, filename, digest = sdist_entry(name, version)
    if pin[1] and digest != pin[1]:
        raise FetchError(
            f"{name}=={version}: PyPI's sdist has sha256 {digest[:12]}, pinned {pin[1][:12]}"
        )
    dest = folder / PurePosixPath(filename).name
    if cached(dest, digest):
        return dest
    folder.mkdir(parents=True, exist_ok=True)
    try:
        data = _get(url)
    except (urllib.error.URLError, OSError) as e:
        raise FetchError(f"{name}=={version}: cannot download {url}: {e}") from None
    return store(data, dest, digest, f"{name}=={version}")


def store(data: bytes, dest: Path, digest: str, what: str) -> Path:
    """Write ``data`` to ``dest`` only when its sha256 is ``digest`` (FetchError otherwise)."""
    got = sha256(data)
    if got != digest:
        raise FetchError(f"{what}: {dest.name} has sha256 {got[:12]}, PyPI says {digest[:12]}")
    part = dest.with_suffix(dest.suffix + ".part")
    part.write_bytes(data)
    part.replace(dest)
    return dest


def unsafe_member(name: str) -> str:
    """Why a member name may not be extracted ("" when it may): absolute or climbing out."""
    norm = name.replace("\\", "/")
    parts = PurePosixPath(norm).parts
    if norm.startswith("/") or (parts and ":" in parts[0]):
        return "an absolute path"
    if ".." in parts:
        return "a path with '..'"
    return ""


def extract(archive: Path, dest: Path, folders: list[str]) -> Path:
    """Extract the members under ``folders`` (relative to the archive's top folder, e.g.
    ``examples`` or ``pyproject.toml``) into ``dest``; the top folder is dropped. Only plain
    files are written (links and devices are skipped). FetchError when any member's name is
    absolute or climbs out, selected or not: the archive is not what PyPI should serve."""
    with tarfile.open(archive) as tar:
        members = tar.getmembers()
        bad = [f"{m.name} ({why})" for m in members if (why := unsafe_member(m.name))]
        if bad:
            raise FetchError(f"{archive.name}: unsafe members: {'; '.join(bad[:3])}")
        for m in members:
            parts = PurePosixPath(m.name).parts
            rel = PurePosixPath(*parts[1:]) if len(parts) > 1 else None
            if rel is None or not m.isfile() or not _under(rel, folders):
                continue
            out = dest.joinpath(*_placed(rel, folders).parts)
            out.parent.mkdir(parents=True, exist_ok=True)
            src = tar.extractfile(m)
            if src is not None:
                out.write_bytes(src.read())
    return dest


def _under(rel: PurePosixPath, folders: list[str]) -> bool:
    srcs = [PurePosixPath(f.partition("=")[0]) for f in folders]
    return any(rel == s or s in rel.parents for s in srcs)


def _placed(rel: PurePosixPath, folders: list[str]) -> PurePosixPath:
    """``src=dst`` in ``folders`` moves ``src/...`` to ``dst/...`` (fairseq's
    ``fairseq/examples=examples``)."""
    for f in folders:
        src, _, dst = f.partition("=")
        s = PurePosixPath(src)
        if dst and (rel == s or s in rel.parents):
            return PurePosixPath(dst) / rel.relative_to(s)
    return rel
