"""The gate's data: what says "this code is about CUDA itself". Paths CUDA owns, state, timeline
and query calls: ``cuda_intent.toml`` beside this module; the CUDA marker words and the neutral
words: ``audits/vocabulary.py`` (the project's one copy). Data, not code: a new path or word goes
there, not in an ``if``."""

from __future__ import annotations

import functools
import re
from pathlib import Path

import tomllib

from audits import vocabulary


@functools.lru_cache(maxsize=1)
def data() -> dict:
    return tomllib.loads(Path(__file__).with_name("cuda_intent.toml").read_text())


@functools.lru_cache(maxsize=1)
def _marker() -> re.Pattern:
    return re.compile("|".join(vocabulary.marker_patterns()), re.IGNORECASE)


def is_cuda_word(text: str) -> bool:
    """An identifier / attribute / device-like string that names something CUDA-only."""
    return bool(_marker().search(text))


@functools.lru_cache(maxsize=1)
def _feature() -> re.Pattern:
    """The markers less the device's own name: a CUDA library or feature (cuSOLVER, NCCL, TF32,
    NVTX, sm_80, HIP), not "cuda" as the name of the device."""
    pats = [p for p in vocabulary.marker_patterns() if p != vocabulary.CUDA_WORDS[0]]
    return re.compile("|".join(pats), re.IGNORECASE)


def about_cuda_feature(text: str) -> bool:
    """A comment's first paragraph names a CUDA-only library or feature ("the cuSOLVER backend
    returns V^H"), and no neutral device. "Inputs always cuda" or "we only care for cuda
    tensors" name the device the code ran on when it was written, which is no evidence."""
    head = text.strip().split("\n\n")[0].lower()
    return bool(_feature().search(head)) and not any(w in head for w in vocabulary.NEUTRAL_WORDS)


@functools.lru_cache(maxsize=1)
def _cuda_only() -> re.Pattern:
    return re.compile("|".join(vocabulary.CUDA_MARKERS), re.IGNORECASE)


@functools.lru_cache(maxsize=1)
def _other_accelerator() -> re.Pattern:
    others = [
        a
        for a in vocabulary.PY_ACCELERATORS
        if a not in (*vocabulary.CUDA_FAMILY, *vocabulary.PY_OPEN)
    ]
    return re.compile("|".join(rf"(?<![a-z]){a}(?![a-z])" for a in others), re.IGNORECASE)


def weighs_backends(lines: list[str]) -> bool:
    """A comment line names another accelerator and what goes wrong there, without CUDA ("If
    the device_type is 'mps' then it will complain that mps is not implemented"): the author
    weighed that backend and kept CUDA's path (nnU-Net's train step, round 37). A line listing
    it beside CUDA ("moves to cuda, xpu and hpu but not otherwise") names supported devices."""
    return any(
        _other_accelerator().search(t) and _REFUSAL.search(t) and not _CUDA.search(t) for t in lines
    )


_CUDA = re.compile(r"(?<![a-z])cuda(?![a-z])", re.IGNORECASE)
_REFUSAL = re.compile(
    r"\b(not (yet )?(implemented|supported|work\w*)|unsupported|complain\w*|fail\w*|error\w*"
    r"|broken|crash\w*|cannot|can't|won't|does(n't| not) work)\b",
    re.IGNORECASE,
)


def other_backend_only(text: str) -> bool:
    """``text`` names another backend (``"xpu"``, ``torch.mps.is_available``) and nothing of
    CUDA's: a test on it is a per-device dispatch, whose default arm serves every device."""
    return is_cuda_word(text) and not _cuda_only().search(text)


def collective_name(text: str) -> bool:
    """``text`` (as the gate reports what stays CUDA) is only the name of CUDA's collective
    library (``'nccl'``, ``Backend.NCCL``), or a finding on that name in a test
    (``HN602 backend == 'nccl'``): ``[collectives]``."""
    text = text.strip()
    table = data()["collectives"]
    rule, _, rest = text.partition(" ")
    return text in table["names"] or (rule in table["rules"] and "nccl" in rest.lower())


def about_cuda_text(doc: str) -> bool:
    """A docstring's first paragraph is about CUDA (mentions it, names no neutral device)."""
    head = doc.strip().split("\n\n")[0].lower()
    return is_cuda_word(head) and not any(w in head for w in vocabulary.NEUTRAL_WORDS)


def about_cuda_summary(doc: str) -> bool:
    """A docstring's summary (its first sentence) is about CUDA: a later aside ("excluding ...
    various CUDA events") does not make the function CUDA's."""
    return about_cuda_text(re.split(r"\.\s", doc.strip() + " ", maxsplit=1)[0])


def owned(path: str) -> list[tuple[str, list[str]]]:
    """The ``[[owned]]`` entries that cover ``path``: (path prefix, function patterns or [])."""
    path = path.replace("\\", "/")
    out = []
    for e in data()["owned"]:
        p = e["path"]
        if path == p or (p.endswith("/") and (path.startswith(p) or f"/{p}" in f"/{path}")):
            out.append((p, list(e.get("functions", []))))
        elif not p.endswith("/") and (path.endswith("/" + p)):
            out.append((p, list(e.get("functions", []))))
    return out


