"""Every reply reader, fed generated replies: it answers or refuses, never raises anything else.

The replies come from a seeded generator (the same ones every run): short mixes of the words, marks and numbers
the readers look for, and a few of 10k and 100k characters, many of them one unit repeated (a run of dashes, of
"no ", of digits, of open braces), which is where a reader that rescans or backtracks turns quadratic. The suite
reads every unit's and a fixed quarter of the rest (``in_the_suite``). That each
reads them in time linear in the reply's length is a timing claim, measured by ``bench/reply_readers_linear.py``
on all 10,000 (the test suite asserts on no clock).
"""

from __future__ import annotations

import asyncio
import random
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any, ClassVar

import pytest
from pydantic import BaseModel, Field

from voirdire.models.scripted import ScriptedChatCompletionClient
from voirdire.protocols.cross_examination.parsing import (
    fill_blank,
    parse_decision,
    parse_yes_no,
    says_idk,
    split_questions,
)
from voirdire.protocols.no_data.llm import datapoint_schema, parse_datapoint, parse_label
from voirdire.protocols.oracle_checker.paraphrase import YesNo, read_yes_no
from voirdire.protocols.qa_entailment.parsing import (
    CLOSENESS_SCALE,
    DIFFICULTY_SCALE,
    ENTAILMENT_LABELS,
    ParseFailure,
    parse_entailment,
    parse_score,
    parse_statement,
)
from voirdire.protocols.qa_entailment.partial_marks import InferenceExplanation, parse_explanation
from voirdire.replies import Labels, Polar, read_label, read_number, read_polar, read_yes_no as core_yes_no
from voirdire.replies.schema import ParseError, ReplySchema
from voirdire.runner import run_in_memory
from voirdire.session.machine import StateMachine
from voirdire.session.protocol import LONG_REPLY_CHARS, Protocol, Session
from voirdire.transcript import Verdict

SEED = 20250613
REPLIES = 10_000
LONG = 100_000

_VOCABULARY = (
    "the claim is correct incorrect not no yes Yes No never neither nor hardly but however although because if "
    "unless therefore so in conclusion verdict: I think believe do don't doesn't isn't cannot can't may might could "
    "would sure certain certainly absolutely of course doubt no doubt question questions follow-up further any more "
    "have I'm sorry know entailment contradiction neutral Entailment not entailment answer: Answer is Label: S: Q: "
    "A: statement Score: rating: out of 5 / Very easy hard completely right wrong mostly the AI-generated answer "
    "Step step [[info]] [[assumption]] [[ info ]] |label| |datapoint| |reasons| 0 1 01 0110 101010101010 "
    '____ [MASK] <mask> ``` ```json { } [ ] "answer": "Yes" "No" null true \'answer\': {"score": 4} '
    "Ce n'est pas une est oui non nein ja sí equivalent paraphrases differ"
)
WORDS = _VOCABULARY.split()
MARKS = [*".,;:!?-—–…()[]{}\"'“”‘’`*_#>|/\\\n\t ", "\n\n", "1.", "2)", "a.", "- ", "* ", "• ", "Q1:", "  "]
EXOTIC = ["é", "ß", "中文", "😀", "\u200b", "\x00", "\ufeff", "\u2028", "\r\n", "\x1b[31m", "İ", "ﬁ"]
# Units repeated into the long replies: runs that make a rescanning or backtracking reader quadratic.
UNITS = (
    "—", "— ", "-", " ", "\n", ":", "?", "'", '"', "“", "(", ",", ", ", ".", "0", "9", "01", "1. ", "1. Who?\n",
    "no ", "not ", "yes ", "correct ", "incorrect ", "the claim is not ", "no no yes ", "but ", "if ", "a:", "Q: ",
    "entailment ", "no entailment ", "not neutral\n", "Score: 4\n", "[[info]]", "step 1. ", "|label|", "|label| 1",
    "|datapoint|", "|datapoint| 0", "{", "[", '{"answer": ', '"answer"', "```", "____ ", "I don't know ", "é",
    '{"answer": "yes"} ', "{'answer': 'no', ", '"answer": "', "est pas ", "Correct? No. ", "Incorrect is not ",
)  # fmt: skip


