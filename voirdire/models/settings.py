"""Per-role settings, and the ``[roles.<name>]`` tables of a TOML run config that set them.

A run config holds ``[roles.<name>]`` tables and nothing else; an unknown table or key anywhere is an error that
names the file and the key (a typo such as ``[role.examiner]`` or a top-level ``max_tokens`` would otherwise set
nothing, silently).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from voirdire.base import MAX_TIMEOUT_S, MAX_TOKENS, parse_toml, read_text
from voirdire.models.base import DEFAULT_MAX_TOKENS, ModelSpecError
from voirdire.models.spec import PROVIDERS, ModelSpec, parse_spec

ENV_NAME = r"^[A-Za-z_][A-Za-z0-9_]*$"


@lru_cache(maxsize=1024)
def parsed_spec(model: str) -> ModelSpec:
    """A spec string parsed once a process: a spec is a pure function of its text (a frozen ``ModelSpec``), and a
    session reads its roles' specs several times."""
    return parse_spec(model)


class RoleSettings(BaseModel):
    """One role's binding: the model spec, the generation settings sent with every call, and how calls are made
    (deadline, retries, credentials)."""

    model_config = ConfigDict(extra="forbid")
    model: str = "local"  # the spec as written (what the run header records); ``spec`` is it parsed
    # Always sent: a provider left to its own default samples (OpenAI's is 1.0), which is neither what the papers'
    # greedy settings ask for nor safe to cache.
    temperature: float = Field(0.0, ge=0)
    max_tokens: int = Field(DEFAULT_MAX_TOKENS, gt=0, le=MAX_TOKENS)
    seed: int | None = None
    # Structured mode: the protocol asks for its closed answers through reply schemas the backend enforces,
    # instead of reading the paper's free text.
    structured: bool = False
    timeout: float | None = Field(
        None,
        gt=0,
        le=MAX_TIMEOUT_S,
        allow_inf_nan=False,
        description="seconds one request may take (connecting included); unset: the provider's default",
    )
    max_retries: int | None = Field(
        None, ge=0, le=100, description="retries of a transient failure; unset: the provider's default"
    )
    api_key_env: str | None = Field(None, description="the environment variable that holds this role's API key")
    api_version: str | None = Field(
        None, min_length=1, description="the API version an azure: deployment is asked with; unset: the client's"
    )
    prompt_cache: bool = Field(
        True,
        description="mark the stable prefix of each request for the provider's prompt cache where it takes marks "
        "(Anthropic's cache_control, when the prefix is long enough); off: no marks (--no-prompt-cache)",
    )

    @field_validator("api_key_env")
    @classmethod
    def _an_env_name(cls, value: str | None) -> str | None:

        if value is not None and not re.match(ENV_NAME, value):
            # never echo the value: a key pasted here by mistake must not reach an error message
            raise ValueError("must name an environment variable (letters, digits and _), not hold the key itself")
        return value

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
        if self.api_version is not None:
            args["api_version"] = self.api_version
        if not self.prompt_cache:  # sent only when off: the requests of a role that caches digest as they did
            args["prompt_cache"] = False
        return args

    @property
    def spec(self) -> ModelSpec:
        """``model`` parsed; a spec that does not parse is a ``ModelSpecError`` here, where the run is prepared,
        not in the middle of a session."""
        return parsed_spec(self.model)

    def timeout_s(self) -> float | None:
        """The deadline of one request: the role's own, else its provider's default (None: no deadline)."""
        return self.timeout if self.timeout is not None else PROVIDERS[self.spec.kind].timeout_s

    def retries(self) -> int:
        """How often a transient failure is retried: the role's own count, else its provider's default."""
        return self.max_retries if self.max_retries is not None else PROVIDERS[self.spec.kind].max_retries


def _suggest(word: str, known: Iterable[str]) -> str:
    close = difflib.get_close_matches(word, list(known), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def load_role_config(path: str | Path) -> dict[str, RoleSettings]:
    """Read the ``[roles.<name>]`` tables of a TOML run config; anything else in the file is an error."""
    path = Path(path)
    text = read_text(path, "config", ModelSpecError)
    data = parse_toml(path, text, ModelSpecError)
    fields = RoleSettings.model_fields
    for key, value in data.items():
        if key == "roles":
            continue
        if key in fields:
            raise ModelSpecError(
                f"{path}: top-level key {key!r} sets nothing: put it in a [roles.NAME] table "
                f'(or [roles."*"] for every role)'
            )
        what = f"table [{key}]" if isinstance(value, dict) else f"top-level key {key!r}"
        raise ModelSpecError(f"{path}: unknown {what}{_suggest(key, ['roles'])}; a run config holds [roles.NAME]")
    roles = data.get("roles", {})
    if not isinstance(roles, dict):
        raise ModelSpecError(f"{path}: roles must be tables [roles.NAME], not a value")
    out: dict[str, RoleSettings] = {}
    for role, table in roles.items():
        where = f"{path}: [roles.{role}]"
        if not isinstance(table, dict):
            raise ModelSpecError(f"{where} must be a table of settings, not a value")
        for key in table:
            if key not in fields:
                raise ModelSpecError(
                    f"{where}: unknown key {key!r}{_suggest(key, fields)}; known keys: {', '.join(fields)}"
                )
        try:
            out[role] = RoleSettings.model_validate(table)
        except ValidationError as exc:
            errors = exc.errors(include_url=False, include_input=False)
            problem = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in errors)
            raise ModelSpecError(f"{where}: {problem}") from None
        try:
            out[role].spec  # noqa: B018 (parsed here, so a bad spec names its table)
        except ModelSpecError as exc:
            raise ModelSpecError(f"{where}: {exc}") from None
    return out
