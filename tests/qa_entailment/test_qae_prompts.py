"""The prompt files load with voirdire's prompt loader (declared variables = template variables, braces doubled),
render every variable, and carry the paper's text; every prompt the pipeline asks for exists."""

from __future__ import annotations

from pathlib import Path

import pytest

from voirdire.prompts import load_prompt_file
from voirdire.protocols.qa_entailment import pipeline

PROMPTS = Path(__file__).resolve().parents[2] / "prompts" / "qa_entailment"
NAMES = [
    pipeline.QA2D_PROMPT,
    pipeline.ENTAILMENT_PROMPT,
    pipeline.EXPLANATION_PROMPT,
    pipeline.INFERENCE_SCORE_PROMPT,
    pipeline.LLM_SCORE_PROMPT,
]


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
