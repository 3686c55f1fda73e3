"""voirdire's protocols as Inspect AI scorers, run by Inspect with its ``mockllm`` model (no network)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai")

from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import Model, ModelOutput, ModelUsage, get_model
from inspect_ai.solver import generate

import voirdire.integrations.inspect as vi
from voirdire.registry.plugins import registrations
from voirdire.transcript import ModelCall, Verdict, load

REPLY = "Yes. The claim is correct."


def mock_model(reply: str = REPLY) -> Model:
    """Inspect's mockllm with replies that carry their usage: without it mockllm counts tokens with tiktoken, which
    downloads its encoding (no network here)."""

    def outputs() -> Iterator[ModelOutput]:
        while True:
            output = ModelOutput.from_content("mockllm/model", reply)
            output.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
            yield output

    return get_model("mockllm/model", custom_outputs=outputs(), memoize=False)


CLAIMS = ["The Greek god of marriage is Hymenaios.", "Asmara is the capital of Eritrea.", "Water boils at 50 C."]


def test_every_registered_protocol_has_a_scorer() -> None:
    for name in registrations():
        assert callable(getattr(vi, name))
        assert name in dir(vi)
    with pytest.raises(AttributeError):
        vi.no_such_protocol  # noqa: B018


def test_a_score_and_a_transcript_per_sample_with_mockllm(tmp_path: Path) -> None:
    task = Task(
        dataset=[Sample(input=c, target="", id=f"s{k}") for k, c in enumerate(CLAIMS)],
        solver=generate(),
        scorer=vi.cross_examination(fields={"claim": "input"}, max_followup_rounds=1),
    )
    (log,) = eval(task, model=mock_model(), log_dir=str(tmp_path / "logs"), display="none")
    assert log.status == "success" and log.samples is not None and len(log.samples) == 3
    paths = set()
    for sample in log.samples:
        (score,) = sample.scores.values()  # type: ignore[union-attr]
        assert score.value in ("C", "I", "N") and score.answer
        path = Path(score.metadata["transcript"])  # type: ignore[index]
        paths.add(path)
        assert path.parent.name.endswith(".voirdire") and path.parent.parent == tmp_path / "logs"
        transcript = load(path)
        ((session,),) = [list(transcript.sessions.values())]
        (verdict,) = session.of_kind(Verdict)
        assert verdict.decision == score.answer and "\n".join(verdict.evidence) == score.explanation
        # The roles were played by Inspect's model, through Inspect; the claim examined is the sample's input.
        calls = session.of_kind(ModelCall)
        assert "examiner" in {c.role for c in calls} and all("mockllm/model" in c.model for c in calls)
        assert session.item["claim"] == sample.input
    assert len(paths) == 3


def test_a_voirdire_spec_plays_a_role_and_the_score_follows_the_verdict(tmp_path: Path) -> None:
    script = tmp_path / "examiner.yaml"
    script.write_text(
        "rules:\n"
        "  - match: Your goal is to try to verify\n    reply: '1. Is it true?'\n"
        "  - match: follow-up questions\n    reply: 'No'\n"
        "  - match: correct or incorrect\n    reply: The claim is incorrect.\n"
    )
    task = Task(
        dataset=[Sample(input="Who was the god of marriage?", target="Hymenaios")],
        solver=generate(),
        scorer=vi.scorer("cross_examination", examiner=f"scripted:{script}", transcripts=str(tmp_path / "t")),
    )
    (log,) = eval(task, model=mock_model(), log_dir=str(tmp_path / "logs"), display="none")
    (sample,) = log.samples or []
    (score,) = sample.scores.values()  # type: ignore[union-attr]
    assert (score.value, score.answer) == ("I", "incorrect")
    path = Path(score.metadata["transcript"])  # type: ignore[index]
    assert path.parent == tmp_path / "t"
    calls = [e for s in load(path).sessions.values() for e in s.of_kind(ModelCall)]
    assert {c.model for c in calls if c.role == "examiner"} == {f"scripted:{script}"}
    # The claim examined is the model's completion (the output under test), the default for a claim.
    assert [s.item["claim"] for s in load(path).sessions.values()] == [REPLY]


def test_a_role_not_given_is_the_eval_s_model_role_of_that_name(tmp_path: Path) -> None:
    task = Task(
        dataset=[Sample(input="Asmara is the capital of Eritrea.", id="a")],
        solver=generate(),
        scorer=vi.cross_examination(fields={"claim": "input"}, max_followup_rounds=0),
    )
    examiner = mock_model("No. The claim is incorrect.")
    (log,) = eval(
        task, model=mock_model(), model_roles={"examiner": examiner}, log_dir=str(tmp_path / "l"), display="none"
    )
    (sample,) = log.samples or []
    (score,) = sample.scores.values()  # type: ignore[union-attr]
    assert (score.value, score.answer) == ("I", "incorrect")  # the examiner role's model decided, not the eval's


def test_a_failed_session_scores_no_answer_with_the_error(tmp_path: Path) -> None:
    script = tmp_path / "mute.yaml"
    script.write_text("rules:\n  - match: nothing this protocol sends\n    reply: x\n")  # every call fails
    task = Task(
        dataset=[Sample(input="Asmara is the capital of Eritrea.", id="a")],
        scorer=vi.cross_examination(fields={"claim": "input"}, examiner=f"scripted:{script}"),
    )
    (log,) = eval(task, model=mock_model(), log_dir=str(tmp_path / "l"), display="none")
    (sample,) = log.samples or []
    (score,) = sample.scores.values()  # type: ignore[union-attr]
    assert score.value == "N" and score.answer is None and "examiner" in (score.explanation or "")
    assert load(Path(score.metadata["transcript"])).sessions  # type: ignore[index]  # the failed session is there


def test_a_wrong_parameter_or_protocol_is_an_error_at_once() -> None:
    with pytest.raises(Exception, match=r"no_such_param|extra"):
        vi.cross_examination(no_such_param=1)
    with pytest.raises(vi.InspectScorerError, match="no registered protocol"):
        vi.scorer("nope")


def test_inspect_eval_from_the_command_line(tmp_path: Path) -> None:
    (tmp_path / "task.py").write_text(
        textwrap.dedent(
            """
            from inspect_ai import Task, task
            from inspect_ai.dataset import Sample
            from inspect_ai.model import ModelOutput, ModelUsage, get_model
            from inspect_ai.solver import generate
            from voirdire.integrations.inspect import cross_examination

            def outputs():
                while True:
                    output = ModelOutput.from_content("mockllm/model", "Yes. The claim is correct.")
                    output.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
                    yield output

            @task
            def claims():
                return Task(
                    dataset=[Sample(input="Asmara is the capital of Eritrea.", id="a"),
                             Sample(input="Water boils at 50 C.", id="b")],
                    solver=generate(),
                    scorer=cross_examination(fields={"claim": "input"}, max_followup_rounds=1),
                    model=get_model("mockllm/model", custom_outputs=outputs()),
                )
            """
        )
    )
    inspect = Path(sys.executable).with_name("inspect")
    done = subprocess.run(
        [str(inspect), "eval", "task.py", "--model", "mockllm/model", "--log-dir", "logs", "--display", "none"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    (folder,) = (tmp_path / "logs").glob("*.voirdire")
    assert sorted(p.name for p in folder.iterdir()) == ["a_epoch1.jsonl", "b_epoch1.jsonl"]


# Ids that one file name held before: the same once unsafe characters are replaced, or the same first 100 characters.
CLASHING_IDS = ["a/b", "a_b", "a b", "a:b", "x" * 100 + "1", "x" * 100 + "2", "x" * 100 + "/"]


@pytest.mark.parametrize("max_samples", [7, 1], ids=["concurrent", "sequential"])
def test_one_transcript_per_sample_whatever_its_id(tmp_path: Path, max_samples: int) -> None:
    claims = {sample_id: f"Claim number {k}." for k, sample_id in enumerate(CLASHING_IDS)}
    task = Task(
        dataset=[Sample(input=claim, target="", id=sample_id) for sample_id, claim in claims.items()],
        solver=generate(),
        scorer=vi.cross_examination(fields={"claim": "input"}, max_followup_rounds=0),
    )
    (log,) = eval(
        task, model=mock_model(), log_dir=str(tmp_path / "logs"), display="none", max_samples=max_samples
    )
    assert log.status == "success" and log.samples is not None and len(log.samples) == 7
    paths = {}
    for sample in log.samples:
        (score,) = sample.scores.values()  # type: ignore[union-attr]
        assert score.value in ("C", "I"), score.explanation  # scored, not an error
        paths[sample.id] = Path(score.metadata["transcript"])  # type: ignore[index]
    assert len(set(paths.values())) == 7  # a file each
    for sample_id, path in paths.items():
        ((session,),) = [list(load(path).sessions.values())]  # its own session only, never overwritten
        assert session.item["claim"] == claims[str(sample_id)]
        assert len(path.name.encode()) < 200
    folder = next(iter(paths.values())).parent
    assert len(list(folder.iterdir())) == 7
