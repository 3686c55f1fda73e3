"""A run's verdicts against human labels: ``voirdire calibrate``.

The labels come from the protocol's own gold fields (the verdict statistic the run header's display hints name as
agreeing with gold: ``views.verdict.gold``, named for what it is by ``views.verdict.gold_source``), or from a labels
file (``voirdire.certificate.labels``). Verdicts and labels are compared as accept/reject. An item labelled by
several annotators counts with its majority label; an item whose annotators tie is a tie: counted, listed and in
the people's agreement with each other, not in the verdicts' agreement. An item examined in several sessions
contributes each session, and the intervals resample items. Fewer than ``SMALL_N`` labelled items is said beside
the numbers.

The headline quantity is the share of items people accept (the share of claims that hold, of answers that are
correct: the QA accuracy of the graded system). Its prediction-powered estimate uses the labelled items and the
verdicts on every other item; it is valid when the labelled items are a uniform random sample of the run's items,
which ``draw_sample`` makes them.
"""

from __future__ import annotations

import itertools
import json
import math
import shlex
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from pydantic import BaseModel

from voirdire.base import VoirdireError
from voirdire.certificate.agreement import (
    HumanAgreement,
    VerdictAgreement,
    agreement_of_counts,
    human_agreement,
    pair_counts,
    verdict_agreement,
)
from voirdire.certificate.intervals import DEFAULT_LEVEL, DEFAULT_RESAMPLES, DEFAULT_SEED
from voirdire.certificate.paired import PairedRuns, paired_runs
from voirdire.certificate.ppi import PPIEstimate, ppi_mean
from voirdire.certificate.sample import draw_sample
from voirdire.certificate.scores import ScoreAgreement, score_agreement
from voirdire.certificate.stability import is_repeat, one_per_item

if TYPE_CHECKING:
    from voirdire.reports import Context, Report, ReportFold
    from voirdire.transcript import RunHeader, SessionRecord

V = TypeVar("V")

# For transcripts whose run header names no score (written before ``views.verdict.score``): the verdict statistics
# read as its score, first found first (DCR's Ẑ, QA grading's token F1, as those protocols' hints now name them).
SCORE_STATISTICS = ("score", "f1")

SMALL_N = 30  # labelled items below which a section says its numbers say little (the intervals show how little)
GOLD_SOURCE = "the protocol's gold"  # a gold whose protocol does not say what it is (views.verdict.gold_source)
PEOPLE_SOURCE = "people's labels"  # the labels sidecar's section (the viewer's review, voirdire review)

RANDOM_ASSUMPTION = (
    "the labelled items are a uniform random sample of the run's items, drawn independently of the verdicts "
    "(not chosen for being hard, interesting or disputed)"
)


class CalibrationError(VoirdireError, ValueError):
    """A transcript or labels that cannot be calibrated; the message names the file or the option."""


@dataclass(frozen=True, slots=True)  # slots: a run holds one a session
class Judged:
    """One session as calibration reads it."""

    session_id: str
    item_id: str
    decision: str | None
    accepted: bool | None
    gold: bool | None  # the gold label as accept/reject, where the protocol knows it
    score: float | None = None  # the verdict's own score, where it carries one (SCORE_STATISTICS)
    configuration: str = ""  # the run's role configuration (``configuration_of`` its header)
    path: str = ""  # the transcript it is in (several transcripts can be calibrated together)
    parameters: tuple[tuple[str, str], ...] = ()  # its run's protocol parameters (key, JSON value)


