"""What an author's prose says about the devices (``cuda-stated``): a sentence that sends other
devices down the other path ("CUDA only", "keep the original path for other devices"), or a
docstring that weighs CUDA against another backend by name. The phrases are
``audits/vocabulary.py``'s ``EXCLUSIVE_PHRASES``."""

from __future__ import annotations

import functools
import re

from audits import vocabulary

_CUDA_DEVICE = re.compile(r"(?<![a-z])cuda(?![a-z])")


@functools.lru_cache(maxsize=1)
def _exclusive() -> re.Pattern:
    return re.compile("|".join(vocabulary.EXCLUSIVE_PHRASES))


_OTHER_BACKEND = re.compile(
    r"(?<![a-z])(?:%s|metal)(?![a-z])" % "|".join(vocabulary.NAMED_BACKENDS), re.IGNORECASE
)


def excludes_others(text: str) -> bool:
    """``text`` names CUDA, and a sentence of it says other devices take another path ("CUDA only",
    "keep the original path for other devices", "on other devices (CPU, MPS)"). Not where it
    lists another backend with CUDA ("moved to cuda, xpu and hpu but not otherwise"), nor an
    "only CUDA" set against the CPU alone ("only on CUDA because CPU elementwise strides are
    incorrect": what ``!= "cpu"`` keeps)."""
    low = text.lower()
    if not _CUDA_DEVICE.search(low):
        return False
    for sentence in _SENTENCE.split(low):
        found = _exclusive().search(sentence)
        if not found or _listed(sentence):
            continue
        if (
            "only" in found.group(0)
            and _CPU.search(sentence)
            and not _OTHER_BACKEND.search(sentence)
        ):
            continue
        return True
    return False


_SENTENCE = re.compile(r"(?<=[.;!?])\s+|\n\s*\n")
_CPU = re.compile(r"(?<![a-z])cpus?(?![a-z])")


def _listed(low: str) -> bool:
    """Another backend is named within a few characters of "cuda": listed with it."""
    return any(_OTHER_BACKEND.search(_around(low, m)) for m in _CUDA_DEVICE.finditer(low))


def _around(low: str, m: re.Match) -> str:
    """``m``'s text with ``_LISTED_WITHIN`` characters either side."""
    return low[max(0, m.start() - _LISTED_WITHIN) : m.end() + _LISTED_WITHIN]


def weighs_backends(doc: str) -> bool:
    """A docstring speaks of CUDA and, apart from it, of another backend by name ("MPS keeps
    ``shift``"): its author weighed the devices, and a test of CUDA beside it is a choice among
    them. A backend listed with CUDA ("'cuda', 'xpu', 'mtia' and 'privateuseone'", "CUDA/XPU")
    names the devices the code serves alike."""
    low = doc.lower()
    if not _CUDA_DEVICE.search(low):
        return False
    return any(not _CUDA_DEVICE.search(_around(low, m)) for m in _OTHER_BACKEND.finditer(low))


_LISTED_WITHIN = 25  # characters: a backend this close to "cuda" is listed with it
