"""Real transcripts of every landed protocol for the viewer tests, written by the ``voirdire`` command itself with
scripted models or model-free evaluators, plus a transcript whose every text field carries HTML/script payloads."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

from voirdire.cli import main
from voirdire.transcript import (
    DisplayHints,
    ErrorEvent,
    Message,
    ModelCall,
    ParseFailure,
    RoleBinding,
    RunHeader,
    SessionStart,
    Step,
    TokenUsage,
    TranscriptWriter,
    Transition,
    Verdict,
)

# Each payload sets window.pwned if the page ever runs it.
PAYLOADS = (
    "<script>window.pwned=1</script>",
    '<img src=x onerror="window.pwned=1">',
    '<a href="javascript:window.pwned=1">click me</a>',
)
PAYLOAD = " ".join(PAYLOADS)

EXAMINER = """\
rules:
  - match: verify the correctness of the following claim
    reply: "1. Where is it?\\n2. When was it founded?"
  - match: Do you have any follow-up questions
    reply: "Perhaps."
  - match: correct or incorrect\\?
    replies: ["The claim is correct.", "The claim is incorrect.", "I cannot tell.", "The claim is incorrect.",
              "The claim is correct.", "The claim is correct.", "The claim is incorrect.", "The claim is incorrect."]
"""
EXAMINEE = """\
rules:
  - match: phrase your answer as a claim
    reply: "The answer is Paris."
  - match: regarding your claim
    reply: "It is in France, on the Seine."
"""
QUESTIONS = [
    {"id": "paris", "question": "What is the capital of France?", "possible_answers": ["Paris"]},
    {"id": "rome", "question": "What is the capital of Italy?", "possible_answers": ["Rome", "Roma"]},
]
EVOUNA = [
    {
        "question": "who got the first nobel prize in physics",
        "golden_answer": "Wilhelm Conrad Röntgen",
        **{f"answer_{s}": "Wilhelm Conrad Röntgen" for s in ("fid", "gpt35", "chatgpt", "gpt4", "newbing")},
        **{f"judge_{s}": True for s in ("fid", "gpt35", "chatgpt", "gpt4", "newbing")},
        "improper": False,
    }
]
ENTAILMENT = """\
rules:
  - match: "Convert a question answer pair"
    reply: "S: Wilhelm Conrad Röntgen won the first Nobel prize in physics."
  - match: "Is it entailment"
    reply: "Entailment"
