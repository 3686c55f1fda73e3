"""A synthetic cross-examination transcript of N sessions in the real schema, for the viewer benchmark.

Each session is what LMvLM writes: the claim, Stage 1 questions answered one at a time, follow-up rounds, a parse
failure now and then, the decision and the verdict, with model calls (tokens, latency) for every reply. Sessions are
interleaved in pairs, as a run with ``--concurrency 2`` writes them.

    python bench/viewer_transcript.py --sessions 10000 --out /tmp/big.jsonl
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Iterator
from pathlib import Path

from voirdire.transcript import (
    DisplayHints,
    Message,
    ModelCall,
    ParseFailure,
    RoleBinding,
    RunHeader,
    SessionStart,
    TokenUsage,
    TranscriptWriter,
    Transition,
    Verdict,
    new_run_id,
)

TRANSITIONS = {
    "[*]": ["claim", "setup"],
    "claim": ["setup"],
    "setup": ["answer", "decision"],
    "answer": ["followup_ask", "decision"],
    "followup_ask": ["followup_questions", "decision"],
    "followup_questions": ["answer", "decision"],
    "decision": ["setup", "done"],
    "done": [],
}
DISPLAY = DisplayHints(
    colors={"examiner": "36", "examinee": "33"},
    item_fields=("question", "claim"),
    gold_fields=("answers",),
    quiet_states=("answer", "done"),
)
WORDS = ("the", "of", "a", "capital", "river", "mountain", "city", "born", "wrote", "founded", "year", "country")


def header(run_id: str) -> RunHeader:
    return RunHeader(
        run_id=run_id,
        protocol="cross_examination",
        parameters={"prompt_set": "chatgpt", "max_followup_rounds": 5, "examinations": 1},
        roles={
            "examiner": RoleBinding(spec="openai:gpt-4o-mini", temperature=0.0, max_tokens=256),
            "examinee": RoleBinding(spec="openai-compatible:llama3@http://127.0.0.1:8080/v1", max_tokens=256),
        },
        dataset="synthetic",
        transitions=TRANSITIONS,
        display=DISPLAY,
        paper="Cohen et al. 2023, LM vs LM (synthetic benchmark transcript)",
    )


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def session_events(run_id: str, sid: str, rng: random.Random) -> Iterator[object]:
    """The events of one session, in the order LMvLM writes them."""
    seq = 0
    stage: str | None = None
    turn: int | None = None

    def base() -> dict[str, object]:
        nonlocal seq
        seq += 1
        return {"run_id": run_id, "session_id": sid, "seq": seq, "stage": stage, "turn": turn}

    def ask(role: str, prompt: str, content: str, reply: str, sender: str = "moderator", quote: str | None = None):
        yield Message(**base(), sender=sender, receiver=role, content=content, prompt=prompt, quote=quote)
        usage = TokenUsage(prompt_tokens=rng.randint(50, 600), completion_tokens=rng.randint(3, 60))
        model = "openai:gpt-4o-mini" if role == "examiner" else "openai-compatible:llama3@http://127.0.0.1:8080/v1"
        yield ModelCall(
            **base(),
            role=role,
            model=model,
            request_digest=f"sha256:{rng.getrandbits(256):064x}",
            response=reply,
            usage=usage,
            latency_s=round(rng.uniform(0.2, 2.5), 3),
            retries=1 if rng.random() < 0.02 else 0,
            finish_reason="stop",
        )
        yield Message(**base(), sender=role, receiver="moderator", content=reply, prompt=prompt)

    def enter(state: str, frm: str | None) -> Transition:
        return Transition(**base(), from_state=frm, to_state=state)

    question = f"Question {sid}: {sentence(rng, 8)[:-1]}?"
    answer = rng.choice(WORDS).capitalize()
    yield SessionStart(
        **base(), item_id=sid, item={"id": sid, "question": question, "claim": None, "answers": [answer]}
    )
    stage = "claim"
    yield enter("claim", None)
    claim = f"The answer is {answer if rng.random() < 0.6 else rng.choice(WORDS).capitalize()}."
    yield from ask("examinee", "cross_examination/claim_from_question", f"Please answer: {question}", claim)
    stage, turn = "setup", 0
    yield enter("setup", "claim")
    questions = [sentence(rng, 7)[:-1] + "?" for _ in range(rng.randint(2, 5))]
    setup = f"Your goal is to try to verify the correctness of the following claim: {claim} {sentence(rng, 40)}"
    yield from ask("examiner", "cross_examination/setup_chatgpt", setup, "\n".join(questions))
    state = "setup"
    for rnd in range(rng.randint(0, 3) + 1):
        yield enter("answer", state)
        for q in questions:
            content = f"Please answer the following questions regarding your claim.\n{q}"
            yield from ask("examinee", "cross_examination/examinee_answer", content, sentence(rng, 15), "examiner", q)
        stage, turn = "followup", rnd + 1
        yield enter("followup_ask", "answer")
        reply = rng.choice(["Yes", "Yes", "No", "Perhaps."])
        yield from ask("examiner", "cross_examination/followup_ask", "Do you have any follow-up questions?", reply)
        if reply == "Perhaps.":
            yield ParseFailure(
                **base(),
                role="examiner",
                prompt="cross_examination/followup_ask",
                expected="Yes or No",
                raw=reply,
                error="expected Yes or No",
                outcome="treated as No: go to the decision",
            )
        if reply != "Yes":
            state = "followup_ask"
            break
        yield enter("followup_questions", "followup_ask")
        questions = [sentence(rng, 6)[:-1] + "?"]
        yield from ask(
            "examiner", "cross_examination/followup_questions", "What are the follow-up questions?", questions[0]
        )
        state = "followup_questions"
    stage, turn = "decision", None
    yield enter("decision", state)
    decision = rng.choice(["correct", "incorrect", "incorrect"])
    conclusion = f"The claim is {decision}."
    yield from ask("examiner", "cross_examination/decision", "Is the claim correct or incorrect?", conclusion)
    stage = "verdict"
    yield enter("done", "decision")
    yield Verdict(
        **base(),
        decision=decision,
        accepted=decision == "correct",
        evidence=[conclusion],
        statistics={"claim": claim, "claim_generated": True, "rejections": int(decision != "correct")},
    )


def generate(out: Path, sessions: int, seed: int = 0) -> Path:
    """Write ``sessions`` sessions to ``out`` (replacing it), two at a time interleaved."""
    rng = random.Random(seed)
    run_id = new_run_id()
    out.unlink(missing_ok=True)
    with TranscriptWriter(out) as writer:
        writer.write(header(run_id))
        for first in range(0, sessions, 2):
            streams = [session_events(run_id, f"q{n:05d}", rng) for n in range(first, min(first + 2, sessions))]
            while streams:
                for stream in list(streams):
                    event = next(stream, None)
                    if event is None:
                        streams.remove(stream)
                    else:
                        writer.write(event)  # type: ignore[arg-type]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    start = time.perf_counter()
    generate(args.out, args.sessions, args.seed)
    size = args.out.stat().st_size
    print(f"{args.out}: {args.sessions} sessions, {size / 1e6:.1f} MB in {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
