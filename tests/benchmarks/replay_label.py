"""Draft a replay label list for any pair of torch releases (heuristic; read before trusting).

    .venv/bin/python tests/benchmarks/replay_label.py --old 2.13.0 --new 2.14.1 \\
        --out ~/.cache/hwneutral/replay/labels_2.13.0_2.14.1.yaml [--files GLOB ...] [--all-files]

Writes a YAML file in the schema of ``../shared/upstream/replay/labels_2.4.1_2.13.0.yaml``
(``about``, ``fields``, ``pair`` with ``file_sha256``, ``labels``), so that ``replay.py --labels
DRAFT.yaml`` scores it unchanged. The output holds torch source text: write it outside the
project (the default cache folder is the place), never commit it.

How a label is drafted (no human read it; docs/replay.md gives the read precision):

1. **Candidate files**: every ``torch/**/*.py`` in both wheels (``replay_fetch.download``; nothing
   is installed) whose old text has a CUDA token (``CUDA_TOKENS``: ``torch.cuda``, ``.cuda(``,
   ``is_cuda``, a ``"cuda"``/``"cuda:N"`` string, ``ProfilerActivity.CUDA``, ``DeviceType.CUDA``,
   ``_C._cuda*``, ``"nccl"``/``Backend.NCCL``, a name holding ``cuda``/``CUDA``).
2. **Statements**: each file is parsed with ``ast``; a unit is a simple statement (whole), a
   compound statement's header, or a decorator, with its line span. Docstrings are not units.
   A unit's text is normalised with ``ast.unparse`` (layout, comments, quotes and redundant
   parentheses do not count), and CUDA tokens are counted on that text, so a token in a comment
   or a docstring never makes a site. A simple statement over ``LONG_STATEMENT`` lines (a long
   list, an ``OpInfo`` table) is read line by line instead, each line with its comment dropped
   and its layout normalised; a line wholly inside a multi-line string is no unit.
3. **Alignment**: ``difflib.SequenceMatcher`` over the two files' normalised units. An old CUDA
   unit inside an ``equal`` block is ``kept`` (``how: equal``, or ``reformatted`` where the raw
   lines differ); one outside that is not made neutral in its own block (below) and whose
   normalised text still occurs in the new file's unmatched units is ``kept`` (``how: moved``:
   a copy in new code elsewhere does not hide a rewrite in place). Every other old CUDA unit of a changed block is paired
   with the window of 1-3 consecutive new units of the same block most like it (token-level
   ratio, at least ``MIN_RATIO``); where that window is not the unit made neutral (below), a
   wider one around it may be (one statement become two).
4. **Neutralized**: the window has fewer CUDA spots (non-overlapping matches of the CUDA tokens)
   than the old unit, no CUDA spot of a kind the old one lacked, and more of some neutral token
   (``NEUTRAL_TOKENS``: ``torch.accelerator``, ``torch.Stream``/``Event``, ``.device.type``,
   ``device_type``, a device variable, ``.to(``, ``torch.amp``, ``get_default_backend_for_device``,
   ``_get_device_module``, ``device_interface``, ...). ``form``: ``codegen`` when the spots that
   went were code inside a string literal (``f"{m}.cuda()"``), ``neutral`` when a public neutral
   token was added, else ``internal`` (only torch-internal helpers added). **Alongside**: the
   window keeps a CUDA spot and names another backend (xpu, mtia, hpu, privateuse1, mps) more
   often than the old unit: ``neutralized`` with ``form: alongside``. A unit whose CUDA spots
   all lie in strings of prose (a message: a string with a space) is never neutralized.
5. Anything else (a CUDA unit rewritten for another reason, moved and changed, deleted, a
   ``with torch.cuda.stream(s)`` become ``with s`` that adds no neutral token) gets no label and
   is counted in ``pair.unlabelled_changed_cuda_statements``.
6. ``kind`` is the first of ``KINDS`` whose pattern the old unit matches (the shared list's
   names). Files: those with at least one ``neutralized`` label, as in the shared list
   (``--all-files``: every candidate file with a labelled unit).
"""

