"""``patches.validate`` argument checks: bad values are refused before any clone or device run.

The series' content (empty, corrupt, no file changes) is checked by ``selection.series_files``
and ``validate()`` before any work starts; this module checks the values themselves.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from patches.common.cli import (
    UsageError,
    input_dir,
    output_dir,
    output_file,
    parse_devices,
    parse_plugins,
    positive,
)

OUTPUT_FLAGS = (("output", "--output"), ("junit", "--junit"), ("markdown", "--markdown"))


def check_args(a: argparse.Namespace) -> tuple[dict[str, str], list[str]]:
    """(plugins, devices) from the parsed arguments; raises UsageError on the first bad value."""
    plugins = parse_plugins(a.plugin)
    devices = parse_devices(a.devices, plugins)
    for flag, value in (("--tree", a.tree), ("--series", a.series)):
        if not value.strip():
            raise UsageError(f"{flag} is empty (see --help)")
    if a.tree != "installed":
        input_dir("--tree", a.tree)
    if a.test_root and a.tree != "installed":
        raise UsageError(f"--test-root {a.test_root} applies only with --tree installed")
    if a.test_root:
        input_dir("--test-root", a.test_root)
    series = Path(a.series)
    if not series.exists():
        raise UsageError(
            f"--series {a.series}: no such file or directory (a series folder or a patch)"
        )
    if series.is_dir():
        input_dir("--series", series)
    positive("--timeout", a.timeout)
    seen: dict[Path, str] = {}
    for attr, flag in OUTPUT_FLAGS:
        value = getattr(a, attr, None)
        if value:
            path = output_file(flag, value).resolve()
            if path in seen:
                raise UsageError(f"{flag} {value}: the same file as {seen[path]}")
            seen[path] = flag
    if a.scratch:
        output_dir("--scratch", a.scratch)
    return plugins, devices
