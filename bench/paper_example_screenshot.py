"""The README's screenshot: a cross-examination the LMvLM paper published (Appendix C, Table 16), replayed through
the protocol with the paper's own replies, as the viewer shows it in Debian's headless chromium.

    python bench/paper_example_screenshot.py --out docs/screenshots/paper-example.png
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from viewer_screenshots import browser  # noqa: E402

from voirdire.cli import main as voirdire  # noqa: E402
from voirdire.transcript import load  # noqa: E402
from voirdire.web.server import Viewer  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots" / "paper-example.png")
    parser.add_argument("--example", default="lmvlm-table-16")
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--max-height", type=int, default=2400)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp())
    code = voirdire(["reproduce", "paper-examples", "--example", args.example, "--out", str(work)])
    if code:
        raise SystemExit(code)
    folder = work / "paper-examples"
    (transcript,) = folder.glob(f"*{args.example}.jsonl")
    (session,) = load(transcript).sessions
    viewer = Viewer([folder], port=0).start()
    driver = browser(args.width)
    try:
        driver.get(f"{viewer.url}run/{transcript.name}/session/{session}")  # type: ignore[attr-defined]
        # down to the verdict's end (the review panel below it is left out), the browser's own bars added
        bottom = driver.execute_script(  # type: ignore[attr-defined]
            "const v = document.getElementById('verdict');"
            " return v ? v.getBoundingClientRect().bottom + window.scrollY + 16 : document.body.scrollHeight"
        )
        bars = driver.execute_script("return window.outerHeight - window.innerHeight")  # type: ignore[attr-defined]
        driver.set_window_size(args.width, min(int(bottom) + bars, args.max_height))  # type: ignore[attr-defined]
        # the review panel's name field takes the focus and scrolls to it: back to the top, where the chat starts
        driver.execute_script("document.activeElement.blur(); window.scrollTo(0, 0)")  # type: ignore[attr-defined]
        args.out.parent.mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(args.out))  # type: ignore[attr-defined]
        print(args.out)
    finally:
        driver.quit()  # type: ignore[attr-defined]
        viewer.stop()


if __name__ == "__main__":
    main()
