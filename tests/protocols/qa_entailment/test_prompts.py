"""The prompt files load with voirdire's prompt loader (declared variables = template variables, braces doubled),
render every variable, and carry the paper's text; the grader asks for exactly these prompts."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.protocols.qa_entailment.helpers import CELLS, evaluator_script
from voirdire.models import ScriptedChatCompletionClient
from voirdire.protocols.qa_entailment.data import QAItem
from voirdire.protocols.qa_entailment.hierarchy import HierarchyCell
from voirdire.protocols.qa_entailment.protocol import QAEntailmentGrading, QAEntailmentParams
from voirdire.runner import run_in_memory
from voirdire.session.prompts import load_prompt_file
from voirdire.transcript import Message

PROMPTS = Path(__file__).resolve().parents[3] / "prompts" / "qa_entailment"
NAMES = ["qa2d", "entailment", "inference_explanation", "inference_score", "llm_score"]


async def test_the_grader_asks_for_these_prompts_only() -> None:
    answer, entails = CELLS[HierarchyCell.INF_ONLY]  # the explained cell: every partial-mark scheme runs
    item = QAItem(id="x", question="who wrote the novel dracula", gold_answers=("Bram Stoker",), system="s",
                  system_answer=answer)  # fmt: skip
    client = ScriptedChatCompletionClient(evaluator_script([answer], entails))
    protocol = QAEntailmentGrading(QAEntailmentParams(inference_llm_score=True, llm_score=True))
    _, writer = await run_in_memory(protocol, [item], clients={"evaluator": client}, keep=True)
    asked = {r.prompt for r in writer.records if isinstance(r, Message) and r.prompt}
    assert asked == {f"qa_entailment/{name}" for name in NAMES}


@pytest.mark.parametrize("name", NAMES)
def test_prompt_file_loads_and_renders(name: str) -> None:
    prompt = load_prompt_file(PROMPTS / f"{name}.yaml")
    assert prompt.spec.verbatim is True and "Table" in prompt.spec.source
    # The Session sends prompts as system/user turns; earlier assistant turns come from the ask context.
    assert {m.role for m in prompt.spec.messages} <= {"system", "user"}
    messages = prompt.render(**{v: f"<{v}>" for v in prompt.spec.variables})
    text = "\n".join(m.content for m in messages)
    assert all(f"<{v}>" in text for v in prompt.spec.variables)
    assert "{" not in text and "}" not in text  # nothing left unrendered


def test_key_phrases_are_the_papers() -> None:
    text = {n: (PROMPTS / f"{n}.yaml").read_text(encoding="utf-8") for n in NAMES}
    assert "S: The TV show the Curse of Oak Island is filmed on Oak Island." in text["qa2d"]
    assert 'The answer should be exact "entailment", "contradiction", or "neutral".' in text["entailment"]
    assert "append [[ASSUMPTION]] after the step." in text["inference_explanation"]
    assert "5: Very hard" in text["inference_score"]
    assert "5: The AI-generated answer is completely right." in text["llm_score"]
