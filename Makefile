# Entry points for people: `make lab` (open the course), `make test` (prove it works) and
# `make site` (the course as a website, in _build/html).
# Both create .venv with the Python found as $(PYTHON) (3.10 or newer) on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# JupyterLab's defaults for this course (no "get notified about Jupyter news?" prompt on a new
# student's first screen); Binder's postBuild installs the same file into its environment.
LAB_OVERRIDES := $(VENV)/share/jupyter/lab/settings/overrides.json
# nbgrader 0.9.6 in a venv of its own (tests/test_nbgrader_compat.py runs it from there): its Jupyter
# server and lab extensions must not end up in .venv, which `make lab` and the browser tests use.
NBGRADER_VENV := .venv-nbgrader
NBGRADER_STAMP := $(NBGRADER_VENV)/.installed

.PHONY: lab test test-pythons site install nbgrader lint clean

# binder/requirements.txt pins the course's runtime packages for the Python that
# binder/runtime.txt names; installing under it as a constraint makes the tests run on
# exactly the versions Binder gives students. Those pins need that Python, so another
# one (3.10, say) gets the newest versions that pyproject.toml allows instead.
PINS = $(shell $(PYTHON) -c 'import sys; want = open("binder/runtime.txt").read().strip().removeprefix("python-"); print("-c binder/requirements.txt" if "%d.%d" % sys.version_info[:2] == want else "")' 2>/dev/null)

# PYTHONWARNINGS: setuptools' editable build prints a note meant for packagers ("folders in your
# working directory ... may take precedence"); a newcomer's first screen is better without it.
$(STAMP): pyproject.toml binder/requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	PYTHONWARNINGS="ignore:Editable installation" $(BIN)/python -m pip install --quiet $(PINS) -e '.[dev,site]'
	touch $(STAMP)

$(LAB_OVERRIDES): binder/overrides.json $(STAMP)
	mkdir -p $(dir $@)
	cp binder/overrides.json $@

$(NBGRADER_STAMP): pyproject.toml binder/requirements.txt
	$(PYTHON) -m venv $(NBGRADER_VENV)
	$(NBGRADER_VENV)/bin/python -m pip install --quiet --upgrade pip
	PYTHONWARNINGS="ignore:Editable installation" $(NBGRADER_VENV)/bin/python -m pip install --quiet $(PINS) -e '.[nbgrader]'
	touch $(NBGRADER_STAMP)

nbgrader: $(NBGRADER_STAMP)

install: $(STAMP) $(LAB_OVERRIDES)

# Serve the repository root, so a chapter's links into exercises/ and edumatcher/ work;
# Jupyter refuses to run as root without --allow-root (containers, Binder-like sandboxes).
lab: $(STAMP) $(LAB_OVERRIDES)
	$(BIN)/jupyter lab --ServerApp.root_dir=. $(if $(filter 0,$(shell id -u)),--allow-root) course/00_start_here.ipynb

test: $(STAMP) $(LAB_OVERRIDES) $(NBGRADER_STAMP)
	$(BIN)/python -m pytest

# Every chapter and solution on the other CPythons the course supports (3.10, 3.12, 3.13; found
# with pyenv or on PATH, each in its own .venv-3.N); CI runs this beside `make test`.
test-pythons:
	bash .ci/notebooks_on_pythons

# The course as a static website in _build/html (open _build/html/index.html; site/README.md says
# how it is built). Every chapter is executed, through jupyter-cache (_build/.jupyter_cache): a
# rebuild runs only the chapters whose code changed. A chapter that fails, or any warning, fails it.
site: $(STAMP)
	$(BIN)/python -m sphinx -b html -W --keep-going site _build/html
	@echo "The site is in _build/html: open _build/html/index.html"

lint: $(STAMP)
	$(BIN)/ruff check edumatcher tests

clean:
	rm -rf $(VENV) .venv-3.* $(NBGRADER_VENV) .pytest_cache .hypothesis artifacts _build
