"""A TLS AdmissionReview endpoint that allows every request unchanged, on 127.0.0.1.

`install` tests register the webhooks (failurePolicy Fail) and then need objects to be admitted;
what is tested there is the API server's side (CRD schemas, printer columns, deprecation
warnings), not the answers, which are `instancetype serve`'s. The paths it was called on are
recorded, so a test can see the API server really calls KubeVirt's paths.
"""
from __future__ import annotations

import json
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


class AllowAll:
    def __init__(self, cert: Path, key: Path):
        calls: list[str] = []

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (http.server's name)
                length = int(self.headers.get("Content-Length") or 0)
                review = json.loads(self.rfile.read(min(length, 8 << 20)) or b"{}")
                calls.append(self.path.split("?", 1)[0])   # the API server adds ?timeout=10s
                body = json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                                   "response": {"uid": (review.get("request") or {}).get("uid", ""),
                                                "allowed": True}}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.calls = calls
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(str(cert), str(key))
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.url = f"https://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.1},
                                       daemon=True)

    def __enter__(self) -> AllowAll:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)