@dataclass
class Run:
    path: str
    protocol: str
    sessions: list[Judged]
    gold_statistic: str  # the verdict statistic saying whether a verdict agrees with gold ("" when none)
    score_statistic: str = ""  # the verdict statistic read as the score ("" when no verdict carries one)
    gold_source: str = ""  # what the gold is (views.verdict.gold_source: "gold answers, alias match")

    def gold_name(self) -> str:
        """The gold's section name: what the protocol says it is, else ``GOLD_SOURCE``."""
        return self.gold_source or GOLD_SOURCE

    def judged(self) -> list[Judged]:
        """The sessions with an accept/reject verdict."""
        return [s for s in self.sessions if s.accepted is not None]

    def item_ids(self) -> list[str]:
        """The items with an accept/reject verdict, in the order they first appear."""
        return list(dict.fromkeys(s.item_id for s in self.judged()))

    def decisions(self) -> dict[str, bool]:
        """Each decision of this run as the accept/reject it stood for (decisions that stood for both left out)."""
        seen: dict[str, set[bool]] = {}
        for s in self.judged():
            if s.decision:
                seen.setdefault(s.decision, set()).add(bool(s.accepted))
        return {d: next(iter(a)) for d, a in seen.items() if len(a) == 1}

    def gold_labels(self, only: Sequence[str] | None = None) -> dict[str, Mapping[str, bool]]:
        """The gold label of each item the protocol knows it for (of ``only`` where given), as labels by one
        annotator, ``gold``: one read-only mapping for every accepting item and one for every rejecting item."""
        wanted = set(only) if only is not None else None
        out: dict[str, Mapping[str, bool]] = {}
        for s in self.judged():
            if s.gold is not None and (wanted is None or s.item_id in wanted):
                out.setdefault(s.item_id, _GOLD[s.gold])
        return out

    def show_command(self, session_id: str, path: str = "") -> str:
        return f"voirdire show {shlex.quote(path or self.path)} --session {shlex.quote(session_id)}"

    def configurations(self) -> list[str]:
        """The role configurations of the judged sessions, in the order they first appear."""
        return list(dict.fromkeys(s.configuration for s in self.judged()))


_GOLD = {label: MappingProxyType({"gold": label}) for label in (True, False)}  # ``Run.gold_labels``' labels


def configuration_of(header: RunHeader | None) -> str:
    """A run's role configuration as one line: each role's model and its settings (``examiner=openai:gpt-4o
    t=0.7``); a run whose roles are all played by rules is ``rules only``."""
    if header is None:
        return "no run header"
    parts = []
    for role, b in sorted(header.roles.items()):
        settings = [f"t={b.temperature:g}" if b.temperature is not None else "",
                    f"max_tokens={b.max_tokens}" if b.max_tokens is not None else "",
                    f"seed={b.seed}" if b.seed is not None else "", "structured" if b.structured else ""]  # fmt: skip
        parts.append(" ".join([f"{role}={b.spec}", *filter(None, settings)]))
    return "; ".join(parts) or "rules only"


def score_of(statistics: Mapping[str, Any], key: str) -> float | None:
    """The verdict's statistic ``key`` as a score, where it is a finite number."""
    value = statistics.get(key)
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def read_runs(paths: Sequence[str | Path], *, score: str | None = None) -> Run:
    """Several transcripts calibrated as one run (the same items judged by runs whose roles differ): each session
    keeps its transcript and configuration; the protocol must be one."""
    runs = [read_run(p, score=score, by_parameters=len(paths) == 1) for p in paths]
    if len(runs) == 1:
        return runs[0]
    protocols = list(dict.fromkeys(r.protocol for r in runs))
    if len(protocols) > 1:
        raise CalibrationError(f"{paths[-1]}: a run of {protocols[-1]}, not of {protocols[0]} as {paths[0]}: "
                               "calibrate the runs of one protocol together")  # fmt: skip
    sessions = _by_parameters([s for r in runs for s in r.sessions])
    gold = next((r.gold_statistic for r in runs if r.gold_statistic), "")
    score_statistic = next((r.score_statistic for r in runs if r.score_statistic), "")
    source = next((r.gold_source for r in runs if r.gold_source), "")
    return Run(" + ".join(str(p) for p in paths), protocols[0], sessions, gold, score_statistic, source)


def _by_parameters(sessions: list[Judged]) -> list[Judged]:
    """Runs with the same roles but other protocol parameters (a threshold, a variant) are other configurations:
    the parameters that differ between the runs are added to the configuration's name."""
    values: dict[str, set[str | None]] = {}
    having: Counter[str] = Counter()
    for s in sessions:  # one pass: a set per parameter over every session was quadratic in the sessions
        for k, v in dict(s.parameters).items():
            values.setdefault(k, set()).add(v)
            having[k] += 1
    differ = sorted(k for k, seen in values.items() if len(seen) + (having[k] < len(sessions)) > 1)
    if not differ:
        return sessions
    out = []
    for s in sessions:
        mine = dict(s.parameters)
        extra = " ".join(f"{k}={mine.get(k, 'default')}" for k in differ)
        out.append(replace(s, configuration=f"{s.configuration} · {extra}"))
    return out


