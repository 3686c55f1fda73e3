"""What model calls cost: a price table (USD per million prompt and completion tokens, and the provider's rates for
prompt tokens read from or written to its prompt cache) and how a transcript's model label finds its price.

The table ships as ``voirdire/reports/prices.toml``; a user's own file (``--prices FILE``, or the ``VOIRDIRE_PRICES``
environment variable) overrides and extends it entry by entry. Models that run here (``local``, ``scripted:``,
``human``) are free; a model the table does not name has an *unknown* price, never a price of 0, so a report
says its cost is unknown rather than printing a wrong one.

``run_cost`` prices what a run's model calls used (per model label: billed tokens, requests) the one way every
reader shows it: ``voirdire report`` and ``--json``, the viewer's runs list and session pages; ``usd`` writes it.
"""

from __future__ import annotations

import difflib
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from voirdire.base import VoirdireError, parse_toml, read_text

PACKAGED = Path(__file__).with_name("prices.toml")
ENV = "VOIRDIRE_PRICES"
_KEYS = ("input", "output")
_CACHE_KEYS = ("cached_input", "cache_write")  # optional: a provider's prompt-cache rates (input's when absent)

# Clients given in code whose replies cost nothing: voirdire's scripted and human clients, the embedded llama.cpp
# model, and autogen's replay client (tests and demos). Their labels are ``client:<type>[:<model>]``.
_FREE_CLIENTS = {
    "ScriptedChatCompletionClient": "scripted",
    "ReplayChatCompletionClient": "scripted",
    "HumanClient": "human",
    "LlamaCppClient": "local",
}


class PriceError(VoirdireError, ValueError):
    """A price file that cannot be used; the message names the file and the line or key."""


@dataclass(frozen=True)
class Price:
    """USD per million tokens: uncached prompt tokens (``input``), completion tokens, and the prompt tokens a
    provider read from its prompt cache (``cached_input``) or wrote to it (``cache_write``); a rate not given is
    ``input``'s (a provider that does not cache bills every prompt token alike)."""

    input: float
    output: float
    cached_input: float | None = None
    cache_write: float | None = None

    def cost(self, prompt_tokens: int, completion_tokens: int, cache_read: int = 0, cache_write: int = 0) -> float:
        """The bill: ``prompt_tokens`` counts every prompt token, ``cache_read`` and ``cache_write`` the parts of
        them the provider read from or wrote to its cache (each at its own rate), the rest at ``input``."""
        uncached = max(0, prompt_tokens - cache_read - cache_write)
        read = self.input if self.cached_input is None else self.cached_input
        write = self.input if self.cache_write is None else self.cache_write
        return (uncached * self.input + cache_read * read + cache_write * write + completion_tokens * self.output) / 1e6

    def uncached(self, prompt_tokens: int, completion_tokens: int) -> float:
        """What the same tokens would have cost with no prompt cache: every prompt token at ``input``."""
        return (prompt_tokens * self.input + completion_tokens * self.output) / 1e6


@dataclass(frozen=True)
class Pricing:
    """How one model label is priced: ``free`` (it runs here: ``kind`` says how), a ``price``, or neither (unknown;
    ``name`` is the model name that was looked up)."""

    label: str
    name: str
    price: Price | None = None
    free: str | None = None

    @property
    def known(self) -> bool:
        return self.free is not None or self.price is not None


def model_name(label: str) -> tuple[str, str | None]:
    """The model name a label is priced by, and the kind of a model that runs here (None for one billed).

    Labels are what transcripts record (``voirdire.models.spec.spec_label``): ``openai:NAME`` (``@URL`` when
    OPENAI_BASE_URL is set), ``openai-compatible:NAME@URL``, ``local[:PATH]``, ``scripted:FILE``, ``human``, and
    ``client:TYPE[:MODEL]`` for a client given in code."""
    kind, sep, rest = label.partition(":")
    if label == "human" or (kind in ("local", "scripted") and (sep or kind == "local")):
        return label, kind
    if kind in ("openai", "openai-compatible", "anthropic", "ollama", "azure") and rest:
        at = re.match(r"(.+?)@(https?://.*)$", rest)
        return (at.group(1) if at else rest), None
    if kind == "client" and rest:
        client, _, model = rest.partition(":")
        if client in _FREE_CLIENTS:
            return label, _FREE_CLIENTS[client]
        if model.startswith(_INSPECT):  # a role played through Inspect: its model name, as other specs name it
            return inspect_model_name(model.removeprefix(_INSPECT))
        return (model or label), None
    return label, None


