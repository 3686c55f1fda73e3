"""Screenshots of three pages of the documentation site (the home page, the command-line reference, the performance
page): the site built from ``docs/`` with ``mkdocs build --strict`` into a temporary folder, served on 127.0.0.1,
shot by Debian's headless chromium.

    python bench/site_screenshots.py --out docs/screenshots
"""

from __future__ import annotations

import argparse
import functools
import http.server
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGES = {"site-home.png": "", "site-cli-reference.png": "reference/cli/", "site-performance.png": "performance/"}


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    parser.add_argument("--size", default="1280,1000", help="the browser window, WIDTH,HEIGHT")
    args = parser.parse_args()
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "NO_MKDOCS_2_WARNING": "1"}
    with tempfile.TemporaryDirectory() as tmp:
        site = Path(tmp) / "site"
        config = str(ROOT / "mkdocs.yml")
        build = [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-f", config, "-d", str(site)]
        subprocess.run(build, check=True, env=env, cwd=tmp)
        handler = functools.partial(Quiet, directory=str(site))
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            args.out.mkdir(parents=True, exist_ok=True)
            for name, page in PAGES.items():
                shot = ["chromium", "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        f"--window-size={args.size}", f"--screenshot={args.out / name}",
                        f"http://127.0.0.1:{server.server_address[1]}/{page}"]  # fmt: skip
                subprocess.run(shot, check=True, capture_output=True, timeout=120)
                print(args.out / name)
        finally:
            server.shutdown()


if __name__ == "__main__":
    main()
