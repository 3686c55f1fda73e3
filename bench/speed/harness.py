"""Running the drivers: the fake endpoint's process, one measured subprocess per driver, the server's records.

Every driver runs in a process of its own, started here and reaped with ``os.wait4``, which gives that process's
user and system CPU and its peak RSS (``ru_maxrss``) alone; its wall time runs from just before the process is
started to its exit, start-up included. The fake endpoint is another process, so its CPU is never the driver's.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
_CLK_TCK = os.sysconf("SC_CLK_TCK")


@dataclass
class Proc:
    """One measured process."""

    argv: list[str]
    rc: int | None = None
    wall_s: float = 0.0
    user_s: float = 0.0
    sys_s: float = 0.0
    peak_rss_mb: float = 0.0
    timed_out: bool = False
    stdout_tail: str = ""
    stderr_tail: str = ""

    @property
    def cpu_s(self) -> float:
        return self.user_s + self.sys_s

    def command(self) -> str:
        return shlex.join(self.argv)

    def result_line(self) -> dict[str, Any]:
        """The JSON line a bare driver prints last (empty for voirdire)."""
        for line in reversed(self.stdout_tail.strip().splitlines()):
            if line.startswith("{"):
                try:
                    value = json.loads(line)
                except json.JSONDecodeError:
                    return {}
                return value if isinstance(value, dict) else {}
        return {}

    def error_line(self) -> str:
        """What a failed driver said: the last line of stderr naming an error, else its last line."""
        lines = [ln.strip() for ln in self.stderr_tail.strip().splitlines() if ln.strip()]
        if self.timed_out:
            return "timed out (killed)"
        errors = [ln for ln in lines if "error" in ln.lower() and not ln.lower().startswith("warning")]
        return (errors or lines or [f"exit status {self.rc}"])[-1][:300]


def child_env() -> dict[str, str]:
    """The drivers' environment: the repository importable, nothing proxied, no Inspect display or telemetry."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        env.pop(var, None)
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    env["INSPECT_DISPLAY"] = "none"
    env.pop("INSPECT_TELEMETRY", None)
    env.pop("INSPECT_EVAL_MODEL", None)
    env["HF_HUB_OFFLINE"] = "1"
    env["PYTHONUNBUFFERED"] = "1"
    return env


def checkout_versions(ap: argparse.ArgumentParser, specs: list[str], this: str) -> dict[str, Path]:
    """This checkout (as ``this``) and each ``--version NAME=DIR``, DIR another checkout of voirdire."""
    versions: dict[str, Path] = {this: REPO}
    for spec in specs:
        name, _, folder = spec.partition("=")
        if not folder or not (Path(folder) / "voirdire").is_dir():
            ap.error(f"--version {spec!r}: expected NAME=DIR, DIR a checkout of voirdire")
        versions[name] = Path(folder).resolve()
    return versions


