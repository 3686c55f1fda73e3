"""A run as people review it: its verdict set, the sample a queue walks (the very sample ``voirdire calibrate
--sample N --seed S`` draws, by ``sample_lines``), the labels its sidecar holds, and the checks a new label passes
before anything is written (a known session with a verdict, a label from the run's verdict set, a name and a
comment within their caps). The viewer's review pages and the terminal reviewer (``voirdire review``) share it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from voirdire.base import VoirdireError
from voirdire.certificate import HumanAgreement, Judged, Run, human_agreement, read_run, sample_lines
from voirdire.transcript import (
    MAX_COMMENT,
    MAX_NAME,
    HumanLabel,
    LabelSample,
    clean_text,
    current_labels,
    read_sidecar,
)

AGREEMENT_RESAMPLES = 2000  # bootstrap resamples of the α and κ intervals a page shows (calibrate: its --resamples)
MAX_SAMPLE = 100_000


class LabelRefused(VoirdireError, ValueError):
    """A label that is not written, and why (the viewer answers 400 with this message)."""


@dataclass
class Counts:
    """A run's labels as the lists show them."""

    labelled: int = 0  # items with at least one label (not unsure)
    annotators: int = 0
    agree: int = 0  # (item, annotator) labels that agree with the verdict
    given: int = 0  # (item, annotator) labels, unsure left out
    disagree_items: set[str] = field(default_factory=set)  # items some annotator labels against the verdict
    people_disagree: set[str] = field(default_factory=set)  # items two annotators label differently
    by_item: dict[str, dict[str, HumanLabel]] = field(default_factory=dict)


@dataclass
class ReviewRun:
    path: Path
    run: Run

    @property
    def words(self) -> dict[str, bool]:
        """The run's verdict set: each decision word and the accept/reject it stood for."""
        return self.run.decisions()

    def judged(self, session_id: str) -> Any:
        """The session as calibration reads it (``voirdire.certificate``'s ``Judged``), or None."""
        return next((s for s in self.run.sessions if s.session_id == session_id), None)

    def sample(self, size: int, seed: int) -> list[dict[str, Any]]:
        """The items of ``calibrate --sample size --seed seed``, in its order, each with its first session."""
        return sample_lines(self.run, size, seed)

    def labels(self) -> list[HumanLabel]:
        return read_sidecar(self.path)

    def accepted(self, label: HumanLabel) -> bool | None:
        return None if label.label is None else self.words.get(label.label)

    def counts(self, labels: Iterable[HumanLabel] | None = None) -> Counts:
        verdicts = {s.item_id: s.accepted for s in self.run.judged()}
        return count_labels(self.labels() if labels is None else labels, verdicts, self.words)

    def people(self, labels: Iterable[HumanLabel], items: Iterable[str] | None = None) -> HumanAgreement | None:
        """α and κ between annotators (``voirdire.certificate.human_agreement``) over ``items`` (default all);
        None with fewer than two annotators."""
        wanted = None if items is None else set(items)
        table: dict[str, dict[str, bool]] = {}
        for (item, who), label in current_labels(labels).items():
            accepted = self.accepted(label)
            if accepted is not None and (wanted is None or item in wanted):
                table.setdefault(item, {})[who] = accepted
        return human_agreement(table, resamples=AGREEMENT_RESAMPLES)

    def check(self, form: Mapping[str, object]) -> HumanLabel:
        """The label ``form`` asks for, checked; ``LabelRefused`` says what is wrong and nothing is written."""
        sid = str(form.get("session_id") or "")
        judged = self.judged(sid)
        if judged is None:
            raise LabelRefused(f"unknown session {sid[:200]!r}: no session of {self.path.name} has that id")
        if judged.accepted is None or judged.decision is None:
            raise LabelRefused(f"session {sid!r} has no accept/reject verdict to review")
        who = clean_text(str(form.get("annotator") or ""), MAX_NAME + 1)
        if not who:
            raise LabelRefused("no reviewer name: give your name once (it is kept in this browser)")
        if len(who) > MAX_NAME:
            raise LabelRefused(f"reviewer name longer than {MAX_NAME} characters")
        comment = clean_text(str(form.get("comment") or ""), MAX_COMMENT + 1)
        if len(comment) > MAX_COMMENT:
            raise LabelRefused(f"comment longer than {MAX_COMMENT} characters")
        reading, label = self._reading(judged, str(form.get("reading") or ""), str(form.get("label") or ""))
        return HumanLabel(
            item_id=judged.item_id, session_id=sid, verdict=judged.decision, reading=reading, label=label,
            annotator=who, comment=comment, sample=self._sample(form, judged.item_id),
            blind=str(form.get("blind") or "") in ("1", "true"),
        )  # fmt: skip

    def _reading(self, judged: Any, reading: str, label: str) -> tuple[Any, str | None]:
        """agree: the verdict's own word; disagree: another word of the set; unsure: none; label (blind review):
        the reviewer's own word, agreeing or not with the verdict they had not seen."""
        words = self.words
        allowed = ", ".join(sorted(words))
        if reading == "unsure":
            return "unsure", None
        if reading == "agree":
            return "agree", judged.decision
        if reading not in ("disagree", "label"):
            raise LabelRefused(f"reading {reading[:40]!r} is not one of agree, disagree, unsure, label")
        if label not in words:
            raise LabelRefused(f"label {label[:80]!r} is not one of this run's verdicts ({allowed})")
        same = words[label] == judged.accepted
        if reading == "disagree" and same:
            raise LabelRefused(f"disagree needs a label that differs from the verdict {judged.decision!r}")
        return ("agree" if same else "disagree"), label

    def _sample(self, form: Mapping[str, object], item: str) -> LabelSample | None:
        size, seed = str(form.get("sample") or ""), str(form.get("seed") or "")
        if not size and not seed:
            return None
        sample = parse_sample(size, seed)
        if item not in {x["item_id"] for x in self.sample(sample.size, sample.seed)}:
            raise LabelRefused(f"item {item!r} is not in the sample --sample {sample.size} --seed {sample.seed}")
        return sample


