"""Serving the viewer on 127.0.0.1 only: the socket is bound here (so a busy or bad port is one clear error and
port 0 picks a free one), then handed to uvicorn."""

from __future__ import annotations

import socket
import threading
from collections.abc import Sequence
from pathlib import Path

import uvicorn

from voirdire.reports import Prices
from voirdire.web.app import create_app
from voirdire.web.catalog import Library
from voirdire.web.errors import ViewerError

HOST = "127.0.0.1"  # the viewer is for the person at this machine; there is deliberately no option to widen it
DEFAULT_PORT = 7788


def bind(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1:``port`` (0: any free port)."""
    if not 0 <= port <= 65535:
        raise ViewerError(f"--port {port}: not a port number (0 to 65535; 0 picks a free one)")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        reason = "in use" if exc.errno == 98 else (exc.strerror or str(exc)).lower()
        raise ViewerError(f"--port {port}: cannot listen on {HOST}:{port} ({reason}); try another, or 0") from None
    sock.set_inheritable(True)
    return sock


class Viewer:
    """The viewer of ``sources`` bound to a port; ``serve`` blocks, ``start``/``stop`` run it in a thread."""

    def __init__(
        self, sources: Sequence[str | Path], *, port: int = DEFAULT_PORT, prices: Prices | None = None
    ) -> None:
        self.library = Library(sources)
        self.app = create_app(self.library, prices=prices)
        self.socket = bind(port)
        config = uvicorn.Config(self.app, log_level="warning", lifespan="off", access_log=False)
        self.server = uvicorn.Server(config)
        self._thread: threading.Thread | None = None

    @property
    def address(self) -> tuple[str, int]:
        host, port = self.socket.getsockname()[:2]
        return host, port

    @property
    def url(self) -> str:
        host, port = self.address
        return f"http://{host}:{port}/"

    def serve(self) -> None:
        """Serve until interrupted (Ctrl-C)."""
        try:
            self.server.run(sockets=[self.socket])
        finally:
            self.socket.close()

    def start(self) -> Viewer:
        """Serve in a background thread (tests, benchmarks); returns once the server answers."""
        self._thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.socket]}, daemon=True)
        self._thread.start()
        while not self.server.started:
            if not self._thread.is_alive():
                raise ViewerError("the viewer stopped while starting")
            threading.Event().wait(0.01)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        self.socket.close()
