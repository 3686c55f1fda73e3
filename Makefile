# `make demo` and `make test` set up .venv themselves; nothing else needs installing by hand.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/pip install --disable-pip-version-check -c constraints.txt
STAMP  := $(VENV)/.installed
DEMO_CLAIM ?= The capital of Eritrea is Asmara.

.PHONY: demo test test-paper lint bench clean

# torch first, pinned to the CPU build; llama-cpp-python compiles from source (about 10 minutes on 2 cores).
$(STAMP): pyproject.toml constraints.txt
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
		{ echo "voirdire needs Python 3.11 or newer: make PYTHON=python3.11 ..."; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(PIP) torch==2.13.0
	$(PIP) -e '.[local,nlp,dev,ray,plots,inspect]'
	touch $(STAMP)

demo: $(STAMP)
	HF_HUB_OFFLINE=1 $(BIN)/voirdire examine "$(DEMO_CLAIM)" --max-tokens 128 --max-followups 2 \
		--out transcripts/demo.jsonl --fresh
	@echo
	@echo "Read it again as a chat:  $(BIN)/voirdire show transcripts/demo.jsonl"

# The whole suite but the paper reproductions (marker `paper`: whole datasets, minutes each); test-paper runs those.
test: $(STAMP)
	$(BIN)/ruff check .
	HF_HUB_OFFLINE=1 $(BIN)/python -m pytest -q -m 'not paper'

test-paper: $(STAMP)
	HF_HUB_OFFLINE=1 $(BIN)/python -m pytest -q -m paper

lint: $(STAMP)
	$(BIN)/ruff check . && $(BIN)/ruff format --check .

bench: $(STAMP)
	HF_HUB_OFFLINE=1 $(BIN)/python bench/cross_examination_popqa.py --limit 20

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache
