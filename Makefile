# Two commands do everything on a fresh machine (Python 3.11+):
#   make course [SMOKE=1]   set up .venv if needed, execute every lesson, print a summary
#   make test               set up .venv if needed, run the whole test suite
#   make site [SMOKE=1]     execute every lesson, then build the website in build/site/
# Both install the known-good versions (constraints/known-good.txt); LATEST=1 takes the
# latest releases instead. `make test-versions SET=colab|floors|latest|known-good` runs
# the smoke suite in .venv-SET with that version set (see docs/VERSIONS.md).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
SMOKE ?=
TIMEOUT ?= 900
PYTEST_ARGS ?=
LATEST ?=
CONSTRAINTS ?= $(if $(filter 1 true yes,$(LATEST)),,constraints/known-good.txt)
SET ?= known-good
TORCH_TEST_INDEX := https://download.pytorch.org/whl/test/cpu

.PHONY: course site site-check test test-fast test-lesson timing-check install sync exercises lint clean gpu-check device-wheels test-versions constraints forward-check

$(PY):
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python 3.11 or newer is needed (jax 0.7 and later); run make PYTHON=python3.11 ...")'
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

# Which version set the venv holds is in the stamp's name, so that switching sets
# (LATEST=1, CONSTRAINTS=..., COURSE_TORCH_VERSION=..., PIP_PRE=1) reinstalls and nothing else does
# (a file rewritten on a change would do it by modification time, which a fast make can
# leave equal to the stamp's).
INSTALL_SET := $(or $(CONSTRAINTS),latest) torch=$(COURSE_TORCH_VERSION) pre=$(PIP_PRE)
STAMP := $(VENV)/.course-installed-$(word 1,$(shell printf '%s' '$(INSTALL_SET)' | cksum))

# Reinstalls only when the dependencies or the version set change; a second `make`
# installs nothing. install/frameworks.py installs torch (the build for this machine's GPU, TPU
# or CPU) and later jax's accelerator plugin at the installed jax version; the version
# set constrains everything else. The set's torch line is left to install/frameworks.py, and the
# installed torch is pinned so that no step replaces it. The `kernels` extra (Triton, for
# lesson 10; Linux x86_64 only) costs a few seconds here; elsewhere lesson 10 skips its
# Triton cells and says why.
$(STAMP): pyproject.toml course_utils/install/frameworks.py binder/overrides.json $(CONSTRAINTS) | $(PY)
	@rm -f $(VENV)/.course-installed*
	$(PY) course_utils/install/frameworks.py torch
	@{ $(if $(CONSTRAINTS),grep -Ev '^torch[[:space:]]*[=<>~!]' $(CONSTRAINTS);) \
	  $(PY) -c 'import importlib.metadata as m; print("torch==" + m.version("torch"))'; \
	} > $(VENV)/constraints.txt
	$(PY) -m pip install -q $(if $(CONSTRAINTS),,--upgrade --upgrade-strategy eager) \
		-e ".[dev,site,kernels]" -c $(VENV)/constraints.txt
	$(PY) course_utils/install/frameworks.py jax -c $(VENV)/constraints.txt
	@# JupyterLab's defaults for this course: no news pop-up, no kernel dialog
	mkdir -p $(VENV)/share/jupyter/lab/settings
	cp binder/overrides.json $(VENV)/share/jupyter/lab/settings/overrides.json
	@touch $(STAMP)

install: $(STAMP)

course: install
	$(VENV)/bin/course run --timeout $(TIMEOUT) $(if $(filter 1 true yes,$(SMOKE)),--smoke)

# The course as a website (docs/SITE.md): every lesson executed (full mode; SMOKE=1 for
# the fast run), then `course site --pdf` builds build/site/ from the executed copies in
# build/executed/ (it never runs a lesson itself) and has chromium print the home page and
# every lesson into build/site/course.pdf. Open build/site/index.html.
# `make site-check` then runs axe-core on every page of it, in light and dark mode.
site: course
	$(VENV)/bin/course site --pdf

site-check:
	$(PY) -m tests.tooling.site.a11y build/site

# Unit tests, lint, pairing checks, then every lesson notebook under nbval (errors only:
# outputs are not committed), every master run once in a kernel with its wrong answers
# replayed (tests/notebooks/test_masters.py) and the student notebooks (tests/README.md).
# pytest's own exit status lands in build/pytest-rc (make itself exits 2 on any failure),
# so that .ci/run can tell "no tests collected" (5) from failures.
# The timing ratios (tests/test_timing_check.py) need a quiet machine: `make timing-check`
# runs them alone, after this (.ci/run does both).
# Every process of the run (kernels, child processes) shares one JAX persistent cache,
# build/jax-cache-run, emptied at the start: a master's visible test compiles the same
# programs for each wrong answer it replays, and the cache serves them after the first.
# Files run whole on each worker, longest first (tests/durations.json; refresh it with
# PYTEST_ARGS=--durations-table=tests/durations.json), so that both workers end together.
DIST := -n 2 --dist loadfile --no-loadscope-reorder
# The suites keep Python's compiled bytecode (__pycache__, ignored by git) even where the
# shell sets PYTHONDONTWRITEBYTECODE: hundreds of processes import the course's modules, and
# pytest rewrites the asserts of every test file, which its cache then serves.
TEST_ENV := env -u PYTHONDONTWRITEBYTECODE COURSE_SMOKE=1
test: install
	@mkdir -p build
	rc=0; $(TEST_ENV) $(PY) -m pytest $(DIST) --nbval-lax --nbval-cell-timeout=600 --nbval-kernel-startup-timeout=300 \
		--jax-cache-shared build/jax-cache-run --ignore=tests/test_timing_check.py tests notebooks $(PYTEST_ARGS) || rc=$$?; echo $$rc > build/pytest-rc; exit $$rc