def count_labels(
    labels: Iterable[HumanLabel], verdicts: Mapping[str, bool | None], words: Mapping[str, bool]
) -> Counts:
    """Each annotator's latest label of each item against ``verdicts`` (item → accepted) and against each other;
    ``words``: the verdict set (a label's word → accepted)."""
    c = Counts()

    def accepted(label: HumanLabel) -> bool | None:
        return None if label.label is None else words.get(label.label)

    for (item, who), label in current_labels(labels).items():
        c.by_item.setdefault(item, {})[who] = label
        mine = accepted(label)
        if mine is None:
            continue
        c.given += 1
        if mine == verdicts.get(item):
            c.agree += 1
        else:
            c.disagree_items.add(item)
    for item, by in c.by_item.items():
        given = {accepted(x) for x in by.values()} - {None}
        c.labelled += bool(given)
        if len(given) > 1:
            c.people_disagree.add(item)
    c.annotators = len({who for by in c.by_item.values() for who in by})
    return c


def parse_sample(size: str, seed: str) -> LabelSample:
    """``sample``/``seed`` parameters as a sample, or ``LabelRefused`` naming the bad one."""
    if not (size.isascii() and size.isdigit() and 1 <= len(size) <= 6 and 1 <= int(size) <= MAX_SAMPLE):
        raise LabelRefused(f"sample {size[:20]!r}: expected a whole number from 1 to {MAX_SAMPLE}")
    body = seed[1:] if seed.startswith("-") else seed
    if not (body.isascii() and body.isdigit() and len(body) <= 18):
        raise LabelRefused(f"seed {seed[:20]!r}: expected a whole number")
    return LabelSample(size=int(size), seed=int(seed))


_RUNS: OrderedDict[tuple[Path, int, int], ReviewRun] = OrderedDict()
_RUNS_LOCK = threading.Lock()


def review_run(path: str | Path) -> ReviewRun:
    """The run of ``path``, read once per version of the file (the last few kept)."""
    p = Path(path)
    st = p.stat()
    key = (p.resolve(), st.st_size, st.st_mtime_ns)
    with _RUNS_LOCK:
        if key in _RUNS:
            _RUNS.move_to_end(key)
            return _RUNS[key]
    found = ReviewRun(p, read_run(p))
    with _RUNS_LOCK:
        _RUNS[key] = found
        while len(_RUNS) > 8:
            _RUNS.popitem(last=False)
    return found


def indexed_run(index: Any) -> ReviewRun:
    """The run behind a viewer's ``index`` (``voirdire.web.index.TranscriptIndex``) read from the index alone, once
    per version of the file: each session's counting attempt, its item, decision and accept/reject, as ``read_run``
    reads them from the whole transcript (the sample depends on the item ids only), without parsing it again."""
    key = (index.path.resolve(), index.size, -1)
    with _RUNS_LOCK:
        if key in _RUNS:
            _RUNS.move_to_end(key)
            return _RUNS[key]
    header = index.header()
    sessions = [Judged(a.sid, a.item_id or a.sid, a.decision, a.accepted, None) for a in index.sessions()]
    found = ReviewRun(index.path, Run(str(index.path), header.protocol if header else "", sessions, ""))
    with _RUNS_LOCK:
        _RUNS[key] = found
        while len(_RUNS) > 8:
            _RUNS.popitem(last=False)
    return found


def share(part: int, whole: int) -> str:
    return "–" if whole == 0 else f"{100 * part / whole:.0f}%"


def review_summary(path: str | Path) -> str | None:
    """The labels of a run in a few lines (``voirdire labels``, ``voirdire review``): items labelled, agreement
    with the verdicts, and α/κ between people when two or more labelled; None when there is no label."""
    rr = review_run(path)
    labels = rr.labels()
    if not labels:
        return None
    c = rr.counts(labels)
    lines = [
        f"{c.labelled} items labelled by {c.annotators} annotator{'' if c.annotators == 1 else 's'}; "
        f"{c.agree} of {c.given} labels agree with the verdict ({share(c.agree, c.given)})"
    ]
    people = rr.people(labels) if c.annotators >= 2 else None
    if people is not None:
        lines.append(f"people against each other ({people.items} items labelled by two or more): Krippendorff's α "
                     f"{people.alpha.text()}")  # fmt: skip
        lines += [f"  Cohen's κ {a}–{b}: {k.text()}" for a, b, k in people.kappas]
    if c.people_disagree:
        lines.append(f"people disagree on {len(c.people_disagree)} items: {', '.join(sorted(c.people_disagree)[:20])}")
    return "\n".join(lines)
