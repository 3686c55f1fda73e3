# `make demo` and `make test` set up .venv themselves; nothing else needs installing by hand. `make demo` installs
# only what the demo runs (the core and the embedded model); `make test` adds every extra and the test and docs tools.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/pip install --disable-pip-version-check -c constraints.txt
DEMO_STAMP := $(VENV)/.installed-demo
TEST_STAMP := $(VENV)/.installed-test
TEST_EXTRAS := local,nlp,dev,docs,ray,plots,inspect,mcp,otel,phoenix,data,notebook
DEMO_CLAIM ?= Augustus was the first Roman Emperor to sport a beard.

.PHONY: demo test test-paper lint docs bench clean

# llama-cpp-python compiles from source (about 10 minutes on 2 cores). A native build (-march=native) uses every
# instruction the CPU reports, and a virtual machine can report AVX-512/AMX it then refuses ("Illegal instruction"
# on the first long prompt): build for AVX2, which any x86-64 machine of the last decade runs. The wheel is kept
# in a folder named by these flags, so a changed flag rebuilds it and pip's own wheel cache (keyed by the source
# alone) never hands back a build made with other flags.
LLAMA_VERSION := 0.3.36
LLAMA_CMAKE   := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF \
                 -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF
LLAMA_WHEELS  := $(HOME)/.cache/voirdire/llama-$(LLAMA_VERSION)-$(shell echo '$(LLAMA_CMAKE)' | sha1sum | cut -c1-12)

# The demo's environment: the embedded model's runtime, built as above, then the core and the `local` extra.
$(DEMO_STAMP): pyproject.toml constraints.txt
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
		{ echo "voirdire needs Python 3.11 or newer: make PYTHON=python3.11 ..."; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	ls $(LLAMA_WHEELS)/llama_cpp_python-$(LLAMA_VERSION)-*.whl >/dev/null 2>&1 || \
		CMAKE_ARGS='$(LLAMA_CMAKE)' $(BIN)/pip wheel --disable-pip-version-check --no-deps --no-cache-dir \
			-w $(LLAMA_WHEELS) 'llama-cpp-python==$(LLAMA_VERSION)'
	$(PIP) --no-deps $(LLAMA_WHEELS)/llama_cpp_python-$(LLAMA_VERSION)-*.whl
	$(PIP) -e '.[local]'
	touch $(DEMO_STAMP)

# The rest on top of the demo's: torch first, pinned to the CPU build (sentence-transformers would pull a CUDA one).
$(TEST_STAMP): $(DEMO_STAMP)
	$(PIP) torch==2.13.0
	$(PIP) -e '.[$(TEST_EXTRAS)]'
	touch $(TEST_STAMP)

# The demo in three acts: a cross-examination the LMvLM paper published (Appendix C, Table 16: ChatGPT in both
# roles), replayed through the real protocol with the paper's own replies; the same claim examined live by the
# embedded 135M model; then the command that examines it with a real model.
DEMO_EXAMPLE ?= lmvlm-table-16
demo: $(DEMO_STAMP)
	@echo
	@echo "== 1 of 2: a published cross-examination, replayed through the protocol =="
	@echo "Every examiner and examinee reply below is the paper's own (LM vs LM, Cohen et al. 2023, Appendix C)."
	@echo "voirdire runs the real protocol over them: its prompts, its stages, its reading of the verdict."
	@echo
	@HF_HUB_OFFLINE=1 $(BIN)/voirdire reproduce paper-examples --example $(DEMO_EXAMPLE) --out transcripts/demo
	@echo
	@echo "== 2 of 2: the same claim, examined live by the embedded model (SmolLM2-135M-Instruct, offline) =="
	@echo "A 135M model can follow the protocol's turns: setup, questions, answers, a decision."
	@echo "It cannot judge facts: expect odd questions, and a verdict that means nothing."
	@echo
	HF_HUB_OFFLINE=1 $(BIN)/voirdire examine "$(DEMO_CLAIM)" --max-tokens 128 --max-followups 2 \
		--out transcripts/demo.jsonl --fresh
	@echo
	@echo "Read both again in the browser:  $(BIN)/voirdire view transcripts/ transcripts/demo/paper-examples/"
	@echo "Examine it with a real model (OPENAI_API_KEY set; any OpenAI-compatible server works too):"
	@echo "  $(BIN)/voirdire examine \"$(DEMO_CLAIM)\" --model examiner=openai:gpt-4o-mini"

# The whole suite but the paper reproductions (marker `paper`: whole datasets, minutes each); test-paper runs those.
# In TEST_WORKERS processes (pytest-xdist; TEST_WORKERS=0 runs them in this one). 3 on two cores because the suite
# waits on sockets and subprocesses much of the time (not yet timed against 2 and 4 on a quiet machine); the tests
# that share a Ray instance, a model or a browser stay on one worker (tests/conftest.py).
TEST_WORKERS ?= 3
test: $(TEST_STAMP)
	$(BIN)/ruff check .
	HF_HUB_OFFLINE=1 $(BIN)/python -m pytest -q -m 'not paper' -n $(TEST_WORKERS) --dist loadgroup

test-paper: $(TEST_STAMP)
	HF_HUB_OFFLINE=1 $(BIN)/python -m pytest -q -m paper

lint: $(TEST_STAMP)
	$(BIN)/ruff check . && $(BIN)/ruff format --check .

# The documentation site on http://127.0.0.1:8000/, rebuilt as its pages change (`make test` builds it with --strict).
docs: $(TEST_STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve --dev-addr 127.0.0.1:8000

bench: $(TEST_STAMP)
	HF_HUB_OFFLINE=1 $(BIN)/python bench/cross_examination_popqa.py --limit 20

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache
