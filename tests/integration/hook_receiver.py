#!/usr/bin/env python3
"""hook_receiver.py DIR PORT SECRET_FILE: the HTTPS endpoint of the hook
tests (test_e2e_hooks.c) and of the hook benchmark, on 127.0.0.1:PORT with
DIR/server.pem and DIR/server.key (make_certs.sh).

Each POST is checked against the secret as docs/hooks.md tells a receiver
to (HMAC-SHA256 over timestamp "." body, X-Csched-Signature), and appended
to DIR/received as one JSON line: the answer it got, whether the signature
verified, the delivery header, the receive time and the body. DIR/fail
holds a count: while it is above 0 a request is answered 500 and the count
goes down. While DIR/hold exists, requests wait for it to go (the
benchmark's backlog). DIR/ready is written once the port listens."""
import hashlib
import hmac
import json
import os
import ssl
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DIR, PORT, SECRET_FILE = sys.argv[1], int(sys.argv[2]), sys.argv[3]
LOCK = threading.Lock()


def take_failure():
    path = os.path.join(DIR, "fail")
    try:
        with open(path) as f:
            n = int(f.read().strip() or "0")
    except FileNotFoundError:
        return False
    if n <= 0:
        return False
    with open(path, "w") as f:
        f.write(str(n - 1))
    return True


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        while os.path.exists(os.path.join(DIR, "hold")):
            time.sleep(0.01)
        with open(SECRET_FILE, "rb") as f:
            key = f.read().rstrip(b"\n")
        ts = self.headers.get("X-Csched-Timestamp", "")
        want = "sha256=" + hmac.new(key, ts.encode() + b"." + body, hashlib.sha256).hexdigest()
        got = self.headers.get("X-Csched-Signature", "")
        with LOCK:
            code = 500 if take_failure() else 200
            record = {
                "code": code,
                "signature_ok": hmac.compare_digest(want, got),
                "delivery_id": self.headers.get("X-Csched-Delivery", ""),
                "received_unix_ms": int(time.time() * 1000),
                "body": json.loads(body),
            }
            with open(os.path.join(DIR, "received"), "a") as f:
                f.write(json.dumps(record) + "\n")
        self.send_response(code)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def main():
    server = ThreadingHTTPServer(("127.0.0.1", PORT), Handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(os.path.join(DIR, "server.pem"), os.path.join(DIR, "server.key"))
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    with open(os.path.join(DIR, "ready"), "w") as f:
        f.write("ready\n")
    server.serve_forever()


if __name__ == "__main__":
    main()