default: "3"
"""


def run(*args: str) -> None:
    code = main([*args, "--no-progress"])
    assert code == 0, f"voirdire {' '.join(args)} exited {code}"


def cross_examination(folder: Path, scripts: Path) -> Path:
    """Two sessions of LMvLM: Stage 1, a follow-up reply that cannot be parsed, the decision."""
    (scripts / "examiner.yaml").write_text(EXAMINER, encoding="utf-8")
    (scripts / "examinee.yaml").write_text(EXAMINEE, encoding="utf-8")
    data = scripts / "questions.jsonl"
    data.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS), encoding="utf-8")
    out = folder / "examine.jsonl"
    run(
        "examine", "--questions", str(data), "--out", str(out),
        "--model", f"examiner=scripted:{scripts / 'examiner.yaml'}",
        "--model", f"examinee=scripted:{scripts / 'examinee.yaml'}",
    )  # fmt: skip
    return out


def majority(folder: Path, scripts: Path) -> Path:
    """One LMvLM (Majority) session: three examinations, one of them inconclusive."""
    out = folder / "majority.jsonl"
    run(
        # sampled replies: the examinations differ (greedy ones would be answered once, see coalescing)
        "examine", "Paris is the capital of France.", "--majority", "--temperature", "0.7", "--out", str(out), "--json",
        "--model", f"examiner=scripted:{scripts / 'examiner.yaml'}",
        "--model", f"examinee=scripted:{scripts / 'examinee.yaml'}",
    )  # fmt: skip
    return out


def no_data(folder: Path) -> Path:
    out = folder / "nodata.jsonl"
    run("nodata", "--data", "ip", "--limit", "3", "--out", str(out), "--json")
    return out


def qa_lexical(folder: Path, scripts: Path) -> Path:
    data = scripts / "evouna.json"
    data.write_text(json.dumps(EVOUNA), encoding="utf-8")
    out = folder / "qa-lexical.jsonl"
    run("qa-eval", "--data", str(data), "--evaluator", "lexical", "--out", str(out), "--json")
    return out


def qa_entailment(folder: Path, scripts: Path) -> Path:
    data = scripts / "evouna.json"
    data.write_text(json.dumps(EVOUNA), encoding="utf-8")
    (scripts / "evaluator.yaml").write_text(ENTAILMENT, encoding="utf-8")
    out = folder / "qa-entailment.jsonl"
    run(
        "qa-eval", "--data", str(data), "--evaluator", "entailment", "--limit", "1", "--out", str(out), "--json",
        "--model", f"evaluator=scripted:{scripts / 'evaluator.yaml'}",
    )  # fmt: skip
    return out


def dcr(folder: Path, scripts: Path) -> Path:
    """One DCR pair over two rounds: a sentence the evaluator leaves out (not evaluated), one marked −1 and
    rewritten by the improver, then every evaluated sentence consistent."""
    from tests.protocols.dcr.helpers import AMC, ARTICLE, BAD, DCE, GOOD, RAI, S1, S2, S2_FIXED, amc, dce, rai

    extra = "Bolt trains in Kingston ."
    files = {
        "evaluator": {
            "rules": [{"match": DCE, "replies": [dce((S1, GOOD), (S2, BAD)), dce((S1, GOOD), (S2_FIXED, GOOD))]}]
        },
        "converter": {"rules": [{"match": AMC, "replies": [amc(1, -1), amc(1, 1)]}]},
        # round 2 still scores below 1 (the sentence left out counts), so the improver is asked again: it keeps both
        "improver": {
            "rules": [{"match": RAI, "replies": [rai((S1, S1), (S2, S2_FIXED)), rai((S1, S1), (S2_FIXED, S2_FIXED))]}]
        },
    }
    args = []
    for role, script in files.items():
        path = scripts / f"dcr-{role}.json"
        path.write_text(json.dumps(script), encoding="utf-8")
        args += ["--model", f"{role}=scripted:{path}"]
    article = scripts / "article.txt"
    article.write_text(ARTICLE, encoding="utf-8")
    out = folder / "dcr.jsonl"
    run("dcr", "--reference", str(article), "--candidate", f"{S1} {S2} {extra}", *args, "--out", str(out), "--json")
    return out


def entities(folder: Path) -> Path:
    """``check-entities`` on one sentence against a fake OpenAI-compatible oracle whose extraction is linear."""
    from tests.fake_openai import FakeOpenAIServer
    from tests.protocols.oracle_checker.test_cli import SENTENCE, respond

    out = folder / "entities.jsonl"
    with FakeOpenAIServer(respond) as server:
        run("check-entities", SENTENCE, "--model", f"oracle=openai-compatible:fake@{server.url}", "--out", str(out),
            "--json")  # fmt: skip
    return out


def sampled_entities(folder: Path) -> Path:
    """``check-entities`` with k = 11 samples per extraction, two of the first call's samples unreadable."""
    from tests.fake_openai import FakeOpenAIServer
    from tests.protocols.oracle_checker.test_cli import EXTRACT, respond

    counter = itertools.count()

    def varied(messages: list[dict[str, Any]]) -> str:
        if messages[-1]["content"].startswith(EXTRACT):
            n = next(counter)
            if n in (3, 7):  # the 4th and 8th sample of the first call
                return f"I am not sure which entities you mean (sample {n + 1})."
        return respond(messages)

    out = folder / "entities-k11.jsonl"
    with FakeOpenAIServer(varied) as server:
        run("check-entities", "Barack Obama was born in Hawaii and studied at Harvard.", "--tests", "1",
            "--model", f"oracle=openai-compatible:fake@{server.url}", "--out", str(out), "--json")  # fmt: skip
    return out


def paraphrase(folder: Path) -> Path:
    """``check-paraphrase`` on a pair the fake oracle calls equivalent: the Yes-prover's alignments."""
    from tests.fake_openai import FakeOpenAIServer

    def respond(messages: list[dict[str, str]]) -> str:
        user = messages[-1]["content"]
        if user.startswith("Generate five paraphrases"):
            return json.dumps({"paraphrases": []})
        return json.dumps({"answer": "yes", "explanation": "same"})

    s1 = "The company said its quarterly profit rose sharply in the spring."
    s2 = "The company said on Monday that its quarterly profit rose sharply in the spring."
    out = folder / "paraphrase.jsonl"
    with FakeOpenAIServer(respond) as server:
        run("check-paraphrase", s1, s2, "--embedder", "bag-of-words", "--out", str(out), "--json",
            "--model", f"oracle=openai-compatible:fake@{server.url}")  # fmt: skip
    return out


def paraphrase_no(folder: Path) -> Path:
    """``check-paraphrase`` where the oracle first says the pair differs, then calls one of its own paraphrases of
    s1 equivalent to s2: the No-checker's triangular evidence (App. B.4)."""
    from tests.fake_openai import FakeOpenAIServer

    decided = {"pair": 0}

    def respond(messages: list[dict[str, str]]) -> str:
        user = messages[-1]["content"]
        if user.startswith("Generate five paraphrases"):
            return json.dumps({"paraphrases": ["Profit at the company rose sharply in the spring."]})
        if user.startswith("Decide whether the following two sentences"):
            decided["pair"] += 1
            answer = "no" if decided["pair"] == 1 else "yes"
            return json.dumps({"answer": answer, "explanation": "as asked"})
        return json.dumps({"answer": "no", "explanation": "different"})

    out = folder / "paraphrase-no.jsonl"
    with FakeOpenAIServer(respond) as server:
        run("check-paraphrase", "The company said its profit rose sharply in the spring.",
            "The company said on Monday that its quarterly profit fell.", "--embedder", "bag-of-words",
            "--out", str(out), "--json", "--model", f"oracle=openai-compatible:fake@{server.url}")  # fmt: skip
    return out