from __future__ import annotations

import argparse
import ast
import copy
import difflib
import fnmatch
import hashlib
import io
import re
import sys
import tokenize
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import replay_fetch  # noqa: E402
from replay_score import _header_end  # noqa: E402

from audits.vocabulary import NAMED_BACKENDS  # noqa: E402


def _patterns(*rows: str | tuple[str, str]) -> dict[str, str]:
    r"""name -> regex, in order. A row is ``(name, regex)``, or a bare name that stands for
    itself as a whole word: ``"torch.cuda"`` -> ``\btorch\.cuda\b`` (``\b`` only beside a word
    character: ``".device.type"`` -> ``\.device\.type\b``)."""
    out = {}
    for row in rows:
        if isinstance(row, tuple):
            out[row[0]] = row[1]
            continue
        head = r"\b" if re.match(r"\w", row) else ""
        tail = r"\b" if re.search(r"\w$", row) else ""
        out[row] = head + re.escape(row) + tail
    return out


# CUDA tokens: what makes a statement "about CUDA". One alternation, matched left to right and
# without overlap, so ``torch.cuda.amp.autocast`` is one spot and ``torch.amp.autocast("cuda")``
# is one spot too (a deprecation fix, not a neutralisation).
CUDA_TOKENS: dict[str, str] = _patterns(
    "torch.cuda",
    ("_C._cuda", r"\b_C\._cuda\w*"),
    (".cuda(", r"\.cuda\s*\("),
    (".cuda attribute", r"\.cuda\b"),
    "is_cuda",
    ('"cuda"', r"""(?<![\w])[rbfu]?["']cuda(?::[^"'\n]*)?["']"""),
    "ProfilerActivity.CUDA",
    "DeviceType.CUDA",
    ("nccl", r"""["']nccl["']|\bBackend\.NCCL\b"""),
    ("cuda name", r"\b\w*(?:cuda|CUDA|Cuda)\w*\b"),
)
# Code inside a string literal (generated source): the spots that make a ``codegen`` site.
CUDA_CODE_IN_STRING = r"\.cuda\s*\(|\btorch\.cuda\.|\bis_cuda\b"

# Neutral tokens: what a neutral rewrite adds, by form: ``neutral`` for public neutral API or a
# device variable, ``internal`` for a torch-internal helper.
NEUTRAL_BY_FORM: dict[str, dict[str, str]] = {
    "neutral": _patterns(
        "torch.accelerator",
        "current_accelerator",
        "torch.Stream",
        "torch.Event",
        "torch.get_device_module",
        ".device.type",
        ("device_type", r"\b(?:device_type|DEVICE_TYPE|dev_type)\b"),
        (
            "device variable",
            r"\.device\b(?!\s*\()|(?<![\w.\"'])(?:device|DEVICE)\b(?!\s*\()(?!\s*=[^=])",
        ),
        (".to(", r"\.to\s*\("),
        ("torch.amp", r"\btorch\.(?:amp|autocast|GradScaler)\b"),
        "get_default_backend_for_device",
        ("is_cpu", r"\bis_cpu\b|\btype\s*!=\s*'cpu'"),
        ("a device's type", r"\b\w*device\w*\.type\b"),
        ("device time", r"\bdevice_time\w*|\bself_device_\w*"),
    ),
    "internal": _patterns(
        ("_get_device_module", r"\b_get_device_module\b|\b_?device_module\b"),
        ("device_interface", r"\b(?:get_interface_for_device|device_interface)\b"),
        ("device_handle", r"\b_?(?:get_)?device_handle\b"),
        ("torch._C._accelerator", r"\b_C\._accelerator\w*|\b_get_accelerator\b"),
        ("accelerator helper", r"\b_accelerator_\w+"),
        ("GPU_TYPE", r"\bGPU_TYPES?\b|\bget_gpu_type\b"),
    ),
}
# (regex, form) by name, in the order above.
NEUTRAL_TOKENS: dict[str, tuple[str, str]] = {
    name: (p, form) for form, table in NEUTRAL_BY_FORM.items() for name, p in table.items()
}
# Another backend named beside CUDA (form ``alongside``).
OTHER_BACKENDS = r"(?i)(?<![a-z])(?:%s)(?![a-z])" % "|".join((*NAMED_BACKENDS, "privateuse1"))

