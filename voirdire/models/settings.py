"""Per-role generation settings, and the ``[roles.<name>]`` tables of a TOML run config that set them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from voirdire.models.base import DEFAULT_MAX_TOKENS, ModelSpecError
from voirdire.models.spec import parse_spec


class RoleSettings(BaseModel):
    """One role's binding: the model spec and the generation settings sent with every call."""

    model_config = ConfigDict(extra="forbid")
    model: str = "local"
    # Always sent: a provider left to its own default samples (OpenAI's is 1.0), which is neither what the papers'
    # greedy settings ask for nor safe to cache.
    temperature: float = Field(0.0, ge=0)
    max_tokens: int = Field(DEFAULT_MAX_TOKENS, gt=0)
    seed: int | None = None
    # Structured mode: the protocol asks for its closed answers through reply schemas the backend enforces,
    # instead of reading the paper's free text.
    structured: bool = False

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