# One lesson, N=03: the lesson under nbval, its master with its wrong answers, its student
# notebook, and the quick checks that keep the notebooks and the Chinese edition in step
# (tests/notebooks/select_lesson.py). What a change to one lesson needs, in about a minute.
N ?=
test-lesson: install
	@mkdir -p build
	$(TEST_ENV) $(PY) -m tests.notebooks.select_lesson "$(N)" $(DIST) --nbval-lax --nbval-cell-timeout=600 \
		--nbval-kernel-startup-timeout=300 --jax-cache-shared build/jax-cache-lesson $(PYTEST_ARGS)

# The fast inner loop: everything but notebook executions (lessons, masters, student
# notebooks, the wrong answers replayed in masters), slow subprocess tests, the browser and
# the Slurm cluster. `make test` runs all of it. The programs JAX compiles in the test
# processes are kept in build/jax-cache, so a second run skips most compiles.
test-fast: install
	@mkdir -p build
	$(TEST_ENV) $(PY) -m pytest $(DIST) -q -m "not notebooks and not slow and not browser and not slurm" \
		--jax-cache build/jax-cache tests $(PYTEST_ARGS)

# The smoke suite in .venv-SET on one version set: known-good, latest, colab or floors
# (constraints/SET.txt), or pre: the latest with pre-releases (pip's PIP_PRE; torch's
# release candidates from PyTorch's test channel), which .github/workflows/prerelease.yml runs daily. Python comes from PYTHON, torch from install/frameworks.py
# (COURSE_TORCH_VERSION, default 2.13.0); the junit XML goes to build/junit-SET.xml.
# Timing ratios need a quiet machine: run alone, after the suite (.ci/run does).
timing-check: install
	$(PY) -m pytest -p no:cacheprovider -q tests/test_timing_check.py

test-versions:
	@test "$(SET)" = latest || test "$(SET)" = pre || test -f constraints/$(SET).txt || { \
	  echo "make test-versions: unknown SET=$(SET); one of: latest pre $(filter-out generate,$(basename $(notdir $(wildcard constraints/*))))" >&2; exit 2; }
	$(if $(filter pre,$(SET)),PIP_PRE=1 COURSE_TORCH_CPU_INDEX=$(TORCH_TEST_INDEX)) \
	COURSE_VERSION_SET=$(SET) $(MAKE) test VENV=.venv-$(SET) \
		$(if $(filter latest pre,$(SET)),LATEST=1 CONSTRAINTS=,CONSTRAINTS=constraints/$(SET).txt) \
		PYTEST_ARGS="--junitxml=build/junit-$(SET).xml $(PYTEST_ARGS)"

# The course against the newest jax, flax, optax, orbax-checkpoint and torch, read from
# their wheels for Python 3.13 without installing them (docs/VERSIONS.md, "The forward
# check"). Downloads are cached in build/forward/; FORWARD_ARGS=--offline reads only
# that, FORWARD_ARGS="--pin jax==0.12.1" takes a given release.
FORWARD_ARGS ?=
forward-check: install
	$(VENV)/bin/course forward-check $(FORWARD_ARGS)

# After a passing `make test` (or `make test LATEST=1`): pin what passed, and turn
# pyproject.toml's floors into constraints/floors.txt. Needs only the venv's pip.
constraints:
	$(PY) constraints/generate.py known-good --python $(PY)
	$(PY) constraints/generate.py floors

sync: install
	$(VENV)/bin/course sync
	$(VENV)/bin/course build-exercises

lint: install
	$(VENV)/bin/ruff check .

clean:
	rm -rf build .pytest_cache

# On a GPU or TPU machine: install the course keeping the installed torch and jax, then
# doctor, every lesson (smoke and full), the masters, the student notebooks, the notebook
# tests and claims side by side; one JSON report in build/device-check/report.json.
# Options: make gpu-check CHECK_ARGS="--budget 600"; the schedule only: CHECK_ARGS="--plan".
CHECK_ARGS ?=
gpu-check: | $(PY)
	$(PY) -m course_utils.cli check-device $(CHECK_ARGS)

# Wheels for a prepared GPU machine without network (Python 3.12, its own jax and torch):
# what the course needs beyond what such a machine has (docs/DEVICE_CHECK.md).
DEVICE_WHEELS ?= build/device-wheels
device-wheels: | $(PY)
	$(PY) -m course_utils.tooling.device_check.wheels $(DEVICE_WHEELS)
