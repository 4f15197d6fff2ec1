# Two commands for a newcomer: `make run` and `make test`. Both create .venv when missing and
# install the pinned CPU torch wheel first (constraints.txt), then the project.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.hwneutral-installed
ARGS   ?=

.PHONY: install run test lint bench docs prove replay clean

$(STAMP): pyproject.toml constraints.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -c constraints.txt torch==2.13.0
	$(PY) -m pip install -q --disable-pip-version-check -c constraints.txt -e '.[test]'
	@touch $(STAMP)

# The venv with torch (pinned CPU build) and the project, nothing else (CI jobs that only run tools).
install: $(STAMP)

# The main job on its embedded default: audit the installed PyTorch's own source tree.
run: $(STAMP)
	$(PY) -m audits.scan $(ARGS)

# Two pytest runs: registering the `trn` PrivateUse1 device changes torch.accelerator for the
# whole process, so tests that need it in-process live in tests/kernels and run on their own.
# The first run spreads its test modules over JOBS pytest-xdist worker processes (--dist
# loadscope: a module's tests stay on one worker, so a module-scoped fixture is built once). CI
# has 2 cores; that run mostly waits on subprocesses, so 2 workers halve its wall time (docs/ci.md,
# "Test time"). tests/kernels stays in one process (its device tests share one registered trn),
# which keeps one core: it runs beside the first run, its output kept in KLOG and printed after.
# JOBS=0 runs everything in-process, one run after the other (for --pdb).
JOBS ?= 2
KLOG := .pytest-kernels.log
test: $(STAMP) lint
	@rm -f $(KLOG) $(KLOG).rc; k=0; \
	if [ -d tests/kernels ] && [ "$(JOBS)" != 0 ]; then \
	  echo "tests/kernels runs beside the first run (its output follows it)"; \
	  ($(PY) -m pytest -q -p no:cacheprovider tests/kernels $(ARGS) > $(KLOG) 2>&1; \
	   echo $$? > $(KLOG).rc) & \
	fi; \
	$(PY) -m pytest -q -n $(JOBS) --dist loadscope --ignore=tests/kernels $(ARGS); m=$$?; \
	wait; \
	if [ -f $(KLOG).rc ]; then cat $(KLOG); k=$$(cat $(KLOG).rc); rm -f $(KLOG).rc; \
	elif [ -d tests/kernels ]; then $(PY) -m pytest -q tests/kernels $(ARGS); k=$$?; fi; \
	if [ $$m -ne 0 ]; then exit $$m; fi; exit $$k

# ruff (configured in pyproject.toml): lint and formatting are part of the test run.
lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

# Prove generated series on PyTorch's own code with upstream's own tests (docs/validation.md):
# one PR bundle per subsystem of patches/prove/subsystems.yaml in OUT, plus OUT/SUMMARY.md.
OUT ?= prove-out
prove: $(STAMP)
	$(PY) -m patches.prove --out $(OUT) $(ARGS)

# Replay PyTorch's own neutralisation 2.4.1 -> 2.13.0 (docs/replay.md): pip downloads both torch
# wheels into ~/.cache/hwneutral (no install); generate runs on the labelled 2.4.1 files and every
# label is scored.  make replay ARGS="--mode unsafe --files 'torch/nn/*' --json out.json"
replay: $(STAMP)
	$(PY) tests/benchmarks/replay.py $(ARGS)
# The unseen pair 2.13.0 -> 2.14.1 (docs/replay.md, "A second pair, drafted"): draft its labels
# (1-2 min; the list holds torch source, so it stays in the cache, never in the project), then score:
#   .venv/bin/python tests/benchmarks/replay_label.py --old 2.13.0 --new 2.14.1 --out ~/.cache/hwneutral/replay/labels_2.13.0_2.14.1.yaml
#   make replay ARGS="--labels ~/.cache/hwneutral/replay/labels_2.13.0_2.14.1.yaml"
# and which of the tuned pair's kept-site rewrites upstream made in a later release (one --later
# per pair, in order; the third pair's wheel is past this machine's pip cap: docs/replay.md, round 13):
#   make replay ARGS="--later ~/.cache/hwneutral/replay/labels_2.13.0_2.14.1.yaml --later ~/.cache/hwneutral/replay/labels_2.14.1_2.15.0.yaml"

bench: $(STAMP)
	@for b in tests/benchmarks/bench_*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

# An upstream device-generic test file on cpu and trn, compared test by test (patches.matrix.upstream):
#   make upstream-compare FILES="../shared/upstream/pytorch-tests/test_dlpack.py" [K=expr] [DEVICE=trn]
FILES  ?= $(wildcard ../shared/upstream/pytorch-tests/test_*.py)
DEVICE ?= trn
upstream-compare: $(STAMP)
	$(PY) -m patches.matrix.upstream $(FILES) --device $(DEVICE) $(if $(K),-k "$(K)")

docs: $(STAMP)
	$(PY) -m audits.docs_gen

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