_INSPECT = "inspect/"  # a role played by an Inspect model: inspect/PROVIDER/NAME
# Inspect's providers whose models answer here, at no cost: its mock model, and its in-process Hugging Face and vLLM
# models (Inspect's ``mockllm``, ``hf``, ``vllm``) cost nothing, named by their kind in the cost line.
_INSPECT_FREE = {"mockllm": "mockllm", "hf": "local", "vllm": "local", "llama-cpp-python": "local"}


def inspect_model_name(name: str) -> tuple[str, str | None]:
    """An Inspect model name (``openai/gpt-4o-mini``, ``anthropic/claude-haiku-4-5``, ``openai/azure/NAME``) as
    the price table names it (``gpt-4o-mini``), and the kind of a model that runs here (None for one billed)."""
    provider, _, model = name.partition("/")
    if provider in _INSPECT_FREE:
        return f"{_INSPECT}{name}", _INSPECT_FREE[provider]
    return (model.removeprefix("azure/") if model else name), None  # openai/azure/NAME: a deployment's name


class Prices:
    """Model name (or whole label) -> ``Price``."""

    def __init__(self, table: Mapping[str, Price] | None = None) -> None:
        self.table: dict[str, Price] = dict(table or {})

    def __contains__(self, name: str) -> bool:
        return name in self.table

    def pricing(self, label: str) -> Pricing:
        name, free = model_name(label)
        if free is not None:
            return Pricing(label=label, name=name, free=free)
        # A whole label wins over its model name: one endpoint of a self-hosted model can be priced on its own.
        price = self.table.get(label) or self.table.get(name)
        return Pricing(label=label, name=name, price=price)

    def updated(self, other: Prices) -> Prices:
        return Prices({**self.table, **other.table})


@dataclass(frozen=True)
class Cost:
    """What model calls cost: ``usd`` is the priced part (None when no billed model has a price); ``partial`` when
    billed models without a price (``unpriced``) are left out."""

    usd: float | None
    unpriced: tuple[str, ...] = ()
    uncached_usd: float | None = None  # the priced part with no provider prompt cache (every prompt token at input)

    @property
    def partial(self) -> bool:
        return bool(self.unpriced) and self.usd is not None

    @property
    def unpriced_names(self) -> list[str]:
        """The model names a price file would key the unpriced models by (``gpt-4o``, not the whole label)."""
        return list(dict.fromkeys(model_name(label)[0] for label in self.unpriced))

    @property
    def amount(self) -> str:
        """The priced part alone: ``$0.0027``, or ``unknown``."""
        return "unknown" if self.usd is None else usd(self.usd)

    def text(self) -> str:
        """``$0.0027``; ``at least $0.0027`` (partial); ``unknown``, also for a partial cost whose priced part is
        $0 (free models beside unpriced ones: "at least $0.0000" says nothing). ``missing`` says what is missing,
        as every reader prints it beside."""
        if not self.partial:
            return self.amount
        return "unknown" if not self.usd else f"at least {self.amount}"

    @property
    def missing(self) -> str:
        """``no price for llama3; give one with --prices FILE``; empty when every billed model has a price."""
        return f"no price for {', '.join(self.unpriced_names)}; give one with --prices FILE" if self.unpriced else ""


def usd(x: float) -> str:
    return f"${x:,.2f}" if x >= 10 else f"${x:.4f}"


BilledUsage = tuple[int, ...]
"""What a model was billed for: (prompt tokens, completion tokens, requests) and, where the provider cached, the
prompt tokens read from and written to its cache (parts of the prompt tokens): five numbers."""


