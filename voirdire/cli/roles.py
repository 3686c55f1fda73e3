"""Role bindings from the model options: ``--config``, then ``--model`` and ``--api-key-env``, then the settings
given for every role, each checked against the protocol before anything runs."""

from __future__ import annotations

import difflib
import re
import sys
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from voirdire.base import mask_secrets
from voirdire.cli.options import CLIError, ModelOptions
from voirdire.models import RoleSettings, load_role_config
from voirdire.runner import EVERY_ROLE, RoleTable, known_roles, model_roles, role_problem
from voirdire.session import Protocol

# The flag that sets each role setting, named by an error in its value.
SETTING_FLAGS = {
    "model": "--model",
    "max_tokens": "--max-tokens",
    "temperature": "--temperature",
    "seed": "--seed",
    "structured": "--structured",
    "timeout": "--timeout",
    "max_retries": "--max-retries",
    "api_key_env": "--api-key-env",
    "prompt_cache": "--no-prompt-cache",
}


def role_of(entry: str) -> tuple[str, str]:
    """``ROLE=VALUE`` when ROLE is a role name, else ``("*", entry)``: a spec whose URL holds ``=`` is bare."""
    role, sep, value = entry.partition("=")
    return (role, value) if sep and re.fullmatch(r"\*|[A-Za-z_][\w-]*", role) else (EVERY_ROLE, entry)


def check_role_options(protocol: Protocol[Any, Any], models: ModelOptions) -> None:
    """Every role a ``--model`` or ``--api-key-env`` names is one this protocol plays with a model in this
    configuration; a bare one needs at least one such role. A role of another protocol or a rule-played role is
    an error; a role of this protocol that this configuration leaves out is a warning; none is silently ignored."""
    for flag, entries in (("--model", models.model), ("--api-key-env", models.api_key_env)):
        for entry in entries:
            role, _ = role_of(entry)
            if role == EVERY_ROLE:
                if not model_roles(protocol):
                    raise CLIError(
                        f"{flag}: {protocol.name} plays no role with a model here, so the spec would not be used"
                    )
                continue
            problem = role_problem(protocol, role)
            if problem and problem[1]:
                raise CLIError(f"{flag} {role}=...: {problem[0]}")
            if problem:
                print(f"warning: {flag} {role}=...: {problem[0]}", file=sys.stderr)


def warn_unused_config_roles(protocol: Protocol[Any, Any], models: ModelOptions) -> None:
    """A ``--config`` table of a role this run does not use (one config may serve several protocols) is said."""
    if not models.config:
        return
    for role in load_role_config(models.config):
        if role != EVERY_ROLE and role not in protocol.required_roles() and role not in known_roles():
            # no protocol has it: a typo, which the run refuses, so it is said once, as the error, with a guess
            close = difflib.get_close_matches(role, [*protocol.required_roles(), *sorted(known_roles())], n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise CLIError(
                f"{models.config}: [roles.{role}]: no protocol has a role {role!r}{hint}; "
                f"{protocol.name}'s roles: {', '.join(protocol.required_roles())}"
            )
        problem = role_problem(protocol, role) if role != EVERY_ROLE else None
        if problem:
            print(f"warning: {models.config}: [roles.{role}] is not used by this run: {problem[0]}", file=sys.stderr)


def _updated(settings: RoleSettings, **changes: object) -> RoleSettings:
    try:
        updated = RoleSettings.model_validate({**settings.model_dump(), **changes})
    except ValidationError as exc:
        problem = "; ".join(
            f"{SETTING_FLAGS.get(str(e['loc'][0]), e['loc'][0])}: {str(e['msg']).removeprefix('Value error, ')}"
            for e in exc.errors(include_url=False)
        )
        raise CLIError(problem) from None
    return updated


def roles_from_options(models: ModelOptions, *, forward_seed: bool = True) -> dict[str, RoleSettings]:
    """Role bindings from ``--config``, then ``--model`` (a bare SPEC rebinds every role) and ``--api-key-env``,
    then the global ``--max-tokens``/``--temperature``/``--seed``/``--timeout``/``--max-retries``, each validated
    like the config file. ``ROLE=`` is read only when ROLE is a role name, so a spec whose URL holds ``=`` is a
    bare spec."""
    roles: dict[str, RoleSettings] = load_role_config(models.config) if models.config else {}

    def bind(role: str, **changes: object) -> None:
        nonlocal roles
        if role == EVERY_ROLE:
            roles = {r: _updated(s, **changes) for r, s in roles.items()}
        roles[role] = _updated(RoleTable(roles)[role], **changes)

    for option, entries in (("--model", models.model), ("--api-key-env", models.api_key_env)):
        seen: dict[str, str] = {}
        for entry in entries:  # a role given twice would silently take the last
            role, value = role_of(entry)
            if role in seen and seen[role] != value:
                who = "every role" if role == EVERY_ROLE else f"role {role}"
                raise CLIError(
                    f"{option}: {who} given twice ({mask_secrets(seen[role])!r}, then {mask_secrets(value)!r})"
                )
            seen[role] = value
            if option == "--model":
                bind(role, model=value)
                roles[role].spec  # noqa: B018 (parsed here, once: a bad spec is an error before anything runs)
            else:
                bind(role, api_key_env=value)
    overrides = {
        k: v
        for k, v in (
            ("max_tokens", models.max_tokens),
            ("temperature", models.temperature),
            ("seed", models.seed if forward_seed else None),
            ("structured", True if models.structured else None),
            ("timeout", models.timeout),
            ("max_retries", models.max_retries),
            ("prompt_cache", False if models.no_prompt_cache else None),
        )
        if v is not None
    }
    if overrides:
        roles.setdefault(EVERY_ROLE, RoleSettings())
        roles = {r: _updated(s, **overrides) for r, s in roles.items()}
    return roles


def with_role_defaults(
    protocol: Protocol[Any, Any], models: ModelOptions, roles: dict[str, RoleSettings], defaults: Mapping[str, Any]
) -> dict[str, RoleSettings]:
    """Give every model role the generation settings a paper fixes (``defaults``) wherever the user set none, by
    flag (every role) or in the ``--config`` table that binds the role. ``RoleSettings.max_tokens`` always has a
    value, so "not set" is read from the flags and the config, never from the value."""
    if not defaults:
        return roles
    config = load_role_config(models.config) if models.config else {}
    flagged = {key for key in defaults if models.given(key)}
    rule_roles = set(protocol.rule_roles())
    for role in protocol.required_roles():
        if role in rule_roles:
            continue
        settings = RoleTable(roles)[role]
        table = RoleTable(config).named(role)
        given = flagged | (table.model_fields_set & set(defaults) if table is not None else set())
        missing = {k: v for k, v in defaults.items() if k not in given}
        if missing:
            roles[role] = settings.model_copy(update=missing)
    return roles
