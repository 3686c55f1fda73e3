"""``voirdire view``: it listens on 127.0.0.1 only, prints its URL, and refuses bad paths and ports in one line."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from voirdire.cli import main
from voirdire.web.server import HOST, Viewer, bind


def other_addresses() -> list[str]:
    """This machine's addresses that are not loopback (where a server bound to 0.0.0.0 would also answer)."""
    found = set()
    try:
        for info in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET):
            found.add(str(info[4][0]))
    except OSError:
        pass
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("192.0.2.1", 9))  # no packet is sent: this only picks the outgoing interface
        found.add(probe.getsockname()[0])
    except OSError:
        pass
    finally:
        probe.close()
    return sorted(a for a in found if not a.startswith("127."))


def test_the_server_is_bound_to_127_0_0_1_only(viewer: Viewer) -> None:
    assert HOST == "127.0.0.1"
    host, port = viewer.address
    assert host == "127.0.0.1" and port > 0
    assert viewer.url == f"http://127.0.0.1:{port}/"
    bound = [s.getsockname()[0] for server in viewer.server.servers for s in server.sockets]
    assert bound == ["127.0.0.1"]
    with urllib.request.urlopen(viewer.url, timeout=60) as answer:
        assert answer.status == 200 and answer.headers["content-security-policy"]
    for address in other_addresses():  # the same port on any other interface of this machine refuses
        with socket.socket() as s, pytest.raises(OSError):
            s.settimeout(2)
            s.connect((address, port))


def test_bad_ports_and_paths_are_one_line_errors(tmp_path: Path, capsys) -> None:
    with bind(0) as busy:
        port = busy.getsockname()[1]
        cases = [
            (["view", str(tmp_path), "--port", str(port)], f"cannot listen on 127.0.0.1:{port} (in use)"),
            (["view", str(tmp_path), "--port", "70000"], "--port 70000: not a port number"),
            (["view", str(tmp_path / "missing"), "--port", "0"], "missing: no such transcript or folder"),
        ]
        bad_prices = tmp_path / "prices.toml"
        bad_prices.write_text('[models]\n"gpt-4o" = { input = "cheap", output = 1 }\n')
        cases.append((["view", str(tmp_path), "--prices", str(bad_prices)], f"{bad_prices}:2: models.gpt-4o: input"))
        dataset = tmp_path / "data.jsonl"
        dataset.write_text('{"question": "q"}\n')
        cases.append((["view", str(dataset)], "not a voirdire transcript"))
        for argv, message in cases:
            assert main(argv) == 2
            err = capsys.readouterr().err
            assert err.count("\n") == 1 and message in err, err


def test_the_command_prints_its_url_and_serves_until_interrupted(transcripts: dict[str, Path]) -> None:
    folder = next(iter(transcripts.values())).parent
    proc = subprocess.Popen(
        [sys.executable, "-m", "voirdire.cli", "view", str(folder), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("voirdire view: http://127.0.0.1:"), line + (proc.stderr.read() if proc.stderr else "")
        url = line.split()[2]
        with urllib.request.urlopen(url, timeout=60) as answer:
            assert "examine.jsonl" in answer.read().decode()
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 0
