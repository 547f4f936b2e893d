# The two Quick start commands (README): `make demo` and `make test`. Both set up .venv first.
# torch==2.13.0 is installed on its own before the extras: it is the CPU build that lies on
# this machine; letting stable-baselines3 pull torch itself would download a multi-GB CUDA build.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: setup demo test test-all lint bench clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/uno-mk demo

test: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m pytest -n 2 -q

test-all: $(STAMP)
	$(PY) -m pytest -n 2 -q -m ""

bench: $(STAMP)
	$(PY) -m pip install --quiet -e '.[bench]'
	$(PY) -m benchmarks.engine_speed
	$(PY) -m benchmarks.env_speed

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
