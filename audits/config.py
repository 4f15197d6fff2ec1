"""``[tool.hwneutral]`` in the scanned tree's pyproject.toml.

Keys (all optional): ``select``, ``ignore`` (rule selectors), ``exclude`` (globs relative to the
root), ``per-file-ignores`` ({glob: [selectors]}), ``max-file-size`` (bytes). Command-line
``--select`` replaces ``select``; ``--ignore`` and ``--exclude`` add to the configured ones.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = None  # type: ignore[assignment]

KEYS = {"select", "ignore", "exclude", "per-file-ignores", "max-file-size"}


class ConfigError(ValueError):
    pass


@dataclass
class Config:
    select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    max_file_size: int | None = None
    source: str = ""


def _strs(v, key: str) -> list[str]:
    if isinstance(v, str):
        return [v]
    if isinstance(v, list) and all(isinstance(x, str) for x in v):
        return list(v)
    raise ConfigError(f"[tool.hwneutral] {key} must be a string or a list of strings")


def load_config(root: str) -> Config:
    path = os.path.join(root, "pyproject.toml")
    if not os.path.isfile(path):
        return Config()
    if tomllib is None:
        raise ConfigError(f"{path}: reading it needs Python >= 3.11 (tomllib)")
    try:
        with open(path, "rb") as f:
            doc = tomllib.load(f)
    except (tomllib.TOMLDecodeError, OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: {e}") from None
    sec = doc.get("tool", {}).get("hwneutral")
    if sec is None:
        return Config()
    if not isinstance(sec, dict):
        raise ConfigError(f"{path}: [tool.hwneutral] must be a table")
    unknown = set(sec) - KEYS
    if unknown:
        raise ConfigError(f"{path}: unknown [tool.hwneutral] key(s): {', '.join(sorted(unknown))}")
    cfg = Config(source=path)
    cfg.select = _strs(sec.get("select", []), "select")
    cfg.ignore = _strs(sec.get("ignore", []), "ignore")
    cfg.exclude = _strs(sec.get("exclude", []), "exclude")
    pfi = sec.get("per-file-ignores", {})
    if not isinstance(pfi, dict):
        raise ConfigError(f"{path}: per-file-ignores must be a table of glob = [selectors]")
    cfg.per_file_ignores = {k: _strs(v, f"per-file-ignores.{k}") for k, v in pfi.items()}
    mfs = sec.get("max-file-size")
    if mfs is not None and (not isinstance(mfs, int) or mfs <= 0):
        raise ConfigError(f"{path}: max-file-size must be a positive integer (bytes)")
    cfg.max_file_size = mfs
    return cfg