# kind: the first pattern the old statement's normalised text matches (the shared list's names).
KINDS: list[tuple[str, str]] = [
    ("test-gate", r"\bTEST_CUDA\b|IfCUDA|onlyCUDA|skipCUDA|requires_cuda|HAS_CUDA|TEST_MULTIGPU"),
    ("graph-capture", r"(?i)cuda_?graph|torch\.cuda\.graph\b|graph_capture|stream_capturing"),
    ("stream", r"(?i)stream\b|\bstream\w*\("),
    ("event", r"\bEvent\b|elapsed_time|record_event"),
    ("synchronize", r"\bsynchronize\b"),
    ("amp", r"\bamp\b|autocast|GradScaler"),
    ("rng", r"rng_state|manual_seed|\bseed\b|initial_seed|(?i:generator)"),
    (
        "memory-stat",
        r"memory_(?!format)|empty_cache|_cudaCachingAllocator|mem_get_info|caching_allocator",
    ),
    ("profiler", r"ProfilerActivity|DeviceType\.CUDA|cuda_time|profiler|kineto"),
    ("capability", r"capability|get_arch_list|\bsm_\d"),
    ("is_available", r"is_available|_is_compiled|is_initialized"),
    ("device-index", r"device_count|current_device|set_device|torch\.cuda\.device\("),
    ("backend-name", r"(?i)nccl"),
    (
        "device-check",
        r"is_cuda|'cuda' (?:not )?in\b|\.type\s*[!=]=|device_type\s*[!=]=|[!=]=\s*'cuda|in \('cuda",
    ),
    ("to-device", r"\.cuda\s*\("),
    ("device-list", r"\[[^\]]*'cuda'[^\]]*\]"),
    ("device-flag", r"(?<![.'/])\bcuda\s*[=:]|use_cuda|(?<![.'/])\bcuda\b(?![.':])"),
    ("device-string", r"'cuda|/cuda:|\bcuda:\d"),
    ("device-module", r"\btorch\.cuda\.\w+"),
    ("other", r""),
]
MIN_RATIO = 0.4  # least token-level likeness of an old unit and its new window
MAX_WINDOW = 3  # new units one old unit may become
LONG_STATEMENT = 8  # a simple statement over this many lines is read line by line

_CUDA = re.compile("|".join(f"(?:{p})" for p in CUDA_TOKENS.values()))
_CUDA_CODE = re.compile(CUDA_CODE_IN_STRING)
_NEUTRAL = {name: re.compile(p) for name, (p, _) in NEUTRAL_TOKENS.items()}
_OTHER = re.compile(OTHER_BACKENDS)
_KINDS = [(k, re.compile(p)) for k, p in KINDS]
_TOKEN = re.compile(r"!=|==|<=|>=|->|\*\*|//|\w+|\S")  # string literals' words are tokens too


@dataclass
class Unit:
    """One statement (a simple statement, a compound header, a decorator) of a file."""

    first: int
    last: int
    norm: str  # ast.unparse's text: layout, comments and quote style do not count
    strings: list[str] = field(default_factory=list)  # its string constants' values

    @property
    def cuda(self) -> int:
        return len(_CUDA.findall(self.norm))


# A compound statement's fields that are not its header (its bodies and its decorators).
NOT_HEADER = ("body", "orelse", "finalbody", "handlers", "cases", "decorator_list")


def _header_fields(node: ast.stmt) -> list[ast.AST]:
    """The nodes of a statement's header: every field but its bodies and decorators."""
    return [
        c
        for name, value in ast.iter_fields(node)
        if name not in NOT_HEADER
        for c in (value if isinstance(value, list) else [value])
        if isinstance(c, ast.AST)
    ]