@functools.lru_cache(maxsize=None)
def calls(table: str) -> frozenset[str]:
    """The qualified calls of a ``[table]`` with a ``calls`` list (state, timeline, queries)."""
    return frozenset(data()[table]["calls"])


@functools.lru_cache(maxsize=1)
def timeline_resolvers() -> frozenset[str]:
    """``[timeline] resolvers``: calls of a timeline's block that are no work on it."""
    return frozenset(data()["timeline"].get("resolvers", ()))


@functools.lru_cache(maxsize=1)
def no_work_calls() -> frozenset[str]:
    """``torch.cuda`` calls that run no work on a device: index resolvers, questions about the
    devices (``[binding] questions``) and the state a function selects (``[state]``)."""
    return timeline_resolvers() | calls("state") | frozenset(data()["binding"]["questions"])


@functools.lru_cache(maxsize=1)
def kernel_decorators() -> frozenset[str]:
    """``[checks] kernels``: qualified decorators that define a GPU kernel (``triton.jit``)."""
    return frozenset(data()["checks"]["kernels"])


@functools.lru_cache(maxsize=1)
def expected_error_calls() -> frozenset[str]:
    """``[checks] expected_errors``: last names of calls that state an expected error."""
    return frozenset(data()["checks"]["expected_errors"])


@functools.lru_cache(maxsize=1)
def test_input_calls() -> frozenset[str]:
    """``[checks] test_inputs``: last names of the test harness's input constructors."""
    return frozenset(data()["checks"]["test_inputs"])


@functools.lru_cache(maxsize=1)
def device_types() -> frozenset[str]:
    """The device-type strings a per-device dispatch tests: the vocabulary's Python backends and
    ``[checks] device_types_extra``."""
    return frozenset(vocabulary.PY_BACKENDS) | frozenset(data()["checks"]["device_types_extra"])


@functools.lru_cache(maxsize=1)
def library_flags() -> tuple[str, ...]:
    """``[library_flags] prefixes``: dotted names of CUDA's library settings."""
    return tuple(data()["library_flags"]["prefixes"])


@functools.lru_cache(maxsize=1)
def cuda_libraries() -> tuple[str, ...]:
    """``[libraries] modules``: other projects' libraries that run on CUDA devices alone."""
    return tuple(data()["libraries"]["modules"])


@functools.lru_cache(maxsize=1)
def _library_heads() -> frozenset[str]:
    return frozenset(lib.split(".")[0] for lib in cuda_libraries())


def cuda_library(module: str) -> str | None:
    """The listed library that ``module`` is or lies under (``cupyx.scipy.ndimage`` ->
    ``cupyx``), or None."""
    if module.split(".", 1)[0] not in _library_heads():
        return None
    return next(
        (lib for lib in cuda_libraries() if module == lib or module.startswith(lib + ".")), None
    )


@functools.lru_cache(maxsize=1)
def cuda_environment() -> frozenset[str]:
    """``[libraries] environment``: CUDA's own environment variables."""
    return frozenset(data()["libraries"]["environment"])


# a requirement string: a distribution, extras, version specifiers, a marker
_REQUIREMENT = re.compile(
    r"([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*"
    r"((?:(?:==|>=|<=|~=|!=|<|>)\s*[0-9][\w.*+]*\s*,?\s*)*)(?:;.*)?"
)


def cuda_build(text: str, installer: bool = False) -> str | None:
    """The distribution a requirement string names when it is a build for CUDA (its name ends
    in a ``[libraries] build_suffixes`` entry, with or without a CUDA version:
    ``paddlepaddle-gpu>=3.0``, ``cupy-cuda12x``), or a listed library; else None. The string
    must pin a version unless it goes to an ``installer`` (``check_requirements``, ``pip``): a
    bare ``"multi-gpu"`` or ``"tensorrt"`` is more often a label or a format's name."""
    if not installer and not any(c in text for c in "<>=~"):  # no specifier: most strings
        return None
    m = _REQUIREMENT.fullmatch(text.strip())
    if m is None or not (installer or m.group(2)):
        return None
    name = m.group(1).lower()
    for suffix in data()["libraries"]["build_suffixes"]:
        head, sep, tail = name.rpartition(suffix)
        if sep and head and re.fullmatch(r"[0-9]*x?", tail):
            return name
    return name if cuda_library(name) else None


@functools.lru_cache(maxsize=1)
def reached_work() -> frozenset[str]:
    """``[reached] work``: rules whose findings are CUDA work that fails without CUDA."""
    return frozenset(data()["reached"]["work"])


@functools.lru_cache(maxsize=1)
def reached_refusals() -> frozenset[str]:
    """``[reached] refusals``: rules whose kept findings refuse other devices (a test's gate)."""
    return frozenset(data()["reached"]["refusals"])


@functools.lru_cache(maxsize=1)
def reached_rules() -> frozenset[str]:
    """``[reached] rules``: the test gates ``cuda-reached`` asks about."""
    return frozenset(data()["reached"]["rules"])
