"""The screenshots in docs/integrations.md: three scripted cross-examinations sent to a fresh Arize Phoenix (its
local server, SQLite, in a temporary folder) with ``--phoenix URL --otel-content``, and Phoenix's span list and
one session's trace, as Debian's headless chromium shows them once every verdict is an annotation.

    python bench/phoenix_screenshot.py
"""

from __future__ import annotations

import argparse
import io
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
EXAMINER = """\
rules:
  - match: "Your goal is to try to verify"
    reply: "1. Which city is the seat of Eritrea's government?"
  - match: "follow-up questions\\\\?"
    reply: "No"
  - match: "correct or incorrect"
    replies: ["The claim is correct.", "The claim is correct.", "The claim is incorrect: Eritrea is in Africa."]
default: "I do not know."
"""
EXAMINEE = """\
rules:
  - match: "regarding your claim"
    replies: ["Asmara is the seat of the government.", "Asmara, the capital and largest city.",
              "Eritrea lies on the Red Sea, in the Horn of Africa."]
default: "I do not know."
"""
CLAIMS = ["The capital of Eritrea is Asmara.", "Asmara is the largest city of Eritrea.", "Eritrea borders Brazil."]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_phoenix(work: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = _free_port()
    env = {**os.environ, "PHOENIX_WORKING_DIR": str(work), "PHOENIX_PORT": str(port),
           "PHOENIX_GRPC_PORT": str(_free_port()), "PHOENIX_HOST": "127.0.0.1",
           "PHOENIX_TELEMETRY_ENABLED": "false"}  # fmt: skip
    exe = Path(sys.executable).with_name("phoenix")
    log = (work / "server.log").open("wb")
    server = subprocess.Popen([str(exe), "serve", "--no-internet"], env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            urllib.request.urlopen(f"{url}/healthz", timeout=2).close()
            return server, url
        except OSError:
            time.sleep(1)
    server.kill()
    raise SystemExit(f"Phoenix did not start: {(work / 'server.log').read_text(errors='replace')[-2000:]}")


def send_runs(folder: Path, url: str) -> Path:
    (folder / "examiner.yaml").write_text(EXAMINER, encoding="utf-8")
    (folder / "examinee.yaml").write_text(EXAMINEE, encoding="utf-8")
    data = folder / "claims.jsonl"
    data.write_text("".join(json.dumps({"id": f"claim-{i + 1}", "claim": c}) + "\n" for i, c in enumerate(CLAIMS)))
    out = folder / "claims-run.jsonl"
    cmd = [sys.executable, "-m", "voirdire", "examine", "--questions", str(data), "--model",
           "examiner=scripted:examiner.yaml", "--model", "examinee=scripted:examinee.yaml", "--max-followups", "1",
           "--concurrency", "1", "--no-progress", "--out", str(out), "--phoenix", url, "--otel-content"]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k != "OTEL_EXPORTER_OTLP_ENDPOINT"} | {"HF_HUB_OFFLINE": "1"}
    subprocess.run(cmd, cwd=folder, env=env, check=True, stdout=subprocess.DEVNULL)
    return out


def wait_for_annotations(url: str, want: int) -> tuple[str, str]:
    """The default project's id and the first session's trace id, once Phoenix holds ``want`` annotations of
    its root spans."""
    from phoenix.client import Client

    client = Client(base_url=url)
    for _ in range(120):
        with urllib.request.urlopen(f"{url}/v1/projects/default/spans?limit=1000", timeout=10) as r:
            roots = [s for s in json.loads(r.read())["data"] if not s.get("parent_id")]
        ids = [s["context"]["span_id"] for s in roots]
        if (
            len(ids) >= want
            and len(client.spans.get_span_annotations(span_ids=ids, project_identifier="default")) >= want
        ):
            first = next(s for s in roots if s["attributes"]["voirdire.item.id"] == "claim-1")
            with urllib.request.urlopen(f"{url}/v1/projects", timeout=10) as r:
                project = next(p["id"] for p in json.loads(r.read())["data"] if p["name"] == "default")
            return str(project), str(first["context"]["trace_id"])
        time.sleep(0.5)
    raise SystemExit("Phoenix did not show the annotations")


def browser(width: int, height: int) -> Any:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--hide-scrollbars",
                f"--window-size={width},{height}"):  # fmt: skip
        options.add_argument(arg)
    return webdriver.Chrome(service=Service(executable_path="/usr/bin/chromedriver"), options=options)


def shoot_trace(page: str, out: Path) -> None:
    """One session's trace: its spans as a tree, the session span's annotation, input and output."""
    driver = browser(1500, 900)
    try:
        driver.get(page)
        time.sleep(8)
        out.parent.mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(out))
    finally:
        driver.quit()


def shoot(page: str, out: Path, width: int, height: int) -> None:
    """The span list: session spans and model calls with their input, output and annotations."""
    from PIL import Image
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    driver = browser(width, height)
    try:
        driver.get(page)
        time.sleep(6)  # Phoenix's app draws its tables after its queries return
        for label in ("Collapse side navigation", "Hide aside panel", "Wrap each row over as many lines as it needs"):
            driver.find_element(By.CSS_SELECTOR, f"button[aria-label='{label}']").click()
            time.sleep(1)
        # the session spans and the model calls: the steps between them hidden
        driver.find_element(By.CSS_SELECTOR, "button[aria-label='Clear filter condition']").click()
        box = driver.switch_to.active_element
        box.send_keys("span_kind != 'CHAIN'", Keys.ENTER)
        time.sleep(1)
        box.send_keys(Keys.ESCAPE)
        driver.find_element(By.XPATH, "//*[text()='Traffic']").click()  # the filter's suggestions closed
        time.sleep(4)
        # the traffic chart cut out: the header, then the filtered span list
        chart = int(driver.find_element(By.XPATH, "//*[text()='Traffic']").rect["y"]) - 16
        bar = int(driver.find_element(By.CSS_SELECTOR, "button[aria-label='Clear filter condition']").rect["y"]) - 16
        left = int(driver.find_element(By.XPATH, "//*[text()='Spans']").rect["x"]) - 12  # the navigation cut too
        shot = Image.open(io.BytesIO(driver.get_screenshot_as_png()))
        width, height = shot.size
        page = Image.new("RGB", (width - left, height - (bar - chart)))
        page.paste(shot.crop((left, 0, width, chart)), (0, 0))
        page.paste(shot.crop((left, bar, width, height)), (0, chart))
        out.parent.mkdir(parents=True, exist_ok=True)
        page.save(out, optimize=True)
    finally:
        driver.quit()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots" / "phoenix-spans.png")
    parser.add_argument("--trace-out", type=Path, default=ROOT / "docs" / "screenshots" / "phoenix-trace.png")
    parser.add_argument("--width", type=int, default=1800)
    parser.add_argument("--height", type=int, default=1500)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp())
    server, url = start_phoenix(work)
    try:
        send_runs(work, url)
        project, trace = wait_for_annotations(url, len(CLAIMS))
        shoot(f"{url}/projects/{project}/spans", args.out.resolve(), args.width, args.height)
        shoot_trace(f"{url}/projects/{project}/traces/{trace}", args.trace_out.resolve())
    finally:
        server.terminate()
        server.wait(timeout=30)
    print(args.out, args.trace_out)


if __name__ == "__main__":
    main()
