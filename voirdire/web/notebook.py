"""HTML for Jupyter: a verdict, a session, a run (a transcript or a ``RunResult``), a report, a comparison and a
certificate (``voirdire calibrate``'s) as a cell shows them (``_repr_html_``, ``voirdire.base.HtmlDisplay``). The
chat is the viewer's (``_chat.html``, text escaped by the viewer's Jinja environment); the output holds a stylesheet of
its own, scoped to it, and no script.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from voirdire.analysis import Comparison
from voirdire.certificate import Certificate
from voirdire.chat import chat_of
from voirdire.registry import registrations
from voirdire.reports import Report
from voirdire.runner import RunResult
from voirdire.transcript import ModelCall, RunHeader, SessionRecord, Transcript, Verdict, load
from voirdire.web.render import render

SHOWN_CHATS = 5
"""The chats a run shows below its table of sessions; the viewer shows all of them."""

_CSS = """
.voirdire-nb { font-family: system-ui, sans-serif; font-size: 13px; line-height: 1.4; max-width: 60em; }
.voirdire-nb .turn.bubble { border-radius: 8px; padding: 4px 10px; margin: 4px 0; max-width: 85%;
  background: #f1f3f5; border: 1px solid #dee2e6; }
.voirdire-nb .turn.bubble.right { margin-left: auto; background: #e7f1ff; }
.voirdire-nb .turn.divider { color: #6c757d; text-align: center; margin: 6px 0; font-size: 12px; }
.voirdire-nb .turn.prompt, .voirdire-nb .muted { color: #6c757d; }
.voirdire-nb .who .role, .voirdire-nb .role { font-weight: 600; }
.voirdire-nb .text { white-space: pre-wrap; }
.voirdire-nb .meta { color: #6c757d; font-size: 11px; }
.voirdire-nb .verdict { border-top: 2px solid #adb5bd; margin-top: 8px; }
.voirdire-nb .verdict.accepted .decision { color: #2b8a3e; }
.voirdire-nb .verdict.rejected .decision { color: #c92a2a; }
.voirdire-nb table { border-collapse: collapse; margin: 4px 0; }
.voirdire-nb th, .voirdire-nb td { border: 1px solid #dee2e6; padding: 2px 6px; text-align: left; }
.voirdire-nb .chip { background: #f1f3f5; border-radius: 4px; padding: 0 4px; margin-left: 4px; }
.voirdire-nb pre.report { background: #f8f9fa; padding: 6px; white-space: pre-wrap; }
"""

_keys = itertools.count(1)  # ids of one output's elements apart from another's in the same notebook


def html_of(obj: object) -> str | None:
    """The HTML a cell shows for ``obj``; None for an object this does not draw (Jupyter then shows its text)."""
    if isinstance(obj, Verdict):
        return _page(report=verdict_text(obj), title=f"verdict · session {obj.session_id}")
    if isinstance(obj, SessionRecord):
        return _page(chats=[chat_of(obj)], title=f"session {obj.session_id}")
    if isinstance(obj, Transcript):
        return _run(obj, list(obj.sessions))
    if isinstance(obj, RunResult):
        return _run(load(obj.out), obj.session_ids, result=obj) if Path(obj.out).is_file() else None
    if isinstance(obj, Report | Comparison | Certificate):
        return _page(report=obj.text(), title=type(obj).__name__.lower())
    return None


def verdict_text(v: Verdict) -> str:
    """A verdict as a cell shows it: its decision, its evidence, and its short statistics (the text it judged)."""
    said = {True: "accepted", False: "rejected", None: "neither accepted nor rejected"}[v.accepted]
    lines = [f"Verdict: {v.decision} ({said}) · session {v.session_id}"]
    shown = {k: x for k, x in v.statistics.items() if isinstance(x, str | int | float | bool) and len(str(x)) <= 300}
    lines += [f"  {k}: {x}" for k, x in shown.items()]
    if v.guarantee is not None:
        lines.append(f"guarantee: {v.guarantee.statement}")
    if v.evidence:
        lines += ["evidence:", *[f"  - {e}" for e in v.evidence]]
    return "\n".join(lines)


def _page(**context: Any) -> str:
    given = {"title": "", "roles": {}, "report": "", "rows": [], "chats": [], "more": 0}
    return render("notebook.html", css=_CSS, key=next(_keys), **(given | context))


def _run(transcript: Transcript, session_ids: Sequence[str], result: RunResult | None = None) -> str:
    """A run: its protocol and models, its report, a row per session, and the first sessions as chats."""
    header = transcript.header
    sessions = [transcript.sessions[s] for s in session_ids if s in transcript.sessions]
    rows = []
    for session in sessions:
        verdict = session.verdict
        calls = session.of_kind(ModelCall)
        tokens = sum(c.usage.prompt_tokens + c.usage.completion_tokens for c in calls)
        rows.append((session.session_id, verdict.decision if verdict else None, verdict.accepted if verdict else None,
                     f"{tokens:,}"))  # fmt: skip
    title = f"{header.protocol} · {Path(transcript.path).name}" if header else Path(transcript.path).name
    if result is not None:
        title += f" · {len(result.verdicts)} verdicts, {len(result.errors)} errors in {result.elapsed_s:.1f} s"
    return _page(
        title=title,
        roles={role: binding.spec for role, binding in header.roles.items()} if header else {},
        report=_report_text(transcript, header),
        rows=rows,
        chats=[chat_of(s, _header_of(transcript, s)) for s in sessions[:SHOWN_CHATS]],
        more=max(0, len(sessions) - SHOWN_CHATS),
    )


def _header_of(transcript: Transcript, session: SessionRecord) -> RunHeader | None:
    return next((h for h in transcript.headers if h.run_id == session.run_id), transcript.header)


def _report_text(transcript: Transcript, header: RunHeader | None) -> str:
    reg = registrations().get(header.protocol) if header else None
    return (reg.report or reg.fold)(transcript).text() if reg is not None else ""
