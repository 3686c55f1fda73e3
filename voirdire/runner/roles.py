"""Which model plays which role: a ``RoleTable`` of settings (a role's own, else ``*``, else the defaults), and the
checks of a binding against a protocol (roles it lacks, roles a rule plays, roles that should be independent)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autogen_core.models import ChatCompletionClient

from voirdire.models import ModelSpecError, RoleSettings, replay_dir, resolve_api_key
from voirdire.registry import known_roles
from voirdire.session import Protocol

EVERY_ROLE = "*"


@dataclass(frozen=True)
class RoleTable:
    """Role settings by role name, ``*`` standing for every role: the one place that says a role's settings are
    its own, else those of ``*``, else the defaults (``RoleSettings()``: the embedded model, 256 tokens, greedy;
    timeout and retries from the model's provider)."""

    entries: Mapping[str, RoleSettings] = field(default_factory=dict)

    def __getitem__(self, role: str) -> RoleSettings:
        return self.entries.get(role) or self.entries.get(EVERY_ROLE) or RoleSettings()

    def __contains__(self, role: object) -> bool:
        return role in self.entries

    def __iter__(self) -> Iterator[str]:
        return iter(self.entries)

    def named(self, role: str) -> RoleSettings | None:
        """The settings given for ``role`` itself, else for every role; None when neither is given."""
        return self.entries.get(role) or self.entries.get(EVERY_ROLE)


def client_label(client: ChatCompletionClient) -> str:
    """A client given in code: its type, and its model when the client says (so caches never mix two models)."""
    model = (
        getattr(client, "_create_args", {}).get("model")
        if isinstance(getattr(client, "_create_args", None), dict)
        else None
    )
    return f"client:{type(client).__name__}" + (f":{model}" if model else "")


def model_roles(protocol: Protocol[Any, Any]) -> tuple[str, ...]:
    """The roles this configuration of ``protocol`` has a model play (its other roles are played by rules)."""
    rules = set(protocol.rule_roles())
    return tuple(r for r in protocol.required_roles() if r not in rules)


def role_problem(protocol: Protocol[Any, Any], role: str) -> tuple[str, bool] | None:
    """Why binding a model to ``role`` would do nothing in this run of ``protocol``, and whether that is an error:
    a role the protocol does not have, or one a rule plays, is; one of its roles that this configuration leaves
    out (DCR's improver with no rounds) is said but allowed, so one command line serves its configurations.
    None when the model would be used."""
    used = model_roles(protocol)
    if role in used:
        return None
    if role in protocol.rule_roles():
        return f"the {role} is a rule agent in this configuration, not a model", True
    if role in protocol.roles:
        return f"{protocol.name} does not use its {role} role in this configuration, so its model is not used", False
    return f"{protocol.name} has no role {role!r} (its model roles here: {_names(used)})", True


def _names(roles: Sequence[str]) -> str:
    return ", ".join(roles) or "none: it runs without models"


def bind_roles(
    protocol: Protocol[Any, Any],
    roles: Mapping[str, RoleSettings] | RoleTable,
    clients: Mapping[str, ChatCompletionClient],
) -> dict[str, RoleSettings]:
    """Settings for every model-played role, as the ``RoleTable`` of ``roles`` gives them."""
    table = roles if isinstance(roles, RoleTable) else RoleTable(roles)
    rule_roles = set(protocol.rule_roles())
    # A role another registered protocol uses is ignored (one config serves several protocols); a name no
    # protocol uses is a typo and fails loudly.
    unknown = set(table) - set(protocol.required_roles()) - known_roles() - {EVERY_ROLE}
    if unknown:
        raise ModelSpecError(
            f"{protocol.name} has no role(s) {sorted(unknown)}; its roles are {list(protocol.required_roles())}"
        )
    bound = {}
    for role in protocol.required_roles():
        if role in rule_roles:
            continue
        settings = table[role]
        if role not in clients:  # fail before the run starts, not in the middle
            spec = settings.spec
            if spec.kind == "local" and spec.path and not Path(spec.path).is_file():
                raise ModelSpecError(f"{spec.path}: no such GGUF model file (role {role})")
        bound[role] = settings
    return bound


def check_credentials(bound: Mapping[str, RoleSettings], clients: Mapping[str, ChatCompletionClient]) -> None:
    """Every role's API key can be found (and is registered to be masked): a missing one fails before the run
    starts, naming the role and the variable."""
    if replay_dir() is not None:  # recordings answer every call: no key is looked up, none is sent
        return
    for role, settings in bound.items():
        if role not in clients:
            try:
                resolve_api_key(settings.spec, settings.api_key_env)
            except ModelSpecError as exc:
                raise ModelSpecError(f"role {role}: {exc}") from None


def independence_warnings(
    protocol: Protocol[Any, Any],
    bound: Mapping[str, RoleSettings],
    clients: Mapping[str, ChatCompletionClient] | None = None,
) -> list[str]:
    clients = clients or {}

    def served_by(role: str) -> object:
        return id(clients[role]) if role in clients else bound[role].model

    out = []
    for a, b in protocol.independent_roles:
        if a in bound and b in bound and served_by(a) == served_by(b):
            out.append(
                f"{a} and {b} are both served by {bound[a].spec.text}: the paper allows one model in "
                f"both roles (prompted differently), but the examination is then not independent"
            )
    return out
