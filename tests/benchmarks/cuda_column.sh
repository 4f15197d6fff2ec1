#!/usr/bin/env bash
# The cuda column, on a machine with a CUDA GPU (CI has none): what the CPU-only runs can only
# argue, checked on the GPU. From the repository root:
#
#     bash tests/benchmarks/cuda_column.sh OUT [TEST_ROOT]
#
# 1. the scripts people run (tests/patches/fixtures/corpus), ported by patches.generate: on CUDA
#    each gives its original's losses on the same device, and autoport changes nothing; and the
#    CPU ports' scripts (tests/patches/test_cpu_ports.py) print what their originals print (bit 1);
# 2. the conformance matrix's smoke subset, devices cpu and cuda (bit 4);
# 3. `patches.prove` on the installed torch, devices cpu and cuda (bit 2; TEST_ROOT: upstream's
#    test files, default ../shared/upstream/pytorch-tests; XDIST: its -n, default 0: its runs hold
#    10-22 tests each, where xdist workers cost more than they save; docs/validation.md,
#    "Workers on a many-core machine").
# Each step's limit in seconds: T_SCRIPTS, T_MATRIX, T_PROVE. Logs and outputs go to OUT; exit
# status: 0 when every step passed, else the failed steps' bits, 8 when there is no CUDA device.
# docs/validation.md, "The cuda column, on a GPU".
set -u
OUT=${1:?usage: cuda_column.sh OUT [TEST_ROOT]}
TESTS=${2:-../shared/upstream/pytorch-tests}
PY=${PY:-python3}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
"$PY" -c 'import sys, torch
ok = torch.cuda.is_available()
print("torch", torch.__version__, "cuda", torch.version.cuda, ok and torch.cuda.get_device_name())
sys.exit(0 if ok else 8)' >"$OUT/device.txt" 2>&1
ready=$?
cat "$OUT/device.txt"
[ $ready -eq 0 ] || exit 8

step() {  # step BIT SECONDS NAME COMMAND...
  local bit=$1 limit=$2 name=$3 start=$SECONDS
  shift 3
  timeout "$limit" "$@" >"$OUT/$name.log" 2>&1
  local rc=$?
  echo "$name: exit $rc in $((SECONDS - start)) s" | tee -a "$OUT/steps.txt"
  [ $rc -eq 0 ] || status=$((status | bit))
}
status=0
step 1 "${T_SCRIPTS:-600}" scripts "$PY" -m pytest -q -s -p no:cacheprovider \
  tests/patches/test_scripts_e2e.py::test_on_cuda_the_ported_scripts_and_autoport_change_nothing \
  tests/patches/test_cpu_ports.py::test_on_cuda_each_port_prints_what_its_original_prints
# a skip (or nothing collected) exits 0 too: the step passes only when both tests passed
if ! grep -q "2 passed" "$OUT/scripts.log"; then
  echo "scripts: the test did not pass (skipped or not collected)" | tee -a "$OUT/steps.txt"
  status=$((status | 1))
fi
step 4 "${T_MATRIX:-300}" matrix "$PY" -m patches.matrix --devices cpu,cuda --out "$OUT/matrix"
step 2 "${T_PROVE:-600}" prove "$PY" -m patches.prove --devices cpu,cuda --test-root "$TESTS" \
  --out "$OUT/prove" --reproducible -n "${XDIST:-0}"
exit $status