def fold_sessions(
    path: Path | str,
    part: Callable[[SessionRecord], V],
    take: Callable[[Sequence[V], Context], None],
    *,
    spooled: bool = False,
) -> None:
    """Stream a transcript (``voirdire.reports.report_file``: each session's attempt that counts, as ``load`` picks
    it): each session made ``part(session)`` as it ends (spooled to a temporary file where ``spooled``), and the
    parts, in session order, handed to ``take`` with the run headers (``Context``). No session's records are kept."""
    from voirdire.reports import report_file

    report_file(path, sessions_fold(part, take, spooled=spooled), ci=0)  # no intervals: not read here


def sessions_fold(
    part: Callable[[SessionRecord], V], take: Callable[[Sequence[V], Context], None], *, spooled: bool = False
) -> ReportFold[V, Report]:
    """``fold_sessions``'s fold, for a pass that makes others from the same records (``report_file``'s
    ``alongside``)."""
    from voirdire.reports import Report, ReportFold

    def finish(values: Sequence[V], ctx: Context) -> Report:
        take(values, ctx)
        return Report(protocol=ctx.header.protocol if ctx.header else "", **ctx.counts)

    return ReportFold(session=part, finish=finish, spooled=spooled)


class _Part(NamedTuple):
    """What ``read_run`` keeps of a session, never its events nor its item (``sample_lines`` reads the items it
    shows from the file). The gold agreement and the score are scalar verdict statistics, so the rest of them (an
    examination's questions, a rewrite's sentences) is not kept."""

    session_id: str
    item_id: str
    run_id: str
    has_verdict: bool
    decision: str | None
    accepted: bool | None
    stats: dict[str, bool | int | float]
    repeat: bool


def _part(s: SessionRecord) -> _Part:
    v = s.verdict
    stats = {k: x for k, x in v.statistics.items() if isinstance(x, bool | int | float)} if v is not None else {}
    return _Part(s.session_id, s.item_id or s.session_id, s.run_id, v is not None, v.decision if v else None,
                 v.accepted if v else None, stats, is_repeat(s))  # fmt: skip


def read_run(path: str | Path, *, score: str | None = None, by_parameters: bool = True) -> Run:
    """A transcript's sessions (the attempt of each that counts), their verdicts, gold and score where known;
    ``score``: the verdict statistic read as its score (default: the one the run header's display hints name,
    ``views.verdict.score``, else the first of ``SCORE_STATISTICS`` the verdicts carry). The file is streamed
    (``voirdire.reports.report_file``, which picks each session's attempt as ``load`` does) and each session's part
    spooled to a temporary file: what stays in memory is a few fields a session, not the records, so a long run is
    calibrated in about the memory of its verdicts."""
    reading = RunReading(path, score=score)
    reading.read()
    return reading.run(score=score, by_parameters=by_parameters)


