"""The wild-scripts benchmark's projects: pinned PyPI sdists and the folders taken from each
(data; ``wild_scripts`` reads it; rounds 28 on are in ``wild_projects_later``)."""

from __future__ import annotations

from wild_project import Project
from wild_projects_later import LATER
from wild_projects_latest import LATEST

PROJECTS = {
    "ignite": Project(
        "pytorch-ignite",
        "0.5.5",
        (
            "pytorch_ignite-0.5.5.tar.gz",
            "2c14de75c939a3cc06d2e7de00b1e0a261917ef9bd874dac2e69d789dfa9cc64",
        ),
        ("examples", "pyproject.toml"),
    ),
    "fairscale": Project(
        "fairscale",
        "0.4.13",
        (
            "fairscale-0.4.13.tar.gz",
            "1b797825c427f5dba92253fd0d8daa574e8bd651a2423497775fab1b30cfb768",
        ),
        ("benchmarks", "pyproject.toml", "setup.cfg", "requirements.txt"),
    ),
    "fairseq": Project(
        "fairseq",
        "0.12.2",
        (
            "fairseq-0.12.2.tar.gz",
            "34f1b18426bf3844714534162f065ab733e049597476daa35fffb4d06a92b524",
        ),
        ("fairseq/examples=examples", "fairseq_cli", "setup.cfg"),
    ),
    # held out (round 22): first measured before any change made for them
    "opacus": Project(
        "opacus",
        "1.6.0",
        (
            "opacus-1.6.0.tar.gz",
            "20d77252c1e8528cd5826fbaba345cd39ed5c3edb841707eafb6403fe276140a",
        ),
        ("examples", "benchmarks", "setup.cfg", "requirements.txt"),
        held_out=True,
    ),
    "timm": Project(
        "timm",
        "1.0.31",
        (
            "timm-1.0.31.tar.gz",
            "baa0b333339c46d3d6d4965d99b69f5053afed71210e8f433d7ea5ee6a18f0ec",
        ),
        ("tests", "pyproject.toml"),
        held_out=True,
    ),
    "peft": Project(
        "peft",
        "0.21.2",
        (
            "peft-0.21.2.tar.gz",
            "b803ccfb3f3f316004d850284306687833a2235ea278fb56abc856203456142e",
        ),
        ("tests", "pyproject.toml", "setup.cfg", "setup.py"),
        held_out=True,
    ),
    "accelerate": Project(
        "accelerate",
        "1.16.0",
        (
            "accelerate-1.16.0.tar.gz",
            "43c446b9affb145220946a63fe32e14e968fcfca645d25b5f1f3fdbc375657ae",
        ),
        (
            "src/accelerate/test_utils/scripts=scripts",
            "tests",
            "pyproject.toml",
            "setup.cfg",
            "setup.py",
        ),
        held_out=True,
    ),
    "deepspeed": Project(
        "deepspeed",
        "0.19.8",
        (
            "deepspeed-0.19.8.tar.gz",
            "9e491abd0827ea5c389dd702e15e11e13d83d904bac4a20d6c2a4cb37207a9af",
        ),
        ("benchmarks", "bin", "setup.cfg", "requirements"),
        held_out=True,
    ),
    # held out (round 23): first measured before any change made for them
    "espnet": Project(
        "espnet",
        "202611",
        (
            "espnet-202611.tar.gz",
            "eb5816c4d2e4a18eaa2afacc2f8cf74f93e5534dec0fdcee0b2c89b6f7ddd1fd",
        ),
        ("egs2", "utils", "pyproject.toml", "setup.cfg"),
        held_out=True,
    ),
    "gpytorch": Project(
        "gpytorch",
        "1.15.2",
        (
            "gpytorch-1.15.2.tar.gz",
            "380625e93f851b85f772b25c5fb0a6c6d2e3eb2ef667f1e566ab4f95b8775361",
        ),
        ("test", "examples", "pyproject.toml", "setup.cfg"),
        held_out=True,
    ),
    "litgpt": Project(
        "litgpt",
        "0.5.13",
        (
            "litgpt-0.5.13.tar.gz",
            "77be78814d0334e8e32ee6dac417e9718ebad45529458995ca255af24cf15cf3",
        ),
        ("tests", "pyproject.toml"),
        held_out=True,
    ),
    # held out (round 24): libraries people import, measured at first contact
    "skorch": Project(
        "skorch",
        "1.4.0",
        (
            "skorch-1.4.0.tar.gz",
            "f7a5d3c13a3aecf0a0fe689ff25188be1145a95268f8fe81f01aaa9fbd7cead1",
        ),
        ("skorch", "pyproject.toml", "setup.cfg"),
        held_out=True,
    ),
    "monai": Project(
        "monai",
        "1.6.1",
        (
            "monai-1.6.1.tar.gz",
            "e24ae4bb944f1779b7a6445acc4ff2efd9cc504d05dffe2498c49af117350136",
        ),
        ("monai", "pyproject.toml", "setup.cfg"),
        held_out=True,
    ),
    "pyg": Project(
        "torch-geometric",
        "2.8.1",
        (
            "torch_geometric-2.8.1.tar.gz",
            "3d4431567fcf4865a29cfec25c52484382dd38fd46a45fb4f9d473545d64b812",
        ),
        ("torch_geometric", "pyproject.toml"),
        held_out=True,
    ),
    "mmengine": Project(
        "mmengine",
        "0.10.7",
        (
            "mmengine-0.10.7.tar.gz",
            "d20ffcc31127567e53dceff132612a87f0081de06cbb7ab2bdb7439125a69225",
        ),
        ("mmengine", "setup.cfg"),
        held_out=True,
    ),
    # held out (round 25): what people run to train and serve (a detector's CLI, a trainer, a
    # diffusion library, an embedding library), measured at first contact
    "ultralytics": Project(
        "ultralytics",
        "8.4.190",
        (
            "ultralytics-8.4.190.tar.gz",
            "c7a0ebb21d10f1de98682b6a4dc22bc0d1d0634b9398c086bd03b1e5bf40cbc3",
        ),
        ("ultralytics", "tests", "pyproject.toml"),
        held_out=True,
    ),
    "lightning": Project(
        "lightning",
        "2.6.6",
        (
            "lightning-2.6.6.tar.gz",
            "1c6329e241f8a85f29fedead89c1ee138b36caa08de60c260c6a7eaee81c8295",
        ),
        ("src/lightning=lightning", "pyproject.toml", "requirements"),
        held_out=True,
    ),
    "diffusers": Project(
        "diffusers",
        "0.42.1",
        (
            "diffusers-0.42.1.tar.gz",
            "ce855ab670c8cd1c7a61be8f12fbc68c081bca8ec5e747273946d8d6c2aff23b",
        ),
        ("src/diffusers=diffusers", "tests", "pyproject.toml", "setup.py"),
        held_out=True,
    ),
    "sentence-transformers": Project(
        "sentence-transformers",
        "6.3.0",
        (
            "sentence_transformers-6.3.0.tar.gz",
            "a19acbf76a958817136ee4e89f90b483255d77f3dc9a7309814f7600592c450e",
        ),
        ("sentence_transformers", "tests", "pyproject.toml"),
        held_out=True,
    ),
    # held out (round 26): a CLIP trainer's CLI, an RL library, a fine-tuning library and its
    # CLI scripts, a vision library with its benchmarks, measured at first contact
    "open_clip": Project(
        "open_clip_torch",
        "3.3.0",
        (
            "open_clip_torch-3.3.0.tar.gz",
            "904b1a9f909df8281bb3de60ab95491cd2994a509177ea4f9d6292a84fe24d6d",
        ),
        (
            "src/open_clip=open_clip",
            "src/open_clip_train=open_clip_train",
            "tests",
            "pyproject.toml",
        ),
        held_out=True,
    ),
    "stable-baselines3": Project(
        "stable-baselines3",
        "2.9.2",
        (
            "stable_baselines3-2.9.2.tar.gz",
            "8af267e9513343f481b3f0680b7740ad79a746873db24f18a9fb2edcbd9a2df7",
        ),
        ("stable_baselines3", "tests", "pyproject.toml", "setup.py"),
        held_out=True,
    ),
    "trl": Project(
        "trl",
        "1.16.0",
        (
            "trl-1.16.0.tar.gz",
            "999bd4a85b08870b7bfa387e1efa5177d2a4b88fe82b2526a057ac5d3cc600cd",
        ),
        ("trl", "pyproject.toml", "setup.cfg"),
        held_out=True,
    ),
    "kornia": Project(
        "kornia",
        "0.9.0",
        (
            "kornia-0.9.0.tar.gz",
            "65e82219b10e73289fb8cb3c739879d917e6908c0a977b1d65f388cba1741f71",
        ),
        ("kornia", "benchmarks", "pyproject.toml"),
        held_out=True,
    ),
    # held out (round 27): a trainer library with its callbacks and tests, a speech toolkit, an
    # evaluation harness people run from its CLI, and a speech recogniser's CLI, at first contact
    "composer": Project(
        "mosaicml",
        "0.32.1",
        (
            "mosaicml-0.32.1.tar.gz",
            "417c8aa574e22d39368a434eec0800268b275cb1cc2c8af8bc187475da4953d3",
        ),
        ("composer", "tests", "pyproject.toml", "setup.py"),
        held_out=True,
    ),
    "speechbrain": Project(
        "speechbrain",
        "1.1.2",
        (
            "speechbrain-1.1.2.tar.gz",
            "a49328b61f6e6caa0e01ab4e32bc15b564114953e30718b1379d2e1d764e426a",
        ),
        ("speechbrain", "pyproject.toml", "setup.cfg"),
        held_out=True,
    ),
    "lm_eval": Project(
        "lm_eval",
        "0.4.13",
        (
            "lm_eval-0.4.13.tar.gz",
            "f592269f21a5e173d7993ae01267f61fc84be393cee1f51779e3e104a70c967e",
        ),
        ("lm_eval", "tests", "pyproject.toml"),
        held_out=True,
    ),
    "whisper": Project(
        "openai-whisper",
        "20250625",
        (
            "openai_whisper-20250625.tar.gz",
            "37a91a3921809d9f44748ffc73c0a55c9f366c85a3ef5c2ae0cc09540432eb96",
        ),
        ("whisper", "tests", "pyproject.toml", "requirements.txt"),
        held_out=True,
    ),
    **LATER,
    **LATEST,
}
SETS = {
    "tuned": [k for k, p in PROJECTS.items() if not p.held_out],
    "held-out": [k for k, p in PROJECTS.items() if p.held_out],
    "all": list(PROJECTS),
}
