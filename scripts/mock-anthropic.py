#!/usr/bin/env python3
"""A tiny stand-in for the Anthropic Messages API, for scripts/bench-launch.sh.

Binds 127.0.0.1 on a free port (or the one given with --port), prints the port on the
first line of stdout, then answers every POST /v1/messages with one fixed, successful
message. Any other request gets a 404. Standard library only.

    python3 scripts/mock-anthropic.py [--port N] [--log FILE]
"""

import argparse
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

REPLY = json.dumps(
    {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": [{"type": "text", "text": "ok"}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
).encode()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    log_file = None

    def _send(self, status, body, content_type="application/json"):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _drain(self):
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def do_POST(self):  # noqa: N802 (http.server's naming)
        self._drain()
        if self.path.split("?", 1)[0].rstrip("/") == "/v1/messages":
            self._send(200, REPLY)
        else:
            self._send(404, b'{"type":"error","error":{"type":"not_found_error"}}')

    def do_GET(self):  # noqa: N802
        self._send(404, b'{"type":"error","error":{"type":"not_found_error"}}')

    def do_HEAD(self):  # noqa: N802
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format, *args):  # noqa: A002 (http.server's signature)
        if self.log_file is not None:
            self.log_file.write("%s %s\n" % (self.address_string(), format % args))
            self.log_file.flush()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0, help="port to bind (0: any free one)")
    parser.add_argument("--log", help="append one line per request to FILE")
    args = parser.parse_args()
    if args.log:
        Handler.log_file = open(args.log, "a", encoding="utf-8")
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
