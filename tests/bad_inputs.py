"""Every bad input of issues 13, 19 and 47, run: the command, what the user sees, the exit status.

``python tests/bad_inputs.py`` prints the table of ``docs/bad_input.md``; ``--write`` writes it there.
``tests/core/test_bad_input.py`` runs every case, checks its exit status and message, and that the document is what
this script writes, so the table cannot drift from what voirdire does.

Each case runs in a folder of its own holding small fixtures (``qs.jsonl``, ``script.yaml``, ``runs.jsonl`` ...),
with no API key in the environment unless the case sets one; ``voirdire`` commands run in this process
(``voirdire.cli.main``) with stdout and stderr captured exactly as a terminal would show them, and nothing is
reached over the network (the unreachable endpoint is port 9 on 127.0.0.1).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import os
import re
import shlex
import sys
import tempfile
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "bad_input.md"

SCRIPT = """\
rules:
  - match: phrase your answer as a claim
    reply: "The claim is that X is Y."
  - match: regarding your claim
    reply: "It is so."
  - match: follow-up questions\\\\?
    reply: "No"
  - match: correct or incorrect
    reply: "The claim is incorrect."
  - match: Are you sure
    reply: "Yes"
default: "1. Is X Y?"
"""
# Gold "Paris" entails the system's "Paris, France" and not the other way round: the answer lands in A_inf - A_sup,
# where the LLM Score is asked, and its reply is a 5,000-digit number.
QA_SCRIPT = rf"""
rules:
  - match: 'A: Paris, France\s+S:'
    reply: "The capital of France is Paris, France."
  - match: 'A: Paris\s+S:'
    reply: "The capital of France is Paris."
  - match: 'Premise: The capital of France is Paris\.\s+Hypothesis: The capital of France is Paris, France'
    reply: "entailment"
  - match: entails or contradicts
    reply: "neutral"
  - match: golden answers
    reply: "{"9" * 5000}"