def _header_text(node: ast.stmt) -> str:
    bare = copy.copy(node)
    for name in NOT_HEADER:
        if hasattr(bare, name):
            setattr(bare, name, [ast.Pass()] if name == "body" else [])
    try:
        text = ast.unparse(bare)
    except Exception:  # a match statement, a try without handlers: the header fields alone
        return " ".join(ast.unparse(c) for c in _header_fields(node))
    lines = text.splitlines()
    return "\n".join(lines[:-1]) if len(lines) > 1 else text


def _strings(nodes: list[ast.AST]) -> list[str]:
    return [
        n.value
        for top in nodes
        for n in ast.walk(top)
        if isinstance(n, ast.Constant) and isinstance(n.value, str)
    ]


def _is_docstring(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def _line_info(text: str) -> tuple[dict[int, int], dict[int, list[str]], set[int]]:
    """Where each line's comment begins, the pieces of string literals on each line, and the
    lines wholly inside a multi-line string (prose such as ``add_docstr``'s: no unit)."""
    comments: dict[int, int] = {}
    strings: dict[int, list[str]] = {}
    inside: set[int] = set()
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                comments[tok.start[0]] = tok.start[1]
            elif tok.type == tokenize.STRING:
                for k, piece in enumerate(tok.string.splitlines()):
                    strings.setdefault(tok.start[0] + k, []).append(piece)
                inside.update(range(tok.start[0] + 1, tok.end[0]))
    except (tokenize.TokenError, SyntaxError):
        pass
    return comments, strings, inside


def _line_units(lines: list[str], first: int, last: int, info) -> list[Unit]:
    """The lines of a long statement, each a unit of its own (comments dropped, layout and
    quote style normalised): a change inside a long list is one line, not the whole list."""
    comments, strings, inside = info
    out = []
    for n in range(first, min(last, len(lines)) + 1):
        if n in inside:
            continue
        code = lines[n - 1][: comments.get(n, len(lines[n - 1]))]
        norm = re.sub(r"\s+", " ", code).strip().replace('"', "'")
        if norm:
            out.append(Unit(n, n, norm, strings.get(n, [])))
    return out


def units(text: str) -> list[Unit] | None:
    """The file's statements in line order, or None when it does not parse. A simple
    statement longer than ``LONG_STATEMENT`` lines is read line by line (``_line_units``)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    lines, info = text.splitlines(), None
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt) or _is_docstring(node):
            continue
        for dec in getattr(node, "decorator_list", []):
            out.append(Unit(dec.lineno, dec.end_lineno, "@" + ast.unparse(dec), _strings([dec])))
        compound = any(
            isinstance(getattr(node, f, None), list) for f in ("body", "handlers", "cases")
        )
        if compound:
            head = _header_fields(node)
            out.append(Unit(node.lineno, _header_end(node), _header_text(node), _strings(head)))
        elif node.end_lineno - node.lineno >= LONG_STATEMENT:
            info = info or _line_info(text)
            out += _line_units(lines, node.lineno, node.end_lineno, info)
        else:
            out.append(Unit(node.lineno, node.end_lineno, ast.unparse(node), _strings([node])))
    out.sort(key=lambda u: (u.first, u.last))
    return out


def has_cuda_token(text: str) -> bool:
    return _CUDA.search(text) is not None


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


def _spots(text: str) -> Counter:
    """CUDA spots by the token that matched (the alternation's first matching branch)."""
    out: Counter = Counter()
    for m in _CUDA.finditer(text):
        for name, pat in CUDA_TOKENS.items():
            if re.fullmatch(pat, m.group(0)):
                out[name] += 1
                break
    return out


def _neutral(text: str) -> Counter:
    return Counter({name: len(p.findall(text)) for name, p in _NEUTRAL.items()})


def _code_in_strings(strings: list[str]) -> int:
    return sum(len(_CUDA_CODE.findall(s)) for s in strings)


def kind_of(norm: str) -> str:
    return next(k for k, p in _KINDS if p.search(norm))


def prose_only(u: Unit) -> bool:
    """Whether every CUDA spot of ``u`` is inside a string of prose (a message, a docstring
    piece: a string with a space in it); a change there is no change of code."""
    prose = [s for s in u.strings if " " in s.strip()]
    return sum(_spots(u.norm).values()) <= sum(sum(_spots(s).values()) for s in prose)


def judge(old: Unit, window: list[Unit]) -> tuple[str, str, str] | None:
    """(form, what went, what came) when ``window`` is ``old`` made neutral, else None."""
    if prose_only(old):
        return None
    new_text = "\n".join(u.norm for u in window)
    s_old, s_new = _spots(old.norm), _spots(new_text)
    others = len(_OTHER.findall(new_text)) > len(_OTHER.findall(old.norm))
    if sum(s_new.values()) and others and sum(s_new.values()) <= sum(s_old.values()):
        named = sorted(
            {m.lower() for m in _OTHER.findall(new_text)}
            - {m.lower() for m in _OTHER.findall(old.norm)}
        )
        return (
            "alongside",
            ", ".join(sorted(s_new)) + " kept",
            "+ " + ", ".join(named or ["another backend"]),
        )
    if sum(s_new.values()) >= sum(s_old.values()) or set(s_new) - set(s_old):
        return None
    n_old, n_new = _neutral(old.norm), _neutral(new_text)
    added = [name for name in NEUTRAL_TOKENS if n_new[name] > n_old[name]]
    if not added:
        return None
    went = ", ".join(sorted(k for k in s_old if s_old[k] > s_new[k]))
    strings_new = [s for u in window for s in u.strings]
    if _code_in_strings(old.strings) > _code_in_strings(strings_new):
        form = "codegen"
    elif any(NEUTRAL_TOKENS[a][1] == "neutral" for a in added):
        form = "neutral"
    else:
        form = "internal"
    return form, went, ", ".join(added)


def _ratio(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, _tokens(a), _tokens(b), autojunk=False).ratio()


def best_window(old: Unit, new: list[Unit], j1: int, j2: int) -> tuple[float, int, int]:
    """(ratio, a, b): the new units ``new[a:b]`` (inside ``j1..j2``) most like ``old``."""
    best = (0.0, j1, j1)
    toks = _tokens(old.norm)
    for a in range(j1, j2):
        for b in range(a + 1, min(a + MAX_WINDOW, j2) + 1):
            text = "\n".join(u.norm for u in new[a:b])
            sm = difflib.SequenceMatcher(None, toks, _tokens(text), autojunk=False)
            if sm.real_quick_ratio() <= best[0] or sm.quick_ratio() <= best[0]:
                continue
            r = sm.ratio()
            if r > best[0]:
                best = (r, a, b)
    return best


def _neutralized(u: Unit, new: list[Unit], j1: int, j2: int):
    """((a, b), judge's verdict) when the new units ``new[a:b]`` of the changed block ``j1..j2``
    most like ``u`` are ``u`` made neutral; else None. Where the most similar window is not,
    a wider one around it may be (``torch.cuda.init()`` -> ``mod = torch.get_device_module(...)``
    and ``mod.init()``)."""
    if j2 <= j1:
        return None
    ratio, a, b = best_window(u, new, j1, j2)
    if ratio < MIN_RATIO:
        return None
    wider = [
        (_ratio(u.norm, "\n".join(x.norm for x in new[a2:b2])), a2, b2)
        for a2 in range(max(j1, b - MAX_WINDOW), a + 1)
        for b2 in range(b, min(j2, a2 + MAX_WINDOW) + 1)
        if (a2, b2) != (a, b)
    ]
    for r, a2, b2 in [(ratio, a, b)] + sorted(wider, reverse=True):
        verdict = judge(u, new[a2:b2]) if r >= MIN_RATIO else None
        if verdict is not None:
            return (a2, b2), verdict
    return None


def _raw(lines: list[str], first: int, last: int) -> str:
    return "\n".join(line.strip() for line in lines[first - 1 : last])


@dataclass
class FileDraft:
    labels: list[dict] = field(default_factory=list)
    unlabelled: list[tuple[int, str]] = field(default_factory=list)  # (old line, old text)

    def count(self, status: str) -> int:
        return sum(lab["status"] == status for lab in self.labels)


def draft_file(path: str, old_text: str, new_text: str, old_v: str, new_v: str) -> FileDraft:
    """The labels of one file (pure: no wheel, no disk)."""
    out = FileDraft()
    old_u, new_u = units(old_text), units(new_text)
    if old_u is None or new_u is None:
        return out
    old_lines, new_lines = old_text.splitlines(), new_text.splitlines()
    pair = f"{old_v}:{new_v}"
    seen_ids: Counter = Counter()

    def label(u: Unit, status: str, new_span: tuple[int, int], **extra) -> None:
        lid = f"{pair}:{path}:{u.first}"
        seen_ids[lid] += 1
        if seen_ids[lid] > 1:
            lid += f":{seen_ids[lid]}"
        lab = {"id": lid, "pair": pair, "path": path, "status": status}
        lab.update(extra)
        lab.update(
            old_line=u.first,
            old_span=[u.first, u.last],
            new_lines=[list(new_span)],
            old_text=_raw(old_lines, u.first, u.last),
        )
        if status == "neutralized":
            lab["new_text"] = _raw(new_lines, *new_span)
        out.labels.append(lab)

    sm = difflib.SequenceMatcher(None, [u.norm for u in old_u], [u.norm for u in new_u], False)
    ops = sm.get_opcodes()
    pool: dict[str, list[int]] = {}  # normalised text -> new units outside equal blocks
    for tag, _, _, j1, j2 in ops:
        if tag != "equal":
            for j in range(j1, j2):
                pool.setdefault(new_u[j].norm, []).append(j)
    for tag, i1, i2, j1, j2 in ops:
        for k, i in enumerate(range(i1, i2)):
            u = old_u[i]
            if not u.cuda:
                continue
            if tag == "equal":
                n = new_u[j1 + k]
                same = _raw(old_lines, u.first, u.last) == _raw(new_lines, n.first, n.last)
                label(u, "kept", (n.first, n.last), how="equal" if same else "reformatted")
                continue
            hit = _neutralized(u, new_u, j1, j2)
            if hit is None and pool.get(u.norm):
                n = new_u[pool[u.norm].pop(0)]
                label(u, "kept", (n.first, n.last), how="moved")
                continue
            if hit is None:
                out.unlabelled.append((u.first, _raw(old_lines, u.first, u.last)))
                continue
            (a, b), (form, went, came) = hit
            label(
                u,
                "neutralized",
                (new_u[a].first, new_u[b - 1].last),
                kind=kind_of(u.norm),
                form=form,
                note=f"drafted: {went} -> {came}",
            )
    return out


ABOUT = (
    "DRAFTED by tests/benchmarks/replay_label.py (a heuristic, not read by a human): sites where "
    "CUDA statements of torch {old} became device-neutral in torch {new} (status: neutralized), "
    "and CUDA statements {new} keeps unchanged (status: kept; kept only means 'not changed by "
    "{new}'). Read from the .py files of the public torch wheels {old} and {new} (BSD-3-Clause, "
    "Copyright (c) PyTorch contributors). Never commit this file into the project."
)
FIELDS = {
    "old_line/old_span": "1-based line (and span) of the statement in the {old} file",
    "new_lines": "lines in the {new} file",
    "kind": "what the site does (stream, event, device-string, device-check, to-device, ...)",
    "form": "the replacement: neutral (public neutral API or a device variable), internal (a "
    "torch-internal helper), alongside (another backend added next to CUDA), codegen",
    "how": "kept: equal, reformatted (same statement, other layout) or moved",
    "old_text/new_text": "the statement before and after",
    "note": "drafted: the CUDA tokens that went -> the neutral tokens that came",
}


def _py_files(z: zipfile.ZipFile) -> set[str]:
    return {n for n in z.namelist() if n.startswith("torch/") and n.endswith(".py")}


def draft(
    old_v: str, new_v: str, globs: list[str], all_files: bool = False
) -> tuple[dict, dict[str, bytes], dict[str, bytes]]:
    """The label list of a pair; also the old and new bytes of every covered file."""
    wheels = replay_fetch.cache_root() / "wheels"
    zo = zipfile.ZipFile(replay_fetch.download(old_v, wheels))
    zn = zipfile.ZipFile(replay_fetch.download(new_v, wheels))
    both = sorted(_py_files(zo) & _py_files(zn))
    if globs:
        both = [p for p in both if any(fnmatch.fnmatch(p, g) for g in globs)]
    labels: list[dict] = []
    shas: dict[str, dict[str, str]] = {}
    old_b, new_b = {}, {}
    candidates = unparsed = unlabelled = unlabelled_all = 0
    for path in both:
        ob = zo.read(path)
        otext = ob.decode("utf-8", errors="replace")
        if not has_cuda_token(otext):
            continue
        candidates += 1
        nb = zn.read(path)
        if ob == nb:
            continue  # nothing changed: every CUDA statement is kept, no site to learn from
        d = draft_file(path, otext, nb.decode("utf-8", errors="replace"), old_v, new_v)
        if units(otext) is None:
            unparsed += 1
        unlabelled_all += len(d.unlabelled)
        if not (d.count("neutralized") or (all_files and d.labels)):
            continue
        labels += d.labels
        unlabelled += len(d.unlabelled)
        shas[path] = {
            "old_sha256": hashlib.sha256(ob).hexdigest(),
            "new_sha256": hashlib.sha256(nb).hexdigest(),
        }
        old_b[path], new_b[path] = ob, nb
    data = {
        "about": ABOUT.format(old=old_v, new=new_v),
        "fields": {k: v.format(old=old_v, new=new_v) for k, v in FIELDS.items()},
        "pair": {
            "old": old_v,
            "new": new_v,
            "files": len(shas),
            "neutralized": sum(lab["status"] == "neutralized" for lab in labels),
            "kept": sum(lab["status"] == "kept" for lab in labels),
            "unlabelled_changed_cuda_statements": unlabelled,
            "candidate_files": candidates,
            "unlabelled_changed_cuda_statements_all_candidates": unlabelled_all,
            "unparsed_files": unparsed,
            "drafted_by": "tests/benchmarks/replay_label.py",
            "file_sha256": shas,
        },
        "labels": labels,
    }
    return data, old_b, new_b


def summary(data: dict) -> str:
    pair, labs = data["pair"], data["labels"]
    neu = [lab for lab in labs if lab["status"] == "neutralized"]
    kinds = Counter(lab["kind"] for lab in neu).most_common()
    forms = Counter(lab["form"] for lab in neu).most_common()
    return "\n".join(
        [
            f"replay_label: {pair['old']} -> {pair['new']}: {pair['files']} files "
            f"(of {pair['candidate_files']} candidates), {pair['neutralized']} neutralized, "
            f"{pair['kept']} kept, {pair['unlabelled_changed_cuda_statements']} changed CUDA "
            "statements unlabelled",
            "  kinds: " + ", ".join(f"{k} {n}" for k, n in kinds),
            "  forms: " + ", ".join(f"{k} {n}" for k, n in forms),
        ]
    )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--old", required=True, help="the older torch release, e.g. 2.13.0")
    ap.add_argument("--new", required=True, help="the newer torch release, e.g. 2.14.1")
    ap.add_argument("--out", type=Path, required=True, help="the label list to write (YAML)")
    ap.add_argument("--files", action="append", default=[], metavar="GLOB", help="only these")
    ap.add_argument(
        "--all-files",
        action="store_true",
        help="cover every changed candidate file with a label, not only those with a neutralized one",
    )
    opts = ap.parse_args(argv)
    try:
        data, _, _ = draft(opts.old, opts.new, opts.files, opts.all_files)
    except replay_fetch.FetchError as e:
        print(f"replay_label: {e}", file=sys.stderr)
        return 2
    opts.out.parent.mkdir(parents=True, exist_ok=True)
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    with open(opts.out, "w", encoding="utf-8") as f:
        yaml.dump(data, f, Dumper=dumper, sort_keys=False, allow_unicode=True, width=200)
    print(summary(data), file=sys.stderr)
    print(f"replay_label: wrote {opts.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
