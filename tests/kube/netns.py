"""A network namespace made by the test, for the cluster-mode tests that need a non-loopback address.

Kubernetes refuses loopback addresses in an APIService's EndpointSlice, so the aggregated API
tests run the API server, etcd and `instancetype serve` inside a namespace of their own, where
`lo` also carries an extra address (10.123.0.1/32 by default). Nothing in it can reach outside:
the namespace has no interface but its own `lo`.

    with network_namespace() as ns:
        ns.run(["ip", "addr"])                     # a process inside the namespace
        proc = ns.popen([...], stdout=log)         # a long-running one
        sock = ns.create_connection((ns.address, 6443))   # a socket of this process, inside it
        with ns.forward((ns.address, 6443)) as (host, port):  # host 127.0.0.1:port -> inside
            ...

`ip netns exec` replaces itself with the command (no fork), so a Popen's pid is the command's.
"""
from __future__ import annotations

import contextlib
import ctypes
import os
import secrets
import socket
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

CLONE_NEWNET = 0x40000000
DEFAULT_ADDRESS = "10.123.0.1"
T = TypeVar("T")


class NetnsError(RuntimeError):
    pass


def _ip(*args: str) -> None:
    proc = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)
    if proc.returncode != 0:
        raise NetnsError(f"ip {' '.join(args)}: {proc.stderr.strip()} (network namespaces need root)")


class NetNS:
    """A network namespace: its `name`, its extra non-loopback `address` on `lo`."""

    def __init__(self, name: str, address: str):
        self.name = name
        self.address = address

    @property
    def path(self) -> Path:
        return Path("/run/netns") / self.name

    def argv(self, argv: list[str]) -> list[str]:
        """`argv` prefixed so that it runs inside the namespace."""
        return ["ip", "netns", "exec", self.name, *[str(a) for a in argv]]

    def run(self, argv: list[str], **kwargs) -> subprocess.CompletedProcess:
        kwargs.setdefault("timeout", 120)
        return subprocess.run(self.argv(argv), **kwargs)

    def popen(self, argv: list[str], **kwargs) -> subprocess.Popen:
        return subprocess.Popen(self.argv(argv), **kwargs)

    def call(self, fn: Callable[[], T]) -> T:
        """fn() on a short-lived thread switched into the namespace (setns is per thread):
        sockets it creates stay in the namespace for their whole life."""
        result: dict[str, object] = {}

        def target() -> None:
            try:
                libc = ctypes.CDLL(None, use_errno=True)
                fd = os.open(self.path, os.O_RDONLY)
                try:
                    if libc.setns(fd, CLONE_NEWNET) != 0:
                        err = ctypes.get_errno()
                        raise NetnsError(f"setns {self.name}: {os.strerror(err)}")
                finally:
                    os.close(fd)
                result["value"] = fn()
            except BaseException as exc:  # re-raised in the caller's thread
                result["error"] = exc

        thread = threading.Thread(target=target, name=f"netns-{self.name}", daemon=True)
        thread.start()
        thread.join()
        if "error" in result:
            raise result["error"]  # type: ignore[misc]
        return result["value"]  # type: ignore[return-value]

    def create_connection(self, address: tuple[str, int], timeout: float = 10.0) -> socket.socket:
        """A TCP connection from inside the namespace."""
        return self.call(lambda: socket.create_connection(address, timeout=timeout))

    @contextlib.contextmanager
    def forward(self, target: tuple[str, int]) -> Iterator[tuple[str, int]]:
        """Forward a fresh port on the host's 127.0.0.1 to `target` inside the namespace, so
        clients in the test process (lightkube, kubectl) reach a server that listens only there."""
        forwarder = _Forwarder(self, target)
        try:
            yield forwarder.address
        finally:
            forwarder.close()


class _Forwarder:
    """Byte pump: 127.0.0.1:<free port> on the host to `target` in the namespace."""

    def __init__(self, ns: NetNS, target: tuple[str, int]):
        self.ns, self.target = ns, target
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.address = self.listener.getsockname()[:2]
        self.closed = threading.Event()
        self.conns: set[socket.socket] = set()
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, name="netns-forward", daemon=True).start()

    def _accept(self) -> None:
        while not self.closed.is_set():
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            try:
                upstream = self.ns.create_connection(self.target)
            except OSError:
                client.close()
                continue
            with self.lock:
                if self.closed.is_set():
                    client.close()
                    upstream.close()
                    return
                self.conns.update((client, upstream))
            done = [0]
            for src, dst in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(src, dst, client, upstream, done),
                                 daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, client: socket.socket,
              upstream: socket.socket, done: list[int]) -> None:
        try:
            src.settimeout(None)
            while True:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            # A reset on one side ends both directions (unblocks the other pump's recv).
            for s in (src, dst):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)
        finally:
            with contextlib.suppress(OSError):
                dst.shutdown(socket.SHUT_WR)
            with self.lock:
                done[0] += 1
                if done[0] == 2:  # both directions finished: the pair is closed
                    for s in (client, upstream):
                        s.close()
                        self.conns.discard(s)

    def close(self) -> None:
        self.closed.set()
        with contextlib.suppress(OSError):
            self.listener.close()
        with self.lock:
            for s in self.conns:
                with contextlib.suppress(OSError):
                    s.close()
            self.conns.clear()


@contextlib.contextmanager
def network_namespace(prefix: str = "it", address: str = DEFAULT_ADDRESS) -> Iterator[NetNS]:
    """A new network namespace with `lo` up and `address`/32 on it; deleted on exit (after the
    caller has stopped the processes it started there)."""
    name = f"{prefix}-{os.getpid()}-{secrets.token_hex(3)}"
    _ip("netns", "add", name)
    ns = NetNS(name, address)
    try:
        _ip("netns", "exec", name, "ip", "link", "set", "lo", "up")
        _ip("netns", "exec", name, "ip", "addr", "add", f"{address}/32", "dev", "lo")
        yield ns
    finally:
        with contextlib.suppress(NetnsError):
            _ip("netns", "delete", name)
