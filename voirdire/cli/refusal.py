"""A refusal to mix two runs in one transcript, said in the command line's words: the option whose value differs,
its value in the transcript and now, and how to start over (``--rounds: 1 in transcripts/x.jsonl, 0 now; use
--out or --fresh``)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from voirdire.registry import ParamsCLI
from voirdire.runner import ResumeError

START_OVER = "use --out or --fresh"

# The flag that sets each setting a run header records for a role.
_ROLE_FLAGS = {
    "temperature": "--temperature",
    "max_tokens": "--max-tokens",
    "seed": "--seed",
    "structured": "--structured",
}


def value_text(value: Any) -> str:
    """A recorded value as it is written on the command line (never a Python repr)."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, (list, tuple)):
        return ",".join(value_text(v) for v in value)
    if isinstance(value, BaseModel):
        spec = getattr(value, "spec", None)
        return str(spec) if spec is not None else json.dumps(value.model_dump(mode="json"), sort_keys=True)
    if isinstance(value, dict):
        return json.dumps(value, sort_keys=True)
    return str(value)


def data_flag(argv: Sequence[str]) -> str:
    """The option the command read its dataset from."""
    return next((a.split("=")[0] for a in argv if a.split("=")[0] in ("--questions", "--data")), "--data")


def refusal(exc: ResumeError, params: ParamsCLI, argv: Sequence[str]) -> str:
    """``exc`` in the command line's words; a refusal without a difference (another run holds the lock) as is."""
    found, out = exc.difference, exc.out
    if found is None or out is None:
        return str(exc)
    was, now = value_text(found.recorded), value_text(found.given)
    if found.what == "protocol":
        return f"{out} holds a {was} run, not {now}; {START_OVER}"
    if found.what == "dataset":
        return f"{data_flag(argv)}: {was} in {out}, {now} now; {START_OVER}"
    if found.what == "item":
        return (
            f"{out}: session {found.key} was run on a different item (the dataset changed since); {START_OVER}"
        )
    if found.what == "prompts":
        return f"prompt {found.key}: changed since {out} was written; {START_OVER}"
    if found.what == "parameters":
        flag = params.flag(found.key) if found.key not in params.exclude else f"parameter {found.key}"
        return f"{flag}: {was} in {out}, {now} now; {START_OVER}"
    if found.what == "roles":
        role, _, setting = found.key.partition(".")
        if not setting:  # a role bound in one run and not the other
            return f"--model {role}=...: {was} in {out}, {now} now; {START_OVER}"
        if setting == "spec":
            return f"--model {role}=...: {was} in {out}, {now} now; {START_OVER}"
        flag = _ROLE_FLAGS.get(setting, setting)
        return f"{flag} (role {role}): {was} in {out}, {now} now; {START_OVER}"
    return f"{out}: holds a run with another {found.what} ({found.key}); {START_OVER}"
