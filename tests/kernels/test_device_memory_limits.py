"""The device's limits decide, not the host's (issue 12 part 2).

Each case runs in a fresh interpreter: the capacity comes from the environment at registration,
and an address-space limit (`ulimit -v`, set with setrlimit after torch is imported) must not
leak into this process.
"""

from __future__ import annotations

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GiB = 1 << 30

PRELUDE = """
import resource, torch, kernels.trn
def limit_address_space(extra):  # `ulimit -v`: current size + extra
    with open('/proc/self/status') as f:
        vm = next(int(l.split()[1]) * 1024 for l in f if l.startswith('VmSize:'))
    resource.setrlimit(resource.RLIMIT_AS, (vm + extra, vm + extra))
def try_alloc(nbytes):
    try:
        torch.empty(nbytes, dtype=torch.uint8, device='trn')
    except torch.OutOfMemoryError as e:
        print('OOM', e)
    else:
        print('allocated')
def still_usable():
    x = torch.arange(6.0, device='trn').reshape(2, 3)
    total = (x @ x.T).sum().item()
    del x
    print('usable', total, torch.trn.memory_allocated(0))
"""


def _run(code: str, **env) -> list[str]:
    full = {k: v for k, v in os.environ.items() if k not in ("HN_TRN", "HN_TRN_NAME")}
    full.update(env)
    r = subprocess.run(
        [sys.executable, "-c", PRELUDE + code],
        cwd=ROOT,
        env=full,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    return r.stdout.splitlines()


def test_a_request_above_hbm_fails_on_the_device_before_touching_the_host():
    # trn2: 24 GiB per core. With 1 GiB of address space left, a host allocation of 25 GiB
    # would fail in the host allocator; the device must refuse first.
    out = _run(
        "limit_address_space(1 << 30)\n"
        "try_alloc(25 * (1 << 30))\n"
        "still_usable()\n"
        "print('peak', torch.trn.max_memory_allocated(0), torch.trn.memory_stats(0)['num_ooms'])\n",
        HN_TRN_PRESET="trn2",
    )
    assert out[0].startswith("OOM trn:0 out of memory: tried to allocate 26843545600 bytes; ")
    assert "bytes free of 25769803776 total" in out[0]
    assert out[1] == "usable 83.0 0"
    assert out[2].split()[2] == "1"


def test_a_host_allocation_failure_is_out_of_memory_naming_the_host():
    # the device would accept 4 GiB (64 GiB of HBM); the host (1 GiB of address space) cannot
    out = _run(
        "limit_address_space(1 << 30)\n"
        "try_alloc(4 * (1 << 30))\n"
        "still_usable()\n"
        "print('peak', torch.trn.max_memory_allocated(0))\n",
        HN_TRN_HBM_BYTES="64GiB",
    )
    assert out[0].startswith("OOM trn:0 out of memory: tried to allocate 4294967296 bytes, which")
    assert "the host RAM that backs trn memory ran out" in out[0]
    assert out[0].endswith("Nothing was allocated; the device stays usable.")
    assert out[1] == "usable 83.0 0"
    assert int(out[2].split()[1]) < GiB  # the refused request never counted as allocated


def _mem_available() -> int:
    with open("/proc/meminfo") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith("MemAvailable:"))


def test_an_accepted_allocation_is_backed_by_host_memory():
    """Host memory is lazily backed: malloc of more than the host has succeeds and the OOM
    killer strikes when the pages are touched. The device refuses such a request up front.
    (torch.empty touches nothing, so this test is safe on a shared box even when it fails.)"""
    avail = _mem_available()
    out = _run(
        f"try_alloc({avail + 2 * GiB})\nstill_usable()\n",
        HN_TRN_HBM_BYTES=str(4 * (avail + 2 * GiB)),
    )
    assert out[0].startswith("OOM trn:0 out of memory: ") and "host RAM" in out[0], out
    assert "request above available" in out[0]
    assert out[1] == "usable 83.0 0"
