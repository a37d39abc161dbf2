# Two entry points for people: `make lab` (open the course) and `make test` (prove it works).
# Both create .venv with the Python found as $(PYTHON) (3.10 or newer) on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: lab test install lint clean

# binder/requirements.txt pins the course's runtime packages for the Python that
# binder/runtime.txt names; installing under it as a constraint makes the tests run on
# exactly the versions Binder gives students. Those pins need that Python, so another
# one (3.10, say) gets the newest versions that pyproject.toml allows instead.
PINS = $(shell $(PYTHON) -c 'import sys; want = open("binder/runtime.txt").read().strip().removeprefix("python-"); print("-c binder/requirements.txt" if "%d.%d" % sys.version_info[:2] == want else "")' 2>/dev/null)

$(STAMP): pyproject.toml binder/requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet $(PINS) -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

# Serve the repository root, so a chapter's links into exercises/ and edumatcher/ work;
# Jupyter refuses to run as root without --allow-root (containers, Binder-like sandboxes).
lab: $(STAMP)
	$(BIN)/jupyter lab --ServerApp.root_dir=. $(if $(filter 0,$(shell id -u)),--allow-root) course/00_start_here.ipynb

test: $(STAMP)
	$(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/ruff check edumatcher tests

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis artifacts
