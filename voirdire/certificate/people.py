"""People's labels from the labels sidecar (``<transcript>.labels.jsonl``, written by the viewer's review page and
``voirdire review``) as the certificate section takes them: each annotator's latest label of an item (an unsure
one not at all), read as accept/reject by the run's own verdict words. They are used when they can be: every item
labelled (a census), or all of them from one review queue, whose sample (``--sample SIZE --seed SEED``) makes them
a random sample. ``voirdire calibrate`` reads the same file with its options (``voirdire.cli.labels``)."""

from __future__ import annotations

from pathlib import Path

from voirdire.certificate.calibration import Run
from voirdire.certificate.labels import LabelsError, label_words
from voirdire.certificate.sample import draw_sample
from voirdire.transcript import current_labels, read_sidecar, sidecar_path

Labels = tuple[dict[str, dict[str, bool]], str, str | None]  # item → annotator → accepted, source, how random


def sidecar_labels(run: Run, transcript: str | Path) -> Labels | None:
    """The sidecar's usable labels, where they came from and how they are random; None when it holds none.
    Labels that are neither a census nor one queue's sample raise ``LabelsError`` saying so."""
    side = sidecar_path(transcript)
    if not side.is_file():
        return None
    words = label_words(run.decisions())
    known = {s.item_id for s in run.sessions}
    table: dict[str, dict[str, bool]] = {}
    samples = set()
    for (item, who), x in current_labels(read_sidecar(transcript)).items():
        if x.label is None:
            continue
        if item not in known or x.label.lower() not in words:
            raise LabelsError(f"{side}: the label {x.label!r} of item {item!r} is not one of this run's verdicts on "
                              "one of its items")  # fmt: skip
        table.setdefault(item, {})[who] = words[x.label.lower()]
        samples.add(x.sample)
    if not table:
        return None
    source = f"{side} ({sum(map(len, table.values()))} labels of {len(table)} items)"
    items = run.item_ids()
    if set(items) <= set(table):
        return table, source, None
    if len(samples) == 1 and None not in samples:
        drawn_by = next(iter(samples))
        drawn = set(draw_sample(items, drawn_by.size, drawn_by.seed))  # type: ignore[union-attr]
        if set(table) <= drawn:
            how = f"drawn by --sample {drawn_by.size} --seed {drawn_by.seed} (the review queue's sample)"  # type: ignore[union-attr]
            missing = len(drawn) - len(table)
            if missing:
                how += f"; {missing} of the {len(drawn)} drawn items have no label, taken as missing at random"
            return table, source, how
    raise LabelsError(
        f"{side}: {len(table)} of the run's {len(items)} items are labelled, not all from one review queue's "
        "sample: voirdire calibrate takes them with --sample/--seed or --labels-are-random"
    )
