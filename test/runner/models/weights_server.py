"""A weights host on 127.0.0.1 for the download tests: Python's http.server in a thread serving files
the test put in a dict, with HTTP Range support (206 + Content-Range, 416 past the end), an ETag per
file content (and, when set, a Last-Modified) honoured in If-Range (a changed file is served whole), a
request log, a switch that cuts the first response half-way (the connection closes after half the
body), a delay before each body, and two misbehaving proxies' switches: one that honours Range but
ignores If-Range (the rest of a changed file is served), one that sends a given Content-Range."""

from __future__ import annotations

import hashlib
import http.server
import threading
import time
from dataclasses import dataclass, field


@dataclass
class Served:
    files: dict[str, bytes] = field(default_factory=dict)  # URL path -> body
    requests: list[tuple[str, str | None]] = field(default_factory=list)  # (path, Range header)
    cut_first: bool = False  # the first GET of a file stops after half its body
    etag: bool = True  # send an ETag (a host without one cannot say whether a file changed)
    delay_s: float = 0.0  # before each body: downloads that overlap
    last_modified: str | None = None  # sent as Last-Modified, and matched in If-Range
    ignore_if_range: bool = False  # a Range is served even when If-Range names another version
    content_range: str | None = None  # sent instead of a 206's real Content-Range
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
            etag = f'"{hashlib.sha256(body).hexdigest()[:16]}"'
            if self.headers.get("If-Range", etag) not in (etag, state.last_modified) and not state.ignore_if_range:
                rng = None  # the file changed since: all of it (RFC 9110 13.1.5)
            start = int(rng[6:-1]) if rng and rng.startswith("bytes=") and rng.endswith("-") else 0
            if start >= len(body) > 0:
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{len(body)}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(206 if start else 200)
            if start:
                self.send_header("Content-Range", state.content_range or f"bytes {start}-{len(body) - 1}/{len(body)}")
            if state.etag:
                self.send_header("ETag", etag)
            if state.last_modified:
                self.send_header("Last-Modified", state.last_modified)
            self.send_header("Content-Length", str(len(body) - start))
            self.send_header("Connection", "close")
            self.end_headers()
            time.sleep(state.delay_s)
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
