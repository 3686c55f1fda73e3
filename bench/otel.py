"""What `--otel` costs a run, for docs/integrations.md: a scripted cross-examination of N questions with no export,
with a collector that answers (a fake OTLP/HTTP receiver on 127.0.0.1) and with one that is down (a port nothing
listens on), in separate processes, interleaved, each setting repeated. Prints one JSON line per run and a summary.

    python -m bench.otel --sessions 200 --runs 3
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from tests.integrations.test_otel import SCRIPT


class _Receiver(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def one(folder: Path, data: Path, script: Path, otel: str | None, i: int) -> dict[str, object]:
    out = folder / f"run-{i}.jsonl"
    cmd = [sys.executable, "-m", "voirdire", "run", "cross_examination", "--questions", str(data), "--model",
           f"scripted:{script}", "--out", str(out), "--fresh", "--no-progress", "--max-followups", "1",
           "--concurrency", "10"]  # fmt: skip
    if otel:
        cmd += ["--otel", otel]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    env.pop("OTEL_EXPORTER_OTLP_ENDPOINT", None)
    began, cpu = time.perf_counter(), _children_cpu()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    wall, cpu = time.perf_counter() - began, _children_cpu() - cpu
    warnings = [line for line in done.stderr.splitlines() if line.startswith("warning: otel:")]
    return {"wall_s": round(wall, 3), "cpu_s": round(cpu, 3), "rc": done.returncode, "otel_warnings": len(warnings)}


def _children_cpu() -> float:
    """CPU seconds (user and system) of the finished child processes: less moved by other work than wall time."""
    import resource

    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=200)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    settings = {"none": None, "collector up": f"http://127.0.0.1:{server.server_address[1]}",
                "collector down": f"http://127.0.0.1:{_closed_port()}"}  # fmt: skip
    walls: dict[str, list[float]] = {k: [] for k in settings}
    cpus: dict[str, list[float]] = {k: [] for k in settings}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        script = folder / "script.yaml"
        script.write_text(SCRIPT, encoding="utf-8")
        data = folder / "questions.jsonl"
        data.write_text("".join(json.dumps({"id": f"q{i}", "question": f"What is the capital of country {i}?"}) + "\n"
                                for i in range(args.sessions)), encoding="utf-8")  # fmt: skip
        for r in range(args.runs):
            for name, url in settings.items():  # interleaved, so drift in the machine's load hits every setting
                result = one(folder, data, script, url, r)
                walls[name].append(float(result["wall_s"]))  # type: ignore[arg-type]
                cpus[name].append(float(result["cpu_s"]))  # type: ignore[arg-type]
                print(json.dumps({"setting": name, "run": r, **result}), flush=True)
    base, base_cpu = statistics.median(walls["none"]), statistics.median(cpus["none"])
    summary = {k: {"median_s": statistics.median(v), "range_s": [min(v), max(v)],
                   "ratio_to_none": round(statistics.median(v) / base, 3),
                   "cpu_median_s": statistics.median(cpus[k]), "cpu_range_s": [min(cpus[k]), max(cpus[k])],
                   "cpu_ratio_to_none": round(statistics.median(cpus[k]) / base_cpu, 3)}
               for k, v in walls.items()}  # fmt: skip
    print(json.dumps(summary))
    server.shutdown()


if __name__ == "__main__":
    main()