class RunReading:
    """``read_run`` in two halves: ``fold`` (or ``take``, given the parts) reads the transcript, ``run`` makes the
    ``Run``. Apart, so that one pass over the file also makes the report and the other certificate folds
    (``voirdire report``)."""

    def __init__(self, path: str | Path, *, score: str | None = None) -> None:
        self.path, self.name = Path(path), str(path)  # the name as given: what the Run and its errors say
        if not self.path.is_file():
            raise CalibrationError(f"{path}: no such transcript")
        self.score = score  # the statistic ``run`` will be asked to read as the score, where not the hints' own
        self.kept: Sequence[_Part] = []
        self.headers: list[RunHeader] = []
        self.gold_rows: dict[str, bool] | None = None  # the report rows' gold, where read in the same pass

    def fold(self) -> ReportFold[_Part, Report]:
        return sessions_fold(_part, self.take, spooled=True)

    def read(self, alongside: Sequence[ReportFold[Any, Any]] = ()) -> None:
        """``read_run``'s pass over the file, with any other folds ``alongside``. Where the first run header names
        no gold statistic (its verdicts will not state gold), the protocol's report is folded in the same pass for
        its rows' gold column, which ``run`` would otherwise read in a pass of its own."""
        from voirdire.reports import report_file

        first = _first_header(self.path)
        if first is None or first.display.views.verdict.gold:
            report_file(self.path, self.fold(), ci=0, alongside=alongside)
            return
        gold = _GoldRows()
        report_file(self.path, self.fold(), ci=0, alongside=[*alongside, gold])
        if gold.report is not None:
            self.gold_rows = gold_of_rows(gold.report)

    def gold_from(self, report: Report) -> None:
        """The report rows' gold, from the protocol's report made in the same pass as ``fold`` (by its caller),
        where the first run header names no gold statistic: what ``read`` folds ``_GoldRows`` for."""
        first = _first_header(self.path)
        if first is not None and not first.display.views.verdict.gold:
            self.gold_rows = gold_of_rows(report)

    def take(self, parts: Sequence[_Part], ctx: Context) -> None:
        from voirdire.reports import map_values

        # Every part of the file comes in this one call: a pass read again (report_file's fallback) starts over. The
        # parts stay in the spool, read back where ``run`` needs them: no object a session is held here. Of a
        # verdict's statistics, ``run`` reads the gold and score the hints name, or the fallback scores.
        self.headers = list(ctx.headers)
        wanted = {self.score or "", *SCORE_STATISTICS}
        wanted |= {k for h in ctx.headers for k in (h.display.views.verdict.gold, h.display.views.verdict.score)}

        def kept(part: _Part) -> _Part:
            return part._replace(stats={k: x for k, x in part.stats.items() if k in wanted})

        self.kept = map_values(parts, kept)

    def run(
        self, *, score: str | None = None, by_parameters: bool = True, gold_rows: dict[str, bool] | None = None
    ) -> Run:
        """The ``Run`` of what was read; ``gold_rows``: the protocol's report's gold by item (``report_gold``) where
        the caller has that report, else it is read from the file if the verdicts do not state gold."""
        path, kept, headers = self.name, self.kept, self.headers
        header = headers[-1] if headers else None
        if header is None and not kept:
            raise CalibrationError(f"{path}: not a transcript (no run header and no session events in it)")
        gold = header.display.views.verdict.gold if header is not None else ""
        sessions = []
        configurations = {h.run_id: configuration_of(h) for h in headers}
        parameters = {h.run_id: tuple(sorted((k, json.dumps(v, sort_keys=True)) for k, v in h.parameters.items()))
                      for h in headers}  # fmt: skip
        # the verdict's score: the statistic the display hints name (views.verdict.score), as they name gold's
        score = score or (header.display.views.verdict.score if header is not None else "")
        if not score:  # a header written before the hint
            verdicts = [k.stats for k in kept if k.has_verdict]
            score = next((k for k in SCORE_STATISTICS if any(score_of(v, k) is not None for v in verdicts)), "")
        unheaded = configuration_of(header)  # a session whose run has no header of its own
        repeated = set()
        for k in kept:  # one read of the parts: they come back from the pass's spool
            agrees = k.stats.get(gold) if k.has_verdict and gold else None
            label = None
            if isinstance(agrees, bool) and k.accepted is not None:
                label = k.accepted if agrees else not k.accepted
            sessions.append(Judged(k.session_id, k.item_id, k.decision, k.accepted, label,
                                   score_of(k.stats, score) if k.has_verdict and score else None,
                                   configurations.get(k.run_id, unheaded), str(path),
                                   parameters.get(k.run_id, ())))  # fmt: skip
            if k.repeat:
                repeated.add(k.session_id)
        if not any(s.gold is not None for s in sessions):  # no verdict statistic says it: the report's rows may
            if gold_rows is None:
                gold_rows = self.gold_rows if self.gold_rows is not None else report_gold(self.path)
            rows = gold_rows
            if rows:
                for k, s in enumerate(sessions):  # in place: one list of the run's sessions, never two
                    sessions[k] = replace(s, gold=rows.get(s.item_id) if s.accepted is not None else None)
                gold = "the report's gold column"
        sessions = _by_parameters(sessions) if by_parameters else sessions
        sessions = one_per_item(sessions, repeated, accepted=None)  # an item's repeats count as one
        source = header.display.views.verdict.gold_source if header is not None else ""
        return Run(str(path), header.protocol if header else "", sessions, gold, score, source)


def report_gold(path: Path) -> dict[str, bool]:
    """Item id → gold accept/reject from the protocol's report rows (``id``, boolean ``gold``), as the viewer and
    ``compare`` read gold for protocols whose verdicts do not state it."""
    from voirdire.registry import report_folds
    from voirdire.reports import report_file

    report, _ = report_file(path, report_folds(), ci=0)  # the rows alone: no intervals computed
    return gold_of_rows(report)