def _short(rng: random.Random) -> str:
    parts: list[str] = []
    for _ in range(rng.randrange(0, 40)):
        r = rng.random()
        if r < 0.6:
            parts.append(rng.choice(WORDS))
        elif r < 0.85:
            parts.append(rng.choice(MARKS))
        elif r < 0.93:
            parts.append(str(rng.randrange(0, 10 ** rng.randrange(1, 8))))
        elif r < 0.97:
            parts.append(rng.choice(EXOTIC))
        else:
            parts.append(rng.choice("0123456789") * rng.randrange(100, 6000))  # numbers past int()'s 4,300 digits
    return rng.choice(("", " ", "\n", " ")).join(parts)


# What a long reply may open with, so that a reader gets past its first line before the repeated unit.
OPENINGS = ("", "Entailment\n", "4\n", "1. Who wrote it?\n", "The claim is correct. ", "Yes, ", "|label| ", "{")


def _long(rng: random.Random, size: int, unit: str | None, opening: str) -> str:
    if unit is not None:
        return opening + (unit * (size // len(unit) + 1))[: size - len(opening)]
    out: list[str] = [opening]
    length = len(opening)
    while length < size:
        piece = _short(rng) + rng.choice(("\n", " ", ". "))
        out.append(piece)
        length += len(piece)
    return "".join(out)[:size]


@cache
def replies(opening: str = "") -> tuple[str, ...]:
    """10,000 replies: every unit repeated to 20k characters, 16 replies of 100k characters (most of them a unit
    repeated), 64 of 10k, the rest short. Half the long ones start with ``opening`` (what gets a reader past its
    first line), the other half with a random one."""
    rng = random.Random(SEED)
    units = list(UNITS)
    rng.shuffle(units)
    out = []
    for i in range(REPLIES):
        start = opening if i % 2 else rng.choice(OPENINGS)
        if i < len(units):
            out.append(_long(rng, 20_000, units[i], start))
        elif i % 625 == 100:
            out.append(_long(rng, LONG, rng.choice(units) if i % 3 else None, start))
        elif i % 125 == 2:
            out.append(_long(rng, 10_000, rng.choice((None, *units)), start))
        else:
            out.append(_short(rng))
    rng.shuffle(out)
    return tuple(out)


@dataclass(frozen=True)
class Reader:
    """A reply reader, and what it may give back: a value ``accepts``, or ``ParseError`` when ``raises``."""

    read: Callable[[str], Any]
    accepts: Callable[[Any], bool]
    raises: bool = False
    opening: str = ""  # what gets the reader past a reply's first line


def _is(*types: type) -> Callable[[Any], bool]:
    return lambda v: isinstance(v, types)


class Reasons(BaseModel):
    """A reply schema with an object shape, as a protocol would declare one."""

    verdict: bool
    reasons: list[str] = Field(max_length=5)
    confidence: int = Field(ge=1, le=5)


YES_NO = ReplySchema.yes_no()
CHOICE = ReplySchema.choice("correct", "incorrect")
REASONS = ReplySchema.of(Reasons)
BITS = datapoint_schema("generate", {}, 12)
# The core reader with words of its own, as a protocol would bring them.
VERDICT = Polar(("correct", "right"), ("incorrect", "wrong"), ("claim", "statement"))
CHOICE_OF_3 = Labels(
    names=("a", "b", "c"),
    forms=(("alpha", "a", "noun"), ("implies", "a", "verb"), ("implied", "a", "passive"), ("beta", "b", "noun"),
           ("clashes", "b", "symmetric"), ("clashed", "b", "symmetric_passive"), ("gamma", "c", "adjective")),
    source=("premise",),
    target=("hypothesis",),
    echo_fields=("premise",),
)  # fmt: skip

READERS: dict[str, Reader] = {
    # cross-examination (LMvLM): ParseError is the refusal
    "parse_decision": Reader(
        parse_decision, lambda v: v in ("correct", "incorrect"), raises=True, opening="The claim is correct. "
    ),
    "parse_yes_no": Reader(parse_yes_no, _is(bool), raises=True, opening="Yes, "),
    "split_questions": Reader(split_questions, lambda v: isinstance(v, list) and v, raises=True, opening="1. Who?\n"),
    "says_idk": Reader(says_idk, _is(bool), opening="I don't know "),
    "fill_blank": Reader(lambda t: fill_blank("Lionel Hampton plays ____ music.", t), _is(str)),
    "fill_blank_query": Reader(lambda t: fill_blank(t, "Jazz music."), _is(str)),
    # QA entailment: a ParseFailure is the refusal
    "parse_entailment": Reader(
        parse_entailment, lambda v: v in ENTAILMENT_LABELS or isinstance(v, ParseFailure), opening="Entailment\n"
    ),
    "parse_statement": Reader(parse_statement, _is(str, ParseFailure), opening="S: Paris is the capital.\n"),
    "parse_score": Reader(
        parse_score, lambda v: isinstance(v, ParseFailure) or (isinstance(v, int) and 1 <= v <= 5), opening="4\n"
    ),
    "parse_score_difficulty": Reader(
        lambda t: parse_score(t, scale=DIFFICULTY_SCALE), _is(int, ParseFailure), opening="1: Very easy\n"
    ),
    "parse_score_closeness": Reader(
        lambda t: parse_score(t, scale=CLOSENESS_SCALE), _is(int, ParseFailure), opening="5\n"
    ),
    "parse_explanation": Reader(parse_explanation, _is(InferenceExplanation, ParseFailure), opening="1. Step one\n"),
    # No-Data: None is the refusal
    "parse_label": Reader(parse_label, lambda v: v in (0, 1, None), opening="|label| "),
    "parse_datapoint": Reader(
        lambda t: parse_datapoint(t, 12), lambda v: v is None or len(v) == 12, opening="|datapoint| "
    ),
    "parse_datapoint_any": Reader(parse_datapoint, lambda v: v is None or set(v) <= {"0", "1"}, opening="|datapoint|"),
    # the core reader of closed answers (voirdire.replies): ParseError is the refusal
    "core_yes_no": Reader(core_yes_no, lambda v: v in ("yes", "no"), raises=True, opening="Yes, "),
    "core_yes_no_content": Reader(
        lambda t: core_yes_no(t, VERDICT), lambda v: v in ("yes", "no"), raises=True, opening='{"answer": "no"}'
    ),
    "core_polar": Reader(lambda t: read_polar(t, VERDICT), lambda v: v in ("correct", "incorrect"), raises=True),
    "core_label": Reader(lambda t: read_label(t, CHOICE_OF_3), lambda v: v in ("a", "b", "c"), raises=True),
    "core_number": Reader(
        lambda t: read_number(t, 1, 5, DIFFICULTY_SCALE, (CLOSENESS_SCALE,)),
        lambda v: isinstance(v, int) and 1 <= v <= 5,
        raises=True,
        opening="4\n",
    ),
    # oracle-checker: Prompts 5-6, through the core reader
    "oracle_read_yes_no": Reader(read_yes_no, _is(YesNo), raises=True, opening='{"answer": "yes", '),
    # reply schemas (structured mode): ParseError is the refusal
    "schema_yes_no": Reader(YES_NO.validate, _is(bool), raises=True, opening="```json\n"),
    "schema_choice": Reader(CHOICE.validate, lambda v: v in ("correct", "incorrect"), raises=True),
    "schema_object": Reader(REASONS.validate, _is(Reasons), raises=True, opening='{"reasons": '),
    "schema_bits": Reader(BITS.validate, lambda v: len(v.datapoint) == 12, raises=True),
}


def in_the_suite(opening: str = "") -> tuple[str, ...]:
    """The replies the suite reads: every unit repeated to 20k characters, and a fixed quarter of the rest (2,500-odd
    replies; reading all 10,000 with each of 27 readers took four minutes of the suite's CPU, most of it on replies
    that differ only by chance). ``bench/reply_readers_linear.py`` reads all 10,000, timed."""
    return tuple(t for n, t in enumerate(replies(opening)) if len(t) == 20_000 or n % 4 == 0)


def read_all(reader: Reader) -> int:
    """Read the suite's replies; each is answered with a value ``reader`` may give, or refused. The number read."""
    texts = in_the_suite(reader.opening)
    for n, text in enumerate(texts):
        try:
            value = reader.read(text)
        except ParseError:
            if not reader.raises:
                raise
        else:
            assert reader.accepts(value), f"reply {n} ({len(text)} chars, {text[:60]!r}...): read as {value!r}"
    return len(texts)


def test_generated_replies_are_deterministic_and_include_long_ones() -> None:
    texts = replies()
    assert len(texts) == REPLIES
    assert sum(len(t) == LONG for t in texts) == REPLIES // 625
    assert sum(len(t) == 20_000 for t in texts) >= len(UNITS)
    assert texts == replies.__wrapped__()  # the same seed gives the same replies


@pytest.mark.parametrize("name", list(READERS))
def test_reader_answers_or_refuses(name: str) -> None:
    assert read_all(READERS[name]) == len(in_the_suite(READERS[name].opening))


def test_the_suite_reads_every_unit_and_a_quarter_of_the_rest() -> None:
    texts = in_the_suite()
    assert sum(len(t) == 20_000 for t in texts) == len(UNITS) and len(texts) > REPLIES // 4
    assert sum(len(t) == LONG for t in texts) >= 2  # some of the 100k-character replies too


# ---------------------------------------------------------------------------------------------------- off the loop


class _Item(BaseModel):
    id: str


class _NoParams(BaseModel):
    pass


class _Probe(Protocol[_Item, _NoParams]):
    """One role asked twice, its replies read by ``read`` (which notes the thread it runs on). The long reply's read
    waits until the event loop has run another coroutine meanwhile (at most 10 s): on the loop's own thread it
    could not, and would give up."""

    name = "probe"
    roles = ("judge",)
    machine = StateMachine(initial=("ask",), edges={"ask": ("done",), "done": ()})
    Item, Params = _Item, _NoParams
    prompt_folder = "probe"  # sends literal text: no prompt file is read
    threads: ClassVar[list[str]] = []
    reading = threading.Event()  # the long reply's read has begun
    loop_ran = threading.Event()  # the loop ran another coroutine after that
    saw_loop_run: ClassVar[list[bool]] = []

    def item_id(self, item: _Item) -> str:
        return item.id

    @staticmethod
    def read(text: str) -> int:
        _Probe.threads.append(threading.current_thread().name)
        if len(text) > LONG_REPLY_CHARS:
            _Probe.reading.set()
            _Probe.saw_loop_run.append(_Probe.loop_ran.wait(10))
        return len(text)

    async def run(self, item: _Item, session: Session) -> Verdict:
        session.enter("ask")
        for _ in range(2):
            await session.send("judge", "rule", parse=self.read)
        session.enter("done")
        return session.verdict("read", accepted=True)


async def test_long_replies_are_read_off_the_event_loop() -> None:
    """A long reply is read in a worker thread while other coroutines go on; a short one on the loop itself."""

    async def watcher() -> None:  # another coroutine: tells the reader it ran while the read was under way
        while not _Probe.reading.is_set():
            await asyncio.sleep(0.001)
        _Probe.loop_ran.set()

    _Probe.threads.clear()
    _Probe.saw_loop_run.clear()
    _Probe.reading.clear()
    _Probe.loop_ran.clear()
    client = ScriptedChatCompletionClient(["x" * (LONG_REPLY_CHARS + 1), "short"])
    task = asyncio.create_task(watcher())
    try:
        verdicts, _ = await run_in_memory(_Probe(), [_Item(id="a")], clients={"judge": client})
    finally:
        task.cancel()
    assert verdicts[0].decision == "read"
    assert _Probe.threads[0] != threading.current_thread().name  # the long reply: a worker thread
    assert _Probe.threads[1] == threading.current_thread().name  # the short one: the loop's thread
    assert _Probe.saw_loop_run == [True]  # the loop ran the watcher while the long reply was being read
