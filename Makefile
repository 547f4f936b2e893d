# The two Quick start commands (README): `make demo` and `make test`. Both set up .venv first,
# each with only what it needs: a stamp file per installed extra, redone when pyproject.toml
# changes. CI (.ci/run) runs `make test` itself: the test extra brings all the tests import.
#
# torch: `make setup` installs torch==2.13.0 on its own before the test extra. On the
# maintainers' machines pip finds the CPU build of it locally. On an ordinary Linux machine that
# line downloads the CUDA build from PyPI (several GB): to get the CPU-only build, install it into
# .venv first from the PyTorch project's CPU wheel index, and that line keeps it:
#   python3 -m venv .venv
#   .venv/bin/python -m pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
EVAL_STAMP := $(VENV)/.installed-eval
DOCS_STAMP := $(VENV)/.installed-docs

.PHONY: setup demo test test-all test-python-engine typecheck lint bench docs docs-deps clean

# The editable install warns (setuptools' "Editable installation" box) because the repository's
# agents/, training/, evaluation/, cli/ and models/ folders map onto subpackages of uno_mk_env
# ([tool.setuptools.package-dir]), which only a meta path finder can serve. The cause goes when
# those folders move into uno_mk_env/; until then this one information box is filtered, here only.
PIP_E := PYTHONWARNINGS="ignore:Editable installation" $(PY) -m pip install --quiet -e
# Material for MkDocs prints an end-of-life banner on every build; its own switch turns it off.
export NO_MKDOCS_2_WARNING := 1

setup: $(STAMP)

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# The test extra (it includes train, env, eval and render): what `make test` and CI need.
$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet torch==2.13.0
	$(PIP_E) '.[test]'
	touch $(STAMP)

# The eval extra alone (scipy, matplotlib, tqdm, rich): all `uno-mk demo` imports; no torch.
$(EVAL_STAMP): pyproject.toml | $(PY)
	$(PIP_E) '.[eval]'
	touch $(EVAL_STAMP)

# The docs extra (MkDocs, Material, mkdocstrings): the site reads the code, never imports it.
$(DOCS_STAMP): pyproject.toml | $(PY)
	$(PIP_E) '.[docs]'
	touch $(DOCS_STAMP)

demo: $(EVAL_STAMP)
	$(VENV)/bin/uno-mk demo

test: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m pytest -n 2 -q

test-all: $(STAMP)
	$(PY) -m pytest -n 2 -q -m ""

# The core suite again on the pure-Python engine (UNO_MK_ENGINE=python: the compiled core off),
# so both engines pass it: the rules, the envs, the agents, tournaments and the training envs.
CORE_TESTS := tests/test_rules_*.py tests/test_engine_*.py tests/test_legality.py \
	tests/test_observation.py tests/test_golden.py tests/test_state_dict.py tests/test_rewards.py \
	tests/test_cards_actions.py tests/test_env.py tests/test_gym_env.py tests/test_vector.py \
	tests/test_vector_twins.py tests/test_openspiel.py tests/test_openspiel_chance.py \
	tests/test_agents.py tests/test_agent_conformance.py tests/test_ismcts.py \
	tests/test_tournament.py tests/test_evaluate.py tests/test_training_envs.py tests/test_ppo_fast.py
test-python-engine: $(STAMP)
	UNO_MK_ENGINE=python $(PY) -m pytest -n 2 -q $(CORE_TESTS)

# mypy on the package as installed ([tool.mypy] in pyproject.toml; tools/typecheck.py).
typecheck: $(STAMP)
	$(PY) tools/typecheck.py

bench: $(STAMP)
	$(PIP_E) '.[bench]'
	$(PY) -m benchmarks.engine_speed
	$(PY) -m benchmarks.env_speed

# The documentation site, into site/ (mkdocs.yml); --strict: a broken link or reference fails.
docs-deps: $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	$(VENV)/bin/mkdocs build --strict

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .mypy_cache build/typecheck site