class _GoldRows:
    """``report_gold``'s fold, made beside ``read_run``'s in its one pass: each protocol's report fold, its report
    kept (a fold's ``finish`` is wrapped once per fold, so that the same protocol gets the same fold object, as
    ``report_file`` needs to stream)."""

    def __init__(self) -> None:
        from voirdire.registry import report_folds

        self.folds = report_folds()
        self.wrapped: dict[int, ReportFold[Any, Any]] = {}
        self.report: Report | None = None

    def __call__(self, header: RunHeader | None) -> ReportFold[Any, Any]:
        from voirdire.reports import ReportFold

        fold = self.folds(header)
        if id(fold) not in self.wrapped:

            def finish(values: Sequence[Any], ctx: Context, fold: ReportFold[Any, Any] = fold) -> Report:
                self.report = fold.finish(values, ctx)
                return self.report

            self.wrapped[id(fold)] = ReportFold(session=fold.session, finish=finish, spooled=fold.spooled, row=fold.row)
        return self.wrapped[id(fold)]


def _first_header(path: Path) -> RunHeader | None:
    """The file's first record where it is a run header (a line or two read, not the file)."""
    from voirdire.transcript import RunHeader, iter_records

    records = iter_records(path)
    try:
        first = next(records, None)
    finally:
        records.close()  # type: ignore[attr-defined]
    return first if isinstance(first, RunHeader) else None


def gold_of_rows(report: Report) -> dict[str, bool]:
    """Item id → gold accept/reject from a report's rows (``id``, boolean ``gold``)."""
    rows = getattr(report, "rows", None) or ()
    return {str(r["id"]): r["gold"] for r in rows if isinstance(r, dict) and isinstance(r.get("gold"), bool)}


class Disagreement(BaseModel):
    item_id: str
    session_id: str
    decision: str | None
    verdict: str  # accepted / rejected
    label: str  # what people said: accepted / rejected
    command: str  # opens its chat
    url: str | None = None  # opens its chat in the viewer (when one serves the transcript, or --viewer-url)
    configuration: str = ""


class ConfigurationAgreement(BaseModel):
    """The verdicts of one role configuration against the labels."""

    configuration: str
    transcripts: list[str]
    agreement: VerdictAgreement


