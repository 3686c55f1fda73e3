"""Planted keys never leave the process: not in the transcript, the cache, the report file, stdout, stderr or
--json, even when the server echoes them in errors and replies (raw and base64); and each key goes only where it
was named (the OpenAI key never to another endpoint)."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.chaos.conftest import questions
from tests.chaos.protocol import replies
from tests.chaos.server import ChaosServer, at_rates
from voirdire.cli import main

OPENAI_KEY = "sk-planted-openai-5c1e4f0a9b7d2e"
WITNESS_KEY = "vd-planted-witness-73aa19e0c4f1"  # in a variable whose name says nothing: masked because it is used
PLANTED = (OPENAI_KEY, WITNESS_KEY)


def leak_forms(secret: str) -> set[str]:
    """What a leak of ``secret`` looks like: the value, a 12-character piece of it, and the part of the base64 of
    a text containing it (``Bearer KEY``, ``user:KEY``, at each byte alignment) that only the key determines."""
    forms = {secret, secret[4:16]}
    every_byte = "".join(f"%{b:02X}" for b in secret.encode())  # each byte percent-encoded, either case
    forms |= {every_byte, every_byte.lower()}
    for prefix in ("", "Bearer ", "user:", "a:", "ab:"):
        encoded = base64.b64encode((prefix + secret).encode()).decode()
        forms.add(encoded[(len(prefix) * 4 + 2) // 3 + 1 : -4])
    return forms


def leaks(text: str) -> list[str]:
    return [f"{secret[:14]}... as {form!r}" for secret in PLANTED for form in leak_forms(secret) if form in text]


def files_under(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text(errors="replace") for p in root.rglob("*") if p.is_file()}


def test_no_planted_secret_anywhere_on_disk_or_in_output(
    chaos_cli: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("CHAOS_W", WITNESS_KEY)
    run = tmp_path / "run"
    run.mkdir()
    config = run / "run.toml"
    config.write_text('[roles.witness]\napi_key_env = "CHAOS_W"\n')
    data = questions(run / "qs.jsonl", 12)
    out, report, cache = run / "t.jsonl", run / "report.json", run / "cache.jsonl"
    outputs = []
    noise, failing = at_rates({"500": 0.1, "garbage": 0.05}, seed=3), {"Answer: Capital 1?", "Answer: Capital 4?"}

    def plan(index: int, body: dict[str, Any]) -> str:  # the first run loses two sessions; then the server recovers
        return "500" if body["messages"][-1]["content"] in failing else noise(index, body)

    with ChaosServer(replies, plan, echo_auth=True) as server:
        common = [
            "run", "chaos", "--data", str(data), "--config", str(config), "--out", str(out), "--cache", str(cache),
            "--model", f"openai-compatible:chaos@{server.url}", "--max-retries", "1", "--concurrency", "3",
        ]  # fmt: skip
        first = main([*common, "--json", "--report", str(report)])
        outputs.append(capsys.readouterr())
        failing.clear()
        second = main([*common, "--max-retries", "3"])  # resumes the failed sessions, with a progress bar
        outputs.append(capsys.readouterr())
    assert first == 3 and second in (0, 3)  # the first run lost sessions to 500s past one retry
    payload = json.loads(outputs[0].out)
    assert {"q001", "q004"} <= set(payload["errors"]) and all("ModelCallError" in e for e in payload["errors"].values())
    assert "key seen: Bearer *** / QmVhcmVyIH***" in payload["errors"]["q001"]  # the echoed key, masked
    assert re.search(r"retries \d+, errors \d+ \(\d+%\)", outputs[1].err)  # the progress bar's counters
    # Each key went where it was named: the witness's own, no key for the judge, the OpenAI key nowhere.
    sent = {(e.body["messages"][0]["content"].split(":")[0], e.headers.get("authorization")) for e in server.log}
    assert {auth for _, auth in sent} == {f"Bearer {WITNESS_KEY}", "Bearer not-needed"}
    assert all(OPENAI_KEY not in json.dumps(e.headers) for e in server.log)
    assert ("Is the answer right? Question", "Bearer not-needed") in sent
    # The server put both keys (raw and base64) into errors and replies; nothing of them is left anywhere.
    found = {name: leaks(text) for name, text in files_under(tmp_path).items()}
    for n, captured in enumerate(outputs):
        found[f"stdout {n}"], found[f"stderr {n}"] = leaks(captured.out), leaks(captured.err)
    assert leaks(f"[{WITNESS_KEY}]") and leaks(base64.b64encode(f"ab:{OPENAI_KEY}!".encode()).decode())  # it sees
    assert leaks("".join(f"%{b:02x}" for b in WITNESS_KEY.encode()))
    print(f"\nplanted secrets found: {sum(map(len, found.values()))} in {len(found)} places: {sorted(found)}")
    assert {"t.jsonl", "cache.jsonl", "report.json"} <= {Path(p).name for p in found}
    assert not any(found.values()), {k: v for k, v in found.items() if v}


def test_url_credentials_are_refused_before_anything_is_written(
    chaos_cli: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "t.jsonl"
    url = f"http://user:{WITNESS_KEY}@127.0.0.1:9/v1"
    item = ["--item", '{"id": "a", "question": "Q?"}']
    code = main(["run", "chaos", *item, "--model", f"judge=openai-compatible:m@{url}"])
    err = capsys.readouterr().err
    assert code == 2 and "carries credentials (user:password@)" in err and not leaks(err) and not out.exists()
    assert len(err.strip().splitlines()) == 1


def test_a_spec_with_a_key_in_its_query_is_a_spec_not_a_role(
    chaos_cli: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = f"openai-compatible:m@http://127.0.0.1:9/v1?api_key={WITNESS_KEY}"
    code = main(["run", "chaos", "--item", '{"id": "a", "question": "Q?"}', "--model", "nonsense", "--model", spec])
    err = capsys.readouterr().err
    assert code == 2 and "unknown model spec 'nonsense'" in err and not leaks(err)
    code = main(["run", "chaos", "--item", '{"id": "a", "question": "Q?"}', "--model", spec, "--out",
                 str(tmp_path / "t.jsonl"), "--max-retries", "0", "--timeout", "1"])  # fmt: skip
    captured = capsys.readouterr()
    assert code == 3  # bound to every role (nothing listens on port 9): a connection error, not a role named a URL
    assert not leaks(captured.out + captured.err) and not any(map(leaks, files_under(tmp_path).values()))


def test_a_key_percent_encoded_byte_by_byte_is_masked_in_either_case_and_mixed(monkeypatch: pytest.MonkeyPatch) -> None:
    from voirdire.base.secrets import mask_secrets

    monkeypatch.setenv("CHAOS_W_KEY", WITNESS_KEY)
    every = ["%" + f"{b:02X}" for b in WITNESS_KEY.encode()]
    mixed = "".join(e if i % 2 else c for i, (e, c) in enumerate(zip(every, WITNESS_KEY, strict=True)))
    for form in ("".join(every), "".join(every).lower(), mixed):
        assert leaks(form) or form == mixed
        masked = mask_secrets(f"id={form}&x=1 seen {form}.")
        assert form not in masked and masked.endswith("seen ***."), masked


def test_reproduce_writes_no_key_of_a_model_url_to_its_json_or_stdout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def entailment(messages: list[dict[str, Any]]) -> str:
        last = messages[-1]["content"] if messages else ""
        return "S: Wilhelm Conrad Röntgen won the first Nobel prize in physics." if "Convert" in last else "Entailment"

    outputs = []
    with ChaosServer(entailment) as server:
        spec = f"evaluator=openai-compatible:m@{server.url}?api_key={WITNESS_KEY}"
        for extra in ((), ("--json",)):
            code = main(["reproduce", "evouna-table1-entailment", "--out", str(tmp_path), "--model", spec,
                         "--limit", "1", "--no-figures", *extra])  # fmt: skip
            outputs.append(capsys.readouterr())
            assert code == 0, outputs[-1].err
    written = files_under(tmp_path)
    assert "evouna-table1-entailment.json" in written
    found = {name: leaks(text) for name, text in written.items()}
    for n, captured in enumerate(outputs):
        found[f"stdout {n}"], found[f"stderr {n}"] = leaks(captured.out), leaks(captured.err)
    assert not any(found.values()), {k: v for k, v in found.items() if v}


@pytest.mark.parametrize(
    ("variable", "value", "spec"),
    [
        ("ANTHROPIC_BASE_URL", f"http://user:{WITNESS_KEY}@127.0.0.1:9", "anthropic:claude-haiku-4-5"),
        ("OLLAMA_HOST", f"user:{WITNESS_KEY}@127.0.0.1:9", "ollama:llama3.2"),
        ("AZURE_OPENAI_ENDPOINT", f"http://user:{WITNESS_KEY}@127.0.0.1:9", "azure:gpt-4o-mini"),
    ],
)
def test_credentials_in_a_provider_s_url_variable_are_refused_as_in_a_spec(
    variable: str, value: str, spec: str, chaos_cli: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    monkeypatch.setenv(variable, value)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-planted-0123456789")
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "az-planted-0123456789abcdef")
    out = tmp_path / "t.jsonl"
    code = main(["run", "chaos", "--item", '{"id": "a", "question": "Q?"}', "--model", spec, "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and f"{variable} " in err and "carries credentials (user:password@)" in err, err
    assert not leaks(err) and not out.exists() and len(err.strip().splitlines()) == 1
