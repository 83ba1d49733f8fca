# Two commands do all set-up on a fresh machine: `make demo` and `make test`.
# Both create (or reuse) .venv and install what they need, Debian packages included.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
CORE   := $(VENV)/.installed-core
DEV    := $(VENV)/.installed-dev
PYTEST_ARGS ?=
# MuJoCo renders offscreen through EGL (Mesa's software renderer on machines without a GPU).
export MUJOCO_GL ?= egl

.PHONY: demo test test-fast test-lowest bench lint system-deps clean

$(PY):
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "robojudge needs Python >= 3.11, found " + sys.version.split()[0]'
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# The demo needs the simulator extra (the demo suite is rendered by MuJoCo).
# gym-aloha ships the ALOHA ViperX scene files (Apache-2.0); its wheel pins mujoco<3.9 and pulls
# dm-control, which the scene files do not need, so it goes in with --no-deps.
ALOHA_PIN := gym-aloha==0.1.5

# constraints.txt pins the libraries metric values are computed through (OpenCV, PyAV/FFmpeg, NumPy,
# SciPy, scikit-image) to the versions tested here.
CONSTRAINTS := -c constraints.txt

$(CORE): pyproject.toml constraints.txt | $(PY)
	$(PY) -m pip install --quiet $(CONSTRAINTS) -e ".[sim]"
	$(PY) -m pip install --quiet --no-deps $(ALOHA_PIN)
	@touch $@

# The tests exercise the model-backed code paths with tiny random networks, so they need torch.
# These pins are the builds on this machine's disk (a plain `torch` would download a CUDA build).
TORCH_PINS := torch==2.14.1 torchvision==0.29.1

# Depth Anything 3's wheel declares dependencies its network does not use (numpy<2, xformers, open3d):
# its network's own imports come from the `da3` extra, and the wheel goes in with --no-deps.
DA3_PIN := depth-anything-3==0.1.1

$(DEV): pyproject.toml constraints.txt | $(PY)
	$(PY) -m pip install --quiet $(CONSTRAINTS) $(TORCH_PINS)
	$(PY) -m pip install --quiet $(CONSTRAINTS) -e ".[dev,sim,torch,iqa,da3,ray,web,train]"
	$(PY) -m pip install --quiet --no-deps $(DA3_PIN) $(ALOHA_PIN)
	@touch $@ $(CORE)

# The demo trains KIVA's keypoint reader (robojudge.kiva), which needs torch and nothing else of the torch
# extra: the tests' torch pin, so `make demo` and `make test` share one build.
KIVA_DEPS := $(VENV)/.installed-kiva

$(KIVA_DEPS): $(CORE)
	$(PY) -m pip install --quiet $(CONSTRAINTS) $(filter torch==%,$(TORCH_PINS))
	@touch $@

## Score the embedded demo suite (KIVA included); the report lands in runs/demo/report/.
demo: $(CORE) $(KIVA_DEPS)
	@bash scripts/system-deps.sh demo
	$(VENV)/bin/robojudge demo --out runs/demo

## Debian packages the tests need (PostgreSQL for the store tests, Mesa EGL for MuJoCo rendering).
system-deps:
	@bash scripts/system-deps.sh test

# Two pytest-xdist worker processes (CI has 2 cores); each test file runs whole on one worker (see
# tests/conftest.py). PYTEST_WORKERS=0 runs everything in one process.
PYTEST_WORKERS ?= 2
XDIST := -n $(PYTEST_WORKERS) --dist loadfile

## Run the whole test suite (slow tests included), starting what it needs.
test: $(DEV) system-deps
	$(PY) -m pytest $(XDIST) $(PYTEST_ARGS)

## The quick loop for development: skips tests marked slow.
test-fast: $(DEV) system-deps
	$(PY) -m pytest -m "not slow" $(XDIST) $(PYTEST_ARGS)

# The lowest versions pyproject.toml allows (constraints-lowest.txt pins its core and dev lower bounds), in
# a venv of their own on Python 3.11, the lowest Python it allows. Neither `make test` nor CI runs this
# (CI time is limited): run it when a lower bound or constraints-lowest.txt changes. LOWEST_TESTS goes
# through the libraries whose versions matter: PyAV (video), OpenCV, scikit-image and SciPy (metrics),
# NumPy, SciPy and krippendorff (meta), pandas, pyarrow, SQLAlchemy and psycopg (aggregate, store),
# matplotlib and rich (report), pydantic (manifests) and aiohttp (the judges' HTTP client).
LOWEST_PYTHON ?= python3.11
LOWEST_VENV   := .venv-lowest
LOWEST        := $(LOWEST_VENV)/.installed-lowest
LOWEST_TESTS  ?= tests/test_dependency_bounds.py tests/video tests/suite tests/aggregate \
	tests/metrics/test_functional.py tests/metrics/test_metrics_robophys_reference.py \
	tests/metrics/test_pixel.py tests/metrics/test_flow.py tests/metrics/test_text_metrics.py \
	tests/metrics/test_degenerate_inputs.py tests/meta/test_meta_bootstrap.py \
	tests/meta/test_meta_agreement.py tests/meta/test_meta_calibrated.py tests/meta/test_meta_raters.py \
	tests/store/test_store_export.py tests/store/test_store_import.py tests/report/test_report_tables.py \
	tests/report/test_report_plots.py tests/report/test_report_plot_labels.py \
	tests/report/test_report_libraries.py tests/judges/test_judge_http.py

# Built afresh whenever either file changes, so no release of an earlier install stays behind.
$(LOWEST): pyproject.toml constraints-lowest.txt
	@$(LOWEST_PYTHON) -c 'import sys; assert sys.version_info[:2] == (3, 11), "constraints-lowest.txt is for Python 3.11 (psycopg-binary 3.1.4 has no wheel for a later one): set LOWEST_PYTHON; found " + sys.version.split()[0]'
	rm -rf $(LOWEST_VENV)
	$(LOWEST_PYTHON) -m venv $(LOWEST_VENV)
	$(LOWEST_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(LOWEST_VENV)/bin/python -m pip install --quiet -c constraints-lowest.txt -e ".[dev]"
	@touch $@

## A fast subset of the tests with the lowest versions pyproject.toml allows, in .venv-lowest.
test-lowest: $(LOWEST) system-deps
	$(LOWEST_VENV)/bin/python -m pytest -m "not slow" $(XDIST) $(PYTEST_ARGS) $(LOWEST_TESTS)

## Benchmarks (not tests): frame sampling against ffmpeg and a naive decoder, the bootstrap.
bench: $(DEV)
	@bash scripts/system-deps.sh bench
	$(PY) benchmarks/bench_sample_frames.py
	$(PY) benchmarks/bench_bootstrap.py

lint: $(DEV)
	$(VENV)/bin/ruff check src tests benchmarks
	$(VENV)/bin/mypy

clean:
	rm -rf runs/demo .pytest_cache