class Calibration(BaseModel):
    transcript: str
    protocol: str
    labels: str  # where the labels came from
    source: str = ""  # the section's name, the same in report, calibrate, --json, the viewer and export-html
    kind: str = "people"  # "gold": the protocol's gold; "people": labels people gave (a file, the sidecar)
    level: float
    seed: int
    left_out: list[str]
    agreement: VerdictAgreement | None
    people: HumanAgreement | None
    estimate: PPIEstimate | None
    assumptions: list[str]
    disagreements: list[Disagreement]
    more_disagreements: int = 0  # beyond those listed: a calibration made for a page lists the first ones alone
    scores: ScoreAgreement | None = None  # where the verdicts carry a score
    configurations: list[ConfigurationAgreement] = []  # where the runs' role configurations differ
    paired: list[PairedRuns] = []  # every two configurations on their shared items
    ties: list[str] = []  # items whose annotators tie: counted here and in ``people``, not in ``agreement``
    small: str | None = None  # said beside the numbers of a section on fewer than SMALL_N items

    @property
    def name(self) -> str:
        return self.source or self.labels

    def text(self, *, limit: int = 20) -> str:
        pct = {"percent": True}
        lines = [f"calibration of {self.transcript} ({self.protocol}) against {self.name}"]
        if self.labels != self.name:
            lines.append(f"  labels: {self.labels}")
        lines += [f"  left out: {why}" for why in self.left_out]
        if self.ties:
            shown_ties = ", ".join(self.ties[:10]) + (f", … {len(self.ties) - 10} more" if len(self.ties) > 10 else "")
            lines.append(f"  ties: {len(self.ties)} item{'s' if len(self.ties) != 1 else ''} whose annotators tie "
                         f"({shown_ties}): in people against each other, not in the verdicts' agreement")  # fmt: skip
        a = self.agreement
        if a is not None:
            small = f" ({self.small})" if self.small else ""
            lines += [f"verdicts against {self.name}: {a.items} items, {a.sessions} sessions{small}",
                      a.confusion.text("gold" if self.kind == "gold" else "people")]  # fmt: skip
            who, s = ("gold", "s") if self.kind == "gold" else ("people", "")
            rows = [("accuracy", a.accuracy, pct), (f"TPR (accepts what {who} accept{s})", a.tpr, pct),
                    (f"TNR (rejects what {who} reject{s})", a.tnr, pct), ("Cohen's κ", a.kappa, {}),
                    ("Krippendorff's α", a.alpha, {})]  # fmt: skip
            lines += [f"  {name:<34}{iv.text(**kw)}" for name, iv, kw in rows]  # type: ignore[arg-type]
        if self.people is not None:
            h = self.people
            lines.append(f"people against each other: {len(h.annotators)} annotators, {h.items} items labelled twice+")
            lines.append(f"  Krippendorff's α  {h.alpha.text()}")
            lines += [f"  Cohen's κ {x}–{y}  {k.text()}" for x, y, k in h.kappas]
        if self.scores is not None:
            lines += [f"the verdicts' score against people: {self.scores.sessions} sessions", self.scores.text()]
        if self.configurations:
            lines.append(f"per role configuration ({len(self.configurations)}):")
            for c in self.configurations:
                a = c.agreement
                lines.append(f"  {c.configuration} ({', '.join(c.transcripts)}): {a.items} items")
                lines += [f"    {name:<18}{iv.text(percent=pc)}" for name, iv, pc in
                          (("accuracy", a.accuracy, True), ("TPR", a.tpr, True), ("TNR", a.tnr, True),
                           ("Cohen's κ", a.kappa, False), ("Krippendorff's α", a.alpha, False))]  # fmt: skip
        lines += [p.text() for p in self.paired]
        if self.estimate is not None and self.kind == "gold":
            lines.append(self.estimate.text("share of items the gold accepts", labelled="with gold"))
        elif self.estimate is not None:
            lines.append(self.estimate.text("share of items people accept"))
        lines += [f"assumes: {x}" for x in self.assumptions]
        return "\n".join([*lines, *self.disagreement_lines(limit)])

    @property
    def disagreement_count(self) -> int:
        """Every disagreement, listed or not."""
        return len(self.disagreements) + self.more_disagreements

    def disagreement_lines(self, limit: int = 20) -> list[str]:
        n = self.disagreement_count
        lines = [f"disagreements ({n}):" if n else "disagreements: none"]
        for d in self.disagreements[:limit]:
            who = "gold" if self.kind == "gold" else "people"
            lines.append(f"  {d.item_id}: verdict {d.decision or d.verdict} ({d.verdict}), {who} {d.label}")
            lines.append(f"    {d.command}")
            if d.url:
                lines.append(f"    {d.url}")
        if n > limit:
            lines.append(f"  … {n - limit} more (--json for all)")
        return lines


def drawn_size(how: str | None) -> int | None:
    """The sample size that how the labels were drawn names (``drawn by --sample N --seed S``), where it does."""
    if how is None or "--sample " not in how:
        return None
    word = how.split("--sample ", 1)[1].split(" ", 1)[0]
    return int(word) if word.isdigit() else None


def majority(labels: Mapping[str, Mapping[str, bool]]) -> tuple[dict[str, bool], list[str]]:
    """Each item's majority label, and the items whose annotators tie."""
    out, tied = {}, []
    for item, by in labels.items():
        votes = Counter(by.values())
        if votes[True] == votes[False]:
            tied.append(item)
        else:
            out[item] = votes[True] > votes[False]
    return out, tied


