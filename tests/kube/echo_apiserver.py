"""A minimal aggregated API server for the test environment's own test: group
`echo.instancetype.test/v1`, one resource `whoami` answering who the API server says is asking.

    python tests/kube/echo_apiserver.py HOST PORT CERT KEY FRONT_PROXY_CA

TLS only; a client must present a certificate signed by FRONT_PROXY_CA (the API server's
front-proxy client), as an aggregated API server requires. Runs until SIGTERM.
"""
from __future__ import annotations

import json
import signal
import ssl
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

GROUP, VERSION = "echo.instancetype.test", "v1"
GV = f"{GROUP}/{VERSION}"


class Handler(BaseHTTPRequestHandler):
    def _json(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        path = self.path.split("?", 1)[0]
        if path in ("/healthz", "/readyz", "/livez"):
            self._json(200, {"status": "ok"})
        elif path == "/apis":
            self._json(200, {"kind": "APIGroupList", "apiVersion": "v1", "groups": [{
                "name": GROUP, "versions": [{"groupVersion": GV, "version": VERSION}],
                "preferredVersion": {"groupVersion": GV, "version": VERSION}}]})
        elif path == f"/apis/{GV}":
            self._json(200, {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": GV,
                             "resources": [{"name": "whoami", "singularName": "whoami",
                                            "namespaced": False, "kind": "WhoAmI", "verbs": ["get"]}]})
        elif path == f"/apis/{GV}/whoami":
            peer = self.connection.getpeercert() or {}
            cn = [v for rdn in peer.get("subject", ()) for k, v in rdn if k == "commonName"]
            self._json(200, {"kind": "WhoAmI", "apiVersion": GV,
                             "user": self.headers.get("X-Remote-User"),
                             "groups": self.headers.get_all("X-Remote-Group") or [],
                             "proxyClient": cn[0] if cn else None})
        else:
            self._json(404, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                             "reason": "NotFound", "code": 404})

    def log_message(self, fmt: str, *args: object) -> None:
        sys.stderr.write("echo-apiserver: " + fmt % args + "\n")


def main() -> None:
    host, port, cert, key, client_ca = sys.argv[1:6]
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    ctx.load_verify_locations(client_ca)
    ctx.verify_mode = ssl.CERT_REQUIRED
    server = ThreadingHTTPServer((host, int(port)), Handler)
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    sys.stderr.write(f"echo-apiserver: serving on {host}:{port}\n")
    sys.stderr.flush()
    server.serve_forever()


if __name__ == "__main__":
    main()
