"""HTML rendering shared by the server and the static export: one Jinja environment that escapes everything.

Autoescape is on for every template, so model text, items, ids and step data are always escaped; nothing a
transcript holds is marked safe. Every value a template prints passes through ``voirdire.base.text.shown`` first
(the environment's ``finalize``), so control characters and bidirectional overrides show as visible stand-ins
(``␛``, ``<U+202E>``): a reply cannot reverse the text around it, and no page carries a NUL byte. Templates carry
no inline script and no event-handler attribute, so the Content-Security-Policy can forbid both.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from importlib import resources
from pathlib import PurePath
from typing import Any
from urllib.parse import quote

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from voirdire.base import shown
from voirdire.chat import Bubble, Chat, Turn
from voirdire.web.evidence import evidence_targets
from voirdire.web.template_cache import template_cache

# ANSI SGR foreground codes (display hints) -> the CSS colour classes of viewer.css
_ANSI = {str(n) for n in (*range(30, 38), *range(90, 98))}

# The server's policy: scripts and styles from the viewer itself only, no inline code, nothing from elsewhere.
SERVER_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)


def color_class(code: str | None) -> str:
    """``1;36`` -> ``c36``: the last foreground code of an SGR sequence, else the neutral class."""
    for part in reversed((code or "").split(";")):
        if part.strip() in _ANSI:
            return f"c{part.strip()}"
    return "c0"


def tokens(n: int | float) -> str:
    n = int(n)
    return f"{n / 1e6:.1f}M" if n >= 1e6 else f"{n / 1e3:.1f}k" if n >= 1e4 else str(n)


def seconds(s: float) -> str:
    if s >= 3600:
        return f"{s / 3600:.1f} h"
    return f"{s / 60:.1f} min" if s >= 120 else f"{s:.2f} s"


def when(value: str | datetime | None) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return value
    return value.strftime("%Y-%m-%d %H:%M:%S")


def pretty(value: Any) -> str:
    """A step or statistics value as text: strings as they are, the rest as compact JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


@dataclass
class Block:
    """A run of turns outside any lane, or lanes (LMvLM examinations) shown side by side."""

    turns: list[Turn]
    lanes: list[tuple[str, list[Turn]]]


def blocks(chat: Chat) -> list[Block]:
    out: list[Block] = []
    for lane, turns in chat.sections():
        if lane is None:
            out.append(Block(turns=turns, lanes=[]))
        elif out and out[-1].lanes and lane not in {name for name, _ in out[-1].lanes}:
            out[-1].lanes.append((lane, turns))
        else:
            out.append(Block(turns=[], lanes=[(lane, turns)]))
    return out


def sides(chat: Chat) -> dict[str, str]:
    """Which side of the chat each role speaks from: the header's roles in order, alternating."""
    order = list(dict.fromkeys([*chat.models, *chat.colors]))
    for t in chat.turns:
        if isinstance(t, Bubble) and t.sender not in ("moderator", "system"):
            order.append(t.sender)
    return {role: ("left", "right")[i % 2] for i, role in enumerate(dict.fromkeys(order))}


def rule_roles(chat: Chat) -> list[str]:
    """Roles that spoke without a model binding or a model call (rule agents)."""
    spoke = dict.fromkeys(t.sender for t in chat.turns if isinstance(t, Bubble) and t.kind in ("reply", "relay"))
    return [r for r in spoke if r not in chat.models and r not in chat.totals and r not in ("moderator", "system")]


def bubble_model(chat: Chat, b: Bubble) -> str:
    """What the hover over a role's name says: the model that produced this message, else the role's binding."""
    if b.call is not None:
        return b.call.model
    return chat.models.get(b.sender, "a rule of the protocol" if b.sender not in ("moderator", "system") else "")


@cache
def asset(name: str) -> str:
    return resources.files("voirdire.web").joinpath("static", name).read_text(encoding="utf-8")


def style_hash(css: str) -> str:
    """The CSP source that admits exactly this inline stylesheet."""
    return "'sha256-" + base64.b64encode(hashlib.sha256(css.encode()).digest()).decode() + "'"


def visible(value: Any) -> Any:
    """What a template prints: text with its controls made visible; our own markup (macros, the stylesheet) as is."""
    return value if isinstance(value, Markup) or not isinstance(value, str) else shown(value)


def slug(value: str) -> str:
    """A name as a CSS class fragment."""
    return re.sub(r"[^A-Za-z0-9_-]+", "-", value)[:60]


@cache
def environment() -> Environment:
    env = Environment(
        loader=PackageLoader("voirdire.web", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=visible,
        bytecode_cache=template_cache(),  # a fresh process's first page compiles nothing compiled before
    )
    env.filters.update(
        color=color_class,
        tokens=tokens,
        seconds=seconds,
        when=when,
        pretty=pretty,
        slug=slug,
        q=lambda v: quote(str(v), safe=""),
        folder=lambda p: PurePath(str(p)).parent.name,  # runs of one file name in two folders: told apart by it
        basename=lambda p: PurePath(str(p)).name,
    )
    env.globals.update(
        blocks=blocks,
        sides=sides,
        bubble_model=bubble_model,
        rule_roles=rule_roles,
        is_bubble=lambda t: isinstance(t, Bubble),
        evidence_targets=evidence_targets,  # the turn each evidence line names (voirdire.web.evidence)
        kind=lambda t: type(t).__name__.lower(),
    )
    return env


def render(template: str, **context: Any) -> str:
    return environment().get_template(template).render(**context)


def inline_css() -> Markup:
    """The viewer's stylesheet for a self-contained page (our own file, never transcript text)."""
    return Markup(asset("viewer.css"))