def calibrate(
    run: Run,
    labels: Mapping[str, Mapping[str, bool]],
    *,
    source: str,
    random_labels: str | None,
    level: float = DEFAULT_LEVEL,
    seed: int = DEFAULT_SEED,
    resamples: int = DEFAULT_RESAMPLES,
    url: Callable[[Judged], str | None] | None = None,
    name: str = "",
    kind: str = "people",
    drawn: int | None = None,
    listed: int | None = None,
) -> Calibration:
    """The run's verdicts against ``labels`` (item id → annotator → accepted). ``random_labels`` says how the
    labelled items are known to be a random sample of the run (``None``: they are not, and no debiased estimate is
    made unless every item is labelled); ``drawn``: the size of that sample, said beside the estimate. ``url``: the
    viewer address of a session's chat, where there is one; ``listed``: the disagreements kept (the first ones; None:
    all), the rest counted. ``name`` and ``kind``: the section's name (default:
    ``source``) and whether it is the protocol's ``gold`` or ``people``'s labels. ``level`` 0: every figure
    without its interval."""
    left_out = []
    unjudged = len(run.sessions) - len(run.judged())
    if unjudged:
        left_out.append(f"{unjudged} session{'s' if unjudged != 1 else ''} without an accept/reject verdict")
    item_label, tied = majority(labels)
    drawn = drawn if drawn is not None else drawn_size(random_labels)
    by_item: dict[str, list[Judged]] = {}
    for s in run.judged():
        by_item.setdefault(s.item_id, []).append(s)
    labelled = [i for i in by_item if i in item_label]
    if not labelled:
        raise CalibrationError(f"{run.path}: no item with a verdict has a label ({source})")
    word = {True: "accepted", False: "rejected"}
    wrong = ((i, s) for i in labelled for s in by_item[i] if bool(s.accepted) != item_label[i])
    disagreements = [
        Disagreement(item_id=i, session_id=s.session_id, decision=s.decision, verdict=word[bool(s.accepted)],
                     label=word[item_label[i]], command=run.show_command(s.session_id, s.path),
                     url=url(s) if url else None, configuration=s.configuration)
        for i, s in itertools.islice(wrong, listed)
    ]  # fmt: skip
    more = sum(1 for _ in wrong)
    boot: dict[str, Any] = {"level": level, "seed": seed, "resamples": resamples}
    census = len(labelled) == len(by_item)
    assumptions: list[str] = []
    estimate = None
    if census or random_labels is not None:

        def share(sessions: Sequence[Judged]) -> float:
            return sum(bool(s.accepted) for s in sessions) / len(sessions)

        unlabelled = [share(ss) for i, ss in by_item.items() if i not in item_label]
        estimate = ppi_mean([float(item_label[i]) for i in labelled], [share(by_item[i]) for i in labelled],
                            unlabelled, level=level, bounds=(0.0, 1.0))  # fmt: skip
        if not census:
            assumptions.append(f"{RANDOM_ASSUMPTION}: {random_labels}")
            of = f" of the {drawn} drawn items" if drawn is not None else ""
            tie = f" ({len(tied)} tie{'s' if len(tied) != 1 else ''}: not in the estimate)" if tied else ""
            assumptions.append(f"the estimate is on the drawn random sample alone: {len(labelled)}{of} labelled{tie}")
    return Calibration(
        transcript=run.path,
        protocol=run.protocol,
        labels=source,
        source=name or source,
        kind=kind,
        ties=tied,
        small=(f"n = {len(labelled)} < {SMALL_N}: few labelled items, the intervals say how little they tell"
               if len(labelled) < SMALL_N else None),
        level=level,
        seed=seed,
        left_out=left_out,
        agreement=agreement_of_counts(
            (pair_counts((bool(s.accepted), item_label[i]) for s in by_item[i]) for i in labelled), **boot
        ),
        people=human_agreement(labels, **boot),
        estimate=estimate,
        assumptions=assumptions,
        disagreements=disagreements,
        more_disagreements=more,
        scores=_scores(run, by_item, labelled, item_label, boot),
        configurations=_configurations(run, labelled, item_label, boot),
        paired=_paired(run, item_label, level, seed),
    )


def _scores(run: Run, by_item: Mapping[str, list[Judged]], labelled: Sequence[str], item_label: Mapping[str, bool],
            boot: dict[str, Any]) -> ScoreAgreement | None:  # fmt: skip
    """AUROC and reliability where every labelled session's verdict carries a score."""
    sessions = [s for i in labelled for s in by_item[i]]
    if not sessions or any(s.score is None for s in sessions):
        return None
    groups = [[(float(s.score), item_label[i]) for s in by_item[i]] for i in labelled]  # type: ignore[arg-type]
    return score_agreement(run.score_statistic or "score", groups, **boot)


def _configurations(run: Run, labelled: Sequence[str], item_label: Mapping[str, bool], boot: dict[str, Any]
                    ) -> list[ConfigurationAgreement]:  # fmt: skip
    """The agreement of each role configuration, where the runs have more than one."""
    configs = run.configurations()
    if len(configs) < 2:
        return []
    wanted = set(labelled)
    out = []
    for c in configs:
        mine = [s for s in run.judged() if s.configuration == c and s.item_id in wanted]
        by: dict[str, list[tuple[bool, bool]]] = {}
        for s in mine:
            by.setdefault(s.item_id, []).append((bool(s.accepted), item_label[s.item_id]))
        if by:
            out.append(ConfigurationAgreement(configuration=c, transcripts=list(dict.fromkeys(s.path for s in mine)),
                                              agreement=verdict_agreement(list(by.values()), **boot)))  # fmt: skip
    return out


