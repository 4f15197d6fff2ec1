"""Does upstream port a function whole? The history behind the gate's ``cuda-device-unit``.

For every device binding (``set_device``, ``current_device``, ``synchronize``) or ``.cuda(...)``
placement that a label list says upstream neutralised, the outermost function holding it in the
new release is read: does it still run CUDA work (a ``torch.cuda.*`` call that is no question
about the devices, no current-device/stream selection and no index resolver, or a ``.cuda(...)``
placement)? And for the same shapes upstream kept: does their function run other CUDA work?

    python tests/benchmarks/replay_units.py [LABELS.yaml ...]

Default: the shared 2.4.1 -> 2.13.0 list. Reads the labels (a benchmark may; the codemod never
does) and the files of both releases (``replay_fetch.sources``, downloaded once).
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).parent))

from replay import LABELS, load_labels  # noqa: E402
from replay_fetch import sources  # noqa: E402

from patches.generate.intent.data import no_work_calls  # noqa: E402

SHAPE = re.compile(r"torch\.cuda\.(set_device|current_device|synchronize)\(|\.cuda\(")


def _outermost(tree: ast.Module, line: int) -> ast.AST | None:
    for node in tree.body:
        for n in ast.walk(node):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if n.lineno <= line <= (n.end_lineno or n.lineno):
                    return n
    return None


def _cuda_work(fn: ast.AST, skip: range) -> list[int]:
    """Lines of ``fn`` outside ``skip`` that run CUDA work (textual: ``torch.cuda.X(...)``)."""
    out = []
    for n in ast.walk(fn):
        if not isinstance(n, ast.Call) or n.lineno in skip:
            continue
        text = ast.unparse(n.func)
        if text.endswith(".cuda") or (
            text.startswith("torch.cuda.") and text not in no_work_calls()
        ):
            out.append(n.lineno)
    return out


def releases(labels: dict) -> dict[str, Path]:
    """ "old"/"new" -> the folder holding the list's files of that release."""
    pair, shas = labels["pair"], labels["pair"]["file_sha256"]
    return {
        "old": sources(pair["old"], {p: s["old_sha256"] for p, s in shas.items()}),
        "new": sources(pair["new"], {p: s["new_sha256"] for p, s in shas.items()}),
    }


def survey(labels: dict, roots: dict[str, Path]) -> dict[str, list[tuple[str, list[int]]]]:
    """status -> [(site id, lines of other CUDA work in its function)]: a neutralised site's
    function read in the new release (``roots["new"]``), a kept one's in the old."""
    trees: dict = {}
    out: dict[str, list] = {"neutralized": [], "kept": []}
    for lab in labels["labels"]:
        if lab["status"] not in out or not SHAPE.search(lab["old_text"]):
            continue
        side = "new" if lab["status"] == "neutralized" else "old"
        key = (side, lab["path"])
        if key not in trees:
            trees[key] = ast.parse((roots[side] / lab["path"]).read_text(encoding="utf-8"))
        lo, hi = lab["new_lines"][0] if side == "new" else lab["old_span"]
        fn = _outermost(trees[key], lo)
        if fn is not None:
            out[lab["status"]].append((lab["id"], _cuda_work(fn, range(lo, hi + 1))))
    return out


def main(argv: list[str]) -> int:
    for path in [Path(a) for a in argv] or [LABELS]:
        labels = load_labels(path)
        res = survey(labels, releases(labels))
        n = res["neutralized"]
        whole = [x for x in n if not x[1]]
        k = res["kept"]
        beside = [x for x in k if x[1]]
        print(f"{path.name}:")
        print(
            f"  neutralised bindings/placements in a function: {len(n)}; "
            f"no CUDA work left in that function after upstream's change: {len(whole)}"
        )
        for sid, lines in n:
            if lines:
                print(f"    still CUDA work: {sid} (lines {lines[:4]})")
        print(
            f"  kept bindings/placements in a function: {len(k)}; "
            f"beside other CUDA work of the function: {len(beside)}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
