"""Everything a protocol needs, from one import: ``from voirdire.kit import Protocol, Session, ...``.

A protocol is a paper's algorithm written against the Session. The kit's top level holds what every protocol uses:

- the algorithm: ``Protocol``, ``Session``, ``Ask`` (one ``Session.ask``'s options), ``Reply``, ``StateMachine``,
  ``Verdict``, ``Statistics`` (its verdict's outcome) and ``Guarantee`` (what a verdict's margin promises);
- reading replies: ``ReplySchema`` for structured replies, ``ParseError`` for a refusal; ``VoirdireError`` for an
  error a user caused;
- how it reads as a chat: ``DisplayHints``, ``StepView``, ``Column``, ``Views``, ``VerdictView``, ``Tone``;
- its report: ``Report``, ``ReportFold``;
- its command line: ``Registration`` (and the ``Card`` its entry point may name instead: what ``voirdire --help`` and
  ``voirdire list`` show of it, as data), ``CommandSpec``, ``ParamsCLI``, ``RunOutcome``;
- ``lazy_face``, which builds a protocol package's own face.

The rest is in sub-faces named for what they are for: ``voirdire.kit.replies`` (the closed-answer readers),
``voirdire.kit.budget`` (a call budget for ``--estimate``), ``voirdire.kit.reports`` (statistics and intervals),
``voirdire.kit.charts`` (charts as data), ``voirdire.kit.reproduce`` (a paper's tables), ``voirdire.kit.data``
(transcripts and datasets), ``voirdire.kit.cli`` (inputs and options), ``voirdire.kit.models`` (encoders, rule
agents, role settings) and ``voirdire.kit.runs`` (running sessions from a protocol's own code).

The names are the core packages' own (their faces: ``voirdire.session``, ``voirdire.replies``, ...); the kit only
gathers them, so a third-party protocol has one place to look.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from voirdire.base import lazy_face

if TYPE_CHECKING:
    from voirdire.base import VoirdireError as VoirdireError
    from voirdire.registry import (
        Card as Card,
        CommandSpec as CommandSpec,
        ParamsCLI as ParamsCLI,
        Registration as Registration,
        RunOutcome as RunOutcome,
    )
    from voirdire.replies import ParseError as ParseError, ReplySchema as ReplySchema
    from voirdire.reports import Report as Report, ReportFold as ReportFold
    from voirdire.session import (
        Ask as Ask,
        Protocol as Protocol,
        Reply as Reply,
        Session as Session,
        StateMachine as StateMachine,
        Statistics as Statistics,
    )
    from voirdire.transcript import (
        Column as Column,
        DisplayHints as DisplayHints,
        Guarantee as Guarantee,
        StepView as StepView,
        Tone as Tone,
        Verdict as Verdict,
        VerdictView as VerdictView,
        Views as Views,
    )

# Every name re-exported above (`X as X`) is exported, imported at its first use (voirdire.base.faces).
__getattr__, __dir__, _exports = lazy_face(__name__)
__all__ = [*_exports, "lazy_face"]  # the faces of protocol packages are built with it
