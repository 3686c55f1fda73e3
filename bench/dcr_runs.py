"""DCR on the first 20 SummEval summaries and the first 20 PAWS pairs, by the embedded model or a fake endpoint.

    python bench/dcr_runs.py --backend embedded    # SmolLM2-135M on llama.cpp (slow: minutes per item on 2 cores)
    python bench/dcr_runs.py --backend fake        # the same command with --model openai-compatible:fake@URL

Each run is ``voirdire dcr --data NAME --limit 20 --rounds 1 --max-tokens 256`` (only ``--model`` differs); its
transcript (gzipped) and its report go to ``--out-dir``. The fake endpoint is the lexical stand-in of
tests/protocols/dcr/fake_dcr.py on 127.0.0.1: its numbers show the pipeline over HTTP, not a model's judgment.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import io
import json
import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for tests.fake_openai when run as a script

from tests.fake_openai import FakeOpenAIServer
from tests.protocols.dcr.fake_dcr import respond
from voirdire.cli import main as voirdire


@contextlib.contextmanager
def backend(name: str) -> Iterator[list[str]]:
    if name == "embedded":
        yield []
        return
    with FakeOpenAIServer(respond) as server:
        yield ["--model", f"openai-compatible:fake@{server.url}"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", choices=["embedded", "fake"], required=True)
    ap.add_argument("--data", default="summeval,paws")
    ap.add_argument("--limit", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--out-dir", type=Path, default=Path("docs/results/dcr"))
    ap.add_argument("--work", type=Path, default=Path("transcripts"), help="where the transcript is written first")
    args = ap.parse_args()
    args.out_dir.mkdir(parents=True, exist_ok=True)
    for data in args.data.split(","):
        out = args.work / f"dcr-{data}-{args.backend}.jsonl"
        command = ["dcr", "--data", data, "--limit", str(args.limit), "--rounds", str(args.rounds)]
        command += ["--max-tokens", "256", "--out", str(out), "--no-progress", "--json"]
        with backend(args.backend) as model:
            t0 = time.perf_counter()
            with contextlib.redirect_stdout(io.StringIO()):
                rc = voirdire([*command, *model])
            wall = time.perf_counter() - t0
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            voirdire(["report", str(out), "--json"])
        report = json.loads(buf.getvalue())
        report["transcript"] = str(args.out_dir / f"dcr-{data}-{args.backend}.jsonl.gz")
        record = {
            "command": "voirdire " + " ".join(command),
            "backend": args.backend,
            "rc": rc,
            "wall_s": round(wall, 1),
        }
        (args.out_dir / f"dcr-{data}-{args.backend}.report.json").write_text(
            json.dumps({**record, "report": report}, indent=1) + "\n"
        )
        with out.open("rb") as src, gzip.open(args.out_dir / f"dcr-{data}-{args.backend}.jsonl.gz", "wb") as dst:
            shutil.copyfileobj(src, dst)
        print(f"{data} {args.backend}: rc {rc}, {wall:.1f} s; {out}", flush=True)
        voirdire(["report", str(out)])


if __name__ == "__main__":
    main()
