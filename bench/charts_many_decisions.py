"""``voirdire report T --plot DIR`` on a run whose 6,000 sessions each end with a decision of their own (a free-text
verdict, as a protocol that returns the model's answer gives): the verdicts chart keeps the 11 most frequent
decisions and one bar for the rest, so drawing it takes as long as any other chart. For comparison, the time to
draw the chart as it was drawn before, one bar per decision.

    python bench/charts_many_decisions.py [--sessions 6000]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]

from voirdire.analysis.drawing import render  # noqa: E402
from voirdire.cli import main  # noqa: E402
from voirdire.reports.charts import BarChart, Series  # noqa: E402
from voirdire.transcript import RunHeader, SessionStart, TranscriptWriter, Verdict  # noqa: E402


def write(path: Path, sessions: int) -> None:
    when = datetime(2026, 1, 1, tzinfo=UTC)
    with TranscriptWriter(path) as w:
        w.write(RunHeader(run_id="r", protocol="free-text"))
        for i in range(sessions):
            base = {"run_id": "r", "session_id": f"s{i}", "time": when}
            w.write(SessionStart(**base, seq=1, item_id=f"i{i}", item={"question": f"q{i}"}))
            w.write(Verdict(**base, seq=2, decision=f"answer number {i}"))


def main_() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=6000)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp())
    path = folder / "free.jsonl"
    write(path, args.sessions)
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = main(["report", str(path), "--plot", str(folder / "charts")])
    took = time.perf_counter() - start
    print(f"report --plot, {args.sessions:,} distinct decisions: {took:.2f} s (exit {code}); "
          + ", ".join(sorted(p.name for p in (folder / "charts").iterdir())))  # fmt: skip
    old = BarChart("verdicts", "one bar per decision", "decision", "sessions",
                   tuple(f"answer number {i}" for i in range(args.sessions)),
                   (Series("sessions", (1.0,) * args.sessions),), stacked=True)  # fmt: skip
    start = time.perf_counter()
    render(old)
    print(f"drawing one bar per decision, as before: {time.perf_counter() - start:.2f} s")


if __name__ == "__main__":
    main_()
