"""The command line of each driver for one scenario."""

from __future__ import annotations

import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from bench.speed.examination import Params, Shape

DRIVERS = ("voirdire", "raw", "raw-tuned", "autogen", "inspect")
DEFAULT_DRIVERS = ("voirdire", "raw", "autogen", "inspect")
MODULES = {
    "raw": "bench.speed.drivers.raw",
    "raw-tuned": "bench.speed.drivers.raw",
    "autogen": "bench.speed.drivers.autogen_client",
    "inspect": "bench.speed.drivers.inspect_eval",
}
DEFAULT_MAX_FOLLOWUPS = 5


@dataclass(frozen=True)
class Scenario:
    sessions: int
    latency_ms: float
    concurrency: int
    examinations: int = 1
    followups: int = 0
    sampling_temperature: float | None = None
    """None: each driver's default (voirdire's 0.7, which the bare drivers share)."""
    answers: str | None = None
    """None: voirdire's default (in_turn); else passed to voirdire as ``--answers``."""
    sequential_examinations: bool = False
    max_followups: int = DEFAULT_MAX_FOLLOWUPS
    voirdire_args: tuple[str, ...] = ()

    def params(self) -> Params:
        return Params(
            examinations=self.examinations,
            sampling_temperature=0.7 if self.sampling_temperature is None else self.sampling_temperature,
            max_followup_rounds=self.max_followups,
            concurrent_examinations=not self.sequential_examinations,
            answers=self.answers or "in_turn",
        )

    def shape(self) -> Shape:
        return Shape(
            questions=2,
            followups=self.followups,
            examinations=self.examinations,
            max_followup_rounds=self.max_followups,
        )


def voirdire_bin() -> str:
    here = Path(sys.executable).parent / "voirdire"
    return str(here) if here.exists() else (shutil.which("voirdire") or "voirdire")


def voirdire_argv(sc: Scenario, base_url: str, claims: Path, out: Path) -> list[str]:
    """``voirdire examine`` as a user runs it; protocol options only where the scenario leaves voirdire's defaults, so
    that the command works with whichever options this checkout's voirdire has."""
    spec = f"openai-compatible:fake@{base_url}"
    argv = [voirdire_bin(), "examine", "--questions", str(claims)]
    argv += ["--model", f"examiner={spec}", "--model", f"examinee={spec}"]
    argv += ["--concurrency", str(sc.concurrency), "--out", str(out), "--fresh", "--no-progress"]
    argv += ["--examinations", str(sc.examinations)]
    if sc.sampling_temperature is not None:
        argv += ["--sampling-temperature", str(sc.sampling_temperature)]
    if sc.answers is not None:
        argv += ["--answers", sc.answers]
    if sc.sequential_examinations:
        argv += ["--no-concurrent-examinations"]
    if sc.max_followups != DEFAULT_MAX_FOLLOWUPS:
        argv += ["--max-followups", str(sc.max_followups)]
    return argv + list(sc.voirdire_args)


def bare_argv(driver: str, sc: Scenario, base_url: str, claims: Path, workdir: Path, tag: str) -> list[str]:
    p = sc.params()
    argv = [sys.executable, "-m", MODULES[driver], "--base-url", base_url, "--claims", str(claims)]
    argv += ["--concurrency", str(sc.concurrency), "--examinations", str(sc.examinations)]
    argv += ["--sampling-temperature", str(p.sampling_temperature), "--max-followups", str(sc.max_followups)]
    argv += ["--answers", p.answers]
    if sc.sequential_examinations:
        argv += ["--sequential-examinations"]
    in_flight = sc.concurrency * sc.shape().in_flight(p)
    if driver == "raw-tuned":
        argv += ["--keepalive", str(in_flight)]
    if driver == "inspect":
        argv += ["--log-dir", str(workdir / f"inspect-logs-{tag}"), "--max-connections", str(in_flight)]
    return argv


def driver_argv(driver: str, sc: Scenario, base_url: str, claims: Path, workdir: Path, tag: str) -> list[str]:
    if driver == "voirdire":
        return voirdire_argv(sc, base_url, claims, workdir / f"voirdire-{tag}.jsonl")
    return bare_argv(driver, sc, base_url, claims, workdir, tag)


def parse_extra(text: str | None) -> tuple[str, ...]:
    return tuple(shlex.split(text)) if text else ()