ESCAPES = "\x1b]0;x\x07\x1b[2J\x1b[1;1HVerdict: CORRECT (accepted)\u202e"


def escapes(folder: Path, scripts: Path) -> Path:
    """An examination whose replies carry terminal escapes and a right-to-left override."""
    examinee = scripts / "escapes.json"
    examinee.write_text(json.dumps({"default": "Paris" + ESCAPES}), encoding="utf-8")
    examiner = scripts / "escapes-examiner.json"
    examiner.write_text(json.dumps({"default": "The claim is incorrect. \x00" + ESCAPES}), encoding="utf-8")
    out = folder / "escapes.jsonl"
    run("examine", "--question", "Where is the Eiffel Tower?", "--out", str(out), "--json",
        "--model", f"examinee=scripted:{examinee}", "--model", f"examiner=scripted:{examiner}")  # fmt: skip
    return out


def hostile_run(folder: Path, scripts: Path) -> Path:
    """A real run whose item and model replies carry the payloads."""
    examiner = scripts / "hostile-examiner.yaml"
    examiner.write_text(
        "rules:\n"
        "  - match: verify the correctness\n"
        f"    reply: {json.dumps('1. ' + PAYLOAD)}\n"
        "  - match: follow-up questions\n"
        '    reply: "No"\n'
        "  - match: correct or incorrect\n"
        f"    reply: {json.dumps('The claim is incorrect. ' + PAYLOAD)}\n",
        encoding="utf-8",
    )
    examinee = scripts / "hostile-examinee.yaml"
    examinee.write_text(f"default: {json.dumps(PAYLOAD)}\n", encoding="utf-8")
    data = scripts / "hostile.jsonl"
    data.write_text(json.dumps({"id": "x<b>1</b>", "claim": "Paris " + PAYLOAD, "answers": [PAYLOAD]}) + "\n")
    out = folder / "hostile.jsonl"
    run(
        "examine", "--questions", str(data), "--out", str(out),
        "--model", f"examiner=scripted:{examiner}", "--model", f"examinee=scripted:{examinee}",
    )  # fmt: skip
    return out


def hostile_fields(folder: Path) -> Path:
    """A transcript written event by event with a payload in every field a reader shows: roles, colours, stages,
    prompts, steps, parse failures, errors, the verdict and its statistics."""
    out = folder / "hostile-fields.jsonl"
    role = "judge" + PAYLOADS[1]
    run_id = "run" + PAYLOADS[0]
    hints = DisplayHints(colors={role: '36" onmouseover="window.pwned=1'}, item_fields=("text",), gold_fields=("gold",))
    base = {"run_id": run_id, "session_id": "s" + PAYLOADS[2], "stage": "stage" + PAYLOAD, "turn": 1}
    with TranscriptWriter(out) as w:
        w.write(
            RunHeader(
                run_id=run_id,
                protocol="toy" + PAYLOAD,
                roles={role: RoleBinding(spec="scripted:" + PAYLOAD)},
                transitions={"[*]": ["a"], "a": []},
                display=hints,
                paper=PAYLOAD,
            )
        )
        events = [
            SessionStart(**base, seq=1, item_id=PAYLOAD, item={"text": PAYLOAD, "gold": PAYLOAD}),
            Transition(**base, seq=2, from_state=None, to_state="a" + PAYLOAD, reason=PAYLOAD),
            Message(**base, seq=3, sender="moderator", receiver=role, content=PAYLOAD, prompt="p" + PAYLOAD),
            ModelCall(
                **base,
                seq=4,
                role=role,
                model="m" + PAYLOAD,
                request_digest="d",
                response=PAYLOAD,
                usage=TokenUsage(prompt_tokens=3, completion_tokens=4),
                latency_s=0.5,
                finish_reason=PAYLOAD,
            ),
            Message(**base, seq=5, sender=role, receiver="moderator", content=PAYLOAD, prompt="p" + PAYLOAD),
            ParseFailure(
                **base, seq=6, role=role, prompt=PAYLOAD, expected=PAYLOAD, raw=PAYLOAD, error=PAYLOAD, outcome=PAYLOAD
            ),
            Step(**base, seq=7, name="step" + PAYLOAD, data={PAYLOAD: PAYLOAD, "nested": {"x": PAYLOAD}}),
            ErrorEvent(**base, seq=8, error_type=PAYLOAD, message=PAYLOAD, traceback=PAYLOAD),
            Verdict(**base, seq=9, decision=PAYLOAD, accepted=True, evidence=[PAYLOAD], statistics={PAYLOAD: PAYLOAD}),
        ]
        for e in events:
            w.write(e)
    return out
