# Two commands do everything on a fresh machine (Python 3.10+):
#   make course [SMOKE=1]   set up .venv if needed, execute every lesson, print a summary
#   make test               set up .venv if needed, run the whole test suite
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.course-installed
SMOKE ?=
TIMEOUT ?= 900
PYTEST_ARGS ?=

.PHONY: course test install sync exercises lint clean gpu-check

$(PY):
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else "Python 3.10 or newer is needed; run make PYTHON=python3.11 ...")'
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

# Reinstalls only when the dependencies change; a second `make` installs nothing.
$(STAMP): pyproject.toml course_utils/install.py | $(PY)
	$(PY) course_utils/install.py
	$(PY) -m pip install -q -e ".[dev]"
	@touch $(STAMP)

install: $(STAMP)

course: install
	$(VENV)/bin/course run --timeout $(TIMEOUT) $(if $(filter 1 true yes,$(SMOKE)),--smoke)

# Unit tests, lint, pairing checks, then every lesson and master notebook under nbval
# (errors only: outputs are not committed) and the student notebooks (see tests/).
test: install
	COURSE_SMOKE=1 $(PY) -m pytest -n 2 --dist loadfile --nbval-lax --nbval-cell-timeout=600 \
		tests notebooks solutions $(PYTEST_ARGS)

sync: install
	$(VENV)/bin/course sync
	$(VENV)/bin/course build-exercises

lint: install
	$(VENV)/bin/ruff check .

clean:
	rm -rf build .pytest_cache

# On a GPU or TPU machine: install the course keeping the installed torch and jax, then
# doctor, every lesson (smoke, then full), the notebook tests and claims; one JSON report
# in build/device-check/report.json. Options: make gpu-check CHECK_ARGS="--budget 600".
CHECK_ARGS ?=
gpu-check: | $(PY)
	$(PY) -m course_utils.cli check-device $(CHECK_ARGS)
