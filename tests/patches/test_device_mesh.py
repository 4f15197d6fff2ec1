"""``init_device_mesh("cuda", ...)``: the mesh's device type is a device-type argument (round
22, from a held-out project's tensor-parallel examples). In a script with no ``device``, the
script's own device line (a type string: the accelerator's, else "cpu") is the mesh's type too,
so the script no longer hands a stray ``"cuda"`` and gets its plan; in a function with a
``device_type`` or ``device`` in scope, that one. Look-alikes stay: a CPU mesh, a type already
neutral, a function with no device in scope. The ported script runs on the CPU
(``test_cpu_ports``' SCRIPTS has it, with the trn comparison)."""

from __future__ import annotations

import shutil
from pathlib import Path

from patches.common import gitutil
from patches.generate.cli import main

FIXTURES = Path(__file__).with_name("fixtures")
SCRIPT = FIXTURES / "script_ddp" / "device_mesh_script.py"
LIB = FIXTURES / "device_mesh" / "mesh_lib.py"


def _port(tmp_path: Path, *files: Path) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    for f in files:
        shutil.copy(f, src / f.name)
    repo = gitutil.init_copy(src, tmp_path / "repo")
    assert main([str(repo), "--apply", "--unsafe-fixes"]) in (0, 1)
    return repo


def test_a_tensor_parallel_script_gets_its_device_line(tmp_path):
    ported = (_port(tmp_path, SCRIPT) / SCRIPT.name).read_text()
    assert (
        'torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"'
        in ported
    )
    assert "mesh = init_device_mesh(device, (world_size,))" in ported
    assert "TwoLayers().to(device)" in ported and "torch.ones(3, 4).to(device)" in ported
    assert '"cuda"' not in ported and "torch.cuda" not in ported


def test_library_meshes_take_the_type_in_scope_and_look_alikes_stay(tmp_path):
    ported = (_port(tmp_path, LIB) / LIB.name).read_text()
    fns = {b.split("(")[0]: b for b in ported.split("\ndef ")[1:]}
    assert "init_device_mesh(device_type, (world_size,))" in fns["mesh_of_type"]
    # black's layout at 88, which the file has (its docstring is longer): the call is wrapped
    assert 'init_device_mesh(torch.device(device).type,(world_size,),mesh_dim_names=("dp",))' in (
        "".join(fns["mesh_of_device"].split())
    )
    assert 'init_device_mesh("cpu", (world_size,))' in fns["cpu_mesh"]
    assert "device_type=device_type" in fns["named_mesh"]
    assert 'init_device_mesh("cuda", (world_size,))' in fns["no_device_mesh"]
    # an offload target is the host: no device type to take from it (thunder, round 36)
    assert 'init_device_mesh("cuda", (world_size,))' in fns["offloaded_state"]
