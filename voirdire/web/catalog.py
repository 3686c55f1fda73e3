"""The transcripts a viewer serves: folders rescanned on every look (a run that starts later appears), files given
by name, each with its index and a summary for the runs list. A run's cost is priced by ``voirdire.reports.prices`` (the
table ``voirdire report`` uses), over every attempt's billed calls as the report counts them."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from voirdire.reports import Cost, Prices, load_prices, run_cost
from voirdire.transcript import is_transcript
from voirdire.web.errors import ViewerError
from voirdire.web.index import TranscriptIndex


@dataclass
class RunSummary:
    """One transcript as the runs list shows it."""

    key: str
    path: Path
    protocol: str = ""
    created: str | None = None
    paper: str | None = None
    dataset: str | None = None
    roles: dict[str, str] = field(default_factory=dict)
    invocations: int = 0
    sessions: int = 0
    finished: int = 0
    errors: int = 0
    running: int = 0
    parse_failures: int = 0
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    cost: Cost | None = None
    correct: int = 0
    judged: int = 0  # verdicts whose gold correctness is known
    humans: int = 0
    decisions: dict[str, int] = field(default_factory=dict)
    live: bool = False
    problems: list[str] = field(default_factory=list)


def summarize(key: str, index: TranscriptIndex, prices: Prices | None = None) -> RunSummary:
    s = RunSummary(key=key, path=index.path, live=index.path.with_name(index.path.name + ".lock").exists())
    s.problems = list(index.problems)
    try:
        header = index.header()
    except ViewerError as exc:
        s.problems.append(str(exc))
        header = None
    if header is not None:
        s.protocol, s.created, s.paper, s.dataset = (
            header.protocol,
            header.created.isoformat(),
            header.paper,
            header.dataset,
        )
        s.roles = {role: binding.spec for role, binding in header.roles.items()}
    s.invocations = len(index.headers)
    totals = index.totals()  # SQL sums over the index's rows: no attempt is read to list a run
    for name in ("sessions", "finished", "errors", "running", "parse_failures", "calls", "prompt_tokens",
                 "completion_tokens", "latency_s", "humans", "judged", "correct"):  # fmt: skip
        setattr(s, name, totals[name])
    s.decisions = dict(totals["decisions"])
    s.cost = run_cost(totals["billed"], prices if prices is not None else load_prices())  # resumed attempts too
    return s


class Library:
    """Folders and files given to ``voirdire view``; each transcript gets a stable key for its URLs."""

    def __init__(self, sources: Sequence[str | Path], *, persist: bool = True) -> None:
        self.folders: list[Path] = []
        self.files: list[Path] = []
        self.persist = persist
        for source in sources:
            path = Path(source)
            if path.is_dir():
                self.folders.append(path)
            elif path.is_file():
                if path.stat().st_size and not is_transcript(path):
                    raise ViewerError(f"{path}: not a voirdire transcript (its first line is not a run header)")
                self.files.append(path)
            else:
                raise ViewerError(f"{path}: no such transcript or folder")
        self._keys: dict[Path, str] = {}
        self._indexes: dict[str, TranscriptIndex] = {}
        self._lock = threading.Lock()

    def _key(self, path: Path) -> str:
        resolved = path.resolve()
        if resolved not in self._keys:
            taken = set(self._keys.values())
            key, n = path.name, 1
            while key in taken:
                n += 1
                key = f"{path.name}~{n}"
            self._keys[resolved] = key
            self._indexes[key] = TranscriptIndex(path, persist=self.persist)
        return self._keys[resolved]

    def paths(self) -> list[Path]:
        """Every transcript: files given by name first, then each folder's, newest first."""
        found = list(self.files)
        for folder in self.folders:
            candidates = [p for p in folder.glob("*.jsonl") if p.is_file()]
            candidates.sort(key=lambda p: p.stat().st_mtime, reverse=True)
            found += [p for p in candidates if is_transcript(p)]
        return list(dict.fromkeys(found))

    def indexes(self) -> list[tuple[str, TranscriptIndex]]:
        with self._lock:
            return [(key, self._indexes[key]) for key in map(self._key, self.paths())]

    def get(self, key: str) -> TranscriptIndex | None:
        with self._lock:
            if key not in self._indexes:
                for path in self.paths():  # a transcript that appeared since the last look
                    self._key(path)
            return self._indexes.get(key)

    def summaries(self, prices: Prices | None = None) -> list[RunSummary]:
        out = []
        for key, index in self.indexes():
            try:
                index.refresh()
            except ViewerError as exc:
                out.append(RunSummary(key=key, path=index.path, problems=[str(exc)]))
                continue
            out.append(summarize(key, index, prices))
        return out
