"""A weights host on 127.0.0.1 for the download tests: Python's http.server in a thread serving files
the test put in a dict, with HTTP Range support (206 + Content-Range), a request log, and a switch
that cuts the first response half-way (the connection closes after half the body)."""

from __future__ import annotations

import http.server
import threading
from dataclasses import dataclass, field


@dataclass
class Served:
    files: dict[str, bytes] = field(default_factory=dict)  # URL path -> body
    requests: list[tuple[str, str | None]] = field(default_factory=list)  # (path, Range header)
    cut_first: bool = False  # the first GET of a file stops after half its body
    port: int = 0

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def serve() -> tuple[Served, http.server.ThreadingHTTPServer]:
    state = Served()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:  # quiet
            pass

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            rng = self.headers.get("Range")
            state.requests.append((self.path, rng))
            body = state.files.get(self.path)
            if body is None:
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            start = 0
            if rng and rng.startswith("bytes=") and rng.endswith("-"):
                start = int(rng[6:-1])
                self.send_response(206)
                self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
            else:
                self.send_response(200)
            self.send_header("Content-Length", str(len(body) - start))
            self.send_header("Connection", "close")
            self.end_headers()
            if state.cut_first:
                state.cut_first = False
                self.wfile.write(body[start : start + (len(body) - start) // 2])
                self.wfile.flush()
                self.close_connection = True
                return
            self.wfile.write(body[start:])

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.port = server.server_address[1]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return state, server