def run_cost(usage: Mapping[str, BilledUsage], prices: Prices) -> Cost:
    """The cost of ``usage``: model label -> (billed prompt tokens, billed completion tokens, requests[, cache
    reads, cache writes]). Cached replies are not billed (leave their tokens out); a free model costs 0; a billed
    model without a price, that used tokens or requests, makes the cost partial (or unknown when nothing is
    priced). ``uncached_usd`` is what the priced part would have cost with no provider prompt cache."""
    total: float | None = None if usage else 0.0  # no model call at all (rule agents): nothing was billed
    uncached: float | None = total
    unpriced: list[str] = []
    for label, counts in usage.items():
        prompt, completion, requests = counts[0], counts[1], counts[2]
        read, write = (counts[3], counts[4]) if len(counts) >= 5 else (0, 0)
        pricing = prices.pricing(label)
        if pricing.free is not None:
            part: float | None = 0.0
            whole: float | None = 0.0
        elif pricing.price is not None:
            part = pricing.price.cost(prompt, completion, read, write)
            whole = pricing.price.uncached(prompt, completion)
        elif prompt or completion or requests:
            part = whole = None
            unpriced.append(label)
        else:
            part = whole = 0.0  # only cached or coalesced calls: nothing was billed
        if part is not None:
            total = (total or 0.0) + part
        if whole is not None:
            uncached = (uncached or 0.0) + whole
    return Cost(total, tuple(unpriced), uncached)


def read_prices(path: str | Path) -> Prices:
    """A price file: ``[models]`` with ``NAME = { input = USD, output = USD }`` per million tokens."""
    path = Path(path)
    text = read_text(path, "price", PriceError)
    data = parse_toml(path, text, PriceError)
    for key, value in data.items():
        if key != "models":
            close = difflib.get_close_matches(key, ["models"], n=1)
            hint = " (did you mean 'models'?)" if close else ""
            raise PriceError(
                f"{_where(path, text, key)}: unknown {'table' if isinstance(value, dict) else 'key'} {key!r}{hint}; "
                "a price file holds [models] with NAME = { input = USD, output = USD } per million tokens"
            )
    models = data.get("models", {})
    if not isinstance(models, dict):
        raise PriceError(f"{_where(path, text, 'models')}: models must be a table [models], not a value")
    table: dict[str, Price] = {}
    for name, entry in models.items():
        where = f"{_where(path, text, name)}: models.{_quoted(name)}"
        if not isinstance(entry, dict):
            raise PriceError(f"{where}: expected {{ input = USD, output = USD }} per million tokens, got {entry!r}")
        for key in entry:
            if key not in _KEYS + _CACHE_KEYS:
                close = difflib.get_close_matches(key, _KEYS + _CACHE_KEYS, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                raise PriceError(
                    f"{where}: unknown key {key!r}{hint}; known keys: input, output, cached_input, cache_write"
                )
        values: list[float | None] = []
        for key in _KEYS + _CACHE_KEYS:
            if key not in entry:
                if key in _CACHE_KEYS:
                    values.append(None)
                    continue
                raise PriceError(f"{where}: {key} is missing (USD per million {_TOKENS[key]} tokens)")
            v = entry[key]
            # bool is an int to Python, and a price of `true` is a typo, not a number
            if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) or v < 0:
                raise PriceError(f"{where}: {key} must be a number of USD per million tokens, at least 0, got {v!r}")
            values.append(float(v))
        table[name] = Price(*values)  # type: ignore[arg-type]
    return Prices(table)


_TOKENS = {"input": "prompt", "output": "completion"}  # the cache rates are optional: never missing


def _quoted(name: str) -> str:
    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else f'"{name}"'


def _where(path: Path, text: str, key: str) -> str:
    """``file:line`` of the first line that defines ``key`` (as a key or a table name), else ``file``."""
    k = re.escape(key)
    pattern = re.compile(rf"""^\s*(\[\s*(models\s*\.\s*)?)?("{k}"|'{k}'|{k})\s*[=\].]""")
    for n, line in enumerate(text.splitlines(), 1):
        if pattern.match(line):
            return f"{path}:{n}"
    return str(path)


def load_prices(path: str | Path | None = None, *, env: Mapping[str, str] | None = None) -> Prices:
    """The packaged table, updated by the file ``$VOIRDIRE_PRICES`` names, then by ``path`` (``--prices``)."""
    env = os.environ if env is None else env
    prices = read_prices(PACKAGED)
    if env.get(ENV):
        try:
            prices = prices.updated(read_prices(env[ENV]))
        except PriceError as exc:  # say where the file name came from: nothing on the command line names it
            raise PriceError(f"{exc} (the file {ENV} names)") from None
    if path is not None:
        prices = prices.updated(read_prices(path))
    return prices
