"""Scripted models and a small scripted run shared by the integrations tests."""

from __future__ import annotations

from pathlib import Path

from tests.core.examination_scripts import scripted_models

CLAIMS = ["Paris is the capital of Germany.", "Rome is in Spain.", "Oslo is in Peru."]


def models(folder: Path) -> dict[str, str]:
    """The scripted examiner and examinee (every claim is found incorrect), as role -> spec."""
    return scripted_models(folder)


def scripted_run(folder: Path, n: int = 3) -> Path:
    """A finished cross-examination run of ``n`` claims with scripted models; its transcript's path."""
    import voirdire

    out = folder / "run.jsonl"
    records = [{"id": f"c{i}", "claim": CLAIMS[i % len(CLAIMS)]} for i in range(n)]
    voirdire.run("cross_examination", records, models=models(folder), out=out)
    return out