def run_child(source: str, code: Path) -> dict[str, Any]:
    """``python -c source`` in the drivers' environment: the JSON object its last line prints."""
    done = subprocess.run(
        [sys.executable, "-c", source], capture_output=True, text=True, env=child_env(), cwd=REPO, check=False
    )
    if done.returncode:
        raise SystemExit(f"{code}: exit {done.returncode}: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def _tail(path: Path, chars: int = 4000) -> str:
    data = path.read_bytes() if path.exists() else b""
    return data[-chars:].decode("utf-8", "replace")


def measure(argv: list[str], cwd: Path, name: str, timeout_s: float) -> Proc:
    """Run ``argv`` to its end and measure it; past ``timeout_s`` its process group is killed."""
    out, err = cwd / f"{name}.stdout", cwd / f"{name}.stderr"
    proc = Proc(argv=argv)
    with out.open("wb") as fo, err.open("wb") as fe:
        start = time.perf_counter()
        child = subprocess.Popen(argv, cwd=cwd, env=child_env(), stdout=fo, stderr=fe, start_new_session=True)
        deadline = start + timeout_s
        while True:
            pid, status, usage = os.wait4(child.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline and not proc.timed_out:
                proc.timed_out = True
                os.killpg(child.pid, signal.SIGKILL)
            time.sleep(0.005)
        proc.wall_s = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)  # reaped here; Popen must not wait again
    proc.rc = child.returncode
    proc.user_s, proc.sys_s = usage.ru_utime, usage.ru_stime
    proc.peak_rss_mb = usage.ru_maxrss / 1024  # KiB on Linux
    proc.stdout_tail, proc.stderr_tail = _tail(out), _tail(err)
    return proc


def process_cpu_s(pid: int) -> float:
    """User + system CPU of a running process (Linux /proc), 0 where it cannot be read."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / _CLK_TCK


class FakeEndpoint:
    """The fake endpoint in its own process; ``phase(name)`` starts a driver's records, ``records(name)`` reads
    them."""

    def __init__(self, latency_ms: float, followups: int) -> None:
        argv = [
            sys.executable,
            "-m",
            "bench.speed.fake_server",
            "--latency-ms",
            str(latency_ms),
            "--followups",
            str(followups),
        ]
        self.process = subprocess.Popen(
            argv, cwd=REPO, env=child_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line.startswith("PORT "):
            self.close()
            raise RuntimeError(f"fake endpoint did not start: {line!r}")
        self.port = int(line.split()[1])
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never a proxy

    def _ask(self, path: str, body: dict[str, Any] | None = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}{path}", data=data, method="POST" if data else "GET"
        )
        with self._opener.open(request, timeout=60) as response:
            return json.loads(response.read())

    def phase(self, name: str) -> None:
        self._ask("/_bench/phase", {"name": name})

    def traffic(self, name: str) -> Traffic:
        log = self._ask(f"/_bench/log?phase={name}")
        traffic = Traffic.of(log["records"])
        traffic.connections = int(log.get("connections", 0))
        return traffic

    def cpu_s(self) -> float:
        return process_cpu_s(self.process.pid)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@dataclass
class Traffic:
    """What the endpoint saw from one driver run."""

    requests: int = 0
    span_s: float = 0.0
    """First request's arrival to the last reply."""
    max_in_flight: int = 0
    identical: int = 0
    """Requests whose body (bytes) was already seen in the same session."""
    sessions: int = 0
    connections: int = 0
    """Connections the endpoint accepted (the harness's own control requests included: one each)."""
    kinds: dict[str, int] = field(default_factory=dict)
    digests: Counter[str] = field(default_factory=Counter)
    canonical: Counter[str] = field(default_factory=Counter)

    @classmethod
    def of(cls, rows: list[list[Any]]) -> Traffic:
        t = cls(requests=len(rows))
        if not rows:
            return t
        t.span_s = max(r[1] for r in rows) - min(r[0] for r in rows)
        events = sorted([(r[0], 1) for r in rows] + [(r[1], -1) for r in rows])
        level = 0
        for _, step in events:
            level += step
            t.max_in_flight = max(t.max_in_flight, level)
        seen: set[tuple[int, str]] = set()
        sessions: set[int] = set()
        for r in rows:
            key = (r[4], r[2])
            t.identical += key in seen
            seen.add(key)
            sessions.add(r[4])
        t.sessions = len(sessions)
        t.kinds = dict(Counter(r[5] for r in rows))
        t.digests = Counter(r[2] for r in rows)
        t.canonical = Counter(r[3] for r in rows)
        return t

    def same_bodies(self, other: Traffic) -> str:
        """``bytes``: the same multiset of body digests; ``canonical``: the same once key order is ignored;
        ``distinct bytes`` / ``distinct canonical``: the same set of bodies, sent a different number of times; else
        how many requests differ."""
        if self.digests == other.digests:
            return "bytes"
        if self.canonical == other.canonical:
            return "canonical"
        if set(self.digests) == set(other.digests):
            return "distinct bytes"  # the same requests, some sent more often by one side (coalescing)
        if set(self.canonical) == set(other.canonical):
            return "distinct canonical"
        differ = sum((self.canonical - other.canonical).values()) + sum((other.canonical - self.canonical).values())
        return f"no ({differ} differ)"

    def summary(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "span_s": round(self.span_s, 4),
            "max_in_flight": self.max_in_flight,
            "identical_requests": self.identical,
            "sessions_seen": self.sessions,
            "connections": self.connections,
            "kinds": self.kinds,
        }
