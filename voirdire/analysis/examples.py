"""``voirdire reproduce paper-examples``: every worked example the papers print, replayed through its protocol.

Each installed protocol may name a folder of its paper's examples (``Registration.examples``; the files are
``voirdire.reports.PaperExample``). An example is run as a session of the real protocol, its roles played by
scripted models that give the paper's replies in order, its transcript written like any run's. Per example the
table says the paper's conclusion, voirdire's verdict, whether they agree, and whether the dialogue followed the
paper's stages: the states the session entered are the paper's, and every reply the file gives was asked for.
Nothing is tuned per example: a conclusion the strict reader does not accept is shown as voirdire reads it, with
the example's note.
"""

from __future__ import annotations

import asyncio
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from voirdire.base import VoirdireError, write_atomic
from voirdire.models import Script, ScriptedChatCompletionClient
from voirdire.reports import ExampleError, PaperExample, load_examples
from voirdire.transcript import ErrorEvent, ParseFailure, Transition, load

NAME = "paper-examples"
WHAT = "every worked example the papers print with their models' replies, replayed through its protocol"


@dataclass
class ExampleOutcome:
    """One example replayed: voirdire's verdict beside the paper's conclusion, and the stages it went through."""

    example: PaperExample
    transcript: Path
    decision: str | None = None
    got: dict[str, Any] = field(default_factory=dict)  # each expected field as the verdict has it
    shape: dict[str, Any] = field(default_factory=dict)  # each ``follows`` field as the verdict has it
    stages: list[str] = field(default_factory=list)
    unused: dict[str, int] = field(default_factory=dict)  # replies the file gives that nobody asked for
    refusals: list[str] = field(default_factory=list)  # the reader's recorded refusals, "role: error"
    error: str | None = None

    @property
    def agrees(self) -> bool:
        return self.error is None and all(_same(self.got.get(k), v) for k, v in self.example.expect.items())

    @property
    def followed(self) -> bool:
        same = all(_same(self.shape.get(k), v) for k, v in self.example.follows.items())
        return self.error is None and self.stages == self.example.stages and not any(self.unused.values()) and same

    def as_dict(self) -> dict[str, Any]:
        ex = self.example
        return {
            "name": ex.name, "protocol": ex.protocol, "where": ex.where, "paper": ex.paper, "models": ex.models,
            "conclusion": ex.conclusion, "expect": ex.expect, "got": self.got, "decision": self.decision,
            "agrees": self.agrees, "stages_followed": self.followed, "stages": self.stages,
            "paper_stages": ex.stages, "follows": ex.follows, "shape": self.shape,
            "unprinted_replies": ex.unprinted, "unused_replies": self.unused,
            "refusals": self.refusals, "error": self.error, "note": ex.note, "transcript": str(self.transcript),
        }  # fmt: skip


def _same(got: Any, want: Any) -> bool:
    if isinstance(want, float) and isinstance(got, int | float):
        return math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-9)
    return bool(got == want)


def examples() -> dict[str, PaperExample]:
    """Every example the installed protocols declare, by name."""
    from voirdire.registry import registrations

    out: dict[str, PaperExample] = {}
    folders = dict.fromkeys(reg.examples for reg in registrations().values() if reg.examples is not None)
    for folder in folders:
        for ex in load_examples(folder):  # type: ignore[arg-type]
            if ex.name in out:
                raise ExampleError(f"{ex.path}: example {ex.name!r} is also {out[ex.name].path}")
            out[ex.name] = ex
    return out


def find(name: str, found: dict[str, PaperExample] | None = None) -> PaperExample:
    """An example by its name, or by the end or start of its name when only one matches ("table-13")."""
    found = examples() if found is None else found
    if name in found:
        return found[name]
    close = [n for n in found if n.endswith(f"-{name}") or n.startswith(name)]
    if len(close) == 1:
        return found[close[0]]
    known = ", ".join(found)
    which = f"it could be {', '.join(close)}" if close else f"the examples are {known}"
    raise ExampleError(f"--example: no single example {name!r}; {which}")


def _clients(ex: PaperExample) -> dict[str, ScriptedChatCompletionClient]:
    roles = set(ex.replies) | set(ex.default)
    out = {}
    for role in sorted(roles):
        script = Script(replies=[r.text for r in ex.replies.get(role, [])], default=ex.default.get(role))
        out[role] = ScriptedChatCompletionClient(script, name=f"{ex.name}:{role}")
    return out