"""
GOOD_ROW = (
    '{"question": "Capital of France?", "gold_answers": ["Paris"], "system_answer": "Paris", "human_judgment": true}'
)
WIDER_ROW = (GOOD_ROW.replace('"system_answer": "Paris"', '"system_answer": "Paris, France"') + "\n").encode()
FIXTURES: dict[str, bytes] = {
    "qs.jsonl": b'{"question": "Who wrote Hamlet?", "answers": ["Shakespeare"]}\n{"question": "Where is Paris?"}\n',
    "script.yaml": SCRIPT.encode(),
    "runs.jsonl": (GOOD_ROW + "\n").encode(),
    "notes.txt": b"a note, not a transcript\n",
    "a_file": b"",
    "empty.jsonl": b"",
}


def _csv_with_bad_byte_at_501() -> bytes:
    """A CSV whose line 501 holds a Latin-1 byte, with a quoted field over lines 100-102 before it."""
    lines = [b"question,answers"]
    while len(lines) < 500:
        start = len(lines) + 1  # the line this record starts on
        lines += [b'"A question', b"that spans", b'three lines?",a'] if start == 100 else [b"Question %d?,a" % start]
    lines += [b"Caf\xe9 question?,a", b"Last question?,a"]
    return b"\n".join(lines) + b"\n"


@dataclass(frozen=True)
class Case:
    """One bad input: the issue's words, the command(s) run, the exit status and a part of the message
    expected. ``pick`` selects the output lines shown (default: everything on stderr)."""

    issue: str
    commands: tuple[str, ...]
    code: int
    expect: str
    files: dict[str, bytes] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    pick: str | None = None
    python: Callable[[], object] | None = None  # a Python API case: what it raises is the message


def _examine_out_existing() -> object:
    import voirdire

    models = {"*": "scripted:script.yaml"}
    voirdire.examine_dataset("qs.jsonl", models=models, out="t.jsonl")
    voirdire.examine("The claim is X.", models=models, out="t.jsonl")
    return f"t.jsonl keeps its {len(voirdire.load_transcript('t.jsonl').sessions)} sessions (2 + the new claim)"


def _examine_in_a_loop() -> object:
    import voirdire

    async def notebook_cell() -> object:
        v = voirdire.examine("The claim is X.", models={"*": "scripted:script.yaml"}, out="t.jsonl")
        return f"runs on a private loop in a worker thread and waits: verdict {v.decision!r}"

    return asyncio.run(notebook_cell())


def _bad_csv() -> dict[str, bytes]:
    return {"big.csv": _csv_with_bad_byte_at_501()}


REPORT_FIXTURES = ROOT / "tests" / "core" / "report_fixtures"


def _with_usage(value: int) -> bytes:
    """A real transcript whose first model call reports ``value`` prompt tokens, as a server might."""
    lines = (REPORT_FIXTURES / "ays.jsonl").read_text(encoding="utf-8").splitlines()
    for k, line in enumerate(lines):
        if '"kind":"model_call"' in line.replace(" ", ""):
            lines[k] = re.sub(r'"prompt_tokens":\s*\d+', f'"prompt_tokens":{value}', line, count=1)
            break
    return ("\n".join(lines) + "\n").encode()


def _damaged_at(line: int) -> bytes:
    """A real transcript with its line ``line`` replaced by bytes that are not JSON."""
    lines = (REPORT_FIXTURES / "oracle_entities-labelled.jsonl").read_text(encoding="utf-8").splitlines()
    lines[line - 1] = '{"kind": "message", "oops'
    return ("\n".join(lines) + "\n").encode()


def _recordings_with(reply: str) -> object:
    """A replay folder whose second recording has a bad field, replayed by ``examine``."""
    from voirdire.cli import main

    Path("rec").mkdir(exist_ok=True)
    good = '{"key": "k", "model": "m", "reply": {"texts": ["x"], "prompt_tokens": 1, "completion_tokens": 1}}'
    Path("rec/recordings.jsonl").write_text(good + "\n" + reply + "\n")
    os.environ["VOIRDIRE_REPLAY"] = "rec"
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            code = main(["examine", "X", "--model", "scripted:script.yaml", "--no-progress"])
    finally:
        del os.environ["VOIRDIRE_REPLAY"]
    return f"exit status {code}"


def _two_protocols() -> bytes:
    return (REPORT_FIXTURES / "qa_lexical.jsonl").read_bytes() + (REPORT_FIXTURES / "qa_token_f1.jsonl").read_bytes()


def _resume_with_nothing_left() -> object:
    from voirdire.cli import main

    command = ["examine", "--questions", "qs.jsonl", "--model", "scripted:script.yaml", "--out", "t.jsonl"]
    sizes = []
    for _ in range(3):
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            main([*command, "--no-progress"])
        sizes.append(Path("t.jsonl").stat().st_size)
    headers = sum('"kind":"header"' in line for line in Path("t.jsonl").read_text().splitlines())
    grew = f"{sizes[1] - sizes[0]} then {sizes[2] - sizes[1]} bytes"
    return f"3 invocations: t.jsonl grew by {grew} after the first, {headers} run header in it"


EX = "voirdire examine"
S = "--model scripted:script.yaml"
UNREACHABLE = "openai-compatible:m@http://127.0.0.1:9/v1"  # port 9 (discard): nothing answers there
CASES: tuple[Case, ...] = (
    # ---- roles
    Case("`qa-eval --model examiner=...`: a role qa-eval does not have", (
        "voirdire qa-eval --data runs.jsonl --evaluator entailment --model examiner=scripted:script.yaml",), 2,
        "has no role 'examiner'"),
    Case("a model for a grader that uses none (`--evaluator lexical`)", (
        "voirdire qa-eval --data runs.jsonl --evaluator lexical --model evaluator=scripted:script.yaml",), 2,
        "qa_lexical has no role 'evaluator'"),
    Case("a bare `--model` for a grader that uses none", (
        "voirdire qa-eval --data runs.jsonl --evaluator lexical --model openai:gpt-4o-mini",), 2,
        "plays no role with a model"),
    Case("a model for a role played by a rule", ("voirdire nodata --data ip --model verifier=scripted:script.yaml",),
         2, "rule agent"),
    Case("a model for one of the protocol's roles this configuration leaves out", (
        "voirdire nodata --data ip --evaluator llm --limit 1 --model evaluator=scripted:script.yaml "
        "--model generator=scripted:script.yaml --no-progress",), 0, "does not use its generator role",
        pick=r"^warning: --model"),
    # ---- run config
    Case("TOML `[role.examiner]` (typo of `roles`)", (f"{EX} X {S} --config run.toml",), 2, "did you mean 'roles'",
         files={"run.toml": b'[role.examiner]\nmodel = "local"\n'}),
    Case("TOML top-level `max_tokens`", (f"{EX} X {S} --config run.toml",), 2, "sets nothing",
         files={"run.toml": b"max_tokens = 64\n"}),
    Case("TOML key typo `max_token`", (f"{EX} X {S} --config run.toml",), 2, "did you mean 'max_tokens'",
         files={"run.toml": b"[roles.examiner]\nmax_token = 64\n"}),
    Case("TOML value out of range", (f"{EX} X {S} --config run.toml",), 2, "temperature: Input should be",
         files={"run.toml": b"[roles.examiner]\ntemperature = -1\n"}),
    Case("TOML that does not parse", (f"{EX} X {S} --config run.toml",), 2, "run.toml:2: invalid TOML",
         files={"run.toml": b'[roles.examiner]\nmodel "local"\n'}),
    Case("non-UTF-8 TOML", (f"{EX} X {S} --config run.toml",), 2, "run.toml:2: not UTF-8",
         files={"run.toml": b'[roles.examiner]\nmodel = "caf\xe9"\n'}),
    Case("a config table for another protocol's role", (
        "voirdire qa-eval --data runs.jsonl --evaluator lexical --config run.toml --no-progress",), 0,
        "[roles.examiner] is not used", files={"run.toml": b'[roles.examiner]\nmodel = "local"\n'},
        pick=r"^warning"),
    # ---- which items
    Case("`--limit 0`", (f"{EX} --questions qs.jsonl --limit 0 {S}",), 2, "--limit: must be at least 1"),
    Case("`--limit -1`", (f"{EX} --questions qs.jsonl --limit -1 {S}",), 2, "--limit: must be at least 1"),
    Case("negative `--offset` in `qa-eval` (was Python slicing)", (
        "voirdire qa-eval --data runs.jsonl --evaluator lexical --offset -1",), 2, "--offset: must be at least 0"),
    Case("`--offset` past the last item", (f"{EX} --questions qs.jsonl --offset 5 {S}",), 2, "skips every record"),
    Case("an empty dataset", (f"{EX} --questions empty.jsonl {S}",), 2, "the dataset is empty"),
    Case("an empty dataset in `qa-eval`", ("voirdire qa-eval --data empty.jsonl --evaluator lexical",), 2,
         "the dataset is empty"),
    Case("`--concurrency 0` (ran at 1)", (f"{EX} --questions qs.jsonl --concurrency 0 {S}",), 2,
         "--concurrency: must be at least 1"),
    # ---- outputs and models, before the header
    Case("unwritable `--report` (ran the whole job first)", (
        f"{EX} --questions qs.jsonl {S} --report a_file/r.json",), 2, "--report a_file/r.json: a_file is a file"),
    Case("unwritable `--cache` (failed every session)", (f"{EX} --questions qs.jsonl {S} --cache a_file/c.jsonl",), 2,
         "--cache a_file/c.jsonl: a_file is a file"),
    Case("unwritable `--out`", (f"{EX} --questions qs.jsonl {S} --out a_file/t.jsonl",), 2,
         "--out a_file/t.jsonl: a_file is a file"),
    Case("`--out` a folder", (f"{EX} --questions qs.jsonl {S} --out .",), 2, "is a folder"),
    Case("port 99999 in a base URL (was a traceback in the first session)", (
        f"{EX} X --model openai-compatible:m@http://127.0.0.1:99999/v1",), 2, "Port out of range"),
    Case("a base URL that is not a URL", (f"{EX} X --model openai-compatible:m@http://[::1/v1",), 2,
         "the URL is not valid"),
    Case("a spec that is not one", (f"{EX} X --model openai-compatible:llama3",), 2, "expected openai-compatible:"),
    Case("a missing `OPENAI_API_KEY` (found after the header)", (f"{EX} X --model openai:gpt-4o-mini",), 2,
         "needs OPENAI_API_KEY"),
    Case("`api_key_env` naming an unset variable", (
        f"{EX} X --model openai-compatible:m@http://127.0.0.1:9/v1 --api-key-env INFERENCE_KEY",), 2,
        "api_key_env names INFERENCE_KEY, which is not set"),
    Case("a key pasted where a variable name goes", (f"{EX} X {S} --api-key-env sk-live-PASTEDKEYxyzPASTEDKEY",), 2,
         "must name an environment variable"),
    Case("URL userinfo (became HTTP Basic auth)", (f"{EX} X --model openai-compatible:m@http://me:pw@host/v1",), 2,
         "carries credentials"),
    Case("a URL with `=` in it (was split as ROLE=SPEC, the secret echoed)", (
        f"{EX} X --model openai-compatible:m@http://127.0.0.1:9/v1?api_key=sk-planted-SECRETxyzSECRET"
        " --max-retries 0",),
        3, "error in claim-", pick=r"^error in"),
    Case("a missing script file", (f"{EX} X --model scripted:nope.yaml",), 2, "script file not found"),
    Case("non-UTF-8 script file (was a traceback)", (f"{EX} X --model scripted:latin.yaml",), 2,
         "latin.yaml:2: not UTF-8", files={"latin.yaml": b'rules: []\nreplies: ["caf\xe9"]\n'}),
    Case("a script with a key typo (was a pydantic dump)", (f"{EX} X --model scripted:typo.yaml",), 2,
         "rules.0.match: Field required", files={"typo.yaml": b'rules:\n  - mtch: "x"\n    reply: "y"\n'}),
    # ---- input files
    Case("non-UTF-8 CSV at line 501, after a quoted field over lines 100-102 (was reported as line 281)", (
        f"{EX} --questions big.csv {S}",), 2, "big.csv:501: not UTF-8", files=_bad_csv()),
    Case("a CSV row with too many fields after a multi-line field", (f"{EX} --questions rows.csv {S}",), 2,
         "rows.csv:5: more fields", files={"rows.csv": b'question,answers\n"two\nlines?",a\nok?,b\nx?,a,b\n'}),
    Case("non-UTF-8 generic JSONL in `qa-eval` (named no file or line)", (
        "voirdire qa-eval --data latin.jsonl --evaluator lexical",), 2, "latin.jsonl:2: not UTF-8",
        files={"latin.jsonl": (GOOD_ROW + "\n" + GOOD_ROW.replace("Paris", "Caf\xe9") + "\n").encode("latin-1")}),
    Case("a JSONL row that is not JSON", (f"{EX} --questions bad.jsonl {S}",), 2, "bad.jsonl:2: not valid JSON",
         files={"bad.jsonl": b'{"question": "ok?"}\n{oops\n'}),
    Case("a misspelt field in `qa-eval`'s JSONL", ("voirdire qa-eval --data typo.jsonl --evaluator lexical",), 2,
         "typo.jsonl:1: field 'human_judgement'",
         files={"typo.jsonl": (GOOD_ROW.replace("human_judgment", "human_judgement") + "\n").encode()}),
    Case("`show` on a one-line text file (printed nothing, exit 0)", ("voirdire show notes.txt",), 2,
         "notes.txt:1: not a transcript record"),
    Case("`show` on an empty file", ("voirdire show empty.jsonl",), 2, "not a transcript"),
    # ---- options (were pydantic dumps)
    Case("`--phi 1.5`", ("voirdire nodata --data ip --phi 1.5",), 2, "--phi: Input should be less than or equal to 1"),
    Case("`--rounds 0`", ("voirdire nodata --data ip --rounds 0",), 2, "--rounds: Input should be greater"),
    Case("`--max-followups -1` (did not name the option)", (f"{EX} X {S} --max-followups -1",), 2, "--max-followups:"),
    Case("`--max-tokens 0`", (f"{EX} X {S} --max-tokens 0",), 2, "--max-tokens: must be at least 1 (tokens)"),
    Case("`--timeout 0`", (f"{EX} X {S} --timeout 0",), 2, "--timeout: must be a positive number of seconds"),
    Case("`--max-retries -1`", (f"{EX} X {S} --max-retries -1",), 2, "--max-retries: must be at least 0 (retries)"),
    Case("`--max-errors 5x`", (f"{EX} X {S} --max-errors 5x",), 2, "--max-errors: expected N or P%"),
    Case("`--concurrency x`", (f"{EX} X {S} --concurrency x",), 2, "--concurrency: expected a whole number"),
    Case("`--workers 0`", (f"{EX} X {S} --workers 0",), 2, "--workers: must be at least 1"),
    Case("`--ray-address` without `--executor ray`", (f"{EX} X {S} --ray-address auto",), 2,
         "--ray-address: only with --executor ray"),
    Case("`VOIRDIRE_MAX_CONNECTIONS=0`", (f"{EX} X --model {UNREACHABLE}",), 2,
         "VOIRDIRE_MAX_CONNECTIONS='0': expected a whole number", env={"VOIRDIRE_MAX_CONNECTIONS": "0"}),
    Case("`voirdire --debug` on any error: the traceback, then the same line", (
        "voirdire --debug examine X --model scripted:nope.yaml",), 2, "Traceback (most recent call last)",
        pick=r"^(Traceback|voirdire: error)"),
    # ---- transcripts
    Case("two datasets with the same file name (shared one transcript)", (
        f"{EX} --questions a/qs.jsonl {S} --no-progress", f"{EX} --questions b/qs.jsonl {S} --no-progress"), 0,
        "transcript: transcripts/cross_examination-qs-",
        files={"a/qs.jsonl": b'{"question": "A?"}\n', "b/qs.jsonl": b'{"question": "B?"}\n'}, pick=r"^transcript:"),
    Case("resuming a transcript of another dataset", (
        f"{EX} --questions a/qs.jsonl {S} --out t.jsonl --no-progress",
        f"{EX} --questions b/qs.jsonl {S} --out t.jsonl"),
        2, "--questions: a/qs.jsonl in t.jsonl, b/qs.jsonl now; use --out or --fresh",
        files={"a/qs.jsonl": b'{"id": "1", "question": "A?"}\n', "b/qs.jsonl": b'{"id": "2", "question": "B?"}\n'}),
    Case("a session that fails (exited 0)", (f"{EX} X --model scripted:short.yaml",), 3, "exit status 3",
         files={"short.yaml": b'replies: ["1. Who?"]\n'}, pick=r"^(error in|voirdire:)"),
    Case("the same with `--allow-errors`", (f"{EX} X --model scripted:short.yaml --allow-errors",), 0, "error in",
         files={"short.yaml": b'replies: ["1. Who?"]\n'}, pick=r"^error in"),
    Case("the `human` role at end of input (answered empty, recorded a verdict)", (
        f"{EX} X --model examiner=scripted:script.yaml --model examinee=human",), 3, "HumanInputEnded",
        pick=r"^error in"),
    # ---- model text
    Case("a 5,000-digit score in a reply (ValueError, a session error on every resume)", (
        "voirdire qa-eval --data runs.jsonl --evaluator entailment --llm-score --model evaluator=scripted:qa.yaml",),
        0, "unparseable: 1", files={"qa.yaml": QA_SCRIPT.encode(), "runs.jsonl": WIDER_ROW}, pick=r"^model replies"),
    # ---- price table (costs in reports)
    Case("a price file that does not parse", (f"{EX} X {S} --prices p.toml",), 2, "p.toml:2: invalid TOML",
         files={"p.toml": b'[models]\n"gpt-4o" = { input = 2.5 output = 10 }\n'}),
    Case("a price that is not a number", (f"{EX} X {S} --prices p.toml",), 2, "p.toml:2: models.gpt-4o: input",
         files={"p.toml": b'[models]\n"gpt-4o" = { input = "$2.50", output = 10 }\n'}),
    Case("`VOIRDIRE_PRICES` naming a file that is not there", (f"{EX} X {S}",), 2, "the file VOIRDIRE_PRICES names",
         env={"VOIRDIRE_PRICES": "nope.toml"}),
    # ---- issue 19: silently wrong or misleading input handling
    Case("a whitespace-only claim (was examined, and could be accepted)", (f'{EX} "   " {S}',), 2,
         "claim: empty (only whitespace)"),
    Case("a whitespace-only question in a dataset", (f"{EX} --questions ws.jsonl {S}",), 2,
         "ws.jsonl:1: record: question is empty", files={"ws.jsonl": b'{"question": "  "}\n'}),
    Case("`report` on two protocols' transcripts concatenated (reported under the last one's name)", (
        "voirdire report two.jsonl",), 2, "holds runs of 2 protocols (qa_lexical, qa_token_f1)",
        files={"two.jsonl": _two_protocols()}),
    Case("`--model examiner=A --model examiner=B` (silently used B)", (
        f"{EX} X --model examiner=scripted:script.yaml --model examiner=local --model examinee=scripted:script.yaml",),
        2, "--model: role examiner given twice"),
    Case("`nodata --data ipp` (said 'ipp is a data file')", ("voirdire nodata --data ipp",), 2,
         "'ipp' is neither a built-in data set (ip, oop) nor a file (did you mean 'ip'?)"),
    Case("`correlate --metric dcr` on a cross-examination transcript (said 'fewer than two scored items')", (
        f"{EX} X {S} --out t.jsonl --no-progress",
        "voirdire correlate --data summeval --metric dcr --transcript t.jsonl"),
        2, "not a DCR transcript (it holds a cross_examination run)", pick=r"^voirdire: error"),
    Case("`report` on a dataset file (leaked pydantic's \"discriminator 'kind'\")", ("voirdire report qs.jsonl",), 2,
         "qs.jsonl:1: not a transcript record (no 'kind' field"),
    Case("a UTF-8 BOM in JSONL (refused; accepted in CSV)", (f"{EX} --questions bom.jsonl {S} --no-progress",), 0,
         "transcript: transcripts/cross_examination-bom-", files={"bom.jsonl": b'\xef\xbb\xbf{"question": "A?"}\n'},
         pick=r"^transcript:"),
    Case("a mistyped `[roles.examinr]` (a warning and an error that contradicted each other)", (
        f"{EX} X {S} --config run.toml",), 2, "no protocol has a role 'examinr' (did you mean 'examiner'?)",
        files={"run.toml": b'[roles.examinr]\nmodel = "local"\n'}),
    Case("a resume with nothing left to do (appended a ~3 KB run header each time)",
         ("voirdire examine --questions qs.jsonl --out t.jsonl, three times",), 0, "1 run header",
         python=_resume_with_nothing_left),
    # ---- issue 19: faults and numbers from outside
    Case("nothing listening at the endpoint (retried for minutes, 200 identical errors)", (
        f"{EX} --questions q20.jsonl --model {UNREACHABLE} --concurrency 5 --no-progress",), 4,
        "refused its first 3 requests and answered none", pick=r"^voirdire: run stopped",
        files={"q20.jsonl": b"".join(b'{"question": "Q%d?"}\n' % i for i in range(20))}),
    Case("the OpenAI key named for plain http (`http://api.openai.com:8080/v1`)", (
        f"{EX} X --model openai-compatible:m@http://api.openai.com:8080/v1 --api-key-env OPENAI_API_KEY",), 2,
        "OPENAI_API_KEY is not sent", env={"OPENAI_API_KEY": "sk-planted-SECRETxyzSECRET"}),
    Case("a transcript line nested 5,000 deep (RecursionError)", ("voirdire show deep.jsonl",), 2,
         "deep.jsonl:1: not a transcript record (JSON nested more than 64 levels deep)",
         files={"deep.jsonl": b'{"a":' * 5000 + b"\n"}),
    Case("a 400-digit token count in a transcript (OverflowError in `report`)", ("voirdire report big.jsonl",), 2,
         "usage.prompt_tokens: Input should be less than or equal to 1,000,000,000",
         files={"big.jsonl": _with_usage(10**400)}),
    Case("a negative token count in a transcript (a cost of -$1,800)", ("voirdire report neg.jsonl",), 2,
         "usage.prompt_tokens: Input should be greater than or equal to 0", files={"neg.jsonl": _with_usage(-1800)}),
    Case("`--session-timeout 0`", (f"{EX} X {S} --session-timeout 0",), 2,
         "--session-timeout: must be a positive number of seconds"),
    # ---- issue 47: inputs that ran away, and silent acceptances
    Case("`--repeats 5000` (a billion printed nothing and grew by 30 MB/s)", (f"{EX} X {S} --repeats 5000",), 2,
         "--repeats: must be at most 1,000 (sessions per item)"),
    Case("`--concurrency 50000`", (f"{EX} X {S} --concurrency 50000",), 2,
         "--concurrency: must be at most 4,096 (sessions at a time)"),
    Case("`--workers 10000`", (f"{EX} X {S} --workers 10000",), 2, "--workers: must be at most 256 (processes)"),
    Case("`--max-tokens 10**20`", (f"{EX} X {S} --max-tokens 100_000_000_000_000_000_000",), 2,
         "--max-tokens: must be at most 1,000,000 (tokens)"),
    Case("`--timeout inf`", (f"{EX} X {S} --timeout inf",), 2, "--timeout: must be a finite number of seconds"),
    Case("`--timeout 1e9`", (f"{EX} X {S} --timeout 1e9",), 2, "--timeout: must be at most 86,400 s"),
    Case("`timeout = inf` in a run config", (f"{EX} X {S} --config run.toml",), 2, "timeout: Input should be",
         files={"run.toml": b'[roles.examiner]\ntimeout = inf\n'}),
    Case("a CSV with an unterminated quote (swallowed into one item, exit 0)", (f"{EX} --questions open.csv {S}",), 2,
         "open.csv:3: a quoted field starts on this line and its quote is never closed",
         files={"open.csv": b'question,answers\nA?,a\n"B?,b\nC?,c\nD?,d\n'}),
    Case("a CSV with two `question` columns (the last won)", (f"{EX} --questions two.csv {S}",), 2,
         "two.csv:1: the header names column 'question' twice (columns 1 and 3)",
         files={"two.csv": b"question,answers,question\nA?,a,B?\n"}),
    Case("an `id` that is a JSON object (became \"{'a': 1}\")", (f"{EX} --questions obj.jsonl {S}",), 2,
         "obj.jsonl:1: id must be a string or a whole number, got an object",
         files={"obj.jsonl": b'{"id": {"a": 1}, "question": "A?"}\n'}),
    Case("an `id` that is a number with a fraction", (f"{EX} --questions f.jsonl {S}",), 2,
         "f.jsonl:1: id must be a string or a whole number, got a number with a fraction",
         files={"f.jsonl": b'{"id": 1.5, "question": "A?"}\n'}),
    Case("a model spec with a newline (the error printed over two lines)", (
        f"{EX} X --model 'openai-compatible:m\n@http://127.0.0.1:9/v1'",), 2, "holds a control character"),
    Case("a YAML list as a script: its replies in order (documented)", (f"{EX} X --model scripted:list.yaml",), 3,
         "no scripted reply left", files={"list.yaml": b'- "1. Is X Y?"\n'}, pick=r"^error in"),
    Case("a script rule whose regex backtracks without end (`(o+)+$` hung the run, its lock left behind)", (
        f"{EX} {'o' * 40}! --model scripted:slow.yaml --no-progress",), 3, "took more than 2 s",
        files={"slow.yaml": b"rules:\n  - match: '(o|oo)+$'\n    reply: 'no'\ndefault: '1. Is X Y?'\n"},
        pick=r"^error in"),
    Case("`export-html` of a transcript damaged at line 221 (exit 0; `show` and `report` exit 2)", (
        "voirdire export-html damaged.jsonl -o out.html",), 2, "damaged.jsonl:221:",
        files={"damaged.jsonl": _damaged_at(221)}),
    Case("a replay recording with a bad field (`ValueError ... 'lots'`, no line)", ("VOIRDIRE_REPLAY=rec examine",),
         0, "recordings.jsonl:2: reply.prompt_tokens: expected a whole number of tokens, got 'lots'",
         python=lambda: _recordings_with(
             '{"key": "k2", "reply": {"texts": ["x"], "prompt_tokens": "lots", "completion_tokens": 1}}')),
    Case("a replay recording without `texts` (`KeyError: 'texts'`)", ("VOIRDIRE_REPLAY=rec examine",), 0,
         "recordings.jsonl:2: reply.texts: expected a list of at least one string",
         python=lambda: _recordings_with('{"key": "k2", "reply": {"prompt_tokens": 1, "completion_tokens": 1}}')),
    # ---- Python API
    Case("`voirdire.examine(..., out=EXISTING)` (replaced a 100-session transcript with 1)",
         ("voirdire.examine_dataset('qs.jsonl', out='t.jsonl'); voirdire.examine('The claim is X.', out='t.jsonl')",),
         0, "keeps its 3 sessions", python=_examine_out_existing),
    Case("`voirdire.examine(...)` in Jupyter (a running event loop)", ("voirdire.examine(...) inside a notebook cell",),
         0, "runs on a private loop in a worker thread and waits", python=_examine_in_a_loop),
)  # fmt: skip


@dataclass
class Outcome:
    case: Case
    code: int
    shown: str  # the lines shown in the table, joined by newlines
    text: str  # everything printed, stderr then stdout
    folder: Path  # where it ran


# Planted in commands; never to be printed back.
SECRETS = ("sk-planted-SECRETxyzSECRET", "sk-live-PASTEDKEYxyzPASTEDKEY")
# A warning many rows get because they bind one script to both cross-examination roles; left out of the table.
SHARED_MODEL = "warning: examiner and examinee are both served by"


@contextlib.contextmanager
def _environment(changes: dict[str, str]) -> Iterator[None]:
    """No API key, no base URL, no colour, plus ``changes``; restored afterwards."""
    saved = dict(os.environ)
    for name in list(os.environ):
        if name.endswith(("_API_KEY", "_KEY", "_TOKEN")) or name == "OPENAI_BASE_URL":
            del os.environ[name]
    os.environ.update({"NO_COLOR": "1", **changes})
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def run_case(case: Case, folder: Path) -> Outcome:
    """Run ``case`` in ``folder`` (made with the fixtures) and collect what the user sees."""
    from voirdire.cli import main

    folder.mkdir(parents=True)
    for name, data in {**FIXTURES, **case.files}.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    (folder / "a_file").write_bytes(b"")
    out, err = io.StringIO(), io.StringIO()
    here = Path.cwd()
    os.chdir(folder)
    stdin = sys.stdin
    sys.stdin = io.StringIO("")  # a person who types nothing: end of input
    code = 0
    try:
        with (
            _environment(case.env),
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(err),
            warnings.catch_warnings(),
        ):
            warnings.simplefilter("ignore")  # the Python rows show what is returned or raised
            if case.python is not None:
                try:
                    print(case.python())
                except Exception as exc:
                    print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
                    code = 1
            else:
                for command in case.commands:
                    try:
                        code = main(shlex.split(command)[1:])
                    except SystemExit as exc:  # argparse
                        code = int(exc.code or 0)
    finally:
        sys.stdin = stdin
        os.chdir(here)
    text = (err.getvalue() + "\n" + out.getvalue()).replace(str(folder), ".")
    if case.python is not None:
        lines = [ln for ln in text.splitlines() if ln.strip()]
    elif case.pick is None:
        lines = [ln for ln in err.getvalue().replace(str(folder), ".").splitlines() if ln.strip()]
    else:
        lines = [ln for ln in text.splitlines() if re.search(case.pick, ln)]
    lines = [ln for ln in lines if not ln.startswith(SHARED_MODEL)]
    if case.pick is not None and lines and lines[0].startswith("Traceback"):
        lines = [lines[0], "  ...", *lines[1:]]
    return Outcome(case, code, "\n".join(dict.fromkeys(lines)), text, folder)


def run_all(base: Path | None = None) -> list[Outcome]:
    with tempfile.TemporaryDirectory() as tmp:
        root = base or Path(tmp)
        return [run_case(case, root / f"case{k:02d}") for k, case in enumerate(CASES, 1)]


_ID = re.compile(r"(?<=-)[0-9a-f]{8}\b")
"""A session id's or a transcript name's digest of its text (``claim-<id>``): the same on every run, shown as <id>."""


def _cell(text: str) -> str:
    text = _ID.sub("<id>", text)
    return text.replace("&", "&amp;").replace("<", "&lt;").replace("|", "\\|").replace("\n", "<br>")


def table(outcomes: list[Outcome]) -> str:
    rows = [
        "# Bad input: what the user sees",
        "",
        "Every bad input of issues 13, 19 and 47, run by `python tests/bad_inputs.py --write` (each in a folder of its "
        "own with small fixtures: `qs.jsonl`, `script.yaml`, `runs.jsonl`; no API key in the environment). "
        "`tests/core/test_bad_input.py` runs them again and fails when this page differs from what they print. Exit "
        "status 2: nothing was run or written; 3: sessions failed (in the transcript); 4: the run stopped (an "
        "endpoint down, `--max-errors`), resumable; 1 in the Python rows: the "
        "exception raised. Hung endpoints, rate limits, cut-off replies and dropped connections are the chaos "
        "suite's ([reliability.md](reliability.md)); slow or crashing reply readers the fuzz test's "
        "(`tests/core/test_parser_fuzz.py`). Where a case binds one script to both cross-examination roles, the "
        "warning that they share a model is left out. Counts and deadlines have upper bounds, checked before "
        "anything runs (`voirdire.base.bounds`): `--repeats` at most 1,000, `--concurrency` 4,096, `--workers` 256, "
        "`--max-tokens` 1,000,000, `--timeout` and `--session-timeout` a day (a finite number of seconds). A CSV is "
        "read strictly: a quote never closed, a stray quote or a column named twice is an error naming the line. A "
        "YAML list as a script is its replies, in order. The digest in an id or a transcript's name (`claim-<id>`) is "
        "shown as `<id>`.",
        "",
        "| # | bad input (issues 13, 19, 47) | command | what the user sees | exit |",
        "|---|---|---|---|---|",
    ]
    for k, o in enumerate(outcomes, 1):
        command = "<br>".join(f"`{c}`".replace("\n", "\\n") for c in o.case.commands)  # a newline typed as \n
        rows.append(f"| {k} | {o.case.issue} | {command.replace('|', chr(92) + '|')} | {_cell(o.shown)} | {o.code} |")
    return "\n".join(rows) + "\n"


def check(outcome: Outcome) -> str | None:
    """Why an outcome is not what its case expects; None when it is."""
    if outcome.code != outcome.case.code:
        return f"exit {outcome.code}, expected {outcome.case.code}: {outcome.shown}"
    if outcome.case.expect not in outcome.shown:
        return f"{outcome.case.expect!r} not in {outcome.shown!r}"
    if leaked := [s for s in SECRETS if s in outcome.text]:
        return f"a planted secret printed: {leaked}"
    debug = "--debug" in outcome.case.commands[0]
    if "errors.pydantic.dev" in outcome.shown or ("Traceback" in outcome.shown and not debug):
        return f"a pydantic dump or a traceback: {outcome.shown}"
    return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help=f"write {DOC.relative_to(ROOT)}")
    args = ap.parse_args(argv)
    outcomes = run_all()
    problems = [f"case {k}: {why}" for k, o in enumerate(outcomes, 1) if (why := check(o))]
    text = table(outcomes)
    if args.write:
        DOC.write_text(text, encoding="utf-8")
    else:
        print(text)
    print("\n".join(problems) or f"{len(outcomes)} cases as expected", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