def _paired(run: Run, item_label: Mapping[str, bool], level: float, seed: int) -> list[PairedRuns]:
    """Every two role configurations compared on their shared items (McNemar, paired bootstrap), the labels as
    gold."""
    configs = run.configurations()
    if len(configs) < 2:
        return []
    sides: list[dict[str, list[tuple[bool, bool | None]]]] = []
    for c in configs:
        side: dict[str, list[tuple[bool, bool | None]]] = {}
        for s in run.judged():
            if s.configuration == c:
                side.setdefault(s.item_id, []).append((bool(s.accepted), item_label.get(s.item_id)))
        sides.append(side)
    names = [f"[{k + 1}] {c}" for k, c in enumerate(configs)]
    return [paired_runs(sides[i], sides[j], names=(names[i], names[j]), level=level, seed=seed)
            for i, j in itertools.combinations(range(len(configs)), 2)]  # fmt: skip


def sample_lines(run: Run, size: int, seed: int) -> list[dict[str, Any]]:
    """The items to label (``--sample N --seed S -o FILE``), in random order: each with its first session, the
    command that opens it, what a person judges (the protocol's shown item fields, and the text examined where the
    session made it: a generated claim, by its display label), the gold fields as a reference, and an empty label
    to fill in."""
    first: dict[str, Judged] = {}
    for s in run.judged():
        first.setdefault(s.item_id, s)
    if not first:
        raise CalibrationError(f"{run.path}: no session with an accept/reject verdict to sample")
    drawn = draw_sample(first, size, seed)
    where = {i: first[i].path or run.path for i in drawn}  # runs calibrated together can share session ids
    shown: dict[tuple[str, str], Shown] = {}
    for path in dict.fromkeys(where.values()):
        mine = shown_values(path, {first[i].session_id for i in drawn if where[i] == path})
        shown |= {(path, sid): seen for sid, seen in mine.items()}
    lines = []
    for i in drawn:
        sid = first[i].session_id
        seen = shown.get((where[i], sid), Shown())
        lines.append({"item_id": i, "session_id": sid, "command": run.show_command(sid, first[i].path),
                      "item": seen.item | seen.subject, "reference": seen.reference, "label": None})  # fmt: skip
    return lines


@dataclass
class Shown:
    """What a person labelling a session is shown of it: its item's fields, the text it examined (``subject``,
    where the verdict records one) and its item's gold fields, shown as a reference."""

    item: dict[str, Any] = field(default_factory=dict)
    subject: dict[str, Any] = field(default_factory=dict)
    reference: dict[str, Any] = field(default_factory=dict)


def shown_values(path: str | Path, session_ids: set[str]) -> dict[str, Shown]:
    """What these sessions show a person (``Shown``), in one pass over the file keeping these sessions alone: the
    item's fields its run's display hints name (``item_fields``; else every field but the gold fields and the id),
    non-empty, from the session's first start; the text examined where the protocol records it in its verdict
    (``views.verdict.subject``: a claim the examinee generated), by its label; the gold fields, non-empty."""
    from voirdire.transcript import RunHeader, SessionStart, Verdict, iter_records

    headers: dict[str, RunHeader] = {}
    last: RunHeader | None = None
    found: dict[str, Shown] = {}
    for record in iter_records(Path(path)):
        if isinstance(record, RunHeader):
            headers[record.run_id] = last = record
            continue
        if record.session_id not in session_ids:
            continue
        header = headers.get(record.run_id, last)
        if isinstance(record, SessionStart) and record.session_id not in found:
            item, hidden = record.item, set(header.display.gold_fields) if header is not None else set()
            named = [k for k in (header.display.item_fields if header is not None else ()) if k in item]
            keys = named or [k for k in item if k not in hidden and k != "id"]
            found[record.session_id] = Shown(
                item={k: item[k] for k in keys if item[k] not in (None, "")},
                reference={k: item[k] for k in hidden if item.get(k) not in (None, "", [])},
            )
        elif isinstance(record, Verdict) and header is not None and header.display.views.verdict.subject is not None:
            subject = header.display.views.verdict.subject
            value = record.statistics.get(subject.key)
            if value not in (None, ""):
                found.setdefault(record.session_id, Shown()).subject = {subject.label or subject.key: value}
    return found
