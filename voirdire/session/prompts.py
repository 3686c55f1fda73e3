"""Prompt files (``prompts/<protocol>/<name>.yaml``) loaded as langchain-core chat templates.

A prompt file holds data only::

    source: "Cohen et al. 2023, LM vs LM, Table 1 (ChatGPT, Stage 1)"
    verbatim: true            # the paper's text, unchanged
    note: "..."               # optional: how it was adapted, when verbatim is false
    variables: [claim]
    messages:
      - role: user            # system | user | assistant
        template: |
          ... {claim} ...

Templates use f-string syntax, so literal braces are doubled. Code never inlines prompt prose: protocols name a
prompt and pass variables.
"""

from __future__ import annotations

import hashlib
import importlib.util
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from voirdire.base import VoirdireError

if TYPE_CHECKING:  # langchain-core is imported when a prompt is first loaded: `voirdire --help` never needs it
    from langchain_core.messages import BaseMessage
    from langchain_core.prompts import ChatPromptTemplate


class PromptError(VoirdireError, ValueError):
    """A prompt file that is missing, malformed, or rendered with the wrong variables."""


class PromptMessage(BaseModel):
    model_config = ConfigDict(extra="forbid")
    role: Literal["system", "user", "assistant"]
    template: str


class PromptFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    source: str
    verbatim: bool
    note: str | None = None
    variables: list[str] = []
    messages: list[PromptMessage]


@dataclass(frozen=True)
class RenderedMessage:
    role: Literal["system", "user", "assistant"]
    content: str


@dataclass(frozen=True)
class Prompt:
    name: str
    path: Path
    spec: PromptFile
    sha256: str
    template: ChatPromptTemplate

    def render(self, **variables: object) -> list[RenderedMessage]:
        missing = set(self.spec.variables) - set(variables)
        if missing:
            raise PromptError(f"{self.path}: missing variables {sorted(missing)} for prompt {self.name!r}")
        values = {k: variables[k] for k in self.spec.variables}
        plan = self._string_templates
        if plan is None:
            return [_from_langchain(m) for m in self.template.format_messages(**values)]
        return [RenderedMessage(role=role, content=str(template.format(**values))) for role, template in plan]

    @cached_property
    def _string_templates(self) -> tuple[tuple[Literal["system", "user", "assistant"], Any], ...] | None:
        """Each message's role and langchain-core string template, found once per prompt (not at every render);
        None where a message is not a plain string template, which ``format_messages`` then renders.

        Rendered by langchain-core's templates, as the design card asks: each message's string template formats
        its text (what ``format_messages`` does inside), without the chat message objects ``format_messages``
        builds around each text only for them to be read back here (half the CPU of a render)."""
        from langchain_core.prompts import StringPromptTemplate

        plan = []
        for spec, message in zip(self.spec.messages, self.template.messages, strict=True):
            template = getattr(message, "prompt", None)
            if not isinstance(template, StringPromptTemplate) or getattr(message, "additional_kwargs", None):
                return None
            plan.append((spec.role, template))
        return tuple(plan)


def _from_langchain(m: BaseMessage) -> RenderedMessage:
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

    role: Literal["system", "user", "assistant"]
    if isinstance(m, SystemMessage):
        role = "system"
    elif isinstance(m, AIMessage):
        role = "assistant"
    elif isinstance(m, HumanMessage):
        role = "user"
    else:  # pragma: no cover - the template only builds the three kinds above
        raise PromptError(f"unexpected message type {type(m).__name__}")
    return RenderedMessage(role=role, content=str(m.content))


_LC_ROLE = {"system": "system", "user": "human", "assistant": "ai"}


def default_root() -> Path:
    """The checkout's ``prompts/`` (beside ``pyproject.toml``), else the copy installed as ``voirdire.prompt_files``."""
    repo = Path(__file__).resolve().parents[2]
    if (repo / "pyproject.toml").is_file() and (repo / "prompts").is_dir():
        return repo / "prompts"
    # An installed copy: prompts/ ships as the data-only (namespace) package voirdire.prompt_files.
    spec = importlib.util.find_spec("voirdire.prompt_files")
    if spec is None or not spec.submodule_search_locations:
        raise PromptError("no prompts/ folder found: voirdire's prompt files are missing from this install")
    return Path(next(iter(spec.submodule_search_locations)))


def load_prompt_file(path: Path, name: str | None = None) -> Prompt:
    try:
        raw = path.read_bytes()
    except FileNotFoundError as exc:
        raise PromptError(f"{path}: prompt file not found") from exc
    try:
        data = yaml.safe_load(raw)
        spec = PromptFile.model_validate(data)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        raise PromptError(f"{path}{where}: invalid YAML: {exc}") from exc
    except ValidationError as exc:
        raise PromptError(f"{path}: not a prompt file: {exc}") from exc
    from langchain_core.prompts import ChatPromptTemplate

    template = ChatPromptTemplate.from_messages([(_LC_ROLE[m.role], m.template) for m in spec.messages])
    used = set(template.input_variables)
    if used != set(spec.variables):
        raise PromptError(
            f"{path}: declared variables {sorted(spec.variables)} differ from those the templates use "
            f"{sorted(used)} (literal braces must be doubled)"
        )
    return Prompt(
        name=name or path.stem,
        path=path,
        spec=spec,
        sha256=hashlib.sha256(raw).hexdigest(),
        template=template,
    )


class PromptLibrary:
    """Prompts of one protocol folder, addressed by file stem (``setup_chatgpt``) or ``folder/stem``."""

    def __init__(self, root: Path | None = None):
        self.root = root or default_root()
        self._loaded: dict[str, Prompt] = {}

    def get(self, name: str) -> Prompt:
        if name not in self._loaded:
            self._loaded[name] = load_prompt_file(self.root / f"{name}.yaml", name)
        return self._loaded[name]

    def hashes(self, folder: str | None = None) -> dict[str, str]:
        """Digests of the prompts loaded so far, of one protocol folder if given (recorded in the run header)."""
        prefix = f"{folder}/" if folder else ""
        return {n: p.sha256 for n, p in sorted(self._loaded.items()) if n.startswith(prefix)}

    def preload(self, folder: str) -> None:
        for path in sorted((self.root / folder).glob("*.yaml")):
            self.get(f"{folder}/{path.stem}")


@cache
def library() -> PromptLibrary:
    return PromptLibrary()
