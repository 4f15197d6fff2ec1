"""The wild-scripts projects held out from round 28 on (data; ``wild_projects`` merges them)."""

from __future__ import annotations

from wild_project import Project

LATER = {
    # held out (round 28): the model library people import most (its sources and common tests),
    # a training library with its callbacks, an audio-generation toolkit with its scripts, a
    # speaker-diarisation pipeline, and a music source separator's CLI, at first contact
    "transformers": Project(
        "transformers",
        "5.25.0",
        (
            "transformers-5.25.0.tar.gz",
            "9120226c6bf170d69abc3029036799bb5d48e552f7127646a529a5c9309812e2",
        ),
        ("src/transformers=transformers", "tests", "pyproject.toml", "setup.py"),
        held_out=True,
    ),
    "fastai": Project(
        "fastai",
        "2.8.12",
        (
            "fastai-2.8.12.tar.gz",
            "b995efbb1ade78c99cc228e65db7493a668eb10cfa4945e21d2e348d738aba04",
        ),
        ("fastai", "pyproject.toml", "setup.cfg"),
        held_out=True,
    ),
    "audiocraft": Project(
        "audiocraft",
        "1.3.0",
        (
            "audiocraft-1.3.0.tar.gz",
            "d82ade3eb4f934ee1adb438ae687a2bf59d33ca4a20039beab072548c038ac80",
        ),
        ("audiocraft", "scripts", "tests", "setup.py", "setup.cfg", "requirements.txt"),
        held_out=True,
    ),
    "pyannote": Project(
        "pyannote.audio",
        "4.0.7",
        (
            "pyannote_audio-4.0.7.tar.gz",
            "3a903dfb5ca711d134cc2522561c9158b186836f5d62e8a57c46c6648e8a8229",
        ),
        ("src/pyannote=pyannote", "tests", "pyproject.toml"),
        held_out=True,
    ),
    "demucs": Project(
        "demucs",
        "4.1.0",
        (
            "demucs-4.1.0.tar.gz",
            "d94c4f7dac886595b66af405c0fd1756fa00c297183f1cf021fd2eeedeeb67b2",
        ),
        ("demucs", "tools", "hubconf.py", "pyproject.toml", "setup.cfg"),
        held_out=True,
    ),
    # held out (round 29): a text-to-speech toolkit with the command-line programs people run
    # (TTS/bin), an NLP pipeline, a sequence-labelling library with its tests, a forecasting
    # library with its tests, a self-supervised-learning library, and the metrics library, at
    # first contact
    "coqui-tts": Project(
        "coqui-tts",
        "0.28.0",
        (
            "coqui_tts-0.28.0.tar.gz",
            "0d19e499cafd49a3af94af222e6937c12d64f2a27ecb81fd77df4ba3581c090c",
        ),
        ("TTS", "recipes", "hubconf.py", "pyproject.toml"),
        held_out=True,
    ),
    "stanza": Project(
        "stanza",
        "1.15.0",
        (
            "stanza-1.15.0.tar.gz",
            "69f18af136ac5f88611f930af8dc37e89ae9e073e23860b3604bad9a941b44b2",
        ),
        ("stanza", "setup.py"),
        held_out=True,
    ),
    "flair": Project(
        "flair",
        "0.15.1",
        (
            "flair-0.15.1.tar.gz",
            "780b4eeffba044c4a181f1810872fc01201c2eaed8d2ef4bcb126a6464e91933",
        ),
        ("flair", "tests", "pyproject.toml", "setup.py", "requirements.txt"),
        held_out=True,
    ),
    "pytorch-forecasting": Project(
        "pytorch-forecasting",
        "1.8.0",
        (
            "pytorch_forecasting-1.8.0.tar.gz",
            "f7de2af2fb7ce0c4ef73287666b8b79391485ff55883c974b6267b505adf0422",
        ),
        ("pytorch_forecasting", "tests", "examples", "pyproject.toml"),
        held_out=True,
    ),
    "lightly": Project(
        "lightly",
        "1.6.0",
        (
            "lightly-1.6.0.tar.gz",
            "05cfb780837989a92cc1255aa0dfef7413881cb99b9e1d2a21b1c2f48231a7e9",
        ),
        ("lightly", "pyproject.toml", "setup.py"),
        held_out=True,
    ),
    "torchmetrics": Project(
        "torchmetrics",
        "1.9.0",
        (
            "torchmetrics-1.9.0.tar.gz",
            "a488609948600df52d3db4fcdab02e62aab2a85ef34da67037dc3e65b8512faa",
        ),
        ("src/torchmetrics=torchmetrics", "requirements", "requirements.txt", "setup.py"),
        held_out=True,
    ),
    # round 30: an image-restoration toolbox with its training script, a NeRF framework with its
    # tests, a knowledge-graph library with its tests, the generative-metrics tool, a
    # metric-learning library, and a detection toolbox, at first contact
    "basicsr": Project(
        "basicsr",
        "1.4.2",
        (
            "basicsr-1.4.2.tar.gz",
            "b89b595a87ef964cda9913b4d99380ddb6554c965577c0c10cb7b78e31301e87",
        ),
        ("basicsr", "setup.py", "requirements.txt"),
        held_out=True,
    ),
    "nerfstudio": Project(
        "nerfstudio",
        "1.1.5",
        (
            "nerfstudio-1.1.5.tar.gz",
            "c3d8fd27208565e2031e4b0c89f82eb78199207d5194755f5b6c8f41e02f4cf9",
        ),
        ("nerfstudio", "tests", "pyproject.toml"),
        held_out=True,
    ),
    "pykeen": Project(
        "pykeen",
        "1.11.1",
        (
            "pykeen-1.11.1.tar.gz",
            "702cb807c354a0d2fce0f0593db46e1fe15fba2a37e92bbb18cd1b9d0a85fe13",
        ),
        ("src/pykeen=pykeen", "tests", "pyproject.toml"),
        held_out=True,
    ),
    "torch-fidelity": Project(
        "torch-fidelity",
        "0.4.0",
        (
            "torch_fidelity-0.4.0.tar.gz",
            "73548b97f1a844cb94dee7736c8485cbf1e5ae43670679f62ffb7bbb8bb3d455",
        ),
        ("torch_fidelity", "tests", "setup.py", "requirements.txt"),
        held_out=True,
    ),
    "metric-learning": Project(
        "pytorch-metric-learning",
        "2.9.0",
        (
            "pytorch-metric-learning-2.9.0.tar.gz",
            "27a626caf5e2876a0fd666605a78cb67ef7597e25d7a68c18053dd503830701f",
        ),
        ("src/pytorch_metric_learning=pytorch_metric_learning", "setup.py"),
        held_out=True,
    ),
    "mmdet": Project(
        "mmdet",
        "3.3.0",
        (
            "mmdet-3.3.0.tar.gz",
            "fe8cc2685d60a2a4f2530a4e92aa6269fe45af93265303a31bf4ea463eb3164f",
        ),
        ("mmdet", "requirements", "setup.py"),
        held_out=True,
    ),
    # round 31: a probabilistic-programming library with its tests, a continual-learning library
    # with its examples, a training-extras library (streams, profiler), a vision-language
    # library with its apps, a segmentation toolbox with its tests, a tabular GAN with its
    # public cuda switch, and a super-resolution inference script, at first contact
    "pyro": Project(
        "pyro-ppl",
        "1.9.2",
        (
            "pyro_ppl-1.9.2.tar.gz",
            "e4a4b089023777c0bc98c01db4c6ed5e39a1001985ebccfe210dc545bf5b24dd",
        ),
        ("pyro", "tests", "pyproject.toml", "setup.cfg"),
        held_out=True,
    ),
    "avalanche": Project(
        "avalanche-lib",
        "0.6.0",
        (
            "avalanche_lib-0.6.0.tar.gz",
            "8d0886e76dbc2a769aa581aa879c711fcf7fa069291bb9986dffdd5d07f91d4a",
        ),
        ("avalanche", "examples", "tests", "pyproject.toml", "setup.cfg", "setup.py"),
        held_out=True,
    ),
    "pfn-extras": Project(
        "pytorch-pfn-extras",
        "0.9.0",
        (
            "pytorch_pfn_extras-0.9.0.tar.gz",
            "82acc16094ebbb661e1bc6d80dd5604080f93d514f82cfe229a9420be36930ce",
        ),
        ("pytorch_pfn_extras", "pyproject.toml", "setup.cfg", "setup.py"),
        held_out=True,
    ),
    "lavis": Project(
        "salesforce-lavis",
        "1.0.2",
        (
            "salesforce-lavis-1.0.2.tar.gz",
            "778f6be1717a6e60ca7787f164bd04f8f361694baf04154805e9ac9c27a08a37",
        ),
        (
            "lavis",
            "app",
            "projects",
            "tests",
            "pyproject.toml",
            "setup.cfg",
            "setup.py",
            "requirements.txt",
        ),
        held_out=True,
    ),
    "mmseg": Project(
        "mmsegmentation",
        "1.2.2",
        (
            "mmsegmentation-1.2.2.tar.gz",
            "35dbd8089fd1c2baa467d3b7c2e1b197043f4f955ad5de8005170eee469102ec",
        ),
        ("mmseg", "tests", "requirements", "setup.cfg", "setup.py"),
        held_out=True,
    ),
    "ctgan": Project(
        "ctgan",
        "0.12.1",
        (
            "ctgan-0.12.1.tar.gz",
            "e545c2b1a752affba3de2933a5f8037228e837f7a73f5593399b52cfe9611bc7",
        ),
        ("ctgan", "tests", "pyproject.toml"),
        held_out=True,
    ),
    "realesrgan": Project(
        "realesrgan",
        "0.3.0",
        (
            "realesrgan-0.3.0.tar.gz",
            "0d36da96ab9f447071606e91f502ccdfb08f80cc82ee4f8caf720c7745ccec7e",
        ),
        (
            "inference_realesrgan.py",
            "realesrgan",
            "scripts",
            "setup.py",
            "setup.cfg",
            "requirements.txt",
        ),
        held_out=True,
    ),
    # held out (round 32): PyTorch's own training platform (its recipes too), a parallel-training
    # system with its own accelerator layer (with its examples and tests), a sliced-inference
    # toolkit with its scripts, a forecasting model family with its scripts, a speech-recognition
    # pipeline, a pose-estimation library and a music separator, at first contact
    "torchtitan": Project(
        "torchtitan",
        "0.3.0",
        (
            "torchtitan-0.3.0.tar.gz",
            "6351b2dc6cdd8bdad15cd2ce5d9520e391a75b584770d2ebd925cc3321cd1b47",
        ),
        ("torchtitan", "torchtitan_recipes", "pyproject.toml"),
        held_out=True,
    ),
    "colossalai": Project(
        "colossalai",
        "0.5.0",
        (
            "colossalai-0.5.0.tar.gz",
            "883913dfd1165937f444f2673752475efdc63506c4bc3d00af33c7c8fac6d39d",
        ),
        ("colossalai", "examples", "tests", "requirements", "setup.py"),
        held_out=True,
    ),
    "sahi": Project(
        "sahi",
        "0.12.8",
        (
            "sahi-0.12.8.tar.gz",
            "f2074b3b3aa0f655dbdd69fbb1f1a0b985220f5fb3d920a4206eba160d37028a",
        ),
        ("sahi", "scripts", "tests", "pyproject.toml"),
        held_out=True,
    ),
    "chronos": Project(
        "chronos-forecasting",
        "2.3.2",
        (
            "chronos_forecasting-2.3.2.tar.gz",
            "910b0891310b74598a937bb9fe8447ea16393bcc2e1ad8d328c1f8099f909201",
        ),
        ("src/chronos=chronos", "scripts", "test", "pyproject.toml"),
        held_out=True,
    ),
    "whisperx": Project(
        "whisperx",
        "3.8.6",
        (
            "whisperx-3.8.6.tar.gz",
            "d647aecaa6c2f413bb924d722d925878ef300c99093ca49cd6cb7840bdbffe0e",
        ),
        ("whisperx", "tests", "pyproject.toml"),
        held_out=True,
    ),
    "mmpose": Project(
        "mmpose",
        "1.3.2",
        (
            "mmpose-1.3.2.tar.gz",
            "463df5a591b6cb351140f52a1a6a5e74d9182392d09b8e6bab1f471daca5a21f",
        ),
        ("mmpose", "requirements", "setup.cfg", "setup.py"),
        held_out=True,
    ),
    "openunmix": Project(
        "openunmix",
        "1.3.0",
        (
            "openunmix-1.3.0.tar.gz",
            "cc9245ce728700f5d0b72c67f01be4162777e617cdc47f9b035963afac180fc8",
        ),
        ("openunmix", "tests", "pyproject.toml"),
        held_out=True,
    ),
    # held out (round 33): a speech-recognition toolkit with its tests, NVIDIA's own model toolkit,
    # an image/video-editing library, an attribution library with its test helpers, an audio
    # toolkit, a source-separation library and a forecasting library with its tests
    "funasr": Project(
        "funasr",
        "1.4.16",
        (
            "funasr-1.4.16.tar.gz",
            "1e2f8e3887fbc4b164cce40f73bf1324907da6ab59d1e8bf2add827f534c69e7",
        ),
        ("funasr", "tests", "pyproject.toml", "setup.py"),
        held_out=True,
    ),
    "nemo": Project(
        "nemo_toolkit",
        "3.0.0",
        (
            "nemo_toolkit-3.0.0.tar.gz",
            "d4cf6d3fc3c3bf28b29efbdeb3d2a32ea2564a642269effd56d9b7a6fe087d91",
        ),
        ("nemo", "tests", "pyproject.toml", "setup.py"),
        held_out=True,
    ),
    "mmagic": Project(
        "mmagic",
        "1.2.0",
        (
            "mmagic-1.2.0.tar.gz",
            "5353aeb9edf28a2b4430ff6630c8d564782b7c1d0d632ae318089ba7b3b6af97",
        ),
        ("mmagic", "requirements", "setup.cfg", "setup.py"),
        held_out=True,
    ),
    "captum": Project(
        "captum",
        "0.9.0",
        (
            "captum-0.9.0.tar.gz",
            "e4868e22b68224f1a5355d2b7966803c021cf9fe5d893f51f587b4002a666b54",
        ),
        ("captum", "pyproject.toml", "setup.cfg"),
        held_out=True,
    ),
    "audiotools": Project(
        "descript-audiotools",
        "0.7.2",
        (
            "descript-audiotools-0.7.2.tar.gz",
            "2cdd363025c771b8acc53d5ef9ec77e34f92e182272c4be7fd0118a99b6a5e2a",
        ),
        ("audiotools", "tests", "setup.py"),
        held_out=True,
    ),
    "asteroid": Project(
        "asteroid",
        "0.7.0",
        (
            "asteroid-0.7.0.tar.gz",
            "0326f28c5342495cb08ba0520efd0e21e39435dfd78854837fdd5a6c9c9ca410",
        ),
        ("asteroid", "pyproject.toml", "setup.py"),
        held_out=True,
    ),
    "neuralforecast": Project(
        "neuralforecast",
        "3.3.0",
        (
            "neuralforecast-3.3.0.tar.gz",
            "73fbb9b8ba194c6f06e64d2f137855c98616af7f2488c7107abb05516a22ebe7",
        ),
        ("neuralforecast", "tests", "pyproject.toml"),
        held_out=True,
    ),
    # held out (round 34): an LLM fine-tuning CLI with its tests, a second one with its scripts and
    # tests, a robot-learning library, a fast fine-tuning library with its tests and CLI, a video
    # segmentation model with its training code, a translation toolkit and an LLM tuning toolkit
    "axolotl": Project(
        "axolotl",
        "0.19.0",
        (
            "axolotl-0.19.0.tar.gz",
            "136d623f04c909c5149d7f5dbd4a0e215014ab4c3617cce9d64010b5b8ca609d",
        ),
        ("src/axolotl=axolotl", "scripts", "tests", "pyproject.toml", "setup.cfg"),
        held_out=True,
    ),
    "llamafactory": Project(
        "llamafactory",
        "0.9.5",
        (
            "llamafactory-0.9.5.tar.gz",
            "1702c0bfb864e80577a59521d2edcacd2aab05ec6aee06188fcba335a589681f",
        ),
        (
            "src/llamafactory=llamafactory",
            "src/train.py=train.py",
            "scripts",
            "tests",
            "tests_v1",
            "pyproject.toml",
        ),
        held_out=True,
    ),
    "lerobot": Project(
        "lerobot",
        "0.4.4",
        (
            "lerobot-0.4.4.tar.gz",
            "50ad61441b1e1260010031406ca836a514af20ae1d2c0149892fe040380b1016",
        ),
        ("src/lerobot=lerobot", "tests", "pyproject.toml", "setup.py"),
        held_out=True,
    ),
    "unsloth": Project(
        "unsloth",
        "2026.3.4",
        (
            "unsloth-2026.3.4.tar.gz",
            "7b260d4a66fe492e63509ccfbd279c1f8824e26426433e38a603f119bc0c9054",
        ),
        ("unsloth", "unsloth-cli.py", "scripts", "tests", "pyproject.toml"),
        held_out=True,
    ),
    "sam2": Project(
        "sam2",
        "1.1.0",
        (
            "sam2-1.1.0.tar.gz",
            "7e0ea252d43c10d853e3acfce0b5770ac683c30481bd6de311300e9d44f45b74",
        ),
        ("sam2", "training", "pyproject.toml", "setup.py"),
        held_out=True,
    ),
    "opennmt": Project(
        "OpenNMT-py",
        "3.5.1",
        (
            "OpenNMT-py-3.5.1.tar.gz",
            "8af6693ff0be0623683a5a9773b8d55b377fc14073f4897b6e6de3d482d338b2",
        ),
        ("onmt", "setup.py"),
        held_out=True,
    ),
    "xtuner": Project(
        "xtuner",
        "0.2.0",
        (
            "xtuner-0.2.0.tar.gz",
            "bcb5e28116e7ac9474bcd71ba8e1c9cc95256ee8a2f6831818985c0d20b68440",
        ),
        ("xtuner", "setup.py"),
        held_out=True,
    ),
}
