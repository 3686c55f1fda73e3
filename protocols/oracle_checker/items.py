"""The items the oracle–checker protocols run on: one sentence (entity extraction, §3) or two (paraphrase, §4)."""

from __future__ import annotations

import hashlib
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


def digest(*texts: str) -> str:
    return hashlib.sha1("\x1f".join(texts).encode()).hexdigest()[:10]


class SentenceItem(BaseModel):
    """One sentence s for entity extraction L_e(s) (§3.1); ``gold`` holds labelled entities when the data has them
    (DocRED, App. A), for reference only: the checker never reads them."""

    model_config = ConfigDict(extra="ignore")
    id: str = ""
    text: str = Field(description="the sentence s whose extracted entities are tested")
    gold: list[str] = Field(default_factory=list, description="labelled entities (DocRED), not used by the checker")

    def model_post_init(self, _: Any) -> None:
        if not self.text.strip():
            raise ValueError("text: empty sentence")
        if not self.id:
            self.id = f"s-{digest(self.text)}"


def sentence_from_record(record: dict[str, Any]) -> SentenceItem:
    """A dataset record: ``text`` (or ``sentence``), optional ``id`` and ``gold`` (or ``entities``)."""
    r = dict(record)
    if "text" not in r and "sentence" in r:
        r["text"] = r.pop("sentence")
    if "gold" not in r and isinstance(r.get("entities"), list):
        r["gold"] = [str(e) for e in r.pop("entities")]
    if r.get("id") is not None:
        r["id"] = str(r["id"])
    return SentenceItem.model_validate(r)