def _path(data: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        if isinstance(data, dict):
            data = data.get(part)
        elif isinstance(data, list) and part.isdigit() and int(part) < len(data):
            data = data[int(part)]
        else:
            return None
    return data


async def replay(ex: PaperExample, out: Path) -> ExampleOutcome:
    """Run one example through its protocol with the paper's replies; its transcript is ``out``."""
    from voirdire.registry import get
    from voirdire.runner import run_protocol

    proto = get(ex.protocol).protocol(get(ex.protocol).protocol.Params(**ex.params))
    item = proto.item_from_record(dict(ex.item))
    clients = _clients(ex)
    outcome = ExampleOutcome(ex, out)
    result = await run_protocol(proto, [item], out=out, clients=clients, resume=False, progress=False)
    (session,) = load(out).sessions.values()
    outcome.stages = [e.to_state for e in session.events if isinstance(e, Transition)]
    outcome.refusals = [f"{e.role}: {e.error}" for e in session.events if isinstance(e, ParseFailure)]
    errors = [e for e in session.events if isinstance(e, ErrorEvent)]
    if result.errors or errors:
        outcome.error = errors[0].message if errors else str(result.errors[0])
    for role, client in clients.items():
        asked = len(client.seen)
        given = len(ex.replies.get(role, []))
        if asked < given:
            outcome.unused[role] = given - asked
    verdict = session.verdict
    if verdict is not None:
        data = verdict.model_dump(mode="json")
        outcome.decision = verdict.decision
        outcome.got = {k: _path(data, k) for k in ex.expect}
        outcome.shape = {k: _path(data, k) for k in ex.follows}
    return outcome


def run_examples(chosen: list[PaperExample], folder: Path) -> list[ExampleOutcome]:
    """Replay ``chosen`` one after another, each transcript ``folder/NAME.jsonl``."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise VoirdireError(f"--out {folder}: cannot create the folder ({exc.strerror})") from None

    async def all_of() -> list[ExampleOutcome]:
        return [await replay(ex, folder / f"{ex.name}.jsonl") for ex in chosen]

    return asyncio.run(all_of())


def _brief(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3g}"
    if isinstance(value, list):
        return "[" + ", ".join(_brief(v) for v in value) + "]"
    text = str(value)
    return text if len(text) <= 24 else text[:23] + "…"


def _shown(values: dict[str, Any]) -> str:
    """A row's cell: the decision first, then each further field briefly ("inconsistent, scores [0.667, 0.667]")."""
    decision = [_brief(v) for k, v in values.items() if k == "decision"]
    rest = [f"{k.rsplit('.', 1)[-1]} {_brief(v)}" for k, v in values.items() if k != "decision"]
    return ", ".join(decision + rest) or "no verdict"


def examples_table(outcomes: list[ExampleOutcome]) -> str:
    """The paper's conclusion and voirdire's verdict per example, whether they agree and whether the dialogue
    followed the paper's stages; then a note for every example that does not agree or did not follow them."""
    rows = [("example", "where", "paper's conclusion", "voirdire", "agrees", "stages")]
    for o in outcomes:
        ex = o.example
        got = o.got if o.decision is not None else {}
        shown = _shown(got) + ("" if "decision" in ex.expect or o.decision is None else f" (verdict: {o.decision})")
        rows.append((ex.name, ex.where, _shown(ex.expect), shown, "yes" if o.agrees else "no",
                     "followed" if o.followed else "not followed"))  # fmt: skip
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    agree = sum(o.agrees for o in outcomes)
    followed = sum(o.followed for o in outcomes)
    lines += ["", f"{agree} of {len(outcomes)} agree with the paper's conclusion; {followed} of {len(outcomes)} "
              "followed the paper's stages."]  # fmt: skip
    for o in outcomes:
        if o.agrees and o.followed:
            continue
        why = [f"{o.example.name}: the paper concludes {o.example.conclusion!r}."]
        if o.error:
            why.append(f"The replay stopped: {o.error}")
        if not o.followed and o.stages != o.example.stages:
            why.append(f"Stages: {' → '.join(o.stages)}; the paper's: {' → '.join(o.example.stages)}.")
        differ = {k: (o.shape.get(k), v) for k, v in o.example.follows.items() if not _same(o.shape.get(k), v)}
        if differ:
            why += [f"{k.rsplit('.', 1)[-1]}: {got} where the paper has {want}." for k, (got, want) in differ.items()]
        if o.unused:
            why.append("Replies never asked for: " + ", ".join(f"{r} {n}" for r, n in o.unused.items()) + ".")
        if not o.agrees and o.refusals:
            why.append(f"The reader refused: {o.refusals[-1]}.")
        if o.example.note:
            why.append(o.example.note)
        lines += ["", "  " + " ".join(why)]
    return "\n".join(lines)


def unprinted(ex: PaperExample) -> list[str]:
    """The replies the paper does not print, each with where it comes from, and each role's default reply."""
    lines = []
    for role, replies in ex.replies.items():
        lines += [f"{role} reply {k}: {r.text[:60]!r}: {r.why}" for k, r in enumerate(replies, 1) if not r.printed]
    lines += [f"{role}, every further call: {text!r}" for role, text in ex.default.items()]
    return lines


def write_examples(outcomes: list[ExampleOutcome], path: Path) -> Path:
    data = {"name": NAME, "what": WHAT, "agree": sum(o.agrees for o in outcomes),
            "followed": sum(o.followed for o in outcomes), "examples": [o.as_dict() for o in outcomes]}  # fmt: skip
    write_atomic(path, json.dumps(data, indent=1, ensure_ascii=False) + "\n", "reproduce")
    return path


__all__ = [
    "NAME", "WHAT", "ExampleOutcome", "examples", "examples_table", "find", "replay", "run_examples", "unprinted",
    "write_examples",
]  # fmt: skip
