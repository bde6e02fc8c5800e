"""`tvm-course site serve`: the built site on http://127.0.0.1:PORT/, for a look.

Loopback only: the server is for the person at this machine, never the network. The site
works from file:// too; serving it only adds ordinary http:// URLs.
"""
from __future__ import annotations

import functools
import http.server
import threading
from pathlib import Path

HOST = "127.0.0.1"


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args) -> None:  # noqa: A002 (the stdlib's name)
        pass


class SiteServer:
    """A static server for `folder` on 127.0.0.1; `port=0` picks a free port."""

    def __init__(self, folder: str | Path, port: int = 8000, quiet: bool = False) -> None:
        self.folder = Path(folder).resolve()
        if not (self.folder / "index.html").is_file():
            raise FileNotFoundError(f"no site at {self.folder} (no index.html): run `tvm-course site build` first")
        handler_class = _QuietHandler if quiet else http.server.SimpleHTTPRequestHandler
        handler = functools.partial(handler_class, directory=str(self.folder))
        self.httpd = http.server.ThreadingHTTPServer((HOST, port), handler)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}/"

    def serve_forever(self) -> None:
        self.httpd.serve_forever()

    def start(self) -> "SiteServer":
        """Serve in a background thread (for tests and scripts); stop() ends it."""
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="tvm-course-site", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> "SiteServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
