"""Which upstream test files prove a subsystem: the ones importing its modules (import analysis,
patches.validate.selection), plus the committed map of ``subsystems.yaml``."""

from __future__ import annotations

from pathlib import Path

from audits.resolve import module_name
from patches.prove.config import ProveError, Subsystem
from patches.validate import selection


def _importers(targets: set[str], test_root: Path) -> dict[str, str]:
    reasons: dict[str, str] = {}
    for rel in selection.iter_test_files(test_root):
        try:
            mods = selection.imported_modules((test_root / rel).read_text(encoding="utf-8"), rel)
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        hit = sorted(m for m in mods if m in targets)
        if hit:
            reasons[rel] = f"imports {hit[0]}"
    return reasons


def node_ids(test_root: Path, nodes: dict[str, list[str]]) -> list[str]:
    """The pytest node ids of a selection (``rel`` -> node ids in it, none: the whole file)."""
    return [f"{test_root / rel}::{n}" for rel, ns in nodes.items() for n in ns] + [
        str(test_root / rel) for rel, ns in nodes.items() if not ns
    ]


def select_tests(
    sub: Subsystem, files: list[str], test_root: Path
) -> tuple[dict[str, list[str]], dict[str, str]]:
    """Upstream test files for the subsystem, by import plus the committed map: (test file ->
    the node ids to run in it, none: all; test file -> why it is selected or not run)."""
    # only the full dotted names: torch/random.py is torch.random, never the stdlib's random
    reasons = _importers({module_name(f) for f in files}, test_root)
    nodes: dict[str, list[str]] = {rel: [] for rel in reasons}
    for t in sub.tests:
        if not (test_root / t.file).is_file():
            raise ProveError(f"subsystem {sub.name}: {t.file} is not under --test-root {test_root}")
        if t.skip:  # import analysis found it, the map says it cannot reach the change
            nodes.pop(t.file, None)
            reasons[t.file] = f"not run: {reasons.get(t.file, 'map')}; {t.why or 'skip'}"
            continue
        if t.file in reasons and not t.nodes:
            reasons[t.file] += f"; map: {t.why}" if t.why else ""
            continue
        nodes[t.file] = list(t.nodes)
        why = f"map: {t.why}" if t.why else "map"
        reasons[t.file] = f"{reasons[t.file]}; {why}" if t.file in reasons else why
    for rel, ns in nodes.items():
        if ns:
            reasons[rel] += f" [selection: {', '.join(ns)}]"
    return nodes, reasons
